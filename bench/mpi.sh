#!/usr/bin/env bash
# Distributed benchmarks (docs/mpi.md, "Benchmarks"): libsla_mpi against PETSc 3.18 in one run,
# and the scaling model. Writes one JSON (default bench/results/mpi.json) and the scaling
# curves (bench/results/mpi_scaling.png, matplotlib via /usr/bin/python3).
#
# Usage: bench/mpi.sh [BUILD_DIR] [--quick] [--out FILE.json] [--ranks "1 2"] [--no-model]
#                     [--problems "2:1000 3:100"] [--reps K]   (dimension:side pairs; K solves, fastest kept)
#
# Per rank count and problem (2D Poisson 1000², 3D Poisson 100³; --quick: 300², 40³), in turn:
#   bench_mpi_cg           libsla_mpi CG + Jacobi on the public kernels (build/bench/mpi),
#                          assembled from CSR rows (its default), and once more from COO
#                          triplets for the memory only (--assembly coo --maxit 3)
#   bench_petsc_cg         PETSc KSPCG, -pc_type jacobi and -pc_type hypre (BoomerAMG), if built;
#                          BoomerAMG twice: PETSc's defaults, and hypre's own ("hypre-defaults")
#   bench_mpi_krylov       libsla's distributed solver objects (sla_dist_solver: CG + Jacobi,
#                          BoomerAMG-PCG, block-Jacobi AMG), the counterpart of KSPCG; for the
#                          two full-size problems only (it knows no others), so not with --quick
# then bench_mpi_model at 1 rank (the curves) and at 2 and 4 ranks (--no-curves: its halo
# counter against the real halo plans). Ratios are PETSc / sla (> 1: sla faster), measured in
# this run: the machine is shared and noisy, compare within one file only.
set -euo pipefail
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}" OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
cd "$(dirname "$0")/.."
build=build quick="" out=bench/results/mpi.json ranks="1 2" model=1 problems="" reps=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=--quick ;;
        --out) out="$2"; shift ;;
        --ranks) ranks="$2"; shift ;;
        --no-model) model=0 ;;
        --problems) problems="$2"; shift ;;
        --reps) reps="$2"; shift ;;
        *) build="$1" ;;
    esac
    shift
done
cg="$build/bench/mpi/bench_mpi_cg"
petsc="$build/bench/mpi_petsc/bench_petsc_cg"
krylov="$build/bench/bench_mpi_krylov"
hypre_defaults="-pc_hypre_boomeramg_coarsen_type HMIS -pc_hypre_boomeramg_interp_type ext+i
 -pc_hypre_boomeramg_P_max 4 -pc_hypre_boomeramg_relax_type_down l1-Gauss-Seidel
 -pc_hypre_boomeramg_relax_type_up backward-l1-Gauss-Seidel
 -pc_hypre_boomeramg_relax_type_coarse Gaussian-elimination"
[ -x "$krylov" ] || krylov=""
modelbin="$build/bench/mpi/bench_mpi_model"
[ -x "$cg" ] || { echo "bench/mpi.sh: $cg not built (libsla_mpi off?)" >&2; exit 1; }
[ -x "$petsc" ] || { echo "bench/mpi.sh: no $petsc (PETSc not found at configure): sla side only" >&2; petsc=""; }
mpirun_() { mpirun --oversubscribe -np "$@"; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
if [ -n "$quick" ]; then : "${reps:=1}" "${problems:=2:300 3:40}"; else : "${reps:=2}" "${problems:=2:1000 3:100}"; fi

for np in $ranks; do
    for pr in $problems; do
        d="${pr%%:*}" n="${pr##*:}"
        echo "bench/mpi.sh: np $np, ${d}D n=$n" >&2
        mpirun_ "$np" "$cg" --dim "$d" --n "$n" --reps "$reps" >> "$tmp/runs.jsonl"
        mpirun_ "$np" "$cg" --dim "$d" --n "$n" --reps 1 --maxit 3 --assembly coo \
            >> "$tmp/coo_mem.jsonl"
        if [ -n "$petsc" ]; then
            for pc in jacobi hypre; do
                mpirun_ "$np" "$petsc" --dim "$d" --n "$n" --pc "$pc" --reps "$reps" >> "$tmp/runs.jsonl"
            done
            # BoomerAMG as hypre configures it when nobody sets anything (what libsla's
            # pc_hypre.c leaves in place), in place of PETSc's own BoomerAMG defaults
            mpirun_ "$np" "$petsc" --dim "$d" --n "$n" --pc hypre --reps "$reps" $hypre_defaults |
                sed 's/"pc": "hypre"/"pc": "hypre-defaults"/' >> "$tmp/runs.jsonl"
        fi
        case "$d:$n" in 2:1000|3:100)
            [ -n "$krylov" ] && mpirun_ "$np" "$krylov" "$reps" 0 "p${d}d$n" > "$tmp/krylov_np${np}_${d}d.json" ;;
        esac
    done
done
touch "$tmp/coo_mem.jsonl"
if [ "$model" = 1 ]; then
    echo "bench/mpi.sh: scaling model" >&2
    mpirun_ 1 "$modelbin" $quick > "$tmp/model.json"
    for np in 2 4; do
        mpirun_ "$np" "$modelbin" --quick --no-curves > "$tmp/model_np$np.json"
    done
fi

mkdir -p "$(dirname "$out")"
/usr/bin/python3 - "$tmp" "$out" "$model" <<'PY'
import glob, json, os, platform, sys
tmp, out, model = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
def objects(f):
    """One JSON object per line; other lines (bench_mpi_krylov prints a multi-line document,
    not the per-line objects this script expects) are skipped with a note."""
    got = []
    for l in open(os.path.join(tmp, f)):
        try:
            got.append(json.loads(l)) if l.strip().startswith("{") else None
        except json.JSONDecodeError:
            print("bench/mpi.sh: %s: skipped a line that is not one JSON object: %.60s"
                  % (f, l.strip()), file=sys.stderr)
    return got
def krylov_runs():
    """bench_mpi_krylov's documents as one object per solver run, in runs.jsonl's fields
    (library sla_mpi_krylov; pc jacobi, hypre for BoomerAMG, bjacobi-amg)."""
    got = []
    for f in sorted(glob.glob(os.path.join(tmp, "krylov_np*.json"))):
        doc = json.load(open(f))
        for p in doc["problems"]:
            d, n = p["name"][1], p["name"][3:]          # p2d1000, p3d100
            for r in p["runs"]:
                pc = {"boomeramg": "hypre"}.get(r["precond"], r["precond"])
                got.append({"library": "sla_mpi_krylov", "problem": "poisson%sd_%s" % (d, n),
                            "n": p["n"], "ranks": doc["ranks"], "method": r["method"], "pc": pc,
                            "rtol": doc["rtol"], "iterations": r["iterations"],
                            "converged": bool(r["converged"]),
                            "relative_residual": r["relative_residual"],
                            "setup_s": r["setup_s"], "solve_s": r["solve_s"],
                            "setup_plus_solve_s": r["total_s"],
                            "ms_per_iteration": round(1e3 * r["per_iteration_s"], 4)})
    return got
runs = objects("runs.jsonl") + krylov_runs()
coo = objects("coo_mem.jsonl")
def pick(lib, problem, ranks, pc):
    for r in runs:
        ok = r["library"].startswith("petsc") if lib == "petsc" else r["library"] == lib
        if ok and r["problem"] == problem and r["ranks"] == ranks and r.get("pc") == pc:
            return r
ratios = []
for r in runs:
    if r["library"] != "sla_mpi":
        continue
    p, np_ = r["problem"], r["ranks"]
    e = {"problem": p, "ranks": np_, "sla_cg_jacobi_ms_per_iteration": r["ms_per_iteration"],
         "iterations_sla": r["iterations"]}
    pj, ph = pick("petsc", p, np_, "jacobi"), pick("petsc", p, np_, "hypre")
    if pj:
        e.update({"petsc_cg_jacobi_ms_per_iteration": pj["ms_per_iteration"],
                  "iterations_petsc_jacobi": pj["iterations"],
                  "petsc_over_sla_per_iteration": round(pj["ms_per_iteration"] / r["ms_per_iteration"], 3),
                  "petsc_over_sla_jacobi_solve": round(pj["solve_s"] / r["solve_s"], 3),
                  "peak_rss_mb_sla_petsc": [r["peak_rss_mb"], pj["peak_rss_mb"]],
                  "solve_peak_rss_mb_sla_petsc": [r["solve_peak_rss_mb"], pj["solve_peak_rss_mb"]]})
    for c in coo:
        if c["problem"] == p and c["ranks"] == np_:
            e["sla_coo_peak_rss_mb_solve_peak_rss_mb"] = [c["peak_rss_mb"], c["solve_peak_rss_mb"]]
    if ph:
        e.update({"petsc_hypre_setup_plus_solve_s": ph["setup_plus_solve_s"],
                  "petsc_hypre_iterations": ph["iterations"],
                  "petsc_hypre_over_sla_jacobi_total": round(ph["setup_plus_solve_s"] / r["setup_plus_solve_s"], 3)})
    # the solver objects against KSPCG: CG + Jacobi per iteration, and set-up + solve of
    # BoomerAMG-PCG (and of block-Jacobi AMG, against PETSc + BoomerAMG) to the same rtol
    for k in runs:
        if k["library"] == "sla_mpi_krylov" and k["problem"] == p and k["ranks"] == np_:
            ref = pick("petsc", p, np_, "jacobi" if k["pc"] == "jacobi" else "hypre")
            key = "sla_solver_" + k["pc"]
            e[key + "_iterations"] = k["iterations"]
            e[key + "_setup_plus_solve_s"] = k["setup_plus_solve_s"]
            if k["pc"] == "jacobi":
                e[key + "_ms_per_iteration"] = k["ms_per_iteration"]
                if pj:
                    e["petsc_over_sla_solver_per_iteration"] = round(pj["ms_per_iteration"] / k["ms_per_iteration"], 3)
            if ref:
                e[key + "_petsc_over_sla_total"] = round(ref["setup_plus_solve_s"] / k["setup_plus_solve_s"], 3)
            hd = pick("petsc", p, np_, "hypre-defaults")
            if k["pc"] == "hypre" and hd:
                e["petsc_hypre_defaults_iterations"] = hd["iterations"]
                e["petsc_hypre_defaults_setup_plus_solve_s"] = hd["setup_plus_solve_s"]
                e[key + "_petsc_hypre_defaults_over_sla_total"] = round(hd["setup_plus_solve_s"] / k["setup_plus_solve_s"], 3)
    ratios.append(e)
res = {"machine": {"cores": os.cpu_count(), "node": platform.node(),
                   "load_average_at_end": [round(x, 2) for x in os.getloadavg()], "note":
                   "2 cores shared with other jobs: ranks oversubscribe nothing at np <= 2, "
                   "but timings are noisy; ratios are from this one run"},
       "runs": runs, "coo_memory_runs": coo, "ratios": ratios}
if model:
    res["model"] = json.load(open(os.path.join(tmp, "model.json")))
    res["model"]["validation"] = [v for f in sorted(glob.glob(os.path.join(tmp, "model_np*.json")))
                                  for v in json.load(open(f)).get("validation", [])]
json.dump(res, open(out, "w"), indent=1)
print(json.dumps(ratios, indent=1))
PY
if [ "$model" = 1 ]; then
    /usr/bin/python3 bench/mpi_plot.py "$out" "${out%.json}_scaling.png"
fi
