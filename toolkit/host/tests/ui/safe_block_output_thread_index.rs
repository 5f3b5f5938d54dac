// A `BlockSlice` element belongs to its block's leader: it is indexed by the `BlockIndex` that
// `BlockIndex::leader()` gives one thread per block, never by a thread's own index.
use ptxkit_device::safe::{BlockSlice, ThreadIndex};

#[ptxkit_device::kernel]
pub fn every_thread_writes(mut sums: BlockSlice<f32>) {
    sums[ThreadIndex::global_1d()] = 1.0;
}

fn main() {}
