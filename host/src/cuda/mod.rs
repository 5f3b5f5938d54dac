//! CUDA plumbing, in one place: opening the GPU, loading the embedded PTX, looking kernels up
//! by name, and launch shapes. Simulations ask [`Gpu::kernel`] for a launchable function and
//! never see module handles or driver calls.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use cudarc::{
    driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, LaunchConfig, sys},
    nvrtc::Ptx,
};

use crate::error::{CudaContext as _, Error, Result};

/// The PTX of the `kernels` crate, compiled by `build.rs` for `sm_70` (JIT-compiled by the
/// driver on any GPU from Volta on).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

/// Every kernel entry point in [`PTX`], by name. The host launches nothing else.
pub const KERNEL_NAMES: &[&str] = &[
    "gray_scott_laplacian",
    "gray_scott_update",
    "gray_scott_fused",
    "gray_scott_tiled",
    "gray_scott_temporal",
    "field_min_max",
    "colormap_levels",
    "heat_laplacian",
    "heat_stage_naive",
    "heat_stage_reuse",
    "heat_rk4_update",
    "heat_poly_update",
    "heat_laplacian_tiled",
    "heat_poly_update_tiled",
    "heat_rk4_single",
    "physarum_offsets",
    "physarum_sample",
    "physarum_argmax",
    "physarum_steer",
    "physarum_move",
    "physarum_deposit",
    "physarum_blur",
    "physarum_blend",
    "physarum_decay",
    "physarum_sense_move",
    "physarum_diffuse_decay",
    "physarum_agents",
    "physarum_trail",
    "physarum_distance",
    "physarum_bin_count",
    "physarum_bin_scan",
    "physarum_bin_scatter",
];

/// An open GPU: context, stream, the kernel module (loaded on first use), and a cache of
/// function handles.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Mutex<Option<Arc<CudaModule>>>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    name: String,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Gpu {
    /// Opens GPU 0. Fails with [`Error::NoGpu`] when there is no driver or no device, without
    /// touching the driver when its library is absent.
    pub fn open() -> Result<Arc<Self>> {
        // SAFETY: only tries to dlopen the driver library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoGpu("the CUDA driver library (libcuda.so) was not found".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| Error::NoGpu(format!("{e}")))?;
        let name = ctx.name().context(|| "reading the GPU's name".into())?;
        // Streams are ordered explicitly with events (frame copies); cudarc's per-buffer event
        // tracking would add work to every launch and cannot be captured into graphs.
        // SAFETY: no stream or buffer exists yet.
        unsafe { ctx.disable_event_tracking() };
        // A stream of our own: the legacy default stream cannot be captured into a graph.
        let stream = ctx.new_stream().context(|| "creating a stream".into())?;
        Ok(Arc::new(Self {
            ctx,
            stream,
            module: Mutex::new(None),
            functions: Mutex::new(HashMap::new()),
            name,
        }))
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The stream all work is queued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Free and total device memory, in bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self.ctx.mem_get_info().context(|| "querying device memory".into())?;
        Ok((free as u64, total as u64))
    }

    /// A launchable handle for the kernel `name` (one of [`KERNEL_NAMES`]). The module is
    /// loaded (JIT-compiled) the first time any kernel is asked for.
    pub fn kernel(&self, name: &'static str) -> Result<CudaFunction> {
        debug_assert!(KERNEL_NAMES.contains(&name), "unknown kernel {name}");
        let mut functions = self.functions.lock().expect("kernel cache lock");
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let module = {
            let mut slot = self.module.lock().expect("module lock");
            match &*slot {
                Some(m) => m.clone(),
                None => {
                    let m = self
                        .ctx
                        .load_module(Ptx::from_src(PTX))
                        .context(|| "loading the kernels' PTX".into())?;
                    *slot = Some(m.clone());
                    m
                }
            }
        };
        let f = module.load_function(name).context(|| format!("looking up kernel {name}"))?;
        functions.insert(name, f.clone());
        Ok(f)
    }

    /// How many blocks of `block_threads` threads of `kernel`, each with `dynamic_shared`
    /// bytes of dynamic shared memory, the whole GPU holds at once (blocks per SM from the
    /// occupancy calculator, times the SM count).
    pub fn resident_blocks(
        &self,
        kernel: &CudaFunction,
        block_threads: u32,
        dynamic_shared: u32,
    ) -> Result<u32> {
        let per_sm = kernel
            .occupancy_max_active_blocks_per_multiprocessor(block_threads, dynamic_shared as usize, None)
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

/// Times GPU work with a pair of device events on the GPU's stream.
pub struct Timer<'a> {
    gpu: &'a Gpu,
    start: CudaEvent,
}

impl<'a> Timer<'a> {
    /// Records the start event.
    pub fn start(gpu: &'a Gpu) -> Result<Self> {
        let start = gpu
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .context(|| "creating an event".into())?;
        start.record(&gpu.stream).context(|| "recording an event".into())?;
        Ok(Self { gpu, start })
    }

    /// Records the end event, waits for it, and returns the milliseconds between the two.
    pub fn stop(self) -> Result<f32> {
        let end = self
            .gpu
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .context(|| "creating an event".into())?;
        end.record(&self.gpu.stream).context(|| "recording an event".into())?;
        end.synchronize().context(|| "waiting for timed work".into())?;
        self.start.elapsed_ms(&end).context(|| "reading an event timer".into())
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
