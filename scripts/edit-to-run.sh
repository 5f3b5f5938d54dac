#!/usr/bin/env bash
# Measures a kernel author's edit-to-run loop: one line of a kernel changes (so that the PTX
# changes), then `cargo build --profile kernel-dev -p host` makes a runnable binary again.
# Prints the seconds (and the machine's load), restores the file and rebuilds (untimed).
#
#   scripts/edit-to-run.sh                       # heat's RK4 update, as a kernel author would
#   scripts/edit-to-run.sh grayscott physarum    # each in turn, one time each
#   REPEAT=3 scripts/edit-to-run.sh heat shared  # three times each, then the median
#   RUST_GPU_SIM_CUBINS=sm_90 scripts/edit-to-run.sh
#   scripts/edit-to-run.sh heat -- --timings     # arguments after `--` go to cargo
#   WAIT_LOAD=0.7 REPEAT=3 scripts/edit-to-run.sh heat   # each run waits (up to 5 min) for a
#                                                # 1-minute load average below 0.7 first
#
# What each name edits (each file is loaded by the PTX modules named; kernels/src/lib.rs):
#   heat       kernels/src/heat.rs, heat's RK4 update       (module heat)
#   grayscott  kernels/src/grayscott/progression.rs, gray_scott_fused    (module grayscott)
#   streaming  kernels/src/grayscott/streaming.rs, the streaming kernels' store
#              (grayscott_streaming and _c1, most of Gray-Scott's PTX)
#   physarum   kernels/src/physarum.rs, physarum_distance    (module physarum)
#   shared     kernels/src/math.rs, clamp01                  (every module; the PTX of
#              grayscott and common changes)
set -euo pipefail
cd "$(dirname "$0")/.."

targets=()
while [ $# -gt 0 ]; do
    case $1 in
        --) shift; break ;;
        heat | grayscott | streaming | physarum | shared) targets+=("$1"); shift ;;
        -*) break ;; # cargo arguments without `--`, as before
        *) echo "edit-to-run: unknown edit '$1' (heat, grayscott, streaming, physarum or shared)" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(heat)
repeat=${REPEAT:-1}

# file, line before, line after (each `before` is found once in its file: the first match
# is edited).
edit_of() {
    case $1 in
        heat) echo "kernels/src/heat.rs|dt / 6.0 * (*k1.add(i)|dt / 6.5 * (*k1.add(i)" ;;
        grayscott) echo "kernels/src/grayscott/progression.rs|*u_next.add(here) = u_new;|*u_next.add(here) = u_new * 0.5;" ;;
        streaming) echo "kernels/src/grayscott/streaming.rs|*self.v_next.add(at) = next[1][j];|*self.v_next.add(at) = next[1][j] * 0.5;" ;;
        physarum) echo "kernels/src/physarum.rs|sum += d * d;|sum += d * d * 0.5;" ;;
        shared) echo "kernels/src/math.rs|x.max(0.0).min(1.0)|x.max(0.0).min(0.5)" ;;
    esac
}

# Replaces the first line holding the literal text $2 in file $1 by the same line with $3.
replace_first() {
    FROM=$2 TO=$3 perl -i -pe 'if (!$done && (my $at = index($_, $ENV{FROM})) >= 0) {
        substr($_, $at, length $ENV{FROM}) = $ENV{TO}; $done = 1 }' "$1"
}

build() { cargo build --profile kernel-dev -p host --quiet "$@"; }

pending_restore=
restore() { [ -z "$pending_restore" ] || { IFS='|' read -r f b a <<<"$pending_restore"; replace_first "$f" "$a" "$b"; }; pending_restore=; }
trap restore EXIT

for target in "${targets[@]}"; do
    IFS='|' read -r file before after <<<"$(edit_of "$target")"
    grep -qF -- "$before" "$file" || { echo "edit-to-run: $file no longer holds '$before'; update this script" >&2; exit 1; }
done

echo "edit-to-run: bringing the kernel-dev build up to date first (untimed)"
build "$@"
summary=()
for target in "${targets[@]}"; do
    IFS='|' read -r file before after <<<"$(edit_of "$target")"
    times=()
    for _ in $(seq "$repeat"); do
        if [ -n "${WAIT_LOAD:-}" ]; then
            for _ in $(seq 60); do
                awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v w="$WAIT_LOAD" 'BEGIN { exit !(l < w) }' && break
                sleep 5
            done
        fi
        replace_first "$file" "$before" "$after"
        pending_restore="$file|$before|$after"
        grep -qF -- "$after" "$file"
        load=$(cut -d' ' -f1 /proc/loadavg)
        start=$(date +%s.%N)
        build "$@"
        end=$(date +%s.%N)
        restore
        seconds=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
        times+=("$seconds")
        echo "edit-to-run: $seconds s from a one-line edit of $file ($target) to target/kernel-dev/rust-gpu-sim (load $load)"
        echo "edit-to-run: restoring the build (untimed)"
        build "$@"
    done
    median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    summary+=("$target: median $median s of ${times[*]}")
done
if [ "$repeat" -gt 1 ] || [ ${#targets[@]} -gt 1 ]; then
    printf 'edit-to-run: %s\n' "${summary[@]}"
fi
