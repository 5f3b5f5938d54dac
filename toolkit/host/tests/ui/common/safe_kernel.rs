// Safe kernels the launch cases misuse, declared as an outside crate would: no `unsafe`,
// slices in, `DisjointSlice`s out.
#![allow(dead_code)]

use ptxkit_device::safe::{DisjointSlice, DisjointSlice2d, ThreadIndex, ThreadIndex2d};

/// y ← a·x + y: one thread per element.
#[ptxkit_device::kernel]
pub fn safe_saxpy(x: &[f32], mut y: DisjointSlice<f32>, a: f32) {
    let i = ThreadIndex::global_1d();
    let xi = x.get(i.get()).copied().unwrap_or(0.0);
    if let Some(yi) = y.get_mut(i) {
        *yi += a * xi;
    }
}

/// out ← input, one thread per cell of a 2-D grid.
#[ptxkit_device::kernel]
pub fn safe_copy_2d(input: &[f32], mut out: DisjointSlice2d<'_, f32>) {
    let cell = ThreadIndex2d::global_2d();
    let offset = cell.y() * out.width() + cell.x();
    let value = input.get(offset).copied().unwrap_or(0.0);
    if let Some(slot) = out.get_mut(cell) {
        *slot = value;
    }
}
