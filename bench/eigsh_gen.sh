#!/usr/bin/env bash
# Runs bench_eigsh_gen (sla) and bench/eigsh_gen_scipy.py (SciPy eigsh with M, same pairs) in one
# go and prints one JSON object with both and the time ratios measured in this run.
# Usage: bench/eigsh_gen.sh [BUILD_DIR (./build)] [m (256)] [repeats (3)]
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
build="${1:-build}"
m="${2:-256}"
rep="${3:-3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$build/bench/bench_eigsh_gen" "$m" "$rep" > "$tmp/sla.json"
/usr/bin/python3 bench/eigsh_gen_scipy.py "$m" "$rep" > "$tmp/scipy.json"
/usr/bin/python3 - "$tmp/sla.json" "$tmp/scipy.json" <<'PY'
import json, sys
sla, sp = (json.load(open(f)) for f in sys.argv[1:3])
ratios = {}
for name, ref in sp["problems"].items():
    mine = sla["problems"][name]
    ratios[name] = {"scipy_over_sla_time": round(ref["time_s_median"] / mine["time_s_median"], 3),
                    "operator_applications_sla_scipy": [mine["operator_applications"],
                                                        ref["operator_applications"]]}
ar, la = sla["problems"].get("fem2d_q1_arpack_mode3", {}), sla["problems"]["fem2d_q1"]
if "time_s_median" in ar:
    ratios["fem2d_q1"]["arpack_mode3_over_sla_lanczos_time"] = round(
        ar["time_s_median"] / la["time_s_median"], 3)
    ratios["fem2d_q1"]["operator_applications_sla_arpack_mode3"] = ar["operator_applications"]
print(json.dumps({"sla": sla, "scipy": sp, "ratios": ratios}, indent=2))
PY
