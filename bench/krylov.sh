#!/usr/bin/env bash
# Runs bench_krylov (sla) and bench/krylov_scipy.py (SciPy, same problems) in one go and prints
# one JSON object with both and the ratios measured in this run.
# Usage: bench/krylov.sh [BUILD_DIR] [--quick]     (BUILD_DIR defaults to ./build)
set -euo pipefail
# threads wait passively: spinning OpenMP threads collapse on a shared machine (README)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
build="${1:-build}"
quick="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$build/bench/bench_krylov" $quick > "$tmp/sla.json"
/usr/bin/python3 bench/krylov_scipy.py $quick > "$tmp/scipy.json"
/usr/bin/python3 - "$tmp/sla.json" "$tmp/scipy.json" <<'PY'
import json, sys
sla, sp = (json.load(open(f)) for f in sys.argv[1:3])
ratios = {}
for name, p in sla["problems"].items():
    ref = sp["problems"].get(name, {}).get("cg_jacobi")
    mine = p["cg_jacobi"]
    if ref and mine["iterations"] and ref["iterations"]:
        ratios[name] = {
            "cg_jacobi_ms_per_iteration_sla": mine["ms_per_iteration"],
            "cg_jacobi_ms_per_iteration_scipy": ref["ms_per_iteration"],
            "scipy_over_sla_per_iteration": round(ref["ms_per_iteration"] / mine["ms_per_iteration"], 3),
            "scipy_over_sla_total": round(ref["solve_s"] / mine["solve_s"], 3),
            "iterations_sla_scipy": [mine["iterations"], ref["iterations"]],
        }
print(json.dumps({"sla": sla, "scipy": sp, "ratios": ratios}, indent=2))
PY
