#!/usr/bin/env bash
# Mutation testing (cargo-mutants, crates.io, MIT): does the CPU test suite notice a wrong
# constant, sign or comparison? Every .rs file of simulations/src, kernels/src and
# examples/barkley/src is in one of the numbered batches below (about 6,000 mutants), or in
# EXCLUDED with its reason. A batch is sized to about 60-90 minutes on a 2-core machine
# (110-180 mutants at the 20-40 s a mutant takes there, build and tests), so one fits a
# session; not for CI. Usage:
#   scripts/mutants.sh --list-batches    # the batches, their files and mutant counts (fast:
#                                        # `cargo mutants --list` builds nothing); also checks
#                                        # that every file is in a batch or excluded
#   scripts/mutants.sh --batch N         # run batch N
#   scripts/mutants.sh FILE...           # only these files (e.g. simulations/src/render/palette.rs)
# docs/reliability.md ("Mutation testing") records each batch's status and score.
# A batch entry FILE@K/N is the K-th of N consecutive slices (0-based) of FILE's mutants
# (cargo-mutants' `--shard K/N --sharding slice`), for the files too big for one batch; the
# slices move when the file's mutants change, but together they always cover it.
# Kernel files go faster as PTX only (no ptxas per mutant): RUST_GPU_SIM_CUBINS=none, but then
# skip the test that checks the embedded cubins, or every mutant looks caught:
#   RUST_GPU_SIM_CUBINS=none cargo mutants --file kernels/src/grayscott/common.rs --test-package kernels \
#     --test-package simulations -- --no-fail-fast -- --skip cubins_are_embedded_for_the_common_gpus
# Results go to mutants.out/ (caught.txt, missed.txt, timeout.txt, unviable.txt); survivors in
# GPU-only code are expected here (the CPU tests cannot run it): `scripts/mutants-gpu.sh .`
# (the directory holding mutants.out/) builds their PTX, and scripts/gpu-check.sh mutants runs the GPU tests against
# each on a GPU machine; survivors in host code only GPU parts reach: scripts/mutants-host-gpu.sh
# and scripts/gpu-check.sh host-mutants (docs/reliability.md, "Mutation testing").
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=27.1.0

# Batches 1-11: the files run in full in November 2026 (issue 46), kept together so their
# recorded scores stay comparable; 12 on: the rest, by directory.
BATCHES=(
  "kernels/src/colormap.rs kernels/src/math.rs simulations/src/render/palette.rs simulations/src/physarum/cpu.rs"
  "kernels/src/grayscott/common.rs kernels/src/grayscott/progression.rs kernels/src/grayscott/streaming.rs"
  "kernels/src/heat.rs"
  "kernels/src/physarum.rs@0/3"
  "kernels/src/physarum.rs@1/3"
  "kernels/src/physarum.rs@2/3"
  "simulations/src/grayscott/cpu.rs simulations/src/heat/cpu.rs"
  "simulations/src/outfile.rs"
  "simulations/src/checkpoint.rs simulations/src/split/rounds.rs"
  "simulations/src/split/decomposition.rs"
  "simulations/src/split/engine.rs"
  "examples/barkley/src/driven.rs examples/barkley/src/lib.rs examples/barkley/src/live.rs examples/barkley/src/main.rs"
  "examples/barkley/src/split.rs simulations/src/autotune.rs simulations/src/bench/encode.rs"
  "simulations/src/bench/grayscott.rs"
  "simulations/src/bench/heat.rs simulations/src/bench/machine.rs simulations/src/bench/physarum.rs simulations/src/bench/report.rs"
  "simulations/src/bench/scaling.rs simulations/src/bench/timing.rs simulations/src/choice.rs"
  "simulations/src/cuda/open.rs simulations/src/driver/console.rs simulations/src/driver/frames.rs simulations/src/driver/run.rs simulations/src/driver/simulation.rs simulations/src/driver/state.rs"
  "simulations/src/driver/step_loop.rs simulations/src/error.rs simulations/src/export.rs simulations/src/faults.rs"
  "simulations/src/grayscott/brush.rs simulations/src/grayscott/cuda/engine.rs simulations/src/grayscott/cuda/frames.rs simulations/src/grayscott/cuda/launch.rs"
  "simulations/src/grayscott/cuda/tuning.rs simulations/src/grayscott/cuda/schemes/scheme.rs simulations/src/grayscott/cuda/schemes/streaming.rs simulations/src/grayscott/cuda/schemes/temporal.rs"
  "simulations/src/grayscott/init.rs simulations/src/grayscott/launch.rs simulations/src/grayscott/cuda/schemes/fused.rs simulations/src/grayscott/cuda/schemes/tiled.rs simulations/src/grayscott/cuda/schemes/v0.rs simulations/src/grayscott/cuda/schemes/v1.rs simulations/src/grayscott/cuda/schemes/v2.rs"
  "simulations/src/grayscott/map.rs@0/2"
  "simulations/src/grayscott/map.rs@1/2"
  "simulations/src/grayscott/parts.rs simulations/src/grayscott/piece.rs simulations/src/grayscott/presets.rs simulations/src/grayscott/settings.rs simulations/src/grayscott/setup.rs"
  "simulations/src/grayscott/simulation.rs simulations/src/grayscott/variant.rs simulations/src/grayscott/driven.rs simulations/src/grayscott/engine.rs"
  "simulations/src/heat/cuda.rs simulations/src/heat/driven.rs simulations/src/heat/engine.rs"
  "simulations/src/heat/exact.rs simulations/src/heat/initial.rs simulations/src/heat/limits.rs"
  "simulations/src/heat/overlap.rs simulations/src/heat/parts.rs"
  "simulations/src/heat/settings.rs simulations/src/heat/setup.rs simulations/src/heat/simulation.rs simulations/src/heat/slab.rs simulations/src/heat/variant.rs"
  "simulations/src/input.rs simulations/src/lib.rs simulations/src/memory.rs"
  "simulations/src/physarum/agents.rs simulations/src/physarum/cuda.rs simulations/src/physarum/driven.rs simulations/src/physarum/presets.rs"
  "simulations/src/physarum/sensitivity.rs simulations/src/physarum/settings.rs simulations/src/physarum/setup.rs"
  "simulations/src/physarum/simulation.rs simulations/src/physarum/toy_model.rs simulations/src/physarum/trail.rs simulations/src/physarum/variant.rs"
  "simulations/src/render/lzw.rs simulations/src/render/png_dir.rs simulations/src/render/chart.rs simulations/src/render/colormap.rs"
  "simulations/src/render/mp4.rs@0/2"
  "simulations/src/render/mp4.rs@1/2"
  "simulations/src/render/writer.rs"
  "simulations/src/resources.rs simulations/src/rng.rs simulations/src/settings.rs simulations/src/split/binding.rs"
  "simulations/src/split/ipc.rs simulations/src/split/layout.rs simulations/src/split/model.rs"
  "simulations/src/split/nccl.rs simulations/src/split/part.rs"
  "simulations/src/split/peer.rs simulations/src/split/pieces.rs"
  "simulations/src/split/ranks.rs simulations/src/split/transport.rs simulations/src/timeline.rs simulations/src/view.rs"
)

# Files in no batch. All but the last give cargo-mutants nothing to mutate (`--list-batches`
# checks that they still don't):
EXCLUDED=(
  # declarations only: modules, re-exports, a trait's signatures, an embedded-image static
  kernels/src/lib.rs kernels/src/grayscott/mod.rs simulations/src/bench/mod.rs simulations/src/cuda/mod.rs
  simulations/src/driver/mod.rs simulations/src/grayscott/mod.rs simulations/src/grayscott/cuda/mod.rs
  simulations/src/grayscott/cuda/schemes/mod.rs simulations/src/heat/mod.rs simulations/src/physarum/mod.rs
  simulations/src/render/mod.rs simulations/src/split/mod.rs simulations/src/cuda/images.rs
  simulations/src/render/output.rs simulations/src/split/overlap.rs simulations/src/physarum/engine.rs
  # only `unsafe fn`s, which cargo-mutants does not mutate (the GPU tests run them)
  kernels/src/diagnostics.rs kernels/src/halo.rs simulations/src/split/stream_flags.rs
  # tests only
  simulations/src/grayscott/cuda/tests.rs simulations/src/grayscott/parts_tests.rs
  simulations/src/heat/parts_tests.rs
)
# Not compiled on Linux (the stand-ins for systems without O_TMPFILE): its mutants would all
# be "missed" without being built.
NOT_LINUX=(simulations/src/outfile/not_linux.rs)

# The cargo-mutants arguments that select batch $1's mutants.
batch_args() {
  local entry
  for entry in ${BATCHES[$(($1 - 1))]}; do
    case "$entry" in
      *@*) printf '%s\n' --file "${entry%@*}" --shard "${entry#*@}" --sharding slice ;;
      *) printf '%s\n' --file "$entry" ;;
    esac
  done
}

ensure_cargo_mutants() {
  if ! cargo mutants --version 2>/dev/null | grep -q "$VERSION"; then
    cargo install --locked "cargo-mutants@$VERSION"
  fi
}

list_batches() {
  local n total=0 args list count file entry
  for n in $(seq 1 ${#BATCHES[@]}); do
    mapfile -t args < <(batch_args "$n")
    list=$(cargo mutants --list "${args[@]}")
    count=$(grep -c . <<<"$list" || true)
    total=$((total + count))
    # ~30 s a mutant on 2 cores: build and tests.
    echo "batch $n: $count mutants (~$((count / 2)) min)"
    for entry in ${BATCHES[$((n - 1))]}; do
      file=${entry%@*}
      if [[ "$entry" == *@* ]]; then
        echo "  $file (slice ${entry#*@} of its $(cargo mutants --list --file "$file" | wc -l))"
      else
        echo "  $file ($(grep -c "^$file:" <<<"$list" || true))"
      fi
    done
  done
  echo "$total mutants in ${#BATCHES[@]} batches"
  # Every file is in a batch or excluded, and the excluded still have nothing to mutate.
  local listed status=0
  listed=$(printf '%s\n' ${BATCHES[@]} "${EXCLUDED[@]}" "${NOT_LINUX[@]}" | sed 's/@.*//' | sort -u)
  while read -r file; do
    if ! grep -qxF "$file" <<<"$listed"; then
      echo "mutants.sh: $file is in no batch: add it to one (or to EXCLUDED, with its reason)" >&2
      status=1
    fi
  done < <(find simulations/src kernels/src examples/barkley/src -name '*.rs' | sort)
  args=()
  for file in "${EXCLUDED[@]}"; do args+=(--file "$file"); done
  while read -r count file; do
    echo "mutants.sh: excluded $file now has $count mutants: put it in a batch" >&2
    status=1
  done < <(cargo mutants --list "${args[@]}" | cut -d: -f1 | sort | uniq -c)
  return $status
}

usage() {
  sed -n '8,12p' "$0" | sed 's/^# //' >&2
  exit 2
}

[ $# -gt 0 ] || usage
ensure_cargo_mutants
args=()
case "$1" in
  --list-batches)
    [ $# -eq 1 ] || usage
    list_batches
    exit
    ;;
  --batch)
    [ $# -eq 2 ] || usage
    if ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -lt 1 ] || [ "$2" -gt ${#BATCHES[@]} ]; then
      echo "mutants.sh: no batch $2 (1 to ${#BATCHES[@]}; --list-batches lists them)" >&2
      exit 2
    fi
    mapfile -t args < <(batch_args "$2")
    ;;
  -*) usage ;;
  *) for f in "$@"; do args+=(--file "$f"); done ;;
esac
# cargo-mutants builds in a copy of the tree without git-ignored files, so without
# scripts/setup.sh's .tools: the build finds ptxas through $PTXAS instead (else the cubin
# test fails in the unmutated tree and no mutant runs).
if [ -z "${PTXAS:-}" ] && [ -x .tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas ]; then
  export PTXAS="$PWD/.tools/cuda-nvcc/nvidia/cuda_nvcc/bin/ptxas"
fi
# The tests of the packages that use these files (the toolkit's and the cookbook's do not);
# --timeout: a mutant that makes a test loop forever is stopped (and counted as caught).
exec cargo mutants "${args[@]}" --test-package simulations --test-package host --test-package barkley \
  --timeout 300 -- --no-fail-fast
