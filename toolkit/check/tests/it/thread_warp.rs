//! Checks: thread geometry, warp, block, fence and grid intrinsics (`ptxkit_device::{thread,
//! warp, block, fence, grid}`). PTX tests look for each intrinsic's instruction in its check
//! kernel; the GPU tests run the kernels on odd shapes (16×16 and 7×5×3 blocks, 100-thread
//! blocks whose last warp has 4 lanes) and compare with a model of the hardware on the host.

use crate::common;
use ptxkit_check_kernels::thread_warp::{self as kernels, ShuffleSample};
use ptxkit_host::cudarc::driver::{DeviceRepr, LaunchConfig, ValidAsZeroBits};
use ptxkit_host::{Gpu, Kernel};
use std::fmt::Debug;

// ---------------------------------------------------------------------------------------------
// PTX: each intrinsic's instruction is in its kernel.

#[test]
fn ptx_thread_geometry_reads_every_special_register() {
    common::assert_emits(
        "check_thread_geometry",
        &[
            "%tid.x",
            "%tid.y",
            "%tid.z",
            "%ctaid.x",
            "%ctaid.y",
            "%ctaid.z",
            "%ntid.x",
            "%ntid.y",
            "%ntid.z",
            "%nctaid.x",
            "%nctaid.y",
            "%nctaid.z",
        ],
    );
}

/// The block-shape contract: `.reqntid` in place of a bound, and no read of the block's size
/// left (the compiler was told it); the kernel table and the handle carry the shape.
#[test]
fn ptx_block_shape_contract_is_reqntid_and_folds_the_block_size() {
    let name = "check_thread_geometry_fixed_block";
    let body = common::kernel_ptx(name);
    assert!(body.contains(".reqntid 7, 5, 3") && !body.contains(".maxntid"), "{name}:\n{body}");
    assert!(!body.contains("%ntid"), "{name} reads the block's size at run time:\n{body}");
    common::assert_emits(name, &["%tid.x", "%tid.y", "%tid.z", "%nctaid.z"]);
    assert_eq!(kernels::check_thread_geometry_fixed_block::BLOCK, Some([7, 5, 3]));
    assert_eq!(kernels::check_thread_geometry_fixed_block::LAUNCH_BOUNDS.map(|b| b.max_threads), Some(105));
    assert_eq!(kernels::check_thread_geometry::BLOCK, None);
}

/// `thread_idx_hints = false` drops the `threadIdx` bounds from the contract and keeps the
/// block's size: the hinted kernel's comparison folds away, the other's reads every `%tid`.
#[test]
fn ptx_thread_idx_hints_fold_the_bounds_and_can_be_turned_off() {
    let hinted = common::kernel_ptx("check_thread_idx_hinted");
    assert!(!hinted.contains("%tid") && !hinted.contains("%ntid"), "check_thread_idx_hinted:\n{hinted}");
    assert!(hinted.contains(".reqntid 7, 5, 3"), "check_thread_idx_hinted:\n{hinted}");
    let unhinted = common::kernel_ptx("check_thread_idx_unhinted");
    assert!(!unhinted.contains("%ntid"), "check_thread_idx_unhinted reads the block's size:\n{unhinted}");
    assert!(unhinted.contains(".reqntid 7, 5, 3"), "check_thread_idx_unhinted:\n{unhinted}");
    common::assert_emits("check_thread_idx_unhinted", &["%tid.x", "%tid.y", "%tid.z"]);
    assert_eq!(kernels::check_thread_idx_unhinted::BLOCK, Some([7, 5, 3]));
}

#[test]
fn ptx_lane_reads_laneid() {
    common::assert_emits(
        "check_lane_warp",
        &[", %laneid;", "activemask.b32", "%lanemask_lt;", "%lanemask_le;", "%lanemask_gt;", "%lanemask_ge;"],
    );
}

#[test]
fn ptx_shuffles_32_bit() {
    for kernel in ["check_shfl_u32", "check_shfl_i32", "check_shfl_f32"] {
        common::assert_emits(
            kernel,
            &["shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32", "shfl.sync.bfly.b32"],
        );
        assert_eq!(common::kernel_ptx(kernel).matches("shfl.sync.").count(), 4, "{kernel}: one shuffle each");
    }
}

#[test]
fn ptx_full_warp_shuffles_keep_their_operands() {
    let body = common::kernel_ptx("check_shfl_full_warp");
    for needle in ["shfl.sync.idx.b32", ", 31, -1;", "shfl.sync.up.b32", ", 0, -1;", "shfl.sync.down.b32"] {
        assert!(body.contains(needle), "check_shfl_full_warp: expected `{needle}`:\n{body}");
    }
}

#[test]
fn ptx_shuffles_64_bit_are_two_32_bit_shuffles() {
    for kernel in ["check_shfl_u64", "check_shfl_i64", "check_shfl_f64"] {
        let body = common::kernel_ptx(kernel);
        for mode in ["idx", "up", "down", "bfly"] {
            let instruction = format!("shfl.sync.{mode}.b32");
            assert_eq!(body.matches(&instruction).count(), 2, "{kernel}: two `{instruction}`:\n{body}");
        }
    }
}

#[test]
fn ptx_votes_and_warp_barrier() {
    common::assert_emits(
        "check_votes",
        &["bar.warp.sync", "vote.sync.ballot.b32", "vote.sync.any.pred", "vote.sync.all.pred"],
    );
}

#[test]
fn ptx_match() {
    common::assert_emits("check_match_u32", &["match.any.sync.b32", "match.all.sync.b32"]);
    common::assert_emits("check_match_u64", &["match.any.sync.b64", "match.all.sync.b64"]);
}

#[test]
fn ptx_warp_reductions() {
    common::assert_emits(
        "check_reduce_u32",
        &[
            "redux.sync.add.u32",
            "redux.sync.min.u32",
            "redux.sync.max.u32",
            "redux.sync.and.b32",
            "redux.sync.or.b32",
            "redux.sync.xor.b32",
        ],
    );
    common::assert_emits(
        "check_reduce_i32",
        &["redux.sync.add.s32", "redux.sync.min.s32", "redux.sync.max.s32"],
    );
}

#[test]
fn ptx_block_votes() {
    common::assert_emits("check_block_votes", &["bar.red.popc.u32", "bar.red.and.pred", "bar.red.or.pred"]);
}

#[test]
fn ptx_fences() {
    common::assert_emits("check_fences", &["membar.cta;", "membar.gl;", "membar.sys;"]);
}

#[test]
fn ptx_grid_sync() {
    common::assert_emits("check_grid_sync", &["atom.add.release.gpu.u32", "ld.acquire.gpu.u32", "bar.sync"]);
}

#[test]
fn ptx_assembles_for_sm_80_and_sm_90() {
    common::assemble(common::ptx(), "sm_80");
    common::assemble(common::ptx(), "sm_90");
}

// ---------------------------------------------------------------------------------------------
// The host's model of a launch: which thread is which lane of which warp.

/// One thread of a launch, as the check kernels number it.
#[derive(Clone, Copy, Debug)]
struct Thread {
    thread_idx: [u32; 3],
    block_idx: [u32; 3],
    /// Number across the grid: `block * threads_per_block + linear`.
    n: u32,
    /// `thread::linear_idx()`.
    linear: u32,
    lane: u32,
    warp: u32,
    /// Lanes of this thread's warp that exist (all 32 but in a block's last, partial warp).
    warp_lanes: u32,
}

impl Thread {
    fn warp_mask(&self) -> u32 {
        lanes_mask(self.warp_lanes)
    }

    /// The `n` of lane `lane` of this thread's warp.
    fn n_of_lane(&self, lane: u32) -> u32 {
        self.n - self.lane + lane
    }
}

/// The mask of lanes 0..count.
fn lanes_mask(count: u32) -> u32 {
    if count >= 32 { u32::MAX } else { (1 << count) - 1 }
}

fn config(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig { grid_dim: grid, block_dim: block, shared_mem_bytes: 0 }
}

/// Every thread of `cfg`, in the order of `n`.
fn threads(cfg: &LaunchConfig) -> Vec<Thread> {
    let (gx, gy, gz) = cfg.grid_dim;
    let (bx, by, bz) = cfg.block_dim;
    let per_block = bx * by * bz;
    let mut all = Vec::new();
    for block_z in 0..gz {
        for block_y in 0..gy {
            for block_x in 0..gx {
                let block = block_x + gx * (block_y + gy * block_z);
                for linear in 0..per_block {
                    let warp = linear / 32;
                    all.push(Thread {
                        thread_idx: [linear % bx, linear / bx % by, linear / (bx * by)],
                        block_idx: [block_x, block_y, block_z],
                        n: block * per_block + linear,
                        linear,
                        lane: linear % 32,
                        warp,
                        warp_lanes: (per_block - warp * 32).min(32),
                    });
                }
            }
        }
    }
    all.sort_by_key(|t| t.n);
    all
}

/// A launch's grid or block sides.
type Dims = (u32, u32, u32);
/// A launch shape: (grid, block) dimensions.
type Shape = (Dims, Dims);

/// Odd shapes: 2-D blocks of 16×16 (x not a multiple of 32), 3-D blocks of 7×5×3 (105 threads,
/// last warp 9 lanes), 1-D blocks of 100 (last warp 4 lanes), whole warps of 64.
const SHAPES: [Shape; 4] =
    [((2, 3, 1), (16, 16, 1)), ((3, 2, 2), (7, 5, 3)), ((5, 1, 1), (100, 1, 1)), ((4, 1, 1), (64, 1, 1))];

/// Launches `kernel` (its first parameter the output, then `rest`) with `values` outputs per
/// thread; returns the outputs.
fn run<K, T, R>(gpu: &Gpu, kernel: K, cfg: LaunchConfig, values: usize, rest: R) -> Vec<T>
where
    K: Kernel,
    T: DeviceRepr + ValidAsZeroBits,
    R: WithOutput<T, K::Params>,
{
    let count = threads(&cfg).len() * values;
    let mut out = gpu.stream().alloc_zeros::<T>(count).unwrap();
    rest.launch(gpu, kernel, cfg, &mut out);
    gpu.stream().clone_dtoh(&out).unwrap()
}

/// The arguments after the output buffer, launched with it.
trait WithOutput<T, P> {
    fn launch<K: Kernel<Params = P>>(
        self,
        gpu: &Gpu,
        kernel: K,
        cfg: LaunchConfig,
        out: &mut ptxkit_host::cudarc::driver::CudaSlice<T>,
    );
}

impl<T> WithOutput<T, (*mut T,)> for () {
    fn launch<K: Kernel<Params = (*mut T,)>>(
        self,
        gpu: &Gpu,
        kernel: K,
        cfg: LaunchConfig,
        out: &mut ptxkit_host::cudarc::driver::CudaSlice<T>,
    ) {
        gpu.launch(kernel, cfg, (out,)).unwrap();
    }
}

impl<T, A: bytemuck::Pod> WithOutput<T, (*mut T, A)> for (A,) {
    fn launch<K: Kernel<Params = (*mut T, A)>>(
        self,
        gpu: &Gpu,
        kernel: K,
        cfg: LaunchConfig,
        out: &mut ptxkit_host::cudarc::driver::CudaSlice<T>,
    ) {
        gpu.launch(kernel, cfg, (out, self.0)).unwrap();
    }
}

impl<T, A: bytemuck::Pod, B: bytemuck::Pod> WithOutput<T, (*mut T, A, B)> for (A, B) {
    fn launch<K: Kernel<Params = (*mut T, A, B)>>(
        self,
        gpu: &Gpu,
        kernel: K,
        cfg: LaunchConfig,
        out: &mut ptxkit_host::cudarc::driver::CudaSlice<T>,
    ) {
        gpu.launch(kernel, cfg, (out, self.0, self.1)).unwrap();
    }
}

/// Asserts each thread's record equals `expected(thread)`; `None` entries are not compared
/// (values the hardware leaves undefined).
#[track_caller]
fn assert_records<T: PartialEq + Debug + Copy, const N: usize>(
    what: &str,
    cfg: &LaunchConfig,
    got: &[T],
    expected: impl Fn(&Thread) -> [Option<T>; N],
) {
    let all = threads(cfg);
    assert_eq!(got.len(), all.len() * N);
    let mut compared = 0;
    for thread in &all {
        let record = &got[thread.n as usize * N..][..N];
        for (k, want) in expected(thread).into_iter().enumerate() {
            if let Some(want) = want {
                assert_eq!(
                    record[k], want,
                    "{what}, grid {:?} block {:?}: value {k} of {thread:?}",
                    cfg.grid_dim, cfg.block_dim
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 0, "{what}: nothing compared");
}

// ---------------------------------------------------------------------------------------------
// GPU: thread geometry, lanes, warps.

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_thread_geometry_odd_shapes() {
    let gpu = common::gpu();
    for (grid, block) in SHAPES {
        let cfg = config(grid, block);
        let got = run::<_, u32, _>(&gpu, kernels::check_thread_geometry, cfg, kernels::GEOMETRY_VALUES, ());
        assert_records::<u32, { kernels::GEOMETRY_VALUES }>("thread geometry", &cfg, &got, |t| {
            geometry_record(grid, block, t)
        });
    }
}

/// What `check_thread_geometry` writes for thread `t` of a launch of `grid` × `block`.
fn geometry_record(grid: Dims, block: Dims, t: &Thread) -> [Option<u32>; kernels::GEOMETRY_VALUES] {
    let [tx, ty, tz] = t.thread_idx;
    let [bx, by, bz] = t.block_idx;
    [
        tx,
        ty,
        tz,
        bx,
        by,
        bz,
        block.0,
        block.1,
        block.2,
        grid.0,
        grid.1,
        grid.2,
        t.linear,
        bx * block.0 + tx,
        by * block.1 + ty,
        bz * block.2 + tz,
    ]
    .map(Some)
}

/// Under the block-shape contract the folded block size gives the same records as the
/// registers; a launch of another shape is refused by the typed launch (naming the contract)
/// and, bypassing it, by the driver (the entry's `.reqntid`), and the GPU works on after.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_block_shape_contract_gives_the_registers_values_and_refuses_other_shapes() {
    let gpu = common::gpu();
    let block = (7, 5, 3);
    for grid in [(3, 2, 2), (1, 1, 1), (5, 1, 3)] {
        let cfg = config(grid, block);
        let got = run::<_, u32, _>(
            &gpu,
            kernels::check_thread_geometry_fixed_block,
            cfg,
            kernels::GEOMETRY_VALUES,
            (),
        );
        assert_records::<u32, { kernels::GEOMETRY_VALUES }>("fixed-block geometry", &cfg, &got, |t| {
            geometry_record(grid, block, t)
        });
    }
    let other = config((3, 2, 2), (5, 7, 3));
    let mut out = gpu.stream().alloc_zeros::<u32>(threads(&other).len() * kernels::GEOMETRY_VALUES).unwrap();
    let refused = gpu.launch(kernels::check_thread_geometry_fixed_block, other, (&mut out,));
    assert!(
        matches!(refused, Err(ptxkit_host::Error::InvalidLaunch(ref m)) if m.contains("block-shape contract") && m.contains("7x5x3")),
        "{refused:?}"
    );
    let function = gpu.function(kernels::check_thread_geometry_fixed_block).unwrap();
    let mut launch = gpu.stream().launch_builder(&function);
    ptxkit_host::cudarc::driver::PushKernelArg::arg(&mut launch, &mut out);
    // SAFETY: `out` holds a record for every thread of `other`; the launch is expected to fail.
    let by_driver = unsafe { launch.launch(other) };
    assert!(by_driver.is_err(), "the driver launched a .reqntid 7, 5, 3 kernel with 5x7x3 blocks");
    gpu.stream().synchronize().unwrap();
    let cfg = config((2, 1, 1), block);
    let got =
        run::<_, u32, _>(&gpu, kernels::check_thread_geometry_fixed_block, cfg, kernels::GEOMETRY_VALUES, ());
    assert_records::<u32, { kernels::GEOMETRY_VALUES }>("after the refusals", &cfg, &got, |t| {
        geometry_record((2, 1, 1), block, t)
    });
}

/// Both `threadIdx` contracts compute 1 on the GPU: every thread is inside the declared block.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_thread_idx_hints_on_and_off_agree() {
    let gpu = common::gpu();
    let cfg = config((3, 2, 1), (7, 5, 3));
    let mut hinted = gpu.stream().clone_htod(&[7u32]).unwrap();
    gpu.launch(kernels::check_thread_idx_hinted, cfg, (&mut hinted,)).unwrap();
    let mut unhinted = gpu.stream().clone_htod(&[7u32]).unwrap();
    gpu.launch(kernels::check_thread_idx_unhinted, cfg, (&mut unhinted,)).unwrap();
    assert_eq!(gpu.stream().clone_dtoh(&hinted).unwrap(), [1], "hinted");
    assert_eq!(gpu.stream().clone_dtoh(&unhinted).unwrap(), [1], "unhinted");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_lane_warp_id_and_masks_odd_shapes() {
    let gpu = common::gpu();
    for (grid, block) in SHAPES {
        let cfg = config(grid, block);
        let got = run::<_, u32, _>(&gpu, kernels::check_lane_warp, cfg, kernels::LANE_VALUES, ());
        assert_records::<u32, { kernels::LANE_VALUES }>(
            "lane, warp_id, active_mask, lane masks",
            &cfg,
            &got,
            |t| {
                let (below, at_or_below) = (lanes_mask(t.lane), lanes_mask(t.lane + 1));
                [t.lane, t.warp, t.warp_mask(), below, at_or_below, !at_or_below, !below].map(Some)
            },
        );
    }
}

// ---------------------------------------------------------------------------------------------
// GPU: shuffles.

#[derive(Clone, Copy, Debug)]
enum ShuffleMode {
    Idx,
    Up,
    Down,
    Xor,
}

/// The lane `shfl.sync.<mode>` reads for `lane`, by the PTX ISA's pseudo-code, with `c` as
/// CUDA's `__shfl*_sync` build it from `width`.
fn shuffle_source(mode: ShuffleMode, lane: u32, b: u32, width: u32) -> u32 {
    let c = match mode {
        ShuffleMode::Up => (32 - width) << 8,
        _ => ((32 - width) << 8) | 0x1f,
    };
    let segment_mask = (c >> 8) & 0x1f;
    let min_lane = lane & segment_mask;
    let max_lane = min_lane | (c & 0x1f & !segment_mask);
    let b = b & 0x1f;
    let (source, valid) = match mode {
        ShuffleMode::Idx => {
            let j = min_lane | (b & !segment_mask);
            (j as i64, j <= max_lane)
        }
        ShuffleMode::Up => {
            let j = i64::from(lane) - i64::from(b);
            (j, j >= i64::from(max_lane))
        }
        ShuffleMode::Down => {
            let j = lane + b;
            (j as i64, j <= max_lane)
        }
        ShuffleMode::Xor => {
            let j = lane ^ b;
            (j as i64, j <= max_lane)
        }
    };
    if valid { source as u32 } else { lane }
}

#[test]
fn shuffle_model_matches_cuda_documentation() {
    // __shfl_up_sync: lanes below delta keep their value; __shfl_down_sync: lanes past the end.
    assert_eq!(shuffle_source(ShuffleMode::Up, 2, 3, 32), 2);
    assert_eq!(shuffle_source(ShuffleMode::Up, 5, 3, 32), 2);
    assert_eq!(shuffle_source(ShuffleMode::Down, 30, 3, 32), 30);
    assert_eq!(shuffle_source(ShuffleMode::Down, 3, 3, 32), 6);
    // Segments of 8: lane 13 is lane 5 of the segment starting at 8.
    assert_eq!(shuffle_source(ShuffleMode::Idx, 13, 3, 8), 11);
    assert_eq!(shuffle_source(ShuffleMode::Idx, 13, 11, 8), 11);
    assert_eq!(shuffle_source(ShuffleMode::Up, 9, 2, 8), 9);
    assert_eq!(shuffle_source(ShuffleMode::Down, 14, 2, 8), 14);
    assert_eq!(shuffle_source(ShuffleMode::Xor, 13, 1, 8), 12);
    // xor past the segment's end keeps the value; into an earlier segment reads it.
    assert_eq!(shuffle_source(ShuffleMode::Xor, 3, 20, 16), 3);
    assert_eq!(shuffle_source(ShuffleMode::Xor, 19, 20, 16), 7);
}

/// Shuffles `T` samples with source lane / delta / lane mask `b` in segments of `width`, on
/// every shape; results read from a lane outside the warp's existing lanes are undefined and
/// skipped.
fn check_shuffles<K, T>(gpu: &Gpu, kernel: K, b: u32, width: u32)
where
    K: Kernel<Params = (*mut T, u32, u32)>,
    T: ShuffleSample + DeviceRepr + ValidAsZeroBits + PartialEq + Debug,
{
    for (grid, block) in SHAPES {
        let cfg = config(grid, block);
        let got = run::<_, T, _>(gpu, kernel, cfg, kernels::SHUFFLE_VALUES, (b, width));
        let what = format!("{} b={b} width={width}", K::NAME);
        assert_records::<T, { kernels::SHUFFLE_VALUES }>(&what, &cfg, &got, |t| {
            [ShuffleMode::Idx, ShuffleMode::Up, ShuffleMode::Down, ShuffleMode::Xor].map(|mode| {
                let source = shuffle_source(mode, t.lane, b, width);
                (source < t.warp_lanes).then(|| T::sample(t.n_of_lane(source)))
            })
        });
    }
}

/// (b, width) pairs: whole warp, segments of 16, 8, 4 and 1, sources past a segment.
const SHUFFLE_CASES: [(u32, u32); 9] =
    [(0, 32), (5, 32), (17, 32), (31, 32), (3, 16), (20, 16), (1, 8), (6, 4), (1, 1)];

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shfl_u32_widths_and_partial_warps() {
    let gpu = common::gpu();
    for (b, width) in SHUFFLE_CASES {
        check_shuffles(&gpu, kernels::check_shfl_u32, b, width);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shfl_i32_f32_widths_and_partial_warps() {
    let gpu = common::gpu();
    for (b, width) in SHUFFLE_CASES {
        check_shuffles(&gpu, kernels::check_shfl_i32, b, width);
        check_shuffles(&gpu, kernels::check_shfl_f32, b, width);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shfl_64_bit_widths_and_partial_warps() {
    let gpu = common::gpu();
    for (b, width) in SHUFFLE_CASES {
        check_shuffles(&gpu, kernels::check_shfl_u64, b, width);
        check_shuffles(&gpu, kernels::check_shfl_i64, b, width);
        check_shuffles(&gpu, kernels::check_shfl_f64, b, width);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_shfl_full_warp_functions_of_the_simulations() {
    let gpu = common::gpu();
    for b in [0, 1, 7, 31] {
        for (grid, block) in [((3, 1, 1), (64, 1, 1)), ((2, 2, 1), (8, 4, 2))] {
            let cfg = config(grid, block);
            let got =
                run::<_, u32, _>(&gpu, kernels::check_shfl_full_warp, cfg, kernels::SHUFFLE_VALUES, (b,));
            let what = format!("full-warp shuffles b={b}");
            assert_records::<u32, { kernels::SHUFFLE_VALUES }>(&what, &cfg, &got, |t| {
                let from = |mode| t.n_of_lane(shuffle_source(mode, t.lane, b, 32));
                [
                    u32::sample(from(ShuffleMode::Idx)),
                    u32::sample(from(ShuffleMode::Up)),
                    f32::sample(from(ShuffleMode::Up)).to_bits(),
                    f32::sample(from(ShuffleMode::Down)).to_bits(),
                ]
                .map(Some)
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPU: votes, matches, reductions.

/// The threads of `t`'s warp that exist, as `Thread`s.
fn warp_of<'a>(all: &'a [Thread], t: &Thread) -> &'a [Thread] {
    let first = t.n_of_lane(0) as usize;
    &all[first..first + t.warp_lanes as usize]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_ballot_any_all_partial_warps() {
    let gpu = common::gpu();
    // (modulus, residue): all true, every third, one lane in 64, none.
    for (modulus, residue) in [(1, 0), (3, 1), (64, 0), (7, 9)] {
        for (grid, block) in SHAPES {
            let cfg = config(grid, block);
            let all = threads(&cfg);
            let got =
                run::<_, u32, _>(&gpu, kernels::check_votes, cfg, kernels::VOTE_VALUES, (modulus, residue));
            let what = format!("votes n % {modulus} == {residue}");
            assert_records::<u32, { kernels::VOTE_VALUES }>(&what, &cfg, &got, |t| {
                let ballot = warp_of(&all, t)
                    .iter()
                    .filter(|peer| peer.n % modulus == residue)
                    .fold(0, |lanes, peer| lanes | 1 << peer.lane);
                [ballot, u32::from(ballot != 0), u32::from(ballot == t.warp_mask())].map(Some)
            });
        }
    }
}

/// Checks a match kernel whose value is `lane % modulus` (in either type).
fn check_matches<K: Kernel<Params = (*mut u32, u32)>>(gpu: &Gpu, kernel: K) {
    for modulus in [1, 2, 5, 32] {
        for (grid, block) in SHAPES {
            let cfg = config(grid, block);
            let all = threads(&cfg);
            let got = run::<_, u32, _>(gpu, kernel, cfg, kernels::MATCH_VALUES, (modulus,));
            let what = format!("{} lane % {modulus}", K::NAME);
            assert_records::<u32, { kernels::MATCH_VALUES }>(&what, &cfg, &got, |t| {
                let peers = warp_of(&all, t)
                    .iter()
                    .filter(|peer| peer.lane % modulus == t.lane % modulus)
                    .fold(0, |lanes, peer| lanes | 1 << peer.lane);
                let all_same = peers == t.warp_mask();
                [peers, if all_same { t.warp_mask() } else { 0 }, u32::from(all_same)].map(Some)
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_match_any_all_u32_partial_warps() {
    check_matches(&common::gpu(), kernels::check_match_u32);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_match_any_all_u64_partial_warps() {
    check_matches(&common::gpu(), kernels::check_match_u64);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_reduce_u32_partial_warps() {
    let gpu = common::gpu();
    for seed in [0, 0xffff_0f0f] {
        for (grid, block) in SHAPES {
            let cfg = config(grid, block);
            let all = threads(&cfg);
            let got =
                run::<_, u32, _>(&gpu, kernels::check_reduce_u32, cfg, kernels::REDUCE_U32_VALUES, (seed,));
            assert_records::<u32, { kernels::REDUCE_U32_VALUES }>("reduce u32", &cfg, &got, |t| {
                let values: Vec<u32> =
                    warp_of(&all, t).iter().map(|peer| kernels::reduce_u32_sample(peer.n, seed)).collect();
                [
                    values.iter().fold(0u32, |sum, v| sum.wrapping_add(*v)),
                    *values.iter().min().unwrap(),
                    *values.iter().max().unwrap(),
                    values.iter().fold(u32::MAX, |acc, v| acc & v),
                    values.iter().fold(0, |acc, v| acc | v),
                    values.iter().fold(0, |acc, v| acc ^ v),
                ]
                .map(Some)
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_reduce_i32_partial_warps() {
    let gpu = common::gpu();
    for seed in [0, -1000, 1000] {
        for (grid, block) in SHAPES {
            let cfg = config(grid, block);
            let all = threads(&cfg);
            let got =
                run::<_, i32, _>(&gpu, kernels::check_reduce_i32, cfg, kernels::REDUCE_I32_VALUES, (seed,));
            assert_records::<i32, { kernels::REDUCE_I32_VALUES }>("reduce i32", &cfg, &got, |t| {
                let values: Vec<i32> =
                    warp_of(&all, t).iter().map(|peer| kernels::reduce_i32_sample(peer.n, seed)).collect();
                [values.iter().sum::<i32>(), *values.iter().min().unwrap(), *values.iter().max().unwrap()]
                    .map(Some)
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// GPU: block votes, fences, grid sync.

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sync_threads_count_and_or_odd_shapes() {
    let gpu = common::gpu();
    for (modulus, residue) in [(1, 0), (3, 2), (1000, 0), (7, 9)] {
        for (grid, block) in SHAPES {
            let cfg = config(grid, block);
            let per_block = block.0 * block.1 * block.2;
            let got = run::<_, u32, _>(
                &gpu,
                kernels::check_block_votes,
                cfg,
                kernels::BLOCK_VOTE_VALUES,
                (modulus, residue),
            );
            let count = (0..per_block).filter(|linear| linear % modulus == residue).count() as u32;
            let what = format!("block votes linear % {modulus} == {residue}");
            assert_records::<u32, { kernels::BLOCK_VOTE_VALUES }>(&what, &cfg, &got, |_| {
                [count, u32::from(count == per_block), u32::from(count > 0)].map(Some)
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_fences_block_handoff_and_last_block_sum() {
    let gpu = common::gpu();
    let blocks = 37u32;
    let stream = gpu.stream();
    let zeros = || stream.alloc_zeros::<u32>(blocks as usize).unwrap();
    let (mut handoff, mut flags, mut partials) = (zeros(), zeros(), zeros());
    let mut tickets = stream.alloc_zeros::<u32>(1).unwrap();
    let mut total = stream.alloc_zeros::<u32>(1).unwrap();
    gpu.launch(
        kernels::check_fences,
        config((blocks, 1, 1), (64, 1, 1)),
        (&mut handoff, &mut flags, &mut partials, &mut tickets, &mut total),
    )
    .unwrap();
    let expected: Vec<u32> = (0..blocks).map(|b| 3 * b + 1).collect();
    assert_eq!(stream.clone_dtoh(&partials).unwrap(), expected, "thread 32 read thread 0's handoff");
    assert_eq!(stream.clone_dtoh(&total).unwrap(), [expected.iter().sum::<u32>()]);
    assert_eq!(stream.clone_dtoh(&tickets).unwrap(), [blocks]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_grid_sync_rounds_see_other_blocks_writes() {
    let gpu = common::gpu();
    let stream = gpu.stream();
    let (blocks, block) = (8u32, 96u32);
    let rounds = 50u32;
    let mut values = stream.alloc_zeros::<u32>((blocks * block) as usize).unwrap();
    let mut errors = stream.alloc_zeros::<u32>(1).unwrap();
    let mut barrier = stream.alloc_zeros::<u32>(1).unwrap();
    gpu.launch_cooperative(
        kernels::check_grid_sync,
        config((blocks, 1, 1), (block, 1, 1)),
        (&mut values, &mut errors, &mut barrier, rounds),
    )
    .unwrap();
    let threads = blocks * block;
    let expected: Vec<u32> = (0..threads).map(|n| (rounds - 1) * threads + n).collect();
    assert_eq!(stream.clone_dtoh(&values).unwrap(), expected);
    assert_eq!(stream.clone_dtoh(&errors).unwrap(), [0], "reads that missed another block's write");
    // 2 syncs per round: the phase bit flipped an even number of times, the count is back to 0.
    assert_eq!(stream.clone_dtoh(&barrier).unwrap(), [0]);
}
