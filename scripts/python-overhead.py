#!/usr/bin/env python3
"""The cost of one call from Python of a small kernel: SAXPY of 1,024 float32 elements through
``rust_gpu_sim.kernels.saxpy`` (the safe ptxkit kernel), against the same operation written in
Triton, in one process on the same torch tensors. A benchmark, not a test: it prints a table.

How it measures (docs/python.md):
- GPU time per launch: CUDA events around 2,000 back-to-back launches replayed from a CUDA graph
  (so no host cost is in it), the median of 9 such batches.
- Host time per call: ``time.perf_counter`` around a batch of 200 calls with no synchronisation
  inside (the queue never fills), divided by 200, the median of 51 batches after warm-up; the
  GPU is idle or busy with the previous batch's tail, which the host does not wait for.
- Loop time per call: 200 calls then a synchronisation, divided by 200 (what a loop of tiny
  launches costs end to end); "loop − GPU" is that minus the GPU time per launch.
Run on a GPU machine with the package on PYTHONPATH: ``python3 scripts/python-overhead.py``.
"""

import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import rust_gpu_sim as rgs

N = 1024
BATCH = 200


@triton.jit
def saxpy_triton_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    """One program per 256 elements; 12 bytes per element."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, a * x + y, mask=mask)


def saxpy_triton(x, y, out, a):
    saxpy_triton_kernel[(triton.cdiv(x.numel(), 256),)](x, y, out, a, x.numel(), BLOCK=256)


def saxpy_rust(x, y, out, a):
    rgs.kernels.saxpy(x, y, out, a)


def gpu_time_us(fn, x, y, out):
    """GPU time of one launch: events around a graph of 2,000 launches."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn(x, y, out, 2.0)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(2000):
            fn(x, y, out, 2.0)
    samples = []
    for _ in range(9):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / 2000)
    return statistics.median(samples)


def host_time_us(fn, x, y, out, sync):
    """Host time per call over batches of BATCH calls (with a synchronisation per batch when
    `sync`, inside the timing)."""
    for _ in range(20):
        for _ in range(BATCH):
            fn(x, y, out, 2.0)
        torch.cuda.synchronize()
    samples = []
    for _ in range(51):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(BATCH):
            fn(x, y, out, 2.0)
        if sync:
            torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) * 1e6 / BATCH)
    return statistics.median(samples)


def main():
    device = torch.device("cuda", 0)
    x, y = torch.rand(N, device=device), torch.rand(N, device=device)
    rows = []
    for name, fn in [("rust_gpu_sim.kernels.saxpy", saxpy_rust), ("Triton saxpy", saxpy_triton)]:
        out = torch.empty_like(x)
        fn(x, y, out, 2.0)
        torch.cuda.synchronize()
        expected = 2.0 * x + y
        if not torch.allclose(out, expected, rtol=0, atol=1e-6):
            print(f"{name}: wrong result", file=sys.stderr)
            return 1
        gpu = gpu_time_us(fn, x, y, out)
        host = host_time_us(fn, x, y, out, sync=False)
        loop = host_time_us(fn, x, y, out, sync=True)
        rows.append((name, host, loop, gpu, loop - gpu))
    print(f"# call overhead, SAXPY of {N} float32, {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}, Python {sys.version.split()[0]}")
    print("| op | host time per call (µs) | loop time per call (µs) | GPU time per launch (µs) | loop − GPU (µs) |")
    print("| --- | --- | --- | --- | --- |")
    for name, host, loop, gpu, rest in rows:
        print(f"| {name} | {host:.2f} | {loop:.2f} | {gpu:.2f} | {rest:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
