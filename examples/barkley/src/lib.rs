//! Barkley's spiral waves, written only through the ptxkit toolkit: the kernel crate
//! (`kernels/`, on `ptxkit-device`), `build.rs` (`ptxkit-build`) and this crate
//! (`ptxkit-host`). [`step_gpu`] and [`step_cpu`] call the same per-cell functions, so they
//! give the same bits.

// The simulations' kernel images, linked into whatever links this crate (simulations/src/cuda/images.rs).
use simulations_images as _;

use std::path::Path;

pub mod driven;
pub mod split;

pub use barkley_kernels::Coefficients;
use barkley_kernels::{barkley_step, laplacian_no_flux};
use ptxkit_host::{Gpu, KernelImages, cudarc::driver::CudaSlice, grid_2d};
use simulations::render::MadeBy;

/// The PTX and cubins of `kernels/`, built by `build.rs`.
pub static IMAGES: KernelImages = ptxkit_host::include_kernels!("barkley");

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Gpu(#[from] ptxkit_host::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for simulations::Error {
    /// A GPU's error as the library's own.
    fn from(e: Error) -> Self {
        match e {
            Error::Gpu(e) => e.into(),
        }
    }
}

/// Host memory a run takes per cell, at most: u and v (8 bytes), the pair a CPU step writes
/// or a split's bands hold (8), the copies the outputs take of the fields (`--save`,
/// checkpoints: 8), the picture's RGB and a frame's levels (4), and as much again for the
/// frames queued to the encoders and the PNG's buffers (4). What [`simulations::memory`]'s
/// check is fed before any of it is allocated.
pub const HOST_BYTES_PER_CELL: u64 = 32;

/// The smallest grid side a run takes (`--width`, `--height`, the live view, Python).
pub const MIN_SIDE: u32 = 8;
/// The largest grid side a run takes.
pub const MAX_SIDE: u32 = 8192;

/// Barkley's parameters, in the units of the equations.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    pub a: f32,
    pub b: f32,
    pub epsilon: f32,
    /// The diffusion coefficient D.
    pub diffusion: f32,
    /// The grid spacing h.
    pub spacing: f32,
    pub dt: f32,
}

impl Default for Model {
    /// Rigidly rotating spirals (a = 0.75, b = 0.02, ε = 0.02, D = 1) at h = 0.5,
    /// dt = 0.02 (D·dt/h² = 0.08, inside the explicit step's limit of 1/4).
    fn default() -> Self {
        Self { a: 0.75, b: 0.02, epsilon: 0.02, diffusion: 1.0, spacing: 0.5, dt: 0.02 }
    }
}

impl Model {
    /// The coefficients of one step.
    pub fn coefficients(&self) -> Coefficients {
        Coefficients {
            inv_a: 1.0 / self.a,
            b: self.b,
            dt_over_eps: self.dt / self.epsilon,
            diffusion: self.diffusion * self.dt / (self.spacing * self.spacing),
            dt: self.dt,
        }
    }
}

/// The two fields of a `width × height` grid, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub width: u32,
    pub height: u32,
    pub u: Vec<f32>,
    pub v: Vec<f32>,
}

impl Field {
    /// A wave that is broken at the centre, where it curls into a spiral: u = 1 (excited) in
    /// the right half, v = a/2 (refractory) in the bottom half.
    pub fn broken_wave(width: u32, height: u32, model: &Model) -> Self {
        let cells = (0..height).flat_map(|y| (0..width).map(move |x| (x, y)));
        let (u, v) = cells
            .map(|(x, y)| {
                let u = if x >= width / 2 { 1.0 } else { 0.0 };
                (u, if y >= height / 2 { model.a / 2.0 } else { 0.0 })
            })
            .unzip();
        Self { width, height, u, v }
    }

    /// The flat index of cell (x, y).
    pub fn index(&self, x: u32, y: u32) -> usize {
        y as usize * self.width as usize + x as usize
    }
}

/// Runs `steps` steps on the CPU.
pub fn step_cpu(field: &mut Field, coefficients: &Coefficients, steps: u32) {
    let (width, height) = (field.width, field.height);
    let mut next = field.clone();
    for _ in 0..steps {
        for y in 0..height {
            for x in 0..width {
                let i = field.index(x, y);
                let laplacian = laplacian_no_flux(|j| field.u[j], x, y, width, height);
                (next.u[i], next.v[i]) = coefficients.step(field.u[i], field.v[i], laplacian);
            }
        }
        std::mem::swap(field, &mut next);
    }
}

/// Runs `steps` steps on `gpu`: uploads `field`, steps it there ([`GpuField::step`]) and
/// downloads it.
pub fn step_gpu(gpu: &Gpu, field: &mut Field, coefficients: &Coefficients, steps: u32) -> Result<()> {
    let mut on_gpu = GpuField::upload(gpu, field)?;
    on_gpu.step(gpu, coefficients, steps)?;
    (field.u, field.v) =
        (on_gpu.download(gpu, 0, field.height, 0)?, on_gpu.download(gpu, 0, field.height, 1)?);
    Ok(gpu.synchronize()?)
}

/// The two fields of a `width × height` grid in a GPU's memory, with the pair the next step
/// writes: what a part of a split keeps between its steps ([`crate::split`]). Its methods take
/// the GPU it was uploaded to, and queue their work on that GPU's stream, in order.
pub struct GpuField {
    pub width: u32,
    pub height: u32,
    /// u and v (fields 0 and 1), row-major: the pair the next step reads.
    pub fields: [CudaSlice<f32>; 2],
    /// The pair the next step writes.
    next: [CudaSlice<f32>; 2],
}

impl GpuField {
    /// `field`, uploaded to `gpu`.
    pub fn upload(gpu: &Gpu, field: &Field) -> Result<Self> {
        let upload = |data: &[f32]| {
            gpu.stream().clone_htod(data).map_err(ptxkit_host::Error::driver("uploading a field"))
        };
        Ok(Self {
            width: field.width,
            height: field.height,
            fields: [upload(&field.u)?, upload(&field.v)?],
            next: [upload(&field.u)?, upload(&field.v)?],
        })
    }

    /// Queues `steps` steps: one launch per step, ping-ponging the two pairs.
    pub fn step(&mut self, gpu: &Gpu, coefficients: &Coefficients, steps: u32) -> Result<()> {
        let (width, height) = (self.width, self.height);
        let shape = grid_2d(width, height, (32, 8));
        for _ in 0..steps {
            let ([u, v], [u_next, v_next]) = (&self.fields, &mut self.next);
            gpu.launch(barkley_step, shape, (u, v, u_next, v_next, width, height, *coefficients))?;
            std::mem::swap(&mut self.fields, &mut self.next);
        }
        Ok(())
    }

    /// `count` rows of field `index` (0: u, 1: v) from row `first`, once the queued work is
    /// done.
    pub fn download(&self, gpu: &Gpu, first: u32, count: u32, index: usize) -> Result<Vec<f32>> {
        let width = self.width as usize;
        let values = self.fields[index].slice(first as usize * width..(first + count) as usize * width);
        let downloaded = gpu.stream().clone_dtoh(&values);
        downloaded.map_err(ptxkit_host::Error::driver("downloading a field")).map_err(Error::from)
    }

    /// Overwrites rows of field `index` from row `first` with `values` (whole rows), after the
    /// queued work.
    pub fn write(&mut self, gpu: &Gpu, first: u32, index: usize, values: &[f32]) -> Result<()> {
        let at = first as usize * self.width as usize;
        let mut target = self.fields[index].slice_mut(at..at + values.len());
        let uploaded = gpu.stream().memcpy_htod(values, &mut target);
        uploaded.map_err(ptxkit_host::Error::driver("uploading rows")).map_err(Error::from)
    }
}

/// The picture of a field as RGB pixels (3 bytes a cell, row by row): resting cells dark
/// blue, the excited ones (u) yellow, the recovering ones (v) red.
pub fn picture(field: &Field) -> Vec<u8> {
    let level = |x: f32| (x.clamp(0.0, 1.0) * 255.0).round() as u8;
    field.u.iter().zip(&field.v).flat_map(|(&u, &v)| [level(u + v), level(u), level(0.3 - u - v)]).collect()
}

/// Writes the picture of a field as a PNG to `path` through the library's output-file rule
/// (whole or not at all, nothing left behind if the run is killed meanwhile, an existing path
/// that is not a regular file written and never replaced), recording `text`.
pub fn write_picture(path: &Path, field: &Field, text: Option<MadeBy<'_>>) -> simulations::Result<()> {
    simulations::render::write_rgb_png(path, &picture(field), field.width, field.height, text)
}
