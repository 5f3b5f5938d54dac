//! The named (F, k) presets of `--preset`, and the diffusion rates and time step they share.

use super::{Init, Rates, Setup};

/// Diffusion rates and time step shared by all presets (Pearson's Du = 2e-5, Dv = 1e-5 on
/// a 2.5 × 2.5 domain of 256² cells, rescaled to unit grid spacing, as in the common WebGL
/// demos), with dt = 1.
pub const DEFAULT_DU: f32 = 0.2097;
pub const DEFAULT_DV: f32 = 0.105;
pub const DEFAULT_DT: f32 = 1.0;

/// A named (F, k) pair, with the start and the number of steps that show its pattern.
///
/// Classes are Pearson's (J. E. Pearson, "Complex patterns in a simple system", Science 261,
/// 1993: α to μ) and Munafo's extensions of them (ν, ξ, π, ρ, σ; R. Munafo, "Pearson's
/// Classification (Extended) of Gray-Scott System Parameter Values", mrob.com/pub/comp/xmorphia),
/// read off Munafo's map of the (F, k) plane; `coral` and `mitosis` are Karl Sims' named
/// examples (karlsims.com/rd.html).
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub feed: f32,
    pub kill: f32,
    /// The starting pattern that grows into this pattern (`--init` overrides it).
    pub init: Init,
    /// Steps for the default run (`--steps` overrides it): enough for the pattern to form.
    pub steps: u32,
    /// The class and where it is defined, e.g. "Pearson β".
    pub class: &'static str,
    pub description: &'static str,
}

impl Preset {
    /// The preset's rates with the default diffusion and time step.
    pub fn rates(&self) -> Rates {
        Rates { du: DEFAULT_DU, dv: DEFAULT_DV, feed: self.feed, kill: self.kill, dt: DEFAULT_DT }
    }

    /// A `width × height` setup of this preset: its rates and its start, seed 1.
    pub fn setup(&self, width: u32, height: u32) -> Setup {
        Setup { init: self.init, ..Setup::new(width, height, self.rates()) }
    }
}

/// The named presets, `--list-presets` order. Every one grows its pattern from its own start
/// (`simulations/tests/it/presets.rs` checks it at 128², on the CPU). All start from scattered small
/// squares (`spots`): from Pearson's single central square most of them die out.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "coral",
        feed: 0.0545,
        kill: 0.062,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson κ (Sims' \"coral growth\")",
        description: "branching stripes that grow from the seeds and fill the plane",
    },
    Preset {
        name: "mitosis",
        feed: 0.0367,
        kill: 0.0649,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson λ (Sims' \"mitosis\")",
        description: "spots that grow and divide like cells until they fill the plane",
    },
    Preset {
        name: "solitons",
        feed: 0.034,
        kill: 0.066,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson λ, high-k edge (Munafo's spot type: solitons)",
        description: "stable isolated spots: each seed becomes one spot that neither divides nor dies",
    },
    Preset {
        name: "spots",
        feed: 0.030,
        kill: 0.062,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson λ",
        description: "self-replicating spots that tile the plane in a near-hexagonal lattice",
    },
    Preset {
        name: "worms",
        feed: 0.046,
        kill: 0.065,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson μ",
        description: "long separate worms that grow at their ends",
    },
    Preset {
        name: "maze",
        feed: 0.029,
        kill: 0.057,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson θ",
        description: "a labyrinth of connected stripes",
    },
    Preset {
        name: "waves",
        feed: 0.018,
        kill: 0.047,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson α/β border",
        description: "wave fronts that expand from spots, collide and break up, never settling",
    },
    Preset {
        name: "chaos",
        feed: 0.026,
        kill: 0.051,
        init: Init::Spots,
        steps: 5_000,
        class: "Pearson β",
        description: "turbulent, ever-changing patches",
    },
    Preset {
        name: "holes",
        feed: 0.039,
        kill: 0.058,
        init: Init::Spots,
        steps: 10_000,
        class: "Pearson ι",
        description: "a V-rich sheet pierced by holes (negative spots)",
    },
];

/// The preset called `name`, if any.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}
