#!/usr/bin/env bash
# sla's smoothed-aggregation AMG-PCG against hypre's BoomerAMG-PCG on the same problems (2D
# Poisson 256², 512², 1000², 3D Poisson 100³; b = 1, x0 = 0, rtol 1e-8), in one run, printing
# one JSON object with both results and the ratios sla / hypre:
#   sla with OMP_NUM_THREADS=T and with 1 thread,
#   hypre (no OpenMP in Debian's build) on 1 MPI rank and on T ranks.
# Ratios: wall total (T threads vs T ranks, the headline), and CPU total on one thread (the work,
# which a shared machine does not distort). Each program keeps the best of `repeat` runs.
#
# Usage: bench/amg.sh [build-dir (build)] [repeat (3)] [threads (2)] [case ...]
set -euo pipefail
# threads wait passively: spinning OpenMP threads collapse on a shared machine (README)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPEAT=${2:-3}
T=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
CASES=("$@")
[ -x "$BUILD/bench/bench_amg" ] || { echo "build $BUILD/bench/bench_amg first" >&2; exit 1; }
[ -x "$BUILD/bench/bench_amg_hypre" ] ||
  { echo "$BUILD/bench/bench_amg_hypre missing (hypre or MPI not found)" >&2; exit 1; }
MPIRUN=(mpirun -np "$T")
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root --oversubscribe -np "$T")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
OMP_NUM_THREADS=$T "$BUILD/bench/bench_amg" "$REPEAT" "${CASES[@]}" > "$tmp/sla.json"
OMP_NUM_THREADS=1 "$BUILD/bench/bench_amg_hypre" "$REPEAT" "${CASES[@]}" > "$tmp/hypre1.json"
OMP_NUM_THREADS=1 "$BUILD/bench/bench_amg" "$REPEAT" "${CASES[@]}" > "$tmp/sla1.json"
OMP_NUM_THREADS=1 "${MPIRUN[@]}" "$BUILD/bench/bench_amg_hypre" "$REPEAT" "${CASES[@]}" \
    > "$tmp/hypreT.json" 2> "$tmp/mpi.err" || { cat "$tmp/mpi.err" >&2; exit 1; }

/usr/bin/python3 - "$tmp" "$T" <<'EOF'
import json, sys
d, T = sys.argv[1], int(sys.argv[2])
load = lambda name: json.load(open(f"{d}/{name}.json"))
sla, sla1, hyp1, hypT = load("sla"), load("sla1"), load("hypre1"), load("hypreT")
by = lambda r: {p["name"]: p for p in r["problems"]}
S, S1, H1, HT = by(sla), by(sla1), by(hyp1), by(hypT)
ratios = {}
for name in S:
    s, s1, h1, hT = S[name], S1[name], H1[name], HT[name]
    ratios[name] = {
        "total_s_vs_hypre_%dranks" % T: round(s["total_s"] / hT["total_s"], 3),
        "setup_s_vs_hypre_%dranks" % T: round(s["setup_s"] / hT["setup_s"], 3),
        "solve_s_vs_hypre_%dranks" % T: round(s["solve_s"] / hT["solve_s"], 3),
        "total_cpu_s_1thread_vs_hypre_1rank": round(s1["total_cpu_s"] / h1["total_cpu_s"], 3),
        "iterations": [s["iterations"], hT["iterations"]],
    }
with open("/proc/loadavg") as f:
    loadavg = f.read().split()[:3]
print(json.dumps({"bench": "amg_vs_hypre", "threads": T, "loadavg_after": loadavg,
                  "ratios_sla_over_hypre": ratios, "sla": sla, "sla_1thread": sla1,
                  "hypre_1rank": hyp1, "hypre_%dranks" % T: hypT}, indent=1))
EOF
