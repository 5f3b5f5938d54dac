//! One part of Gray-Scott's split ([`Piece`]): a band (or a piece of an NCCL rank's band) with
//! its halo rows, and the engine that steps it, on a GPU or the CPU.

use std::sync::Arc;

use super::Engine;
use crate::{
    cuda::Gpu,
    error::Result,
    split::{self, DeviceRows},
};

/// One band (or, for an NCCL rank with `--overlap`, one piece of its band) and the engine that
/// steps it with its halo rows, on a GPU or the CPU: a part of the split.
pub struct Piece {
    width: u32,
    gpu: Option<Arc<Gpu>>,
    pub(super) engine: Box<dyn Engine>,
}

impl Piece {
    /// `engine` over rows of `width` cells, on `gpu` (`None`: the CPU).
    pub(super) fn new(width: u32, gpu: Option<Arc<Gpu>>, engine: Box<dyn Engine>) -> Self {
        Self { width, gpu, engine }
    }
}

impl split::Part for Piece {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.engine.step(steps)
    }

    fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        Ok(self.rows_of(&[field], first, count)?.pop().expect("one field"))
    }

    /// U and V come down together.
    fn rows_of(&mut self, fields: &[usize], first: u32, count: u32) -> Result<Vec<Vec<f32>>> {
        let (u, v) = self.engine.fields()?;
        let at = first as usize * self.width as usize..(first + count) as usize * self.width as usize;
        Ok(fields.iter().map(|&f| if f == 0 { &u } else { &v }[at.clone()].to_vec()).collect())
    }

    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
        let (mut u, mut v) = self.engine.fields()?;
        let at = first as usize * self.width as usize;
        let target = if field == 0 { &mut u } else { &mut v };
        target[at..at + values.len()].copy_from_slice(values);
        self.engine.set_fields(&u, &v)
    }

    /// U and V go up together.
    fn set_all(&mut self, values: &[Vec<f32>]) -> Result<()> {
        self.engine.set_fields(&values[0], &values[1])
    }

    fn synchronize(&mut self) -> Result<()> {
        self.engine.synchronize()
    }

    /// A GPU piece's u and v: its halos are copied GPU to GPU.
    fn device_rows(&mut self, field: usize) -> Option<DeviceRows<'_>> {
        self.engine.as_cuda().map(|engine| engine.device_rows(field))
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        self.gpu.as_ref()
    }
}
