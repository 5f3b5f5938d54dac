#!/usr/bin/env bash
# Builds release binaries here and copies them into .gpu/ (git-ignored) for the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu
mkdir -p .gpu
cargo build --release -p host --bin rust-gpu-sim
cp target/release/rust-gpu-sim .gpu/rust-gpu-sim
cargo build --release -p simulations --example grayscott_png
cp target/release/examples/grayscott_png .gpu/grayscott_png
# The test binaries with GPU tests (gpu-check.sh runs a module of one at a time, by libtest
# filter): the library's (simulations/tests/it), the command's (host/tests/it, with
# faults_gpu and serve_gpu) and barkley's (run with BARKLEY_BIN=.gpu/barkley); the library's
# own GPU unit tests (simulations::split's device-to-device halos). Each package's test
# binary is named `it`: it is picked by its package's manifest, not by name alone.
cargo build --release -p barkley --bin barkley
cp target/release/barkley .gpu/barkley
for spec in "simulations simulations/Cargo.toml it simulations_it" "host host/Cargo.toml it host_it" \
  "barkley examples/barkley/Cargo.toml it barkley_it" "simulations simulations/Cargo.toml simulations simulations_lib"; do
  read -r package manifest target staged <<< "$spec"
  if [ "$target" = it ]; then what=(--test it); else what=(--lib); fi
  exe=$(cargo test --release -p "$package" "${what[@]}" --no-run --message-format=json 2>/dev/null |
    MANIFEST="$PWD/$manifest" TARGET="$target" python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and m["target"]["name"] == os.environ["TARGET"] and m.get("executable")
            and os.path.realpath(m["manifest_path"]) == os.path.realpath(os.environ["MANIFEST"])):
        print(m["executable"])')
  [ -n "$exe" ] || { echo "stage-gpu: no test binary '$target' of $package" >&2; exit 1; }
  cp "$exe" ".gpu/$staged"
done
strip .gpu/rust-gpu-sim .gpu/grayscott_png .gpu/simulations_it .gpu/host_it .gpu/barkley .gpu/barkley_it .gpu/simulations_lib
# The H100/H200 cubins (one per kernel module) on their own, for scripts/cuda-floor.py (the
# driver's start-up without us), from the build directory of the binary just built.
out=$(dirname "$(ls -t target/release/build/simulations-images/*/out/kernels.heat.sm_90.cubin | head -1)")
for module in "$out"/kernels.*.sm_90.cubin; do cp "$module" .gpu/; done
# examples/cookbook: its bench and its test binary; the toolkit's checks (ptxkit-check). Both
# test targets are named `it`: each is picked by its package's manifest, not by name alone.
cargo build --release -p cookbook --bin cookbook-bench --bin hopper-gemm-bench
cp target/release/cookbook-bench target/release/hopper-gemm-bench .gpu/
for spec in "cookbook examples/cookbook/Cargo.toml cookbook_it" "ptxkit-check toolkit/check/Cargo.toml ptxkit_check"; do
  read -r package manifest staged <<< "$spec"
  exe=$(cargo test --release -p "$package" --test it --no-run --message-format=json 2>/dev/null |
    MANIFEST="$PWD/$manifest" python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if (m.get("reason") == "compiler-artifact" and m["target"]["name"] == "it" and m.get("executable")
            and os.path.realpath(m["manifest_path"]) == os.path.realpath(os.environ["MANIFEST"])):
        print(m["executable"])')
  [ -n "$exe" ] || { echo "stage-gpu: no test binary 'it' of $package" >&2; exit 1; }
  cp "$exe" ".gpu/$staged"
done
# The same checks with line tables in the kernel image (PTXKIT_LINEINFO=1, a target directory of
# their own so the default build keeps its images): compute-sanitizer names the Rust line of
# the deliberate fault (gpu-check.sh lineinfo).
exe=$(PTXKIT_LINEINFO=1 CARGO_TARGET_DIR=target/lineinfo cargo test --release -p ptxkit-check --test it --no-run \
  --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "it" and m.get("executable"):
        print(m["executable"])')
[ -n "$exe" ] || { echo "stage-gpu: no line-info build of ptxkit-check" >&2; exit 1; }
cp "$exe" .gpu/ptxkit_check_lineinfo
strip .gpu/cookbook-bench .gpu/hopper-gemm-bench .gpu/cookbook_it .gpu/ptxkit_check .gpu/ptxkit_check_lineinfo
# The Python package's wheel (scripts/python-wheel.sh) and pytest's own wheels (the GPU machines
# have no pytest and no network): gpu-check.sh python installs them into /tmp/site.
scripts/python-wheel.sh .gpu >/dev/null
.tools/py/bin/python -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: -d .gpu \
  pytest==9.2.0 pluggy==1.7.0 iniconfig==2.3.1 pygments==2.21.0 packaging==26.4
# Compressed: what travels to the GPU machine is limited to 64 MiB; gpu-check.sh unpacks.
rm -f .gpu/*.gz
for f in .gpu/*; do gzip -9 "$f"; done
ls -la .gpu
