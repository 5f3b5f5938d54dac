#!/usr/bin/env python3
"""The CUDA driver's own start-up cost on this machine, without our program: loading libcuda,
cuInit, creating the primary context, loading cubins (the program's modules), and releasing
the context, each timed
(ctypes, no CUDA toolkit needed). The floor under `host`'s cold start (README, "Measured").

    python3 scripts/cuda-floor.py [--keep] [--exit-now] [--detach] [image.cubin ...]

--keep leaves the context to process exit instead of releasing it, --exit-now ends the
process with _exit (no exit handlers, the driver's included), --detach forks a child that
holds the driver's open files until this process has exited, so the child's exit, not this
one's, closes them; time the whole process from outside to see what exit then costs.
"""
import os
import ctypes
import sys
import time

t0 = time.perf_counter()
times = []


def mark(what):
    times.append((what, time.perf_counter()))


def check(result, what):
    if result != 0:
        sys.exit(f"cuda-floor: {what} failed with CUDA error {result}")


cuda = ctypes.CDLL("libcuda.so.1")
mark("dlopen libcuda")
check(cuda.cuInit(0), "cuInit")
mark("cuInit")
device = ctypes.c_int()
check(cuda.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
context = ctypes.c_void_p()
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
check(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
# The context is created lazily by the first call that needs it.
free, total = ctypes.c_size_t(), ctypes.c_size_t()
check(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
mark("primary context")
keep = "--keep" in sys.argv[1:]
exit_now = "--exit-now" in sys.argv[1:]
images = [a for a in sys.argv[1:] if not a.startswith("--")]
if images:
    size = 0
    for path in images:
        image = open(path, "rb").read()
        size += len(image)
        module = ctypes.c_void_p()
        check(cuda.cuModuleLoadData(ctypes.byref(module), image), "cuModuleLoadData")
    mark(f"load {len(images)} cubins, {size // 1024} KiB")
if not keep:
    check(cuda.cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease")
    mark("release context")

previous = t0
for what, at in times:
    print(f"{what:>24}: {1000 * (at - previous):7.1f} ms")
    previous = at
print(f"{'total':>24}: {1000 * (previous - t0):7.1f} ms")
sys.stdout.flush()
if "--detach" in sys.argv[1:]:
    alive_read, alive_write = os.pipe()
    # The driver's threads make Python warn about fork; the child runs no Python that could
    # need their locks (dup2, read, _exit).
    import warnings

    warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
    if os.fork() == 0:
        # The child: no output of its own; it waits for the parent's end of the pipe to close.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(alive_write)
        os.read(alive_read, 1)
        os._exit(0)
    os.close(alive_read)
if exit_now:
    os._exit(0)
