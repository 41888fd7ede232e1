"""Complex Hermitian eigsh, before / after the native complex kernels, in one run: the same
script runs each case in a child process against two builds of libsla (SLA_LIBRARY), in
alternation: "before" (the real 2n × 2n form, e.g. main's build) and "after" (this branch:
native complex Lanczos on the complex factorizations). Matrix: the random-flux magnetic
Laplacian of bench/eigsh_complex.py (m × m grid, 4 on the diagonal, −e^{iθ} on the links, θ
uniform in [0, 1), Dirichlet). Cases, k = 6: SA (method auto: shift-invert at a shift proved by
Cholesky) and sigma inside the spectrum (shift-invert with an indefinite factorization).
Reported per run: wall and process CPU seconds of the eigsh call, block steps, operator
applications, factorizations, the largest residual ‖Av − λv‖/‖A‖₁ (recomputed here with SciPy)
and the eigenvalues; the eigenvalues of before and after are compared. Prints one JSON object.
Usage: /usr/bin/python3 bench/eigsh_complex_native.py BEFORE_LIB AFTER_LIB [m (316)] [repeats (1)]
       [sigma (1.0)]"""
import json
import os
import subprocess
import sys
import time


def worker(m, case, sigma):
    import numpy as np
    sys.path.insert(0, os.path.join(os.path.dirname(__file__)))
    from eigsh_complex import magnetic_laplacian
    from torch_sla import SparseTensor
    A = magnetic_laplacian(m, None)
    At = SparseTensor.from_scipy(A)
    kw = {"which": "SA"} if case == "SA" else {"sigma": sigma}
    t0, c0 = time.perf_counter(), time.process_time()
    w, V, info = At.eigsh(6, return_info=True, **kw)
    t1, c1 = time.perf_counter(), time.process_time()
    w, V = w.numpy(), V.numpy()
    R = A @ V - V * w
    res = float(np.linalg.norm(R, axis=0).max() / abs(A).sum(0).max())
    print(json.dumps({"wall_s": t1 - t0, "cpu_s": c1 - c0, "iterations": info.iterations,
                      "operator_applications": getattr(info, "operator_applications", None),
                      "factorizations": getattr(info, "factorizations", None),
                      "converged": info.converged, "residual": res,
                      "description": info.description, "eigenvalues": w.tolist()}))


def main():
    before, after = sys.argv[1], sys.argv[2]
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 316
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sigma = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    out = {"m": m, "n": m * m, "k": 6, "sigma": sigma, "repeats": repeats, "cases": {}}
    for case in ("SA", "sigma"):
        runs = {"before": [], "after": []}
        for _ in range(repeats):
            for tag, lib in (("before", before), ("after", after)):
                env = dict(os.environ, SLA_LIBRARY=lib)
                p = subprocess.run([sys.executable, __file__, "--worker", str(m), case, str(sigma)],
                                   env=env, capture_output=True, text=True, check=True)
                runs[tag].append(json.loads(p.stdout.strip().splitlines()[-1]))
        wb, wa = runs["before"][0]["eigenvalues"], runs["after"][0]["eigenvalues"]
        runs["max_eigenvalue_diff"] = max(abs(x - y) for x, y in zip(wb, wa))
        runs["cpu_ratio_before_over_after"] = [b["cpu_s"] / a["cpu_s"] for b, a in
                                               zip(runs["before"], runs["after"])]
        out["cases"][case] = runs
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
    else:
        main()
