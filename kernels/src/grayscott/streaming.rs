//! Step 5, 2.5-D streaming temporal blocking: one kernel per step count and cells per
//! thread, in the `grayscott_streaming` (two columns a thread) and `grayscott_streaming_c1`
//! (one) PTX modules, and the one-cell kernels again for programmatic dependent launch in the
//! `grayscott_pdl` module (sm_90).

use super::common::*;
use ptxkit_device::kernel;
use ptxkit_device::thread;

/// The per-thread state of a `streaming` block; see [`gray_scott_streaming_s8`]. `C` is
/// the cells per thread and `T` the steps per launch, constants so that every ring index is
/// static (registers, not local memory); `UNIT_DT` marks the copy for dt = 1.
struct Streaming<const C: usize, const T: usize, const UNIT_DT: bool> {
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    /// Output rows of this block (a chunk) and its first grid row.
    chunk: u32,
    y0: u32,
    /// The block's edge planes ([time level][parity], [`STREAM_PLANE`] floats each, whatever
    /// the block's size, so that a level's offset is a constant), and this thread's `float2`
    /// slot in a plane (element `2 · (thread + 1)`; in the two-cell kernels its last column's
    /// slot is [`STREAM_LAST_COLUMNS`] further).
    planes: ptxkit_device::SharedF32,
    slot: u32,
    /// This thread's grid columns, and which of them it writes (inside the strip and grid).
    columns: [usize; C],
    writes: [bool; C],
    /// The next [`STREAM_PREFETCH_ROWS`] window rows ([row][field][column]), loaded that many
    /// iterations ahead so that the loads' latency hides behind as many iterations of
    /// arithmetic, and the grid row after them.
    prefetch: [[[f32; C]; 2]; STREAM_PREFETCH_ROWS],
    load_row: u32,
    /// Rows of time levels 0..T: row `r` of level `l` in slot `r % 3`, [field][column].
    ring: [[[[f32; C]; 2]; 3]; T],
}

impl<const C: usize, const T: usize, const UNIT_DT: bool> Streaming<C, T, UNIT_DT> {
    /// Moves the rows in `prefetch` up by one, loads grid row `load_row` into its last and
    /// moves on to the next row (periodically).
    #[inline(always)]
    unsafe fn load_next_row(&mut self) {
        for d in 1..STREAM_PREFETCH_ROWS {
            self.prefetch[d - 1] = self.prefetch[d];
        }
        let row = self.load_row * self.width;
        let last = &mut self.prefetch[STREAM_PREFETCH_ROWS - 1];
        for j in 0..C {
            let at = (row + self.columns[j] as u32) as usize;
            unsafe {
                last[0][j] = *self.u.add(at);
                last[1][j] = *self.v.add(at);
            }
        }
        self.load_row = wrap_next(self.load_row, self.height);
    }

    /// Publishes this thread's outer cells (U and V of its first column, and of its last in
    /// the two-cell kernels) of a new row of `level`, for its neighbours to read in the next
    /// iteration.
    #[inline(always)]
    unsafe fn publish(&self, parity: u32, level: usize, row: &[[f32; C]; 2]) {
        let at = (2 * level as u32 + parity) * STREAM_PLANE + self.slot;
        unsafe { self.planes.store2(at, [row[0][0], row[1][0]]) };
        if C > 1 {
            unsafe { self.planes.store2(at + STREAM_LAST_COLUMNS, [row[0][C - 1], row[1][C - 1]]) };
        }
    }

    /// Iteration `i`, which is `P` mod 3: loads window row `i` (time level 0), then each level
    /// `s` computes its row `i - s` from level `s - 1`'s rows `i - s - 1 ..= i - s + 1` (the
    /// last one computed just before, in this iteration); level `T`'s row is the output.
    /// (Iterations past the window, the padding of the loop unrolled by 3, compute rows
    /// nobody writes: cheaper than keeping every ring row alive across an early exit.)
    ///
    /// In the first iterations (`WARM_UP`, while `i < 2T`) each level starts only once its
    /// inputs are exact; after that every level computes, with no branches between them.
    #[inline(always)]
    unsafe fn iteration<const P: usize, const WARM_UP: bool>(&mut self, i: u32) {
        let (parity, before) = (i & 1, (i & 1) ^ 1);
        let slot = P % 3;
        self.ring[0][slot] = self.prefetch[0];
        unsafe { self.load_next_row() };
        unsafe { self.publish(parity, 0, &self.ring[0][slot]) };
        macro_rules! levels {
            ($($s:literal)*) => {$(
                if $s <= T {
                    if !WARM_UP || i >= 2 * $s {
                        unsafe { self.level::<P, $s>(i, parity, before) };
                    } else if $s < T {
                        // Not started: any value will do, but a fresh one, so that the
                        // overwritten row does not have to stay alive in a register.
                        let slot = (P + 3 * 9 - $s) % 3;
                        self.ring[$s.min(T - 1)][slot] = self.ring[$s - 1][slot];
                    }
                }
            )*};
        }
        levels!(1 2 3 4 5 6 7 8);
        thread::sync_threads();
    }

    /// Time level `S` of iteration `i` (see [`Streaming::iteration`]); it runs from iteration
    /// `2S`, the first whose inputs are all exact.
    #[inline(always)]
    unsafe fn level<const P: usize, const S: usize>(&mut self, i: u32, parity: u32, before: u32) {
        // Slots of level S-1's rows i-S-1 (up), i-S (centre), i-S+1 (down); level S's new
        // row i-S goes to the centre slot of its own ring.
        let (up, centre, down) = ((P + 3 * 9 - S - 1) % 3, (P + 3 * 9 - S) % 3, (P + 3 * 9 - S + 1) % 3);
        let below = &self.ring[S - 1];
        // The centre row's cells beside this thread's, published by the neighbouring threads
        // in iteration i-1: the left one's last column, the right one's first ([U, V]).
        let at = (2 * (S as u32 - 1) + before) * STREAM_PLANE + self.slot;
        let (left, right) =
            unsafe { (self.planes.load2(at - 2 + last_columns(C)), self.planes.load2(at + 2)) };
        let mut next = [[0.0f32; C]; 2];
        for field in 0..2 {
            let c = below[centre][field];
            for j in 0..C {
                let l = if j == 0 { left[field] } else { c[j - 1] };
                let r = if j + 1 == C { right[field] } else { c[j + 1] };
                next[field][j] = laplacian5(c[j], l, r, below[up][field][j], below[down][field][j]);
            }
        }
        for j in 0..C {
            let (u, v) = (below[centre][0][j], below[centre][1][j]);
            (next[0][j], next[1][j]) = self.rates.step_at::<UNIT_DT>(u, v, next[0][j], next[1][j]);
        }
        if S < T {
            self.ring[S][centre] = next;
            unsafe { self.publish(parity, S, &next) };
        } else {
            // Window row i-T is output row i-2T of the chunk.
            let out = i - 2 * T as u32;
            let gy = self.y0 + out;
            if out < self.chunk && gy < self.height {
                let row = gy * self.width;
                for j in 0..C {
                    if self.writes[j] {
                        let at = (row + self.columns[j] as u32) as usize;
                        unsafe {
                            *self.u_next.add(at) = next[0][j];
                            *self.v_next.add(at) = next[1][j];
                        }
                    }
                }
            }
        }
    }
}

/// Window rows a `streaming` thread holds loaded ahead of the one it enters.
pub const STREAM_PREFETCH_ROWS: usize = 4;

/// Where a plane's last-column slots start: the two-cell kernels publish a thread's first
/// column (U, V) at its slot in the first half of a plane and its last column in the second
/// half, so that the neighbours' reads of either are consecutive `float2`s (no bank
/// conflicts); the one-cell kernels publish their one cell once, in the first half.
#[inline(always)]
const fn last_columns(cells: usize) -> u32 {
    if cells == 1 { 0 } else { STREAM_LAST_COLUMNS }
}

/// The body of the `gray_scott_streaming_*` kernels after the launch's wait (see
/// `streaming_kernels!`): a block's march down its chunk, `C` cells per thread, `T` steps, and
/// with `UNIT_DT` the copy for `rates.dt` = 1, without the two multiplies by dt a cell-step
/// ([`Rates::step_at`]; the kernels pick the copy by one uniform branch).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn streaming<const C: usize, const T: usize, const UNIT_DT: bool>(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    chunk: u32,
) {
    let planes = ptxkit_device::dynamic_shared_f32!(streaming_planes);
    let threads = thread::block_dim_x();
    let warps = threads / 32;
    // A cell's offset is computed in 32 bits (fewer instructions per row than 64-bit ones):
    // at most [`STREAM_MAX_CELLS`] (the host refuses more).
    let cells = u64::from(width) * u64::from(height);
    if width == 0
        || height == 0
        || chunk == 0
        || warps == 0
        || warps > STREAM_MAX_WARPS
        || cells > STREAM_MAX_CELLS
    {
        return;
    }
    let t = thread::thread_idx_x();
    let steps = T as u32;
    // The slots at both ends of every plane stand for the neighbours outside the
    // window: they feed only halo cells, but hold defined values.
    if t < 2 * steps {
        unsafe {
            planes.store2(t * STREAM_PLANE + last_columns(C), [0.0; 2]);
            planes.store2(t * STREAM_PLANE + 2 * (threads + 1), [0.0; 2]);
        }
    }
    let window = 32 * C as u32 * warps;
    // Window column 0 is grid column block·strip − T (wrapped: the grid is periodic).
    let origin_x = i64::from(thread::block_idx_x() * stream_strip(steps, warps, C as u32)) - i64::from(steps);
    let mut columns = [0usize; C];
    let mut writes = [false; C];
    for j in 0..C {
        let wx = t * C as u32 + j as u32;
        let gx = origin_x + i64::from(wx);
        columns[j] = gx.rem_euclid(i64::from(width)) as usize;
        writes[j] = wx >= steps && wx < window - steps && gx < i64::from(width);
    }
    let y0 = thread::block_idx_y() * chunk;
    let load_row = (i64::from(y0) - i64::from(steps)).rem_euclid(i64::from(height)) as u32;
    let mut block = Streaming::<C, T, UNIT_DT> {
        u,
        v,
        u_next,
        v_next,
        width,
        height,
        rates,
        chunk,
        y0,
        planes,
        slot: 2 * (t + 1),
        columns,
        writes,
        prefetch: [[[0.0; C]; 2]; STREAM_PREFETCH_ROWS],
        load_row,
        ring: [[[[0.0; C]; 2]; 3]; T],
    };
    for _ in 0..STREAM_PREFETCH_ROWS {
        unsafe { block.load_next_row() };
    }
    thread::sync_threads();
    let window_rows = chunk + 2 * steps;
    let mut i = 0;
    // The wavefront's start (levels begin one by one), then the steady march; both unrolled
    // by 3 so that ring slots are static.
    while i < 2 * steps {
        unsafe {
            block.iteration::<0, true>(i);
            block.iteration::<1, true>(i + 1);
            block.iteration::<2, true>(i + 2);
        }
        i += 3;
    }
    while i < window_rows {
        unsafe {
            block.iteration::<0, false>(i);
            block.iteration::<1, false>(i + 1);
            block.iteration::<2, false>(i + 2);
        }
        i += 3;
    }
}

macro_rules! streaming_kernels {
    ($cols:expr, $pdl:expr; $($(#[$doc:meta])* $name:ident $steps:literal),*) => {$(
        $(#[$doc])*
        #[kernel(launch_bounds(128, 3), dynamic_shared = stream_shared_bytes($steps))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name(
            u: *const f32,
            v: *const f32,
            u_next: *mut f32,
            v_next: *mut f32,
            width: u32,
            height: u32,
            rates: Rates,
            chunk: u32,
        ) {
            const C: usize = $cols;
            // With `$pdl` (the `_pdl` kernels, sm_90, launched with programmatic dependence) a
            // block's first act is to wait for the launch before it, which wrote the fields this
            // one reads and read the ones it writes: the placement measured best
            // (docs/performance.md), the gain being the launch itself, which the driver starts
            // as the launch before ends. No early trigger of the next launch
            // (`grid::trigger_dependent_launch`): its blocks would fill the SMs while waiting
            // (on an H100 at 512², up to 2.2 times as long a step).
            #[cfg(feature = "grayscott_pdl")]
            if $pdl {
                ptxkit_device::grid::dependency_synchronize();
            }
            // At dt = 1 (every preset's) the march without the two multiplies by dt.
            unsafe {
                if rates.dt == 1.0 {
                    streaming::<C, $steps, true>(u, v, u_next, v_next, width, height, rates, chunk)
                } else {
                    streaming::<C, $steps, false>(u, v, u_next, v_next, width, height, rates, chunk)
                }
            }
        }
    )*};
}

#[cfg(feature = "grayscott_streaming")]
streaming_kernels!(STREAM_COLS as usize, false;
    /// Step 5, the `streaming` variant with 1 step per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s1 1,
    /// Step 5, the `streaming` variant with 2 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s2 2,
    /// Step 5, the `streaming` variant with 3 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s3 3,
    /// Step 5, the `streaming` variant with 4 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s4 4,
    /// Step 5, the `streaming` variant with 5 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s5 5,
    /// Step 5, the `streaming` variant with 6 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s6 6,
    /// Step 5, the `streaming` variant with 7 steps per launch; see [`gray_scott_streaming_s8`].
    gray_scott_streaming_s7 7,
    /// Step 5, 2.5-D streaming temporal blocking (the `streaming` variant; AN5D's scheme), with
    /// `C` = [`STREAM_COLS`] cells per thread and `T` = 8 steps per launch;
    /// `gray_scott_streaming_s1` .. `_s7` are the same kernel for 1 to 7 steps (one kernel per
    /// step count, so that every register-ring index is static).
    ///
    /// A block owns a strip of columns and marches down a chunk of `chunk` rows. Its window is
    /// `32 · C · warps` columns (the strip plus `T` halo columns each side, wrapped
    /// periodically) by `chunk + 2T` rows. Iteration `i` loads window row `i` (time level 0),
    /// and time level `s` (1..=T) computes its row `i − s`, a wavefront skewed one row per level:
    /// vertical neighbours come from a ring of three rows per level in registers (the input rows
    /// are loaded [`STREAM_PREFETCH_ROWS`] iterations ahead, hiding their latency); the horizontal
    /// neighbours of a thread's outer cells, on the row level `s − 1` finished one iteration
    /// earlier, from shared memory, where every thread publishes its outer cells of each new row
    /// (a `float2` of its first column's U and V in the first half of a plane, one of its last
    /// column's in the second half, so that the neighbours' `float2` reads are consecutive:
    /// no bank conflicts), double-buffered by iteration parity: one barrier per row. Level
    /// `T`'s row is written out. Redundant work is the halo columns (`2T` of each window) and,
    /// per chunk, the wavefront's start; level `s` starts at
    /// iteration `2s`, the first where its inputs are exact.
    ///
    /// Thread mapping: blocks of `32 × warps` threads (1 ≤ warps ≤ 4) along x; thread t holds
    /// columns `C·t .. C·t + C` of the window; grid `(⌈width / strip⌉, ⌈height / chunk⌉)` with
    /// strip = [`stream_strip`]; dynamic shared memory [`stream_shared_bytes`]. Bytes per cell per
    /// launch: 8 read × window / strip × (chunk + 2T) / chunk, 8 written: about 17 B, over T
    /// steps (2.2 B per step at T = 8, against 16 for any single-step kernel). Same float
    /// operations per cell as the other kernels ([`laplacian5`], [`Rates::step`]: 17, with its
    /// fused multiply-adds), less the
    /// two multiplies by `dt` where `dt` is 1 (a second copy of the march, [`Rates::step_at`],
    /// picked by one uniform branch): results are bit-identical. On an H200 at 4096², tuned
    /// (7 steps, 4 warps, 133-row chunks: one wave of blocks), before the dt = 1 copy: 23.8 µs
    /// per step, against 40.1 for [`gray_scott_temporal`]; ncu: 119 registers (148 at 8
    /// steps), 4 blocks per SM, issue slots 74% busy. With it, on an H100: 23.3 µs; with the
    /// `float2` half-planes and 32-bit cell offsets (at most [`STREAM_MAX_CELLS`] a launch):
    /// 22.4 µs (the tuned 512² one-cell kernel in a graph: 1.27 → 1.07 µs); with the update's
    /// fused multiply-adds and 4 rows prefetched (`_s7`: 124 registers): 19.3 µs (512²: 1.01 µs).
    gray_scott_streaming_s8 8
);

#[cfg(feature = "grayscott_streaming_c1")]
streaming_kernels!(1, false;
    /// The `streaming` variant with one cell per thread and 1 step per launch; see
    /// [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s1 1,
    /// One cell per thread, 2 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s2 2,
    /// One cell per thread, 3 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s3 3,
    /// One cell per thread, 4 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s4 4,
    /// One cell per thread, 5 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s5 5,
    /// One cell per thread, 6 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s6 6,
    /// One cell per thread, 7 steps per launch; see [`gray_scott_streaming_c1_s8`].
    gray_scott_streaming_c1_s7 7,
    /// [`gray_scott_streaming_s8`] with `C` = 1: one cell per thread, so a block's window is
    /// `32 · warps` columns and each row of a time level costs a thread half the arithmetic
    /// (and the same shared-memory traffic, now per cell). For small grids, where a launch is
    /// latency-bound (few blocks, each marching a short chunk), this halves the serial chain of
    /// every block and doubles the warps in flight; the tuner weighs it against the two-column
    /// kernels at each size.
    ///
    /// Thread mapping: blocks of `32 × warps` threads along x, thread t holds window column t;
    /// grid `(⌈width / strip⌉, ⌈height / chunk⌉)` with strip = [`stream_strip`]`(T, warps, 1)`.
    /// Bytes per cell per launch as [`gray_scott_streaming_s8`], with a wider halo share (2T
    /// columns of `32 · warps`).
    gray_scott_streaming_c1_s8 8
);

#[cfg(feature = "grayscott_pdl")]
streaming_kernels!(1, true;
    /// [`gray_scott_streaming_c1_pdl_s8`] for 1 step per launch.
    gray_scott_streaming_c1_pdl_s1 1,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 2 steps per launch.
    gray_scott_streaming_c1_pdl_s2 2,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 3 steps per launch.
    gray_scott_streaming_c1_pdl_s3 3,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 4 steps per launch.
    gray_scott_streaming_c1_pdl_s4 4,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 5 steps per launch.
    gray_scott_streaming_c1_pdl_s5 5,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 6 steps per launch.
    gray_scott_streaming_c1_pdl_s6 6,
    /// [`gray_scott_streaming_c1_pdl_s8`] for 7 steps per launch.
    gray_scott_streaming_c1_pdl_s7 7,
    /// [`gray_scott_streaming_c1_s8`] for programmatic dependent launch (sm_90, the
    /// `grayscott_pdl` module; the host launches it with `Gpu::launch_programmatic`): its blocks
    /// may start as the launch before it ends, and first wait for that launch
    /// (`grid::dependency_synchronize`), so the launch overlaps the previous one's end instead
    /// of following it. Same thread mapping, bytes and float operations as
    /// [`gray_scott_streaming_c1_s8`]: bit-identical.
    gray_scott_streaming_c1_pdl_s8 8
);
