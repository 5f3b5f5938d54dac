#!/usr/bin/env bash
# Runs on the GPU machine (no Rust toolchain there): the GPU tests, compute-sanitizer, the
# default GIF job and the bench, from binaries staged (compressed) in .gpu/ by scripts/stage-gpu.sh.
# Logs go to $OUT. Usage: gpu-check.sh [tests] [sanitize] [gif] [bench] [heat] [physarum-tests]
# [map] [outputs] [coldstart] [unit-sanitize] [profile] [physarum-sanitize] [physarum-gif] [physarum-bench]
# [split] [nccl] [split-bench] [heat-size] [faults] [load] [serve] [example] [profile-full]
# [toolkit] [toolkit-sanitize] [lineinfo] [cookbook] [cookbook-sanitize] [cookbook-bench] [python] [mutants] [host-mutants] [multi] [multi-bench] [multi-gs] [multi-heat] [multi-sweep] [multi-binding] [multi-short] [multi-hosts] [multi-pairs] [multi-overlap] [multi-hosts-heat] [multi-rounds]  (default: all but profile-full, mutants and host-mutants (scripts/mutants-gpu.sh and
# scripts/mutants-host-gpu.sh build their inputs) and the multi
# parts, which need 2 or more GPUs: scripts/multi-gpu-check.sh; multi-gs and multi-heat are
# Gray-Scott's and heat's scaling benches alone; multi-sweep measures two constants; multi-binding
# the launcher's default binding, multi-short a short run's whole wall time, multi-hosts two hosts
# simulated on one, NCCL over sockets, multi-pairs two hosts of 2 GPUs simulated on 4; multi-overlap the measurements behind the overlap defaults; multi-hosts-heat heat across a simulated host boundary on 2 and 4 ranks; multi-rounds heat's exchange by rounds against the halves in one process). toolkit: the
# ptxkit-check GPU tests (toolkit-sanitize: compute-sanitizer on them, synccheck on the Hopper module's; lineinfo: its report of a
# deliberate fault names the Rust line); cookbook: examples/cookbook's GPU tests
# (cookbook-sanitize: compute-sanitizer on them; cookbook-bench: its CUDA C twins built by nvcc
# and cookbook-bench, Rust against nvcc; on sm_90 the bf16 GEMMs beside torch.matmul). python: the Python package's wheel (built here) with
# PyTorch/CuPy/Triton there: its GPU tests (python/tests), compute-sanitizer on its kernels, the
# call overhead (scripts/python-overhead.py) and the write-ups' comparison
# (scripts/python-compare.py).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-check}
mkdir -p "$OUT"
cd "$(dirname "$0")/.."
# The binaries travel compressed (scripts/stage-gpu.sh); unpacked once per run.
B=/tmp/rust-gpu-sim-bin
mkdir -p "$B"
for f in .gpu/*.gz; do
  gunzip -c "$f" > "$B/$(basename "${f%.gz}")"
  chmod +x "$B/$(basename "${f%.gz}")"
done
export XDG_CACHE_HOME=/tmp/cache
parts=${*:-tests outputs coldstart sanitize unit-sanitize profile gif bench heat map physarum-tests physarum-sanitize physarum-gif physarum-bench split nccl split-bench heat-size faults load serve example toolkit toolkit-sanitize lineinfo cookbook cookbook-sanitize cookbook-bench python}
has() { [[ " $parts " == *" $1 "* ]]; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"

if has tests; then
  echo "== GPU tests"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_grayscott:: > "$OUT/gpu-tests.log" 2>&1
  grep -E "test result" "$OUT/gpu-tests.log"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_heat:: > "$OUT/gpu-heat-tests.log" 2>&1
  grep -E "test result|after 10 steps|relative error" "$OUT/gpu-heat-tests.log"
  # The same tests from the PTX (driver JIT) instead of the embedded cubin.
  RUST_GPU_SIM_FORCE_PTX=1 $B/simulations_it --ignored --test-threads=1 gpu_grayscott:: > "$OUT/gpu-tests-ptx.log" 2>&1
  RUST_GPU_SIM_FORCE_PTX=1 $B/simulations_it --ignored --test-threads=1 gpu_heat:: >> "$OUT/gpu-tests-ptx.log" 2>&1
  echo "forced PTX: $(grep -E 'test result' "$OUT/gpu-tests-ptx.log" | tr '\n' ' ')"
  # Its own process: a failed device_assert! leaves the CUDA context unusable.
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_device_layer:: > "$OUT/gpu-device-layer-tests.log" 2>&1
  grep -E "test result|Assertion" "$OUT/gpu-device-layer-tests.log"
fi

if has outputs; then
  echo "== checkpoints on the GPU (resume bit-identical, every variant)"
  $B/simulations_it --ignored --test-threads=1 outputs_gpu:: > "$OUT/gpu-outputs-tests.log" 2>&1
  grep -E "test result|panicked" "$OUT/gpu-outputs-tests.log"
fi

if has coldstart; then
  echo "== the driver's own start-up (scripts/cuda-floor.py, cold), the floor under ours"
  for i in 1 2 3; do CUDA_CACHE_DISABLE=1 python3 scripts/cuda-floor.py $B/kernels.*.sm_90.cubin | tr -s ' ' | tr '\n' ';'; echo; done
  echo "-- the driver alone, process start to exit (7 each): releasing the context, leaving it to exit, handing it to a child"
  mkdir -p /tmp/floor && (cd /tmp/floor && for how in "" --keep "--keep --detach"; do
    rm -f t.txt; for i in 1 2 3 4 5 6 7; do CUDA_CACHE_DISABLE=1 /usr/bin/time -f %e -a -o t.txt python3 "$OLDPWD/scripts/cuda-floor.py" $how > /dev/null; done
    echo "cuda-floor.py ${how:-(release)}: median $(sort -n t.txt | sed -n 4p) s of $(sort -n t.txt | tr '\n' ' ')"; done)
  echo "== cold start (CUDA_CACHE_DISABLE=1: no driver JIT cache), process start to exit"
  mkdir -p /tmp/cold && cd /tmp/cold
  echo "-- where a cold startup-only run spends its time (RUST_GPU_SIM_TIMELINE=1)"
  CUDA_CACHE_DISABLE=1 RUST_GPU_SIM_TIMELINE=1 /usr/bin/time -f "process wall %e s" $B/rust-gpu-sim grayscott --size 64 \
    --steps 1 --frame-every 1 --gif s.gif 2>&1 | grep -E "timeline|wall"
  # The median and range of N runs of a command, process start to exit; PAUSE seconds after
  # each run (default none: in a row, each run starting while the previous run's teardown
  # child may still be releasing its context, docs/startup.md).
  runs() {
    local label=$1 n=$2; shift 2
    rm -f times.txt
    for i in $(seq "$n"); do /usr/bin/time -f "%e" -a -o times.txt "$@" > /dev/null 2>&1; sleep "${PAUSE:-0}"; done
    echo "$label: median $(sort -n times.txt | sed -n "$(( (n + 1) / 2 ))p") s of $(sort -n times.txt | tr '\n' ' ')"
  }
  runs "cubin startup-only cold" 7 env CUDA_CACHE_DISABLE=1 $B/rust-gpu-sim grayscott --size 64 --steps 1 --frame-every 1 --gif s.gif
  runs "cubin default --gif cold" 7 env CUDA_CACHE_DISABLE=1 $B/rust-gpu-sim grayscott --gif
  PAUSE=0.6 runs "cubin startup-only cold, alone (0.6 s apart)" 7 env CUDA_CACHE_DISABLE=1 $B/rust-gpu-sim grayscott \
    --size 64 --steps 1 --frame-every 1 --gif s.gif
  PAUSE=0.6 runs "cubin default --gif cold, alone (0.6 s apart)" 7 env CUDA_CACHE_DISABLE=1 $B/rust-gpu-sim grayscott --gif
  runs "cubin startup-only warm cache" 7 $B/rust-gpu-sim grayscott --size 64 --steps 1 --frame-every 1 --gif s.gif
  runs "cubin default --gif warm cache" 7 $B/rust-gpu-sim grayscott --gif
  runs "PTX startup-only cold" 3 env CUDA_CACHE_DISABLE=1 RUST_GPU_SIM_FORCE_PTX=1 $B/rust-gpu-sim grayscott --size 64 --steps 1 \
    --frame-every 1 --gif s.gif
  runs "PTX default --gif cold" 3 env CUDA_CACHE_DISABLE=1 RUST_GPU_SIM_FORCE_PTX=1 $B/rust-gpu-sim grayscott --gif
  cd - > /dev/null
  echo "-- the driver's teardown after exit, by a child (host/tests/it/teardown_gpu.rs)"
  $B/host_it --ignored --test-threads=1 --nocapture teardown_gpu:: > "$OUT/teardown.log" 2>&1
  grep -E "test result|panicked|the run, to|child exited" "$OUT/teardown.log"
fi

if has sanitize; then
  echo "== compute-sanitizer (333x300, 200 steps, 4 frames)"
  for variant in naive reuse fused tiled single; do
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim heat --nx 37 --ny 41 --nz 43 --steps 4 \
        --frame-every 2 --variant $variant --gif /tmp/h.gif > "$OUT/san-$tool-heat-$variant.log" 2>&1
      echo "heat $variant $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-heat-$variant.log" | tr '\n' ' ')"
    done
  done
  for variant in fused v1 v2 tiled temporal streaming v0; do
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim grayscott --width 333 --size 300 --steps 200 \
        --frame-every 50 --variant $variant --no-autotune --gif /tmp/s.gif > "$OUT/san-$tool-$variant.log" 2>&1
      echo "$variant $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-$variant.log" | tr '\n' ' ')"
    done
  done
fi

if has unit-sanitize; then
  echo "== compute-sanitizer on kernel tests: the streaming kernels (every step count and block shape, small grids), fused and fused_pair,"
  echo "   and the chains of programmatic launches (out-of-bounds accesses and shared-memory races within a launch;"
  echo "   not races between launches, which the chain test's bit-identity and the PTX test of the wait's place guard)"
  for test in streaming_kernels_match_cpu_on_small fused_kernel_matches programmatic_streaming_chains; do
    for tool in memcheck racecheck; do
      timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B/simulations_it --ignored --test-threads=1 \
        gpu_grayscott::$test > "$OUT/san-$tool-$test.log" 2>&1
      echo "$test $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$OUT/san-$tool-$test.log" | tr '\n' ' ')"
    done
  done
fi

if has profile; then
  echo "== ncu: streaming and temporal at 4096^2 (one launch each, tuned settings)"
  mkdir -p /tmp/prof && cd /tmp/prof
  for variant in temporal streaming; do
    $B/rust-gpu-sim grayscott --variant $variant --size 4096 --steps 64 --frame-every 64 --png-dir /tmp/prof/$variant > /dev/null 2>&1
    ncu --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section ComputeWorkloadAnalysis -k regex:gray_scott_$variant -s 3 -c 1 $B/rust-gpu-sim grayscott --variant $variant \
      --size 4096 --steps 64 --frame-every 64 --png-dir /tmp/prof/$variant > "$OUT/ncu-$variant.txt" 2>&1
    grep -E "gray_scott_|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Block Limit Registers|No Eligible|Executed Ipc A" "$OUT/ncu-$variant.txt" | head -16
  done
  cd - > /dev/null
fi

if has profile-full; then
  # Full ncu reports (every section, source counters) of the kernels issue 26 works on, one
  # launch each after warm-up: heat single 600^3, Physarum optimized 2048^2 with 10M agents,
  # Gray-Scott streaming 4096^2 and 512^2.
  echo "== ncu --set full: heat_rk4_single, physarum (optimized), gray_scott_streaming"
  mkdir -p /tmp/prof && cd /tmp/prof
  # Tune first (the autotune cache), so that the profiled launches are the tuned shape and
  # not one of the tuner's candidates.
  for size in 512 4096; do
    $B/rust-gpu-sim grayscott --variant streaming --size $size --steps 8 --frame-every 8 --png-dir /tmp/prof/tune$size > /dev/null
  done
  ncu --set full --import-source no -k regex:heat_rk4_single -s 2 -c 1 $B/rust-gpu-sim heat --size 600 --steps 4 \
    --variant single > "$OUT/ncu-full-heat-single-600.txt" 2>&1
  ncu --set full --graph-profiling node -k regex:physarum -s 20 -c 8 $B/rust-gpu-sim physarum --size 2048 \
    --agents 10000000 --steps 12 --variant optimized > "$OUT/ncu-full-physarum-10m.txt" 2>&1
  ncu --set full -k regex:gray_scott_streaming -s 3 -c 1 $B/rust-gpu-sim grayscott --variant streaming --size 4096 \
    --steps 64 --frame-every 64 --png-dir /tmp/prof/full4096 > "$OUT/ncu-full-streaming-4096.txt" 2>&1
  ncu --set full -k regex:gray_scott_streaming -s 20 -c 1 $B/rust-gpu-sim grayscott --variant streaming --size 512 \
    --steps 400 --frame-every 400 --png-dir /tmp/prof/full512 > "$OUT/ncu-full-streaming-512.txt" 2>&1
  for f in "$OUT"/ncu-full-*.txt; do
    echo "$(basename "$f"): $(grep -cE '^  [a-z_]+.*\(' "$f") kernels; $(grep -E '^    Duration|Memory Throughput' "$f" | tr -s ' ' | head -4 | tr '\n' ';')"
  done
  cd - > /dev/null
fi

if has gif; then
  echo "== default GIF job (process start to file closed)"
  mkdir -p /tmp/run && cd /tmp/run
  $B/rust-gpu-sim grayscott --gif 2>&1 | tail -1
  echo "== default job: --gif and --mp4 alternating, 7 runs each, process start to file closed (s)"
  rm -f gif.times mp4.times
  for i in 1 2 3 4 5 6 7; do
    for format in gif mp4; do
      /usr/bin/time -f "%e" -o t.txt $B/rust-gpu-sim grayscott --$format > /dev/null 2>&1 && cat t.txt >> $format.times
    done
  done
  for format in gif mp4; do
    echo "--$format: median $(sort -n $format.times | sed -n 4p) s of: $(sort -n $format.times | tr '\n' ' ')"
  done
  echo "== the encoders alone on the default job's frames (bench encode)"
  $B/rust-gpu-sim bench encode --json "$OUT/bench-encode.json" 2> "$OUT/bench-encode.err" | tee "$OUT/bench-encode.txt"
  echo "== default job with --save"
  /usr/bin/time -f "wall %e s" $B/rust-gpu-sim grayscott --save state.npz 2>&1 | tail -2
  ls -la grayscott.gif grayscott.mp4 state.npz
  $B/grayscott_png /tmp/run/example.png 2>&1 | tail -1
  cd - > /dev/null
fi

if has bench; then
  echo "== bench"
  $B/rust-gpu-sim bench grayscott --json "$OUT/bench.json" --plot "$OUT/bench.png" 2> "$OUT/bench.err" | tee "$OUT/bench.txt"
  tail -3 "$OUT/bench.err"
  echo "== the Gray-Scott step's traffic with no stencil (scripts/copy-ceiling.cu, nvcc)"
  nvcc -O3 -arch=native -o /tmp/copy-ceiling scripts/copy-ceiling.cu && /tmp/copy-ceiling | tee "$OUT/copy-ceiling.txt"
fi

if has map; then
  echo "== parameter map: compute-sanitizer on a small map, then the default 64x64 map timed"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim grayscott --map /tmp/m.png --map-tiles 5 \
      --map-tile-size 37 --steps 20 > "$OUT/san-$tool-map.log" 2>&1
    echo "map $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-map.log" | tr '\n' ' ')"
  done
  /usr/bin/time -f "map wall %e s" $B/rust-gpu-sim grayscott --map "$OUT/grayscott-map.png" 2>&1 | tail -2
fi

if has heat; then
  echo "== bench heat"
  $B/rust-gpu-sim bench heat --sizes 600,256 2> "$OUT/bench-heat.err" | tee "$OUT/bench-heat.txt"
  tail -2 "$OUT/bench-heat.err"
fi

if has physarum-tests; then
  echo "== Physarum GPU tests"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_physarum:: > "$OUT/gpu-physarum-tests.log" 2>&1
  grep -E "test result|identical|panicked" "$OUT/gpu-physarum-tests.log"
fi

if has physarum-sanitize; then
  echo "== compute-sanitizer, Physarum (333x217, 20000 agents, 6 steps, bilinear and nearest)"
  for variant in unfused fused optimized; do
    for tool in memcheck racecheck; do
      for sensing in nearest bilinear; do
        compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim physarum --width 333 --height 217 \
          --agents 20000 --steps 6 --frame-every 3 --jitter 0.1 --sensing $sensing --variant $variant \
          --gif /tmp/p.gif > "$OUT/san-$tool-physarum-$variant-$sensing.log" 2>&1
        echo "physarum $variant $sensing $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-physarum-$variant-$sensing.log" | tr '\n' ' ')"
      done
    done
  done
  # 20,000 agents on 333x217 are below one per cell and above a quarter (float deposits into a
  # copy of the trail, 16x16 bins); 10,000 below a quarter (float deposits in place); 300,000
  # above one per cell (counted deposits, 8x8 bins).
  for density in "sparse 10000" "dense 300000"; do
    read -r name agents <<< "$density"
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim physarum --width 333 --height 217 \
        --agents $agents --steps 20 --frame-every 10 --jitter 0.1 --variant optimized \
        --gif /tmp/p.gif > "$OUT/san-$tool-physarum-optimized-$name.log" 2>&1
      echo "physarum optimized $name $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-physarum-optimized-$name.log" | tr '\n' ' ')"
    done
  done
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim physarum --size 200 --agents 5000 --steps 20 \
      --sensitivity --variant optimized > "$OUT/san-$tool-physarum-sensitivity.log" 2>&1
    echo "physarum sensitivity $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-$tool-physarum-sensitivity.log" | tr '\n' ' ')"
  done
fi

if has physarum-gif; then
  echo "== Physarum default GIF job (process start to file closed), and sample frames"
  mkdir -p /tmp/prun && cd /tmp/prun
  for i in 1 2 3; do /usr/bin/time -f "wall %e s" $B/rust-gpu-sim physarum --gif 2>&1 | tail -2; done
  ls -la /tmp/prun/physarum.gif
  $B/rust-gpu-sim physarum --steps 600 --frame-every 600 --png-dir "$OUT/frames-slime" | tail -1
  $B/rust-gpu-sim physarum --steps 600 --frame-every 600 --palette terrain --png-dir "$OUT/frames-terrain" | tail -1
  for p in heading trail; do
    $B/rust-gpu-sim physarum --sensitivity --perturb $p --steps 400 --data "$OUT/lyapunov-$p.tsv" | tail -3
  done
  cd - > /dev/null
fi

if has physarum-bench; then
  echo "== bench physarum"
  $B/rust-gpu-sim bench physarum 2> "$OUT/bench-physarum.err" | tee "$OUT/bench-physarum.txt"
  tail -2 "$OUT/bench-physarum.err"
fi

if has split; then
  echo "== split runs (--split on one GPU): bit-identical to one part and the CPU"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_split:: --skip multi_gpu > "$OUT/gpu-split-tests.log" 2>&1
  grep -E "test result|panicked" "$OUT/gpu-split-tests.log"
  grep -c "bit-identical to one part" "$OUT/gpu-split-tests.log" | sed 's/^/split configurations checked: /'
  echo "== compute-sanitizer on heat in 3 slabs (37x29x61, 3 RK4 steps)"
  for variant in naive fused single "single --overlap"; do
    for tool in memcheck racecheck; do
      log="$OUT/sanitize-heat-split-${variant/ --/-}-$tool.log"
      compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim heat --nx 37 --ny 29 --nz 61 --steps 3 \
        --variant $variant --split 3 --save /tmp/heat-split.npz > "$log" 2>&1
      echo "heat split $variant $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' '))"
    done
  done
  # --overlap's other schemes (edges first, the default over NCCL between processes; rounds,
  # the exchange by rounds of tile columns), in 3 slabs of one process, against the unsplit
  # run's bits. (Slabs sharing a GPU launch one after another; 600x600: 275 tiles, two rounds and the runs on 132 blocks.)
  for size in "37 29 61" "600 600 31"; do
    set -- $size
    $B/rust-gpu-sim heat --nx $1 --ny $2 --nz $3 --steps 3 --variant single --save /tmp/heat-one.npz > /dev/null 2>&1
    for scheme in edges rounds; do
      for tool in memcheck racecheck; do
        log="$OUT/sanitize-heat-split-$scheme-$1-$tool.log"
        RUST_GPU_SIM_HEAT_OVERLAP=$scheme compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim heat --nx $1 \
          --ny $2 --nz $3 --steps 3 --variant single --split 3 --overlap --save /tmp/heat-$scheme.npz > "$log" 2>&1
        echo "heat $1x$2x$3 split single --overlap $scheme $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tr '\n' ' '))" \
          "$(grep -oE 'edges first|by rounds' "$log" | head -1); $(python3 -c "
import numpy as np
a, b = np.load('/tmp/heat-one.npz'), np.load('/tmp/heat-$scheme.npz')
print('bit-identical to one part' if all(np.array_equal(a[k].view(np.uint32), b[k].view(np.uint32)) for k in a.files) else 'DIFFERS')")"
      done
    done
    # Without the sanitizer (which serialises), 40 steps.
    $B/rust-gpu-sim heat --nx $1 --ny $2 --nz $3 --steps 40 --variant single --save /tmp/heat-one.npz > /dev/null 2>&1
    RUST_GPU_SIM_HEAT_OVERLAP=rounds timeout 120 $B/rust-gpu-sim heat --nx $1 --ny $2 --nz $3 --steps 40 --variant single \
      --split 3 --overlap --save /tmp/heat-rounds.npz > "$OUT/heat-split-rounds-$1.log" 2>&1
    echo "heat $1x$2x$3 split 3 --overlap rounds, 40 steps: exit $?, $(python3 -c "
import numpy as np
a, b = np.load('/tmp/heat-one.npz'), np.load('/tmp/heat-rounds.npz')
print('bit-identical to one part' if all(np.array_equal(a[k].view(np.uint32), b[k].view(np.uint32)) for k in a.files) else 'DIFFERS')")"
  done
  echo "== compute-sanitizer on split runs (4 parts, 333x301, 40 steps)"
  for variant in fused temporal streaming; do
    for tool in memcheck racecheck; do
      compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim grayscott --width 333 --size 301 --steps 40 \
        --variant $variant --split 4 --no-autotune --save /tmp/split-$variant.npz > "$OUT/sanitize-split-$variant-$tool.log" 2>&1
      echo "split $variant $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-split-$variant-$tool.log" | tr '\n' ' '))"
    done
  done
  echo "== CLI: a split run's output equals the unsplit run's; refusals"
  mkdir -p /tmp/split && cd /tmp/split
  $B/rust-gpu-sim grayscott --size 301 --steps 500 --variant streaming --save one.npz > /dev/null 2>&1
  $B/rust-gpu-sim grayscott --size 301 --steps 500 --variant streaming --split 3 --save three.npz > /dev/null 2>&1
  python3 -c "
import numpy as np
a, b = np.load('one.npz'), np.load('three.npz')
same = all(np.array_equal(a[k].view(np.uint32), b[k].view(np.uint32)) for k in a.files if a[k].dtype == np.float32)
print('--split 3 --save: arrays', a.files, 'bit-identical to one part' if same else 'DIFFER from one part')"
  $B/rust-gpu-sim grayscott --gpus 2 --steps 10 2>&1 | tail -1; echo "exit $?"
  $B/rust-gpu-sim physarum --split 2 2>&1 | tail -1
  cd - > /dev/null
fi

# ---- issue 27 (faults helper): begin ----
if has nccl; then
  # Open MPI refuses root without these; the GPU machine runs as root.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  echo "== NCCL transport, one rank (periodic self-exchange through NCCL): GPU tests"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_split::nccl > "$OUT/gpu-nccl-tests.log" 2>&1
  grep -E "test result|panicked|bit-identical" "$OUT/gpu-nccl-tests.log"
  echo "== mpirun -np 1 --transport nccl against a plain run (--save arrays and the GIF, bit for bit)"
  same() { python3 -c "import numpy as n,sys; a,b=n.load(sys.argv[1]),n.load(sys.argv[2]); print('identical' if all(n.array_equal(a[k].view(n.uint32),b[k].view(n.uint32)) for k in a.files) and a.files==b.files else 'DIFFERENT')" "$1" "$2"; }
  for variant in fused temporal streaming; do
    args="grayscott --width 333 --size 301 --steps 40 --variant $variant --no-autotune --frame-every 10"
    $B/rust-gpu-sim $args --save /tmp/plain-$variant.npz --gif /tmp/plain-$variant.gif > "$OUT/nccl-plain-$variant.log" 2>&1
    for overlap in "" --overlap; do
      mpirun -np 1 $B/rust-gpu-sim $args --transport nccl $overlap --save /tmp/mpi-$variant.npz --gif /tmp/mpi-$variant.gif > "$OUT/nccl-mpi-$variant.log" 2>&1
      echo "grayscott $variant ${overlap:-(no overlap)}: exit $?, arrays $(same /tmp/plain-$variant.npz /tmp/mpi-$variant.npz), gif frames $(python3 scripts/same-gif.py /tmp/plain-$variant.gif /tmp/mpi-$variant.gif); $(grep -o 'on cuda.*NCCL[^)]*processes[^)]*' "$OUT/nccl-mpi-$variant.log" | cut -c1-150)"
    done
  done
  args="heat --nx 37 --ny 29 --nz 61 --steps 9 --variant single"
  $B/rust-gpu-sim $args --save /tmp/plain-heat.npz > "$OUT/nccl-plain-heat.log" 2>&1
  mpirun -np 1 $B/rust-gpu-sim $args --transport nccl --save /tmp/mpi-heat.npz > "$OUT/nccl-mpi-heat.log" 2>&1
  echo "heat single: exit $?, arrays $(same /tmp/plain-heat.npz /tmp/mpi-heat.npz)"
  # NCCL's initialisation probes its own kernels with cudaFuncGetAttributes and gets "no kernel
  # image" for architectures it was not built for: API errors inside libnccl, not memory
  # errors. --report-api-errors no leaves them out; every memory access is still checked.
  echo "== compute-sanitizer on the NCCL self-exchange (streaming and fused, 333x301, 40 steps, overlapped or not)"
  for variant in streaming fused; do
    for overlap in "" --overlap; do
      for tool in memcheck racecheck; do
        compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $B/rust-gpu-sim grayscott --width 333 \
          --size 301 --steps 40 --variant $variant --no-autotune --transport nccl $overlap --save /tmp/nccl-san.npz \
          > "$OUT/sanitize-nccl-$variant$overlap-$tool.log" 2>&1
        echo "nccl $variant ${overlap:-(no overlap)} $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-nccl-$variant$overlap-$tool.log" | tr '\n' ' '))"
      done
    done
  done
  echo "== mpirun -np 2 on this one GPU: refused with one line, no hang, no output"
  rm -f /tmp/two.gif
  start=$(date +%s.%N)
  timeout 120 mpirun -np 2 $B/rust-gpu-sim grayscott --size 256 --steps 10 --gif /tmp/two.gif > "$OUT/nccl-two.log" 2>&1
  echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N)-$start:.1f}')") s; our lines: $(grep -c '^error' "$OUT/nccl-two.log"); gif: $(ls /tmp/two.gif 2>/dev/null || echo none)"
  grep '^error' "$OUT/nccl-two.log"
  echo "== the same with each rank shown GPU 0 (CUDA_VISIBLE_DEVICES) and NCCL_COMM_ID: NCCL's duplicate-GPU refusal"
  start=$(date +%s.%N)
  timeout 120 mpirun -np 2 -x CUDA_VISIBLE_DEVICES=0 -x NCCL_COMM_ID=127.0.0.1:29511 $B/rust-gpu-sim grayscott --size 256 \
    --steps 10 --gif /tmp/two.gif > "$OUT/nccl-two-visible.log" 2>&1
  echo "exit $? after $(python3 -c "print(f'{$(date +%s.%N)-$start:.1f}')") s; our lines: $(grep -c '^error' "$OUT/nccl-two-visible.log"); gif: $(ls /tmp/two.gif 2>/dev/null || echo none)"
  grep '^error' "$OUT/nccl-two-visible.log"
  echo "== ranks that never come: each alone, --peer-timeout 5"
  for who in "0 NCCL_COMM_ID=127.0.0.1:29512" "1 NCCL_COMM_ID=127.0.0.1:29513" "1 --nccl-id-file /tmp/never-written.id"; do
    set -- $who
    rank=$1; shift
    if [[ $1 == NCCL_COMM_ID=* ]]; then envs=("$1"); opts=(); else envs=(); opts=("$@"); fi
    start=$(date +%s.%N)
    env OMPI_COMM_WORLD_RANK=$rank OMPI_COMM_WORLD_SIZE=2 "${envs[@]}" timeout 60 $B/rust-gpu-sim grayscott --size 256 \
      --steps 10 --peer-timeout 5 "${opts[@]}" --gif /tmp/never.gif > "$OUT/nccl-never-$rank.log" 2>&1
    echo "rank $rank of 2 ($who): exit $? after $(python3 -c "print(f'{$(date +%s.%N)-$start:.1f}')") s, gif: $(ls /tmp/never.gif 2>/dev/null || echo none): $(grep -v '^note' "$OUT/nccl-never-$rank.log" | tail -1)"
  done
fi

if has multi || has multi-bench || has multi-gs || has multi-heat || has multi-sweep || has multi-binding || has multi-short \
  || has multi-hosts || has multi-pairs || has multi-overlap || has multi-hosts-heat || has multi-rounds; then
  # Several GPUs: the same-process split over them, every output under mpirun -np 2 and 4,
  # checkpoints across rank counts, a rank killed mid-run; the scaling bench.
  B=$B OUT=$OUT bash scripts/multi-gpu-check.sh $(has multi && echo tests) $(has multi-bench && echo bench-local bench-mpi) \
    $(has multi-gs && echo bench-gs) $(has multi-heat && echo bench-heat) $(has multi-sweep && echo sweep) \
    $(has multi-binding && echo binding) $(has multi-short && echo short-run) $(has multi-hosts && echo two-hosts) \
    $(has multi-pairs && echo host-pairs) $(has multi-overlap && echo overlap) \
    $(has multi-hosts-heat && echo hosts-heat) $(has multi-rounds && echo rounds)
fi
if has split-bench; then
  echo "== bench of split runs on this GPU: Gray-Scott 16384^2 and 4096^2, heat 1200^3 (parts 1, 2, 4; NCCL one rank)"
  $B/rust-gpu-sim bench grayscott --sizes 16384,4096 --variants fused,streaming --split 1,2,4 --repeats 5 \
    2> "$OUT/bench-split.err" | tee "$OUT/bench-split.txt"
  $B/rust-gpu-sim bench heat --sizes 1200 --variants single,fused --split 1,2,4 --repeats 5 \
    2> "$OUT/bench-heat-split.err" | tee "$OUT/bench-heat-split.txt"
fi

if has heat-size; then
  # The largest heat cube on an H200 with `single` (8 B a cell plus halos): 2640^3 runs in one
  # part and in two slabs; 2700^3 is refused with the need and what is free.
  echo "== heat size limits on this GPU (single, 2 RK4 steps)"
  for size in 2640 2700; do
    for split in 1 2; do
      /usr/bin/time -f "%e s, peak host RSS %M KB" $B/rust-gpu-sim heat --size $size --steps 2 --variant single --init sine \
        --split $split > "$OUT/heat-size-$size-$split.log" 2>&1
      echo "$size^3 --split $split: exit $?: $(grep -E '^heat|^error' "$OUT/heat-size-$size-$split.log" | cut -c1-230); $(tail -1 "$OUT/heat-size-$size-$split.log")"
    done
  done
fi

if has faults; then
  echo "== faults: GPU memory taken after the check; a kernel fault mid-run (host/tests/it/faults_gpu.rs)"
  $B/host_it --ignored --test-threads=1 --nocapture faults_gpu:: > "$OUT/gpu-faults.log" 2>&1
  grep -E "^test |test result|run's stderr|^hog:" "$OUT/gpu-faults.log"
  # The GPU is usable afterwards (no stuck process holding it).
  $B/rust-gpu-sim grayscott --size 256 --steps 100 > /dev/null 2>&1 && echo "faults: a later run: ok" || echo "faults: a later run: FAILED"
fi

if has load; then
  echo "== load: 8 concurrent runs, one fresh shared autotune cache, each compared with the same run alone"
  L=/tmp/load-check; rm -rf "$L"; mkdir -p "$L/together" "$L/alone"
  # name|arguments: mixed simulations and variants; the grayscott ones tune on first use.
  load_jobs=(
    "gs-fused|grayscott --size 1024 --steps 600 --variant fused"
    "gs-temporal|grayscott --size 768 --steps 600 --variant temporal"
    "gs-streaming|grayscott --size 1536 --steps 400 --variant streaming"
    "gs-fused-2k|grayscott --size 2048 --steps 300 --variant fused"
    "heat-single|heat --size 96 --steps 60 --variant single"
    "heat-fused|heat --size 64 --steps 100 --variant fused"
    "physarum-optimized|physarum --size 512 --agents 200000 --steps 200 --variant optimized"
    "physarum-fused|physarum --size 384 --agents 100000 --steps 200 --variant fused"
  )
  load_fail=0
  pids=()
  for job in "${load_jobs[@]}"; do
    name=${job%%|*}; read -r -a cmd <<< "${job#*|}"
    XDG_CACHE_HOME="$L/together/cache" $B/rust-gpu-sim "${cmd[@]}" --save "$L/together/$name.npz" \
      > "$L/together/$name.log" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { echo "load: together ${load_jobs[$i]%%|*} exited $?: $(tail -1 "$L/together/${load_jobs[$i]%%|*}.log")"; load_fail=1; }
  done
  for job in "${load_jobs[@]}"; do
    name=${job%%|*}; read -r -a cmd <<< "${job#*|}"
    XDG_CACHE_HOME="$L/alone/cache" $B/rust-gpu-sim "${cmd[@]}" --save "$L/alone/$name.npz" > "$L/alone/$name.log" 2>&1 \
      || { echo "load: alone $name failed: $(tail -1 "$L/alone/$name.log")"; load_fail=1; }
  done
  identical=0
  for job in "${load_jobs[@]}"; do
    name=${job%%|*}
    if cmp -s "$L/together/$name.npz" "$L/alone/$name.npz"; then identical=$((identical + 1)); else
      echo "load: $name differs between the concurrent run and the run alone"; load_fail=1; fi
  done
  # Every entry tuned by the runs alone (one after the other) is in the shared cache too.
  keys() { cut -f1-5 "$1/cache/rust-gpu-sim/autotune.tsv" 2>/dev/null | sort -u; }
  expected=$(keys "$L/alone" | wc -l)
  missing=$(comm -23 <(keys "$L/alone") <(keys "$L/together") | wc -l)
  cp "$L/together/cache/rust-gpu-sim/autotune.tsv" "$OUT/load-autotune-together.tsv" 2>/dev/null
  cp "$L/alone/cache/rust-gpu-sim/autotune.tsv" "$OUT/load-autotune-alone.tsv" 2>/dev/null
  if [[ $expected -eq 0 || $missing -ne 0 ]]; then load_fail=1; fi
  ls -A "$L/together" | grep -E '^\.tmp' && { echo "load: stray temporary files"; load_fail=1; }
  if [[ $load_fail -eq 0 ]]; then verdict=PASS; else verdict=FAIL; fi
  echo "load: $verdict: $identical/${#load_jobs[@]} outputs bit-identical to the runs alone; cache: $((expected - missing))/$expected tuned entries kept"
fi
# ---- issue 27 (faults helper): end ----
# --- serve (issue 25) ---------------------------------------------------------------------
if has serve; then
  echo "== serve, CUDA backend: live rate changes bit-identical to the CPU; then a frame-timestamping"
  echo "   client on this host: frames/s delivered and parameter-change latency (change sent -> first frame with it)"
  SERVE_BIN=$B/rust-gpu-sim $B/host_it --ignored --test-threads=1 --nocapture serve_gpu:: > "$OUT/serve.log" 2>&1
  grep -E "test result|panicked|^serve on|^case|^grayscott|^physarum" "$OUT/serve.log"
fi
# --- end serve ----------------------------------------------------------------------------
# --- example: examples/barkley (issue 24 part 3) ------------------------------------------
if has example; then
  echo "== examples/barkley: GPU against CPU bit for bit (cubin and PTX), the command on the GPU"
  BARKLEY_BIN=$B/barkley $B/barkley_it --ignored --test-threads=1 --nocapture gpu:: > "$OUT/barkley-gpu-tests.log" 2>&1
  grep -E "test result|NVIDIA|excited|differ|steps of|panicked" "$OUT/barkley-gpu-tests.log"
  echo "== examples/barkley split into bands (simulations::split): --split and --gpus against one part"
  BARKLEY_BIN=$B/barkley $B/barkley_it --ignored --test-threads=1 --nocapture gpu_split:: > "$OUT/barkley-split-tests.log" 2>&1
  grep -E "test result|note|steps of|panicked" "$OUT/barkley-split-tests.log" | head -20
  echo "== simulations::split on GPUs: halos copied device to device (library unit test)"
  # Two NCCL ranks in one process need two GPUs: skipped (and said) on one.
  two=(); [ "$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)" -ge 2 ] ||
    { two=(--skip two_nccl_ranks); echo "one GPU: two_nccl_ranks_* skipped"; }
  $B/simulations_lib --ignored --test-threads=1 --nocapture split:: "${two[@]}" > "$OUT/banded-gpu-tests.log" 2>&1
  grep -E "test result|panicked" "$OUT/banded-gpu-tests.log"
  echo "== compute-sanitizer on the barkley GPU test and the barkley command (301x203, 50 steps; split: 3 parts on one GPU, 5 over 2 GPUs)"
  for tool in memcheck racecheck synccheck; do
    for split in "--split 3" "--gpus 2 --split 5"; do
      if [[ $split == *gpus* ]] && [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then continue; fi
      compute-sanitizer --tool $tool --error-exitcode 9 $B/barkley --width 301 --height 203 --steps 50 $split \
        -o /tmp/barkley-san-split.png > "$OUT/san-$tool-barkley-split.log" 2>&1
      echo "barkley $split $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|steps of' "$OUT/san-$tool-barkley-split.log" | tr '\n' ' ')"
    done
  done
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $B/barkley_it --ignored --test-threads=1 \
      gpu::gpu_steps_are_bit_identical_to_the_cpu > "$OUT/san-$tool-barkley-test.log" 2>&1
    echo "barkley test $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$OUT/san-$tool-barkley-test.log" | tr '\n' ' ')"
    compute-sanitizer --tool $tool --error-exitcode 9 $B/barkley --width 301 --height 203 --steps 50 \
      -o /tmp/barkley-san.png > "$OUT/san-$tool-barkley.log" 2>&1
    echo "barkley command $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|steps of' "$OUT/san-$tool-barkley.log" | tr '\n' ' ')"
  done
fi
# --- end example --------------------------------------------------------------------------
# --- toolkit: ptxkit-check's GPU tests (every intrinsic on the GPU) --------------------------
# ptxkit-check's Hopper module (its cluster:: tests) needs sm_90 or newer: skipped before, saying so.
toolkit_skip=()
if has toolkit || has toolkit-sanitize; then
  if [ "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')" -lt 90 ] 2>/dev/null; then
    toolkit_skip=(--skip cluster::); echo "toolkit: not an sm_90 GPU, ptxkit-check's cluster:: tests skipped"
  fi
fi
if has toolkit; then
  echo "== toolkit: ptxkit-check's GPU tests (every intrinsic against expected values)"
  # A timeout: a wrong barrier or byte count in a cluster kernel hangs rather than fails.
  timeout 300 $B/ptxkit_check --ignored --test-threads=1 --nocapture "${toolkit_skip[@]}" > "$OUT/toolkit-tests.log" 2>&1
  echo "toolkit tests: exit $?"
  grep -E "test result|panicked|FAILED" "$OUT/toolkit-tests.log"
  echo "-- libdevice accuracy (max error in ulp over each function's input grid)"
  grep -E "ulp" "$OUT/toolkit-tests.log" | head -80
fi
if has toolkit-sanitize; then
  # Tests that fault, go out of bounds or panic on purpose are skipped (libtest's --skip is a
  # substring filter): the sanitizer would rightly report them.
  echo "== compute-sanitizer on ptxkit-check's GPU tests (but *oob*, *fault*, *panic*)"
  for tool in memcheck racecheck; do
    # --report-api-errors no: the run-time module test looks up a kernel that does not exist
    # on purpose (CUDA_ERROR_NOT_FOUND); every memory access is still checked.
    timeout 300 compute-sanitizer --tool $tool --report-api-errors no --error-exitcode 9 $B/ptxkit_check --ignored --test-threads=1 \
      --skip oob --skip fault --skip panic --skip math_f "${toolkit_skip[@]}" > "$OUT/san-$tool-toolkit.log" 2>&1
    echo "toolkit $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$OUT/san-$tool-toolkit.log" | tr '\n' ' ')"
  done
  # The Hopper module's barriers (cluster barriers, mbarrier phases): synccheck too.
  if [ ${#toolkit_skip[@]} -eq 0 ]; then
    timeout 150 compute-sanitizer --tool synccheck --error-exitcode 9 $B/ptxkit_check --ignored --test-threads=1 cluster:: \
      > "$OUT/san-synccheck-toolkit-cluster.log" 2>&1
    echo "toolkit cluster synccheck: exit $? :: $(grep -E 'ERROR SUMMARY|test result' "$OUT/san-synccheck-toolkit-cluster.log" | tr '\n' ' ')"
  fi
fi
if has lineinfo; then
  # A deliberate out-of-bounds write, from a kernel image with line tables (the staged
  # ptxkit_check_lineinfo binary was built with PTXKIT_LINEINFO=1): compute-sanitizer names the
  # Rust file and line.
  echo "== compute-sanitizer names the Rust line of a deliberate out-of-bounds write"
  PTXKIT_CHECK_FAULT=1 timeout 120 compute-sanitizer --tool memcheck $B/ptxkit_check_lineinfo --ignored --exact \
    debug::gpu_debug_oob_write_for_compute_sanitizer > "$OUT/lineinfo-oob.log" 2>&1
  grep -E -m1 -A8 "Invalid __global__ write" "$OUT/lineinfo-oob.log"
  grep -E "ERROR SUMMARY" "$OUT/lineinfo-oob.log"
fi
# --- end toolkit ----------------------------------------------------------------------------
# --- cookbook: examples/cookbook ------------------------------------------------------------
if has cookbook; then
  echo "== examples/cookbook: each kernel on the GPU against its CPU reference"
  $B/cookbook_it --ignored --test-threads=1 --nocapture > "$OUT/cookbook-tests.log" 2>&1
  grep -m1 -E "NVIDIA|\(cubin|\(PTX" "$OUT/cookbook-tests.log"
  grep -E "test result|panicked|FAILED" "$OUT/cookbook-tests.log"
fi
if has cookbook-sanitize; then
  echo "== compute-sanitizer on the cookbook's GPU tests"
  for tool in memcheck racecheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 $B/cookbook_it --ignored --test-threads=1 \
      > "$OUT/san-$tool-cookbook.log" 2>&1
    echo "cookbook $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$OUT/san-$tool-cookbook.log" | tr '\n' ' ')"
  done
fi
if has cookbook-bench; then
  echo "== the CUDA C twins: nvcc -O3 -cubin for this GPU's architecture"
  NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  arch=sm_${cap:-90}
  "$NVCC" --version | tail -1
  mkdir -p /tmp/cookbook-cubins
  for cu in examples/cookbook/cuda/*.cu; do
    k=$(basename "$cu" .cu)
    # tma.cu, cluster_reduce.cu and tma_stencil.cu (TMA, mbarrier transactions, clusters; PTX
    # ISA 8.3) are sm_90+ only: on an older GPU the bench skips their rows, so they are not built.
    case $k in tma | cluster_reduce | tma_stencil) hopper=1 ;; *) hopper=0 ;; esac
    if [ "$hopper" = 1 ] && [ "${cap:-90}" -lt 90 ]; then echo "nvcc $k: skipped on $arch (sm_90+ only)"; continue; fi
    # wgmma.cu (wgmma: architecture-specific) builds for sm_90a only: on a 9.0 GPU, else skipped.
    karch=$arch
    if [ "$k" = wgmma ]; then
      if [ "${cap:-90}" != 90 ]; then echo "nvcc $k: skipped on $arch (sm_90a only)"; continue; fi
      karch=sm_90a
    fi
    "$NVCC" -O3 -arch=$karch -cubin -o /tmp/cookbook-cubins/$k.cubin "$cu" > "$OUT/nvcc-$k.log" 2>&1 \
      || echo "nvcc $k failed: $(head -5 "$OUT/nvcc-$k.log")"
  done
  echo "== cookbook-bench: Rust kernel vs nvcc twin ($arch), same algorithm and launch shape"
  $B/cookbook-bench --cubin-dir /tmp/cookbook-cubins 2>&1 | tee "$OUT/cookbook-bench.txt"
  if [ "${cap:-90}" -ge 90 ]; then
    echo "== the bf16 GEMMs at 8192^3 beside torch.matmul (hopper-gemm-bench, scripts/torch-matmul.py; same lease)"
    $B/hopper-gemm-bench 8192 2>&1 | tee "$OUT/hopper-gemm-bench.txt"
    python3 scripts/torch-matmul.py 8192 2>&1 | tee -a "$OUT/hopper-gemm-bench.txt"
  fi
fi
# --- end cookbook ---------------------------------------------------------------------------
if has host-mutants; then
  # scripts/mutants-host-gpu.sh's mutants of host code only a GPU reaches (.gpu-mutants/): the
  # library's ignored tests matching its filter, with each mutant's build of the library's unit
  # tests. First the unmutated build (0/): it must pass, or a kill means nothing.
  echo "== mutants of host code only a GPU reaches: the library's GPU tests against each"
  H=.gpu-mutants
  [ -f $H/filter.txt ] || { echo "no .gpu-mutants: build it with scripts/mutants-host-gpu.sh first"; exit 1; }
  filter=$(cat $H/filter.txt)
  two=(); [ "$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)" -ge 2 ] ||
    { two=(--skip two_nccl_ranks); echo "one GPU: two_nccl_ranks_* skipped"; }
  killed=0; survived=0
  for d in $(ls -d $H/[0-9]* | sort -t/ -k2 -n); do
    n=$(basename $d)
    rm -f /tmp/host-mutant
    { gunzip -c $d/simulations_lib.gz > /tmp/host-mutant && chmod +x /tmp/host-mutant; } ||
      { echo "FAIL: cannot unpack $d/simulations_lib.gz"; [ "$n" = 0 ] && break; continue; }
    NCCL_NVLS_ENABLE=0 timeout ${MUTANT_TIMEOUT:-180} /tmp/host-mutant --ignored --test-threads=1 "$filter" "${two[@]}" \
      > "$OUT/host-mutant-$n.log" 2>&1
    rc=$?
    if [ "$n" = 0 ]; then
      echo "baseline $(cat $d/mutant.txt): exit $rc :: $(grep 'test result' "$OUT/host-mutant-$n.log")"
      [ $rc -eq 0 ] || { echo "FAIL: the unmutated build fails its tests: no mutant run"; break; }
      grep -q 'test result: ok\. [1-9]' "$OUT/host-mutant-$n.log" ||
        { echo "FAIL: the filter '$filter' runs no test: no mutant run"; break; }
    elif [ $rc -eq 0 ]; then
      survived=$((survived + 1)); echo "SURVIVED $(cat $d/mutant.txt)"
    else
      killed=$((killed + 1))
      how="exit $rc"; [ $rc -eq 124 ] && how="timed out after ${MUTANT_TIMEOUT:-180} s"
      echo "killed ($how) $(cat $d/mutant.txt) :: $(grep -m1 -E '^---- ' "$OUT/host-mutant-$n.log" | tr -d '-') $(grep -m1 -A1 'panicked at' "$OUT/host-mutant-$n.log" | tail -1 | cut -c1-200)"
    fi
  done
  echo "host mutants: $killed killed, $survived survived"
fi
if has mutants; then
  # scripts/mutants-gpu.sh's mutants of GPU-only kernel code (.gpu/mutants.tgz): each one's
  # GPU tests with its PTX in place of the build's (RUST_GPU_SIM_PTX_DIR). First the same tests
  # on this build's own PTX (an empty directory): they must pass, or a kill means nothing.
  echo "== mutants of GPU-only kernel code: the GPU tests against each"
  [ -f .gpu/mutants.tgz ] || { echo "no .gpu/mutants.tgz: build it with scripts/mutants-gpu.sh first"; exit 1; }
  M=/tmp/mutants; rm -rf $M; mkdir -p $M/none && tar xzf .gpu/mutants.tgz -C $M
  filters=$(cat $M/*/tests.txt | tr ' ' '\n' | sort -u | tr '\n' ' ')
  RUST_GPU_SIM_PTX_DIR=$M/none timeout 600 $B/simulations_it --ignored --test-threads=1 $filters > "$OUT/mutants-baseline.log" 2>&1
  echo "baseline (this build's PTX through RUST_GPU_SIM_PTX_DIR; $filters): exit $? :: $(grep 'test result' "$OUT/mutants-baseline.log")"
  killed=0; survived=0
  for d in $(ls -d $M/[0-9]* | sort -t/ -k4 -n); do
    n=$(basename $d)
    RUST_GPU_SIM_PTX_DIR=$d timeout ${MUTANT_TIMEOUT:-180} $B/simulations_it --ignored --test-threads=1 $(cat $d/tests.txt) \
      > "$OUT/mutant-$n.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      survived=$((survived + 1)); echo "SURVIVED $(cat $d/mutant.txt)"
    else
      killed=$((killed + 1))
      echo "killed (exit $rc) $(cat $d/mutant.txt) :: $(grep -m1 -E '^---- ' "$OUT/mutant-$n.log" | tr -d '-') $(grep -m1 -A1 'panicked at' "$OUT/mutant-$n.log" | tail -1 | cut -c1-160)"
    fi
  done
  echo "mutants: $killed killed, $survived survived"
fi

if has python; then
  echo "== the Python package (wheel built here) on this machine's PyTorch, CuPy and Triton"
  rm -rf /tmp/site
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $B/*.whl \
    > "$OUT/python-install.log" 2>&1 || { echo "FAIL: installing the wheels"; tail -5 "$OUT/python-install.log"; }
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  RUST_GPU_SIM_BIN=$B/rust-gpu-sim BARKLEY_BIN=$B/barkley python3 -m pytest -p no:cacheprovider -q -rs python/tests > "$OUT/python-tests.log" 2>&1
  tail -3 "$OUT/python-tests.log"
  grep -E "^(FAILED|ERROR)" "$OUT/python-tests.log" | head -20
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool python3 scripts/python-sanitize.py > "$OUT/python-$tool.log" 2>&1
    echo "python kernels, $tool: $(grep -E 'python-sanitize:' "$OUT/python-$tool.log") $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/python-$tool.log")"
  done
  python3 scripts/python-overhead.py 2> "$OUT/python-overhead.err" | tee "$OUT/python-overhead.txt"
  echo "-- the command line's bench of the same variants, same lease (the reference of the 3% rule)"
  $B/rust-gpu-sim bench grayscott --sizes 4096,512 --variants fused,v1 --no-end-to-end 2> "$OUT/python-cli-bench.err" \
    | tee "$OUT/python-cli-bench.txt"
  $B/rust-gpu-sim bench physarum --sizes 2048 --agents 1000000,10000000 --variants optimized 2>> "$OUT/python-cli-bench.err" \
    | tee -a "$OUT/python-cli-bench.txt"
  python3 scripts/python-compare.py --out "$OUT" > "$OUT/python-compare.log" 2>&1
  echo "python-compare exit $?"; tail -30 "$OUT/python-compare.log"
fi
