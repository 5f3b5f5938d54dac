//! Cooperative launches: every block of the grid resident on the GPU at once, so that the
//! kernel may synchronise the whole grid (`ptxkit_device::grid::sync`) between phases.

use crate::{Context as _, Error, Gpu, Kernel, KernelArgs, Result, StagedArgs as _, launch::check_shape};
use cudarc::driver::{CudaStream, LaunchConfig, sys};

/// Refuses a cooperative launch of `kernel` with `grid_dim` that the GPU cannot hold at once:
/// more blocks than `blocks_per_sm` (the occupancy calculator's blocks of this shape per SM)
/// × `sms`, or a block that fits on no SM (`blocks_per_sm` 0). Such a grid would deadlock at
/// its first grid-wide sync (the driver refuses it too, with a less telling error). A pure
/// function of its arguments; [`Gpu::launch_cooperative`] calls it with the GPU's numbers.
pub fn check_cooperative_grid(
    kernel: &str,
    grid_dim: (u32, u32, u32),
    blocks_per_sm: u32,
    sms: u32,
) -> Result<()> {
    let blocks = u128::from(grid_dim.0) * u128::from(grid_dim.1) * u128::from(grid_dim.2);
    let resident = u128::from(blocks_per_sm) * u128::from(sms);
    if blocks_per_sm == 0 {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: a cooperative launch needs every block resident at once, \
             and a block of this shape fits on no SM (too many threads, registers or shared memory)"
        )));
    }
    if blocks > resident {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: a cooperative grid of {blocks} blocks exceeds the {resident} blocks the GPU holds at once \
             ({blocks_per_sm} per SM × {sms} SMs); launch at most {resident} blocks (Gpu::resident_blocks) \
             and loop over the work in the kernel"
        )));
    }
    Ok(())
}

impl Gpu {
    /// Whether this GPU can launch cooperative kernels (every GPU since Pascal can).
    pub fn supports_cooperative_launch(&self) -> Result<bool> {
        let supported = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
            .context(|| "querying cooperative-launch support".into())?;
        Ok(supported != 0)
    }

    /// Launches `kernel` cooperatively on the GPU's stream: every block is resident at once,
    /// so the kernel may call `ptxkit_device::grid::sync` (pass it a zeroed `u32` barrier
    /// word, e.g. `stream.alloc_zeros::<u32>(1)`, as one of its parameters). Typed like
    /// [`Gpu::launch`]. Refused with [`Error::InvalidLaunch`] before launching when the GPU
    /// cannot launch cooperatively, or when the grid exceeds the blocks the GPU holds at once
    /// ([`Gpu::resident_blocks_with`] for this block and shared memory;
    /// [`check_cooperative_grid`]).
    pub fn launch_cooperative<K: Kernel>(
        &self,
        kernel: K,
        cfg: LaunchConfig,
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        self.launch_cooperative_on(self.stream(), kernel, cfg, args)
    }

    /// [`Gpu::launch_cooperative`] on another stream of this GPU.
    pub fn launch_cooperative_on<K: Kernel>(
        &self,
        stream: &CudaStream,
        kernel: K,
        mut cfg: LaunchConfig,
        mut args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        let name = K::NAME;
        self.check_stream(stream, name)?;
        check_shape::<K>(&cfg)?;
        let threads = cfg.block_dim.0 * cfg.block_dim.1 * cfg.block_dim.2;
        if !self.supports_cooperative_launch()? {
            return Err(Error::InvalidLaunch(format!(
                "{name}: {} cannot launch cooperative kernels (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)",
                self.name
            )));
        }
        cfg.shared_mem_bytes = cfg.shared_mem_bytes.max(K::DYNAMIC_SHARED_BYTES);
        let function = self.function(kernel)?;
        let blocks_per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(threads, cfg.shared_mem_bytes as usize, None)
            .context(|| format!("querying the occupancy of {name}"))?;
        let sms = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .context(|| "querying the SM count".into())?;
        check_cooperative_grid(name, cfg.grid_dim, blocks_per_sm, sms.max(0) as u32)?;
        let mut staged = args.stage(stream, name, &cfg)?;
        let mut launch = stream.launch_builder(&function);
        staged.push_all(&mut launch);
        // SAFETY: as for `Gpu::launch`: the arguments' types match the kernel's parameters
        // (`KernelArgs`, checked at compile time against `#[kernel]`'s parameter list), the
        // block respects the launch bounds and the dynamic shared memory is at least what the
        // kernel declares; a safe kernel's outputs got a launch of the dimensions they allow
        // (`stage`); the grid fits on the GPU at once (checked above). Buffer lengths against
        // the grid are each raw-pointer kernel's launcher's contract.
        unsafe { launch.launch_cooperative(cfg) }.context(|| format!("launching {name} cooperatively"))?;
        Ok(())
    }
}
