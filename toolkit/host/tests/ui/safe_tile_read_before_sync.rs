// A shared tile is read only after `sync()`, the block's barrier: the written tile has no
// read.
use ptxkit_device::safe::{DisjointSlice, ThreadIndex};

#[ptxkit_device::kernel]
pub fn no_barrier(mut out: DisjointSlice<f32>) {
    let written = ptxkit_device::shared_tile!(no_barrier_tile: [f32; 32]).write(1.0);
    let neighbour = written.get(1).unwrap_or(0.0);
    if let Some(slot) = out.get_mut(ThreadIndex::global_1d()) {
        *slot = neighbour;
    }
}

fn main() {}
