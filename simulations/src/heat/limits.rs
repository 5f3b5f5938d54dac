//! What one part of a run may hold: the sides and z extent the kernels index, RK4's
//! stability bound, and the check of a part against them.

use super::HeatVariant;
use crate::error::{Error, Result};

/// RK4 is stable for λ·dt in [−2.785, 0] on the negative real axis.
pub const RK4_REAL_STABILITY: f64 = 2.785;

/// The largest side of the box one part holds (its z extent with halos included), and of
/// nx and ny always. Memory limits most boxes first (3000³ needs 216 GB with `single`).
pub const MAX_SIDE: u32 = 4096;

/// The largest z extent of a box split into slabs (`--split`, `--gpus`, NCCL ranks): each
/// slab holds at most [`MAX_SIDE`] planes.
pub const MAX_Z: u32 = 16 * MAX_SIDE;

/// Refuses a part (one GPU's box, or a slab with its halos) that the kernels cannot index:
/// more than [`MAX_SIDE`] z planes, or for the one-thread-per-cell variants (`naive`,
/// `reuse`, which count cells in 32 bits) more than 2³² − 1 cells.
pub fn check_part(variant: HeatVariant, n: [u32; 3], what: &str) -> Result<()> {
    if n[2] > MAX_SIDE {
        return Err(Error::InvalidInput(format!(
            "{what} has {} z planes, above the {MAX_SIDE} one part holds: split the box along z with --split P \
             or --gpus N (each slab at most {MAX_SIDE} planes with its halos)",
            n[2]
        )));
    }
    let cells = n.iter().map(|&s| u64::from(s)).product::<u64>();
    if matches!(variant, HeatVariant::Naive | HeatVariant::Reuse) && cells > u64::from(u32::MAX) {
        return Err(Error::InvalidInput(format!(
            "{what} has {cells} cells, more than the {} variant indexes (2^32 - 1, one thread per cell): use fused, \
             tiled or single, or more parts",
            variant.name()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_limited_by_its_z_planes_and_32_bit_cell_counts() {
        assert!(check_part(HeatVariant::Single, [4096, 4096, 4096], "the box").is_ok());
        let e = check_part(HeatVariant::Single, [64, 64, 4097], "slab 2 of 3").unwrap_err().to_string();
        assert!(e.starts_with("slab 2 of 3 has 4097 z planes") && e.contains("--split"), "{e}");
        // 2^32 cells is one more than naive and reuse count.
        assert!(check_part(HeatVariant::Naive, [2048, 2048, 1023], "the box").is_ok());
        let e = check_part(HeatVariant::Reuse, [2048, 2048, 1024], "the box").unwrap_err().to_string();
        assert!(e.contains("4294967296 cells") && e.contains("reuse"), "{e}");
        assert!(check_part(HeatVariant::Fused, [2048, 2048, 1024], "the box").is_ok());
    }
}
