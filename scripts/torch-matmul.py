#!/usr/bin/env python3
"""torch.matmul in bf16 at SIZE³ (default 8192), C = A·Bᵀ as the cookbook's GEMMs compute it,
timed with CUDA events after warm-up (median of 21 runs): the reference beside
`hopper-gemm-bench` in the same lease. Prints one Markdown row."""
import sys

import torch

size = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
a = torch.rand(size, size, device="cuda", dtype=torch.bfloat16) * 2 - 1
b = torch.rand(size, size, device="cuda", dtype=torch.bfloat16) * 2 - 1
for _ in range(3):
    torch.matmul(a, b.T)
times = []
for _ in range(21):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.matmul(a, b.T)
    stop.record()
    stop.synchronize()
    times.append(start.elapsed_time(stop))
ms = sorted(times)[len(times) // 2]
print(f"| torch.matmul bf16 (torch {torch.__version__}) | {size}³ | {ms:.4f} | {2 * size**3 / (ms * 1e-3) / 1e12:.1f} |")
