// A `ThreadIndex` comes only from the hardware registers: it cannot be built, nor copied to
// reach one element twice.
use ptxkit_device::safe::{DisjointSlice, ThreadIndex};

#[ptxkit_device::kernel]
pub fn forge(mut out: DisjointSlice<u32>) {
    let i = ThreadIndex { index: 0, _this_thread: core::marker::PhantomData };
    if let Some(slot) = out.get_mut(i) {
        *slot = 1;
    }
}

fn main() {}
