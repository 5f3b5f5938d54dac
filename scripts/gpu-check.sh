#!/usr/bin/env bash
# Runs on the GPU machine (no Rust toolchain there): the GPU tests, compute-sanitizer, and the
# default GIF job, from binaries staged in .gpu/ by scripts/stage-gpu.sh. Logs go to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
B=.gpu
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

echo "== GPU tests"
$B/gpu_grayscott --ignored --test-threads=1 2>&1 | tee "$OUT/gpu-tests.log" | grep -E "^test |test result|ΔU|colormap:|TEST_SEED" | sort | uniq -c | sort -rn | head -40

echo "== default GIF job (process start to file closed)"
mkdir -p /tmp/run && cd /tmp/run
for i in 1 2 3; do
  /usr/bin/time -f "wall %e s" "$OLDPWD/$B/host" grayscott --gif 2>&1 | tail -2
done
cp grayscott.gif "$OUT/" 2>/dev/null
"$OLDPWD/$B/host" grayscott --size 4096 --steps 2000 --frame-every 500 2>&1 | tail -1
"$OLDPWD/$B/host" grayscott --size 4096 --steps 2000 --frame-every 500 --variant v1 2>&1 | tail -1
"$OLDPWD/$B/grayscott_png" /tmp/run/example.png 2>&1 | tail -1
cd "$OLDPWD"

echo "== compute-sanitizer"
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $B/host grayscott --size 300 --width 333 --steps 200 --frame-every 50 --gif /tmp/run/s.gif > "$OUT/sanitizer-$tool.log" 2>&1
  echo "$tool (fused): exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tr '\n' ' ')"
  compute-sanitizer --tool $tool --error-exitcode 9 $B/host grayscott --size 300 --width 333 --steps 200 --frame-every 50 --variant v1 --gif /tmp/run/s.gif > "$OUT/sanitizer-$tool-v1.log" 2>&1
  echo "$tool (v1): exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool-v1.log" | tr '\n' ' ')"
done
