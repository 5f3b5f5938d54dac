//! Gray-Scott's kernels from the progression's steps 1 to 4 (two launches per step, fused,
//! tiled, temporal blocking) and the parameter map: the `grayscott` PTX module.

use super::common::*;
use ptxkit_device::kernel;
use ptxkit_device::{shared_array, thread, warp};

/// Step 1a, the write-up's "v1" Laplacian: `lu = ∇²u`, `lv = ∇²v`.
///
/// Thread mapping: one thread per cell of a 2-D launch (x along rows). Bytes per cell: reads
/// u and v (8 B; the four neighbour reads hit in cache), writes lu and lv (8 B): 16 B.
#[kernel]
pub unsafe fn gray_scott_laplacian(
    u: *const f32,
    v: *const f32,
    lu: *mut f32,
    lv: *mut f32,
    width: u32,
    height: u32,
) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let at = Stencil5::periodic(x, y, width, height);
    unsafe {
        *lu.add(at.centre) = at.laplacian(u);
        *lv.add(at.centre) = at.laplacian(v);
    }
}

/// Step 1b, the write-up's "v1" update: one Euler step from the precomputed Laplacians,
/// in place.
///
/// Thread mapping: one thread per cell of a 2-D launch. Bytes per cell: reads u, v, lu, lv
/// (16 B), writes u and v (8 B): 24 B. With the Laplacian kernel, 40 B per cell per step.
#[kernel]
pub unsafe fn gray_scott_update(
    u: *mut f32,
    v: *mut f32,
    lu: *const f32,
    lv: *const f32,
    width: u32,
    height: u32,
    rates: Rates,
) {
    let (x, y) = thread::index_2d();
    if x >= width || y >= height {
        return;
    }
    let i = (y * width + x) as usize;
    unsafe {
        let (u_new, v_new) = rates.step(*u.add(i), *v.add(i), *lu.add(i), *lv.add(i));
        *u.add(i) = u_new;
        *v.add(i) = v_new;
    }
}

/// Step 2, the write-up's fused kernel: Laplacian and update in one pass, reading `u`, `v`
/// and writing the next step to `u_next`, `v_next` (ping-pong buffers).
///
/// Thread mapping: a 2-D launch, x along rows; each thread marches down `rows_per_thread`
/// consecutive rows of its column, keeping the rows above and at the current cell in
/// registers (with 1 row per thread this is the one-thread-per-cell kernel of the write-up).
/// Bytes per cell: reads u and v (8 B; the left/right neighbours hit in L1), writes the next u
/// and v (8 B): 16 B, the single-step minimum.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_fused(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    rows_per_thread: u32,
) {
    let (x, band) = thread::index_2d();
    let first = band * rows_per_thread;
    if x >= width || first >= height {
        return;
    }
    let last = (first + rows_per_thread).min(height);
    let (w, x) = (width as usize, x as usize);
    // Offsets of the left and right neighbours from the cell (periodic at the edges).
    let left = wrap_prev(x as u32, width) as isize - x as isize;
    let right = wrap_next(x as u32, width) as isize - x as isize;
    unsafe {
        let above = wrap_prev(first, height) as usize * w + x;
        let (mut u_up, mut v_up) = (*u.add(above), *v.add(above));
        let mut here = first as usize * w + x;
        let (mut u_here, mut v_here) = (*u.add(here), *v.add(here));
        for y in first..last {
            let below = if y + 1 == height { x } else { here + w };
            let (u_down, v_down) = (*u.add(below), *v.add(below));
            let (uc, vc) = (u.add(here), v.add(here));
            let lu = laplacian5(u_here, *uc.offset(left), *uc.offset(right), u_up, u_down);
            let lv = laplacian5(v_here, *vc.offset(left), *vc.offset(right), v_up, v_down);
            let (u_new, v_new) = rates.step(u_here, v_here, lu, lv);
            *u_next.add(here) = u_new;
            *v_next.add(here) = v_new;
            (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
            here = below;
        }
    }
}

/// Four adjacent cells of a row, for 16-byte vector loads and stores.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Quad([f32; 4]);

/// Step 2 again, with vector accesses: [`gray_scott_fused`] with four adjacent columns per
/// thread, read and written as `float4` (`ld.global.v4.f32`, `st.global.v4.f32`), so that a
/// row of a field is one load per four cells; the left and right neighbours of the four are
/// four scalar loads (left and right, of U and V; L1 hits). Needs `width % 4 == 0` (so every row starts 16-byte
/// aligned; the host checks). Same float operations per cell as [`gray_scott_fused`]:
/// bit-identical results.
///
/// Thread mapping: a 2-D launch, x along rows in units of four columns (thread `t` holds
/// columns `4t .. 4t + 4`); each thread marches down `rows_per_thread` consecutive rows,
/// keeping the rows above and at the current one in registers. Bytes per cell: 16, as fused.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_fused_x4(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    rows_per_thread: u32,
) {
    let (quad, band) = thread::index_2d();
    let x0 = quad * 4;
    let first = band * rows_per_thread;
    if width % 4 != 0 || x0 >= width || first >= height {
        return;
    }
    let last = (first + rows_per_thread).min(height);
    let w = width as usize;
    // Columns left of the first and right of the last (periodic at the edges).
    let (left, right) = (wrap_prev(x0, width) as usize, wrap_next(x0 + 3, width) as usize);
    let x0 = x0 as usize;
    // SAFETY (all accesses): rows are `width` floats, a multiple of 4, from 16-byte aligned
    // allocations, so `row * w + x0` is a 16-byte aligned index inside the field.
    let load =
        |field: *const f32, row: u32| unsafe { (*(field.add(row as usize * w + x0) as *const Quad)).0 };
    let (mut u_up, mut v_up) = (load(u, wrap_prev(first, height)), load(v, wrap_prev(first, height)));
    let (mut u_here, mut v_here) = (load(u, first), load(v, first));
    for y in first..last {
        let below = wrap_next(y, height);
        let (u_down, v_down) = (load(u, below), load(v, below));
        let row = y as usize * w;
        let (ul, ur, vl, vr) =
            unsafe { (*u.add(row + left), *u.add(row + right), *v.add(row + left), *v.add(row + right)) };
        let (mut u_new, mut v_new) = ([0.0f32; 4], [0.0f32; 4]);
        for j in 0..4 {
            let (u_left, v_left) = if j == 0 { (ul, vl) } else { (u_here[j - 1], v_here[j - 1]) };
            let (u_right, v_right) = if j == 3 { (ur, vr) } else { (u_here[j + 1], v_here[j + 1]) };
            let lu = laplacian5(u_here[j], u_left, u_right, u_up[j], u_down[j]);
            let lv = laplacian5(v_here[j], v_left, v_right, v_up[j], v_down[j]);
            (u_new[j], v_new[j]) = rates.step(u_here[j], v_here[j], lu, lv);
        }
        unsafe {
            *(u_next.add(row + x0) as *mut Quad) = Quad(u_new);
            *(v_next.add(row + x0) as *mut Quad) = Quad(v_new);
        }
        (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
    }
}

/// Step 3, tiled: the fused step with the block's `TILE_W × TILE_H` cells and their one-cell
/// halo loaded once into shared memory, then every neighbour read from there.
///
/// Thread mapping: one thread per cell, blocks of exactly `TILE_W × TILE_H` threads; the
/// block loads its `(TILE_W + 2) × (TILE_H + 2)` window (periodic) cooperatively. Bytes per
/// cell: 16 from DRAM, as fused; it trades the L1 hits of the neighbour reads for shared loads
/// and a barrier.
#[kernel]
pub unsafe fn gray_scott_tiled(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
) {
    if width == 0 || height == 0 {
        return;
    }
    let tile_u: *mut f32 = shared_array!(tiled_u: [f32; TILE_SPAN]);
    let tile_v: *mut f32 = shared_array!(tiled_v: [f32; TILE_SPAN]);
    let (x0, y0) = (thread::block_idx_x() * TILE_W, thread::block_idx_y() * TILE_H);
    let t = thread::thread_idx_y() * TILE_W + thread::thread_idx_x();
    let mut i = t as usize;
    while i < TILE_SPAN {
        let (tx, ty) = (i as u32 % (TILE_W + 2), i as u32 / (TILE_W + 2));
        // Window cell (tx, ty) is grid cell (x0 + tx - 1, y0 + ty - 1), periodically.
        let gx = wrap_into(x0 + tx + width - 1, width);
        let gy = wrap_into(y0 + ty + height - 1, height);
        let g = gy as usize * width as usize + gx as usize;
        unsafe {
            *tile_u.add(i) = *u.add(g);
            *tile_v.add(i) = *v.add(g);
        }
        i += (TILE_W * TILE_H) as usize;
    }
    thread::sync_threads();

    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (x, y) = (x0 + tx, y0 + ty);
    if x >= width || y >= height {
        return;
    }
    let c = ((ty + 1) * (TILE_W + 2) + tx + 1) as usize;
    let row = (TILE_W + 2) as usize;
    unsafe {
        let at = |f: *mut f32, k: usize| *f.add(k);
        let lu = laplacian5(
            at(tile_u, c),
            at(tile_u, c - 1),
            at(tile_u, c + 1),
            at(tile_u, c - row),
            at(tile_u, c + row),
        );
        let lv = laplacian5(
            at(tile_v, c),
            at(tile_v, c - 1),
            at(tile_v, c + 1),
            at(tile_v, c - row),
            at(tile_v, c + row),
        );
        let (u_new, v_new) = rates.step(at(tile_u, c), at(tile_v, c), lu, lv);
        let g = y as usize * width as usize + x as usize;
        *u_next.add(g) = u_new;
        *v_next.add(g) = v_new;
    }
}

/// Step 4, temporal blocking: `steps` (≤ [`TEMPORAL_MAX_STEPS`]) time steps in one launch.
///
/// Each block loads a `TEMPORAL_SPAN_X × TEMPORAL_SPAN_Y` window (periodic) into registers
/// and steps it `steps` times; the cells `steps` or more away from the window's edge are then
/// exact, and the block writes that inner tile ([`temporal_tile`]). Neighbours come from
/// registers (same lane), warp shuffles (the lanes left and right) and, for the rows above and
/// below a warp's band, a small shared-memory exchange with one barrier per step.
///
/// Thread mapping: blocks of `32 × TEMPORAL_WARPS` (256) threads; lane l of warp w holds
/// columns `4l..4l+4` of rows `6w..6w+6` of the 128 × 48 window. Bytes per cell per step:
/// about (8 × window/tile + 8) / steps from DRAM: 2.7 B at 8 steps (the window is 1.71× its
/// 112 × 32 tile), against 16 B for any single-step kernel; the cost moves to arithmetic on
/// the halo cells. Launch bounds (256 threads, 2 blocks per SM) cap it at 128 registers, so
/// one block's loads overlap the other's arithmetic: 42 µs per step at 4096² on an H200
/// (steps per launch tuned), against 48 µs for the earlier 8-row layout at 168 registers and
/// one block per SM, which ncu showed latency-bound at 52% SM throughput. Same float
/// operations as the other kernels: results are bit-identical.
#[kernel(launch_bounds(256, 2))]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_temporal(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    width: u32,
    height: u32,
    rates: Rates,
    steps: u32,
) {
    const C: usize = TEMPORAL_COLS;
    const R: usize = TEMPORAL_ROWS;
    // Rows shared between neighbouring warps, double-buffered by step parity:
    // [parity][field][top | bottom][warp][column].
    let edges: *mut f32 = shared_array!(temporal_edges: [f32; 2 * 2 * 2 * TEMPORAL_EDGE]);
    let edge = |parity: u32, field: usize, bottom: usize, warp: usize, col: usize| -> usize {
        (((parity as usize * 2 + field) * 2 + bottom) * TEMPORAL_WARPS + warp) * 32 * C + col
    };

    if width == 0 || height == 0 || steps > TEMPORAL_MAX_STEPS {
        return;
    }
    let (tile_w, tile_h) = temporal_tile(steps);
    let lane = (thread::thread_idx_x() % 32) as usize;
    let warp_id = (thread::thread_idx_x() / 32) as usize;
    // Window origin in grid coordinates (may be negative: wrapped when loading).
    let origin_x = (thread::block_idx_x() * tile_w) as i64 - steps as i64;
    let origin_y = (thread::block_idx_y() * tile_h) as i64 - steps as i64;
    let (w, h) = (width as i64, height as i64);

    let mut cu = [[0.0f32; C]; R];
    let mut cv = [[0.0f32; C]; R];
    let mut columns = [0usize; C];
    for (j, gx) in columns.iter_mut().enumerate() {
        *gx = (origin_x + (lane * C + j) as i64).rem_euclid(w) as usize;
    }
    for i in 0..R {
        let gy = (origin_y + (warp_id * R + i) as i64).rem_euclid(h) as usize;
        for j in 0..C {
            let g = gy * width as usize + columns[j];
            unsafe {
                cu[i][j] = *u.add(g);
                cv[i][j] = *v.add(g);
            }
        }
    }

    for s in 0..steps {
        let parity = s % 2;
        // Publish this band's first and last rows, then read the neighbours' (the window's
        // first and last bands read their own: those cells are in the halo anyway).
        for j in 0..C {
            let col = lane * C + j;
            unsafe {
                *edges.add(edge(parity, 0, 0, warp_id, col)) = cu[0][j];
                *edges.add(edge(parity, 1, 0, warp_id, col)) = cv[0][j];
                *edges.add(edge(parity, 0, 1, warp_id, col)) = cu[R - 1][j];
                *edges.add(edge(parity, 1, 1, warp_id, col)) = cv[R - 1][j];
            }
        }
        thread::sync_threads();
        let above = if warp_id == 0 { 0 } else { warp_id - 1 };
        let below = if warp_id + 1 == TEMPORAL_WARPS { warp_id } else { warp_id + 1 };
        // The neighbouring bands' edge rows, read from shared memory only where used (short
        // live ranges keep the register count down).
        let edge_row = |field: usize, bottom: usize, warp: usize| -> [f32; C] {
            core::array::from_fn(|j| unsafe { *edges.add(edge(parity, field, bottom, warp, lane * C + j)) })
        };

        // Step the band in place, row by row, keeping the old row above.
        let (mut u_up, mut v_up) = (edge_row(0, 1, above), edge_row(1, 1, above));
        for i in 0..R {
            let (u_down, v_down) = if i + 1 < R {
                (cu[i + 1], cv[i + 1])
            } else {
                (edge_row(0, 0, below), edge_row(1, 0, below))
            };
            let (u_row, v_row) = (cu[i], cv[i]);
            // The columns either side of this lane's, from the neighbouring lanes.
            let u_left = warp::shfl_up_f32(u_row[C - 1], 1);
            let v_left = warp::shfl_up_f32(v_row[C - 1], 1);
            let u_right = warp::shfl_down_f32(u_row[0], 1);
            let v_right = warp::shfl_down_f32(v_row[0], 1);
            for j in 0..C {
                let (ul, vl) = if j == 0 { (u_left, v_left) } else { (u_row[j - 1], v_row[j - 1]) };
                let (ur, vr) = if j + 1 == C { (u_right, v_right) } else { (u_row[j + 1], v_row[j + 1]) };
                let lu = laplacian5(u_row[j], ul, ur, u_up[j], u_down[j]);
                let lv = laplacian5(v_row[j], vl, vr, v_up[j], v_down[j]);
                (cu[i][j], cv[i][j]) = rates.step(u_row[j], v_row[j], lu, lv);
            }
            (u_up, v_up) = (u_row, v_row);
        }
    }

    // Write the inner tile: window cells at least `steps` from every edge, inside the grid.
    let first = steps as usize;
    for i in 0..R {
        let wy = warp_id * R + i;
        let gy = origin_y + wy as i64;
        if wy < first || wy >= TEMPORAL_SPAN_Y as usize - first || gy >= h {
            continue;
        }
        for j in 0..C {
            let wx = lane * C + j;
            let gx = origin_x + wx as i64;
            if wx < first || wx >= TEMPORAL_SPAN_X as usize - first || gx >= w {
                continue;
            }
            let g = gy as usize * width as usize + gx as usize;
            unsafe {
                *u_next.add(g) = cu[i][j];
                *v_next.add(g) = cv[i][j];
            }
        }
    }
}

/// The parameter map (`host grayscott --map`): one fused step of `tiles` independent
/// `side × side` simulations at once, each periodic on its own and with its own feed and kill
/// rates (`feed[t]`, `kill[t]`; diffusion rates and dt from `base`). Tile `t` occupies cells
/// `t·side²..(t+1)·side²` of every field, row-major inside the tile. Per tile this is
/// [`gray_scott_fused`] on a `side × side` grid: the same stencil, [`laplacian5`] and
/// [`Rates::step`], so a tile is bit-identical to a single simulation with its rates.
///
/// Thread mapping: a 3-D launch: x is the column inside the tile, y a band of
/// `rows_per_thread` rows inside the tile (each thread marches down its band, keeping the
/// rows above and at the current cell in registers, as the fused kernel does), z the tile.
/// Bytes per cell per step: reads u and v (8 B; neighbours hit in L1), writes the next u and
/// v (8 B): 16 B, as the fused kernel, plus 8 B of rates per thread (cached).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn gray_scott_map(
    u: *const f32,
    v: *const f32,
    u_next: *mut f32,
    v_next: *mut f32,
    feed: *const f32,
    kill: *const f32,
    side: u32,
    tiles: u32,
    base: Rates,
    rows_per_thread: u32,
) {
    let (x, band, tile) = thread::index_3d();
    let first = band * rows_per_thread;
    if x >= side || first >= side || tile >= tiles {
        return;
    }
    let last = (first + rows_per_thread).min(side);
    let (w, x) = (side as usize, x as usize);
    let origin = tile as usize * w * w;
    // Offsets of the left and right neighbours from the cell (periodic at the tile's edges).
    let left = wrap_prev(x as u32, side) as isize - x as isize;
    let right = wrap_next(x as u32, side) as isize - x as isize;
    unsafe {
        let rates = Rates { feed: *feed.add(tile as usize), kill: *kill.add(tile as usize), ..base };
        let (u, v) = (u.add(origin), v.add(origin));
        let (u_next, v_next) = (u_next.add(origin), v_next.add(origin));
        let above = wrap_prev(first, side) as usize * w + x;
        let (mut u_up, mut v_up) = (*u.add(above), *v.add(above));
        let mut here = first as usize * w + x;
        let (mut u_here, mut v_here) = (*u.add(here), *v.add(here));
        for y in first..last {
            let below = if y + 1 == side { x } else { here + w };
            let (u_down, v_down) = (*u.add(below), *v.add(below));
            let (uc, vc) = (u.add(here), v.add(here));
            let lu = laplacian5(u_here, *uc.offset(left), *uc.offset(right), u_up, u_down);
            let lv = laplacian5(v_here, *vc.offset(left), *vc.offset(right), v_up, v_down);
            let (u_new, v_new) = rates.step(u_here, v_here, lu, lv);
            *u_next.add(here) = u_new;
            *v_next.add(here) = v_new;
            (u_up, u_here, v_up, v_here) = (u_here, u_down, v_here, v_down);
            here = below;
        }
    }
}
