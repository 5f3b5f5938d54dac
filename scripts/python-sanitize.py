#!/usr/bin/env python3
"""Every kernel of rust_gpu_sim.kernels once, on odd sizes, and the simulations' fields read
through DLPack: the workload scripts/gpu-check.sh python runs under compute-sanitizer
(memcheck, racecheck). Prints one line per op; exits non-zero on a wrong result."""

import sys

import torch

import rust_gpu_sim as rgs
from rust_gpu_sim import kernels

device = torch.device("cuda", 0)
x, y = torch.rand(1003, device=device), torch.rand(1003, device=device)
out = torch.empty_like(x)
kernels.saxpy(x, y, out, 2.0)
ok = torch.allclose(out, 2 * x + y)
kernels.saxpy_raw(x, y, out, 2.0)
ok &= torch.allclose(out, 2 * x + y)
m = torch.rand(37, 101, device=device)
s = torch.empty_like(m)
kernels.softmax(m, s)
ok &= torch.allclose(s, torch.softmax(m, 1), atol=1e-6)
kernels.jacobi(m, s)
t = torch.empty(101, 37, device=device)
kernels.transpose(m, t)
ok &= torch.equal(t, m.T)
sim = rgs.GrayScott(width=61, height=37, backend="cuda", variant="fused")
u, v = torch.from_dlpack(sim.u).clone(), torch.from_dlpack(sim.v).clone()
lu, lv = torch.empty_like(u), torch.empty_like(v)
kernels.grayscott_laplacian(u, v, lu, lv)
kernels.grayscott_update(u, v, lu, lv, **sim.rates)
un, vn = torch.empty_like(u), torch.empty_like(v)
kernels.grayscott_fused(u, v, un, vn, **sim.rates)
sim.step(2)
heat = rgs.Heat(nx=19, ny=17, nz=13, variant="single", backend="cuda")
heat.step(2)
ok &= bool(torch.isfinite(torch.from_dlpack(heat.u)).all())
physarum = rgs.Physarum(size=67, agents=3000, variant="optimized", backend="cuda")
physarum.step(3)
ok &= float(torch.from_dlpack(physarum.trail).sum()) > 0
torch.cuda.synchronize()
print("python-sanitize:", "ok" if ok else "WRONG RESULT")
sys.exit(0 if ok else 1)
