#!/usr/bin/env bash
# The Python package's tests (python/tests, pytest with NumPy; no GPU needed): builds the
# extension module with cargo (the test build's profile, so it reuses `cargo test`'s build),
# lays the package out in target/python (python/rust_gpu_sim plus the module as
# _native.abi3.so) and runs pytest from scripts/setup.sh's virtual environment (.tools/py).
# Extra arguments go to pytest. The wheel for other machines: scripts/python-wheel.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p rust-gpu-sim-python -p host --message-format=short
rm -rf target/python
mkdir -p target/python
cp -r python/rust_gpu_sim target/python/
cp target/debug/librust_gpu_sim_native.so target/python/rust_gpu_sim/_native.abi3.so
RUST_GPU_SIM_BIN="$PWD/target/debug/rust-gpu-sim" PYTHONPATH="$PWD/target/python" PYTHONDONTWRITEBYTECODE=1 .tools/py/bin/python -m pytest -p no:cacheprovider -q python/tests "$@"
