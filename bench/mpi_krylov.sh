#!/usr/bin/env bash
# libsla_mpi's distributed CG (Jacobi, block-Jacobi AMG, hypre BoomerAMG) on 2D Poisson 1000²
# and 3D Poisson 100³ (rtol 1e-8) at 1 and 2 ranks, one thread per rank, in one run: prints one
# JSON object {"np1": ..., "np2": ..., "ratios": ...} with the 2-rank / 1-rank time per CG +
# Jacobi iteration (bench_mpi_krylov.c says what each run measures; at 1 rank it also times
# serial libsla's CG + Jacobi, the same method source).
#
# Usage: bench/mpi_krylov.sh [build-dir (build)] [repeat (3)] [maxiter cap (0: none)] [case ...]
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
BUILD=${1:-build}
REPEAT=${2:-3}
CAP=${3:-0}
shift $(( $# < 3 ? $# : 3 ))
B="$BUILD/bench/bench_mpi_krylov"
[ -x "$B" ] || { echo "build $B first (libsla_mpi)" >&2; exit 1; }
MPIRUN=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for np in 1 2; do
  OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1 "${MPIRUN[@]}" -np "$np" "$B" "$REPEAT" "$CAP" "$@" > "$tmp/np$np.json"
done
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
r = {f"np{n}": json.load(open(f"{d}/np{n}.json")) for n in (1, 2)}
ratios = {}
for p1, p2 in zip(r["np1"]["problems"], r["np2"]["problems"]):
    j1 = next(x for x in p1["runs"] if x["precond"] == "jacobi")
    j2 = next(x for x in p2["runs"] if x["precond"] == "jacobi")
    ratios[p1["name"]] = {"cg_jacobi_per_iteration_np2_over_np1":
                          round(j2["per_iteration_s"] / j1["per_iteration_s"], 4) if j1["per_iteration_s"] else None,
                          "cg_jacobi_per_iteration_dist_over_serial_np1":
                          p1.get("ratio_per_iteration_dist_over_serial")}
r["ratios"] = ratios
print(json.dumps(r, indent=1))
PY
