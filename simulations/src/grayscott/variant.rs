//! The `--variant` choice, its default and its registration of the GPU variants, and
//! [`select`], which resolves it together with `--backend`.

use super::cuda;
use crate::{BackendChoice, Device, choice::VariantChoice, error::Result};

crate::choice! {
    /// The steps of the optimisation progression (`--variant`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Variant {
        /// The CPU reference (rayon).
        Cpu = "cpu",
        /// Laplacian on the GPU, update on the CPU, copies both ways every step.
        V0 = "v0",
        /// Laplacian kernel then update kernel, all on the GPU (40 B/cell/step).
        V1 = "v1",
        /// v1, with frames gathered on the GPU and colour-mapped a batch per launch.
        V2 = "v2",
        /// Laplacian and update in one kernel (16 B/cell/step).
        Fused = "fused",
        /// Fused, through a shared-memory tile with a halo.
        Tiled = "tiled",
        /// Temporal blocking: 2 to 8 steps (tuned) per launch on tiles held in registers.
        Temporal = "temporal",
        /// Temporal blocking by 2.5-D streaming: blocks march down strips, a wavefront of up to 8
        /// time levels (tuned) in register rings; halo work only at the strip's sides.
        Streaming = "streaming",
    }
}

impl Variant {
    /// The unit that steps a GPU variant on the CUDA engine; `None` for `cpu`, which has an
    /// engine of its own. The one registration of a GPU variant besides its entry above.
    pub(crate) fn scheme(self) -> Option<&'static dyn cuda::schemes::Scheme> {
        use cuda::schemes::*;
        match self {
            Variant::Cpu => None,
            Variant::V0 => Some(&V0),
            Variant::V1 => Some(&V1),
            Variant::V2 => Some(&V2),
            Variant::Fused => Some(&Fused),
            Variant::Tiled => Some(&Tiled),
            Variant::Temporal => Some(&Temporal),
            Variant::Streaming => Some(&Streaming),
        }
    }

    /// Every variant, in progression order.
    pub const ALL: &'static [Variant] = <Variant as crate::Choice>::VALUES;

    /// The `--variant` name (its [`Choice`](crate::Choice) name).
    pub fn name(self) -> &'static str {
        crate::Choice::name(self)
    }

    /// Whether it runs on the GPU.
    pub fn is_gpu(self) -> bool {
        self.scheme().is_some()
    }

    /// Whether its fields live on the host between steps (`v0`).
    pub(crate) fn state_on_host(self) -> bool {
        self.scheme().is_some_and(|scheme| scheme.state_on_host())
    }

    /// Whether `--split` and `--gpus` take it: a GPU variant whose fields live on the GPU.
    pub fn splits(self) -> bool {
        self.is_gpu() && !self.state_on_host()
    }

    /// The variants `bench grayscott` times without `--variants`, in progression order.
    pub fn benched_by_default() -> Vec<Variant> {
        Self::ALL.iter().copied().filter(|v| v.scheme().is_some_and(|s| s.benched_by_default())).collect()
    }
}

impl crate::choice::VariantChoice for Variant {
    const CPU: Variant = Variant::Cpu;
    const GPU_DEFAULT: Variant = Variant::Fused;
}

/// Resolves `--backend` and `--variant` together ([`VariantChoice::select`]): a GPU variant
/// needs the GPU (even with `auto`), the `cpu` variant never opens it, and without `--variant`
/// the GPU runs `fused`. Returns the device, the variant, and with `auto` on a machine without
/// a GPU a notice.
pub fn select(backend: BackendChoice, variant: Option<Variant>) -> Result<(Device, Variant, Option<String>)> {
    <Variant as VariantChoice>::select(backend, variant)
}
