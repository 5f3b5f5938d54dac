#!/usr/bin/env bash
# The Python package's tests alone (python/tests under pytest, through the Rust test
# python/tests/pytest.rs that `cargo test --workspace` runs too): builds the command line the
# tests compare with (rust-gpu-sim, barkley), then the extension module and the test, and shows pytest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p host --bin rust-gpu-sim -p barkley --bin barkley
cargo test -p rust-gpu-sim-python --test pytest -- --nocapture
