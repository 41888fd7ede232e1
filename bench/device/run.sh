#!/bin/bash
# The GPU verification of libsla_cuda (docs/cuda.md, issue 19), one script for the GPU machine
# (an H200: nvcc, CMake, ninja, PyTorch; no package registry), under 8 minutes:
#   1. unpacks the carried Debian libraries (.carry/debs, bench/device/prepare.sh) into /tmp
#      and builds libsla + libsla_cuda (sm_90) with the CUDA tests and the benchmark;
#   2. runs the CUDA tests (solutions and gradients equal the CPU's to 1e-10), the torch_sla
#      CUDA-tensor tests, and compute-sanitizer memcheck on the GPU test;
#   3. benchmarks 2D Poisson 1000² CG + Jacobi to rtol 1e-8 (cuSPARSE and the own SpMV), with
#      torch-sla's CG on the same problem in the same run, then the large problems (100M
#      unknowns, then 1B if time is left) for bytes per unknown.
# Writes to $OUT: summary.json, run.log, memcheck.log and one JSON per benchmark.
# Run (device tool): carry [".carry"], command "bash bench/device/run.sh", timeout_s 540.
set -u
START=$(date +%s)
OUT=${OUT:-/tmp/sla-device-out}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
B=/tmp/sla-build
R=/tmp/sla-debroot
L=$R/usr/lib/x86_64-linux-gnu
LOG=$OUT/run.log
exec > >(tee -a "$LOG") 2>&1
elapsed() { echo $(( $(date +%s) - START )); }
step() { echo; echo "=== [$(elapsed) s] $*"; }
status_of=()
record() { status_of+=("\"$1\": $2"); }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
nvcc --version | tail -2 || ls /usr/local/cuda/bin/nvcc
nproc; free -g | head -2

step "carried Debian libraries -> $R"
if ! ls "$SRC"/.carry/debs/*.deb >/dev/null 2>&1; then
  echo "no .carry/debs: run bench/device/prepare.sh on the build machine and carry .carry"
  exit 2
fi
for f in "$SRC"/.carry/debs/*.deb; do dpkg -x "$f" "$R"; done
# dpkg -x runs no maintainer scripts: make the alternatives' links BLAS/LAPACK would get
for lib in blas lapack; do
  ln -sf "$lib/lib$lib.so.3" "$L/lib$lib.so.3"
  ln -sf "lib$lib.so.3" "$L/lib$lib.so"
done
# zlib1g-dev's libz.so points at the runtime of zlib1g, which the system has
if [ ! -e "$L/libz.so" ]; then
  z=$(ls /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1 2>/dev/null | head -1)
  [ -n "$z" ] && ln -sf "$z" "$L/libz.so"
fi
export LD_LIBRARY_PATH=$L:$L/blas:$L/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CMAKE_PREFIX_PATH=$R/usr
export PATH=$PATH:/usr/local/cuda/bin

step "configure + build"
gen=""; command -v ninja >/dev/null && gen="-G Ninja"
cmake -S "$SRC" -B "$B" $gen -DCMAKE_BUILD_TYPE=Release -DSLA_CUDA=ON -DSLA_WITH_MPI=OFF -DBLA_VENDOR=Generic \
      -DSLA_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" \
      ${SLA_DEVICE_CMAKE_ARGS:-} > "$OUT/configure.txt" 2>&1
cfg=$?
tail -15 "$OUT/configure.txt"; grep -i "libsla_cuda\|error" "$OUT/configure.txt" | head; rm -f "$OUT/configure.txt"
if [ $cfg -ne 0 ]; then record configure '"failed"'; echo "{$(IFS=,; echo "${status_of[*]}")}" > "$OUT/summary.json"; exit 1; fi
cmake --build "$B" -j "$(nproc)" --target sla sla_cuda test_cuda_registry test_cuda_gpu bench_cuda_cg sla_cli 2>&1 | tail -20
built=${PIPESTATUS[0]}
record build "$built"
[ "$built" -ne 0 ] && { echo "{$(IFS=,; echo "${status_of[*]}")}" > "$OUT/summary.json"; exit 1; }

step "CUDA tests (ctest -L cuda)"
ctest --test-dir "$B" -L cuda --output-on-failure -V 2>&1 | grep -v "^[0-9]*: *$" | tail -80
record ctest_cuda "${PIPESTATUS[0]}"

step "CLI: sla solve --device cuda (Poisson 100^2 written as Matrix Market)"
python3 - /tmp/sla-poisson100.mtx <<'PY'
import sys
n = 100
with open(sys.argv[1], "w") as f:
    ent = []
    for i in range(n):
        for j in range(n):
            p = i * n + j
            ent.append((p, p, 4.0))
            for a, b in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)):
                if 0 <= a < n and 0 <= b < n:
                    ent.append((p, a * n + b, -1.0))
    f.write("%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n" % (n * n, n * n, len(ent)))
    f.writelines("%d %d %.1f\n" % (r + 1, c + 1, v) for r, c, v in ent)
PY
"$B/tools/sla/sla" solve /tmp/sla-poisson100.mtx --device cuda --method cg --precond jacobi --rtol 1e-10 --json
record cli_device_cuda "$?"

step "benchmark: Poisson 1000^2, CG + Jacobi, rtol 1e-8 (cuSPARSE, then own SpMV)"
"$B/bench/device/bench_cuda_cg" --n 1000 --reps 5 --rtol 1e-8 | tee "$OUT/bench_cusparse.json"
record bench_cusparse "${PIPESTATUS[0]}"
"$B/bench/device/bench_cuda_cg" --n 1000 --reps 5 --rtol 1e-8 --spmv own | tee "$OUT/bench_own.json"
record bench_own "${PIPESTATUS[0]}"

step "torch-sla's CG on the same problem, same GPU"
(cd "$SRC" && timeout 120 python3 bench/device/torch_cg.py --n 1000 --reps 3 --rtol 1e-8) | tee "$OUT/torch_cg.json"
record torch_cg "${PIPESTATUS[0]}"

step "torch_sla CUDA tensors (pytest)"
SLA_LIBRARY=$B/libsla.so PYTHONPATH=$SRC/python timeout 150 python3 -m pytest -q -p no:cacheprovider \
  "$SRC/tests/python/test_cuda_route.py" 2>&1 | tail -15
record pytest_cuda "${PIPESTATUS[0]}"

step "compute-sanitizer memcheck (GPU test)"
if command -v compute-sanitizer >/dev/null; then
  timeout 170 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
    "$B/tests/cuda/test_cuda_gpu" > "$OUT/memcheck.log" 2>&1
  mc=$?
  tail -5 "$OUT/memcheck.log"
  record memcheck "$mc"
else
  record memcheck '"compute-sanitizer not found"'
fi

step "large: Poisson 10000^2 (100M unknowns), 100 iterations"
timeout 150 "$B/bench/device/bench_cuda_cg" --n 100 --reps 1 --large 10000 --large-iters 100 | tee "$OUT/bench_large.json"
record bench_large "${PIPESTATUS[0]}"

left=$(( 450 - $(elapsed) ))
if [ "$left" -gt 120 ]; then
  step "large: Poisson 31622^2 (1.0B unknowns), 50 iterations, $left s left"
  timeout "$left" "$B/bench/device/bench_cuda_cg" --n 100 --reps 1 --large 31622 --large-iters 50 | tee "$OUT/bench_1b.json"
  record bench_1b "${PIPESTATUS[0]}"
else
  record bench_1b '"skipped: no time left"'
fi

step "done"
{
  echo "{\"elapsed_s\": $(elapsed), \"exit_status\": {$(IFS=,; echo "${status_of[*]}")},"
  for f in bench_cusparse bench_own torch_cg bench_large bench_1b; do
    if [ -s "$OUT/$f.json" ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$OUT/$f.json" 2>/dev/null; then
      echo "\"$f\": $(cat "$OUT/$f.json"),"
    else
      echo "\"$f\": null,"
    fi
  done
  echo "\"source\": \"$(cd "$SRC" && git rev-parse HEAD 2>/dev/null || echo unknown)\"}"
} > "$OUT/summary.json"
cat "$OUT/summary.json"
