//! Host runtime for GPU kernels written in Rust: ptxkit's counterpart of rust-cuda's `cust`,
//! on `cudarc` (the driver, loaded at run time) and `bytemuck`.
//!
//! - [`Gpu`]: one open GPU (context, stream, the kernel modules each loaded on first use,
//!   cached function handles), opened by ordinal with the [`KernelImages`] a build script
//!   embedded;
//!   it runs the cubin for its architecture if there is one, else the PTX
//!   ([`select_image`]).
//! - [`Gpu::launch`]: typed launches. The argument tuple is checked against the kernel's
//!   parameters (from `#[kernel]`, [`Kernel::Params`]) at compile time; see [`KernelArg`] for
//!   what may be passed for each parameter type.
//! - [`grid_1d`], [`grid_2d`]: launch shapes; [`Timer`]: device-event timing; [`Error`].
//! - Beyond one stream: [`Gpu::new_stream`] (launch on any stream with [`Gpu::launch_on`]),
//!   [`Gpu::capture`] (a [`Graph`] replayed with one call), [`Event`]s, pinned host buffers
//!   ([`Gpu::alloc_pinned`]), modules loaded at run time from PTX or cubins
//!   ([`Gpu::load_ptx`], [`RuntimeModule`], untyped `unsafe` launches by name) and
//!   cooperative launches for grid-wide synchronisation ([`Gpu::launch_cooperative`]).
//! - Another library's memory and streams (a PyTorch tensor, CuPy's current stream):
//!   [`BorrowedSlice`], [`BorrowedSliceMut`], [`BorrowedRows`], [`BorrowedInputRows`] and
//!   [`Gpu::borrow_stream`].
//!
//! # From a `#[kernel]` to a typed launch
//!
//! ```ignore
//! // my-kernels/src/lib.rs (a #![no_std] crate that depends on ptxkit-device)
//! #[ptxkit_device::kernel]
//! pub unsafe fn saxpy(x: *const f32, y: *mut f32, n: u32, a: f32) { ... }
//!
//! // my-app/build.rs ([build-dependencies] ptxkit-build):
//! // fn main() { PtxBuilder::new("../my-kernels").build_into_out_dir("kernels.ptx").unwrap_or_else(|e| e.exit()) }
//!
//! // my-app/src/main.rs ([dependencies] my-kernels, ptxkit-host)
//! static KERNELS: ptxkit_host::KernelImages = ptxkit_host::include_kernels!("kernels");
//!
//! fn main() -> Result<(), ptxkit_host::Error> {
//!     let gpu = ptxkit_host::Gpu::open(0, &KERNELS)?;
//!     let x = gpu.stream().clone_htod(&[1.0f32; 1000]).map_err(ptxkit_host::Error::driver("upload"))?;
//!     let mut y = gpu.stream().alloc_zeros::<f32>(1000).map_err(ptxkit_host::Error::driver("alloc"))?;
//!     gpu.launch(my_kernels::saxpy, ptxkit_host::grid_1d(1000, 256), (&x, &mut y, 1000u32, 2.0f32))?;
//!     gpu.synchronize()
//! }
//! ```
//! `(&x, &mut y, 1000u32)` (one argument short), `(&y, &mut y, ...)` (a shared borrow for
//! a `*mut f32`: a borrow error too) or `1000i32` for the `u32` do not compile.

mod borrowed;
mod cluster;
mod constant;
mod cooperative;
mod event;
mod graph;
mod launch;
mod launch_ex;
mod module;
mod pinned;
mod stream;
mod tensor_map;

pub use borrowed::{BorrowedInputRows, BorrowedRows, BorrowedSlice, BorrowedSliceMut};
pub use cluster::{MAX_PORTABLE_CLUSTER_BLOCKS, check_cluster};
pub use cooperative::check_cooperative_grid;
/// The `cudarc` this crate is built on (buffers, streams and events are its types).
pub use cudarc;
pub use event::{Event, Timer};
pub use graph::Graph;
pub use launch::{
    KernelArg, KernelArgs, ParamSink, RawParams, Rows, RowsMut, StagedArg, StagedArgs, StagedBuffer,
    StagedValue, last_launched,
};
pub use module::{ModuleImage, RuntimeKernel, RuntimeModule};
pub use ptxkit_device::constant::{ConstantArray, ConstantElement};
pub use ptxkit_device::{Kernel, KernelInfo, LaunchBounds, Param};
pub use tensor_map::{DeviceTensorMap, TensorMapSpec, TmaElement, TmaSwizzle};

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use cudarc::{
    driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig, sys},
    nvrtc::Ptx,
};

/// Dynamic shared memory a kernel gets without raising its limit.
const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// What can go wrong on the host side of a GPU program.
#[derive(Debug)]
pub enum Error {
    /// No usable CUDA GPU: no driver library, no such device, or no context.
    NoGpu(String),
    /// A CUDA driver call failed; `context` says what was being done.
    Driver { context: String, source: DriverError },
    /// A launch that cannot be valid (e.g. a block larger than the kernel's launch bounds, a
    /// cooperative grid larger than the GPU holds at once), or a kernel module that cannot be
    /// loaded before the driver sees it (a missing file, a truncated cubin).
    InvalidLaunch(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoGpu(why) => write!(f, "no usable CUDA GPU: {why}"),
            Self::Driver { context, source } => write!(f, "CUDA error in {context}: {source}"),
            Self::InvalidLaunch(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Driver { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A driver error with no step named, so that `?` works on cudarc's results in functions
/// returning this crate's [`Result`] (name the step with [`Error::driver`] where it helps).
impl From<DriverError> for Error {
    fn from(source: DriverError) -> Self {
        Error::Driver { context: "a CUDA driver call".into(), source }
    }
}

impl Error {
    /// A `map_err` adapter naming the step: `.map_err(Error::driver("copying u"))`.
    pub fn driver(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
        let context = context.into();
        move |source| Error::Driver { context, source }
    }
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches a description of the failing step to a driver error.
trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, DriverError> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Driver { context: what(), source })
    }
}

/// The kernel images of one kernel crate, as `ptxkit-build` embeds them: its PTX modules
/// (one, or several where the build script built the crate as several), each with machine
/// code for some architectures, and the table of all their kernels. Made by
/// [`include_kernels!`].
#[derive(Clone, Copy, Debug)]
pub struct KernelImages {
    /// The modules; each kernel is in exactly one.
    pub modules: &'static [KernelModule],
    /// Every kernel of every module: name, parameter layout, launch bounds, dynamic shared
    /// memory.
    pub kernels: &'static [KernelInfo],
}

/// One PTX module and its cubins: a [`Gpu`] loads each module of its [`KernelImages`] as a
/// CUDA module of its own.
#[derive(Clone, Copy, Debug)]
pub struct KernelModule {
    /// The module's name (from the build script), for messages.
    pub name: &'static str,
    /// The PTX, JIT-compiled by the driver where no cubin matches.
    pub ptx: &'static str,
    /// `(arch, cubin)` pairs, newest first (e.g. `(90, ...)` for sm_90).
    pub cubins: &'static [(u32, &'static [u8])],
    /// The kernels in this module's PTX.
    pub kernels: &'static [KernelInfo],
    /// `0` for a module that runs wherever its set does (the image a [`Gpu`] picks for all
    /// such modules); else the architecture its PTX targets as a number (`90` for sm_90: a
    /// `ptxkit_build` module built for a newer GPU than the others), loaded only on a GPU of
    /// that compute capability or newer, from its own cubin or its PTX.
    pub requires: u32,
}

impl KernelModule {
    /// Whether this module can load on a GPU of compute capability `major.minor`.
    pub fn runs_on(&self, major: u32, minor: u32) -> bool {
        self.requires <= major * 10 + minor
    }
}

impl KernelImages {
    /// The architectures every module has a cubin for, newest first: a GPU runs one of
    /// them, or the PTX of every module. Modules of a newer architecture than the set's
    /// ([`KernelModule::requires`]) pick their own image and are left out.
    pub fn cubin_archs(&self) -> Vec<u32> {
        let portable: Vec<&KernelModule> = self.modules.iter().filter(|m| m.requires == 0).collect();
        let Some((first, rest)) = portable.split_first() else { return Vec::new() };
        first
            .cubins
            .iter()
            .map(|(arch, _)| *arch)
            .filter(|arch| rest.iter().all(|m| m.cubins.iter().any(|(a, _)| a == arch)))
            .collect()
    }

    /// The index of the module that holds the kernel named `name`.
    pub fn module_of(&self, name: &str) -> Option<usize> {
        self.modules.iter().position(|m| m.kernels.iter().any(|k| k.name == name))
    }
}

/// The [`KernelImages`] that `ptxkit_build::PtxBuilder::build_into_out_dir("<name>.ptx")`
/// wrote into this crate's `OUT_DIR`: `include_kernels!("kernels")`.
#[macro_export]
macro_rules! include_kernels {
    ($name:literal) => {
        $crate::KernelImages {
            modules: include!(concat!(env!("OUT_DIR"), "/", $name, ".modules.rs")),
            kernels: include!(concat!(env!("OUT_DIR"), "/", $name, ".rs")),
        }
    };
}

/// Which kernel image a GPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelImage {
    /// The cubin for `sm_<arch>`.
    Cubin(u32),
    /// The PTX, JIT-compiled by the driver.
    Ptx,
}

impl std::fmt::Display for KernelImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cubin(arch) => write!(f, "cubin sm_{arch}"),
            Self::Ptx => write!(f, "PTX (JIT-compiled by the driver)"),
        }
    }
}

/// The image for a GPU of compute capability `major.minor` among cubins for `archs`: a cubin
/// runs on its own major version at the same or a higher minor version, so the newest such
/// cubin; else the PTX. `force_ptx` always picks the PTX.
pub fn select_image(archs: &[u32], major: u32, minor: u32, force_ptx: bool) -> KernelImage {
    if force_ptx {
        return KernelImage::Ptx;
    }
    let device = major * 10 + minor;
    archs
        .iter()
        .copied()
        .filter(|&arch| arch / 10 == major && arch <= device)
        .max()
        .map_or(KernelImage::Ptx, KernelImage::Cubin)
}

/// The image a GPU of compute capability `major.minor` loads for `module`: the set's image
/// (`set_image`, [`select_image`] over [`KernelImages::cubin_archs`]) for a module of the set's
/// architecture; for a module built for a newer GPU ([`KernelModule::requires`]), the same
/// choice among its own cubins. (Whether the module runs there at all is
/// [`KernelModule::runs_on`].)
pub fn module_image(
    module: &KernelModule,
    set_image: KernelImage,
    (major, minor): (u32, u32),
    force_ptx: bool,
) -> KernelImage {
    match module.requires {
        0 => set_image,
        _ => {
            let own: Vec<u32> = module.cubins.iter().map(|(arch, _)| *arch).collect();
            select_image(&own, major, minor, force_ptx)
        }
    }
}

/// How many CUDA GPUs this machine has (0 without a driver).
pub fn device_count() -> Result<usize> {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Ok(0);
    }
    CudaContext::device_count().map(|n| n as usize).context(|| "counting GPUs".into())
}

/// Lets kernels and copies in context `from` reach the memory of context `peer` directly
/// (NVLink or PCIe) instead of through the host: peer access between the contexts, and to
/// the buffers of `peer`'s memory pool (cudarc allocates stream-ordered, from the pool, which
/// context peer access does not cover). Returns whether the devices can (false: copies
/// between them still work, staged through the host by the driver; true for one device).
/// Enabling it twice is not an error.
pub fn enable_peer_access(from: &CudaContext, peer: &CudaContext) -> Result<bool> {
    let (ordinal, peer_ordinal) = (from.ordinal(), peer.ordinal());
    if ordinal == peer_ordinal {
        return Ok(true);
    }
    let mut can = 0;
    // SAFETY: `can` is a valid out-pointer; both devices are open.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, from.cu_device(), peer.cu_device()) }
        .result()
        .context(|| format!("asking whether GPU {ordinal} can reach GPU {peer_ordinal}"))?;
    if can == 0 {
        return Ok(false);
    }
    from.bind_to_thread().context(|| "binding the GPU".into())?;
    // SAFETY: the peer context is live (held by `peer`); flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), 0) } {
        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
        other => {
            return Err(other.result().unwrap_err())
                .context(|| format!("enabling peer access from GPU {ordinal} to GPU {peer_ordinal}"));
        }
    }
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: `pool` is a valid out-pointer; the device is open.
    unsafe { sys::cuDeviceGetMemPool(&mut pool, peer.cu_device()) }
        .result()
        .context(|| format!("finding GPU {peer_ordinal}'s memory pool"))?;
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: from.cu_device(),
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one valid descriptor; the pool is the peer's live pool.
    unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }
        .result()
        .context(|| format!("letting GPU {ordinal} reach the buffers of GPU {peer_ordinal}"))?;
    Ok(true)
}

/// An open GPU: context, stream, the kernel modules (each loaded on first use), and a cache
/// of function handles.
pub struct Gpu {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    images: &'static KernelImages,
    /// One slot per module of `images`.
    modules: Mutex<Vec<Option<Arc<CudaModule>>>>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    name: String,
    image: KernelImage,
    /// Compute capability (major, minor), read once at open.
    capability: (u32, u32),
    /// The PTX chosen where a cubin matches ([`Gpu::open_with`]).
    force_ptx: bool,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens GPU `ordinal` to run `images` (the cubin for its architecture if there is one,
    /// else the PTX). Fails with [`Error::NoGpu`] when there is no driver or no such device,
    /// without touching the driver when its library is absent.
    ///
    /// The context does not track buffers with cudarc's per-buffer events (they would add
    /// work to every launch and cannot be captured into graphs): work on one stream runs in
    /// order, and work on two streams, or a host buffer used by an asynchronous copy, is
    /// ordered explicitly, with an [`Event`] or a synchronisation.
    pub fn open(ordinal: usize, images: &'static KernelImages) -> Result<Arc<Self>> {
        Self::open_with(ordinal, images, false)
    }

    /// [`Gpu::open`], choosing the PTX even where a cubin matches when `force_ptx` is set (to
    /// test the PTX path on a GPU that has a cubin).
    pub fn open_with(ordinal: usize, images: &'static KernelImages, force_ptx: bool) -> Result<Arc<Self>> {
        // SAFETY: only tries to dlopen the driver library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoGpu("the CUDA driver library (libcuda.so) was not found".into()));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoGpu(format!("GPU {ordinal}: {e}")))?;
        let name = ctx.name().context(|| "reading the GPU's name".into())?;
        // Streams are ordered explicitly with events; cudarc's per-buffer event tracking
        // would add work to every launch and cannot be captured into graphs.
        // SAFETY: no stream or buffer exists yet.
        unsafe { ctx.disable_event_tracking() };
        // A stream of our own: the legacy default stream cannot be captured into a graph.
        let stream = ctx.new_stream().context(|| "creating a stream".into())?;
        let capability =
            |attribute| ctx.attribute(attribute).context(|| "querying the compute capability".into());
        let major = capability(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = capability(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let image = select_image(&images.cubin_archs(), major as u32, minor as u32, force_ptx);
        Ok(Arc::new(Self {
            ordinal,
            ctx,
            stream,
            images,
            modules: Mutex::new(vec![None; images.modules.len()]),
            functions: Mutex::new(HashMap::new()),
            name,
            image,
            capability: (major as u32, minor as u32),
            force_ptx,
        }))
    }

    /// The device's compute capability, (major, minor): (9, 0) for an H100 or H200.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.capability
    }

    /// The device ordinal this GPU was opened with.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernel image this GPU loads for every module of its set's architecture (a cubin
    /// for its architecture, or the PTX); a module built for a newer architecture
    /// ([`KernelModule::requires`]) picks its own the same way among its own cubins.
    pub fn image(&self) -> KernelImage {
        self.image
    }

    /// Whether `kernel`'s module loads on this GPU: false only for a kernel of a module built
    /// for a newer architecture than this GPU's ([`KernelModule::requires`]), whose launch
    /// would fail with [`Error::InvalidLaunch`].
    pub fn can_launch<K: Kernel>(&self, _kernel: K) -> bool {
        // A kernel already loaded can (the common case on a launch path: one lookup, not a
        // search of every module's kernel list).
        if self.functions.lock().expect("kernel cache lock").contains_key(K::NAME) {
            return true;
        }
        let (major, minor) = self.capability;
        self.images.module_of(K::NAME).is_none_or(|index| self.images.modules[index].runs_on(major, minor))
    }

    /// The CUDA context (for streams, events and buffers of its own).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream [`Gpu::launch`] queues work on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Lets kernels and copies on this GPU reach `peer`'s memory directly (NVLink or PCIe)
    /// instead of through the host ([`enable_peer_access`] between their contexts). Returns
    /// whether the devices can (false: copies between them still work, staged by the driver).
    /// Enabling it twice is not an error.
    pub fn enable_peer_access(&self, peer: &Gpu) -> Result<bool> {
        enable_peer_access(&self.ctx, &peer.ctx)
    }

    /// Free and total device memory, in bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info().context(|| "querying device memory".into())?;
        Ok((free as u64, total as u64))
    }

    /// The loaded function of `kernel`, for queries such as occupancy (launch through
    /// [`Gpu::launch`]). The kernel's module is loaded (JIT-compiled) the first time any of its
    /// kernels is asked for; a kernel that declares more than 48 KiB of dynamic shared memory
    /// is allowed it.
    pub fn function<K: Kernel>(&self, _kernel: K) -> Result<CudaFunction> {
        let name = K::NAME;
        let mut functions = self.functions.lock().expect("kernel cache lock");
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        // A kernel no module lists (an outside table out of date) is looked for in the first.
        let index = self.images.module_of(name).unwrap_or(0);
        let f = self.module(index)?.load_function(name).context(|| format!("looking up kernel {name}"))?;
        if K::DYNAMIC_SHARED_BYTES > DEFAULT_SHARED_LIMIT {
            f.set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                K::DYNAMIC_SHARED_BYTES as i32,
            )
            .context(|| format!("allowing {name} {} bytes of shared memory", K::DYNAMIC_SHARED_BYTES))?;
        }
        functions.insert(name, f.clone());
        Ok(f)
    }

    /// Loads every kernel module this GPU can run now (from the cubin, or JIT-compiled from
    /// the PTX) instead of at the first launch of one of its kernels, e.g. on a thread while
    /// the program does other start-up work. Modules built for a newer GPU
    /// ([`KernelModule::requires`]) are left out.
    pub fn load_kernels(&self) -> Result<()> {
        let (major, minor) = self.capability;
        (0..self.images.modules.len())
            .filter(|&index| self.images.modules[index].runs_on(major, minor))
            .try_for_each(|index| self.module(index).map(drop))
    }

    /// Module `index` of the images, loaded on first use.
    fn module(&self, index: usize) -> Result<Arc<CudaModule>> {
        let mut slots = self.modules.lock().expect("module lock");
        let Some(slot) = slots.get_mut(index) else {
            return Err(Error::InvalidLaunch("the kernel images hold no module".into()));
        };
        if let Some(m) = &*slot {
            return Ok(m.clone());
        }
        let module = &self.images.modules[index];
        let (major, minor) = self.capability;
        if !module.runs_on(major, minor) {
            return Err(Error::InvalidLaunch(format!(
                "the kernels of module {} need a GPU of compute capability {}.{} or later; this one is {major}.{minor}",
                module.name,
                module.requires / 10,
                module.requires % 10
            )));
        }
        let image = module_image(module, self.image, (major, minor), self.force_ptx);
        let chosen = image;
        let image = match image {
            KernelImage::Cubin(arch) => {
                let (_, cubin) = module
                    .cubins
                    .iter()
                    .find(|(a, _)| *a == arch)
                    .expect("selected from this module's cubins");
                Ptx::from_binary(cubin.to_vec())
            }
            KernelImage::Ptx => Ptx::from_src(module.ptx),
        };
        let m = self.ctx.load_module(image).context(|| match self.images.modules.len() {
            1 => format!("loading the kernels ({chosen})"),
            _ => format!("loading the kernels of module {} ({chosen})", module.name),
        })?;
        *slot = Some(m.clone());
        Ok(m)
    }

    /// How many blocks of `block_threads` threads of `kernel`, each with the dynamic shared
    /// memory it declares, the whole GPU holds at once (blocks per SM from the occupancy
    /// calculator, times the SM count).
    pub fn resident_blocks<K: Kernel>(&self, kernel: K, block_threads: u32) -> Result<u32> {
        self.resident_blocks_with(kernel, block_threads, K::DYNAMIC_SHARED_BYTES)
    }

    /// [`resident_blocks`](Gpu::resident_blocks) for blocks launched with `shared_bytes` of
    /// dynamic shared memory (a kernel whose block size sets its shared memory).
    pub fn resident_blocks_with<K: Kernel>(
        &self,
        kernel: K,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32> {
        let per_sm = self
            .function(kernel)?
            .occupancy_max_active_blocks_per_multiprocessor(block_threads, shared_bytes as usize, None)
            .context(|| "querying occupancy".into())?;
        let sms = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .context(|| "querying the SM count".into())?;
        Ok(per_sm.max(1) * sms.max(1) as u32)
    }

    /// The driver's CUDA version, e.g. "13.0".
    pub fn driver_version(&self) -> String {
        let mut version = 0;
        // SAFETY: writes one int; the driver library is loaded (a context exists).
        unsafe { sys::cuDriverGetVersion(&mut version) };
        format!("{}.{}", version / 1000, version % 1000 / 10)
    }

    /// Waits for all queued work; reports any launch or execution error.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().context(|| "running kernels".into())
    }
}

/// Launch shape for a 2-D grid of `width × height` cells, one thread per cell.
pub fn grid_2d(width: u32, height: u32, block: (u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (width.div_ceil(block.0), height.div_ceil(block.1), 1),
        block_dim: (block.0, block.1, 1),
        shared_mem_bytes: 0,
    }
}

/// Launch shape for `n` items, one thread per item, in blocks of `block`.
pub fn grid_1d(n: u32, block: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (n.div_ceil(block), 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// Launch shape for a 3-D grid of `nx × ny × nz` cells, one thread per cell, in blocks of
/// `block` (`dim3 grid((nx + bx - 1) / bx, ...)` in CUDA C).
pub fn grid_3d(nx: u32, ny: u32, nz: u32, block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (nx.div_ceil(block.0), ny.div_ceil(block.1), nz.div_ceil(block.2)),
        block_dim: block,
        shared_mem_bytes: 0,
    }
}

/// Launch shape of one block of `threads` threads per row of `rows` (a softmax's or a
/// reduction's rows: `kernel<<<rows, threads>>>`), with `shared_mem_bytes` of dynamic shared
/// memory a block.
pub fn block_per_row(rows: u32, threads: u32, shared_mem_bytes: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (rows, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes }
}

/// Launch shape of exactly `blocks` blocks of `threads` threads, whatever the work (a
/// grid-stride loop's, a persistent kernel's: `kernel<<<blocks, threads>>>`).
pub fn fixed_grid(blocks: u32, threads: u32) -> LaunchConfig {
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shapes_cover_their_work_as_cuda_c_writes_them() {
        let shape = |c: LaunchConfig| (c.grid_dim, c.block_dim, c.shared_mem_bytes);
        // Ceiling division on every axis: 37 cells in blocks of 8 take 5.
        assert_eq!(shape(grid_3d(37, 16, 9, (8, 8, 4))), ((5, 2, 3), (8, 8, 4), 0));
        assert_eq!(shape(grid_3d(1, 1, 1, (32, 4, 2))), ((1, 1, 1), (32, 4, 2), 0));
        assert_eq!(shape(block_per_row(1000, 256, 1024)), ((1000, 1, 1), (256, 1, 1), 1024));
        assert_eq!(shape(fixed_grid(132, 512)), ((132, 1, 1), (512, 1, 1), 0));
        assert_eq!(shape(grid_1d(1025, 256)), ((5, 1, 1), (256, 1, 1), 0));
        assert_eq!(shape(grid_2d(33, 8, (32, 8))), ((2, 1, 1), (32, 8, 1), 0));
    }

    /// `?` turns cudarc's errors into this crate's (the device crate's doc example relies
    /// on it).
    #[test]
    fn driver_errors_convert_with_question_mark() {
        fn fails() -> Result<()> {
            Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE))?;
            Ok(())
        }
        // (Displaying a driver error asks the driver for its text: not on a machine without one.)
        match fails().unwrap_err() {
            Error::Driver { context, source } => {
                assert_eq!(context, "a CUDA driver call");
                assert_eq!(source.0, sys::CUresult::CUDA_ERROR_INVALID_VALUE);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn newest_cubin_of_the_same_major_version_is_chosen() {
        let archs = [90, 89, 86, 80];
        assert_eq!(select_image(&archs, 9, 0, false), KernelImage::Cubin(90));
        assert_eq!(select_image(&archs, 8, 9, false), KernelImage::Cubin(89));
        assert_eq!(select_image(&archs, 8, 7, false), KernelImage::Cubin(86));
        assert_eq!(select_image(&archs, 8, 0, false), KernelImage::Cubin(80));
        assert_eq!(select_image(&archs, 7, 5, false), KernelImage::Ptx);
        assert_eq!(select_image(&archs, 10, 0, false), KernelImage::Ptx);
        assert_eq!(select_image(&archs, 9, 0, true), KernelImage::Ptx);
        assert_eq!(select_image(&[], 9, 0, false), KernelImage::Ptx);
    }

    #[test]
    fn a_module_for_a_newer_gpu_picks_its_own_image_and_loads_only_there() {
        const NO_CUBIN: &[u8] = &[];
        let sm90 = KernelModule { name: "h", ptx: "", cubins: &[(90, NO_CUBIN)], kernels: &[], requires: 90 };
        let ptx_only = KernelModule { cubins: &[], ..sm90 };
        let portable = KernelModule { requires: 0, ..sm90 };
        // An H100 whose set runs from the sm_80 cubins (RUST_GPU_SIM_CUBINS=sm_80): its own sm_90.
        assert_eq!(module_image(&sm90, KernelImage::Ptx, (9, 0), false), KernelImage::Cubin(90));
        assert_eq!(module_image(&sm90, KernelImage::Cubin(90), (9, 0), true), KernelImage::Ptx);
        assert_eq!(module_image(&ptx_only, KernelImage::Cubin(90), (9, 0), false), KernelImage::Ptx);
        // A newer major version runs the PTX; the set's modules follow the set.
        assert_eq!(module_image(&sm90, KernelImage::Ptx, (10, 0), false), KernelImage::Ptx);
        assert_eq!(module_image(&portable, KernelImage::Cubin(80), (9, 0), false), KernelImage::Cubin(80));
    }

    #[test]
    fn a_module_for_a_newer_gpu_is_left_out_of_the_sets_choice() {
        const CUBIN: &[u8] = &[];
        let portable = |name| KernelModule {
            name,
            ptx: "",
            cubins: &[(90, CUBIN), (80, CUBIN)],
            kernels: &[],
            requires: 0,
        };
        let hopper =
            KernelModule { name: "hopper", ptx: "", cubins: &[(90, CUBIN)], kernels: &[], requires: 90 };
        let modules: &'static [KernelModule] = Box::leak(Box::new([portable("a"), hopper, portable("b")]));
        let images = KernelImages { modules, kernels: &[] };
        // The sm_90-only module does not take sm_80 out of the set's choice.
        assert_eq!(images.cubin_archs(), [90, 80]);
        assert!(hopper.runs_on(9, 0) && hopper.runs_on(10, 0));
        assert!(!hopper.runs_on(8, 9));
        assert!(portable("a").runs_on(7, 0));
    }
}
