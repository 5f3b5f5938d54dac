//! The steps of the optimisation progression ([`HeatVariant`]) and the device memory each
//! needs.

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum HeatVariant {
        /// The CPU reference: classic RK4 with explicit temporaries (rayon).
        Cpu = "cpu",
        /// One kernel per stage, each built from u, then an update kernel (write-up step 0).
        Naive = "naive",
        /// Stages reuse k1 instead of recomputing the stencil on u (write-up step 2).
        Reuse = "reuse",
        /// RK4 as its polynomial in the operator: 4 passes, 44 B/cell.
        Fused = "fused",
        /// Fused, each pass a 2.5-D kernel marching along z.
        Tiled = "tiled",
        /// The whole RK4 step in one 2.5-D pass (the four stencil levels pipelined along z).
        Single = "single",
    }
}

impl crate::choice::VariantChoice for HeatVariant {
    const CPU: HeatVariant = HeatVariant::Cpu;
    const GPU_DEFAULT: HeatVariant = HeatVariant::Fused;
}

impl HeatVariant {
    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Device bytes per cell: u and four stages, or u and three polynomial terms.
    pub fn bytes_per_cell(self) -> u64 {
        match self {
            HeatVariant::Cpu => 4 * 6,
            HeatVariant::Naive | HeatVariant::Reuse => 4 * 5,
            HeatVariant::Fused | HeatVariant::Tiled => 4 * 4,
            HeatVariant::Single => 4 * 2,
        }
    }
}
