#!/usr/bin/env bash
# Measures a kernel author's edit-to-run loop: one line of a kernel body changes (heat's RK4
# update: `dt / 6.0` becomes `dt / 6.5`, which changes the PTX), then
# `cargo build --profile kernel-dev -p host` makes a runnable binary again. Prints the seconds,
# restores the file and rebuilds (untimed). Extra arguments go to cargo (e.g. `--timings`).
#
#   scripts/edit-to-run.sh            # as a kernel author would run it
#   RUST_GPU_SIM_CUBINS=sm_90 scripts/edit-to-run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

file=kernels/src/heat.rs
before='dt / 6.0 * (*k1.add(i)'
after='dt / 6.5 * (*k1.add(i)'
grep -qF "$before" "$file" || { echo "edit-to-run: $file no longer holds '$before'; update this script" >&2; exit 1; }

build() { cargo build --profile kernel-dev -p host --quiet "$@"; }
restore() { sed -i "s|dt / 6.5 \* (\*k1.add(i)|dt / 6.0 * (*k1.add(i)|" "$file"; }
trap restore EXIT

echo "edit-to-run: bringing the kernel-dev build up to date first (untimed)"
build "$@"
sed -i "s|dt / 6.0 \* (\*k1.add(i)|dt / 6.5 * (*k1.add(i)|" "$file"
grep -qF "$after" "$file"
start=$(date +%s.%N)
build "$@"
end=$(date +%s.%N)
restore
trap - EXIT
awk -v s="$start" -v e="$end" -v f="$file" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "edit-to-run: %.1f s from a one-line edit of %s to target/kernel-dev/rust-gpu-sim (load %s)\n", e - s, f, l }'
echo "edit-to-run: restoring the build (untimed)"
build "$@"
