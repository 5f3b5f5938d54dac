// A shared tile holds numbers valid for every bit pattern (`TileElement`), never a `bool`,
// a reference or another type that a racing or unwritten slot could make invalid.
use ptxkit_device::safe::{DisjointSlice, ThreadIndex};

#[ptxkit_device::kernel]
pub fn tile_of_flags(mut out: DisjointSlice<u32>) {
    let flags = ptxkit_device::shared_tile!(flag_tile: [bool; 32]).write(true).sync();
    if let Some(slot) = out.get_mut(ThreadIndex::global_1d()) {
        *slot = u32::from(flags.get(0).unwrap_or(false));
    }
}

fn main() {}
