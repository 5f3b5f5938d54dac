//! Launches in thread-block clusters (sm_90+): `cuLaunchKernelEx` with a cluster shape, CUDA
//! C's `cudaLaunchKernelEx` with `cudaLaunchAttributeClusterDimension` (or `__cluster_dims__`).
//! The kernel side is `ptxkit_device::cluster`.

use crate::launch::check_shape;
use crate::{Context as _, Error, Gpu, Kernel, KernelArgs, Result, StagedArgs as _, launch::RawParams};
use cudarc::driver::{CudaStream, LaunchConfig, sys};

/// The most blocks in a cluster that every GPU with clusters allows (the "portable" size;
/// an H100 allows 16 with an opt-in this crate does not make).
pub const MAX_PORTABLE_CLUSTER_BLOCKS: u32 = 8;

/// Refuses a cluster shape that does not tile `grid_dim` or is larger than
/// [`MAX_PORTABLE_CLUSTER_BLOCKS`], or a GPU older than sm_90 (`major`), with a message naming
/// `kernel`. A pure function of its arguments; [`Gpu::launch_cluster`] calls it.
pub fn check_cluster(
    kernel: &str,
    grid_dim: (u32, u32, u32),
    cluster: (u32, u32, u32),
    major: i32,
) -> Result<()> {
    if major < 9 {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: thread-block clusters need a GPU of compute capability 9.0 or later (Hopper); this one is {major}.x"
        )));
    }
    let blocks = u64::from(cluster.0) * u64::from(cluster.1) * u64::from(cluster.2);
    if blocks == 0 || blocks > u64::from(MAX_PORTABLE_CLUSTER_BLOCKS) {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: a cluster of {cluster:?} blocks has {blocks}; a cluster has 1 to {MAX_PORTABLE_CLUSTER_BLOCKS} blocks"
        )));
    }
    let tiles = [(grid_dim.0, cluster.0), (grid_dim.1, cluster.1), (grid_dim.2, cluster.2)]
        .iter()
        .all(|&(grid, cluster)| grid % cluster == 0);
    if !tiles {
        return Err(Error::InvalidLaunch(format!(
            "{kernel}: the grid {grid_dim:?} is not a whole number of clusters {cluster:?} in every dimension"
        )));
    }
    Ok(())
}

impl Gpu {
    /// Launches `kernel` on the GPU's stream in clusters of `cluster` blocks (x, y, z), so
    /// that the blocks of a cluster run at once and may use `ptxkit_device::cluster`
    /// (`cluster::sync`, another block's shared memory). Typed like [`Gpu::launch`]. Refused
    /// with [`Error::InvalidLaunch`] before launching on a GPU before sm_90, for a cluster of
    /// more than [`MAX_PORTABLE_CLUSTER_BLOCKS`] blocks, or a grid that is not a whole number
    /// of clusters ([`check_cluster`]).
    pub fn launch_cluster<K: Kernel>(
        &self,
        kernel: K,
        cfg: LaunchConfig,
        cluster: (u32, u32, u32),
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        self.launch_cluster_on(self.stream(), kernel, cfg, cluster, args)
    }

    /// [`Gpu::launch_cluster`] on another stream of this GPU.
    pub fn launch_cluster_on<K: Kernel>(
        &self,
        stream: &CudaStream,
        kernel: K,
        mut cfg: LaunchConfig,
        cluster: (u32, u32, u32),
        mut args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        let name = K::NAME;
        self.check_stream(stream, name)?;
        check_shape::<K>(&cfg)?;
        let major = self
            .ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .context(|| "querying the compute capability".into())?;
        check_cluster(name, cfg.grid_dim, cluster, major)?;
        cfg.shared_mem_bytes = cfg.shared_mem_bytes.max(K::DYNAMIC_SHARED_BYTES);
        let function = self.function(kernel)?;
        let mut staged = args.stage(stream, name, &cfg)?;
        let mut params = RawParams::new();
        staged.push_all(&mut params);
        // SAFETY: a C struct of an id and a union of plain values, for which zeros are valid.
        let mut attribute: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attribute.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attribute.value.clusterDim.x = cluster.0;
        attribute.value.clusterDim.y = cluster.1;
        attribute.value.clusterDim.z = cluster.2;
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
        // SAFETY: as for `Gpu::launch`: the arguments' types match the kernel's parameters
        // (`KernelArgs`, checked at compile time), the block respects the launch bounds, the
        // dynamic shared memory is at least what the kernel declares; `params` points to the
        // staged values, alive until after the call; `attribute` outlives the call; the
        // cluster shape tiles the grid (checked above). Buffer lengths against the grid are
        // each raw-pointer kernel's launcher's contract.
        unsafe {
            sys::cuLaunchKernelEx(&config, function.cu_function(), params.as_mut_ptr(), std::ptr::null_mut())
                .result()
        }
        .context(|| format!("launching {name} in clusters of {cluster:?}"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_must_tile_the_grid_fit_the_portable_size_and_have_a_hopper() {
        assert!(check_cluster("k", (8, 2, 1), (4, 1, 1), 9).is_ok());
        assert!(check_cluster("k", (8, 2, 1), (2, 2, 1), 9).is_ok());
        let message = |r: Result<()>| r.unwrap_err().to_string();
        assert!(
            message(check_cluster("k", (6, 1, 1), (4, 1, 1), 9)).contains("not a whole number of clusters")
        );
        assert!(message(check_cluster("k", (16, 1, 1), (16, 1, 1), 9)).contains("1 to 8 blocks"));
        assert!(message(check_cluster("k", (4, 1, 1), (0, 1, 1), 9)).contains("1 to 8 blocks"));
        assert!(message(check_cluster("k", (4, 1, 1), (2, 1, 1), 8)).contains("compute capability 9.0"));
    }
}
