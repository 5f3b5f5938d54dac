// A `ThreadIndex` is neither `Copy` nor `Clone`: one per thread, used once.
use ptxkit_device::safe::{DisjointSlice, ThreadIndex};

#[ptxkit_device::kernel]
pub fn twice(mut out: DisjointSlice<u32>, mut other: DisjointSlice<u32>) {
    let i = ThreadIndex::global_1d();
    let j = i.clone();
    out[i] = 1;
    other[j] = 2;
}

fn main() {}
