#!/usr/bin/env bash
# Installs what building and testing need, into the repository (nothing global):
# - the pinned Rust toolchain of rust-toolchain.toml (nightly, rust-src, llvm-bitcode-linker, ...)
# - ptxas, from NVIDIA's PyPI wheel, into .tools/cuda-nvcc (used by host/tests/ptx.rs)
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain install

PTXAS=.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas
if [ ! -x "$PTXAS" ]; then
    # CUDA 12.9's ptxas still assembles for sm_70 (CUDA 13 dropped Volta) and knows sm_90.
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target .tools/cuda-nvcc "nvidia-cuda-nvcc-cu12==12.9.86"
fi
"$PTXAS" --version | tail -1
