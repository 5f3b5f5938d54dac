#!/usr/bin/env bash
# The device call prepared for grouped-deposits.patch (thirteenth session, not yet run): stage
# a build with the patch applied (scripts/stage-gpu.sh), copy this script to .gpu-hopper/ and
# run `bash .gpu-hopper/call.sh` with carry [".gpu", ".gpu-hopper"]. It runs the Physarum GPU
# tests, memcheck, racecheck and synccheck on the tests of the new kernels, three bench rounds of every
# way to deposit with and without grouping at 1M, 4M and 10M agents, and ncu on the passes.
set -uo pipefail
cd "$(dirname "$0")/.."
L=$OUT/logs; mkdir -p "$L"
B=/tmp/rust-gpu-sim-bin; mkdir -p $B
for f in .gpu/*.gz; do gunzip -c "$f" > "$B/$(basename "${f%.gz}")"; chmod +x "$B/$(basename "${f%.gz}")"; done
export XDG_CACHE_HOME=/tmp/cache
say() { echo "$*" | tee -a "$L/summary.txt"; }
T0=$SECONDS
say "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
timeout 150 $B/simulations_it --ignored --test-threads=1 gpu_physarum:: > "$L/physarum-tests.log" 2>&1
say "gpu_physarum: exit $? :: $(grep -E 'test result' "$L/physarum-tests.log")"
grep -E "FAILED|panicked|differ" "$L/physarum-tests.log" | head -5 | tee -a "$L/summary.txt"
for t in agent_kernels_match_cpu all_agents_in_one_cell_deposit_the_exact_total the_gpu_engine_refuses_states_and_grids_of_another_size; do
  for tool in memcheck racecheck synccheck; do
    timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/simulations_it --ignored --exact --test-threads=1 \
      gpu_physarum::$t > "$L/san-$t-$tool.log" 2>&1
    say "$t $tool: exit $? :: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' "$L/san-$t-$tool.log" | tr '\n' ' ')"
  done
done
say "[t=$((SECONDS-T0))s]"
for r in 1 2 3; do
  RUST_GPU_SIM_PHYSARUM_CANDIDATES=b16e16i,b16e16ig,b8e16ig,b16e16d,b16e16dg,b8e16,b8e16g timeout 100 $B/rust-gpu-sim bench physarum \
    --sizes 2048 --agents 1000000,4000000,10000000 --variants optimized --repeats 15 > "$L/bench-$r.txt" 2> "$L/bench-$r.err"
  say "round $r exit $?"; grep -E "^optimized|copy" "$L/bench-$r.txt" | tr -s ' ' | tee -a "$L/summary.txt"
done
for k in b16e16i b16e16ig b16e16dg; do
  RUST_GPU_SIM_PHYSARUM_CANDIDATES=$k timeout 60 ncu -k regex:"physarum_(deposit|agents)" -s 10 -c 3 --section SpeedOfLight \
    --section Occupancy --section SchedulerStats $B/rust-gpu-sim bench physarum --sizes 2048 --agents 1000000 \
    --variants optimized --repeats 3 > "$L/ncu-$k.txt" 2>&1
  say "ncu $k exit $?"; grep -E "physarum_(deposit|agents)|Duration|L2 Cache Throughput|Achieved Occupancy|Issued Warp" "$L/ncu-$k.txt" | tr -s ' ' | tee -a "$L/summary.txt"
done
say "[t=$((SECONDS-T0))s] done"
