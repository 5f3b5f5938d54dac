//! The agents' state ([`Agents`]) and where they start ([`initial_agents`]).

use kernels::physarum::{TAU, mix32, unit_f32};
use rayon::prelude::*;

use super::{AgentInit, PhysarumSetup};

/// Agent state, struct of arrays (index = agent id).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agents {
    pub y: Vec<f32>,
    pub x: Vec<f32>,
    pub heading: Vec<f32>,
}

impl Agents {
    pub fn len(&self) -> usize {
        self.y.len()
    }

    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
}

/// The starting agents: each from a hash of (seed, agent), so the same on every machine.
pub fn initial_agents(setup: &PhysarumSetup) -> Agents {
    let (w, h) = (setup.width as f32, setup.height as f32);
    let (cy, cx, short) = (h / 2.0, w / 2.0, w.min(h));
    let seed = setup.params().seed;
    let state: Vec<[f32; 3]> = (0..setup.agents)
        .into_par_iter()
        .map(|i| {
            let base = mix32(seed ^ mix32(i ^ 0x5bd1_e995));
            let u = |k: u32| unit_f32(mix32(base.wrapping_add(k.wrapping_mul(0x9e37_79b9))));
            let (a, b, c) = (u(1), u(2), u(3));
            let point = |r: f32, angle: f32| {
                let (y, x) = (cy + r * angle.sin(), cx + r * angle.cos());
                (kernels::physarum::wrap_coord(y, h), kernels::physarum::wrap_coord(x, w))
            };
            match setup.init {
                AgentInit::Random => [a * h, b * w, c * TAU],
                AgentInit::Disc => {
                    let angle = a * TAU;
                    let (y, x) = point(0.35 * short * b.sqrt(), angle);
                    [y, x, angle]
                }
                AgentInit::Ring => {
                    let angle = a * TAU;
                    let (y, x) = point(short * (0.4 + 0.01 * (b - 0.5)), angle);
                    [y, x, kernels::physarum::wrap_angle(angle + std::f32::consts::PI)]
                }
            }
        })
        .collect();
    Agents {
        y: state.iter().map(|s| s[0]).collect(),
        x: state.iter().map(|s| s[1]).collect(),
        heading: state.iter().map(|s| s[2]).collect(),
    }
}
