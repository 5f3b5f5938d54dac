#!/usr/bin/env bash
# Mutants of host code that only a GPU reaches: survivors of scripts/mutants.sh in
# simulations/src/ whose killing tests are the library's ignored GPU unit tests (the split's
# GPU parts and NCCL ranks). Builds the library's unit-test binary once unmutated and once per
# mutant, in a git worktree of HEAD, into .gpu-mutants/ (git-ignored; carried to the GPU
# machine beside .gpu/), where `scripts/gpu-check.sh host-mutants` runs the library's ignored
# tests matching FILTER with each binary: the unmutated one must pass, and each mutant's says
# which test failed on which line, or that the mutant survived. scripts/mutants-gpu.sh does the
# same for the kernels' code, by PTX.
#
#   scripts/mutants-host-gpu.sh FILTER MUTANT_NAME...
#
# FILTER: a libtest filter (e.g. split::engine::tests::). MUTANT_NAME: as `cargo mutants
# --list` prints it (FILE:LINE:COL: WHAT), of the committed tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -ge 2 ] || { echo "usage: scripts/mutants-host-gpu.sh FILTER MUTANT_NAME..." >&2; exit 2; }
filter=$1
shift
for name in "$@"; do
  [[ $name == simulations/src/* ]] ||
    { echo "mutants-host-gpu: $name: only mutants of simulations/src/ reach the library's tests" >&2; exit 2; }
done
git diff --quiet HEAD -- simulations kernels toolkit ||
  { echo "mutants-host-gpu: simulations/, kernels/ or toolkit/ differ from HEAD: commit first" >&2; exit 1; }
work=$(mktemp -d /tmp/mutants-host-gpu.XXXXXX)
tree=$work/tree
trap 'git -C "$root" worktree remove --force "$tree" 2>/dev/null; rm -rf "$work"' EXIT
git worktree add --detach --quiet "$tree" HEAD
ln -s "$root/.tools" "$tree/.tools"
# A target directory of its own (the worktree's crates are other paths to cargo).
export CARGO_TARGET_DIR=$root/target/mutants-host
build() { # DIR: the worktree's library test binary, stripped and compressed, as DIR/simulations_lib.gz
  local exe
  exe=$(cd "$tree" && cargo test --release -p simulations --lib --no-run --message-format=json 2> "$work/build.log" |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "simulations" and m.get("executable"):
        print(m["executable"])') || true
  [ -n "$exe" ] || { tail -5 "$work/build.log" >&2; return 1; }
  strip -o "$1/simulations_lib" "$exe" && gzip -9 "$1/simulations_lib"
}
out=$root/.gpu-mutants
rm -rf "$out"
mkdir -p "$out/0"
echo "$filter" > "$out/filter.txt"
echo "(unmutated, $(git rev-parse --short HEAD))" > "$out/0/mutant.txt"
build "$out/0"
echo "built the unmutated library tests"
files=$(printf '%s\n' "$@" | cut -d: -f1 | sort -u)
args=()
for f in $files; do args+=(--file "$f"); done
cargo mutants --list --diff --json "${args[@]}" > "$work/list.json"
n=0
for name in "$@"; do
  n=$((n + 1))
  file=${name%%:*}
  python3 "$root/scripts/mutant-diff.py" "$work/list.json" "$name" > "$work/diff"
  patch -s "$tree/$file" < "$work/diff"
  mkdir -p "$out/$n"
  echo "$name" > "$out/$n/mutant.txt"
  if build "$out/$n"; then echo "built: $name"; else echo "does not build: $name"; rm -rf "${out:?}/$n"; fi
  git -C "$tree" checkout --quiet -- "$file"
done
echo "mutants-host-gpu: $(find "$out" -name 'simulations_lib.gz' | wc -l) binaries in .gpu-mutants ($(du -sh "$out" | cut -f1))"
