//! Launches in thread-block clusters (sm_90+): `cuLaunchKernelEx` with a cluster shape, CUDA
//! C's `cudaLaunchKernelEx` with `cudaLaunchAttributeClusterDimension` (or `__cluster_dims__`).
//! The kernel side is `ptxkit_device::cluster`.

use crate::launch::check_shape;
use crate::launch_ex::{check_hopper, launch_attribute};
use crate::{Context as _, Error, Gpu, Kernel, KernelArgs, Result};
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
    check_hopper(kernel, "thread-block clusters", major)?;
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

    /// How many clusters of `cluster` blocks of `block_threads` threads of `kernel` (each
    /// with the dynamic shared memory it declares) the whole GPU runs at once
    /// (`cuOccupancyMaxActiveClusters`; CUDA C's `cudaOccupancyMaxActiveClusters`): what a
    /// persistent grid of clusters is sized by; 0 where not even one cluster fits. Refused as
    /// [`Gpu::launch_cluster`] refuses (the cluster's shape, and blocks of `block_threads`
    /// threads against the kernel's block-shape contract).
    pub fn resident_clusters<K: Kernel>(
        &self,
        kernel: K,
        block_threads: u32,
        cluster: (u32, u32, u32),
    ) -> Result<u32> {
        check_cluster(K::NAME, cluster, cluster, self.compute_capability_major())?;
        check_shape::<K>(&LaunchConfig {
            grid_dim: cluster,
            block_dim: (block_threads, 1, 1),
            shared_mem_bytes: 0,
        })?;
        let function = self.function(kernel)?;
        let mut attribute = launch_attribute(sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        attribute.value.clusterDim.x = cluster.0;
        attribute.value.clusterDim.y = cluster.1;
        attribute.value.clusterDim.z = cluster.2;
        let config = sys::CUlaunchConfig {
            gridDimX: cluster.0,
            gridDimY: cluster.1,
            gridDimZ: cluster.2,
            blockDimX: block_threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: K::DYNAMIC_SHARED_BYTES,
            hStream: std::ptr::null_mut(),
            attrs: &mut attribute,
            numAttrs: 1,
        };
        let mut count = 0i32;
        self.ctx.bind_to_thread().context(|| "binding the GPU's context".into())?;
        // SAFETY: writes one int; `config` and its attribute outlive the call; the function
        // belongs to this GPU's context, bound to this thread.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut count, function.cu_function(), &config).result() }
            .context(|| {
                format!("querying how many clusters of {cluster:?} blocks of {} run at once", K::NAME)
            })?;
        Ok(count.max(0) as u32)
    }

    /// [`Gpu::launch_cluster`] on another stream of this GPU.
    pub fn launch_cluster_on<K: Kernel>(
        &self,
        stream: &CudaStream,
        kernel: K,
        cfg: LaunchConfig,
        cluster: (u32, u32, u32),
        args: impl KernelArgs<K::Params>,
    ) -> Result<()> {
        check_cluster(K::NAME, cfg.grid_dim, cluster, self.compute_capability_major())?;
        let mut attribute = launch_attribute(sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);
        attribute.value.clusterDim.x = cluster.0;
        attribute.value.clusterDim.y = cluster.1;
        attribute.value.clusterDim.z = cluster.2;
        let what = format!("in clusters of {cluster:?}");
        // SAFETY: a cluster shape asks nothing of the kernel that the launch does not check:
        // it tiles the grid and fits the portable size (checked above).
        unsafe { self.launch_with_attribute(stream, kernel, cfg, args, attribute, &what) }
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
