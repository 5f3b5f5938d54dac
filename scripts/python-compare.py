#!/usr/bin/env python3
"""The write-ups' comparison, from Python: Triton and PyTorch against `rust_gpu_sim`.

    python3 scripts/python-compare.py [--quick] [--out DIR] [--steps N] [--only grayscott,physarum,heat]
    python3 scripts/python-compare.py --self-test [--interpret]

One Python process, one GPU, the same torch tensors where the models allow it:

* Gray-Scott (coral preset, periodic 5-point Laplacian, explicit Euler, clamp to [0, 1],
  float32) at 512² and 4096²: Triton "v1" (a Laplacian kernel writing lu, lv, then an update
  kernel), Triton fused (one kernel per step, ping-pong buffers), the project's kernels through
  `rust_gpu_sim.kernels` (the two v1 ops; the fused op) and the project's `GrayScott`
  simulation object (variant `fused`). All start from the same initial tensors (the
  simulation's own coral start, seed 1) and are compared after `--steps` steps by their
  largest absolute difference from the Rust fused kernel op; bit-identical is the target.
  The project's update (`Rates::step_at`, CPU and GPU alike) uses explicit fused multiply-adds,
  two per field (du·lu − uvv, then feed·(1 − u) + that; dv·lv + uvv, then −(feed + kill)·v +
  that), and contracts nothing else; the Triton kernels write the same `tl.fma`s (fma.rn.f32
  on a GPU) and are launched with `enable_fp_fusion=False`, so that no other a*b+c is
  contracted, and the results should be bit-identical. A third Triton row runs the fused kernel
  with Triton's default contraction, to show what that costs and changes (with dt = 1 the
  only products left to contract, du_dt·dt and dv_dt·dt, are exact).
* Physarum (network preset, 2048², 1M and 10M agents): a Triton step (sense+steer+move, an
  atomic deposit, diffuse+decay: three kernels) on torch tensors of its own agents, against
  `rust_gpu_sim.Physarum(variant="optimized")`. The Triton kernels use the project's model as
  its code writes it (tie rules, counter-based random numbers, the shared sine polynomial,
  agents started from the same hash of seed and index), so the trails may even match bit for
  bit; the pass/fail check is statistical (total trail mass, and the trail's coefficient of
  variation, which measures how far the network has formed), the bitwise match is reported.
* 3-D heat, RK4 (hot cube, Dirichlet faces at the boundary value, dt from the simulation) at
  64³ and 600³: a PyTorch reference (plain tensor ops, classic RK4: four evaluations of the
  7-point Laplacian on u + c·k, as the project's CPU reference) against
  `rust_gpu_sim.Heat(variant="single")`, from the simulation's own initial field; compared by
  max |Δu| / max |u| after a few steps.

Timing: `triton.testing.do_bench(fn, warmup=50, rep=300, return_mode="median")` (ms; with
`--quick` warmup=10, rep=50), two ways. (1) "k-step loop", every row: fn waits for torch's
stream (so that do_bench's L2 flush and start event are done before any step starts), queues
k steps (`sim.step(k)` for a simulation object, k launches for the rest; k chosen so a call
lasts about 2 ms), and waits until they are done (`sim.synchronize()`, or torch's stream);
time / k is wall time per step including one host round trip per call (measured without
steps and printed). This is the only method that also fits the simulation objects, which
launch on their own CUDA stream where do_bench's events cannot see them, so the throughput
and "vs Rust" columns use it. (2) "one step, events", for everything on torch's stream:
fn is one step, timed by do_bench's events (GPU time; do_bench flushes L2 before each call).

`--self-test` runs only the Triton kernels and the PyTorch reference against a NumPy
reimplementation of the Rust arithmetic on tiny grids (under Triton's interpreter with
`--interpret`, or automatically when there is no GPU), and needs no `rust_gpu_sim`. NumPy has
no fma: `np_fma32` builds one (float64 product, TwoSum, round to odd, then float32), checked
first against exact rationals, and Triton's `tl.fma` against it. Triton's interpreter (3.6) computes
`tl.fma` as a·b + c with two roundings, so there the Gray-Scott kernels are checked bit for
bit against NumPy doing the same, and against the single-rounding arithmetic within a bound.

Writes `python-compare.md` (the table) and `python-compare.json` (raw numbers) to `--out`
(default `$OUT`, else the current directory). Exits 1 if any agreement check fails.
"""
import argparse
import datetime
import json
import math
import os
import platform
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import torch

# Triton picks the interpreter when a kernel is decorated, so decide before importing it.
if "--interpret" in sys.argv or ("--self-test" in sys.argv and not torch.cuda.is_available()):
    os.environ["TRITON_INTERPRET"] = "1"
INTERPRET = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def say(*parts):
    print(*parts, flush=True)


# ---------------------------------------------------------------------------------------
# The project's float32 constants (their bits are checked against Rust's in --self-test)
# ---------------------------------------------------------------------------------------

F32 = np.float32
U32_MASK = 0xFFFF_FFFF

# Gray-Scott (simulations/src/grayscott/presets.rs): shared rates, and the coral preset.
GS_DU, GS_DV, GS_DT = F32("0.2097"), F32("0.105"), F32("1.0")
GS_CORAL_FEED, GS_CORAL_KILL = F32("0.0545"), F32("0.062")

# Physarum (kernels/src/physarum.rs): 2π, and sin_cos's reduction and Cephes coefficients.
TAU = F32(2.0 * math.pi)
FRAC_2_PI = F32(2.0 / math.pi)
PIO2_HI, PIO2_LO = F32("1.5703125"), F32("4.8375127e-4")
SIN_1, SIN_2, SIN_3 = F32("-1.6666655e-1"), F32("8.332161e-3"), F32("-1.9515296e-4")
COS_1, COS_2, COS_3 = F32("4.1666646e-2"), F32("-1.3887316e-3"), F32("2.4433157e-5")
NINTH = F32(1.0) / F32(9.0)
INV_2_24 = F32(1.0 / 16_777_216.0)

# (name, value, bits of the Rust f32) for the self-test.
CONSTANT_BITS = [
    ("DEFAULT_DU", GS_DU, 0x3E56BB99), ("DEFAULT_DV", GS_DV, 0x3DD70A3D),
    ("DEFAULT_DT", GS_DT, 0x3F800000), ("coral feed", GS_CORAL_FEED, 0x3D5F3B64),
    ("coral kill", GS_CORAL_KILL, 0x3D7DF3B6), ("TAU", TAU, 0x40C90FDB),
    ("FRAC_2_PI", FRAC_2_PI, 0x3F22F983), ("PIO2_HI", PIO2_HI, 0x3FC90000),
    ("PIO2_LO", PIO2_LO, 0x39FD9FFF), ("sin c1", SIN_1, 0xBE2AAAA3), ("sin c2", SIN_2, 0x3C08839E),
    ("sin c3", SIN_3, 0xB94CA1F9), ("cos c1", COS_1, 0x3D2AAAA5), ("cos c2", COS_2, 0xBAB6061A),
    ("cos c3", COS_3, 0x37CCF5CE), ("1/9", NINTH, 0x3DE38E39), ("2^-24", INV_2_24, 0x33800000),
    ("FRAC_PI_4", F32(math.pi / 4), 0x3F490FDB), ("FRAC_PI_8", F32(math.pi / 8), 0x3EC90FDB),
]

# Triton sees module-level values only as constexpr; each holds an exact f32 as a Python float.
C_TAU = tl.constexpr(float(TAU))
C_FRAC_2_PI = tl.constexpr(float(FRAC_2_PI))
C_PIO2_HI = tl.constexpr(float(PIO2_HI))
C_PIO2_LO = tl.constexpr(float(PIO2_LO))
C_SIN_1, C_SIN_2, C_SIN_3 = tl.constexpr(float(SIN_1)), tl.constexpr(float(SIN_2)), tl.constexpr(float(SIN_3))
C_COS_1, C_COS_2, C_COS_3 = tl.constexpr(float(COS_1)), tl.constexpr(float(COS_2)), tl.constexpr(float(COS_3))
C_INV_2_24 = tl.constexpr(float(INV_2_24))


@dataclass(frozen=True)
class GsRates:
    """Gray-Scott's rates, each an exact float32 held as a Python float."""
    du: float
    dv: float
    feed: float
    kill: float
    dt: float

    def kw(self):
        return dict(du=self.du, dv=self.dv, feed=self.feed, kill=self.kill, dt=self.dt)


CORAL = GsRates(*(float(x) for x in (GS_DU, GS_DV, GS_CORAL_FEED, GS_CORAL_KILL, GS_DT)))

# Physarum presets (simulations/src/physarum/presets.rs): sensor_dist, sensor_angle,
# turn_angle, step_size, deposit, diffuse, decay. Jitter 0 and nearest sensing (the defaults).
PHYSARUM_PRESETS = {
    "network": ("15", "0.5", "0.5", "1", "5", "0.5", "0.1"),
    "jones": ("9", math.pi / 4, math.pi / 4, "1", "5", "1", "0.1"),
    "jones-narrow": ("9", math.pi / 8, math.pi / 4, "1", "5", "1", "0.1"),
    "writeup": ("5", math.pi / 4, math.pi / 4, "1", "1", "0.2", "0.01"),
}


# ---------------------------------------------------------------------------------------
# NumPy reimplementation of the Rust arithmetic (float32, the same order of operations)
# ---------------------------------------------------------------------------------------

def np_clamp01(s):
    """`add_clamp01`'s clamp: > 0 keeps min(s, 1); NaN and ±0 and below become +0."""
    return np.where(s > 0, np.minimum(s, F32(1)), F32(0)).astype(np.float32)


def np_fma32(a, b, c):
    """float32 fma(a, b, c): a·b + c rounded once (to nearest, ties to even), elementwise.

    NumPy has none. For float32 inputs a·b is exact in float64; TwoSum gives s = a·b + c
    rounded to float64 and its exact error e; where e ≠ 0 and s is even, s moves one float64
    step toward e (rounding to odd at 53 bits), and that rounded to float32 is correctly
    rounded (53 ≥ 24 + 2). Signed zeros follow float64's sum; non-finite values pass through."""
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
        c = np.asarray(c, np.float64)
        s = np.asarray(p + c)
        t = s - p
        e = (p - (s - t)) + (c - t)
        fix = np.isfinite(s) & (e != 0) & ((s.view(np.int64) & 1) == 0)
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    return s.astype(np.float32)


def np_fma32_twice(a, b, c):
    """a·b rounded to float32, then + c rounded: what Triton's interpreter makes of `tl.fma`."""
    return (np.asarray(a, np.float32) * np.asarray(b, np.float32)) + np.asarray(c, np.float32)


def np_gs_step(u, v, r: GsRates, fma=np_fma32):
    """One Gray-Scott step (`gray_scott_fused` = `laplacian5` + `Rates::step_at`), periodic.
    `fma` stands for the update's fused multiply-adds (`np_fma32_twice`: the interpreter's)."""
    du, dv, feed, kill, dt = (F32(x) for x in (r.du, r.dv, r.feed, r.kill, r.dt))

    def lap(f):  # neighbours (left + right) + (up + down), minus 4·centre (= fma(−4, centre, sum))
        return ((np.roll(f, 1, 1) + np.roll(f, -1, 1)) + (np.roll(f, 1, 0) + np.roll(f, -1, 0))) - F32(4) * f

    lu, lv = lap(u), lap(v)
    uvv = (u * v) * v
    du_dt = fma(feed, F32(1) - u, fma(du, lu, -uvv))
    dv_dt = fma(-(feed + kill), v, fma(dv, lv, uvv))
    return np_clamp01(u + du_dt * dt), np_clamp01(v + dv_dt * dt)


def np_mix32(x):
    """lowbias32 (`mix32`) on uint32 arrays."""
    x = np.asarray(x, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        return x ^ (x >> np.uint32(16))


def py_mix32(x):
    """`mix32` of one Python int."""
    x &= U32_MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & U32_MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & U32_MASK
    return x ^ (x >> 16)


def np_unit_f32(r):
    """The top 24 bits of r as a float in [0, 1)."""
    return (r >> np.uint32(8)).astype(np.float32) * INV_2_24


def np_wrap_angle(a):
    """An angle reduced into [0, 2π) (`wrap_angle`)."""
    a = np.asarray(a, dtype=np.float32)
    r = a - np.floor(a / TAU) * TAU
    r = np.where(r < 0, r + TAU, r)
    return np.where(r >= TAU, F32(0), r).astype(np.float32)


def np_sin_cos(a):
    """(sin a, cos a) by the project's polynomial (`sin_cos`), bit for bit."""
    a = np.asarray(a, dtype=np.float32)
    k = np.floor(a * FRAC_2_PI + F32(0.5))
    r = (a - k * PIO2_HI) - k * PIO2_LO
    z = r * r
    s = r + r * z * (SIN_1 + z * (SIN_2 + z * SIN_3))
    c = F32(1) - F32(0.5) * z + z * z * (COS_1 + z * (COS_2 + z * COS_3))
    q = k.astype(np.int32) & 3
    sin = np.select([q == 0, q == 1, q == 2], [s, c, -s], -c).astype(np.float32)
    cos = np.select([q == 0, q == 1, q == 2], [c, -s, -c], s).astype(np.float32)
    return sin, cos


@dataclass(frozen=True)
class PhysParams:
    """The kernels' Physarum parameters (`Params::new`), every float an exact float32."""
    height: int
    width: int
    sensor_dist: float
    sensor_angle: float
    turn_angle: float
    step_size: float
    deposit: float
    diffuse: float
    decay: float
    seed: int  # 32 bits, folded as `PhysarumSetup::params` folds the 64-bit seed
    cos_sensor: float
    sin_sensor: float
    cos_turn: float
    sin_turn: float

    @staticmethod
    def from_preset(name, height, width, seed):
        dist, sa, ta, step, dep, dif, dec = (float(F32(x)) for x in PHYSARUM_PRESETS[name])
        ss, cs = np_sin_cos(np_wrap_angle(sa))
        st, ct = np_sin_cos(np_wrap_angle(ta))
        seed32 = (seed ^ (seed >> 32)) & U32_MASK
        return PhysParams(height, width, dist, sa, ta, step, dep, dif, dec, seed32,
                          float(cs), float(ss), float(ct), float(st))

    @property
    def keep(self):  # 1 − s, as `blend` computes it
        return float(F32(1) - F32(self.diffuse))

    @property
    def retain(self):  # 1 − decay, as `decay` computes it
        return float(F32(1) - F32(self.decay))

    @property
    def seed_key(self):  # mix32(seed ^ 0x9e3779b9), the constant part of `random_u32`
        return py_mix32(self.seed ^ 0x9E3779B9)

    @staticmethod
    def step_key(step):  # step · 0x85ebca6b, wrapping
        return (step * 0x85EBCA6B) & U32_MASK


def np_physarum_init(n, p: PhysParams):
    """`initial_agents` for the random start: (y, x, heading) from a hash of (seed, index)."""
    i = np.arange(n, dtype=np.uint32)
    base = np_mix32(np.uint32(p.seed) ^ np_mix32(i ^ np.uint32(0x5BD1E995)))
    with np.errstate(over="ignore"):
        unit = [np_unit_f32(np_mix32(base + np.uint32((k * 0x9E3779B9) & U32_MASK))) for k in (1, 2, 3)]
    return unit[0] * F32(p.height), unit[1] * F32(p.width), unit[2] * TAU


def np_wrap_coord(x, n):
    x = np.where(x < 0, x + n, x)
    return np.where(x >= n, x - n, x).astype(np.float32)


def np_physarum_step(y, x, hd, trail, step, p: PhysParams):
    """One Physarum step as `CpuPhysarum::step` (nearest sensing, no jitter); new arrays."""
    hf, wf = F32(p.height), F32(p.width)
    f = lambda v: F32(v)  # noqa: E731
    flat = trail.reshape(-1)

    def cell(yy, xx):
        return np.minimum(yy.astype(np.int64), p.height - 1) * p.width + np.minimum(xx.astype(np.int64), p.width - 1)

    s, c = np_sin_cos(hd)
    cs, ss, ct, st = f(p.cos_sensor), f(p.sin_sensor), f(p.cos_turn), f(p.sin_turn)
    dirs = [(s, c), (s * cs + c * ss, c * cs - s * ss), (s * cs - c * ss, c * cs + s * ss)]
    front, left, right = (flat[cell(np_wrap_coord(y + f(p.sensor_dist) * dy, hf),
                                    np_wrap_coord(x + f(p.sensor_dist) * dx, wf))] for dy, dx in dirs)
    agent = np.arange(len(y), dtype=np.uint32)
    rnd = np_mix32(np_mix32(np.uint32(p.seed_key) ^ agent) ^ np.uint32(PhysParams.step_key(step)))
    turn = np.where((front >= left) & (front >= right), 0,
                    np.where(left > right, 1, np.where(right > left, -1, np.where((rnd & 1) == 0, 1, -1))))
    new_hd = np_wrap_angle(hd + turn.astype(np.float32) * f(p.turn_angle))
    my = np.where(turn == 1, s * ct + c * st, np.where(turn == -1, s * ct - c * st, s))
    mx = np.where(turn == 1, c * ct - s * st, np.where(turn == -1, c * ct + s * st, c))
    ny = np_wrap_coord(y + f(p.step_size) * my, hf)
    nx = np_wrap_coord(x + f(p.step_size) * mx, wf)
    deposited = flat.copy()
    np.add.at(deposited, cell(ny, nx), f(p.deposit))
    t = deposited.reshape(trail.shape)
    rows = [np.roll(t, 1, 0), t, np.roll(t, -1, 0)]  # above, here, below
    sums = [(np.roll(r, 1, 1) + r) + np.roll(r, -1, 1) for r in rows]  # left + centre + right
    mean = ((sums[0] + sums[1]) + sums[2]) * NINTH
    new_t = (f(p.keep) * t + f(p.diffuse) * mean) * f(p.retain)
    return ny, nx, new_hd, new_t.astype(np.float32)


def np_heat_rk4_step(u, a, dt):
    """One classic RK4 step of du/dt = a∇²u, stages 0 on the faces (the CPU reference)."""
    a, dt = F32(a), F32(dt)
    interior = np.zeros(u.shape, dtype=bool)
    interior[1:-1, 1:-1, 1:-1] = True

    def stage(f):  # axes (z, y, x): ((x pair) + (y pair) + (z pair)) − 6·centre
        nb = lambda ax: np.roll(f, 1, ax) + np.roll(f, -1, ax)  # noqa: E731
        lap = ((nb(2) + nb(1)) + nb(0)) - F32(6) * f
        return np.where(interior, a * lap, F32(0)).astype(np.float32)

    k1 = stage(u)
    k2 = stage(u + (dt / F32(2)) * k1)
    k3 = stage(u + (dt / F32(2)) * k2)
    k4 = stage(u + dt * k3)
    return u + (dt / F32(6)) * (((k1 + F32(2) * k2) + F32(2) * k3) + k4)


# ---------------------------------------------------------------------------------------
# Triton kernels
# ---------------------------------------------------------------------------------------

# Launch options: `enable_fp_fusion=False` keeps every multiply and add not written as
# `tl.fma` separately rounded, as the project's kernels are written (the interpreter ignores
# it: NumPy never contracts).
EXACT = dict(enable_fp_fusion=False)
CONTRACTED = dict(enable_fp_fusion=True)  # Triton's default


@triton.jit
def _clamp01(s):
    """`add_clamp01`'s clamp of an already rounded sum: NaN and −0 become +0."""
    return tl.where(s > 0.0, tl.minimum(s, 1.0), 0.0)


@triton.jit
def _laplacian5(centre, left, right, up, down):
    """(left + right) + (up + down) − 4·centre (4·centre is exact, so an FMA is harmless)."""
    return ((left + right) + (up + down)) - 4.0 * centre


@triton.jit
def _gs_rates_step(u, v, lu, lv, du, dv, feed, kill, dt):
    """`Rates::step_at`: one explicit Euler step of a cell, clamped to [0, 1], with the
    project's fused multiply-adds (`tl.fma`: one rounding on a GPU); dt's are separate."""
    uvv = u * v * v
    du_dt = tl.fma(feed, 1.0 - u, tl.fma(du, lu, -uvv))
    dv_dt = tl.fma(-(feed + kill), v, tl.fma(dv, lv, uvv))
    return _clamp01(u + du_dt * dt), _clamp01(v + dv_dt * dt)


@triton.jit
def _periodic_tile(height, width, BLOCK_Y: tl.constexpr, BLOCK_X: tl.constexpr):
    """This program's BLOCK_Y × BLOCK_X tile of a periodic grid: row offsets of the rows
    above, at and below, columns left, at and right, and the in-grid mask."""
    rows = tl.program_id(1) * BLOCK_Y + tl.arange(0, BLOCK_Y)[:, None]
    cols = tl.program_id(0) * BLOCK_X + tl.arange(0, BLOCK_X)[None, :]
    mask = (rows < height) & (cols < width)
    up = tl.where(rows == 0, height - 1, rows - 1)
    down = tl.where(rows == height - 1, 0, rows + 1)
    left = tl.where(cols == 0, width - 1, cols - 1)
    right = tl.where(cols == width - 1, 0, cols + 1)
    return up * width, rows * width, down * width, left, cols, right, mask


@triton.jit
def gs_laplacian_kernel(u_ptr, v_ptr, lu_ptr, lv_ptr, height, width,
                        BLOCK_Y: tl.constexpr, BLOCK_X: tl.constexpr):
    """Gray-Scott v1, step 1/2: lu = ∇²u, lv = ∇²v (5-point, periodic).

    Program mapping: a 2-D grid of programs, each a BLOCK_Y × BLOCK_X tile (x along rows,
    coalesced). Bytes per cell: reads u, v (8 B; the four neighbour loads of each hit in
    L1/L2), writes lu, lv (8 B): 16 B.
    """
    up, here, down, left, cols, right, mask = _periodic_tile(height, width, BLOCK_Y, BLOCK_X)
    lu = _laplacian5(tl.load(u_ptr + here + cols, mask=mask), tl.load(u_ptr + here + left, mask=mask),
                     tl.load(u_ptr + here + right, mask=mask), tl.load(u_ptr + up + cols, mask=mask),
                     tl.load(u_ptr + down + cols, mask=mask))
    lv = _laplacian5(tl.load(v_ptr + here + cols, mask=mask), tl.load(v_ptr + here + left, mask=mask),
                     tl.load(v_ptr + here + right, mask=mask), tl.load(v_ptr + up + cols, mask=mask),
                     tl.load(v_ptr + down + cols, mask=mask))
    tl.store(lu_ptr + here + cols, lu, mask=mask)
    tl.store(lv_ptr + here + cols, lv, mask=mask)


@triton.jit
def gs_update_kernel(u_ptr, v_ptr, lu_ptr, lv_ptr, cells, du, dv, feed, kill, dt, BLOCK: tl.constexpr):
    """Gray-Scott v1, step 2/2: one Euler step from lu, lv, in place on u, v.

    Program mapping: 1-D, BLOCK consecutive cells per program. Bytes per cell: reads u, v,
    lu, lv (16 B), writes u, v (8 B): 24 B; with the Laplacian kernel 40 B per step.
    """
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < cells
    u = tl.load(u_ptr + i, mask=mask)
    v = tl.load(v_ptr + i, mask=mask)
    u_new, v_new = _gs_rates_step(u, v, tl.load(lu_ptr + i, mask=mask), tl.load(lv_ptr + i, mask=mask),
                                  du, dv, feed, kill, dt)
    tl.store(u_ptr + i, u_new, mask=mask)
    tl.store(v_ptr + i, v_new, mask=mask)


@triton.jit
def gs_fused_kernel(u_ptr, v_ptr, u_next_ptr, v_next_ptr, height, width, du, dv, feed, kill, dt,
                    BLOCK_Y: tl.constexpr, BLOCK_X: tl.constexpr):
    """Gray-Scott fused: Laplacians and update in registers, u, v -> u_next, v_next.

    Program mapping: a 2-D grid of programs, each a BLOCK_Y × BLOCK_X tile. Bytes per cell:
    reads u, v (8 B; neighbours hit in L1/L2), writes u_next, v_next (8 B): 16 B per step.
    """
    up, here, down, left, cols, right, mask = _periodic_tile(height, width, BLOCK_Y, BLOCK_X)
    u = tl.load(u_ptr + here + cols, mask=mask)
    v = tl.load(v_ptr + here + cols, mask=mask)
    lu = _laplacian5(u, tl.load(u_ptr + here + left, mask=mask), tl.load(u_ptr + here + right, mask=mask),
                     tl.load(u_ptr + up + cols, mask=mask), tl.load(u_ptr + down + cols, mask=mask))
    lv = _laplacian5(v, tl.load(v_ptr + here + left, mask=mask), tl.load(v_ptr + here + right, mask=mask),
                     tl.load(v_ptr + up + cols, mask=mask), tl.load(v_ptr + down + cols, mask=mask))
    u_new, v_new = _gs_rates_step(u, v, lu, lv, du, dv, feed, kill, dt)
    tl.store(u_next_ptr + here + cols, u_new, mask=mask)
    tl.store(v_next_ptr + here + cols, v_new, mask=mask)


@triton.jit
def _mix32(x):
    """lowbias32 (`mix32`) on uint32 lanes (wrapping multiplies, logical shifts)."""
    x = x ^ (x >> 16)
    x = x * 0x7FEB352D
    x = x ^ (x >> 15)
    x = x * 0x846CA68B
    return x ^ (x >> 16)


@triton.jit
def _unit_f32(r):
    """The top 24 bits of a uint32 as a float in [0, 1)."""
    return (r >> 8).to(tl.float32) * C_INV_2_24


@triton.jit
def _wrap_coord(x, n):
    """x into [0, n) for x in [−n, 2n) (`wrap_coord`)."""
    x = tl.where(x < 0.0, x + n, x)
    return tl.where(x >= n, x - n, x)


@triton.jit
def _wrap_angle(a):
    """An angle into [0, 2π) (`wrap_angle`; a correctly rounded division, as Rust's `/`)."""
    r = a - tl.floor(tl.div_rn(a, C_TAU)) * C_TAU
    r = tl.where(r < 0.0, r + C_TAU, r)
    return tl.where(r >= C_TAU, 0.0, r)


@triton.jit
def _sin_cos(a):
    """(sin a, cos a) by the project's polynomial (`sin_cos`): quadrant reduction with a
    two-part π/2, Cephes polynomials on [−π/4, π/4]."""
    k = tl.floor(a * C_FRAC_2_PI + 0.5)
    r = (a - k * C_PIO2_HI) - k * C_PIO2_LO
    z = r * r
    s = r + r * z * (C_SIN_1 + z * (C_SIN_2 + z * C_SIN_3))
    c = 1.0 - 0.5 * z + z * z * (C_COS_1 + z * (C_COS_2 + z * C_COS_3))
    q = k.to(tl.int32) & 3
    sin = tl.where(q == 0, s, tl.where(q == 1, c, tl.where(q == 2, -s, -c)))
    cos = tl.where(q == 0, c, tl.where(q == 1, -s, tl.where(q == 2, -c, s)))
    return sin, cos


@triton.jit
def _cell_of(y, x, height, width):
    """The flat index of the cell containing the wrapped point (y, x) (`cell_of`)."""
    return tl.minimum(y.to(tl.int32), height - 1) * width + tl.minimum(x.to(tl.int32), width - 1)


@triton.jit(do_not_specialize=["seed"])
def phys_init_kernel(y_ptr, x_ptr, heading_ptr, n, seed, height_f, width_f, BLOCK: tl.constexpr):
    """Physarum's random start (`initial_agents`): agent i from a hash of (seed, i).

    Program mapping: 1-D, BLOCK agents per program. Bytes per agent: 12 B written.
    """
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    base = _mix32(seed.to(tl.uint32) ^ _mix32(i.to(tl.uint32) ^ 0x5BD1E995))
    # base + k·0x9e3779b9 (wrapping) for k = 1, 2, 3.
    tl.store(y_ptr + i, _unit_f32(_mix32(base + 0x9E3779B9)) * height_f, mask=mask)
    tl.store(x_ptr + i, _unit_f32(_mix32(base + 0x3C6EF372)) * width_f, mask=mask)
    tl.store(heading_ptr + i, _unit_f32(_mix32(base + 0xDAA66D2B)) * C_TAU, mask=mask)


@triton.jit(do_not_specialize=["seed_key", "step_key"])
def phys_agents_kernel(y_ptr, x_ptr, heading_ptr, trail_ptr, n, height, width, height_f, width_f,
                       sensor_dist, step_size, turn_angle, cos_sensor, sin_sensor, cos_turn, sin_turn,
                       seed_key, step_key, BLOCK: tl.constexpr):
    """Physarum 1/3: sense (front, left, right at sensor_dist, nearest cell), steer (the
    project's tie rules, counter-based random side), move step_size, wrap; state in place.

    Program mapping: 1-D, BLOCK agents per program (struct of arrays y, x, heading).
    Bytes per agent: 12 B read, 12 B written, three scattered 4 B trail reads.
    """
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    y = tl.load(y_ptr + i, mask=mask, other=0.0)
    x = tl.load(x_ptr + i, mask=mask, other=0.0)
    heading = tl.load(heading_ptr + i, mask=mask, other=0.0)
    s, c = _sin_cos(heading)
    # Sensor directions (dy, dx): front, left (+angle), right (−angle), by rotation.
    ly, lx = s * cos_sensor + c * sin_sensor, c * cos_sensor - s * sin_sensor
    ry, rx = s * cos_sensor - c * sin_sensor, c * cos_sensor + s * sin_sensor
    front = tl.load(trail_ptr + _cell_of(_wrap_coord(y + sensor_dist * s, height_f),
                                         _wrap_coord(x + sensor_dist * c, width_f), height, width), mask=mask)
    left = tl.load(trail_ptr + _cell_of(_wrap_coord(y + sensor_dist * ly, height_f),
                                        _wrap_coord(x + sensor_dist * lx, width_f), height, width), mask=mask)
    right = tl.load(trail_ptr + _cell_of(_wrap_coord(y + sensor_dist * ry, height_f),
                                         _wrap_coord(x + sensor_dist * rx, width_f), height, width), mask=mask)
    rnd = _mix32(_mix32(seed_key.to(tl.uint32) ^ i.to(tl.uint32)) ^ step_key.to(tl.uint32))
    # The front wins any tie it is in; then the larger side; equal sides: bit 0 picks.
    turn = tl.where((front >= left) & (front >= right), 0,
                    tl.where(left > right, 1, tl.where(right > left, -1, tl.where((rnd & 1) == 0, 1, -1))))
    new_heading = _wrap_angle(heading + turn.to(tl.float32) * turn_angle)
    # The move direction: the front direction rotated by the turn (no jitter).
    my = tl.where(turn == 1, s * cos_turn + c * sin_turn, tl.where(turn == -1, s * cos_turn - c * sin_turn, s))
    mx = tl.where(turn == 1, c * cos_turn - s * sin_turn, tl.where(turn == -1, c * cos_turn + s * sin_turn, c))
    tl.store(y_ptr + i, _wrap_coord(y + step_size * my, height_f), mask=mask)
    tl.store(x_ptr + i, _wrap_coord(x + step_size * mx, width_f), mask=mask)
    tl.store(heading_ptr + i, new_heading, mask=mask)


@triton.jit
def phys_deposit_kernel(y_ptr, x_ptr, trail_ptr, n, height, width, deposit, BLOCK: tl.constexpr):
    """Physarum 2/3: `deposit` added to each agent's cell with a float atomic (adds of one
    fixed amount give the same float in any order).

    Program mapping: 1-D, BLOCK agents per program. Bytes per agent: 8 B read, one 4 B atomic.
    """
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    cell = _cell_of(tl.load(y_ptr + i, mask=mask, other=0.0), tl.load(x_ptr + i, mask=mask, other=0.0),
                    height, width)
    tl.atomic_add(trail_ptr + cell, tl.zeros([BLOCK], tl.float32) + deposit, mask=mask, sem="relaxed")


@triton.jit
def phys_diffuse_decay_kernel(src_ptr, dst_ptr, height, width, keep, diffuse, ninth, retain,
                              BLOCK_Y: tl.constexpr, BLOCK_X: tl.constexpr):
    """Physarum 3/3: dst = ((1−s)·t + s·mean₃ₓ₃(t))·(1−decay), periodic; the 3×3 sum row by
    row (left + centre + right), rows top to bottom, as `sum9`.

    Program mapping: a 2-D grid of programs, each a BLOCK_Y × BLOCK_X tile. Bytes per cell:
    4 B read (the other eight loads hit in L1/L2), 4 B written.
    """
    up, here, down, left, cols, right, mask = _periodic_tile(height, width, BLOCK_Y, BLOCK_X)
    t = tl.load(src_ptr + here + cols, mask=mask)
    above = (tl.load(src_ptr + up + left, mask=mask) + tl.load(src_ptr + up + cols, mask=mask)) \
        + tl.load(src_ptr + up + right, mask=mask)
    middle = (tl.load(src_ptr + here + left, mask=mask) + t) + tl.load(src_ptr + here + right, mask=mask)
    below = (tl.load(src_ptr + down + left, mask=mask) + tl.load(src_ptr + down + cols, mask=mask)) \
        + tl.load(src_ptr + down + right, mask=mask)
    mean = ((above + middle) + below) * ninth
    tl.store(dst_ptr + here + cols, (keep * t + diffuse * mean) * retain, mask=mask)


# Launch shapes (fixed, not tuned): 2-D tiles of 8 × 128 cells, 1-D blocks of 1024 cells
# or 512 agents; 4 warps each.
TILE_Y, TILE_X, BLOCK_1D, BLOCK_AGENTS, WARPS = 8, 128, 1024, 512, 4


def _grid_2d(height, width):
    return (triton.cdiv(width, TILE_X), triton.cdiv(height, TILE_Y))


# ---------------------------------------------------------------------------------------
# Implementations: each has queue(n) (n steps queued), wait() (until they are done),
# advance(n) (both), fields() (its current fields); those on torch's stream also step()
# ---------------------------------------------------------------------------------------

class OnTorchStream:
    """An implementation whose launches go to torch's current stream (Triton, torch, the
    `rgs.kernels` ops): one step is `step()`, which do_bench's events can time directly."""
    events = True

    def queue(self, n):
        for _ in range(n):
            self.step()

    def wait(self):
        torch.cuda.current_stream().synchronize()

    def advance(self, n):
        self.queue(n)
        if torch.cuda.is_available():
            self.wait()


class TritonGrayScottV1(OnTorchStream):
    """Triton v1: the Laplacian kernel, then the in-place update kernel (two launches)."""

    def __init__(self, u0, v0, rates: GsRates, exact=True):
        self.u, self.v = u0.clone(), v0.clone()
        self.lu, self.lv = torch.empty_like(u0), torch.empty_like(v0)
        self.rates, self.opts = rates, (EXACT if exact else CONTRACTED)
        self.height, self.width = u0.shape
        assert u0.numel() < 2**31, "the kernels index cells in 32 bits"

    def step(self):
        r = self.rates
        gs_laplacian_kernel[_grid_2d(self.height, self.width)](
            self.u, self.v, self.lu, self.lv, self.height, self.width,
            BLOCK_Y=TILE_Y, BLOCK_X=TILE_X, num_warps=WARPS, **self.opts)
        cells = self.u.numel()
        gs_update_kernel[(triton.cdiv(cells, BLOCK_1D),)](
            self.u, self.v, self.lu, self.lv, cells, r.du, r.dv, r.feed, r.kill, r.dt,
            BLOCK=BLOCK_1D, num_warps=WARPS, **self.opts)

    def fields(self):
        return self.u, self.v


class TritonGrayScottFused(TritonGrayScottV1):
    """Triton fused: one kernel per step, ping-pong buffers."""

    def step(self):
        r = self.rates
        gs_fused_kernel[_grid_2d(self.height, self.width)](
            self.u, self.v, self.lu, self.lv, self.height, self.width, r.du, r.dv, r.feed, r.kill, r.dt,
            BLOCK_Y=TILE_Y, BLOCK_X=TILE_X, num_warps=WARPS, **self.opts)
        self.u, self.v, self.lu, self.lv = self.lu, self.lv, self.u, self.v


class RustGrayScottV1(OnTorchStream):
    """The project's v1 kernels through `rgs.kernels` (two launches on torch's stream)."""

    def __init__(self, rgs, u0, v0, rates: GsRates):
        self.k = rgs.kernels
        self.u, self.v = u0.clone(), v0.clone()
        self.lu, self.lv = torch.empty_like(u0), torch.empty_like(v0)
        self.rates = rates.kw()

    def step(self):
        self.k.grayscott_laplacian(self.u, self.v, self.lu, self.lv)
        self.k.grayscott_update(self.u, self.v, self.lu, self.lv, **self.rates)

    fields = TritonGrayScottV1.fields


class RustGrayScottFused(RustGrayScottV1):
    """The project's fused kernel through `rgs.kernels.grayscott_fused`, ping-pong."""

    def step(self):
        self.k.grayscott_fused(self.u, self.v, self.lu, self.lv, **self.rates)
        self.u, self.v, self.lu, self.lv = self.lu, self.lv, self.u, self.v


class RustSim:
    """A `rust_gpu_sim` simulation object: it launches on its own CUDA stream, so only the
    host can tell when its steps are done (`synchronize`)."""
    events = False

    def __init__(self, sim, views):
        self.sim, self.views = sim, views
        sim.synchronize()

    def queue(self, n):
        if n:
            self.sim.step(n)

    def wait(self):
        self.sim.synchronize()

    def advance(self, n):
        self.queue(n)
        self.wait()

    def fields(self):
        self.sim.synchronize()
        return tuple(torch.from_dlpack(getattr(self.sim, name)) for name in self.views)


class TritonPhysarum(OnTorchStream):
    """Triton Physarum on torch tensors: its own agents (struct of arrays) and trail;
    three launches per step (agents, deposit, diffuse+decay into the other trail buffer)."""

    def __init__(self, agents, p: PhysParams, device):
        assert agents < 2**31 and p.height * p.width < 2**31, "the kernels index in 32 bits"
        self.p, self.n = p, agents
        self.y = torch.empty(agents, dtype=torch.float32, device=device)
        self.x, self.heading = torch.empty_like(self.y), torch.empty_like(self.y)
        self.trail = torch.zeros((p.height, p.width), dtype=torch.float32, device=device)
        self.spare = torch.zeros_like(self.trail)
        self.steps_done = 0
        self.agent_grid = (triton.cdiv(agents, BLOCK_AGENTS),)
        phys_init_kernel[self.agent_grid](self.y, self.x, self.heading, agents, p.seed, float(p.height),
                                          float(p.width), BLOCK=BLOCK_AGENTS, num_warps=WARPS, **EXACT)

    def step(self):
        p = self.p
        phys_agents_kernel[self.agent_grid](
            self.y, self.x, self.heading, self.trail, self.n, p.height, p.width, float(p.height),
            float(p.width), p.sensor_dist, p.step_size, p.turn_angle, p.cos_sensor, p.sin_sensor, p.cos_turn,
            p.sin_turn, p.seed_key, PhysParams.step_key(self.steps_done),
            BLOCK=BLOCK_AGENTS, num_warps=WARPS, **EXACT)
        phys_deposit_kernel[self.agent_grid](self.y, self.x, self.trail, self.n, p.height, p.width, p.deposit,
                                             BLOCK=BLOCK_AGENTS, num_warps=WARPS, **EXACT)
        phys_diffuse_decay_kernel[_grid_2d(p.height, p.width)](
            self.trail, self.spare, p.height, p.width, p.keep, p.diffuse, float(NINTH), p.retain,
            BLOCK_Y=TILE_Y, BLOCK_X=TILE_X, num_warps=WARPS, **EXACT)
        self.trail, self.spare = self.spare, self.trail
        self.steps_done += 1

    def fields(self):
        return (self.trail,)


class TorchHeatRK4(OnTorchStream):
    """The PyTorch reference of one heat RK4 step: classic RK4 with explicit temporaries
    (`k_s = a∇²(u + c·k_{s−1})`, 0 on the faces), plain tensor ops on (nz, ny, nx)."""

    def __init__(self, u0, a, dt):
        self.u = u0.clone()
        self.a, self.dt = float(F32(a)), F32(dt)
        self.k = [torch.zeros_like(u0) for _ in range(4)]  # faces stay 0: never written
        self.tmp = torch.empty_like(u0)

    def _stage(self, f, out):
        """out = a·∇²f on interior cells: ((x pair) + (y pair) + (z pair)) − 6·centre."""
        inner = (slice(1, -1),) * 3
        s = f[1:-1, 1:-1, :-2] + f[1:-1, 1:-1, 2:]
        s += f[1:-1, :-2, 1:-1] + f[1:-1, 2:, 1:-1]
        s += f[:-2, 1:-1, 1:-1] + f[2:, 1:-1, 1:-1]
        s -= 6.0 * f[inner]
        torch.mul(s, self.a, out=out[inner])

    def step(self):
        u, k, tmp, dt = self.u, self.k, self.tmp, self.dt
        self._stage(u, k[0])
        for s, c in ((1, dt / F32(2)), (2, dt / F32(2)), (3, dt)):
            torch.mul(k[s - 1], float(c), out=tmp)
            tmp += u
            self._stage(tmp, k[s])
        torch.mul(k[1], 2.0, out=tmp)
        tmp += k[0]
        tmp += 2.0 * k[2]
        tmp += k[3]
        tmp *= float(dt / F32(6))
        u += tmp

    def fields(self):
        return (self.u,)


# ---------------------------------------------------------------------------------------
# Measuring and comparing
# ---------------------------------------------------------------------------------------

class Report:
    """Rows of the table, agreement checks, and the run's settings."""

    def __init__(self, bench_args):
        self.bench_args = bench_args
        self.rows, self.checks, self.notes = [], [], []

    def check(self, name, passed, detail):
        self.checks.append(dict(name=name, passed=bool(passed), detail=detail))
        say(f"  [{'ok' if passed else 'FAIL'}] {name}: {detail}")
        return passed

    @property
    def failed(self):
        return [c for c in self.checks if not c["passed"]]


def bench_ms(fn, report):
    """Median milliseconds of fn by triton.testing.do_bench, with the run's arguments."""
    a = report.bench_args
    return triton.testing.do_bench(fn, warmup=a["warmup"], rep=a["rep"], return_mode="median")


def loop_fn(impl, k):
    """The function timed for the "k-step loop" column: wait for torch's stream (so that
    do_bench's L2 flush and start event are done before any step starts), queue k steps,
    wait until they are done. Its time is wall time for k steps plus one host round trip."""
    stream = torch.cuda.current_stream()

    def fn():
        stream.synchronize()
        impl.queue(k)
        impl.wait()
    return fn


def steps_per_call(impl, target_ms, multiple=1):
    """Steps per timed call so that a call lasts about target_ms (the host round trip then
    weighs little), from a wall-clock estimate of 5 steps; a multiple of `multiple`."""
    import time
    impl.advance(2)
    t0 = time.perf_counter()
    impl.advance(5)
    per_step = (time.perf_counter() - t0) * 1e3 / 5
    k = min(1000, max(1, math.ceil(target_ms / max(per_step, 1e-6))))
    return multiple * math.ceil(k / multiple)


def time_impl(impl, report, k):
    """{loop_ms: wall ms per step of a k-step loop, events_ms: ms of one step by do_bench's
    events on torch's stream (None for a simulation object), k}."""
    loop_ms = bench_ms(loop_fn(impl, k), report) / k
    events_ms = bench_ms(impl.step, report) if impl.events else None
    return dict(loop_ms=loop_ms, events_ms=events_ms, k=k)


def max_abs_diff(a, b):
    return float((a.double() - b.double()).abs().max().item())


def describe_diff(pairs):
    """(bit-identical?, largest |difference|, text) for (label, a, b) tensor pairs."""
    if all(torch.equal(a, b) for _, a, b in pairs):
        return True, 0.0, "bit-identical"
    worst = max(max_abs_diff(a, b) for _, a, b in pairs)
    return False, worst, "max abs diff " + ", ".join(f"{label} {max_abs_diff(a, b):.3g}" for label, a, b in pairs)


def gs_rates_from(rgs, sim):
    """Gray-Scott's rates as the simulation reports them (`sim.rates`), else its preset's
    from `rgs.GrayScott.presets()` with the default diffusion and dt, else this file's."""
    rates = CORAL
    try:
        given = sim.rates
    except AttributeError:
        given = next((p for p in rgs.GrayScott.presets() if p.get("name") == "coral"), {})
    given = {k: float(F32(given[k])) for k in ("du", "dv", "feed", "kill", "dt") if k in given}
    rates = GsRates(**{**rates.__dict__, **given})
    if rates != CORAL:
        say(f"  note: rust_gpu_sim gives {rates}, this file's constants are {CORAL}: using rust_gpu_sim's")
    return rates


def phys_params_from(rgs, preset, height, width, seed):
    """The Physarum preset's parameters, from `rgs.Physarum.presets()` where it has them."""
    p = PhysParams.from_preset(preset, height, width, seed)
    try:
        entry = next(e for e in rgs.Physarum.presets() if e.get("name") == preset)
    except (AttributeError, StopIteration):
        return p
    keys = ("sensor_dist", "sensor_angle", "turn_angle", "step_size", "deposit", "diffuse", "decay")
    theirs = tuple(float(F32(entry[k])) for k in keys)
    if theirs != tuple(getattr(p, k) for k in keys):
        say(f"  note: rgs.Physarum.presets() gives {dict(zip(keys, theirs))} for {preset}: using them")
        PHYSARUM_PRESETS[preset] = theirs
        p = PhysParams.from_preset(preset, height, width, seed)
    return p


# Tolerances of the agreement checks (stated in the report).
GS_TOL = 1e-5         # Triton (no contraction) vs Rust, max |Δ| after --steps steps; target: 0
GS_TOL_FMA = 1e-4     # Triton with FMA contraction (4e-7 after 200 steps on a 300x257 test, pre-fma update)
GS_TOL_INTERP = 1e-6  # self-test, interpreter's two-rounding tl.fma vs one rounding (1.2e-7 on its 37x53, 12 steps)
PHYS_MASS_RTOL = 1e-4  # total trail mass, relative
PHYS_CV_RTOL = 0.05    # coefficient of variation of the trail (std/mean), relative
HEAT_RTOL = 1e-5       # max |Δu| / max |u|


def fmt_time(ms, unit):
    return "–" if ms is None else (f"{ms * 1e3:.2f} µs" if unit == "µs" else f"{ms:.3f} ms")


def measure(report, workload, size, impls, baseline, unit, work, work_unit, multiple=1, target_ms=2.0):
    """Times every implementation (see `time_impl`) and appends its row; returns the rows.
    `work`: cells or agents per step, for the throughput column (`work_unit` per second)."""
    rows = []
    for name, impl in impls.items():
        k = steps_per_call(impl, target_ms, multiple)
        t = time_impl(impl, report, k)
        say(f"  {name}: {fmt_time(t['loop_ms'], unit)}/step in a {k}-step loop, "
            f"{fmt_time(t['events_ms'], unit)} by events")
        rows.append(dict(workload=workload, size=size, implementation=name, baseline=baseline, unit=unit,
                         throughput=f"{work / t['loop_ms'] / 1e6:.2f} {work_unit}", **t))
    sims = [impl for impl in impls.values() if not impl.events]
    overhead = bench_ms(loop_fn(sims[0], 0), report) if sims else None
    base = next(r for r in rows if r["implementation"] == baseline)["loop_ms"]
    for r in rows:
        r["vs_rust"] = r["loop_ms"] / base
        r["sync_overhead_ms"] = overhead
    if overhead is not None:
        report.notes.append(f"{workload} {size}: one host round trip (the loop's two waits, no step) costs "
                            f"{fmt_time(overhead, unit)} per timed call, included in its k-step loop times.")
    report.rows.extend(rows)
    return rows


def run_grayscott(rgs, size, steps, report, device):
    say(f"\n== Gray-Scott {size}x{size}, coral, {steps} steps checked")
    start = rgs.GrayScott(size=size, preset="coral", backend="cuda", seed=1)
    start.synchronize()
    rates = gs_rates_from(rgs, start)
    u0, v0 = torch.from_dlpack(start.u).clone(), torch.from_dlpack(start.v).clone()
    del start
    baseline = "Rust fused (kernel op)"
    impls = {
        baseline: RustGrayScottFused(rgs, u0, v0, rates),
        "Rust v1 (kernel ops)": RustGrayScottV1(rgs, u0, v0, rates),
        "Rust fused (GrayScott sim)": RustSim(
            rgs.GrayScott(size=size, preset="coral", variant="fused", backend="cuda", seed=1), ("u", "v")),
        "Triton v1": TritonGrayScottV1(u0, v0, rates, exact=True),
        "Triton fused": TritonGrayScottFused(u0, v0, rates, exact=True),
        "Triton fused, FMA contraction": TritonGrayScottFused(u0, v0, rates, exact=False),
    }
    for impl in impls.values():
        impl.advance(steps)
    ref_u, ref_v = (t.clone() for t in impls[baseline].fields())
    agreement = {baseline: "reference"}
    for name, impl in impls.items():
        if name == baseline:
            continue
        u, v = impl.fields()
        exact, worst, text = describe_diff([("u", u, ref_u), ("v", v, ref_v)])
        agreement[name] = text
        if name.startswith("Rust"):
            report.check(f"Gray-Scott {size}² {name} = {baseline}", exact,
                         f"{text} (the project's variants are bit-identical by design)")
        elif "FMA" in name:
            report.check(f"Gray-Scott {size}² {name} ≈ {baseline}", worst <= GS_TOL_FMA,
                         f"{text} (bound {GS_TOL_FMA:g}; contraction rounds differently)")
        else:
            report.check(f"Gray-Scott {size}² {name} ≈ {baseline}", worst <= GS_TOL,
                         f"{text} (target bit-identical; bound {GS_TOL:g})")
    if size <= 1024:  # the NumPy reimplementation, on the CPU
        nu, nv = u0.cpu().numpy(), v0.cpu().numpy()
        for _ in range(steps):
            nu, nv = np_gs_step(nu, nv, rates)
        exact, worst, text = describe_diff([("u", torch.from_numpy(nu), ref_u.cpu()),
                                            ("v", torch.from_numpy(nv), ref_v.cpu())])
        report.check(f"Gray-Scott {size}² NumPy reference = {baseline}", exact,
                     f"{text} (this script's reading of the Rust arithmetic)")
    for r in measure(report, "Gray-Scott", f"{size}²", impls, baseline, "µs", size * size, "Gcell/s"):
        r.update(agreement=agreement[r["implementation"]], check_steps=steps)


def trail_stats(trail):
    t = trail.double()
    mean = t.mean().item()
    return dict(mass=t.sum().item(), mean=mean, cv=(t.std().item() / mean) if mean > 0 else float("nan"),
                max=t.max().item())


def run_physarum(rgs, size, agents, steps, report, device, preset="network"):
    say(f"\n== Physarum {size}x{size}, {agents:,} agents, {preset}, {steps} steps checked")
    p = phys_params_from(rgs, preset, size, size, seed=1)
    rust = RustSim(rgs.Physarum(width=size, height=size, agents=agents, preset=preset, variant="optimized",
                                backend="cuda", seed=1), ("trail",))
    tri = TritonPhysarum(agents, p, device)
    tri.wait()
    try:  # the simulation's starting agents, where the module hands them out (a copy)
        start = rust.sim.agents
        same_start = all(np.array_equal(np.asarray(start[k]), t.cpu().numpy())
                         for k, t in (("y", tri.y), ("x", tri.x), ("heading", tri.heading)))
        start_text = f"starting agents {'bit-identical' if same_start else 'differ'}"
    except (AttributeError, KeyError, TypeError) as e:
        start_text = f"starting agents not compared ({type(e).__name__})"
    say(f"  (not a check) {start_text}")
    rust.advance(steps)
    tri.advance(steps)
    (rt,), (tt,) = rust.fields(), tri.fields()
    rs, ts = trail_stats(rt), trail_stats(tt)
    mass_rel = abs(ts["mass"] - rs["mass"]) / rs["mass"]
    cv_rel = abs(ts["cv"] - rs["cv"]) / rs["cv"]
    exact, worst, text = describe_diff([("trail", tt, rt)])
    differing = int((tt != rt).sum().item())
    say(f"  Rust trail: mass {rs['mass']:.6g}, std/mean {rs['cv']:.4f}; "
        f"Triton: mass {ts['mass']:.6g}, std/mean {ts['cv']:.4f}")
    ok_mass = report.check(f"Physarum {size}² {agents:,} agents: total trail mass", mass_rel <= PHYS_MASS_RTOL,
                           f"relative difference {mass_rel:.2e} (bound {PHYS_MASS_RTOL:g})")
    ok_cv = report.check(f"Physarum {size}² {agents:,} agents: trail std/mean", cv_rel <= PHYS_CV_RTOL,
                         f"{ts['cv']:.4f} vs {rs['cv']:.4f}, relative difference {cv_rel:.2e} "
                         f"(bound {PHYS_CV_RTOL:g})")
    bitwise = "trails bit-identical" if exact else f"{differing:,} cells differ, {text}"
    say(f"  (not a check) {bitwise}")
    agreement = (f"mass rel. diff {mass_rel:.1e}, std/mean rel. diff {cv_rel:.1e} "
                 f"({'ok' if ok_mass and ok_cv else 'FAILED'}); {bitwise}; {start_text}")
    baseline = "Rust optimized (Physarum sim)"
    rows = measure(report, "Physarum", f"{size}², {agents / 1e6:g}M agents",
                   {baseline: rust, "Triton (3 kernels)": tri}, baseline, "ms", agents, "G agent-steps/s",
                   multiple=16)
    for r in rows:
        r.update(agreement="reference" if r["implementation"] == baseline else agreement, check_steps=steps,
                 raw=dict(agents=agents, rust_stats=rs, triton_stats=ts, mass_rel=mass_rel, cv_rel=cv_rel,
                          bit_identical=exact, cells_differing=differing, max_abs_diff=worst, start=start_text))


def run_heat(rgs, size, steps, report, device):
    say(f"\n== Heat {size}^3, RK4, hot cube, {steps} steps checked")
    alpha, h = 1.0, 1.0
    sim = RustSim(rgs.Heat(size=size, variant="single", backend="cuda", alpha=alpha, h=h), ("u",))
    (u0,) = sim.fields()
    u0 = u0.clone()
    dt = float(sim.sim.dt)
    a = float(F32(alpha) / (F32(h) * F32(h)))
    ref = TorchHeatRK4(u0, a, dt)
    sim.advance(steps)
    ref.advance(steps)
    (ru,), (tu,) = sim.fields(), ref.fields()
    scale = float(tu.abs().max().item())
    diff = max_abs_diff(tu, ru)
    rel = diff / scale
    report.check(f"Heat {size}³ single vs PyTorch RK4", rel <= HEAT_RTOL,
                 f"max |Δu| / max |u| = {rel:.2e} (max |Δu| = {diff:.2e}; bound {HEAT_RTOL:g}; dt = {dt:.6g})")
    baseline = "Rust single (Heat sim)"
    rows = measure(report, "Heat RK4", f"{size}³", {baseline: sim, "PyTorch RK4 reference": ref}, baseline,
                   "ms", size ** 3, "Gcell/s")
    for r in rows:
        r.update(agreement="reference" if r["implementation"] == baseline else f"max rel. error {rel:.1e}",
                 check_steps=steps, raw=dict(dt=dt, a=a, rel_err=rel, max_abs_diff=diff))


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------

def write_report(report, meta, out_dir):
    a = report.bench_args
    lines = [
        "# Python comparison: Triton and PyTorch against rust_gpu_sim",
        "",
        f"GPU: {meta['gpu']} · torch {meta['torch']} · Triton {meta['triton']} · "
        f"rust_gpu_sim {meta['rust_gpu_sim']} · Python {meta['python']} · {meta['date']}",
        "",
        f"Sizes: {meta['sizes']}",
        "",
        f"Timing: `triton.testing.do_bench(fn, warmup={a['warmup']}, rep={a['rep']}, return_mode=\"median\")` "
        "(warmup and rep in ms). \"k-step loop\": fn waits for torch's stream, queues k steps (k chosen for about "
        "2 ms per call), waits until they are done; its time / k is wall time per step, one host round trip "
        "per call included, the same method for every row, and what \"throughput\" and \"vs Rust\" (time / "
        "the row marked reference) use. \"one step, events\": fn is one step, timed by do_bench's CUDA events "
        "on torch's stream (GPU time, L2 flushed before each call); not for simulation objects, which launch "
        "on their own stream.",
        "",
        "| workload | size | implementation | per step, k-step loop | k | one step, events | throughput "
        "| vs Rust | agreement after N steps |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in report.rows:
        cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731
        lines.append(
            f"| {r['workload']} | {r['size']} | {cell(r['implementation'])} | {fmt_time(r['loop_ms'], r['unit'])} "
            f"| {r['k']} | {fmt_time(r['events_ms'], r['unit'])} | {r['throughput']} | {r['vs_rust']:.2f}× "
            f"| {cell(r.get('agreement', '?'))} (N = {r.get('check_steps', '?')}) |")
    failed = report.failed
    lines += ["", f"Agreement checks: {len(report.checks) - len(failed)} passed, {len(failed)} failed", ""]
    lines += [f"- {'ok' if c['passed'] else 'FAILED'}: {c['name']}: {c['detail']}" for c in report.checks]
    lines += ["", "Notes:", ""]
    lines += [
        "- Gray-Scott: every implementation starts from the same tensors (the coral start of "
        "`rgs.GrayScott(size, seed=1)`); the update uses the project's explicit fused multiply-adds (two per "
        "field, `tl.fma` in Triton, on the CPU too) and nothing else is contracted: the Triton kernels are "
        "launched with `enable_fp_fusion=False`, except the \"FMA contraction\" row (Triton's default). "
        f"Triton tiles: {TILE_Y}×{TILE_X} cells (1-D: {BLOCK_1D}), {WARPS} warps, not tuned.",
        "- Physarum: the Triton step runs its own agents, started as the project starts them (a hash of seed and "
        "index) and moved by the project's rules (ties, counter-based random side, its sine polynomial, nearest "
        "sensing, no jitter), on a float-atomic deposit; the checks are statistical: total trail mass (set by "
        "deposits and decay alone) and the trail's std/mean (how far the network has formed); the bitwise "
        "comparison is reported, not checked. k is a multiple of 16, the optimized variant's binning period.",
        "- Heat: the PyTorch reference starts from the simulation's own initial field and uses its dt, with "
        "a = α/h² = 1; the `single` variant evaluates RK4 as its polynomial with FMAs, so it agrees to rounding "
        "only (max |Δu| / max |u|).",
    ]
    lines += [f"- {n}" for n in report.notes]
    text = "\n".join(lines) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    md_path, json_path = os.path.join(out_dir, "python-compare.md"), os.path.join(out_dir, "python-compare.json")
    with open(md_path, "w") as f:
        f.write(text)
    with open(json_path, "w") as f:
        json.dump(dict(meta=meta, bench_args=a, tolerances=dict(
            gs=GS_TOL, gs_fma=GS_TOL_FMA, physarum_mass_rel=PHYS_MASS_RTOL, physarum_cv_rel=PHYS_CV_RTOL,
            heat_rel=HEAT_RTOL), rows=report.rows, checks=report.checks, notes=report.notes), f, indent=2)
    say("\n" + text)
    say(f"wrote {md_path} and {json_path}")


# ---------------------------------------------------------------------------------------
# Self-test: Triton and the PyTorch reference against NumPy on tiny grids
# ---------------------------------------------------------------------------------------

def np_spots(height, width, rng):
    """U = 1, V = 0 with a few seeded squares (U ≈ 1/2, V ≈ 1/4, ±1% noise)."""
    u = np.ones((height, width), np.float32)
    v = np.zeros((height, width), np.float32)
    for _ in range(4):
        y, x, side = rng.integers(0, height), rng.integers(0, width), 6
        ys, xs = np.arange(y, y + side) % height, np.arange(x, x + side) % width
        u[np.ix_(ys, xs)] = F32(0.5) + F32(0.01) * (rng.random((side, side), dtype=np.float32) - F32(0.5))
        v[np.ix_(ys, xs)] = F32(0.25) + F32(0.01) * (rng.random((side, side), dtype=np.float32) - F32(0.5))
    return u, v


def py_fma32_exact(a, b, c):
    """fma(a, b, c) of three float32 values by exact rational arithmetic: the float32 nearest
    a·b + c (ties to even; ±inf past the range), for checking `np_fma32`."""
    a, b, c = float(a), float(b), float(c)
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:  # IEEE: −0 only when a·b and c are both −0
        negative = a * b == 0 and c == 0 and math.copysign(1, a * b) < 0 and math.copysign(1, c) < 0
        return F32(-0.0 if negative else 0.0)
    m = abs(x)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if m < Fraction(2) ** e:
        e -= 1  # 2^e ≤ m < 2^(e+1)
    q = Fraction(2) ** (max(e, -126) - 23)  # float32's spacing there (subnormals below 2^-126)
    n, rest = divmod(m, q)
    if 2 * rest > q or (2 * rest == q and n % 2 == 1):
        n += 1
    r = n * q
    return F32(math.copysign(math.inf if r >= 2 ** 128 else float(r), x))


def fma_test_triples(rng, n=600):
    """float32 triples (a, b, c) for checking an fma, in groups of n: (a, b, c, names of the
    groups and their sizes). Groups: random magnitudes; Gray-Scott-like operands; c = −fl(a·b)
    (± a few ulp); a·b + c within 2^-24 of a float32 tie (where rounding a·b + c to float64
    first can land on the tie); exact ties; results in float32's subnormal range; signed zeros."""
    def f32(mant, exp, sign):  # mant in [2^23, 2^24) (or below, for subnormal), exponents as ints
        return (sign * np.ldexp(mant.astype(np.float64), exp - 23)).astype(np.float32)

    def mant():
        return rng.integers(1 << 23, 1 << 24, n)

    def sign():
        return rng.choice([-1.0, 1.0], n)

    def ulp(x):  # float32 spacing above |x| (normal x)
        return np.ldexp(1.0, np.frexp(np.abs(x).astype(np.float64))[1] - 24)

    groups = []
    ea, eb = rng.integers(-30, 31, n), rng.integers(-30, 31, n)
    groups.append(("random", f32(mant(), ea, sign()), f32(mant(), eb, sign()),
                   f32(mant(), ea + eb + rng.integers(-30, 31, n), sign())))
    u, v = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    uvv = (u * v) * v
    groups.append(("Gray-Scott-like", rng.random(n, dtype=np.float32) * F32(0.25),
                   (rng.random(n, dtype=np.float32) - F32(0.5)) * F32(8), np.where(rng.random(n) < 0.5, uvv, -uvv)))
    a, b = f32(mant(), ea, sign()), f32(mant(), eb, sign())
    b = np.where(np.arange(n) % 8 == 0, f32(np.full(n, 1 << 23), eb, sign()), b)  # some exact products
    c = -(a * b)  # float32 product, so a·b + c is its rounding error (exact) or a few ulp off it
    c = (c.astype(np.float64) + rng.integers(-2, 3, n) * ulp(c)).astype(np.float32)
    groups.append(("c = -fl(a*b) ± ulps", a, b, c))
    # a·b within 2^-24 (relative) of half of c's spacing, so a·b + c lies just off a float32
    # tie: mantissas ma, mb = round(2^47/ma) (ma·mb within 2^-24 of 2^47), or, for half the
    # pairs, 2^23 ± j (ma·mb = 2^46 − j², 2^-46 to 2^-24 below 2^46). A quarter of c's spacing
    # is a tie too where c = ±2^ex and a·b has the other sign.
    ma = mant()
    mb = np.minimum(np.rint(2.0 ** 47 / ma), (1 << 24) - 1).astype(np.int64)
    j = np.exp2(rng.random(n) * 11).astype(np.int64)
    square = np.arange(n) % 2 == 1
    ma, mb = np.where(square, (1 << 23) + j, ma), np.where(square, (1 << 23) - j, mb)
    quarter = np.arange(n) % 8 < 2
    sc = sign()
    cx = f32(np.where(quarter, 1 << 23, mant()), rng.integers(-20, 21, n), sc)
    ex = np.frexp(np.abs(cx).astype(np.float64))[1] - 1  # 2^ex ≤ |c| < 2^(ex+1)
    k = ex - 24 - quarter  # a·b ≈ 2^k: half (or a quarter of) c's ulp
    ka = rng.integers(-10, 11, n)
    groups.append(("near a tie", f32(ma, ka, np.where(quarter, -sc, sign())),
                   f32(mb, k - ka - np.where(square, 0, 1), np.ones(n)), cx))
    cx = f32(mant(), rng.integers(-20, 21, n), sign())
    half = (ulp(cx) / 2).astype(np.float32)
    groups.append(("exact tie", half * sign(), np.ones(n, np.float32), cx))
    tiny = lambda: f32(mant(), rng.integers(-75, -64, n), sign())  # noqa: E731
    groups.append(("subnormal", tiny(), tiny(),
                   f32(rng.integers(0, 1 << 24, n), rng.integers(-150, -125, n), sign())))
    zero, x = np.float32([0.0, -0.0]), f32(mant(), ea, sign())  # signed zeros: a·b or c or both
    a, b = np.where(np.arange(n) % 3 == 0, zero[np.arange(n) % 2], x), f32(mant(), eb, sign())
    c = np.where(np.arange(n) % 3 == 1, -(a * b), zero[rng.integers(0, 2, n)])
    groups.append(("zeros", a, b, np.where(np.arange(n) % 3 == 2, c * F32(2 ** -10) + zero[1], c)))
    # float32 throughout (a float64 operand would make Triton's probe compute in float64); every
    # value above is a float32 already, so the cast is exact.
    wide = [np.concatenate([np.asarray(g[i], np.float64) for g in groups]) for i in (1, 2, 3)]
    a, b, c = (x.astype(np.float32) for x in wide)
    assert all(np.array_equal(x, y.astype(np.float64)) for x, y in zip(wide, (a, b, c)))
    return a, b, c, [(g[0], len(g[1])) for g in groups]


@triton.jit
def fma_probe_kernel(a_ptr, b_ptr, c_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = tl.fma(a, b, c), elementwise: what this Triton makes of `tl.fma`."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    tl.store(out_ptr + i, tl.fma(tl.load(a_ptr + i, mask=mask), tl.load(b_ptr + i, mask=mask),
                                 tl.load(c_ptr + i, mask=mask)), mask=mask)


def bits_equal(a, b):
    return np.array_equal(np.asarray(a, np.float32).view(np.uint32), np.asarray(b, np.float32).view(np.uint32))


def check_fma(report, device):
    """`np_fma32` against exact rationals, then `tl.fma` against both: returns the NumPy fma
    that matches this Triton's `tl.fma` (`np_fma32`, or `np_fma32_twice` under the interpreter)."""
    a, b, c, groups = fma_test_triples(np.random.default_rng(11))
    want = np.array([py_fma32_exact(x, y, z) for x, y, z in zip(a, b, c)], np.float32)
    got = np_fma32(a, b, c)
    wrong = int((got.view(np.uint32) != want.view(np.uint32)).sum())
    naive = (a.astype(np.float64) * b + c).astype(np.float32)  # rounded twice: 53 bits, then 24
    missed = int((naive.view(np.uint32) != want.view(np.uint32)).sum())
    report.check("np_fma32 = exact fma (fractions.Fraction, ties to even)", wrong == 0,
                 f"{wrong} of {len(a)} triples differ; groups " + ", ".join(f"{g} {k}" for g, k in groups)
                 + f"; float64 a·b + c then float32 would get {missed} wrong")
    normal = np.all([np.abs(x) >= np.float32(2.0 ** -126) for x in (a, b, c, want)], axis=0)  # probed on these
    t = [torch.from_numpy(np.ascontiguousarray(x[normal])).to(device) for x in (a, b, c)]
    out = torch.empty_like(t[0])
    n = out.numel()
    fma_probe_kernel[(triton.cdiv(n, BLOCK_1D),)](*t, out, n, BLOCK=BLOCK_1D, num_warps=WARPS, **EXACT)
    out = out.cpu().numpy()
    once, twice = bits_equal(out, want[normal]), bits_equal(out, np_fma32_twice(a, b, c)[normal])
    if not INTERPRET:
        report.check("Triton tl.fma = exact fma", once, f"{n} triples (normal operands and results), "
                     + ("bit-identical" if once else "differs: the Gray-Scott kernels cannot match"))
        return np_fma32
    report.check("Triton interpreter's tl.fma rounds once or twice", once or twice, f"{n} triples: "
                 + ("exact fma" if once else "rounds twice (a·b, then + c)" if twice else "neither"))
    return np_fma32 if once else np_fma32_twice


def self_test(report):
    device = "cpu" if INTERPRET else "cuda"
    small = INTERPRET
    say(f"self-test on {device} ({'Triton interpreter' if INTERPRET else 'compiled Triton'})")
    for name, value, bits in CONSTANT_BITS:
        got = int(np.asarray(value, np.float32).view(np.uint32))
        if got != bits:
            report.check(f"constant {name}", False, f"bits {got:#010x}, Rust's {bits:#010x}")
    report.check("f32 constants", not report.failed, f"{len(CONSTANT_BITS)} constants have Rust's bits")
    triton_fma = check_fma(report, device)
    rng = np.random.default_rng(7)

    # Gray-Scott: Triton v1 and fused against NumPy, bit for bit (under an interpreter whose
    # tl.fma rounds twice: bit for bit against NumPy doing that, and within a bound of the
    # kernels' arithmetic).
    (h, w), steps = ((37, 53), 12) if small else ((300, 257), 200)
    nu, nv = np_spots(h, w, rng)
    nv0 = nv.copy()
    u0, v0 = torch.from_numpy(nu).to(device), torch.from_numpy(nv).to(device)
    twice = triton_fma is not np_fma32
    tu, tv = nu, nv
    for _ in range(steps):
        nu, nv = np_gs_step(nu, nv, CORAL)
        if twice:
            tu, tv = np_gs_step(tu, tv, CORAL, fma=triton_fma)
    ref = (torch.from_numpy(nu), torch.from_numpy(nv))
    if twice:
        say("  interpreter: tl.fma rounds twice, so the Triton Gray-Scott kernels are checked bit for bit "
            f"against NumPy rounding twice, and against the kernels' one-rounding fma within {GS_TOL_INTERP:g}")
    variants = [("v1", TritonGrayScottV1(u0, v0, CORAL)), ("fused", TritonGrayScottFused(u0, v0, CORAL))]
    if not INTERPRET:
        variants.append(("fused, FMA contraction", TritonGrayScottFused(u0, v0, CORAL, exact=False)))
    for name, impl in variants:
        impl.advance(steps)
        u, v = (t.cpu() for t in impl.fields())
        exact, worst, text = describe_diff([("u", u, ref[0]), ("v", v, ref[1])])
        if "FMA" in name:
            report.check(f"Gray-Scott Triton {name} ≈ NumPy ({h}x{w}, {steps} steps)", worst <= GS_TOL_FMA,
                         f"{text} (contraction rounds differently; bound {GS_TOL_FMA:g})")
        elif twice:
            same, _, same_text = describe_diff([("u", u, torch.from_numpy(tu)), ("v", v, torch.from_numpy(tv))])
            report.check(f"Gray-Scott Triton {name} = NumPy with tl.fma rounded twice, as the interpreter does "
                         f"({h}x{w}, {steps} steps)", same, same_text)
            report.check(f"Gray-Scott Triton {name} ≈ NumPy, one-rounding fma ({h}x{w}, {steps} steps)",
                         worst <= GS_TOL_INTERP, f"{text} (interpreter: tl.fma rounds twice; bound "
                         f"{GS_TOL_INTERP:g}, not checked bit for bit)")
        else:
            report.check(f"Gray-Scott Triton {name} = NumPy ({h}x{w}, {steps} steps)", exact, text)
    # A sanity check of the NumPy step itself: the pattern moved, and stayed in [0, 1].
    report.check("Gray-Scott NumPy step changes the field within [0, 1]",
                 not np.array_equal(nv, nv0) and 0 <= nu.min() and nu.max() <= 1,
                 f"v in [{nv.min():.3f}, {nv.max():.3f}]")

    # Physarum: the Triton start and steps against NumPy, bit for bit.
    (h, w, n), steps = ((24, 40, 300), 6) if small else ((256, 192, 60_000), 40)
    for preset in ("network", "writeup"):
        p = PhysParams.from_preset(preset, h, w, seed=1)
        tri = TritonPhysarum(n, p, device)
        y, x, hd = np_physarum_init(n, p)
        same = all(torch.equal(t.cpu(), torch.from_numpy(a)) for t, a in ((tri.y, y), (tri.x, x), (tri.heading, hd)))
        report.check(f"Physarum Triton start = NumPy ({preset}, {n} agents)", same,
                     "bit-identical" if same else "differs")
        trail = np.zeros((h, w), np.float32)
        for s in range(steps):
            y, x, hd, trail = np_physarum_step(y, x, hd, trail, s, p)
        tri.advance(steps)
        pairs = [("y", tri.y.cpu(), torch.from_numpy(y)), ("x", tri.x.cpu(), torch.from_numpy(x)),
                 ("heading", tri.heading.cpu(), torch.from_numpy(hd)),
                 ("trail", tri.trail.cpu(), torch.from_numpy(trail))]
        exact, worst, text = describe_diff(pairs)
        report.check(f"Physarum Triton = NumPy ({preset}, {h}x{w}, {n} agents, {steps} steps)", exact, text)
        mass = float(trail.astype(np.float64).sum())
        retain = float(F32(1) - F32(p.decay))
        expected = sum(n * p.deposit * retain ** (steps - j) for j in range(steps))
        report.check(f"Physarum NumPy trail mass = deposits × decay ({preset})",
                     abs(mass - expected) <= 1e-4 * expected,
                     f"{mass:.6g} vs {expected:.6g}")

    # Heat: the PyTorch reference against NumPy.
    shape, steps = ((11, 10, 9), 3) if small else ((40, 33, 27), 10)
    u = np.zeros(shape, np.float32)
    u[3:-3, 3:-3, 3:-3] = 1.0
    u[0, :, :] = 0.25  # one face at another boundary value: faces must stay as they are
    dt = float(F32(0.8) * F32(2.785 / 12.0))
    ref = TorchHeatRK4(torch.from_numpy(u).to(device), 1.0, dt)
    ref.advance(steps)
    nu = u
    for _ in range(steps):
        nu = np_heat_rk4_step(nu, 1.0, dt)
    got = ref.u.cpu()
    diff = max_abs_diff(got, torch.from_numpy(nu))
    exact = torch.equal(got, torch.from_numpy(nu))
    report.check(f"Heat PyTorch RK4 ≈ NumPy RK4 ({shape}, {steps} steps)", diff <= 1e-6 * float(np.abs(nu).max()),
                 "bit-identical" if exact else f"max |Δu| = {diff:.2e}")
    report.check("Heat faces kept", torch.equal(got[0], torch.from_numpy(u[0])) and float(got[-1].abs().max()) == 0.0,
                 "faces unchanged")
    failed = report.failed
    say(f"\nself-test: {len(report.checks) - len(failed)} passed, {len(failed)} failed")
    return not failed


# ---------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small sizes only (512², 2048²/1M, 64³), few reps")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".", help="output directory (default $OUT, else .)")
    ap.add_argument("--steps", type=int, default=100, help="steps before the Gray-Scott and Physarum checks")
    ap.add_argument("--heat-steps", type=int, default=5, help="steps before the heat check")
    ap.add_argument("--only", default="grayscott,physarum,heat", help="comma-separated workloads")
    ap.add_argument("--self-test", action="store_true", help="Triton and PyTorch against NumPy only, tiny sizes")
    ap.add_argument("--interpret", action="store_true", help="with --self-test: Triton's interpreter, on the CPU")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if not only <= {"grayscott", "physarum", "heat"} or args.steps < 1 or args.heat_steps < 1:
        ap.error("--only takes grayscott, physarum, heat; --steps and --heat-steps at least 1")

    bench_args = dict(warmup=10, rep=50) if args.quick else dict(warmup=50, rep=300)
    report = Report(bench_args)
    if args.self_test:
        sys.exit(0 if self_test(report) else 1)

    if not torch.cuda.is_available():
        sys.exit("python-compare: needs a CUDA GPU (or --self-test --interpret)")
    import rust_gpu_sim as rgs

    gs_sizes = [512] if args.quick else [512, 4096]
    phys_cases = [(2048, 1_000_000)] if args.quick else [(2048, 1_000_000), (2048, 10_000_000)]
    heat_sizes = [64] if args.quick else [64, 600]
    meta = dict(
        gpu=torch.cuda.get_device_name(), torch=torch.__version__, triton=triton.__version__,
        rust_gpu_sim=getattr(rgs, "__version__", "?"), python=platform.python_version(),
        date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        sizes="; ".join(s for s in [
            "Gray-Scott " + ", ".join(f"{n}²" for n in gs_sizes) + " (coral, seed 1)" if "grayscott" in only else "",
            "Physarum " + ", ".join(f"{n}² × {a / 1e6:g}M agents" for n, a in phys_cases) + " (network, seed 1)"
            if "physarum" in only else "",
            "heat RK4 " + ", ".join(f"{n}³" for n in heat_sizes) + " (hot cube, α = h = 1, the simulation's dt)"
            if "heat" in only else ""] if s),
        quick=args.quick, steps=args.steps, heat_steps=args.heat_steps)
    say(f"{meta['gpu']}, torch {meta['torch']}, Triton {meta['triton']}, do_bench {bench_args}")
    runs = ([(run_grayscott, (size, args.steps)) for size in gs_sizes] if "grayscott" in only else []) \
        + ([(run_physarum, case + (args.steps,)) for case in phys_cases] if "physarum" in only else []) \
        + ([(run_heat, (size, args.heat_steps)) for size in heat_sizes] if "heat" in only else [])
    for run, run_args in runs:
        try:
            run(rgs, *run_args, report, "cuda")
        except Exception as e:  # recorded as a failed check; the other workloads still run
            import traceback
            traceback.print_exc()
            report.check(f"{run.__name__}{run_args}", False, f"raised {type(e).__name__}: {e}")
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    write_report(report, meta, args.out)
    if report.failed:
        say("agreement checks failed: " + "; ".join(c["name"] for c in report.failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
