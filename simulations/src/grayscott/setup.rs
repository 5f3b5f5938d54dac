//! What defines a run before it starts: the [`Setup`] (size, rates, start, seed) and the
//! checks of its sizes and rates.

use std::path::PathBuf;

use super::{Init, Rates};
use crate::error::{Error, Result};

/// The largest grid side: GIF frames are at most 65535 wide, and 65535² cells still index
/// with 32-bit integers on the GPU.
pub const MAX_SIDE: u32 = 65_535;

/// Everything that defines a simulation's initial state and dynamics.
#[derive(Clone, Debug)]
pub struct Setup {
    pub width: u32,
    pub height: u32,
    pub rates: Rates,
    pub init: Init,
    /// When set, V is seeded from this image's luminance (and `init` is ignored).
    pub init_image: Option<PathBuf>,
    pub seed: u64,
}

impl Setup {
    /// A `width × height` setup with the given rates, the default `square` start and seed 1.
    pub fn new(width: u32, height: u32, rates: Rates) -> Self {
        Self { width, height, rates, init: Init::Square, init_image: None, seed: 1 }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Checks sizes and rates; the error names the offending option and its valid range.
    pub fn validate(&self) -> Result<()> {
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_SIDE {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be between 1 and {MAX_SIDE}, got {side}"
                )));
            }
        }
        let r = &self.rates;
        for (name, value) in [("du", r.du), ("dv", r.dv), ("feed", r.feed), ("kill", r.kill), ("dt", r.dt)] {
            if !value.is_finite() || value < 0.0 {
                return Err(Error::InvalidInput(format!(
                    "--{name} must be a finite, non-negative number, got {value}"
                )));
            }
        }
        if r.dt == 0.0 {
            return Err(Error::InvalidInput("--dt must be greater than 0".into()));
        }
        // Explicit Euler on the 5-point Laplacian is stable for D·dt ≤ 1/4.
        for (name, d) in [("du", r.du), ("dv", r.dv)] {
            if d * r.dt > 0.25 {
                return Err(Error::InvalidInput(format!(
                    "--{name} × --dt = {} exceeds 0.25, the stability limit of explicit Euler \
                     with the 5-point Laplacian; lower --dt or --{name}",
                    d * r.dt
                )));
            }
        }
        Ok(())
    }
}
