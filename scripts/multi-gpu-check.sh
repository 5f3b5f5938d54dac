#!/usr/bin/env bash
# Several GPUs of one host (run through scripts/gpu-check.sh multi / multi-bench, which unpack
# the binaries into $B). Parts:
#   tests: the same-process split over every GPU (GPU test), then under mpirun -np 2 and -np 4
#          every output option against one GPU's files, a checkpoint of 4 ranks resumed by 2 and
#          by 1, --resume under mpirun, Barkley (examples/barkley, simulations::split) under
#          mpirun -np 2 against one GPU and its 2-rank checkpoint resumed by 1, a rank killed
#          mid-run;
#   bench-local: the scaling bench in one process (bench grayscott / bench heat --gpus 1,2,4 --weak);
#   bench-mpi: the same under mpirun -np 2 and -np 4;
#   bench-gs: Gray-Scott 16384^2 streaming and fused only, one process and mpirun;
#   bench-heat: heat 1200^3 single only, with and without --overlap, one process and mpirun
#          (--overlap by copy engines and peer reads; between ranks by CUDA IPC, and by NCCL
#          with RUST_GPU_SIM_RANK_HALOS=nccl);
#   binding: the scaling bench under mpirun with Open MPI's default binding (each of 2 processes
#          bound to one core): kept as bound (RUST_GPU_SIM_KEEP_BINDING=1), widened at start (the
#          program's default), and --bind-to none; Gray-Scott 16384² streaming and heat 1200³;
#   short-run: a short run's whole wall time, process start to exit, Gray-Scott 16384² streaming
#          for 200 and 2,000 steps: mpirun -np N (the launcher's defaults) against --gpus N in one
#          process, with each rank's timeline (RUST_GPU_SIM_TIMELINE=1), and mpirun -np N /bin/true
#          (the launcher's own start and exit);
#   two-hosts: two hosts simulated on one: NCCL kept off NVLink and shared memory
#          (NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1) so it takes its socket transport over the
#          loopback interface (NCCL_SOCKET_IFNAME=lo; no InfiniBand here), heat's CUDA IPC off
#          (RUST_GPU_SIM_RANK_HALOS=nccl); the scaling bench with and without overlap, with the
#          program's sockets over the network (4 x 4), then with NCCL's own default (1 x 1:
#          NCCL_SOCKET_NTHREADS=1 NCCL_NSOCKS_PERTHREAD=1);
#   host-pairs: (4 GPUs) two hosts of two GPUs simulated on one: 4 ranks, NCCL_HOSTID per pair of
#          ranks, so NCCL joins each pair over NVLink and the pairs over its socket transport
#          (NCCL_SOCKET_IFNAME=lo), heat's CUDA IPC off; Gray-Scott with --overlap, heat by
#          default, with NCCL's default, 4×4 and 8×8 sockets;
#   overlap: the measurements behind the overlap defaults: heat 1200³ single's two schemes
#          (RUST_GPU_SIM_HEAT_OVERLAP=halves|edges) in one process, between processes by CUDA
#          IPC and by NCCL, and Gray-Scott 16384² with and without --overlap under mpirun;
#   rounds: heat 1200³ single in one process over 1, 2 and every GPU, the halves (the default)
#          against the exchange by rounds (RUST_GPU_SIM_HEAT_OVERLAP=rounds), in turns, twice;
#   sweep: the measurements behind two constants, strong scaling on the most GPUs (up to 4):
#          Gray-Scott streaming's fewest halo rows (MULTI_STEP_HALO; RUST_GPU_SIM_HALO_ROWS,
#          values in SWEEP_HALO_ROWS) in one process and under mpirun, and the SMs heat's
#          halves leave NCCL (NCCL_FREE_SMS; RUST_GPU_SIM_NCCL_FREE_SMS with NCCL_MAX_CTAS to
#          match, optionally NCCL_P2P_NVL_CHUNKSIZE: free:ctas:chunk in SWEEP_NCCL), with NCCL
#          carrying the halos (RUST_GPU_SIM_RANK_HALOS=nccl; by default they go by CUDA IPC);
#   hosts-heat: (4 GPUs) heat 1200³ single by default across a simulated host boundary (NCCL's
#          sockets over loopback, 4x4 sockets, CUDA IPC off): 2 ranks, one per host, against 4,
#          two per host (NCCL_HOSTID per pair), in turns, twice each.
# NVLink multicast stays off for every process (NCCL_NVLS_ENABLE=0, passed through mpirun -x).
set -uo pipefail
: "${B:?the unpacked binaries}" "${OUT:?the log directory}"
parts=" $* "
REPO=$(pwd)
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
echo "== $gpus GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
port=29600
# mpirun with one GPU per process, NCCL's id through rank 0's address, no core binding.
mpi() {
  local np=$1; shift
  port=$((port + 1))
  mpirun -np "$np" --bind-to none -x NCCL_NVLS_ENABLE=0 -x NCCL_COMM_ID=127.0.0.1:$port "$@"
}
same_npz() { python3 -c "
import numpy as n, sys
a, b = n.load(sys.argv[1]), n.load(sys.argv[2])
ok = a.files == b.files and all(n.array_equal(a[k].view(n.uint32), b[k].view(n.uint32)) for k in a.files)
print('identical' if ok else 'DIFFERENT')" "$1" "$2" 2>&1 | tail -1; }
same_pngs() { python3 -c "
import sys, os, numpy as n
from PIL import Image
a, b = sys.argv[1], sys.argv[2]
fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
ok = fa == fb and len(fa) > 0 and all(n.array_equal(n.asarray(Image.open(os.path.join(a, f))), n.asarray(Image.open(os.path.join(b, f)))) for f in fa)
print(('identical' if ok else 'DIFFERENT') + f' ({len(fa)} frames)')" "$1" "$2" 2>&1 | tail -1; }
same_png() { python3 -c "
import sys, numpy as n
from PIL import Image
print('identical' if n.array_equal(n.asarray(Image.open(sys.argv[1])), n.asarray(Image.open(sys.argv[2]))) else 'DIFFERENT')" "$1" "$2" 2>&1 | tail -1; }
same_mp4() { python3 -c "
import sys, cv2, numpy as n
def frames(p):
    c, out = cv2.VideoCapture(p), []
    while True:
        ok, f = c.read()
        if not ok: return out
        out.append(f)
a, b = frames(sys.argv[1]), frames(sys.argv[2])
print(('identical' if len(a) == len(b) > 0 and all(n.array_equal(x, y) for x, y in zip(a, b)) else 'DIFFERENT') + f' ({len(a)} frames decoded)')" "$1" "$2" 2>&1 | tail -1; }

if [[ $parts == *" tests "* ]]; then
  echo "== the same-process split over the GPUs (peer copies, events between neighbours): GPU test"
  $B/simulations_it --ignored --test-threads=1 --nocapture gpu_split::multi_gpu > "$OUT/gpu-multi-tests.log" 2>&1
  grep -E "test result|panicked" "$OUT/gpu-multi-tests.log"
  grep -c "bit-identical to one GPU" "$OUT/gpu-multi-tests.log" | sed 's/^/configurations on several GPUs checked: /'

  for how in engine read; do
    RUST_GPU_SIM_PEER_COPY=$how $B/simulations_it --ignored --test-threads=1 --nocapture gpu_split::multi_gpu > "$OUT/gpu-multi-tests-$how.log" 2>&1
    echo "the same with RUST_GPU_SIM_PEER_COPY=$how: $(grep -E 'test result' "$OUT/gpu-multi-tests-$how.log")"
  done

  W=/tmp/multi && rm -rf $W && mkdir -p $W && cd $W
  echo "== --gpus N in one process: --save against one GPU (rows 16-byte aligned or not), peer reads and copy engines"
  for np in 2 4; do
    [ "$gpus" -ge $np ] || continue
    for width in 333 512; do
      a="grayscott --width $width --size 301 --steps 60 --variant streaming --no-autotune"
      $B/rust-gpu-sim $a --save l1.npz > /dev/null 2>&1
      $B/rust-gpu-sim $a --gpus $np --save l$np.npz > "$OUT/local-gs$np-$width.log" 2>&1; e1=$?
      RUST_GPU_SIM_PEER_COPY=engine $B/rust-gpu-sim $a --gpus $np --save e$np.npz > /dev/null 2>&1; e2=$?
      echo "grayscott ${width}x301 --gpus $np: exit $e1/$e2, peer reads $(same_npz l1.npz l$np.npz), engines $(same_npz l1.npz e$np.npz); $(grep -o 'on cuda[^(]*' "$OUT/local-gs$np-$width.log" | head -1)"
    done
    for overlap in "" --overlap; do
      a="heat --nx 40 --ny 30 --nz 61 --steps 9 --variant single"
      $B/rust-gpu-sim $a --save h1.npz > /dev/null 2>&1
      $B/rust-gpu-sim $a --gpus $np ${overlap:---no-overlap} --save h$np.npz > "$OUT/local-heat$np.log" 2>&1
      echo "heat 40x30x61 --gpus $np ${overlap:---no-overlap}: exit $?, $(same_npz h1.npz h$np.npz); $(grep -o 'on cuda[^(]*' "$OUT/local-heat$np.log" | head -1)"
      if [ -n "$overlap" ]; then
        RUST_GPU_SIM_HEAT_OVERLAP=edges $B/rust-gpu-sim $a --gpus $np --overlap --save he$np.npz > "$OUT/local-heat$np-edges.log" 2>&1
        echo "heat 40x30x61 --gpus $np --overlap, edges first: exit $?, $(same_npz h1.npz he$np.npz); $(grep -o 'edges first[^(]*' "$OUT/local-heat$np-edges.log" | head -1)"
        RUST_GPU_SIM_HEAT_OVERLAP=rounds timeout 120 $B/rust-gpu-sim $a --gpus $np --overlap --save hr$np.npz > "$OUT/local-heat$np-rounds.log" 2>&1
        echo "heat 40x30x61 --gpus $np --overlap, by rounds: exit $?, $(same_npz h1.npz hr$np.npz); $(grep -o 'by rounds[^(]*' "$OUT/local-heat$np-rounds.log" | head -1)"
        b="heat --nx 700 --ny 600 --nz 97 --steps 30 --variant single"
        $B/rust-gpu-sim $b --save hb1.npz > /dev/null 2>&1
        RUST_GPU_SIM_HEAT_OVERLAP=rounds timeout 120 $B/rust-gpu-sim $b --gpus $np --overlap --save hbr$np.npz > "$OUT/local-heat$np-rounds-b.log" 2>&1
        echo "heat 700x600x97 (several rounds) --gpus $np --overlap, by rounds: exit $?, $(same_npz hb1.npz hbr$np.npz)"
      fi
    done
  done
  echo "== compute-sanitizer on runs over 2 GPUs (peer reads)"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim grayscott --width 512 --size 301 --steps 40 \
      --variant streaming --no-autotune --gpus 2 --save s.npz > "$OUT/san-multi-gs-$tool.log" 2>&1
    echo "grayscott --gpus 2 $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-multi-gs-$tool.log" | tr '\n' ' '))"
    compute-sanitizer --tool $tool --error-exitcode 9 $B/rust-gpu-sim heat --nx 40 --ny 30 --nz 61 --steps 3 \
      --variant single --gpus 2 --overlap --save s.npz > "$OUT/san-multi-heat-$tool.log" 2>&1
    echo "heat --gpus 2 --overlap $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/san-multi-heat-$tool.log" | tr '\n' ' '))"
  done
  mkdir -p $W/mpi && cd $W/mpi
  gs="grayscott --width 333 --size 301 --steps 60 --variant streaming --no-autotune --frame-every 20"
  heat="heat --nx 37 --ny 29 --nz 61 --steps 9 --variant single --frame-every 3"
  outs() { echo "--gif $1.gif --mp4 $1.mp4 --png-dir $1-frames --png $1.png --save $1.npz --checkpoint $1.ck"; }
  $B/rust-gpu-sim $gs $(outs gs1) > "$OUT/multi-gs1.log" 2>&1 || echo "one GPU grayscott: exit $?"
  $B/rust-gpu-sim $heat --gif heat1.gif --png heat1.png --save heat1.npz --checkpoint heat1.ck > "$OUT/multi-heat1.log" 2>&1 \
    || echo "one GPU heat: exit $?"
  for np in 2 4 8; do
    [ "$gpus" -ge $np ] || { echo "mpirun -np $np: skipped, $gpus GPUs"; continue; }
    echo "== mpirun -np $np: every output, rank 0's files against one GPU's"
    mpi $np $B/rust-gpu-sim $gs $(outs gs$np) > "$OUT/multi-gs$np.log" 2>&1
    echo "grayscott streaming: exit $?; --save $(same_npz gs1.npz gs$np.npz); --gif $(python3 $REPO/scripts/same-gif.py gs1.gif gs$np.gif);" \
      "--mp4 $(same_mp4 gs1.mp4 gs$np.mp4); --png-dir $(same_pngs gs1-frames gs$np-frames); --png $(same_png gs1.png gs$np.png)"
    mpi $np $B/rust-gpu-sim $heat --gif heat$np.gif --png heat$np.png --save heat$np.npz --checkpoint heat$np.ck \
      > "$OUT/multi-heat$np.log" 2>&1
    echo "heat single (overlapped by default): exit $?; --save $(same_npz heat1.npz heat$np.npz); --gif $(python3 $REPO/scripts/same-gif.py heat1.gif heat$np.gif); --png $(same_png heat1.png heat$np.png)"
    mpi $np $B/rust-gpu-sim $heat --no-overlap --save heat${np}o.npz > "$OUT/multi-heat${np}o.log" 2>&1
    echo "heat single --no-overlap: exit $?; --save $(same_npz heat1.npz heat${np}o.npz); $(grep -o 'halos by [^,]*\|over NCCL' "$OUT/multi-heat${np}o.log" | head -1)"
    mpi $np -x RUST_GPU_SIM_RANK_HALOS=nccl $B/rust-gpu-sim $heat --save heat${np}n.npz > "$OUT/multi-heat${np}n.log" 2>&1
    echo "heat single (overlapped by default), RUST_GPU_SIM_RANK_HALOS=nccl: exit $?; --save $(same_npz heat1.npz heat${np}n.npz); $(grep -o 'halos by [^,]*\|over NCCL' "$OUT/multi-heat${np}n.log" | head -1)"
    mpi $np -x RUST_GPU_SIM_HEAT_OVERLAP=edges $B/rust-gpu-sim $heat --save heat${np}e.npz > "$OUT/multi-heat${np}e.log" 2>&1
    echo "heat single, edges first by CUDA IPC: exit $?; --save $(same_npz heat1.npz heat${np}e.npz); $(grep -o 'edges first' "$OUT/multi-heat${np}e.log" | head -1)"
    mpi $np -x RUST_GPU_SIM_RANK_HALOS=nccl -x RUST_GPU_SIM_HEAT_OVERLAP=halves $B/rust-gpu-sim $heat --save heat${np}h.npz > "$OUT/multi-heat${np}h.log" 2>&1
    echo "heat single, halves over NCCL: exit $?; --save $(same_npz heat1.npz heat${np}h.npz); $(grep -o 'other half' "$OUT/multi-heat${np}h.log" | head -1)"
    mpi $np $B/rust-gpu-sim ${gs/streaming/fused} --save fused$np.npz > "$OUT/multi-fused$np.log" 2>&1
    $B/rust-gpu-sim ${gs/streaming/fused} --save fused1.npz > /dev/null 2>&1
    echo "grayscott fused: exit $?; --save $(same_npz fused1.npz fused$np.npz)"
    echo "files other than rank 0's outputs: $(ls -A | grep -cvE '^(gs|heat|fused)[0-9oneh]*(\.(gif|mp4|npz|ck|png)|-frames)$')"
  done
  if [ "$gpus" -ge 4 ]; then
    echo "== a checkpoint of 4 ranks resumed by 2 ranks, by 1 process, and --resume under mpirun -np 4"
    mpi 4 $B/rust-gpu-sim ${gs/--steps 60/--steps 30} --checkpoint c4.ck > "$OUT/multi-c4.log" 2>&1; echo "4 ranks to step 30: exit $?"
    $B/rust-gpu-sim $gs --resume c4.ck --save r1.npz > "$OUT/multi-r1.log" 2>&1
    echo "resumed by 1 process: exit $?, --save $(same_npz gs1.npz r1.npz)"
    mpi 2 $B/rust-gpu-sim $gs --resume c4.ck --save r2.npz > "$OUT/multi-r2.log" 2>&1
    echo "resumed by mpirun -np 2: exit $?, --save $(same_npz gs1.npz r2.npz)"
    mpi 4 $B/rust-gpu-sim $gs --resume c4.ck --save r4.npz > "$OUT/multi-r4.log" 2>&1
    echo "resumed by mpirun -np 4: exit $?, --save $(same_npz gs1.npz r4.npz)"
    mpi 4 $B/rust-gpu-sim ${heat/--steps 9/--steps 4} --checkpoint h4.ck > /dev/null 2>&1
    mpi 2 $B/rust-gpu-sim $heat --resume h4.ck --save hr2.npz > "$OUT/multi-hr2.log" 2>&1
    echo "heat: 4 ranks to step 4, resumed by mpirun -np 2: exit $?, --save $(same_npz heat1.npz hr2.npz)"
  fi
  echo "== barkley (a model's own split, simulations::split) under mpirun -np 2: rank 0's files against one GPU's"
  mkdir -p $W/barkley && cd $W/barkley
  bk="--width 301 --height 203 --steps 1000 --frame-every 50"
  $B/barkley $bk -o bk1.png --gif bk1.gif --save bk1.npz > "$OUT/multi-bk1.log" 2>&1 || echo "one GPU barkley: exit $?"
  mpi 2 $B/barkley $bk -o bk2.png --gif bk2.gif --save bk2.npz > "$OUT/multi-bk2.log" 2>&1
  echo "barkley: exit $?; --save $(same_npz bk1.npz bk2.npz); --gif $(python3 $REPO/scripts/same-gif.py bk1.gif bk2.gif);" \
    "-o $(same_png bk1.png bk2.png); $(grep -o 'in 2 parts ([^)]*)' "$OUT/multi-bk2.log" | head -1)"
  grep -q 'in 2 parts (halos over NCCL)' "$OUT/multi-bk2.log" || echo "FAIL: barkley under mpirun -np 2 does not say 'in 2 parts (halos over NCCL)'"
  mpi 2 $B/barkley ${bk/--steps 1000/--steps 411} -o bkc.png --checkpoint bk2.ck > "$OUT/multi-bkc.log" 2>&1
  echo "barkley, 2 ranks to step 411 (mid-exchange): exit $?"
  $B/barkley $bk -o bkr1.png --resume bk2.ck --save bkr1.npz > "$OUT/multi-bkr1.log" 2>&1
  echo "barkley, the 2-rank checkpoint resumed by 1 process: exit $?, --save $(same_npz bk1.npz bkr1.npz)"
  mpi 2 $B/barkley $bk -o bkr2.png --resume bk2.ck --save bkr2.npz > "$OUT/multi-bkr2.log" 2>&1
  echo "barkley, resumed by mpirun -np 2: exit $?, --save $(same_npz bk1.npz bkr2.npz)"
  echo "barkley files other than rank 0's outputs: $(ls -A | grep -cvE '^bk(1|2|c|r1|r2)\.(gif|npz|png|ck)$')"
  grep -hE '^(barkley|error)' "$OUT"/multi-bk*.log | sort | uniq -c | head -5
  cd $W/mpi
  echo "== compute-sanitizer memcheck on each rank of mpirun -np 2: heat --overlap (halos by CUDA IPC)"
  mpi 2 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 $B/rust-gpu-sim heat --nx 40 --ny 30 --nz 61 --steps 3 \
    --variant single --overlap --save si.npz > "$OUT/san-mpi-heat-memcheck.log" 2>&1
  echo "heat mpirun -np 2 --overlap memcheck: exit $? ($(grep -E 'ERROR SUMMARY' "$OUT/san-mpi-heat-memcheck.log" | tr '\n' ' '))"
  echo "== a rank killed mid-run (SIGKILL): the others stop within --peer-timeout 10, nothing written"
  np=$(( gpus >= 4 ? 4 : 2 ))
  rm -f killed.gif killed.npz
  port=$((port + 1))
  mpirun -np $np --bind-to none -x NCCL_NVLS_ENABLE=0 -x NCCL_COMM_ID=127.0.0.1:$port $B/rust-gpu-sim grayscott \
    --size 4096 --steps 2000000 --frame-every 1000 --gif killed.gif --save killed.npz --peer-timeout 10 \
    > "$OUT/multi-killed.log" 2>&1 &
  launcher=$!
  sleep 12
  victim=$(pgrep -f "^$B/rust-gpu-sim grayscott --size 4096" | tail -1)
  kill -9 "$victim"; killed=$(date +%s.%N)
  wait $launcher; status=$?
  echo "killed pid $victim: mpirun exit $status after $(python3 -c "print(f'{$(date +%s.%N)-$killed:.1f}')") s;" \
    "outputs: $(ls killed.* 2>/dev/null || echo none); stray: $(ls -a | grep -c '^\.killed' ) hidden"
  grep -E '^error' "$OUT/multi-killed.log" | sort | uniq -c | head -5
  echo "-- the same for heat --overlap (halos by CUDA IPC: the survivors' GPUs wait on flags)"
  rm -f hkilled.npz
  port=$((port + 1))
  mpirun -np $np --bind-to none -x NCCL_NVLS_ENABLE=0 -x NCCL_COMM_ID=127.0.0.1:$port $B/rust-gpu-sim heat \
    --size 400 --steps 2000000 --variant single --overlap --save hkilled.npz --peer-timeout 10 \
    > "$OUT/multi-hkilled.log" 2>&1 &
  launcher=$!
  sleep 12
  victim=$(pgrep -f "^$B/rust-gpu-sim heat --size 400" | tail -1)
  kill -9 "$victim"; killed=$(date +%s.%N)
  wait $launcher; status=$?
  echo "killed pid $victim: mpirun exit $status after $(python3 -c "print(f'{$(date +%s.%N)-$killed:.1f}')") s;" \
    "outputs: $(ls hkilled.* 2>/dev/null || echo none); $(grep -o 'halos by [^,]*\|over NCCL' "$OUT/multi-hkilled.log" | head -1)"
  grep -E '^error' "$OUT/multi-hkilled.log" | sort | uniq -c | head -5
  cd "$REPO"
fi

if [[ $parts == *" bench-gs "* ]]; then
  counts=1,2; [ "$gpus" -ge 4 ] && counts=1,2,4; [ "$gpus" -ge 8 ] && counts=1,2,4,8
  echo "== Gray-Scott's scaling bench alone: one process (--gpus $counts), then mpirun"
  $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --gpus $counts --weak --repeats 5 \
    --json "$OUT/scaling-grayscott-local.json" 2> "$OUT/scaling-grayscott-local.err" | tee "$OUT/scaling-grayscott-local.txt"
  for np in 2 4 8; do
    [ "$gpus" -ge $np ] || continue
    mpi $np $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --weak --repeats 5 \
      --json "$OUT/scaling-grayscott-mpi$np.json" 2> "$OUT/scaling-grayscott-mpi$np.err" | tee "$OUT/scaling-grayscott-mpi$np.txt"
  done
fi
if [[ $parts == *" bench-local "* ]]; then
  counts=1,2; [ "$gpus" -ge 4 ] && counts=1,2,4; [ "$gpus" -ge 8 ] && counts=1,2,4,8
  echo "== scaling bench, one process (--gpus $counts, strong and weak)"
  $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --gpus $counts --weak --repeats 5 \
    --json "$OUT/scaling-grayscott-local.json" 2> "$OUT/scaling-grayscott-local.err" | tee "$OUT/scaling-grayscott-local.txt"
  $B/rust-gpu-sim bench heat --sizes 1200 --variants single --gpus $counts --weak --no-overlap --repeats 5 \
    --json "$OUT/scaling-heat-local.json" 2> "$OUT/scaling-heat-local.err" | tee "$OUT/scaling-heat-local.txt"
  echo "== the copy engines instead of peer reads (RUST_GPU_SIM_PEER_COPY=engine), strong only"
  RUST_GPU_SIM_PEER_COPY=engine $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming --gpus $counts --repeats 3 \
    2> "$OUT/scaling-grayscott-local-engine.err" | tee "$OUT/scaling-grayscott-local-engine.txt"
fi
# heat --overlap: by copy engines (its default) and by peer reads, in one process; over NCCL
# with NCCL's own choice of blocks and with NCCL_MAX_CTAS=2 (the SMs the halves leave free).
if [[ $parts == *" bench-local "* || $parts == *" bench-heat "* ]]; then
  counts=1,2; [ "$gpus" -ge 4 ] && counts=1,2,4; [ "$gpus" -ge 8 ] && counts=1,2,4,8
  echo "== heat --overlap, one process (--gpus $counts): copy engines (default), then peer reads"
  $B/rust-gpu-sim bench heat --sizes 1200 --variants single --gpus $counts --overlap --repeats 5 \
    --json "$OUT/scaling-heat-local-overlap.json" 2> "$OUT/scaling-heat-local-overlap.err" | tee "$OUT/scaling-heat-local-overlap.txt"
  RUST_GPU_SIM_PEER_COPY=read $B/rust-gpu-sim bench heat --sizes 1200 --variants single --gpus $counts --overlap --repeats 3 \
    2> "$OUT/scaling-heat-local-overlap-read.err" | tee "$OUT/scaling-heat-local-overlap-read.txt"
fi
if [[ $parts == *" bench-heat "* ]]; then
  echo "== heat without overlap, one process and mpirun (the same run's baseline)"
  $B/rust-gpu-sim bench heat --sizes 1200 --variants single --gpus $counts --no-overlap --repeats 5 \
    2> "$OUT/scaling-heat-local.err" | tee "$OUT/scaling-heat-local.txt"
  for np in 2 4 8; do
    [ "$gpus" -ge $np ] || continue
    mpi $np $B/rust-gpu-sim bench heat --sizes 1200 --variants single --no-overlap --repeats 5 \
      2> "$OUT/scaling-heat-mpi$np.err" | tee "$OUT/scaling-heat-mpi$np.txt"
    mpi $np $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap --repeats 5 \
      2> "$OUT/scaling-heat-mpi$np-overlap.err" | tee "$OUT/scaling-heat-mpi$np-overlap.txt"
    mpi $np -x RUST_GPU_SIM_RANK_HALOS=nccl $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap --repeats 5 \
      2> "$OUT/scaling-heat-mpi$np-overlap-nccl.err" | tee "$OUT/scaling-heat-mpi$np-overlap-nccl.txt"
  done
fi
if [[ $parts == *" bench-mpi "* ]]; then
  for np in 2 4 8; do
    [ "$gpus" -ge $np ] || continue
    echo "== scaling bench, mpirun -np $np (one process per GPU, NCCL)"
    mpi $np $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --weak --repeats 5 \
      --json "$OUT/scaling-grayscott-mpi$np.json" 2> "$OUT/scaling-grayscott-mpi$np.err" | tee "$OUT/scaling-grayscott-mpi$np.txt"
    mpi $np $B/rust-gpu-sim bench heat --sizes 1200 --variants single --weak --no-overlap --repeats 5 \
      --json "$OUT/scaling-heat-mpi$np.json" 2> "$OUT/scaling-heat-mpi$np.err" | tee "$OUT/scaling-heat-mpi$np.txt"
    mpi $np $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap --repeats 5 \
      2> "$OUT/scaling-heat-mpi$np-overlap.err" | tee "$OUT/scaling-heat-mpi$np-overlap.txt"
  done
fi

# mpirun as a user starts it: Open MPI's default binding (no --bind-to), NCCL's id by rank 0.
mpi_default() {
  local np=$1; shift
  port=$((port + 1))
  mpirun -np "$np" -x NCCL_NVLS_ENABLE=0 -x NCCL_COMM_ID=127.0.0.1:$port "$@"
}
eff() { grep -E "^$1 .* $2 " "$3" | awk '{print $(NF-2)}' | head -1; }

if [[ $parts == *" binding "* ]]; then
  echo "== the launcher's default binding: kept (RUST_GPU_SIM_KEEP_BINDING=1), widened (the default), --bind-to none"
  for np in 2 4; do
    [ "$gpus" -ge $np ] || continue
    for how in kept widened none; do
      case $how in
        kept) opts=(-x RUST_GPU_SIM_KEEP_BINDING=1) ;;
        widened) opts=() ;;
        none) opts=(--bind-to none) ;;
      esac
      mpi_default $np "${opts[@]}" $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming --repeats 3 \
        > "$OUT/binding-gs$np-$how.txt" 2> "$OUT/binding-gs$np-$how.err"
      mpi_default $np "${opts[@]}" $B/rust-gpu-sim bench heat --sizes 1200 --variants single --repeats 3 \
        > "$OUT/binding-heat$np-$how.txt" 2> "$OUT/binding-heat$np-$how.err"
      echo "mpirun -np $np, binding $how: grayscott 16384² streaming $(eff grayscott nccl "$OUT/binding-gs$np-$how.txt")," \
        "heat 1200³ single $(eff heat nccl "$OUT/binding-heat$np-$how.txt"); $(grep -h '^binding\|^note: .*bound' "$OUT/binding-gs$np-$how.err" | head -1 | cut -c1-110)"
    done
  done
fi

if [[ $parts == *" short-run "* ]]; then
  echo "== a short run's whole wall time (process start to exit): Gray-Scott 16384² streaming, --png at the end"
  W=/tmp/short && rm -rf $W && mkdir -p $W && cd $W
  for np in 2 4; do
    [ "$gpus" -ge $np ] || continue
    # The launcher's own cost, start to exit, with nothing to run (three times; the median).
    for i in 1 2 3; do
      s0=$(date +%s.%N); mpi_default $np /bin/true; python3 -c "print($(date +%s.%N) - $s0)"
    done | sort -n | sed -n 2p | xargs printf "mpirun -np $np /bin/true: %.2f s (median of 3)\n"
    for steps in 200 2000; do
      a="grayscott --size 16384 --variant streaming --steps $steps"
      start=$(date +%s.%N)
      RUST_GPU_SIM_TIMELINE=1 $B/rust-gpu-sim $a --gpus $np --png l$np-$steps.png > "$OUT/short-local$np-$steps.log" 2>&1; e1=$?
      mid=$(date +%s.%N)
      mpi_default $np --tag-output -x RUST_GPU_SIM_TIMELINE=1 $B/rust-gpu-sim $a --png m$np-$steps.png \
        > "$OUT/short-mpi$np-$steps.log" 2>&1; e2=$?
      end=$(date +%s.%N)
      python3 -c "l, m = $mid - $start, $end - $mid; print(f'$steps steps on $np GPUs: --gpus $np {l:.2f} s (exit $e1), mpirun -np $np {m:.2f} s (exit $e2), difference {m - l:+.2f} s')"
    done
  done
  cd "$REPO"
fi

if [[ $parts == *" two-hosts "* ]]; then
  echo "== two hosts simulated on one: NCCL's socket transport over loopback (P2P and SHM off, CUDA IPC off)"
  net=(-x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_SOCKET_IFNAME=lo -x RUST_GPU_SIM_RANK_HALOS=nccl)
  # Over the network the program widens NCCL's sockets to 4 threads x 4 sockets unless they are
  # set (split::nccl::NETWORK_SOCKETS): the -narrow runs set NCCL's own default, 1 x 1.
  narrow=(-x NCCL_SOCKET_NTHREADS=1 -x NCCL_NSOCKS_PERTHREAD=1)
  for np in 2 4; do
    [ "$gpus" -ge $np ] || continue
    mpi_default $np "${net[@]}" -x NCCL_DEBUG=INFO $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused \
      --repeats 3 > "$OUT/hosts-gs$np.txt" 2> "$OUT/hosts-gs$np.err"
    mpi_default $np "${net[@]}" $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --overlap \
      --repeats 3 > "$OUT/hosts-gs$np-overlap.txt" 2> "$OUT/hosts-gs$np-overlap.err"
    mpi_default $np "${net[@]}" $B/rust-gpu-sim bench heat --sizes 1200 --variants single --no-overlap \
      --repeats 3 > "$OUT/hosts-heat$np.txt" 2> "$OUT/hosts-heat$np.err"
    mpi_default $np "${net[@]}" $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap \
      --repeats 3 > "$OUT/hosts-heat$np-overlap.txt" 2> "$OUT/hosts-heat$np-overlap.err"
    mpi_default $np "${net[@]}" -x RUST_GPU_SIM_HEAT_OVERLAP=halves $B/rust-gpu-sim bench heat --sizes 1200 --variants single \
      --overlap --repeats 3 > "$OUT/hosts-heat$np-overlap-halves.txt" 2> "$OUT/hosts-heat$np-overlap-halves.err"
    mpi_default $np "${net[@]}" "${narrow[@]}" $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap \
      --repeats 3 > "$OUT/hosts-heat$np-overlap-narrow.txt" 2> "$OUT/hosts-heat$np-overlap-narrow.err"
    mpi_default $np "${net[@]}" "${narrow[@]}" -x RUST_GPU_SIM_HEAT_OVERLAP=halves $B/rust-gpu-sim bench heat --sizes 1200 \
      --variants single --overlap --repeats 3 > "$OUT/hosts-heat$np-overlap-narrow-halves.txt" 2> "$OUT/hosts-heat$np-overlap-narrow-halves.err"
    mpi_default $np "${net[@]}" "${narrow[@]}" $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused \
      --overlap --repeats 3 > "$OUT/hosts-gs$np-overlap-narrow.txt" 2> "$OUT/hosts-gs$np-overlap-narrow.err"
    echo "-- $np ranks; NCCL's transport: $(grep -ohE "via NET/[A-Za-z]+" "$OUT/hosts-gs$np.txt" | sort | uniq -c | tr -s ' ' | head -2 | tr '\n' ';')"
    for f in gs$np gs$np-overlap gs$np-overlap-narrow heat$np heat$np-overlap heat$np-overlap-halves heat$np-overlap-narrow \
      heat$np-overlap-narrow-halves; do
      grep -E "^(grayscott|heat) .* nccl " "$OUT/hosts-$f.txt" | sed "s/^/${f#*[0-9]}: /" | cut -c1-150
    done
  done
  echo "(heat's halo: 4 planes of 1200² f32 = 23.04 MB each way per neighbour per step; link GB/s = 23.04 / exch ms for 2 ranks)"
fi

if [[ $parts == *" host-pairs "* ]] && [ "$gpus" -ge 4 ]; then
  echo "== two hosts of 2 GPUs simulated on one: 4 ranks, NVLink within a pair, NCCL's sockets between"
  wide=(-x NCCL_SOCKET_NTHREADS=4 -x NCCL_NSOCKS_PERTHREAD=4)
  # 4 ranks as 2 hosts of 2 GPUs: NCCL_HOSTID gives ranks 0-1 and 2-3 a host each, so NCCL
  # joins 0-1 and 2-3 over NVLink and only 1-2 over its socket transport (P2P and SHM stay on).
  pairs=(-x NCCL_SOCKET_IFNAME=lo -x RUST_GPU_SIM_RANK_HALOS=nccl)
  hosted=(bash -c 'NCCL_HOSTID=simhost$((${OMPI_COMM_WORLD_RANK:-0} / 2)) exec "$@"' _ $B/rust-gpu-sim)
  echo "-- 4 ranks as 2 hosts × 2 GPUs (NCCL_HOSTID per pair)"
  mpi_default 4 "${pairs[@]}" -x NCCL_DEBUG=INFO "${hosted[@]}" bench grayscott --sizes 16384 --variants streaming,fused \
    --overlap --repeats 3 > "$OUT/pairs-gs.txt" 2> "$OUT/pairs-gs.err"
  echo "NCCL's transports: $(grep -ohE "via (NET/[A-Za-z]+|P2P/[A-Za-z/]+)" "$OUT/pairs-gs.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  mpi_default 4 "${pairs[@]}" "${hosted[@]}" bench grayscott --sizes 16384 --variants streaming,fused \
    --repeats 3 > "$OUT/pairs-gs-no.txt" 2> "$OUT/pairs-gs-no.err"
  mpi_default 4 "${pairs[@]}" "${hosted[@]}" bench heat --sizes 1200 --variants single --no-overlap --repeats 3 \
    > "$OUT/pairs-heat-no.txt" 2> "$OUT/pairs-heat-no.err"
  mpi_default 4 "${pairs[@]}" "${hosted[@]}" bench heat --sizes 1200 --variants single --repeats 3 \
    > "$OUT/pairs-heat.txt" 2> "$OUT/pairs-heat.err"
  mpi_default 4 "${pairs[@]}" "${wide[@]}" "${hosted[@]}" bench heat --sizes 1200 --variants single --repeats 3 \
    > "$OUT/pairs-heat-wide.txt" 2> "$OUT/pairs-heat-wide.err"
  mpi_default 4 "${pairs[@]}" -x NCCL_SOCKET_NTHREADS=8 -x NCCL_NSOCKS_PERTHREAD=8 "${hosted[@]}" bench heat \
    --sizes 1200 --variants single --repeats 3 > "$OUT/pairs-heat-wider.txt" 2> "$OUT/pairs-heat-wider.err"
  for f in gs-no gs heat-no heat heat-wide heat-wider; do
    grep -E "^(grayscott|heat) .* nccl " "$OUT/pairs-$f.txt" | sed "s/^/2×2 $f: /" | cut -c1-150
  done
fi

if [[ $parts == *" overlap "* ]]; then
  n=2; [ "$gpus" -ge 4 ] && n=4
  echo "== the overlap defaults on $n GPUs: heat 1200³ single, halves against edges first"
  for scheme in halves edges; do
    RUST_GPU_SIM_HEAT_OVERLAP=$scheme $B/rust-gpu-sim bench heat --sizes 1200 --variants single --gpus 1,$n --overlap \
      --repeats 3 2>> "$OUT/overlap.err" | grep -E "^heat " | sed "s/^/$scheme, one process: /" | cut -c1-150
    mpi $n -x RUST_GPU_SIM_HEAT_OVERLAP=$scheme $B/rust-gpu-sim bench heat --sizes 1200 --variants single --overlap \
      --repeats 3 2>> "$OUT/overlap.err" | grep -E "^heat .* nccl " | sed "s/^/$scheme, CUDA IPC: /" | cut -c1-150
    mpi $n -x RUST_GPU_SIM_RANK_HALOS=nccl -x RUST_GPU_SIM_HEAT_OVERLAP=$scheme $B/rust-gpu-sim bench heat --sizes 1200 \
      --variants single --overlap --repeats 3 2>> "$OUT/overlap.err" | grep -E "^heat .* nccl " | sed "s/^/$scheme, NCCL: /" | cut -c1-150
  done
  echo "== Gray-Scott 16384² under mpirun -np $n, without and with --overlap"
  mpi $n $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --repeats 3 2>> "$OUT/overlap.err" \
    | grep -E "^grayscott .* nccl " | cut -c1-150
  mpi $n $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming,fused --overlap --repeats 3 2>> "$OUT/overlap.err" \
    | grep -E "^grayscott .* nccl " | cut -c1-150
fi

if [[ $parts == *" rounds "* ]]; then
  echo "== heat 1200³ single in one process: halves (the default) against the exchange by rounds, in turns, twice"
  counts=1,2; [ "$gpus" -ge 4 ] && counts=1,2,4
  for round in 1 2; do
    for scheme in halves rounds; do
      RUST_GPU_SIM_HEAT_OVERLAP=$scheme timeout 300 $B/rust-gpu-sim bench heat --sizes 1200 --variants single \
        --gpus $counts --overlap --repeats 5 > "$OUT/rounds-$scheme-$round.txt" 2>> "$OUT/rounds.err"
      echo "exit $?" >> "$OUT/rounds.err"
      grep -E "^heat " "$OUT/rounds-$scheme-$round.txt" | sed "s/^/$scheme, round $round: /" | cut -c1-150
    done
  done
fi

if [[ $parts == *" sweep "* ]]; then
  n=2; [ "$gpus" -ge 4 ] && n=4
  echo "== sweep on $n GPUs: Gray-Scott 16384² streaming by fewest halo rows (one process, then mpirun)"
  for rows in ${SWEEP_HALO_ROWS:-16 22 29 36}; do
    echo "-- at least $rows rows ($(date +%T))"
    RUST_GPU_SIM_HALO_ROWS=$rows $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming --gpus 1,$n \
      --repeats 3 2>> "$OUT/sweep.err" | grep -E "^grayscott" | tee -a "$OUT/sweep-gs-rows$rows.txt"
    mpi $n -x RUST_GPU_SIM_HALO_ROWS=$rows $B/rust-gpu-sim bench grayscott --sizes 16384 --variants streaming \
      --repeats 3 2>> "$OUT/sweep.err" | grep -E "^grayscott .* nccl" | tee -a "$OUT/sweep-gs-rows$rows.txt"
  done
  echo "== sweep on $n GPUs: heat 1200³ single --overlap under mpirun by SMs left free (free:ctas:chunk)"
  for cfg in ${SWEEP_NCCL:-2:2:0 1:1:0 3:3:0 4:4:0 2:2:2097152 1:1:2097152}; do
    IFS=: read -r free ctas chunk <<< "$cfg"
    extra=(); [ "$chunk" != 0 ] && extra=(-x NCCL_P2P_NVL_CHUNKSIZE=$chunk)
    echo "-- $cfg ($(date +%T))"
    mpi $n -x RUST_GPU_SIM_RANK_HALOS=nccl -x RUST_GPU_SIM_NCCL_FREE_SMS=$free -x NCCL_MAX_CTAS=$ctas "${extra[@]}" \
      $B/rust-gpu-sim bench heat --sizes 1200 \
      --variants single --overlap --repeats 3 2>> "$OUT/sweep.err" | grep -E "^heat" | tee -a "$OUT/sweep-heat-$free-$ctas-$chunk.txt"
  done
fi
if [[ $parts == *" hosts-heat "* ]] && [ "$gpus" -ge 4 ]; then
  echo "== heat 1200³ single across a simulated host boundary, 4x4 sockets: 2 ranks (1 + 1) against 4 (2 + 2), in turns"
  wide=(-x NCCL_SOCKET_NTHREADS=4 -x NCCL_NSOCKS_PERTHREAD=4 -x NCCL_SOCKET_IFNAME=lo -x RUST_GPU_SIM_RANK_HALOS=nccl)
  hosted=(bash -c 'NCCL_HOSTID=simhost$((${OMPI_COMM_WORLD_RANK:-0} / 2)) exec "$@"' _ $B/rust-gpu-sim)
  for round in 1 2; do
    mpi_default 2 "${wide[@]}" -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 $B/rust-gpu-sim bench heat --sizes 1200 \
      --variants single --repeats 3 2>> "$OUT/hosts-heat.err" | grep -E "^heat .* nccl " | sed "s/^/1+1, round $round: /" \
      | tee -a "$OUT/hosts-heat.txt" | cut -c1-150
    mpi_default 4 "${wide[@]}" "${hosted[@]}" bench heat --sizes 1200 --variants single --repeats 3 \
      2>> "$OUT/hosts-heat.err" | grep -E "^heat .* nccl " | sed "s/^/2+2, round $round: /" | tee -a "$OUT/hosts-heat.txt" | cut -c1-150
  done
fi
