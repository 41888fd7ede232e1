#!/usr/bin/env bash
# Runs bench_direct (C, sla against raw CHOLMOD) and direct_scipy.py (SciPy/SuperLU) on the same
# 2D Poisson matrices and prints one JSON object with both results and the ratios
# sla / SciPy (< 1: sla is faster).
#   bench/direct.sh [BUILD_DIR] [--max-n N] [extra bench_direct options]
# Default BUILD_DIR: build. Environment (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS) is passed on.
set -euo pipefail
# threads wait passively: spinning OpenMP threads collapse on a shared machine (README)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
build=build
if [[ $# -gt 0 && $1 != --* ]]; then build=$1; shift; fi
max_n=1000000
args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --max-n) max_n=$2; args+=(--max-n "$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bench/bench_direct" --no-orderings "${args[@]}" > "$tmp/c.json"
/usr/bin/python3 bench/direct_scipy.py --max-n "$max_n" > "$tmp/py.json" 2> /dev/null
/usr/bin/python3 - "$tmp/c.json" "$tmp/py.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
py = json.load(open(sys.argv[2]))
sci = {r["grid"]: r for r in py["poisson2d"]}
ratios = []
for r in c["poisson2d"]:
    s = sci.get(r["grid"])
    if not s:
        continue
    sla = r["sla"]
    one_shot = sla["analysis_plus_factor_s"]["median"] + sla["solve_s"]["median"]
    ratios.append({
        "grid": r["grid"],
        "sla_create_plus_solve_over_spsolve": one_shot / s["spsolve_s"]["median"],
        "sla_refactor_over_splu_mmd": sla["refactor_s"]["median"] / s["splu_mmd_ata_s"]["median"],
        "sla_solve_over_superlu_solve": sla["solve_s"]["median"] / s["lu_solve_s"]["median"],
    })
print(json.dumps({"benchmark": "direct_vs_scipy", "sla": c, "scipy": py, "ratios": ratios}, indent=1))
PY
