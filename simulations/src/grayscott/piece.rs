//! One part of Gray-Scott's split ([`Piece`]): a band (or a piece of an NCCL rank's band) with
//! its halo rows, and the engine that steps it, on a GPU or the CPU.

use std::sync::Arc;

use super::{Engine, cpu::CpuGrayScott, cuda::CudaGrayScott};
use crate::{
    cuda::Gpu,
    error::Result,
    split::{self, DeviceRows},
};

/// One band (or, for an NCCL rank with `--overlap`, one piece of its band) and the engine that
/// steps it with its halo rows, on a GPU or the CPU: a part of the split.
pub struct Piece {
    width: u32,
    pub(super) engine: PieceEngine,
}

/// Where a piece steps: a GPU piece's halos go GPU to GPU ([`split::Part::device_rows`]), a
/// CPU piece's are read and written in place in its fields.
pub(super) enum PieceEngine {
    Gpu(Box<CudaGrayScott>),
    Cpu(CpuGrayScott),
}

impl Piece {
    /// `engine` over rows of `width` cells.
    pub(super) fn new(width: u32, engine: PieceEngine) -> Self {
        Self { width, engine }
    }

    pub(super) fn engine(&mut self) -> &mut dyn Engine {
        match &mut self.engine {
            PieceEngine::Gpu(engine) => engine.as_mut(),
            PieceEngine::Cpu(engine) => engine,
        }
    }

    /// Cells `first .. first + count` rows of a field of this piece's width.
    fn cells(&self, first: u32, count: u32) -> std::ops::Range<usize> {
        let w = self.width as usize;
        first as usize * w..(first + count) as usize * w
    }
}

impl split::Part for Piece {
    fn step(&mut self, steps: u32) -> Result<()> {
        self.engine().step(steps)
    }

    fn rows(&mut self, field: usize, first: u32, count: u32) -> Result<Vec<f32>> {
        Ok(self.rows_of(&[field], first, count)?.pop().expect("one field"))
    }

    /// On the CPU, the rows themselves; from a GPU, U and V come down together.
    fn rows_of(&mut self, fields: &[usize], first: u32, count: u32) -> Result<Vec<Vec<f32>>> {
        let at = self.cells(first, count);
        if let PieceEngine::Cpu(engine) = &mut self.engine {
            return Ok(fields.iter().map(|&f| engine.field_mut(f)[at.clone()].to_vec()).collect());
        }
        let (u, v) = self.engine().fields()?;
        Ok(fields.iter().map(|&f| if f == 0 { &u } else { &v }[at.clone()].to_vec()).collect())
    }

    /// On the CPU, in place (the host halos of an exchange); on a GPU, the fields round trip.
    fn set_rows(&mut self, field: usize, first: u32, values: &[f32]) -> Result<()> {
        let at = self.cells(first, 0).start..self.cells(first, 0).start + values.len();
        if let PieceEngine::Cpu(engine) = &mut self.engine {
            engine.field_mut(field)[at].copy_from_slice(values);
            return Ok(());
        }
        let (mut u, mut v) = self.engine().fields()?;
        let target = if field == 0 { &mut u } else { &mut v };
        target[at].copy_from_slice(values);
        self.engine().set_fields(&u, &v)
    }

    /// U and V go up together.
    fn set_all(&mut self, values: &[Vec<f32>]) -> Result<()> {
        self.engine().set_fields(&values[0], &values[1])
    }

    fn synchronize(&mut self) -> Result<()> {
        self.engine().synchronize()
    }

    /// A GPU piece's u and v: its halos are copied GPU to GPU.
    fn device_rows(&mut self, field: usize) -> Option<DeviceRows<'_>> {
        match &mut self.engine {
            PieceEngine::Gpu(engine) => Some(engine.device_rows(field)),
            PieceEngine::Cpu(_) => None,
        }
    }

    fn gpu(&self) -> Option<&Arc<Gpu>> {
        match &self.engine {
            PieceEngine::Gpu(engine) => Some(engine.gpu()),
            PieceEngine::Cpu(_) => None,
        }
    }
}
