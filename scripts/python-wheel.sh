#!/usr/bin/env bash
# Builds the Python package's wheel (rust_gpu_sim: one abi3 wheel for CPython 3.9+) with maturin
# from scripts/setup.sh's virtual environment, into DIR (default target/wheels). The wheel is
# tagged for this machine's Linux (`linux_x86_64`, not checked against a manylinux policy), as
# the rust-gpu-sim binary built here is: for machines that run the binaries built here (the GPU
# machines: scripts/stage-gpu.sh carries it there).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/wheels}
.tools/py/bin/maturin build --release --manifest-path python/Cargo.toml --compatibility linux --strip --out "$out" >&2
ls "$out"/rust_gpu_sim-*.whl
