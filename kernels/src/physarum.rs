//! Physarum (slime mould): agents that sense a trail map, steer toward the strongest reading,
//! move, and deposit; the trail diffuses (3×3 mean, blended) and decays.
//!
//! The model, step by step (one step = all agents, then the trail):
//! 1. **Sense.** Agent at (y, x) with heading θ reads the trail at three points at distance
//!    `sensor_dist`: front (θ), left (θ + `sensor_angle`) and right (θ − `sensor_angle`), by the
//!    cell containing the point (`nearest`, the Triton kernel's rule: cell (i, j) covers
//!    [i, i+1) × [j, j+1)) or bilinearly between cell values placed at integer coordinates
//!    (`bilinear`, PyTorch's `grid_sample(align_corners=True)`, but periodic).
//! 2. **Steer**, with explicit tie rules ([`choose_turn`]): the front wins every tie it is part
//!    of (so all-equal keeps the heading); otherwise the larger of left and right; when left
//!    and right are equal and above the front, a random side. The heading turns by
//!    `turn_angle` toward that side (Jones 2010 keeps the rotation angle apart from the sensor
//!    angle; equal angles turn onto the sensed direction). Then an optional jitter adds a
//!    uniform angle in [−`jitter`, `jitter`].
//! 3. **Move** `step_size` along the new heading, wrapping around the edges.
//! 4. **Deposit** `deposit` on the cell containing the new position.
//! 5. **Diffuse and decay**: `t ← ((1−s)·t + s·mean₃ₓ₃(t))·(1−decay)`, periodic.
//!
//! Random numbers are counter-based ([`random_u32`] of seed, agent id and step), so a run is
//! reproducible from its seed and independent of launch shapes and of agent order. Angles are
//! kept in [0, 2π), and sines come from [`sin_cos`], a polynomial that is the same code on the
//! CPU and the GPU: every variant computes bit-identical agents and trails as the CPU
//! reference (deposits of one fixed amount give the same float whatever their order).
//!
//! The kernels follow the write-up's progression, and go past it:
//! 1. **unfused**: one kernel per PyTorch operation ([`physarum_offsets`], [`physarum_sample`],
//!    [`physarum_argmax`], [`physarum_steer`], [`physarum_move`], [`physarum_deposit`],
//!    [`physarum_blur`], [`physarum_blend`], [`physarum_decay`]): nine launches per step.
//! 2. **fused**: the write-up's Triton kernels: [`physarum_sense_move`] (sense, steer and
//!    move in registers), [`physarum_deposit`] (float atomics), [`physarum_diffuse_decay`].
//! 3. **optimized**: [`physarum_agents`] (struct-of-arrays state, deposit counted with integer
//!    atomics in the same pass, agents binned by tile every few steps so warps work on
//!    neighbours) and [`physarum_trail`] (the deposits, diffusion and decay in one
//!    shared-memory tiled pass that also clears last step's counts); below one agent per cell,
//!    [`physarum_agents_deposit`] and [`physarum_trail_deposited`] instead (float deposits into
//!    a copy of the trail, no counts), or [`physarum_agents_move`], [`physarum_deposit_soa`]
//!    and [`physarum_trail_once`] (float deposits in place, after the agents have sensed).

use ptxkit_device::kernel;
use ptxkit_device::{atomic::atomic_add_u32, memory::load_nc, shared_array, shared_f32, thread, warp};

/// 2π as an `f32`.
pub const TAU: f32 = core::f32::consts::TAU;

/// How sensors read the trail.
pub const SENSE_NEAREST: u32 = 0;
/// Bilinear interpolation between the four surrounding cell values.
pub const SENSE_BILINEAR: u32 = 1;

/// The model's parameters, passed to the kernels by value. Build with [`Params::new`], which
/// fills in the derived fields.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct Params {
    pub width: u32,
    pub height: u32,
    pub sensor_dist: f32,
    pub sensor_angle: f32,
    /// Heading change of a turn, radians.
    pub turn_angle: f32,
    pub step_size: f32,
    pub deposit: f32,
    /// Blend weight `s` of the 3×3 mean.
    pub diffuse: f32,
    /// Fraction of the trail lost per step.
    pub decay: f32,
    /// Largest random heading change per step, radians (0: none).
    pub jitter: f32,
    /// [`SENSE_NEAREST`] or [`SENSE_BILINEAR`].
    pub sensing: u32,
    /// Low 32 bits of the seed (the high bits are folded in by the host).
    pub seed: u32,
    /// cos and sin of `sensor_angle` (derived).
    pub cos_sensor: f32,
    pub sin_sensor: f32,
    /// cos and sin of `turn_angle` (derived).
    pub cos_turn: f32,
    pub sin_turn: f32,
}

impl Params {
    /// Parameters with the derived fields computed (by the same [`sin_cos`] everywhere).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        width: u32,
        height: u32,
        sensor_dist: f32,
        sensor_angle: f32,
        turn_angle: f32,
        step_size: f32,
        deposit: f32,
        diffuse: f32,
        decay: f32,
        jitter: f32,
        sensing: u32,
        seed: u32,
    ) -> Self {
        let (sin_sensor, cos_sensor) = sin_cos(wrap_angle(sensor_angle));
        let (sin_turn, cos_turn) = sin_cos(wrap_angle(turn_angle));
        Self {
            width,
            height,
            sensor_dist,
            sensor_angle,
            turn_angle,
            step_size,
            deposit,
            diffuse,
            decay,
            jitter,
            sensing,
            seed,
            cos_sensor,
            sin_sensor,
            cos_turn,
            sin_turn,
        }
    }
}

/// lowbias32 (Wellons): a fast 32-bit integer hash with good avalanche.
#[inline(always)]
pub fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

/// The counter-based random number of `agent` at `step`: a hash of (seed, agent, step).
#[inline(always)]
pub fn random_u32(seed: u32, agent: u32, step: u32) -> u32 {
    mix32(mix32(mix32(seed ^ 0x9e37_79b9) ^ agent) ^ step.wrapping_mul(0x85eb_ca6b))
}

/// The top 24 bits of `r` as a float in [0, 1).
#[inline(always)]
pub fn unit_f32(r: u32) -> f32 {
    (r >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// `x mod n` into [0, n) for a coordinate within one period of the grid, `x` in [−n, 2n)
/// (a position in [0, n) plus a move or sensor offset of at most `n`, which the host's
/// validation guarantees): one compare-and-add each way, no division. The second test also
/// catches `x + n` rounding up to `n` for a tiny negative `x`.
#[inline(always)]
pub fn wrap_coord(x: f32, n: f32) -> f32 {
    let mut r = x;
    if r < 0.0 {
        r += n;
    }
    if r >= n {
        r -= n;
    }
    r
}

/// An angle reduced into [0, 2π), from any finite angle.
#[inline(always)]
pub fn wrap_angle(a: f32) -> f32 {
    let mut r = a - core::f32::math::floor(a / TAU) * TAU;
    if r < 0.0 {
        r += TAU;
    }
    if r >= TAU { 0.0 } else { r }
}

/// (sin a, cos a): a quadrant reduction with a two-part π/2, then the Cephes single
/// precision polynomials on [−π/4, π/4]. The two parts leave out π/2's third (7.55e-8), so
/// the error is about 1 ulp plus 7.55e-8 per quarter turn reduced: below 4e-7 over the
/// angles the model passes, [0, 2π). The same code runs on the CPU and the GPU, so both get
/// the same bits.
#[inline(always)]
pub fn sin_cos(a: f32) -> (f32, f32) {
    const FRAC_2_PI: f32 = core::f32::consts::FRAC_2_PI;
    const PIO2_HI: f32 = 1.570_312_5; // π/2 to 11 bits: k·PIO2_HI is exact for small k
    const PIO2_LO: f32 = 4.837_512_7e-4; // π/2 − PIO2_HI
    let k = core::f32::math::floor(a * FRAC_2_PI + 0.5);
    let r = (a - k * PIO2_HI) - k * PIO2_LO;
    let z = r * r;
    let s = r + r * z * (-1.666_665_5e-1 + z * (8.332_161e-3 + z * -1.951_529_6e-4));
    let c = 1.0 - 0.5 * z + z * z * (4.166_664_6e-2 + z * (-1.388_731_6e-3 + z * 2.443_315_7e-5));
    match (k as i32) & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// The three sensing directions (unit vectors, (dy, dx)): front, left (+angle), right
/// (−angle), from the heading's sine and cosine by rotation.
#[inline(always)]
pub fn sensor_dirs(heading: f32, p: &Params) -> [(f32, f32); 3] {
    let (s, c) = sin_cos(heading);
    let (cs, ss) = (p.cos_sensor, p.sin_sensor);
    [(s, c), (s * cs + c * ss, c * cs - s * ss), (s * cs - c * ss, c * cs + s * ss)]
}

/// The point at distance `dist` along `dir` from (y, x), wrapped onto the grid.
#[inline(always)]
pub fn ahead(y: f32, x: f32, dir: (f32, f32), dist: f32, p: &Params) -> (f32, f32) {
    (wrap_coord(y + dist * dir.0, p.height as f32), wrap_coord(x + dist * dir.1, p.width as f32))
}

/// The flat index of the cell containing the wrapped point (y, x).
#[inline(always)]
pub fn cell_of(y: f32, x: f32, p: &Params) -> usize {
    let iy = (y as u32).min(p.height - 1);
    let ix = (x as u32).min(p.width - 1);
    iy as usize * p.width as usize + ix as usize
}

/// The trail at the wrapped point (y, x), by `p.sensing`; `read(i)` returns cell `i`.
#[inline(always)]
pub fn sample<F: Fn(usize) -> f32>(read: &F, y: f32, x: f32, p: &Params) -> f32 {
    if p.sensing == SENSE_NEAREST {
        return read(cell_of(y, x, p));
    }
    let (y0f, x0f) = (core::f32::math::floor(y), core::f32::math::floor(x));
    let (fy, fx) = (y - y0f, x - x0f);
    let y0 = (y0f as u32).min(p.height - 1);
    let x0 = (x0f as u32).min(p.width - 1);
    let y1 = if y0 + 1 == p.height { 0 } else { y0 + 1 };
    let x1 = if x0 + 1 == p.width { 0 } else { x0 + 1 };
    let w = p.width as usize;
    let at = |yy: u32, xx: u32| read(yy as usize * w + xx as usize);
    let top = (1.0 - fx) * at(y0, x0) + fx * at(y0, x1);
    let bottom = (1.0 - fx) * at(y1, x0) + fx * at(y1, x1);
    (1.0 - fy) * top + fy * bottom
}

/// Keep the heading.
pub const TURN_NONE: i32 = 0;
/// Turn by +`turn_angle`.
pub const TURN_LEFT: i32 = 1;
/// Turn by −`turn_angle`.
pub const TURN_RIGHT: i32 = -1;

/// The steering decision from the three readings, with the documented tie rules: the front
/// wins any tie it is part of; left and right equal and above the front: a random side
/// (bit 0 of `random`).
#[inline(always)]
pub fn choose_turn(front: f32, left: f32, right: f32, random: u32) -> i32 {
    if front >= left && front >= right {
        TURN_NONE
    } else if left > right {
        TURN_LEFT
    } else if right > left {
        TURN_RIGHT
    } else if random & 1 == 0 {
        TURN_LEFT
    } else {
        TURN_RIGHT
    }
}

/// The new heading after `turn`, plus the jitter drawn from bits 8..32 of `random`.
#[inline(always)]
pub fn steer(heading: f32, turn: i32, random: u32, p: &Params) -> f32 {
    let mut h = heading + turn as f32 * p.turn_angle;
    if p.jitter > 0.0 {
        h += p.jitter * (2.0 * unit_f32(random) - 1.0);
    }
    wrap_angle(h)
}

/// The direction an agent moves in, that of its new heading: without jitter, the front
/// direction `dirs[0]` rotated by the turn (the same expressions as [`sensor_dirs`], so with
/// `turn_angle = sensor_angle` it is exactly the sensed direction); with jitter, from the
/// new heading itself.
#[inline(always)]
pub fn move_dir(dirs: &[(f32, f32); 3], turn: i32, new_heading: f32, p: &Params) -> (f32, f32) {
    if p.jitter > 0.0 {
        return sin_cos(new_heading);
    }
    let (s, c) = dirs[0];
    let (ct, st) = (p.cos_turn, p.sin_turn);
    match turn {
        TURN_LEFT => (s * ct + c * st, c * ct - s * st),
        TURN_RIGHT => (s * ct - c * st, c * ct + s * st),
        _ => dirs[0],
    }
}

/// One agent's whole step (sense, steer, move): the new (y, x, heading).
#[inline(always)]
pub fn agent_step<F: Fn(usize) -> f32>(
    read: &F,
    y: f32,
    x: f32,
    heading: f32,
    agent: u32,
    step: u32,
    p: &Params,
) -> (f32, f32, f32) {
    let dirs = sensor_dirs(heading, p);
    let [front, left, right] = dirs.map(|d| {
        let (sy, sx) = ahead(y, x, d, p.sensor_dist, p);
        sample(read, sy, sx, p)
    });
    let random = random_u32(p.seed, agent, step);
    let turn = choose_turn(front, left, right, random);
    let new_heading = steer(heading, turn, random, p);
    let (ny, nx) = ahead(y, x, move_dir(&dirs, turn, new_heading, p), p.step_size, p);
    (ny, nx, new_heading)
}

/// The sum of the 3×3 neighbourhood, in a fixed order (rows top to bottom, left to right).
#[inline(always)]
pub fn sum9(rows: [[f32; 3]; 3]) -> f32 {
    let r = rows.map(|r| r[0] + r[1] + r[2]);
    r[0] + r[1] + r[2]
}

/// The 3×3 mean from [`sum9`].
#[inline(always)]
pub fn mean9(sum: f32) -> f32 {
    sum * (1.0 / 9.0)
}

/// `(1−s)·t + s·mean`.
#[inline(always)]
pub fn blend(t: f32, mean: f32, p: &Params) -> f32 {
    (1.0 - p.diffuse) * t + p.diffuse * mean
}

/// `t·(1−decay)`.
#[inline(always)]
pub fn decay(t: f32, p: &Params) -> f32 {
    t * (1.0 - p.decay)
}

/// A cell's trail after `count` deposits, added one at a time (the same float as `count`
/// atomic adds of `deposit` in any order).
#[inline(always)]
pub fn add_deposits(mut t: f32, count: u32, p: &Params) -> f32 {
    for _ in 0..count {
        t += p.deposit;
    }
    t
}

/// [`add_deposits`], bit for bit, without the loop where that is provably the same: `r =
/// fma(count, deposit, t)` rounds once; when `t ≥ 0`, `deposit > 0` and both are multiples of
/// `q`, the spacing of floats at `r`, every partial sum `t + j·deposit` (j ≤ count) is a
/// multiple of `q` no larger than the exact total, which `r` represents exactly (a multiple of
/// `q` below `2²⁴·q`); so each add of the loop is exact and ends at `r`. Otherwise (a sum that
/// crosses into a coarser binade, a `deposit` finer than `q`, tiny or non-finite values) it
/// adds one at a time. A warp no longer waits for its busiest cell's loop.
#[inline(always)]
pub fn add_deposits_fast(t: f32, count: u32, p: &Params) -> f32 {
    let d = p.deposit;
    if count < 2 {
        return if count == 1 { t + d } else { t };
    }
    let r = core::f32::math::mul_add(count as f32, d, t);
    if deposits_add_exactly(t, d, r) { r } else { add_deposits(t, count, p) }
}

/// Whether any `count` adds of `d` onto `t` are each exact and end at `r = fma(count, d, t)`
/// ([`add_deposits_fast`]'s condition): `t ≥ 0`, `d > 0`, both multiples of `q`, the
/// spacing of floats at `r`, and `count < 2²⁴`. The tests below check that `t` is 0 or a
/// positive multiple (at least q) and `d` a positive multiple; the count follows (else
/// `count·d ≥ 2²⁴·q`, past `r`'s binade).
#[inline(always)]
pub fn deposits_add_exactly(t: f32, d: f32, r: f32) -> bool {
    let exponent = (r.to_bits() >> 23) & 0xff;
    // 1/q = 2^(150 − exponent) is a normal float for exponents 24..=254.
    if !(24..255).contains(&exponent) {
        return false;
    }
    let inverse_q = f32::from_bits((277 - exponent) << 23);
    // Both scaled exactly (by a power of two) unless they underflow, which the ≥ 1 tests
    // rule out: a positive multiple of q is at least q.
    let (tq, dq) = (t * inverse_q, d * inverse_q);
    let whole = |v: f32| v == core::f32::math::floor(v);
    (t == 0.0 || tq >= 1.0) && dq >= 1.0 && whole(tq) && whole(dq)
}

/// The flat indices of row `y`'s periodic neighbours above and below, and of column `x`'s
/// left and right: `([up, here, down] row starts, [left, x, right])`.
#[inline(always)]
pub fn neighbourhood(x: u32, y: u32, p: &Params) -> ([usize; 3], [usize; 3]) {
    let (w, h) = (p.width, p.height);
    let up = if y == 0 { h - 1 } else { y - 1 };
    let down = if y + 1 == h { 0 } else { y + 1 };
    let left = if x == 0 { w - 1 } else { x - 1 };
    let right = if x + 1 == w { 0 } else { x + 1 };
    let row = |r: u32| r as usize * w as usize;
    ([row(up), row(y), row(down)], [left as usize, x as usize, right as usize])
}

// ---------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------

/// Unfused 1/9, "offsets": the three sensing directions of each agent.
///
/// Thread mapping: one thread per agent. Bytes per agent: reads the heading (4 B), writes
/// six floats (24 B).
#[kernel]
pub unsafe fn physarum_offsets(heading: *const f32, dirs: *mut [f32; 6], n: u32, p: Params) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n, the length of both arrays.
    unsafe {
        let d = sensor_dirs(*heading.add(i as usize), &p);
        *dirs.add(i as usize) = [d[0].0, d[0].1, d[1].0, d[1].1, d[2].0, d[2].1];
    }
}

/// Unfused 2/9, "sample": the sensor points and the trail there.
///
/// Thread mapping: one thread per agent. Bytes per agent: reads the position and directions
/// (32 B) and three trail values (scattered), writes three readings (12 B).
#[kernel]
pub unsafe fn physarum_sample(
    pos: *const [f32; 2],
    dirs: *const [f32; 6],
    trail: *const f32,
    readings: *mut [f32; 3],
    n: u32,
    p: Params,
) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n; cell indices are inside the trail by construction.
    unsafe {
        let [y, x] = *pos.add(i);
        let d = *dirs.add(i);
        let read = |c: usize| *trail.add(c);
        let mut out = [0.0f32; 3];
        for (k, o) in out.iter_mut().enumerate() {
            let (sy, sx) = ahead(y, x, (d[2 * k], d[2 * k + 1]), p.sensor_dist, &p);
            *o = sample(&read, sy, sx, &p);
        }
        *readings.add(i) = out;
    }
}

/// Unfused 3/9, "argmax": the turn chosen from the readings, ties broken by the rules.
///
/// Thread mapping: one thread per agent. Bytes per agent: 12 B read, 4 B written.
#[kernel]
pub unsafe fn physarum_argmax(readings: *const [f32; 3], turns: *mut i32, n: u32, step: u32, p: Params) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n.
    unsafe {
        let [front, left, right] = *readings.add(i as usize);
        *turns.add(i as usize) = choose_turn(front, left, right, random_u32(p.seed, i, step));
    }
}

/// Unfused 4/9, "steer": the new heading.
///
/// Thread mapping: one thread per agent. Bytes per agent: 8 B read, 4 B written.
#[kernel]
pub unsafe fn physarum_steer(heading: *mut f32, turns: *const i32, n: u32, step: u32, p: Params) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n.
    unsafe {
        let h = heading.add(i as usize);
        *h = steer(*h, *turns.add(i as usize), random_u32(p.seed, i, step), &p);
    }
}

/// Unfused 5/9, "move": one step along the chosen direction, wrapped.
///
/// Thread mapping: one thread per agent. Bytes per agent: 40 B read, 8 B written.
#[kernel]
pub unsafe fn physarum_move(
    pos: *mut [f32; 2],
    dirs: *const [f32; 6],
    turns: *const i32,
    heading: *const f32,
    n: u32,
    p: Params,
) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n.
    unsafe {
        let d = *dirs.add(i);
        let dirs3 = [(d[0], d[1]), (d[2], d[3]), (d[4], d[5])];
        let dir = move_dir(&dirs3, *turns.add(i), *heading.add(i), &p);
        let [y, x] = *pos.add(i);
        let (ny, nx) = ahead(y, x, dir, p.step_size, &p);
        *pos.add(i) = [ny, nx];
    }
}

/// Unfused 6/9 and fused 2/3, "deposit": `deposit` added atomically to the agent's cell (the
/// write-up's `tl.atomic_add`).
///
/// Thread mapping: one thread per agent. Bytes per agent: 8 B read, one 4 B atomic.
#[kernel]
pub unsafe fn physarum_deposit(pos: *const [f32; 2], trail: *mut f32, n: u32, p: Params) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n; the cell is inside the trail.
    unsafe {
        let [y, x] = *pos.add(i);
        ptxkit_device::atomic::atomic_add_f32(trail.add(cell_of(y, x, &p)), p.deposit);
    }
}

/// The 3×3 neighbourhood of (x, y) read from `trail`.
#[inline(always)]
unsafe fn gather9(trail: *const f32, x: u32, y: u32, p: &Params) -> [[f32; 3]; 3] {
    let (rows, cols) = neighbourhood(x, y, p);
    // SAFETY: all indices lie inside the trail.
    rows.map(|r| cols.map(|c| unsafe { load_nc(trail.add(r + c)) }))
}

/// Unfused 7/9, "blur": the 3×3 periodic mean.
///
/// Thread mapping: one thread per cell of a 2-D launch. Bytes per cell: 4 B read (the other
/// eight reads hit in cache), 4 B written.
#[kernel]
pub unsafe fn physarum_blur(trail: *const f32, mean: *mut f32, p: Params) {
    let (x, y) = thread::index_2d();
    if x >= p.width || y >= p.height {
        return;
    }
    // SAFETY: inside the grid.
    unsafe { *mean.add(y as usize * p.width as usize + x as usize) = mean9(sum9(gather9(trail, x, y, &p))) }
}

/// Unfused 8/9, "blend": `t ← (1−s)·t + s·mean`.
///
/// Thread mapping: one thread per cell. Bytes per cell: 8 B read, 4 B written.
#[kernel]
pub unsafe fn physarum_blend(trail: *mut f32, mean: *const f32, cells: u32, p: Params) {
    let i = thread::index_1d() as usize;
    if i >= cells as usize {
        return;
    }
    // SAFETY: i < cells.
    unsafe { *trail.add(i) = blend(*trail.add(i), *mean.add(i), &p) }
}

/// Unfused 9/9, "decay": `t ← t·(1−decay)`.
///
/// Thread mapping: one thread per cell. Bytes per cell: 4 B read, 4 B written.
#[kernel]
pub unsafe fn physarum_decay(trail: *mut f32, cells: u32, p: Params) {
    let i = thread::index_1d() as usize;
    if i >= cells as usize {
        return;
    }
    // SAFETY: i < cells.
    unsafe { *trail.add(i) = decay(*trail.add(i), &p) }
}

/// Fused 1/3, the write-up's `agent_sense_and_update_kernel`: sense, steer and move in
/// registers, state as in the write-up (positions interleaved (y, x), headings apart).
///
/// Thread mapping: one thread per agent. Bytes per agent: 12 B read and 12 B written, plus
/// three (nearest) or twelve (bilinear) scattered trail reads.
#[kernel]
pub unsafe fn physarum_sense_move(
    pos: *mut [f32; 2],
    heading: *mut f32,
    trail: *const f32,
    n: u32,
    step: u32,
    p: Params,
) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n; trail reads are inside the grid.
    unsafe {
        let [y, x] = *pos.add(i as usize);
        let read = |c: usize| load_nc(trail.add(c));
        let (ny, nx, nh) = agent_step(&read, y, x, *heading.add(i as usize), i, step, &p);
        *pos.add(i as usize) = [ny, nx];
        *heading.add(i as usize) = nh;
    }
}

/// Fused 3/3: diffusion and decay in one pass, `dst = decay(blend(src, mean₃ₓ₃(src)))`.
///
/// Thread mapping: one thread per cell of a 2-D launch. Bytes per cell: 4 B read (the other
/// eight reads hit in cache), 4 B written.
#[kernel]
pub unsafe fn physarum_diffuse_decay(src: *const f32, dst: *mut f32, p: Params) {
    let (x, y) = thread::index_2d();
    if x >= p.width || y >= p.height {
        return;
    }
    // SAFETY: inside the grid.
    unsafe {
        let n = gather9(src, x, y, &p);
        *dst.add(y as usize * p.width as usize + x as usize) = decay(blend(n[1][1], mean9(sum9(n)), &p), &p);
    }
}

/// Optimized 1/5: sense, steer, move and deposit in one pass over struct-of-arrays state.
///
/// - Struct of arrays (`y`, `x`, `heading` apart): every load and store of agent state is a
///   fully coalesced 128-byte line per warp, where the write-up's interleaved positions
///   need two.
/// - The deposit is counted (`counts[cell] += 1`, an integer atomic) in the same pass, so
///   the separate deposit pass and its re-read of the positions are gone; counting instead
///   of adding floats keeps the trail bit-identical with the CPU, since
///   [`physarum_trail`] adds the deposits with the bits of adding them one by one.
/// - Agents are kept binned by 8×8 tile (16×16 below one agent per cell; [`physarum_bin_count`], [`physarum_bin_scan`],
///   [`physarum_bin_scatter`] every few steps), so a warp's agents are neighbours: their
///   sensor reads share cache lines, and agents on the same cell share one atomic (lanes
///   with equal cells are found with `match.any`, the lowest adds the group's count).
/// - Random numbers use the agent's id (`ids`), which travels with it through the binning,
///   so results do not depend on where an agent is stored.
///
/// Thread mapping: one thread per agent slot. Bytes per agent: 16 B read, 12 B written,
/// three trail reads (mostly L1 hits once binned) and at most one atomic.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn physarum_agents(
    ys: *mut f32,
    xs: *mut f32,
    heading: *mut f32,
    ids: *const u32,
    trail: *const f32,
    counts: *mut u32,
    n: u32,
    step: u32,
    p: Params,
) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n; the cell is inside the grid.
    unsafe {
        let cell = step_agent_slot(ys, xs, heading, ids, trail, i as usize, step, &p);
        let peers = warp::match_any(warp::active_mask(), cell as u32);
        if lane_of_1d_block() == peers.trailing_zeros() {
            atomic_add_u32(counts.add(cell), peers.count_ones());
        }
    }
}

/// [`physarum_agents`] depositing floats: every agent adds `deposit` to its new cell of
/// `deposited` (a copy of `trail` made by the last trail pass) with its own reduction
/// (`red.global.add.f32`), instead of counting. Adds of one fixed amount give the same float in
/// any order, so this is bit-identical too; it spares the trail pass the counts (8 of its 17
/// bytes per cell) at the price of one atomic per agent (no `match.any` groups: a group's sum
/// in one add would round differently).
///
/// Thread mapping: one thread per agent slot. Bytes per agent: 16 B read, 12 B written, three
/// trail reads, one float reduction.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn physarum_agents_deposit(
    ys: *mut f32,
    xs: *mut f32,
    heading: *mut f32,
    ids: *const u32,
    trail: *const f32,
    deposited: *mut f32,
    n: u32,
    step: u32,
    p: Params,
) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n; the cell is inside the grid.
    unsafe {
        let cell = step_agent_slot(ys, xs, heading, ids, trail, i as usize, step, &p);
        ptxkit_device::atomic::atomic_add_f32(deposited.add(cell), p.deposit);
    }
}

/// [`physarum_agents`] without a deposit: sense, steer and move only. With in-place deposits
/// [`physarum_deposit_soa`] adds them afterwards, to the trail these agents sensed, so that
/// the trail pass ([`physarum_trail_once`]) writes the new trail once instead of twice.
///
/// Thread mapping: one thread per agent slot. Bytes per agent: 16 B read, 12 B written, three
/// trail reads.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn physarum_agents_move(
    ys: *mut f32,
    xs: *mut f32,
    heading: *mut f32,
    ids: *const u32,
    trail: *const f32,
    n: u32,
    step: u32,
    p: Params,
) {
    let i = thread::index_1d();
    if i >= n {
        return;
    }
    // SAFETY: i < n.
    unsafe { step_agent_slot(ys, xs, heading, ids, trail, i as usize, step, &p) };
}

/// The optimized variant's deposit with in-place deposits: every agent adds `deposit` to its
/// cell of `trail` with a float reduction (`red.global.add.f32`), after
/// [`physarum_agents_move`] has finished sensing that trail. Adds of one fixed amount give the
/// same float in any order, so this is bit-identical to the CPU's loop, as
/// [`physarum_agents_deposit`] is; the agents are binned, so a warp's reductions fall on
/// neighbouring cells.
///
/// Thread mapping: one thread per agent slot. Bytes per agent: 8 B read (the positions the
/// agent pass has just written, mostly L2 hits), one float reduction.
#[kernel]
pub unsafe fn physarum_deposit_soa(ys: *const f32, xs: *const f32, trail: *mut f32, n: u32, p: Params) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n; the cell is inside the trail.
    unsafe {
        let cell = cell_of(*ys.add(i), *xs.add(i), &p);
        ptxkit_device::atomic::atomic_add_f32(trail.add(cell), p.deposit);
    }
}

/// Steps the agent in slot `k` (sensing `trail` through the read-only cache), stores its new
/// state and returns its new cell.
///
/// # Safety
/// `k` must be a slot of the agent arrays; `trail` must hold the grid and not be written
/// during the kernel.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn step_agent_slot(
    ys: *mut f32,
    xs: *mut f32,
    heading: *mut f32,
    ids: *const u32,
    trail: *const f32,
    k: usize,
    step: u32,
    p: &Params,
) -> usize {
    // SAFETY: the caller vouches for the slot and the trail; sensed cells are inside the grid.
    unsafe {
        let read = |c: usize| load_nc(trail.add(c));
        let (ny, nx, nh) = agent_step(&read, *ys.add(k), *xs.add(k), *heading.add(k), *ids.add(k), step, p);
        *ys.add(k) = ny;
        *xs.add(k) = nx;
        *heading.add(k) = nh;
        cell_of(ny, nx, p)
    }
}

/// log2 of the side of the square tiles that the optimized variant bins agents by (8).
pub const OPTIMIZED_BIN_SHIFT: u32 = 3;
/// Threads of the one-block [`physarum_bin_scan`].
pub const SCAN_THREADS: u32 = 1024;

/// Tiles of side `1 << shift` across the grid.
#[inline(always)]
pub fn bins_x(p: &Params, shift: u32) -> u32 {
    p.width.div_ceil(1 << shift)
}

/// Number of bins of side `1 << shift` of the grid.
#[inline(always)]
pub fn bin_count(p: &Params, shift: u32) -> u32 {
    bins_x(p, shift) * p.height.div_ceil(1 << shift)
}

/// The bin (tile of side `1 << shift`, row-major) of the wrapped point (y, x).
#[inline(always)]
pub fn bin_of(y: f32, x: f32, p: &Params, shift: u32) -> u32 {
    let iy = (y as u32).min(p.height - 1);
    let ix = (x as u32).min(p.width - 1);
    (iy >> shift) * bins_x(p, shift) + (ix >> shift)
}

/// Optimized 3/5, binning: agents per bin of side `1 << shift` (`bins` zeroed before).
///
/// Thread mapping: one thread per agent. Bytes per agent: 8 B read, one atomic.
#[kernel]
pub unsafe fn physarum_bin_count(
    ys: *const f32,
    xs: *const f32,
    bins: *mut u32,
    n: u32,
    p: Params,
    shift: u32,
) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n; the bin is inside `bins`.
    unsafe {
        let bin = bin_of(*ys.add(i), *xs.add(i), &p, shift);
        let peers = warp::match_any(warp::active_mask(), bin);
        if lane_of_1d_block() == peers.trailing_zeros() {
            atomic_add_u32(bins.add(bin as usize), peers.count_ones());
        }
    }
}

/// Optimized 4/5, binning: exclusive prefix sum of the bin counts, in place, by one block
/// walking the bins in tiles of one value per thread: each warp scans its 32 values with
/// shuffles, the first warp scans the warps' totals, and a running carry joins the tiles.
/// Every load and store is coalesced, and no thread works alone.
///
/// Thread mapping: one block of [`SCAN_THREADS`] (any multiple of 32 up to 1024 works).
/// Bytes per bin: 4 B read, 4 B written.
#[kernel]
pub unsafe fn physarum_bin_scan(bins: *mut u32, count: u32) {
    let totals: *mut u32 = shared_array!(physarum_scan_totals: [u32; 32]);
    let (t, lane) = (thread::thread_idx_x(), lane_of_1d_block());
    let (w, warps) = (t / warp::SIZE, thread::block_dim_x() / warp::SIZE);
    let inclusive_warp_scan = |mut x: u32| {
        let mut d = 1;
        while d < warp::SIZE {
            let y = warp::shfl_up_u32(x, d);
            if lane >= d {
                x += y;
            }
            d *= 2;
        }
        x
    };
    let mut carry = 0u32;
    let mut base = 0u32;
    while base < count {
        let i = base + t;
        // SAFETY: i < count; warp indices are below 32.
        unsafe {
            let v = if i < count { *bins.add(i as usize) } else { 0 };
            let x = inclusive_warp_scan(v);
            if lane == warp::SIZE - 1 {
                *totals.add(w as usize) = x;
            }
            thread::sync_threads();
            if w == 0 {
                let s = if lane < warps { *totals.add(lane as usize) } else { 0 };
                let scanned = inclusive_warp_scan(s);
                if lane < warps {
                    *totals.add(lane as usize) = scanned;
                }
            }
            thread::sync_threads();
            let before = if w == 0 { 0 } else { *totals.add(w as usize - 1) };
            if i < count {
                *bins.add(i as usize) = carry + before + x - v;
            }
            carry += *totals.add(warps as usize - 1);
            // Nobody may overwrite the totals before every thread has read them.
            thread::sync_threads();
        }
        base += thread::block_dim_x();
    }
}

/// Optimized 5/5, binning: each agent takes the next slot of its bin (`offsets` from
/// [`physarum_bin_scan`]) and is copied there with its id; afterwards `offsets[b]` is the end
/// of bin b's slots. The lanes of a warp whose agents share a bin (found with `match.any`)
/// take consecutive slots, the lowest of them reserving them all with one atomic: with
/// hundreds of agents per bin, one atomic per agent on the same counter serialised in L2 (10M
/// agents in 8 × 8 bins, binned every 16 steps, on an H200: 0.2075 against 0.1816 ms per
/// step, so about 0.4 ms less per binning). The order
/// inside a bin depends on atomics, which is harmless: nothing in a step depends on where an
/// agent is stored.
///
/// Thread mapping: one thread per agent. Bytes per agent: 16 B read, 16 B written, one atomic
/// per bin and warp.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub unsafe fn physarum_bin_scatter(
    ys: *const f32,
    xs: *const f32,
    heading: *const f32,
    ids: *const u32,
    offsets: *mut u32,
    out_ys: *mut f32,
    out_xs: *mut f32,
    out_heading: *mut f32,
    out_ids: *mut u32,
    n: u32,
    p: Params,
    shift: u32,
) {
    let i = thread::index_1d() as usize;
    if i >= n as usize {
        return;
    }
    // SAFETY: i < n; slots are a permutation of 0..n (offsets count every agent once, and a
    // group's lowest lane reserves one slot per member).
    unsafe {
        let (y, x) = (*ys.add(i), *xs.add(i));
        let bin = bin_of(y, x, &p, shift);
        let peers = warp::match_any(warp::active_mask(), bin);
        let leader = peers.trailing_zeros();
        let first = if lane_of_1d_block() == leader {
            atomic_add_u32(offsets.add(bin as usize), peers.count_ones())
        } else {
            0
        };
        let slot =
            (warp::shfl_idx_u32(peers, first, leader) + (peers & warp::lanes_below()).count_ones()) as usize;
        *out_ys.add(slot) = y;
        *out_xs.add(slot) = x;
        *out_heading.add(slot) = *heading.add(i);
        *out_ids.add(slot) = *ids.add(i);
    }
}

/// Block width of [`physarum_trail`].
pub const TRAIL_W: u32 = 32;
/// Block height of [`physarum_trail`].
pub const TRAIL_H: u32 = 8;

/// Output tile of [`physarum_trail`]: `TRAIL_TILE × TRAIL_TILE` cells per block of
/// `TRAIL_W × TRAIL_H` (32 × 8) threads, each thread a column of [`TRAIL_ROWS`] cells.
pub const TRAIL_TILE: u32 = 32;
/// Cells per thread of [`physarum_trail`] (consecutive rows of one column).
pub const TRAIL_ROWS: u32 = TRAIL_TILE / TRAIL_H;
const TRAIL_PITCH: u32 = TRAIL_TILE + 2;

/// Optimized 2/5: deposits, diffusion and decay in one tiled pass.
///
/// Each block stages its 32 × 32 tile and a one-cell halo (34 × 34 cells, by a flat index:
/// about 4.5 a thread, all loads issued before any arithmetic; blocks away from the grid's
/// edges index without wrapping) in shared memory as `trail +
/// deposits`, the deposits added by [`add_deposits_fast`] (the same float as adding them one
/// by one, mostly without the loop); each thread then slides a 3 × 3 window down its four
/// cells (three new shared loads per cell) and writes the new trail and a zero count. Counts
/// come in two buffers used in turn: this pass reads `counts` (neighbouring blocks read each
/// other's halo counts, so none may clear them) and clears `clear`, last step's counts, which
/// the next step's agents count into. (Measured against it on an H200, 2026-11-25: the first
/// version, 32 × 8 cells a block, one a thread, deposits added in a loop, was 9% slower per
/// step at 1M agents; staging by rows, the halo columns on lanes 0 and 1, 1-3% slower;
/// wrapping every index in interior blocks too, 1-3% slower; adding the deposits binade by
/// binade with an integer division, 50% slower.)
///
/// Thread mapping: blocks of 32 × 8 threads over 32 × 32 cells; thread (tx, ty) owns column
/// tx of rows 4·ty .. 4·ty + 4. Bytes per cell: reads trail and count (8 B, plus 13% halo
/// re-reads), writes the new trail and a zero count (8 B): about 17 B.
#[kernel]
pub unsafe fn physarum_trail(src: *const f32, counts: *const u32, clear: *mut u32, dst: *mut f32, p: Params) {
    let tile = shared_f32!(physarum_trail_tile: TRAIL_SPAN as usize);
    unsafe { trail_body::<true, false>(tile, src, counts, clear, dst, dst, p) }
}

/// [`physarum_trail`] for [`physarum_agents_deposit`]: `src` already holds the deposits, and
/// the new trail is written twice, to `dst` (what the next step's agents sense) and to `copy`
/// (what they deposit into).
///
/// Thread mapping as [`physarum_trail`]. Bytes per cell: reads the trail (4 B, plus 13% halo
/// re-reads), writes it twice (8 B): about 12.5 B.
#[kernel]
pub unsafe fn physarum_trail_deposited(src: *const f32, dst: *mut f32, copy: *mut f32, p: Params) {
    let tile = shared_f32!(physarum_trail_deposited_tile: TRAIL_SPAN as usize);
    unsafe { trail_body::<false, true>(tile, src, core::ptr::null(), core::ptr::null_mut(), dst, copy, p) }
}

/// [`physarum_trail`] for in-place deposits ([`physarum_agents_move`], then
/// [`physarum_deposit_soa`]): `src` already holds the deposits, and the new trail is written
/// once, to `dst`, which the next step's agents sense and then deposit into.
///
/// Thread mapping as [`physarum_trail`]. Bytes per cell: reads the trail (4 B, plus 13% halo
/// re-reads), writes it once (4 B): about 8.5 B.
#[kernel]
pub unsafe fn physarum_trail_once(src: *const f32, dst: *mut f32, p: Params) {
    let tile = shared_f32!(physarum_trail_once_tile: TRAIL_SPAN as usize);
    let (counts, clear, copy) = (core::ptr::null(), core::ptr::null_mut(), core::ptr::null_mut());
    unsafe { trail_body::<false, false>(tile, src, counts, clear, dst, copy, p) }
}

const TRAIL_SPAN: u32 = TRAIL_PITCH * TRAIL_PITCH;
const TRAIL_THREADS: u32 = TRAIL_W * TRAIL_H;
const TRAIL_STAGED: usize = TRAIL_SPAN.div_ceil(TRAIL_THREADS) as usize;

/// This thread's cells of a trail tile (tile cell `k = 34·ly + lx` for `k = t, t + 256, ...`),
/// trail and count, read from grid cell `index(ly, lx)`; every load issued before any is used.
///
/// # Safety
/// `index` must give cells of the grid.
#[inline(always)]
unsafe fn stage_trail<const COUNTS: bool>(
    t: u32,
    src: *const f32,
    counts: *const u32,
    index: impl Fn(u32, u32) -> usize,
) -> [(f32, u32); TRAIL_STAGED] {
    let mut staged = [(0.0f32, 0u32); TRAIL_STAGED];
    for (i, value) in staged.iter_mut().enumerate() {
        let k = t + i as u32 * TRAIL_THREADS;
        if k < TRAIL_SPAN {
            let c = index(k / TRAIL_PITCH, k % TRAIL_PITCH);
            // SAFETY: c is a cell of the grid.
            unsafe { *value = (load_nc(src.add(c)), if COUNTS { *counts.add(c) } else { 0 }) };
        }
    }
    staged
}

/// The trail pass: `COUNTS`, deposits counted in `counts` (cleared in `clear`), else already
/// in `src`; `COPY`, the new trail also written to `copy`.
#[inline(always)]
unsafe fn trail_body<const COUNTS: bool, const COPY: bool>(
    tile: ptxkit_device::SharedF32,
    src: *const f32,
    counts: *const u32,
    clear: *mut u32,
    dst: *mut f32,
    copy: *mut f32,
    p: Params,
) {
    const THREADS: u32 = TRAIL_THREADS;
    const SPAN: u32 = TRAIL_SPAN;
    let (tx, ty) = (thread::thread_idx_x(), thread::thread_idx_y());
    let (x0, y0) = (thread::block_idx_x() * TRAIL_TILE, thread::block_idx_y() * TRAIL_TILE);
    let (w, h) = (p.width, p.height);
    if w == 0 || h == 0 {
        return;
    }
    // Tile cell k = 34·ly + lx is grid cell (y0 − 1 + ly, x0 − 1 + lx), periodic: a block whose
    // tile and halo lie inside the grid (all but the edge blocks) indexes without wrapping.
    let wrap = crate::math::wrap_into;
    let t = ty * TRAIL_W + tx;
    let inside = x0 >= 1 && x0 + TRAIL_PITCH - 1 <= w && y0 >= 1 && y0 + TRAIL_PITCH - 1 <= h;
    // SAFETY: both index the grid (inside: rows y0 − 1 ..= y0 + 32 and columns x0 − 1 ..= x0 + 32
    // are in it).
    let staged = unsafe {
        if inside {
            let corner = (y0 - 1) as usize * w as usize + (x0 - 1) as usize;
            stage_trail::<COUNTS>(t, src, counts, |ly, lx| corner + ly as usize * w as usize + lx as usize)
        } else {
            stage_trail::<COUNTS>(t, src, counts, |ly, lx| {
                wrap(y0 + ly + h - 1, h) as usize * w as usize + wrap(x0 + lx + w - 1, w) as usize
            })
        }
    };
    for (i, &(trail, count)) in staged.iter().enumerate() {
        let k = t + i as u32 * THREADS;
        if k < SPAN {
            // SAFETY: k lies in the tile.
            unsafe { tile.store(k, if COUNTS { add_deposits_fast(trail, count, &p) } else { trail }) };
        }
    }
    thread::sync_threads();
    let x = x0 + tx;
    if x >= w {
        return;
    }
    // SAFETY: lx ≤ tx + 2 < TRAIL_PITCH and ly ≤ 4·ty + 5 < TRAIL_PITCH.
    let three = |ly: u32| unsafe {
        let k = ly * TRAIL_PITCH + tx;
        [tile.load(k), tile.load(k + 1), tile.load(k + 2)]
    };
    let first = TRAIL_ROWS * ty;
    let (mut above, mut here) = (three(first), three(first + 1));
    for r in 0..TRAIL_ROWS {
        let below = three(first + r + 2);
        let y = y0 + first + r;
        if y < h {
            let c = y as usize * w as usize + x as usize;
            // SAFETY: c is inside the grid; `clear` is not read by this launch.
            unsafe {
                let next = decay(blend(here[1], mean9(sum9([above, here, below])), &p), &p);
                *dst.add(c) = next;
                if COUNTS {
                    *clear.add(c) = 0;
                } else if COPY {
                    *copy.add(c) = next;
                }
            }
        }
        (above, here) = (here, below);
    }
}

/// Threads per block of [`physarum_distance`].
pub const DISTANCE_BLOCK: u32 = 256;

/// The sensitivity analysis's distance: `out += Σ (a − b)²` over `cells` cells, in `f32`.
///
/// Thread mapping: a grid-stride loop over cells; each warp sums its lanes with shuffles and
/// lane 0 adds the warp's sum to `out` atomically. Bytes per cell: 8 B read.
#[kernel]
pub unsafe fn physarum_distance(a: *const f32, b: *const f32, cells: u32, out: *mut f32) {
    let mut sum = 0.0f32;
    let mut i = thread::index_1d();
    while i < cells {
        // SAFETY: i < cells, the length of both fields.
        let d = unsafe { load_nc(a.add(i as usize)) - load_nc(b.add(i as usize)) };
        sum += d * d;
        i += thread::grid_size_1d();
    }
    let mut delta = 16;
    while delta > 0 {
        sum += ptxkit_device::warp::shfl_down_f32(sum, delta);
        delta /= 2;
    }
    if thread::thread_idx_x().is_multiple_of(ptxkit_device::warp::SIZE) {
        // SAFETY: `out` is one valid f32.
        unsafe { ptxkit_device::atomic::atomic_add_f32(out, sum) };
    }
}

/// This thread's lane in a 1-D block whose size is a multiple of 32 (every Physarum launch):
/// `threadIdx.x % 32`, the same as `warp::lane()` there, from a register the kernel already
/// holds instead of a `%laneid` read (the PTX these kernels were measured with).
#[inline(always)]
fn lane_of_1d_block() -> u32 {
    thread::thread_idx_x() % warp::SIZE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(deposit: f32) -> Params {
        Params::new(64, 64, 5.0, 0.4, 0.4, 1.0, deposit, 0.5, 0.1, 0.0, SENSE_NEAREST, 1)
    }

    /// The fast path gives the loop's bits for every (trail, count, deposit) tried: random
    /// trails of every scale (including values just below a power of two, zero, subnormals,
    /// infinity and NaN), counts up to 5,000, and deposits both dyadic and not.
    #[test]
    fn fast_deposits_are_the_loops_bits() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let deposits = [1.0, 5.0, 0.5, 0.25, 3.0, 0.1, 0.3, 7.5e-3, 1e-6, 100.0, 1e30];
        let special = [0.0, -0.0, 1e-45, 1e-39, 0.999_999_9, 1.999_999_9, 15.999_999, 16_777_215.0, f32::MAX];
        let (mut fast, mut checked) = (0, 0);
        for &deposit in &deposits {
            let p = params(deposit);
            for i in 0..4000 {
                let r = next();
                let t = match i % 4 {
                    0 => special[(r % special.len() as u64) as usize],
                    // Any positive finite float, by its bits.
                    1 => f32::from_bits((r as u32) & 0x7f7f_ffff),
                    // Values near a power of two.
                    2 => {
                        f32::from_bits(((r as u32) % 40 + 110) << 23)
                            - f32::from_bits(((r >> 32) as u32) & 0x3ff)
                    }
                    _ => (r >> 40) as f32 / 16.0,
                };
                for count in [0, 1, 2, 3, 7, 31, 64, 255, 1000, 5000, (r >> 52) as u32] {
                    let (want, got) = (add_deposits(t, count, &p), add_deposits_fast(t, count, &p));
                    assert_eq!(got.to_bits(), want.to_bits(), "t {t:e} count {count} deposit {deposit:e}");
                    checked += 1;
                    if count >= 2 {
                        let r = core::f32::math::mul_add(count as f32, deposit, t);
                        fast += usize::from(deposits_add_exactly(t, deposit, r));
                    }
                }
            }
        }
        // The fast path is taken for a good share of them (a quarter: the dyadic deposits onto
        // most trails; the others are not provably exact), else it would be no faster.
        assert!(fast * 5 > checked, "{fast} of {checked}");
        for t in [f32::NAN, f32::INFINITY, -1.0, -0.5] {
            let p = params(1.0);
            assert_eq!(add_deposits_fast(t, 9, &p).to_bits(), add_deposits(t, 9, &p).to_bits(), "{t}");
        }
    }

    /// The fast path's condition, case by case: where the sum is provably exact it holds (so
    /// the loop is skipped), and where it is not it fails (so the loop runs).
    #[test]
    fn the_fast_path_is_taken_exactly_where_the_sum_is_provably_exact() {
        let exact = |t: f32, count: u32, d: f32| {
            deposits_add_exactly(t, d, core::f32::math::mul_add(count as f32, d, t))
        };
        // Whole numbers and dyadic fractions below 2²⁴ q.
        for (t, count, d) in [
            (16.0f32, 3u32, 1.0f32),
            (0.0, 5, 0.25),
            (1000.0, 7, 5.0),
            (0.5, 2, 0.5),
            (4.0, 100_000, 2.0),
            (0.0, (1 << 24) - 1, 1.0),
            (1.5, 3, 0.75),
        ] {
            assert!(exact(t, count, d), "{count} × {d} onto {t} is exact");
        }
        // A deposit that is no multiple of q, a negative or tiny trail, a negative deposit,
        // 2²⁴ deposits, a total past the largest float, a trail finer than q.
        for (t, count, d) in [
            (16.0f32, 3u32, 0.1f32),
            (-1.0, 3, 1.0),
            (1e-45, 3, 1.0),
            (16.0, 3, -1.0),
            (0.0, 1 << 24, 1.0),
            (f32::MAX, 2, f32::MAX),
            (16_777_216.0, 2, 1.0),
            (3.0, (1 << 24) - 1, 1.0),
        ] {
            assert!(!exact(t, count, d), "{count} × {d} onto {t} is not provably exact");
        }
    }

    // Independent references for the shared functions below: values from the definitions
    // (lowbias32's published constants, evaluated in Python; f64 trigonometry and
    // arithmetic), not from the functions under test. Each tolerance says where it comes from.

    /// The model's parameters with a given sensing rule and jitter, on a 64 × 48 grid.
    fn model(sensing: u32, jitter: f32) -> Params {
        Params::new(64, 48, 9.0, 0.5, 0.3, 1.5, 5.0, 0.25, 0.1, jitter, sensing, 7)
    }

    /// f64 `x mod n` into [0, n).
    fn wrapped(x: f64, n: f64) -> f64 {
        x.rem_euclid(n)
    }

    #[test]
    fn the_hash_is_lowbias32_and_the_random_numbers_its_three_rounds() {
        // lowbias32 (x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16),
        // evaluated in Python from its published definition.
        for (x, want) in [
            (0u32, 0u32),
            (1, 0x6889_90c0),
            (2, 0xd113_2181),
            (0xdead_beef, 0xe628_c683),
            (0xffff_ffff, 0x6768_824a),
            (12345, 0x912e_fcf7),
        ] {
            assert_eq!(mix32(x), want, "mix32({x:#x})");
        }
        // random_u32 = mix(mix(mix(seed ^ 0x9e3779b9) ^ agent) ^ step·0x85ebca6b), the same way.
        for (seed, agent, step, want) in [
            (1u32, 0u32, 0u32, 0xb98a_617eu32),
            (1, 1, 0, 0x6d9a_fc6c),
            (1, 0, 1, 0x352f_b7da),
            (0xabcd_ef01, 77, 1000, 0xfd1d_d2ad),
            (0, 0xffff_ffff, 0xffff_ffff, 0xafb4_0e4a),
        ] {
            assert_eq!(random_u32(seed, agent, step), want, "random_u32({seed:#x}, {agent}, {step})");
        }
    }

    #[test]
    fn unit_floats_are_the_top_24_bits_over_two_to_the_24() {
        for (r, want) in [
            (0u32, 0.0f64),
            (0xff, 0.0),
            (0x100, 1.0 / 16_777_216.0),
            (0x8000_0000, 0.5),
            (0xc000_00ff, 0.75),
            (0xffff_ffff, 16_777_215.0 / 16_777_216.0),
        ] {
            // Exact: a 24-bit integer times a power of two.
            assert_eq!(unit_f32(r) as f64, want, "unit_f32({r:#x})");
        }
    }

    #[test]
    fn coordinates_wrap_into_the_grid() {
        for (x, n, want) in [
            (-0.5f32, 64.0f32, 63.5f32),
            (-64.0, 64.0, 0.0),
            (64.0, 64.0, 0.0),
            (70.25, 64.0, 6.25),
            (127.5, 64.0, 63.5),
            // x + n rounds up to n for a tiny negative x: the second test brings it to 0.
            (-1e-10, 64.0, 0.0),
        ] {
            assert_eq!(wrap_coord(x, n), want, "wrap_coord({x}, {n})");
        }
        // A coordinate inside the grid comes back with its bits, -0.0 included.
        for x in [0.0f32, -0.0, 5.5, 63.999_996] {
            assert_eq!(wrap_coord(x, 64.0).to_bits(), x.to_bits(), "wrap_coord({x:?}, 64)");
        }
    }

    #[test]
    fn angles_wrap_into_zero_to_two_pi() {
        // Against f64 reduction by the same period (TAU as an f32): the f32 reduction's error
        // is a few roundings of values up to |a|, so 4 ulps of max(|a|, 2π).
        for a in [0.0f32, 1.0, -0.5, 6.0, 6.5, -6.5, 7.0, 12.9, -100.25, 100.0, 1000.0, -3.0e3] {
            let got = wrap_angle(a);
            assert!((0.0..TAU).contains(&got), "wrap_angle({a}) = {got}");
            let want = wrapped(a as f64, TAU as f64);
            let tolerance = 4.0 * f32::EPSILON as f64 * (a.abs() as f64).max(TAU as f64);
            // Near the period's ends a value may wrap the other way.
            let distance = (got as f64 - want).abs().min(TAU as f64 - (got as f64 - want).abs());
            assert!(distance <= tolerance, "wrap_angle({a}) = {got}, f64 {want}");
        }
        assert_eq!(wrap_angle(TAU), 0.0);
        assert_eq!(wrap_angle(0.25), 0.25, "an angle inside the range keeps its bits");
        // Just below a multiple of 2π, a/2π may round up to the multiple, leaving a tiny
        // negative remainder that must come back into range.
        let mut below_a_multiple = 0;
        for k in -50..=50 {
            let a = (k as f32 * TAU).next_down();
            let r = a - (a / TAU).floor() * TAU;
            below_a_multiple += usize::from(r < 0.0);
            let got = wrap_angle(a);
            assert!((0.0..TAU).contains(&got), "wrap_angle({a:e}) = {got:e}");
        }
        assert!(below_a_multiple > 0, "no angle tried leaves a negative remainder");
    }

    #[test]
    fn sines_and_cosines_are_close_to_f64_over_the_angles_the_model_passes() {
        // The Cephes polynomials are good to about 1 ulp on [−π/4, π/4]; the reduction by k
        // quarter turns with a two-part π/2 misses π/2's third part (7.55e-8) k times. So:
        // 2 ulps of 1.0 plus |k|·7.6e-8, over [−2π, 4π] (the model passes [0, 2π)).
        let within = |a: f32, s: f32, c: f32| {
            let k = (a as f64 * 2.0 / core::f64::consts::PI).round().abs();
            let tolerance = 2.0 * f32::EPSILON as f64 + k * 7.6e-8;
            let (ws, wc) = (a as f64).sin_cos();
            assert!((s as f64 - ws).abs() <= tolerance, "sin({a}) = {s}, f64 {ws}, tolerance {tolerance:e}");
            assert!((c as f64 - wc).abs() <= tolerance, "cos({a}) = {c}, f64 {wc}, tolerance {tolerance:e}");
            (s as f64 - ws).abs().max((c as f64 - wc).abs())
        };
        let mut worst = 0.0f64;
        for i in -2600..=5200 {
            // Every quadrant and irregular points between.
            let a = i as f32 * 0.002_417 + 0.000_31;
            let (s, c) = sin_cos(a);
            worst = worst.max(within(a, s, c));
        }
        // The quadrants' boundaries and middles.
        for k in -8..=16 {
            let a = k as f32 * core::f32::consts::FRAC_PI_4;
            let (s, c) = sin_cos(a);
            within(a, s, c);
        }
        assert!(worst > 0.0, "no rounding at all is not an f32 polynomial");
    }

    #[test]
    fn derived_parameters_are_the_angles_sines_and_cosines() {
        let p = model(SENSE_NEAREST, 0.0);
        // sin_cos's 2 ulps.
        let close = |got: f32, want: f64| (got as f64 - want).abs() <= 2.0 * f32::EPSILON as f64;
        assert!(close(p.cos_sensor, 0.5f64.cos()) && close(p.sin_sensor, 0.5f64.sin()));
        assert!(close(p.cos_turn, 0.3f64.cos()) && close(p.sin_turn, 0.3f64.sin()));
    }

    #[test]
    fn sensors_point_ahead_and_to_either_side() {
        let p = model(SENSE_NEAREST, 0.0);
        // Each direction is a rotation of two f32 unit vectors: a few ulps of 1.
        let tolerance = 8.0 * f32::EPSILON as f64;
        for heading in [0.0f32, 0.7, 2.0, 3.5, 5.9] {
            let dirs = sensor_dirs(heading, &p);
            let h = heading as f64;
            for (d, angle) in dirs.iter().zip([h, h + 0.5, h - 0.5]) {
                assert!(
                    (d.0 as f64 - angle.sin()).abs() <= tolerance,
                    "heading {heading}: {d:?} against {angle}"
                );
                assert!(
                    (d.1 as f64 - angle.cos()).abs() <= tolerance,
                    "heading {heading}: {d:?} against {angle}"
                );
            }
        }
    }

    #[test]
    fn a_point_ahead_is_wrapped_onto_the_grid() {
        let p = model(SENSE_NEAREST, 0.0);
        for (y, x, dir, dist) in [
            (3.0f32, 60.0f32, (0.6f32, 0.8f32), 9.0f32),
            (47.5, 0.5, (0.8, -0.6), 2.0),
            (10.0, 10.0, (-1.0, 0.0), 15.5),
        ] {
            let (ay, ax) = ahead(y, x, dir, dist, &p);
            let want_y = wrapped(y as f64 + dist as f64 * dir.0 as f64, 48.0);
            let want_x = wrapped(x as f64 + dist as f64 * dir.1 as f64, 64.0);
            // Two f32 roundings of values below 64: 1e-5 is ample.
            assert!((ay as f64 - want_y).abs() < 1e-5 && (ax as f64 - want_x).abs() < 1e-5, "{ay} {ax}");
        }
    }

    #[test]
    fn a_point_is_in_the_cell_that_covers_it() {
        let p = model(SENSE_NEAREST, 0.0);
        assert_eq!(cell_of(0.0, 0.0, &p), 0);
        assert_eq!(cell_of(3.7, 5.2, &p), 3 * 64 + 5);
        assert_eq!(cell_of(47.999_996, 63.999_996, &p), 47 * 64 + 63);
        // A point on the far edge (no wrapped point is) still names the last cell.
        assert_eq!(cell_of(48.0, 64.0, &p), 47 * 64 + 63);
    }

    #[test]
    fn nearest_and_bilinear_samples_read_the_cells_around_a_point() {
        // A trail whose value names its cell: every read is told apart.
        let trail: std::vec::Vec<f32> = (0..64 * 48).map(|i| ((i * 37) % 101) as f32 + 0.25).collect();
        let read = |i: usize| trail[i];
        let at = |y: usize, x: usize| trail[(y % 48) * 64 + (x % 64)] as f64;
        let nearest = model(SENSE_NEAREST, 0.0);
        assert_eq!(sample(&read, 3.7, 5.2, &nearest), trail[3 * 64 + 5]);
        let bilinear = model(SENSE_BILINEAR, 0.0);
        // Fractional x and y, and the last row and column (their neighbours wrap to 0).
        for (y, x) in
            [(3.25f32, 5.75f32), (10.5, 0.125), (47.5, 20.25), (12.375, 63.5), (47.75, 63.25), (0.0, 0.0)]
        {
            let (y0, x0) = (y.floor() as usize, x.floor() as usize);
            let (fy, fx) = (y as f64 - y0 as f64, x as f64 - x0 as f64);
            let want = (1.0 - fy) * ((1.0 - fx) * at(y0, x0) + fx * at(y0, x0 + 1))
                + fy * ((1.0 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1));
            let got = sample(&read, y, x, &bilinear) as f64;
            // Six f32 operations on values below 102: 1e-4.
            assert!((got - want).abs() < 1e-4, "bilinear at ({y}, {x}): {got}, f64 {want}");
        }
        // A point on the far edge (no wrapped point is) reads the last cell, not past the grid.
        assert_eq!(sample(&read, 48.0, 64.0, &bilinear), trail[47 * 64 + 63]);
        assert_eq!(sample(&read, 48.0, 64.0, &nearest), trail[47 * 64 + 63]);
    }

    #[test]
    fn turns_follow_the_tie_rules() {
        // The front wins every tie it is part of.
        assert_eq!(choose_turn(2.0, 1.0, 1.0, 0), TURN_NONE);
        assert_eq!(choose_turn(2.0, 2.0, 1.0, 0), TURN_NONE);
        assert_eq!(choose_turn(2.0, 1.0, 2.0, 0), TURN_NONE);
        assert_eq!(choose_turn(2.0, 2.0, 2.0, 1), TURN_NONE);
        // Otherwise the larger side.
        assert_eq!(choose_turn(1.0, 3.0, 2.0, 0), TURN_LEFT);
        assert_eq!(choose_turn(1.0, 2.0, 3.0, 0), TURN_RIGHT);
        assert_eq!(choose_turn(2.0, 3.0, 1.0, 1), TURN_LEFT);
        assert_eq!(choose_turn(2.0, 1.0, 3.0, 1), TURN_RIGHT);
        // Left and right equal, above the front: bit 0 of the random number.
        assert_eq!(choose_turn(1.0, 2.0, 2.0, 6), TURN_LEFT);
        assert_eq!(choose_turn(1.0, 2.0, 2.0, 7), TURN_RIGHT);
    }

    #[test]
    fn steering_turns_by_the_turn_angle_plus_jitter() {
        let still = model(SENSE_NEAREST, 0.0);
        let shaky = model(SENSE_NEAREST, 0.2);
        for (heading, turn, random) in
            [(1.0f32, TURN_LEFT, 0u32), (0.1, TURN_RIGHT, 0x8000_0000), (6.2, TURN_LEFT, 0xffff_ffff)]
        {
            let unit = (random >> 8) as f64 / 16_777_216.0;
            let expect = |jitter: f64| {
                wrapped(
                    heading as f64 + turn as f64 * 0.3 + jitter * (2.0 * unit - 1.0),
                    core::f64::consts::TAU,
                )
            };
            // A few f32 roundings of angles below 7, and the f32 2π against the f64 one: 1e-5.
            for (p, jitter) in [(&still, 0.0), (&shaky, 0.2)] {
                let (got, want) = (steer(heading, turn, random, p) as f64, expect(jitter));
                let distance = (got - want).abs().min(core::f64::consts::TAU - (got - want).abs());
                assert!(distance < 1e-5, "steer({heading}, {turn}, {random:#x}) = {got}, f64 {want}");
            }
        }
        assert_eq!(steer(1.0, TURN_NONE, 12345, &still), 1.0);
    }

    #[test]
    fn an_agent_moves_along_its_new_heading() {
        let still = model(SENSE_NEAREST, 0.0);
        let heading = 0.9f32;
        let dirs = sensor_dirs(heading, &still);
        // Without jitter: the front direction rotated by the turn, a few ulps of 1.
        for (turn, angle) in [(TURN_LEFT, 0.9 + 0.3), (TURN_RIGHT, 0.9 - 0.3)] {
            let d = move_dir(&dirs, turn, 0.0, &still);
            let angle: f64 = angle;
            let ok = (d.0 as f64 - angle.sin()).abs() < 1e-6 && (d.1 as f64 - angle.cos()).abs() < 1e-6;
            assert!(ok, "turn {turn}: {d:?}, f64 ({}, {})", angle.sin(), angle.cos());
        }
        assert_eq!(move_dir(&dirs, TURN_NONE, 0.0, &still), dirs[0]);
        // With jitter: the new heading's own direction, whatever the turn.
        let shaky = model(SENSE_NEAREST, 0.2);
        let d = move_dir(&dirs, TURN_LEFT, 2.5, &shaky);
        assert!(
            (d.0 as f64 - 2.5f64.sin()).abs() < 1e-6 && (d.1 as f64 - 2.5f64.cos()).abs() < 1e-6,
            "{d:?}"
        );
    }

    #[test]
    fn an_agents_step_senses_turns_toward_the_trail_and_moves() {
        // A trail that rises with x (a cell's value is its column): which sensor reads most,
        // the turn and the move are worked out in f64 here, for three agents.
        let p = model(SENSE_NEAREST, 0.0);
        let trail: std::vec::Vec<f32> = (0..64 * 48).map(|i| (i % 64) as f32).collect();
        let read = |i: usize| trail[i];
        for (y, x, heading) in [(20.3f32, 30.6f32, 1.2f32), (5.1, 60.2, 0.2), (40.4, 3.3, 2.9)] {
            // f64: the three sensor points and the cells' values (x's cell: its value).
            let h = heading as f64;
            let reading = |angle: f64| {
                let sx = wrapped(x as f64 + 9.0 * angle.cos(), 64.0);
                let sy = wrapped(y as f64 + 9.0 * angle.sin(), 48.0);
                // Away from a cell edge, so f32 rounding cannot pick another cell.
                assert!((sx - sx.round()).abs() > 1e-3 && (sy - sy.round()).abs() > 1e-3, "({sy}, {sx})");
                sx.floor()
            };
            let (front, left, right) = (reading(h), reading(h + 0.5), reading(h - 0.5));
            let turn = if front >= left && front >= right {
                0.0
            } else if left > right {
                1.0
            } else {
                -1.0
            };
            let new_heading = wrapped(h + turn * 0.3, core::f64::consts::TAU);
            let want = (
                wrapped(y as f64 + 1.5 * new_heading.sin(), 48.0),
                wrapped(x as f64 + 1.5 * new_heading.cos(), 64.0),
                new_heading,
            );
            let (ny, nx, nh) = agent_step(&read, y, x, heading, 3, 9, &p);
            // f32 trigonometry and sums of values below 64: 1e-4.
            let ok = (ny as f64 - want.0).abs() < 1e-4
                && (nx as f64 - want.1).abs() < 1e-4
                && (nh as f64 - want.2).abs() < 1e-5;
            assert!(ok, "agent at ({y}, {x}) heading {heading}: ({ny}, {nx}, {nh}), f64 {want:?}");
        }
    }

    #[test]
    fn the_trail_diffuses_and_decays_by_the_formula() {
        let p = model(SENSE_NEAREST, 0.0);
        // sum9 adds the rows' sums: 45 exactly.
        assert_eq!(sum9([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]), 45.0);
        assert_eq!(sum9([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.5]]), 1.5);
        // mean9: one rounding of sum/9.
        for sum in [45.0f32, 1.0, 9.0, 1234.5] {
            let want = sum as f64 / 9.0;
            assert!((mean9(sum) as f64 - want).abs() <= want * f32::EPSILON as f64, "mean9({sum})");
        }
        // (1 − 0.25)·8 + 0.25·4 = 7, and 10·(1 − 0.1) = 9 (two roundings each).
        assert!((blend(8.0, 4.0, &p) as f64 - 7.0).abs() < 1e-6);
        assert!((decay(10.0, &p) as f64 - 9.0).abs() < 1e-5);
        // Deposits of 5 added one at a time.
        assert_eq!(add_deposits(1.0, 3, &p), 16.0);
        assert_eq!(add_deposits(1.0, 0, &p), 1.0);
    }

    #[test]
    fn neighbours_wrap_around_the_grid() {
        let p = model(SENSE_NEAREST, 0.0);
        assert_eq!(neighbourhood(0, 0, &p), ([47 * 64, 0, 64], [63, 0, 1]));
        assert_eq!(neighbourhood(63, 47, &p), ([46 * 64, 47 * 64, 0], [62, 63, 0]));
        assert_eq!(neighbourhood(10, 20, &p), ([19 * 64, 20 * 64, 21 * 64], [9, 10, 11]));
    }

    /// The trail pass's layout, from its documented geometry: a 32 × 32 output tile and a
    /// one-cell halo staged as 34 × 34 cells by a block of 32 × 8 threads, at most 5 a thread.
    #[test]
    fn the_trail_tile_is_the_output_tile_and_its_halo() {
        assert_eq!((TRAIL_TILE, TRAIL_W, TRAIL_H, TRAIL_ROWS), (32, 32, 8, 4));
        assert_eq!((TRAIL_PITCH, TRAIL_SPAN), (34, 34 * 34));
        assert_eq!((TRAIL_THREADS, TRAIL_STAGED), (256, 5));
    }

    #[test]
    fn bins_are_square_tiles_row_by_row() {
        // 64 × 48 in tiles of 8: 8 × 6; 65 × 50: 9 × 7 (partial tiles count).
        let p = model(SENSE_NEAREST, 0.0);
        assert_eq!((bins_x(&p, 3), bin_count(&p, 3)), (8, 48));
        let odd = Params { width: 65, height: 50, ..p };
        assert_eq!((bins_x(&odd, 3), bin_count(&odd, 3)), (9, 63));
        assert_eq!((bins_x(&odd, 4), bin_count(&odd, 4)), (5, 20));
        assert_eq!(bin_of(17.5, 40.2, &odd, 3), 2 * 9 + 5);
        assert_eq!(bin_of(0.0, 64.5, &odd, 3), 8);
        // The far edge clamps to the last tile (where the grid is whole tiles, one past the
        // edge would be the next tile).
        assert_eq!(bin_of(50.0, 65.0, &odd, 3), 6 * 9 + 8);
        assert_eq!(bin_of(48.0, 64.0, &p, 3), 5 * 8 + 7);
    }
}
