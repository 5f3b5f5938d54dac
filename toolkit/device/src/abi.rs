//! The host's view of a kernel: its entry point's name, parameter types and launch needs.
//!
//! `#[kernel]` generates, in the host build of this crate, a unit struct with the kernel's
//! name that implements [`Kernel`]:
//!
//! ```ignore
//! // a kernel crate
//! #[kernel]
//! pub unsafe fn saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) { ... }
//!
//! // its host: checked against that signature at compile time
//! gpu.launch(my_kernels::saxpy, cfg, (&x, &mut y, n, 2.0f32))?;
//! ```
//!
//! The host runtime (`ptxkit-host`'s `launch`) maps each parameter type to the host values that may be
//! passed for it, so a wrong count, element type, mutability or scalar type does not compile.
//! Nothing here depends on a CUDA crate: this crate stays `no_std`.

/// A kernel entry point, as the host sees it. Implemented by the unit struct that
/// `#[kernel]` generates next to each kernel (host builds only).
pub trait Kernel: Copy + 'static {
    /// The PTX entry point's name (the function's name).
    const NAME: &'static str;
    /// The parameter types in order, as a tuple, e.g. `(*const f32, *mut f32, u32, Rates)`.
    type Params;
    /// Each parameter's name, size and alignment, in order: what the PTX `.param` list holds.
    const PARAMS: &'static [Param];
    /// `#[kernel(launch_bounds(max_threads, min_blocks))]`, if given (with `block(...)`: its
    /// threads).
    const LAUNCH_BOUNDS: Option<LaunchBounds>;
    /// `#[kernel(block(x, y, z))]`: the only block shape the kernel may be launched with (its
    /// block-shape contract; the typed launch refuses any other), if given.
    const BLOCK: Option<[u32; 3]> = None;
    /// `#[kernel(dynamic_shared = bytes)]`: dynamic shared memory every block needs (0: none).
    const DYNAMIC_SHARED_BYTES: u32;
}

/// One kernel parameter's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
}

impl Param {
    /// The layout of a parameter of type `T`.
    pub const fn of<T>(name: &'static str) -> Self {
        Self { name, size: core::mem::size_of::<T>(), align: core::mem::align_of::<T>() }
    }
}

/// CUDA C's `__launch_bounds__(max_threads, min_blocks)`: blocks have at most `max_threads`
/// threads, and the compiler keeps registers low enough for `min_blocks` blocks per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: u32,
}

/// A kernel's description as a value, for tables of every kernel (the table `ptxkit-build`
/// generates from the `#[kernel]` markers in the PTX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: &'static str,
    pub params: &'static [Param],
    pub launch_bounds: Option<LaunchBounds>,
    /// The block-shape contract, `#[kernel(block(...))]`.
    pub block: Option<[u32; 3]>,
    pub dynamic_shared_bytes: u32,
}

impl KernelInfo {
    /// The description of `K`.
    pub const fn of<K: Kernel>() -> Self {
        Self {
            name: K::NAME,
            params: K::PARAMS,
            launch_bounds: K::LAUNCH_BOUNDS,
            block: K::BLOCK,
            dynamic_shared_bytes: K::DYNAMIC_SHARED_BYTES,
        }
    }
}

/// The prefix of the PTX comment line `#[kernel]` emits for each kernel in the device build:
/// `// kernel-abi: <module path>::<name>[ launch_bounds <max_threads> <min_blocks>[ block <x> <y>
/// <z>]]`. The PTX builder reads these lines to apply the launch bounds (`.maxntid`, or
/// `.reqntid` for a block shape) and to list every kernel.
pub const PTX_MARKER: &str = "// kernel-abi: ";
