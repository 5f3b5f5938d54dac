#!/usr/bin/env bash
# Mutation testing (cargo-mutants, crates.io, MIT): does the CPU test suite notice a wrong
# constant, sign or comparison in the model math and the output rules? Not for CI: each mutant
# rebuilds and reruns tests, about 30-90 s on a 2-core machine, and the full list below is
# about 1,400 mutants. Usage:
#   scripts/mutants.sh                 # every file below (hours)
#   scripts/mutants.sh FILE...         # only these files (e.g. simulations/src/render/palette.rs)
# Kernel files go faster as PTX only (no ptxas per mutant): RUST_GPU_SIM_CUBINS=none, but then
# skip the test that checks the embedded cubins, or every mutant looks caught:
#   RUST_GPU_SIM_CUBINS=none cargo mutants --file kernels/src/grayscott.rs --test-package kernels \
#     --test-package simulations -- --no-fail-fast -- --skip cubins_are_embedded_for_the_common_gpus
# Results go to mutants.out/ (caught.txt, missed.txt, timeout.txt, unviable.txt); survivors in
# GPU-only code are expected here (the CPU tests cannot run it): `scripts/mutants-gpu.sh .`
# (the directory holding mutants.out/) builds their PTX, and scripts/gpu-check.sh mutants runs the GPU tests against
# each on a GPU machine; survivors in host code only GPU parts reach: scripts/mutants-host-gpu.sh
# and scripts/gpu-check.sh host-mutants (docs/reliability.md, "Mutation testing").
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=27.1.0
if ! cargo mutants --version 2>/dev/null | grep -q "$VERSION"; then
  cargo install --locked "cargo-mutants@$VERSION"
fi
# cargo-mutants builds in a copy of the tree without git-ignored files, so without
# scripts/setup.sh's .tools: the build finds ptxas through $PTXAS instead (else the cubin
# test fails in the unmutated tree and no mutant runs).
if [ -z "${PTXAS:-}" ] && [ -x .tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas ]; then
  export PTXAS="$PWD/.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas"
fi
FILES=(
  kernels/src/grayscott.rs kernels/src/heat.rs kernels/src/physarum.rs kernels/src/colormap.rs kernels/src/math.rs
  simulations/src/grayscott/cpu.rs simulations/src/heat/cpu.rs simulations/src/physarum/cpu.rs
  simulations/src/render/palette.rs simulations/src/outfile.rs simulations/src/checkpoint.rs
  simulations/src/split/decomposition.rs simulations/src/split/engine.rs simulations/src/split/rounds.rs
)
[ $# -gt 0 ] && FILES=("$@")
args=()
for f in "${FILES[@]}"; do args+=(--file "$f"); done
# The tests of the packages that use these files (the toolkit's and the cookbook's do not);
# --timeout: a mutant that makes a test loop forever is stopped (and counted as caught).
exec cargo mutants "${args[@]}" --test-package simulations --test-package host --test-package barkley \
  --timeout 300 -- --no-fail-fast
