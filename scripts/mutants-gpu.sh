#!/usr/bin/env bash
# Mutants of the kernels' code that only a GPU runs. scripts/mutants.sh (cargo-mutants) runs
# the CPU tests, which cannot reach what only the kernels execute; this script builds the PTX
# of each such survivor for the GPU machine, where `scripts/gpu-check.sh mutants` runs the
# GPU tests against it (RUST_GPU_SIM_PTX_DIR: the test binary loads the mutated module's PTX
# in place of its own) and says for each mutant which test killed it, or that it survived.
#
#   scripts/mutants-gpu.sh MUTANTS_OUT [NAME_REGEX]
#
# MUTANTS_OUT: a cargo-mutants output directory (mutants.out/missed.txt); its survivors in
# kernels/src/ (those matching NAME_REGEX, if given) are built, each with the simulations'
# own build script (the PTX it gives is byte-identical to the build's, checked first on the
# unmutated tree), in a git worktree of HEAD. Output: .gpu/mutants.tgz holding N/MODULE.ptx
# for every module whose PTX the mutant changed, N/mutant.txt and N/tests.txt (libtest
# filters: the GPU tests of the changed modules). A mutant that changes no module's PTX is
# listed here as such (the compiler removed it, or the code is not in any kernel) and not
# shipped. Run scripts/stage-gpu.sh first (the test binary and this build script must be of
# the same commit), from a clean tree.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
[ $# -ge 1 ] || { echo "usage: scripts/mutants-gpu.sh MUTANTS_OUT [NAME_REGEX]" >&2; exit 2; }
missed=$1/mutants.out/missed.txt
regex=${2:-.}
[ -f "$missed" ] || { echo "mutants-gpu: no $missed" >&2; exit 1; }
git diff --quiet HEAD -- kernels toolkit simulations/images/build.rs ||
  { echo "mutants-gpu: kernels/, toolkit/ or simulations/images/build.rs differ from HEAD: commit first" >&2; exit 1; }
mapfile -t names < <(grep '^kernels/src/' "$missed" | grep -E -- "$regex" || true)
[ ${#names[@]} -gt 0 ] || { echo "mutants-gpu: no survivor in kernels/src/ matches" >&2; exit 1; }
build_script=$root/$(ls -t target/release/build/simulations-images/*/out/build_script_build | head -1)

work=$(mktemp -d /tmp/mutants-gpu.XXXXXX)
tree=$work/tree
trap 'git -C "$root" worktree remove --force "$tree" 2>/dev/null; rm -rf "$work"' EXIT
git worktree add --detach --quiet "$tree" HEAD
ln -s "$root/.tools" "$tree/.tools"
# The nested PTX builds of the simulations' build script, in a directory of their own.
export PTXKIT_TARGET_DIR=$root/target/mutants-ptx RUST_GPU_SIM_CUBINS=none CARGO=${CARGO:-$(command -v cargo)}
ptx() { # OUT_DIR: builds every module's PTX of the worktree into it
  rm -rf "$1" && mkdir -p "$1"
  (cd "$tree/simulations/images" && OUT_DIR=$1 CARGO_MANIFEST_DIR=$tree/simulations/images "$build_script" > "$1.log" 2>&1) ||
    { tail -5 "$1.log" >&2; return 1; }
}
ptx "$work/base"
for module in "$work"/base/kernels.*.ptx; do
  built=$(ls -t target/release/build/simulations-images/*/out/"$(basename "$module")" | head -1)
  cmp -s "$module" "$built" || { echo "mutants-gpu: $(basename "$module") differs from the build's ($built)" >&2; exit 1; }
done

files=$(printf '%s\n' "${names[@]}" | cut -d: -f1 | sort -u)
args=(); for f in $files; do args+=(--file "$f"); done
cargo mutants --list --diff --json "${args[@]}" > "$work/list.json"
out=$work/mutants; mkdir -p "$out"
n=0; shipped=0
for name in "${names[@]}"; do
  n=$((n + 1))
  file=${name%%:*}
  python3 "$root/scripts/mutant-diff.py" "$work/list.json" "$name" > "$work/diff"
  patch -s "$tree/$file" < "$work/diff"
  if ptx "$work/m"; then
    changed=()
    for module in "$work"/m/kernels.*.ptx; do
      cmp -s "$module" "$work/base/$(basename "$module")" || changed+=("$(basename "$module" .ptx | cut -d. -f2)")
    done
    if [ ${#changed[@]} -eq 0 ]; then
      echo "no PTX change: $name"
    else
      mkdir -p "$out/$n"
      echo "$name" > "$out/$n/mutant.txt"
      for module in "${changed[@]}"; do
        cp "$work/m/kernels.$module.ptx" "$out/$n/$module.ptx"
        case $module in
          heat) echo "gpu_heat::" ;;
          grayscott*) echo "gpu_grayscott::" ;;
          physarum) echo "gpu_physarum::" ;;
          *) echo "gpu_grayscott:: gpu_physarum::" ;;
        esac
      done | tr ' ' '\n' | sort -u | tr '\n' ' ' > "$out/$n/tests.txt"
      shipped=$((shipped + 1))
      echo "built ($(echo "${changed[@]}")): $name"
    fi
  else
    echo "does not build for the GPU: $name"
  fi
  git -C "$tree" checkout --quiet -- "$file"
done
mkdir -p .gpu
tar czf .gpu/mutants.tgz -C "$out" .
echo "mutants-gpu: $shipped of ${#names[@]} mutants shipped in .gpu/mutants.tgz ($(du -h .gpu/mutants.tgz | cut -f1))"
