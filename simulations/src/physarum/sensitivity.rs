//! Sensitivity analysis (the write-up's Lyapunov section, made real): a reference and a
//! perturbed simulation run side by side from the same seed; ‖Δtrail‖₂ is recorded every
//! step, and the largest Lyapunov exponent is fitted as the slope of log‖Δ‖ over the growth
//! phase.
//!
//! The growth phase ([`fit_growth`]): the curve's end point is the first step where log‖Δ‖
//! comes within log 10 of its maximum over the run (the perturbation has almost saturated);
//! its start is the lowest point of log‖Δ‖ before that (a trail perturbation first shrinks by
//! diffusion and decay before agents start to turn differently). The slope is the
//! least-squares fit of log‖Δ‖ against the step over [start, end].

use cudarc::driver::CudaSlice;

use super::{Physarum, PhysarumSetup, PhysarumVariant, cuda::CudaPhysarum, initial_agents, initial_trail};
use crate::{
    Device,
    error::{CudaContext as _, Error, Result},
};

crate::choice! {
    /// What is perturbed (`--perturb`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Perturb {
        /// ε added to agent 0's heading (radians).
        #[default]
        Heading = "heading",
        /// ε added to the initial trail at the centre cell.
        Trail = "trail",
    }
}

/// A least-squares fit of log‖Δ‖ against the step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrowthFit {
    /// First and last step of the growth phase (1-based: step s is after s steps).
    pub start: usize,
    pub end: usize,
    /// The slope: the largest Lyapunov exponent, per step.
    pub slope: f64,
    /// The intercept at step 0.
    pub intercept: f64,
    /// R² of the fit: how exponential the phase is (1: a straight line in log scale).
    pub r_squared: f64,
}

/// The result of a sensitivity run.
#[derive(Clone, Debug)]
pub struct Sensitivity {
    pub perturb: Perturb,
    pub epsilon: f32,
    /// ‖Δtrail‖₂ after each step (index 0: after step 1).
    pub distances: Vec<f64>,
    /// `None` when no growth phase of at least [`MIN_FIT_POINTS`] steps was found.
    pub fit: Option<GrowthFit>,
}

/// The fewest steps a growth phase needs for a fit.
pub const MIN_FIT_POINTS: usize = 5;

/// Fits the growth phase of `distances` (see the module's documentation).
pub fn fit_growth(distances: &[f64]) -> Option<GrowthFit> {
    let logs: Vec<Option<f64>> =
        distances.iter().map(|&d| (d > 0.0 && d.is_finite()).then(|| d.ln())).collect();
    let max = logs.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    if !max.is_finite() {
        return None;
    }
    let end = logs.iter().position(|l| l.is_some_and(|l| l >= max - 10f64.ln()))?;
    let start = (0..=end)
        .filter(|&i| logs[i].is_some())
        .min_by(|&a, &b| logs[a].partial_cmp(&logs[b]).expect("finite").then(b.cmp(&a)))?;
    let points: Vec<(f64, f64)> =
        (start..=end).filter_map(|i| logs[i].map(|l| ((i + 1) as f64, l))).collect();
    if points.len() < MIN_FIT_POINTS {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let total: f64 = points.iter().map(|p| (p.1 - my).powi(2)).sum();
    let residual: f64 = points.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum();
    let r_squared = if total > 0.0 { 1.0 - residual / total } else { 1.0 };
    Some(GrowthFit { start: start + 1, end: end + 1, slope, intercept, r_squared })
}

/// Runs the reference and the perturbed simulation for `steps` steps on `device`,
/// recording ‖Δtrail‖₂ after every step; `tick` is called once per step.
pub fn run(
    setup: &PhysarumSetup,
    device: &Device,
    variant: PhysarumVariant,
    perturb: Perturb,
    epsilon: f32,
    steps: u32,
    mut tick: impl FnMut(),
) -> Result<Sensitivity> {
    setup.validate()?;
    if !epsilon.is_finite() || epsilon == 0.0 {
        return Err(Error::InvalidInput(format!(
            "--epsilon must be a finite non-zero number, got {epsilon}"
        )));
    }
    Physarum::check_memory(setup, device, variant, 2)?;
    let agents = initial_agents(setup);
    let trail = initial_trail(setup)?;
    let (mut agents2, mut trail2) = (agents.clone(), trail.clone());
    match perturb {
        Perturb::Heading => agents2.heading[0] = kernels::physarum::wrap_angle(agents2.heading[0] + epsilon),
        Perturb::Trail => {
            let centre = (setup.height / 2) as usize * setup.width as usize + (setup.width / 2) as usize;
            trail2[centre] += epsilon;
        }
    }
    let mut reference = Physarum::with_state(setup, device, variant, agents, trail)?;
    let mut perturbed = Physarum::with_state(setup, device, variant, agents2, trail2)?;
    let distances = match device {
        Device::Cuda(gpu) if variant != PhysarumVariant::Cpu => {
            // Squared distances accumulate on the device, one slot per step, read once.
            let mut sums: CudaSlice<f32> =
                gpu.stream().alloc_zeros(steps as usize).context(|| "allocating distances".into())?;
            for s in 0..steps as usize {
                reference.step(1)?;
                perturbed.step(1)?;
                let a = reference
                    .engine()
                    .as_any_mut()
                    .downcast_mut::<CudaPhysarum>()
                    .expect("a CUDA engine")
                    .device_trail()
                    .clone();
                let b = perturbed
                    .engine()
                    .as_any_mut()
                    .downcast_mut::<CudaPhysarum>()
                    .expect("a CUDA engine")
                    .device_trail();
                super::cuda::launch_distance(gpu, &a, b, &mut sums.slice_mut(s..s + 1))?;
                tick();
            }
            let sums = gpu.stream().clone_dtoh(&sums).context(|| "downloading distances".into())?;
            gpu.synchronize()?;
            sums.iter().map(|&s| f64::from(s).sqrt()).collect()
        }
        _ => {
            let mut distances = Vec::with_capacity(steps as usize);
            for _ in 0..steps {
                reference.step(1)?;
                perturbed.step(1)?;
                let (a, b) = (reference.trail()?, perturbed.trail()?);
                distances.push(
                    a.iter()
                        .zip(&b)
                        .map(|(&x, &y)| (f64::from(x) - f64::from(y)).powi(2))
                        .sum::<f64>()
                        .sqrt(),
                );
                tick();
            }
            distances
        }
    };
    let fit = fit_growth(&distances);
    Ok(Sensitivity { perturb, epsilon, distances, fit })
}

impl Sensitivity {
    /// `step<TAB>distance` lines with a header.
    pub fn tsv(&self) -> String {
        let mut out = String::from("step\tdistance\n");
        for (i, d) in self.distances.iter().enumerate() {
            out.push_str(&format!("{}\t{d:e}\n", i + 1));
        }
        out
    }

    /// Draws log‖Δ‖ against the step, with the fitted line over the growth phase (PNG).
    pub fn plot(&self, title: &str, path: &std::path::Path) -> Result<()> {
        use plotters::prelude::*;

        let fail = |e: &dyn std::fmt::Display| Error::Output { path: path.to_owned(), reason: e.to_string() };
        let (width, height) = (900u32, 560u32);
        let mut pixels = vec![0u8; (width * height * 3) as usize];
        let points: Vec<(f64, f64)> = self
            .distances
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 0.0)
            .map(|(i, d)| ((i + 1) as f64, d.ln()))
            .collect();
        let (lo, hi) =
            points.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
        let (lo, hi) = if lo.is_finite() { (lo - 0.5, hi + 0.5) } else { (-1.0, 1.0) };
        {
            let root = crate::render::chart::drawing_area(&mut pixels, (width, height));
            root.fill(&WHITE).map_err(|e| fail(&e))?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 18))
                .margin(15)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d(0f64..self.distances.len().max(1) as f64, lo..hi)
                .map_err(|e| fail(&e))?;
            chart.configure_mesh().x_desc("step").y_desc("ln ||Δtrail||₂").draw().map_err(|e| fail(&e))?;
            chart
                .draw_series(LineSeries::new(points, RGBColor(0, 90, 180).stroke_width(2)))
                .map_err(|e| fail(&e))?
                .label("ln ||Δtrail||₂")
                .legend(|(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], RGBColor(0, 90, 180).stroke_width(2))
                });
            if let Some(f) = self.fit {
                let line = [f.start as f64, f.end as f64].map(|s| (s, f.intercept + f.slope * s));
                chart
                    .draw_series(LineSeries::new(line, RGBColor(220, 40, 40).stroke_width(3)))
                    .map_err(|e| fail(&e))?
                    .label(format!("fit, steps {}-{}: λ = {:.4} per step", f.start, f.end, f.slope))
                    .legend(|(x, y)| {
                        PathElement::new([(x, y), (x + 20, y)], RGBColor(220, 40, 40).stroke_width(3))
                    });
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(|e| fail(&e))?;
            root.present().map_err(|e| fail(&e))?;
        }
        crate::render::chart::save_chart(&pixels, width, height, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_finds_the_exponential_phase() {
        // Shrinks for 5 steps, grows as e^{0.3 s} for 30, then saturates.
        let mut d: Vec<f64> = (1..=5).map(|s| 1e-3 * (-0.5 * s as f64).exp()).collect();
        let base = d[4];
        d.extend((1..=30).map(|s| base * (0.3 * s as f64).exp()));
        let top = *d.last().unwrap();
        d.extend(std::iter::repeat_n(top, 20));
        let fit = fit_growth(&d).expect("a growth phase");
        assert!((fit.slope - 0.3).abs() < 1e-9, "slope {}", fit.slope);
        assert!((fit.r_squared - 1.0).abs() < 1e-9);
        assert_eq!(fit.start, 5);
        // Within log 10 of the top: the last ln(10)/0.3 ≈ 7.7 growth steps are excluded.
        assert_eq!(fit.end, 5 + 23);
        assert_eq!(fit_growth(&[0.0; 10]), None);
        assert_eq!(fit_growth(&[1.0, 2.0]), None);
    }
}
