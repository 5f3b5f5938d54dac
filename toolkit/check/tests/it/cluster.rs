//! Clusters, distributed shared memory and `mbarrier` phases (the Hopper module, sm_90): the
//! instructions each kernel promises (CI), and on an sm_90 GPU the values of every cluster
//! register, a ring of `st.async` stores counted on the receivers' barriers, and remote atomics,
//! loads and stores, each for odd block shapes (3-D, partial warps, one thread, 1024 threads)
//! and cluster shapes of 2 to 8 blocks along every axis.

use std::collections::HashMap;
use std::sync::Arc;

use ptxkit_check::{HOPPER_KERNELS, KERNELS};
use ptxkit_check_kernels::cluster as k;
use ptxkit_host::{
    Gpu,
    cudarc::driver::{CudaSlice, LaunchConfig},
};

use crate::common;

/// The Hopper module's PTX.
fn hopper_ptx() -> &'static str {
    HOPPER_KERNELS.modules[0].ptx
}

#[track_caller]
fn assert_hopper_emits(name: &str, needles: &[&str]) {
    common::assert_emits_in(hopper_ptx(), name, needles);
}

#[test]
fn hopper_module_targets_sm_90_with_isa_8_1_and_holds_the_cluster_kernels() {
    let ptx = hopper_ptx();
    assert!(ptx.contains(".target sm_90"), "{}", &ptx[..ptx.len().min(400)]);
    let version = ptx.lines().find(|l| l.starts_with(".version")).expect("a .version line");
    let (major, minor) = version[".version".len()..].trim().split_once('.').expect("major.minor");
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    assert!((major, minor) >= (8, 1), "st.async needs PTX ISA 8.1: {version}");
    for name in ["cluster_registers", "cluster_ring_async", "cluster_remote_counts"] {
        assert!(ptx.contains(&format!(".entry {name}(")), "{name} in the Hopper module");
        assert!(!common::ptx().contains(&format!(".entry {name}(")), "{name} not in the classic module");
    }
    // Every entry of the classic module stays out of the Hopper one.
    let classic: Vec<&str> =
        common::ptx().split(".entry ").skip(1).filter_map(|rest| rest.split('(').next()).collect();
    assert!(classic.len() > 50, "{} classic entries", classic.len());
    for name in classic {
        assert!(!ptx.contains(&format!(".entry {name}(")), "classic kernel {name} in the Hopper module");
    }
    assert_eq!((KERNELS.modules.len(), HOPPER_KERNELS.modules.len()), (1, 1));
}

// The counters kernel holds one counter per block of a cluster: as many as the largest
// portable cluster.
const _: () = assert!(k::REMOTE_COUNTERS >= ptxkit_host::MAX_PORTABLE_CLUSTER_BLOCKS);

#[test]
fn cluster_kernels_emit_their_instructions() {
    assert_hopper_emits(
        "cluster_registers",
        &[
            "%cluster_ctarank",
            "%cluster_nctarank",
            "%clusterid.x",
            "%clusterid.y",
            "%clusterid.z",
            "%cluster_ctaid.x",
            "%cluster_ctaid.y",
            "%cluster_ctaid.z",
            "%cluster_nctaid.x",
            "%cluster_nctaid.y",
            "%cluster_nctaid.z",
        ],
    );
    assert_hopper_emits(
        "cluster_ring_async",
        &[
            "mbarrier.init.shared.b64",
            "fence.mbarrier_init.release.cluster;",
            "mapa.shared::cluster.u32",
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32",
            "mbarrier.arrive.expect_tx.shared::cta.b64",
            "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
            "barrier.cluster.arrive.release;",
            "barrier.cluster.wait.acquire;",
        ],
    );
    assert_hopper_emits(
        "cluster_remote_counts",
        &[
            "atom.shared::cluster.add.u32",
            "st.shared::cluster.b32",
            "ld.shared::cluster.b32",
            "mapa.shared::cluster.u32",
        ],
    );
}

#[test]
fn hopper_module_assembles_for_sm_90() {
    common::assemble(hopper_ptx(), "sm_90");
}

// -------------------------------------------------------------------------------------------
// GPU
// -------------------------------------------------------------------------------------------

/// GPU 0 with the Hopper check kernels (an sm_90 GPU).
fn hopper_gpu() -> Arc<Gpu> {
    Gpu::open(0, &HOPPER_KERNELS)
        .expect("the Hopper module needs an sm_90 or newer GPU (on older ones run with --skip cluster::)")
}

/// Block shapes: 3-D and odd, partial warps, one thread, a whole warp, the largest block.
const BLOCKS: [(u32, u32, u32); 6] = [(7, 5, 3), (1, 1, 1), (33, 2, 1), (32, 1, 1), (5, 1, 9), (1024, 1, 1)];

/// Cluster shapes of 2 to 8 blocks along each axis and across them (at most 8: portable).
const CLUSTERS: [(u32, u32, u32); 7] =
    [(2, 1, 1), (1, 3, 1), (1, 1, 2), (2, 2, 2), (8, 1, 1), (3, 2, 1), (1, 2, 4)];

/// A grid of `clusters` clusters along each axis of the cluster shape `cluster`.
fn grid_of(cluster: (u32, u32, u32), clusters: (u32, u32, u32)) -> (u32, u32, u32) {
    (cluster.0 * clusters.0, cluster.1 * clusters.1, cluster.2 * clusters.2)
}

fn volume((x, y, z): (u32, u32, u32)) -> u32 {
    x * y * z
}

/// The rank of the block at `(x, y, z)` in its cluster of shape `c`: x fastest.
fn rank_of((x, y, z): (u32, u32, u32), c: (u32, u32, u32)) -> u32 {
    (x % c.0) + c.0 * ((y % c.1) + c.1 * (z % c.2))
}

/// The blocks of a grid in launch order (x fastest), as `block_linear` numbers them.
fn blocks_of(grid: (u32, u32, u32)) -> impl Iterator<Item = (u32, u32, u32)> {
    (0..grid.2).flat_map(move |z| (0..grid.1).flat_map(move |y| (0..grid.0).map(move |x| (x, y, z))))
}

/// The cluster holding the block at `(x, y, z)`: its index in the grid of clusters.
fn cluster_of((x, y, z): (u32, u32, u32), c: (u32, u32, u32)) -> (u32, u32, u32) {
    (x / c.0, y / c.1, z / c.2)
}

fn launch_config(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 }
}

fn download(gpu: &Gpu, slice: &CudaSlice<u32>) -> Vec<u32> {
    gpu.stream().clone_dtoh(slice).unwrap()
}

/// A seed that differs from run to run (printed by every failing assertion).
fn fresh_seed() -> u32 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    nanos ^ std::process::id().rotate_left(16)
}

/// Every thread of every block reads the cluster registers of its block: rank and count x
/// fastest, the cluster's index in the grid of clusters, the block's index in its cluster and
/// the cluster's shape, for every block and cluster shape (two or three clusters along each
/// axis, so that no index is trivially 0).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_registers_every_shape() {
    let gpu = hopper_gpu();
    let per_thread = k::CLUSTER_REGISTERS as usize;
    for cluster in CLUSTERS {
        for block in BLOCKS {
            let clusters = (3, 2, 2);
            let grid = grid_of(cluster, clusters);
            let threads = volume(block) as usize;
            let mut out =
                gpu.stream().alloc_zeros::<u32>(volume(grid) as usize * threads * per_thread).unwrap();
            gpu.launch_cluster(k::cluster_registers, launch_config(grid, block), cluster, (&mut out,))
                .unwrap();
            let got = download(&gpu, &out);
            for (b, (x, y, z)) in blocks_of(grid).enumerate() {
                let want = [
                    rank_of((x, y, z), cluster),
                    volume(cluster),
                    x / cluster.0,
                    y / cluster.1,
                    z / cluster.2,
                    x % cluster.0,
                    y % cluster.1,
                    z % cluster.2,
                    cluster.0,
                    cluster.1,
                    cluster.2,
                ];
                for t in 0..threads {
                    let row = (b * threads + t) * per_thread;
                    assert_eq!(
                        got[row..row + per_thread],
                        want,
                        "cluster {cluster:?}, block {block:?}, block ({x}, {y}, {z}), thread {t}"
                    );
                }
            }
        }
    }
}

/// What [`k::cluster_ring_async`] leaves in `y`: each round every block's values move to the
/// next block by rank in its cluster, where [`k::ring_next`] of them is kept.
fn ring_on_cpu(
    x: &[u32],
    grid: (u32, u32, u32),
    threads: u32,
    cluster: (u32, u32, u32),
    rounds: u32,
) -> Vec<u32> {
    let c = cluster;
    // The launch-order index of the block of rank `rank` in the cluster of the block at `p`.
    let block_of_rank = |(x, y, z): (u32, u32, u32), rank: u32| {
        let (bx, by, bz) =
            (x - x % c.0 + rank % c.0, y - y % c.1 + (rank / c.0) % c.1, z - z % c.2 + rank / (c.0 * c.1));
        (bx + grid.0 * (by + grid.1 * bz)) as usize
    };
    let mut values = x.to_vec();
    let t = threads as usize;
    for round in 0..rounds {
        let before = values.clone();
        for (b, position) in blocks_of(grid).enumerate() {
            let rank = rank_of(position, c);
            let previous = block_of_rank(position, (rank + volume(c) - 1) % volume(c));
            for i in 0..t {
                values[b * t + i] = k::ring_next(before[previous * t + i], rank, round);
            }
        }
    }
    values
}

/// The ring through each cluster by `st.async` (each round's bytes counted on the receiving
/// block's `mbarrier`, its thread 0 expecting `4 · threads`, every thread waiting for the
/// round's parity): the CPU's values for every block and cluster shape, from no round to 66
/// (each barrier through 33 phases), on fresh random values; then more clusters than run at
/// once (`Gpu::resident_clusters` counts them for an odd block).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_ring_async_odd_shapes() {
    let (gpu, seed) = (hopper_gpu(), fresh_seed());
    let mut case = 0;
    for cluster in CLUSTERS {
        for block in BLOCKS {
            let rounds = [0, 1, 2, 5, 66][case % 5];
            case += 1;
            let grid = grid_of(cluster, (2, 1, 3));
            let threads = volume(block);
            let n = volume(grid) * threads;
            let x: Vec<u32> = (0..n).map(|i| common::mix(i, seed)).collect();
            let d_x = gpu.stream().clone_htod(&x).unwrap();
            let mut y = gpu.stream().alloc_zeros::<u32>(n as usize).unwrap();
            gpu.launch_cluster(
                k::cluster_ring_async,
                launch_config(grid, block),
                cluster,
                (&d_x, &mut y, rounds),
            )
            .unwrap();
            assert_eq!(
                download(&gpu, &y),
                ring_on_cpu(&x, grid, threads, cluster, rounds),
                "seed {seed:#x}, cluster {cluster:?}, block {block:?}, {rounds} rounds"
            );
        }
    }
    // More clusters of 8 blocks of 105 threads than the GPU runs at once.
    let (block, cluster) = ((7, 5, 3), (8, 1, 1));
    let resident = gpu.resident_clusters(k::cluster_ring_async, volume(block), cluster).unwrap();
    assert!(
        resident >= 1,
        "Gpu::resident_clusters: {resident} clusters of {cluster:?} blocks of {block:?} threads"
    );
    let grid = grid_of(cluster, (2 * resident + 3, 1, 1));
    let n = volume(grid) * volume(block);
    let x: Vec<u32> = (0..n).map(|i| common::mix(i, !seed)).collect();
    let d_x = gpu.stream().clone_htod(&x).unwrap();
    let mut y = gpu.stream().alloc_zeros::<u32>(n as usize).unwrap();
    gpu.launch_cluster(k::cluster_ring_async, launch_config(grid, block), cluster, (&d_x, &mut y, 9))
        .unwrap();
    assert_eq!(
        download(&gpu, &y),
        ring_on_cpu(&x, grid, volume(block), cluster, 9),
        "seed {seed:#x}, {} clusters ({resident} at once)",
        grid.0 / cluster.0
    );
}

/// Remote atomics, stores and loads: every block's counters, mirror and its next block's
/// counters as the cluster's adds, stores and loads leave them, and the values the adds
/// returned, for every block and cluster shape (a block of one thread takes the eight counters
/// in turn).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cluster_remote_counts_every_shape() {
    let gpu = hopper_gpu();
    let counters = k::REMOTE_COUNTERS as usize;
    for cluster in CLUSTERS {
        for block in BLOCKS {
            let grid = grid_of(cluster, (2, 2, 1));
            let (blocks, threads) = (volume(cluster), volume(block));
            // What the block of rank `from` adds to counter `from` of the block of rank `to`.
            let added = |from: u32, to: u32| -> u32 {
                (0..threads).filter(|t| (t + from) % blocks == to).map(|t| t + 1).sum()
            };
            let mut out = gpu.stream().alloc_zeros::<u32>(volume(grid) as usize * 3 * counters).unwrap();
            let mut returned = gpu.stream().alloc_zeros::<u32>((volume(grid) * threads) as usize).unwrap();
            let cfg = launch_config(grid, block);
            gpu.launch_cluster(k::cluster_remote_counts, cfg, cluster, (&mut out, &mut returned)).unwrap();
            let got = download(&gpu, &out);
            let returned = download(&gpu, &returned);
            // The values `fetch_add` returned to the adds of one counter, taken in their order,
            // are the running sums of those adds: 0 first, each the last one plus its add.
            let mut adds: HashMap<_, Vec<(u32, u32)>> = HashMap::new();
            for (b, position) in blocks_of(grid).enumerate() {
                let (from, which) = (rank_of(position, cluster), cluster_of(position, cluster));
                for t in 0..threads {
                    let old = returned[b * threads as usize + t as usize];
                    adds.entry((which, (t + from) % blocks, from)).or_default().push((old, t + 1));
                }
            }
            for ((which, to, from), mut list) in adds {
                list.sort_unstable();
                let mut sum = 0;
                for (old, add) in list {
                    assert_eq!(
                        old, sum,
                        "cluster {cluster:?} #{which:?}, block {block:?}: an add to counter {from} of rank {to} returned {old}"
                    );
                    sum += add;
                }
                assert_eq!(sum, added(from, to), "cluster {cluster:?}, block {block:?}, {from} -> {to}");
            }
            for (b, position) in blocks_of(grid).enumerate() {
                let rank = rank_of(position, cluster);
                let next = (rank + 1) % blocks;
                let mut want = vec![0u32; 3 * counters];
                for from in 0..blocks {
                    want[from as usize] = added(from, rank);
                    // Block `from` stored its counter `rank` (what this block added to it).
                    want[counters + from as usize] = added(rank, from);
                    want[2 * counters + from as usize] = added(from, next);
                }
                let row = b * 3 * counters;
                assert_eq!(
                    got[row..row + 3 * counters],
                    want,
                    "cluster {cluster:?}, block {block:?}, rank {rank}"
                );
            }
        }
    }
}
