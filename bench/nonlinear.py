#!/usr/bin/python3
"""Benchmark of nonlinear_solve: 2D Bratu −Δu = λ eᵘ (λ = 6, 5-point stencil, n = N²) to
‖F(u)‖₂ ≤ 1e-10·‖F(u0)‖₂ from u0 = 0, with the gradient dL/dλ of L = Σ uᵢ (implicit function
theorem: one adjoint solve) — against scipy.optimize.root(method='krylov') (forward only: it
has no gradient) and torch-sla's nonlinear_solve (its public algorithm: Newton on a dense
autograd Jacobian, gradient by its adjoint), every case in a fresh process (time, peak RSS),
in the same run. Prints one JSON object (and writes it with --out).

    OMP_WAIT_POLICY=passive bench/nonlinear.py [--sizes 64,128,256,512] \\
        [--torch-sla /path/to/torch-sla/checkout] [--torch-sla-sizes 16,32,48,64] [--out F]

torch-sla is imported from its checkout (a `git archive` of github.com/sparsexlab/torch-sla,
outside this repository) in its own process, since both packages are named torch_sla.
Cases:
  sla_newton_direct  torch_sla.nonlinear_solve, Newton, linear method auto (CHOLMOD),
                     Jacobian by colouring (pattern probed once: included in forward_s;
                     forward_warm_s is a second solve with the pattern cached)
  sla_newton_amg     the same with CG + AMG linear solves (rtol 1e-6 per step; the adjoint
                     refines to 1e-10)
  sla_nk_amg         Newton–Krylov (GMRES, Eisenstat–Walker), AMG on the colored Jacobian
  scipy_krylov       scipy.optimize.root(method='krylov') (LGMRES, finite-difference J·v),
                     fatol = 1e-10·‖F(u0)‖₂/√n so that ‖F‖₂ meets the same rule
  torch_sla_dense    torch-sla SparseTensor.nonlinear_solve (dense autograd Jacobian)
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAM = 6.0
RTOL = 1e-10


# ------------------------------------------------------------------------------------------------
# the cases (run in a child process: `nonlinear.py --case NAME --size N`)
# ------------------------------------------------------------------------------------------------
def _rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _torch_bratu():
    import torch

    def bratu(u, lam):
        h = 1.0 / (u.shape[0] + 1)
        up = torch.nn.functional.pad(u, (1, 1, 1, 1))
        lap = (4 * up[1:-1, 1:-1] - up[:-2, 1:-1] - up[2:, 1:-1] - up[1:-1, :-2] -
               up[1:-1, 2:]) / h ** 2
        return lap - lam * torch.exp(u)
    return bratu


def case_sla(kind, N):
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import torch_sla
    base = _rss_mb()
    bratu = _torch_bratu()
    kw = {"sla_newton_direct": {},
          "sla_newton_amg": dict(linear_method="cg", preconditioner="amg", linear_rtol=1e-6),
          "sla_nk_amg": dict(method="newton_krylov", preconditioner="amg")}[kind]
    out = {}
    for rep in ("cold", "warm"):
        lam = torch.tensor(LAM, dtype=torch.float64, requires_grad=True)
        t0 = time.perf_counter()
        u, info = torch_sla.nonlinear_solve(bratu, torch.zeros(N, N, dtype=torch.float64), lam,
                                            rtol=RTOL, atol=0, return_info=True, **kw)
        t1 = time.perf_counter()
        u.sum().backward()
        t2 = time.perf_counter()
        if rep == "cold":
            out = dict(forward_s=t1 - t0, backward_s=t2 - t1, total_s=t2 - t0,
                       iterations=info.iterations, linear_iterations=info.linear_iterations,
                       residual_evaluations=info.residual_evaluations,
                       jacobian_products=info.jacobian_products, colors=info.colors,
                       converged=info.converged, residual_rel=info.residual / info.initial_residual,
                       grad=float(lam.grad), description=info.description[:200],
                       adjoint=info.adjoint.description[:200] if info.adjoint else None)
        else:
            out.update(forward_warm_s=t1 - t0, backward_warm_s=t2 - t1, total_warm_s=t2 - t0)
        del u, info
    out.update(peak_rss_mb=_rss_mb(), base_rss_mb=base, gradient=True)
    return out


def case_scipy(N):
    import numpy as np
    from scipy.optimize import root
    base = _rss_mb()
    h = 1.0 / (N + 1)

    def F(v):
        u = v.reshape(N, N)
        up = np.pad(u, 1)
        return ((4 * up[1:-1, 1:-1] - up[:-2, 1:-1] - up[2:, 1:-1] - up[1:-1, :-2] -
                 up[1:-1, 2:]) / h ** 2 - LAM * np.exp(u)).ravel()

    f0 = np.linalg.norm(F(np.zeros(N * N)))
    t0 = time.perf_counter()
    r = root(F, np.zeros(N * N), method="krylov",
             options=dict(fatol=RTOL * f0 / np.sqrt(N * N), maxiter=500))
    t1 = time.perf_counter()
    return dict(forward_s=t1 - t0, backward_s=None, total_s=t1 - t0, converged=bool(r.success),
                iterations=int(getattr(r, "nit", -1)),
                residual_rel=float(np.linalg.norm(F(r.x)) / f0), gradient=False,
                peak_rss_mb=_rss_mb(), base_rss_mb=base, description=str(r.message))


def case_torch_sla(N):
    import torch
    import torch_sla                      # torch-sla's, from PYTHONPATH (see main)
    from torch_sla import SparseTensor
    base = _rss_mb()
    n, h = N * N, 1.0 / (N + 1)
    idx = torch.arange(n).reshape(N, N)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    vals = [torch.full((n,), 4.0 / h ** 2, dtype=torch.float64)]
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        for r, c in ((a, b), (b, a)):
            rows.append(r.reshape(-1))
            cols.append(c.reshape(-1))
            vals.append(torch.full((r.numel(),), -1.0 / h ** 2, dtype=torch.float64))
    A = SparseTensor(torch.cat(vals), torch.cat(rows), torch.cat(cols), (n, n))
    lam = torch.tensor(LAM, dtype=torch.float64, requires_grad=True)

    def F(u, A, lam):
        return A @ u - lam * torch.exp(u)

    t0 = time.perf_counter()
    u = A.nonlinear_solve(F, torch.zeros(n, dtype=torch.float64), lam, tol=RTOL, atol=0.0)
    t1 = time.perf_counter()
    u.sum().backward()
    t2 = time.perf_counter()
    f0 = F(torch.zeros(n, dtype=torch.float64), A, LAM).norm()
    res = float(F(u.detach(), A, LAM).norm() / f0)
    return dict(forward_s=t1 - t0, backward_s=t2 - t1, total_s=t2 - t0, converged=res <= RTOL,
                residual_rel=res, grad=float(lam.grad), gradient=True, peak_rss_mb=_rss_mb(),
                base_rss_mb=base, torch_sla_file=torch_sla.__file__,
                description="torch-sla SparseTensor.nonlinear_solve (Newton, dense "
                            "torch.autograd.functional.jacobian, spsolve)")


# ------------------------------------------------------------------------------------------------
# the driver
# ------------------------------------------------------------------------------------------------
def run_case(name, N, timeout, torch_sla_path=None):
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    if name == "torch_sla_dense":
        env["PYTHONPATH"] = torch_sla_path
        env.pop("SLA_LIBRARY", None)
    cmd = [sys.executable, os.path.abspath(__file__), "--case", name, "--size", str(N)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                           cwd="/tmp" if name == "torch_sla_dense" else None)
    except subprocess.TimeoutExpired:
        return dict(case=name, N=N, n=N * N, error=f"timeout after {timeout} s")
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return dict(case=name, N=N, n=N * N, error=" | ".join(tail),
                    wall_s=time.perf_counter() - t0)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r.update(case=name, N=N, n=N * N)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="64,128,256,512")
    ap.add_argument("--torch-sla", default=os.environ.get("TORCH_SLA_SRC", "/tmp/torch-sla-src"))
    ap.add_argument("--torch-sla-sizes", default="16,32,48,64")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out")
    ap.add_argument("--case")
    ap.add_argument("--size", type=int)
    a = ap.parse_args(argv)
    if a.case:                                      # child process
        fn = {"scipy_krylov": lambda N: case_scipy(N),
              "torch_sla_dense": lambda N: case_torch_sla(N)}.get(
            a.case, lambda N: case_sla(a.case, N))
        print(json.dumps(fn(a.size)))
        return 0
    sizes = [int(s) for s in a.sizes.split(",")]
    results = []
    for N in sizes:
        for name in ("sla_newton_direct", "sla_newton_amg", "sla_nk_amg", "scipy_krylov"):
            results.append(run_case(name, N, a.timeout))
            print(json.dumps(results[-1]), file=sys.stderr)
    have_ts = os.path.isdir(os.path.join(a.torch_sla, "torch_sla"))
    if have_ts:
        for N in [int(s) for s in a.torch_sla_sizes.split(",")]:
            r = run_case("torch_sla_dense", N, min(a.timeout, 900), a.torch_sla)
            results.append(r)
            print(json.dumps(r), file=sys.stderr)
            if "error" in r:
                break
            for name in ("sla_newton_direct",):
                if N not in sizes:
                    results.append(run_case(name, N, a.timeout))
    ratios = {}

    def total(name, N):
        r = next((r for r in results if r["case"] == name and r["N"] == N and "error" not in r
                  and r.get("converged")), None)
        return r["total_s"] if r else None

    for N in sorted({r["N"] for r in results}):
        comp = {c: total(c, N) for c in ("scipy_krylov", "torch_sla_dense")}
        comp = {c: t for c, t in comp.items() if t}
        if not comp:
            continue
        best_c, best_t = min(comp.items(), key=lambda kv: kv[1])
        for name in ("sla_newton_direct", "sla_newton_amg", "sla_nk_amg"):
            t = total(name, N)
            if t:
                ratios[f"N={N}: {best_c} / {name}"] = best_t / t
    largest_ts = max((r["N"] for r in results if r["case"] == "torch_sla_dense" and
                      "error" not in r), default=None)
    out = dict(benchmark="bench/nonlinear.py", problem=f"2D Bratu λ = {LAM}, rtol {RTOL}, "
               "gradient dL/dλ of L = Σ u (scipy: forward only)",
               machine=platform.node(), cpus=os.cpu_count(), load_average=os.getloadavg(),
               omp_num_threads=os.environ.get("OMP_NUM_THREADS"),
               torch_sla_largest_N=largest_ts, results=results,
               ratios_best_competitor_over_sla=ratios)
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
