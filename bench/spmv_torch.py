"""SpMV through torch_sla at default settings against a STREAM triad, in the same run.

Runs the C benchmark (build/bench/bench_spmv: triad and C SpMV on 1 and 2 threads, 2D 5-point
Poisson, 1M and 4M rows), then times ``A @ x`` from torch_sla at default settings (libsla's own
thread count, torch's untouched: both reported) on the same matrices, with the same byte model
(12 bytes per nonzero, 8 per row pointer, 16 per row for x and y). Prints one JSON object.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/spmv_torch.py [reps]
"""
import json
import os
import subprocess
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import torch  # noqa: E402

import torch_sla  # noqa: E402
from torch_sla import gallery  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("BUILD_DIR", os.path.join(here, "..", "build"))


def time_matmul(A, x, reps):
    A @ x                                    # warm-up (pattern handle, output allocation)
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        A @ x
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[0], t[len(t) // 2]


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    c = json.loads(subprocess.run([os.path.join(build, "bench", "bench_spmv"), str(reps)],
                                  check=True, capture_output=True, text=True).stdout)
    out = {"benchmark": "spmv_torch", "reps": reps,
           "torch_num_threads": torch.get_num_threads(),
           "sla_num_threads": torch_sla.get_num_threads(),
           "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
           "SLA_NUM_THREADS": os.environ.get("SLA_NUM_THREADS"), "runs": []}
    for nx in (1000, 2000):
        A = gallery.grid([nx, nx], 4.0, -1.0, -1.0)
        rows, nnz = nx * nx, A.nnz
        x = 1.0 + (torch.arange(rows, dtype=torch.float64) % 7) * 0.125
        best, med = time_matmul(A, x, reps)
        model = 12.0 * nnz + 8.0 * (rows + 1) + 16.0 * rows
        cr = {r["threads"]: r for r in c["runs"] if r["rows"] == rows}
        triad = max(r["triad_gbs"] for r in cr.values())
        gbs = model / best / 1e9
        out["runs"].append({
            "rows": rows, "nnz": nnz, "model_bytes": model,
            "torch_sla_best_ms": best * 1e3, "torch_sla_median_ms": med * 1e3,
            "torch_sla_gbs": gbs, "triad_gbs_best_of_threads": triad,
            "torch_sla_ratio_to_triad": gbs / triad,
            "c_ratio_to_triad": {str(t): r["spmv_n_ratio_to_triad"] for t, r in cr.items()},
            "c_best_ms": {str(t): r["spmv_n_best_ms"] for t, r in cr.items()},
        })
        del A, x
    out["c_benchmark"] = c
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
