//! The named sets of model parameters (`--preset`): [`PhysarumPreset`], [`PHYSARUM_PRESETS`]
//! and [`physarum_preset`].

use super::PhysarumSetup;

/// A named set of model parameters (`--preset`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysarumPreset {
    pub name: &'static str,
    pub description: &'static str,
    /// Where the parameters come from.
    pub citation: &'static str,
    pub sensor_dist: f32,
    /// Radians.
    pub sensor_angle: f32,
    /// Radians.
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
}

impl PhysarumPreset {
    /// `setup` with this preset's model parameters (the rest unchanged).
    pub fn apply(&self, setup: PhysarumSetup) -> PhysarumSetup {
        PhysarumSetup {
            sensor_dist: self.sensor_dist,
            sensor_angle: self.sensor_angle,
            turn_angle: self.turn_angle,
            step_size: self.step_size,
            deposit: self.deposit,
            diffuse: self.diffuse,
            decay: self.decay,
            ..setup
        }
    }
}

/// The named presets; the first is the CLI's default.
pub const PHYSARUM_PRESETS: &[PhysarumPreset] = &[
    PhysarumPreset {
        name: "network",
        description: "the classic network: thin veins joined at junctions around open cells",
        citation: "this project's (issue #16), Jones' model with a longer sensor reach and faster decay",
        sensor_dist: 15.0,
        sensor_angle: 0.5,
        turn_angle: 0.5,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 0.5,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "jones",
        description: "Jones' agent with equal sensor and turn angles (45°): separate curving strands, few junctions",
        citation: "J. Jones, \"Characteristics of pattern formation and evolution in approximations of \
                   Physarum transport networks\", Artificial Life 16(2), 2010: SO = 9, SS = 1, depT = 5, \
                   3×3 mean diffusion, damping 0.1, here with SA = RA = 45°",
        sensor_dist: 9.0,
        sensor_angle: std::f32::consts::FRAC_PI_4,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 1.0,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "jones-narrow",
        description: "Jones' agent with sensors at ±22.5° turning by 45°: a connected web of long veins",
        citation: "J. Jones, Artificial Life 16(2), 2010, which varies SA and RA apart: here SA = 22.5°, RA = 45°",
        sensor_dist: 9.0,
        sensor_angle: std::f32::consts::FRAC_PI_8,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 5.0,
        diffuse: 1.0,
        decay: 0.1,
    },
    PhysarumPreset {
        name: "writeup",
        description: "the reference write-up's model (the library's PhysarumSetup::default, the benchmarks' model): \
                      short reach and slow decay give thick strands",
        citation: "the reference write-up (PyTorch and Triton versions)",
        sensor_dist: 5.0,
        sensor_angle: std::f32::consts::FRAC_PI_4,
        turn_angle: std::f32::consts::FRAC_PI_4,
        step_size: 1.0,
        deposit: 1.0,
        diffuse: 0.2,
        decay: 0.01,
    },
];

/// The preset called `name`, if any.
pub fn physarum_preset(name: &str) -> Option<&'static PhysarumPreset> {
    PHYSARUM_PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_writeup_is_the_default_model() {
        for p in PHYSARUM_PRESETS {
            p.apply(PhysarumSetup::default()).validate().unwrap();
        }
        let writeup = physarum_preset("writeup").unwrap().apply(PhysarumSetup::default());
        assert_eq!(writeup.params(), PhysarumSetup::default().params());
        assert_eq!(PHYSARUM_PRESETS[0].name, "network");
        assert!(
            physarum_preset("jones-narrow").unwrap().turn_angle
                > physarum_preset("jones-narrow").unwrap().sensor_angle
        );
    }
}
