//! The CPU reference: the same per-agent and per-cell functions as the kernels, agents and
//! trail rows in parallel with rayon, deposits in agent order.

use kernels::physarum::{Params, agent_step, blend, cell_of, decay, mean9, neighbourhood, sum9};
use rayon::prelude::*;

use super::{Agents, PhysarumEngine};
use crate::error::Result;

/// Sense, steer and move every agent on `trail` (step number `step`).
pub fn move_agents(agents: &mut Agents, trail: &[f32], step: u32, p: &Params) {
    let read = |c: usize| trail[c];
    (&mut agents.y, &mut agents.x, &mut agents.heading)
        .into_par_iter()
        .enumerate()
        .for_each(|(i, (y, x, h))| (*y, *x, *h) = agent_step(&read, *y, *x, *h, i as u32, step, p));
}

/// Adds `deposit` to each agent's cell, one agent at a time.
pub fn deposit(agents: &Agents, trail: &mut [f32], p: &Params) {
    for (&y, &x) in agents.y.iter().zip(&agents.x) {
        trail[cell_of(y, x, p)] += p.deposit;
    }
}

/// How many agents stand on each cell.
pub fn count(agents: &Agents, p: &Params) -> Vec<u32> {
    let mut counts = vec![0u32; p.width as usize * p.height as usize];
    for (&y, &x) in agents.y.iter().zip(&agents.x) {
        counts[cell_of(y, x, p)] += 1;
    }
    counts
}

/// The 3×3 periodic mean of every cell.
pub fn blur(trail: &[f32], p: &Params) -> Vec<f32> {
    per_cell(trail, p, |n| mean9(sum9(n)))
}

/// Diffusion and decay: `decay(blend(t, mean₃ₓ₃(t)))` for every cell.
pub fn diffuse_decay(trail: &[f32], p: &Params) -> Vec<f32> {
    per_cell(trail, p, |n| decay(blend(n[1][1], mean9(sum9(n)), p), p))
}

/// `f` of every cell's 3×3 periodic neighbourhood, rows in parallel.
fn per_cell(trail: &[f32], p: &Params, f: impl Fn([[f32; 3]; 3]) -> f32 + Sync) -> Vec<f32> {
    let w = p.width as usize;
    let mut out = vec![0.0f32; trail.len()];
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        for (x, cell) in row.iter_mut().enumerate() {
            let (rows, cols) = neighbourhood(x as u32, y as u32, p);
            *cell = f(rows.map(|r| cols.map(|c| trail[r + c])));
        }
    });
    out
}

/// Physarum on the CPU.
pub struct CpuPhysarum {
    params: Params,
    agents: Agents,
    trail: Vec<f32>,
    step: u32,
}

impl CpuPhysarum {
    pub fn new(params: Params, agents: Agents, trail: Vec<f32>) -> Self {
        Self { params, agents, trail, step: 0 }
    }
}

impl PhysarumEngine for CpuPhysarum {
    fn views(&self) -> Result<Vec<crate::view::FieldView>> {
        let shape = vec![self.params.height as usize, self.params.width as usize];
        Ok(vec![crate::view::FieldView::host("trail", shape, &self.trail)])
    }

    fn step(&mut self, steps: u32) -> Result<()> {
        for _ in 0..steps {
            move_agents(&mut self.agents, &self.trail, self.step, &self.params);
            deposit(&self.agents, &mut self.trail, &self.params);
            self.trail = diffuse_decay(&self.trail, &self.params);
            self.step = self.step.wrapping_add(1);
        }
        Ok(())
    }

    fn trail(&mut self) -> Result<Vec<f32>> {
        Ok(self.trail.clone())
    }

    fn agents(&mut self) -> Result<Agents> {
        Ok(self.agents.clone())
    }

    fn set_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()> {
        super::engine::check_state(agents, trail, self.agents.len(), &self.params)?;
        self.agents.clone_from(agents);
        self.trail.copy_from_slice(trail);
        self.step = step;
        Ok(())
    }

    fn set_params(&mut self, params: Params) -> Result<()> {
        super::engine::check_same_grid(&self.params, &params)?;
        self.params = params;
        Ok(())
    }

    fn describe(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run summary names the engine and its threads ("on cpu (2 threads)").
    #[test]
    fn the_engine_describes_itself_with_its_threads() {
        let angle = std::f32::consts::FRAC_PI_4;
        let p = Params::new(4, 4, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, 0.0, 0, 7);
        let agents = Agents { y: vec![1.5], x: vec![2.5], heading: vec![0.0] };
        let engine = CpuPhysarum::new(p, agents, vec![0.0; 16]);
        let threads = rayon::current_num_threads();
        assert_eq!(engine.describe(), format!("cpu ({threads} threads)"));
    }

    /// The engine refuses another grid's parameters and a state of another size, and keeps its
    /// own: the next step is the one it would have taken.
    #[test]
    fn the_engine_refuses_another_grid_and_state_size() {
        let angle = std::f32::consts::FRAC_PI_4;
        let p = Params::new(4, 4, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, 0.0, 0, 7);
        let agents = Agents { y: vec![1.5, 2.5], x: vec![2.5, 0.5], heading: vec![0.0, 1.0] };
        let trail: Vec<f32> = (0..16).map(|i| i as f32 * 0.5).collect();
        let mut want = CpuPhysarum::new(p, agents.clone(), trail.clone());
        want.step(3).unwrap();
        let mut engine = CpuPhysarum::new(p, agents.clone(), trail.clone());
        let wider = Params::new(8, 4, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, 0.0, 0, 7);
        assert!(engine.set_params(wider).unwrap_err().to_string().contains("the grid is fixed"));
        let one = Agents { y: vec![1.5], x: vec![2.5], heading: vec![0.0] };
        assert!(engine.set_state(&one, &trail, 0).is_err());
        assert!(engine.set_state(&agents, &trail[..15], 0).is_err());
        engine.step(3).unwrap();
        assert_eq!(engine.trail().unwrap(), want.trail().unwrap());
        assert_eq!(engine.agents().unwrap(), want.agents().unwrap());
    }

    /// The blur against its definition, computed here: the mean of the 3×3 periodic
    /// neighbourhood (the unfused GPU kernel's reference; nothing on the CPU path calls it).
    #[test]
    fn blur_is_the_periodic_three_by_three_mean() {
        let (w, h) = (7u32, 5u32);
        let angle = std::f32::consts::FRAC_PI_4;
        let p = Params::new(w, h, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, 0.0, 0, 7);
        let trail: Vec<f32> = (0..w * h).map(|i| ((i * 37 + 11) % 23) as f32 * 0.25).collect();
        let blurred = blur(&trail, &p);
        let (w, h) = (w as i64, h as i64);
        for y in 0..h {
            for x in 0..w {
                let mut sum = 0.0f64;
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        sum +=
                            f64::from(trail[((y + dy).rem_euclid(h) * w + (x + dx).rem_euclid(w)) as usize]);
                    }
                }
                let got = f64::from(blurred[(y * w + x) as usize]);
                // Nine f32 additions and one scaling of values below 6: within 1e-5 of the mean,
                // while a wrong neighbour (the values are 0.25·k, k = 0..22, varying from cell to
                // cell) moves it by 0.25/9 ≈ 0.028 or more.
                assert!((got - sum / 9.0).abs() < 1e-5, "({x}, {y}): {got} against {}", sum / 9.0);
            }
        }
    }
}
