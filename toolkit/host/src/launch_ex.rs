//! Typed launches through `cuLaunchKernelEx` with launch attributes (CUDA C's
//! `cudaLaunchKernelEx`): thread-block clusters ([`Gpu::launch_cluster`]) and programmatic
//! dependent launch ([`Gpu::launch_programmatic`]) share this one path.

use crate::launch::{LAST_LAUNCHED, RawParams, check_shape};
use crate::{Context as _, Error, Gpu, Kernel, KernelArgs, Result, StagedArgs as _};
use cudarc::driver::{CudaStream, LaunchConfig, sys};

/// A launch attribute `id` with a zeroed value, for the caller to fill in.
pub(crate) fn launch_attribute(id: sys::CUlaunchAttributeID) -> sys::CUlaunchAttribute {
    // SAFETY: a C struct of an id and a union of plain values, for which zeros are valid.
    let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attribute.id = id;
    attribute
}

/// Refuses a GPU older than sm_90 (compute capability `major`) for `feature` of `kernel`.
pub(crate) fn check_hopper(kernel: &str, feature: &str, major: i32) -> Result<()> {
    if major < 9 {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: {feature} need a GPU of compute capability 9.0 or later (Hopper); this one is {major}.x"
        )));
    }
    Ok(())
}

impl Gpu {
    /// The GPU's compute capability's major number.
    pub(crate) fn compute_capability_major(&self) -> i32 {
        self.compute_capability().0 as i32
    }

    /// Launches `kernel` on `stream` with `attribute` (`what` names it in an error), checked
    /// as [`Gpu::launch_on`] checks its launches; the attribute is the caller's to check.
    ///
    /// # Safety
    /// What the attribute asks of the kernel holds (for programmatic dependence: see
    /// [`Gpu::launch_programmatic_on`]).
    pub(crate) unsafe fn launch_with_attribute<K: Kernel>(
        &self,
        stream: &CudaStream,
        kernel: K,
        mut cfg: LaunchConfig,
        mut args: impl KernelArgs<K::Params>,
        mut attribute: sys::CUlaunchAttribute,
        what: &str,
    ) -> Result<()> {
        let name = K::NAME;
        self.check_stream(stream, name)?;
        check_shape::<K>(&cfg)?;
        cfg.shared_mem_bytes = cfg.shared_mem_bytes.max(K::DYNAMIC_SHARED_BYTES);
        let function = self.function(kernel)?;
        let mut staged = args.stage(stream, name, &cfg)?;
        let mut params = RawParams::new();
        staged.push_all(&mut params);
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: stream.cu_stream(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        self.ctx.bind_to_thread().context(|| "binding the GPU's context".into())?;
        *LAST_LAUNCHED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(name);
        // SAFETY: as for `Gpu::launch_on`: the arguments' types match the kernel's parameters
        // (`KernelArgs`, checked at compile time), the block respects the launch bounds, the
        // dynamic shared memory is at least what the kernel declares; `params` points to the
        // staged values, alive until after the call; `attribute` outlives the call, and what
        // it asks of the kernel is the caller's contract. Buffer lengths against the grid are
        // each raw-pointer kernel's launcher's contract.
        unsafe {
            sys::cuLaunchKernelEx(&config, function.cu_function(), params.as_mut_ptr(), std::ptr::null_mut())
                .result()
        }
        .context(|| format!("launching {name} {what}"))?;
        Ok(())
    }

    /// Launches `kernel` on the GPU's stream so that it may start while the kernel before it
    /// on the stream is still running (programmatic dependent launch, sm_90+: CUDA C's
    /// `cudaLaunchKernelEx` with `cudaLaunchAttributeProgrammaticStreamSerialization`; in a
    /// captured graph, a programmatic edge). Its blocks start as soon as every block of the
    /// kernel before has called `ptxkit_device::grid::trigger_dependent_launch` or exited,
    /// and run up to their `grid::dependency_synchronize`, which waits for that kernel's end
    /// and its memory: what comes before overlaps it. Typed like [`Gpu::launch`]; refused with
    /// [`Error::InvalidLaunch`] before sm_90.
    ///
    /// # Safety
    /// The kernel calls `ptxkit_device::grid::dependency_synchronize()` (every thread that
    /// touches such memory, on every path) before it reads any memory that a kernel before it
    /// on the stream writes, and before it writes any memory that such a kernel reads or
    /// writes: otherwise it races with that kernel. (A kernel with no such accesses needs no
    /// wait.)
    pub unsafe fn launch_programmatic<K: Kernel>(
        &self,
        kernel: K,
        cfg: LaunchConfig,
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        // SAFETY: the caller's contract, the same.
        unsafe { self.launch_programmatic_on(self.stream(), kernel, cfg, args) }
    }

    /// [`Gpu::launch_programmatic`] on another stream of this GPU.
    ///
    /// # Safety
    /// As for [`Gpu::launch_programmatic`].
    pub unsafe fn launch_programmatic_on<K: Kernel>(
        &self,
        stream: &CudaStream,
        kernel: K,
        cfg: LaunchConfig,
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        check_hopper(K::NAME, "programmatic dependent launches", self.compute_capability_major())?;
        let mut attribute =
            launch_attribute(sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
        attribute.value.programmaticStreamSerializationAllowed = 1;
        let what = "with programmatic dependence";
        // SAFETY: the kernel waits where the attribute requires it (the caller's contract).
        unsafe { self.launch_with_attribute(stream, kernel, cfg, args, attribute, what) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopper_features_are_refused_before_sm_90_in_words() {
        assert!(check_hopper("k", "clusters", 9).is_ok());
        assert!(check_hopper("k", "clusters", 10).is_ok());
        let refused = check_hopper("k", "programmatic dependent launches", 8).unwrap_err().to_string();
        assert!(
            refused.contains("k: programmatic dependent launches need a GPU of compute capability 9.0"),
            "{refused}"
        );
        assert!(refused.contains("this one is 8.x"), "{refused}");
    }
}
