//! What a Physarum backend provides ([`PhysarumEngine`]).

use super::{Agents, Params};
use crate::error::{Result, invalid};

/// What a Physarum backend provides.
pub trait PhysarumEngine {
    /// Advances by `steps` steps.
    fn step(&mut self, steps: u32) -> Result<()>;
    /// The trail map.
    fn trail(&mut self) -> Result<Vec<f32>>;
    /// The agents, by id.
    fn agents(&mut self) -> Result<Agents>;
    /// Where the trail map is, for zero-copy access ([`crate::view`]).
    fn views(&self) -> Result<Vec<crate::view::FieldView>>;
    /// Replaces the agents, the trail and the step counter that seeds the per-step random
    /// numbers (restoring a checkpoint); refuses a state of another size ([`check_state`]).
    fn set_state(&mut self, agents: &Agents, trail: &[f32], step: u32) -> Result<()>;
    /// Replaces the model parameters the next steps use; refuses another grid
    /// ([`check_same_grid`]: the engine's buffers are sized for its own).
    fn set_params(&mut self, params: Params) -> Result<()>;
    /// Waits for queued work.
    fn synchronize(&mut self) -> Result<()> {
        Ok(())
    }
    fn describe(&self) -> String;
    /// The engine itself, for a caller that knows its kind (GPU-side comparisons downcast to
    /// [`super::cuda::CudaPhysarum`]).
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// Refuses agents and a trail that do not fit `count` agents on the grid of `p`: the agents'
/// three coordinates of `count` entries each, the trail a value per cell. The engines size
/// their buffers and index them by those counts (a GPU kernel would read past a shorter one).
pub fn check_state(agents: &Agents, trail: &[f32], count: usize, p: &Params) -> Result<()> {
    let (y, x, heading) = (agents.y.len(), agents.x.len(), agents.heading.len());
    if (y, x, heading) != (count, count, count) {
        return Err(invalid!(
            "agents of {y} y, {x} x and {heading} heading values given to a simulation of {count} agents"
        ));
    }
    let cells = p.width as usize * p.height as usize;
    if trail.len() != cells {
        return Err(invalid!(
            "a trail of {} values given to a {}x{} grid ({cells} cells)",
            trail.len(),
            p.width,
            p.height
        ));
    }
    Ok(())
}

/// Refuses parameters `new` for another grid than `current`'s (a grid is fixed for a
/// simulation).
pub fn check_same_grid(current: &Params, new: &Params) -> Result<()> {
    if (new.width, new.height) != (current.width, current.height) {
        return Err(invalid!(
            "parameters for a {}x{} grid given to a {}x{} simulation; the grid is fixed for a simulation",
            new.width,
            new.height,
            current.width,
            current.height
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(width: u32, height: u32) -> Params {
        let angle = std::f32::consts::FRAC_PI_4;
        Params::new(width, height, 5.0, angle, angle, 1.0, 1.0, 0.2, 0.01, 0.0, 0, 7)
    }

    /// A state fits only with three coordinates of the agent count each and a value a cell;
    /// each mismatch is refused with the sizes named.
    #[test]
    fn states_of_another_size_are_refused() {
        let p = params(4, 3);
        let agents = |y: usize, x: usize, heading: usize| Agents {
            y: vec![0.5; y],
            x: vec![0.5; x],
            heading: vec![0.0; heading],
        };
        assert!(check_state(&agents(2, 2, 2), &[0.0; 12], 2, &p).is_ok());
        for (a, trail, message) in [
            (agents(2, 2, 1), 12, "2 y, 2 x and 1 heading values given to a simulation of 2 agents"),
            (agents(2, 3, 2), 12, "2 y, 3 x and 2 heading"),
            (agents(3, 3, 3), 12, "3 y, 3 x and 3 heading values given to a simulation of 2 agents"),
            (agents(2, 2, 2), 11, "a trail of 11 values given to a 4x3 grid (12 cells)"),
            (agents(2, 2, 2), 13, "a trail of 13 values"),
        ] {
            let error = check_state(&a, &vec![0.0; trail], 2, &p).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
    }

    /// Parameters pass for the same grid and are refused for another width or height.
    #[test]
    fn parameters_for_another_grid_are_refused() {
        let p = params(4, 3);
        assert!(check_same_grid(&p, &Params { deposit: 9.0, ..p }).is_ok());
        for (w, h) in [(8, 3), (4, 6), (3, 4)] {
            let error = check_same_grid(&p, &params(w, h)).unwrap_err().to_string();
            assert!(error.contains(&format!("for a {w}x{h} grid given to a 4x3 simulation")), "{error}");
        }
    }
}
