//! A Physarum run's definition ([`PhysarumSetup`]): the grid and agent limits, how sensors
//! read the trail ([`Sensing`]), where agents start ([`AgentInit`]), the checks, and the
//! kernels' parameters.

use std::path::PathBuf;

use kernels::physarum::{SENSE_BILINEAR, SENSE_NEAREST, TAU};

use super::Params;
use crate::error::{Error, Result};

/// The largest grid side.
pub const MAX_SIDE: u32 = 32_768;
/// The most agents (indices and counts stay in `u32`).
pub const MAX_AGENTS: u32 = 1 << 30;

crate::choice! {
    /// How sensors read the trail (`--sensing`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum Sensing {
        /// The cell containing the sensor point (the write-up's Triton kernel).
        #[default]
        Nearest = "nearest",
        /// Bilinear between the four surrounding cells (the write-up's `grid_sample`), periodic.
        Bilinear = "bilinear",
    }
}

crate::choice! {
    /// Where agents start (`--init`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum AgentInit {
        /// Uniform over the grid, random headings (the write-up's).
        #[default]
        Random = "random",
        /// Uniform in a centred disc (radius 0.35 of the shorter side), heading outward.
        Disc = "disc",
        /// On a thin centred ring (radius 0.4 of the shorter side), heading inward.
        Ring = "ring",
    }
}

/// A Physarum run's definition. `Default` is the write-up's model (the `writeup` preset) on a
/// 1024² grid with a million agents.
#[derive(Clone, Debug)]
pub struct PhysarumSetup {
    pub width: u32,
    pub height: u32,
    pub agents: u32,
    pub sensor_dist: f32,
    /// Angle between the front sensor and each side sensor, radians.
    pub sensor_angle: f32,
    /// Heading change of a turn, radians.
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    pub diffuse: f32,
    pub decay: f32,
    /// Largest random heading change per step, radians.
    pub jitter: f32,
    pub sensing: Sensing,
    pub seed: u64,
    pub init: AgentInit,
    /// Seed the trail from this image's luminance times `image_strength`.
    pub init_image: Option<PathBuf>,
    pub image_strength: f32,
}

impl Default for PhysarumSetup {
    fn default() -> Self {
        Self {
            width: 1024,
            height: 1024,
            agents: 1 << 20,
            sensor_dist: 5.0,
            sensor_angle: std::f32::consts::FRAC_PI_4,
            turn_angle: std::f32::consts::FRAC_PI_4,
            step_size: 1.0,
            deposit: 1.0,
            diffuse: 0.2,
            decay: 0.01,
            jitter: 0.0,
            sensing: Sensing::Nearest,
            seed: 1,
            init: AgentInit::Random,
            init_image: None,
            image_strength: 3.0,
        }
    }
}

impl PhysarumSetup {
    pub fn cells(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Checks sizes and parameters; the error names the option and its valid range.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidInput(m));
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if side == 0 || side > MAX_SIDE {
                return bad(format!("--{name} must be between 1 and {MAX_SIDE}, got {side}"));
            }
        }
        if self.agents == 0 || self.agents > MAX_AGENTS {
            return bad(format!("--agents must be between 1 and {MAX_AGENTS}, got {}", self.agents));
        }
        let finite = [
            ("sensor-dist", self.sensor_dist),
            ("sensor-angle", self.sensor_angle),
            ("turn-angle", self.turn_angle),
            ("step-size", self.step_size),
            ("deposit", self.deposit),
            ("diffuse", self.diffuse),
            ("decay", self.decay),
            ("jitter", self.jitter),
            ("image-strength", self.image_strength),
        ];
        for (name, value) in finite {
            if !value.is_finite() {
                return bad(format!("--{name} must be a finite number, got {value}"));
            }
        }
        // At most one period, so positions wrap with one compare (`wrap_coord`).
        let limit = self.width.min(self.height) as f32;
        if !(0.0..=limit).contains(&self.sensor_dist) {
            return bad(format!("--sensor-dist must be between 0 and {limit}, got {}", self.sensor_dist));
        }
        if !(0.0..=limit).contains(&self.step_size) {
            return bad(format!("--step-size must be between 0 and {limit}, got {}", self.step_size));
        }
        if self.sensor_angle.abs() > TAU {
            return bad(format!("--sensor-angle must be within ±2π, got {}", self.sensor_angle));
        }
        if self.turn_angle.abs() > TAU {
            return bad(format!("--turn-angle must be within ±2π, got {}", self.turn_angle));
        }
        if self.deposit < 0.0 {
            return bad(format!("--deposit must be 0 or more, got {}", self.deposit));
        }
        if !(0.0..=1.0).contains(&self.diffuse) {
            return bad(format!("--diffuse must be between 0 and 1, got {}", self.diffuse));
        }
        if !(0.0..1.0).contains(&self.decay) {
            return bad(format!("--decay must be at least 0 and below 1, got {}", self.decay));
        }
        if !(0.0..=TAU).contains(&self.jitter) {
            return bad(format!("--jitter must be between 0 and 2π, got {}", self.jitter));
        }
        if self.image_strength < 0.0 {
            return bad(format!("--image-strength must be 0 or more, got {}", self.image_strength));
        }
        Ok(())
    }

    /// The kernels' parameters (the seed folded to 32 bits).
    pub fn params(&self) -> Params {
        Params::new(
            self.width,
            self.height,
            self.sensor_dist,
            self.sensor_angle,
            self.turn_angle,
            self.step_size,
            self.deposit,
            self.diffuse,
            self.decay,
            self.jitter,
            match self.sensing {
                Sensing::Nearest => SENSE_NEAREST,
                Sensing::Bilinear => SENSE_BILINEAR,
            },
            (self.seed ^ (self.seed >> 32)) as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_turn_by_the_turn_angle_not_the_sensor_angle() {
        // Trail only under the left sensor: the agent turns left by 0.2 and moves that way.
        let setup = PhysarumSetup {
            width: 64,
            height: 64,
            agents: 1,
            sensor_angle: 0.5,
            turn_angle: 0.2,
            ..Default::default()
        };
        let p = setup.params();
        let (y, x, heading) = (32.0f32, 32.0f32, 0.0f32);
        let left = kernels::physarum::sensor_dirs(heading, &p)[1];
        let (ly, lx) = kernels::physarum::ahead(y, x, left, p.sensor_dist, &p);
        let mut trail = vec![0.0f32; 64 * 64];
        trail[kernels::physarum::cell_of(ly, lx, &p)] = 1.0;
        let (ny, nx, nh) = kernels::physarum::agent_step(&|c: usize| trail[c], y, x, heading, 0, 0, &p);
        assert!((nh - 0.2).abs() < 1e-6, "heading {nh}");
        assert!(
            (ny - (y + 0.2f32.sin())).abs() < 1e-5 && (nx - (x + 0.2f32.cos())).abs() < 1e-5,
            "({ny}, {nx})"
        );
    }
}
