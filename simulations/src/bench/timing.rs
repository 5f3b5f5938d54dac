//! The one timing loop of every bench ([`time_per_step`]: device events around a fixed number
//! of steps, the median of the repeats) and the [`median`] it and the other benches take.

use crate::{
    cuda::{Gpu, Timer},
    error::Result,
};

/// Median, fastest and slowest of the repeats, milliseconds per step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

/// Times `repeats` runs of `step(steps)` with device events.
pub fn time_per_step(
    gpu: &Gpu,
    repeats: usize,
    steps: u32,
    mut step: impl FnMut(u32) -> Result<()>,
) -> Result<Timing> {
    let mut times = Vec::new();
    for _ in 0..repeats {
        let timer = Timer::start(gpu)?;
        step(steps)?;
        times.push(f64::from(timer.stop()?) / f64::from(steps));
    }
    let (min_ms, max_ms) =
        (times.iter().copied().fold(f64::MAX, f64::min), times.iter().copied().fold(0.0, f64::max));
    Ok(Timing { median_ms: median(&mut times), min_ms, max_ms })
}

pub(super) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
    }
}
