//! The steps of the optimisation progression ([`PhysarumVariant`]) and the device memory
//! each needs.

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum PhysarumVariant {
        /// The CPU reference (rayon for agents and diffusion, deposits in agent order).
        Cpu = "cpu",
        /// One kernel per PyTorch operation: nine launches per step.
        Unfused = "unfused",
        /// The write-up's Triton kernels: sense+steer+move, atomic deposit, diffuse+decay.
        Fused = "fused",
        /// Struct-of-arrays agents with the deposit counted in the same pass, and one tiled
        /// pass for deposits, diffusion and decay.
        Optimized = "optimized",
    }
}

impl crate::choice::VariantChoice for PhysarumVariant {
    const CPU: PhysarumVariant = PhysarumVariant::Cpu;
    const GPU_DEFAULT: PhysarumVariant = PhysarumVariant::Optimized;
}

impl PhysarumVariant {
    pub const GPU: [PhysarumVariant; 3] =
        [PhysarumVariant::Unfused, PhysarumVariant::Fused, PhysarumVariant::Optimized];

    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Device bytes per agent and per cell: agent state and scratch, trail buffers.
    pub fn bytes(self) -> (u64, u64) {
        match self {
            PhysarumVariant::Cpu => (12, 8),
            // pos, heading, dirs, readings, turns; trail and mean.
            PhysarumVariant::Unfused => (12 + 24 + 12 + 4, 8),
            PhysarumVariant::Fused => (12, 8),
            // two copies of (y, x, heading, id) for binning; two trails, two count buffers, and
            // with deposits into a copy two more trails (an upper bound for the other ways).
            PhysarumVariant::Optimized => (32, 24),
        }
    }
}
