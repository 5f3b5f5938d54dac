//! The write-up's linear toy model of sensitivity ([`ToyModel`]) and what it says
//! ([`ToyAnalysis`]).

/// The write-up's linear toy model `x ← A·x`, `A = [[1−β, α], [γ, 1−κ]]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToyModel {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub kappa: f64,
}

/// What the toy model says about sensitivity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToyAnalysis {
    /// The eigenvalues (re, im), larger real part first.
    pub eigenvalues: [(f64, f64); 2],
    /// Spectral radius ρ(A).
    pub spectral_radius: f64,
    /// log ρ(A): the Lyapunov exponent per step.
    pub lyapunov: f64,
    /// αγ > βκ: the feedback loop beats the damping.
    pub feedback_wins: bool,
}

impl ToyModel {
    /// Eigenvalues from the quadratic formula: (2 − β − κ ± √((β − κ)² + 4αγ)) / 2.
    pub fn analyse(&self) -> ToyAnalysis {
        let mean = (2.0 - self.beta - self.kappa) / 2.0;
        let disc = (self.beta - self.kappa).powi(2) + 4.0 * self.alpha * self.gamma;
        let eigenvalues = if disc >= 0.0 {
            let r = disc.sqrt() / 2.0;
            [(mean + r, 0.0), (mean - r, 0.0)]
        } else {
            let r = (-disc).sqrt() / 2.0;
            [(mean, r), (mean, -r)]
        };
        let spectral_radius = eigenvalues.iter().map(|(re, im)| re.hypot(*im)).fold(0.0, f64::max);
        ToyAnalysis {
            eigenvalues,
            spectral_radius,
            lyapunov: spectral_radius.ln(),
            feedback_wins: self.alpha * self.gamma > self.beta * self.kappa,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toy_model_matches_a_hand_computed_case() {
        // A = [[0.9, 0.2], [0.3, 0.8]]: trace 1.7, det 0.66, λ = (1.7 ± √(2.89 − 2.64))/2 = 1.1, 0.6.
        let a = ToyModel { alpha: 0.2, beta: 0.1, gamma: 0.3, kappa: 0.2 }.analyse();
        assert!((a.eigenvalues[0].0 - 1.1).abs() < 1e-12 && (a.eigenvalues[1].0 - 0.6).abs() < 1e-12);
        assert!((a.spectral_radius - 1.1).abs() < 1e-12);
        assert!((a.lyapunov - 1.1f64.ln()).abs() < 1e-12);
        assert!(a.feedback_wins); // 0.06 > 0.02
        // Damped: αγ = 0.01 < βκ = 0.25 and ρ < 1.
        let d = ToyModel { alpha: 0.1, beta: 0.5, gamma: 0.1, kappa: 0.5 }.analyse();
        assert!(!d.feedback_wins && d.spectral_radius < 1.0 && d.lyapunov < 0.0);
        assert!((d.spectral_radius - 0.6).abs() < 1e-12); // 0.5 ± 0.1
    }
}
