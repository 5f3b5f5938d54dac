#!/usr/bin/env bash
# Installs what building and testing need, into the repository (nothing global):
# - the pinned Rust toolchain of rust-toolchain.toml (nightly, rust-src, llvm-bitcode-linker, ...)
# - ptxas, from NVIDIA's PyPI wheel, into .tools/cuda-nvcc (used by simulations/tests/it/ptx.rs)
# - nasm, from Debian's package (unpacked, not installed), into .tools/nasm: OpenH264 (the
#   `--mp4` encoder) assembles its x86 SIMD code with it, and without it builds the plain C
#   code, which takes about twice the CPU time (.cargo/config.toml points the build at it)
# - a Python virtual environment, .tools/py, with NumPy and pytest (the Python package's tests,
#   scripts/python-tests.sh) and maturin (its wheel, scripts/python-wheel.sh)
# Safe to run again: each step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup toolchain install

# The Python package's test and build tools, in a virtual environment of the checkout's own.
if [ ! -x .tools/py/bin/pytest ] || [ ! -x .tools/py/bin/maturin ]; then
    rm -rf .tools/py
    python3 -m venv .tools/py
    .tools/py/bin/python -m pip install --quiet --disable-pip-version-check \
        "numpy==2.4.6" "pytest==9.2.0" "maturin==1.16.0"
fi

PTXAS=.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas
if [ ! -x "$PTXAS" ]; then
    # CUDA 12.9's ptxas still assembles for sm_70 (CUDA 13 dropped Volta) and knows sm_90.
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target .tools/cuda-nvcc "nvidia-cuda-nvcc-cu12==12.9.86"
fi
"$PTXAS" --version | tail -1

# nasm: the system's if there is one, else Debian's package unpacked into .tools/nasm (found by
# scripts/nasm.sh). A failure here is not fatal: OpenH264 then builds its C code alone.
NASM=.tools/nasm/usr/bin/nasm
if [ ! -x "$NASM" ] && ! command -v nasm >/dev/null \
    && command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
    download=$(mktemp -d)
    # `apt-get download` needs the package lists; fetch them only when they lack nasm.
    if ! (cd "$download" && apt-get download -qq nasm 2>/dev/null); then
        timeout 300 apt-get update -qq >/dev/null 2>&1 || true
        (cd "$download" && apt-get download -qq nasm 2>/dev/null) || true
    fi
    for deb in "$download"/nasm_*.deb; do
        if [ -f "$deb" ]; then
            rm -rf .tools/nasm .tools/nasm.partial
            dpkg-deb -x "$deb" .tools/nasm.partial && mv .tools/nasm.partial .tools/nasm
        fi
    done
    rm -rf "$download"
fi
if scripts/nasm.sh -v 2>/dev/null; then
    :
else
    echo "setup: no nasm could be installed; --mp4 will encode with OpenH264's plain C code (about twice the CPU time)" >&2
fi

# chromium and chromedriver (Debian's chromium and chromium-driver), for `serve`'s browser test
# (host/tests/it/serve_browser.rs), which CI runs: installed with apt-get when missing and this
# runs as root. Nothing else is tried; without them that test fails and says to run this.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
    if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
        install_chromium() {
            DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends \
                chromium chromium-driver fonts-liberation >/dev/null 2>&1
        }
        # Fetch the package lists only when they lack the packages.
        install_chromium || { timeout 300 apt-get update -qq >/dev/null 2>&1; install_chromium; } || true
    fi
    if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
        echo "setup: installed $(chromium --version 2>/dev/null)"
    else
        echo "setup: chromium and chromium-driver could not be installed (needs apt-get as root); the browser test of serve will fail" >&2
    fi
fi
