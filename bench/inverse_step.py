"""The main job's training step (examples/inverse_coefficient.py): torch_sla against torch-sla's
approach (a SciPy LU backend: scipy.sparse.linalg.splu inside a torch.autograd.Function, the
backward one transposed solve on the same LU factors), in the same run, same loop, same steps.

For each backend: ms per step over the whole run, the fastest and median step by wall time and
by process CPU time (all threads; on a shared machine a step's wall time includes other jobs'
time slices, its CPU time does not), the final κ relative L2 error (all nodes),
and a per-step profile by phase (wall time, mean per step):
  assembly   values = W @ κ and the SparseTensor (torch_sla's SpMV and its autograd node)
  forward    A.solve(f): for torch_sla the refactor (CHOLMOD numeric factorization + condition
             estimate) and the solve, for SciPy the CSC build, splu and the solve
  loss       the misfit and the regulariser in torch
  backward   loss.backward(): the adjoint solve and ∂values (VJP), the assembly's VJP, autograd
  adam       opt.step() and zero_grad
and, for torch_sla, the C calls inside forward/backward (refactor, solve, solve_vjp) timed by
wrapping torch_sla's solver methods. Prints one JSON object.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/inverse_step.py
     [--steps 2000] [--size 64] [--skip-scipy]
"""
import argparse
import json
import math
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
import torch  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "examples"))
sys.path.insert(0, os.path.join(here, "..", "python"))
import torch_sla  # noqa: E402
from torch_sla import _solver  # noqa: E402
from inverse_coefficient import assembly_map, kappa_true  # noqa: E402


class SciPyLUSolve(torch.autograd.Function):
    """x = A(values)⁻¹ b by SuperLU (splu), torch-sla's SciPy backend: the backward solves
    Aᵀ λ = g on the same factors, ∂values_k = −λ[row_k]·x[col_k], ∂b = λ."""

    @staticmethod
    def forward(ctx, values, b, row, col, n):
        A = sp.csc_matrix((values.detach().numpy(), (row.numpy(), col.numpy())), shape=(n, n))
        lu = spla.splu(A)
        x = torch.from_numpy(lu.solve(b.detach().numpy()))
        ctx.lu, ctx.row, ctx.col = lu, row, col
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        lam = torch.from_numpy(ctx.lu.solve(g.detach().numpy(), trans="T"))
        return -lam[ctx.row] * x[ctx.col], lam, None, None, None


class Timers:
    """Wall times by phase name, one entry per step (the calls of a phase within one step
    summed). Reported as the median over the steps: on a machine shared with other jobs the
    mean mostly measures the time slices lost to them."""

    def __init__(self):
        self.t = {}
        self.step = 0

    def add(self, name, dt):
        v = self.t.setdefault(name, [])
        while len(v) <= self.step:
            v.append(0.0)
        v[self.step] += dt

    def next_step(self):
        self.step += 1

    def per_step_ms(self, steps, q=0.5):
        """quantile q over the steps (0.5: median; 0: the fastest step, the machine's
        uncontended time)"""
        out = {}
        for k, v in self.t.items():
            v = sorted(v[:steps] + [0.0] * (steps - len(v)))
            out[k] = 1e3 * v[min(len(v) - 1, int(q * len(v)))]
        return out


def wrap_solver_methods(timers):
    originals = {n: getattr(_solver.Solver, n) for n in ("refactor", "solve", "solve_vjp")}
    """Times torch_sla's calls into C (Solver.refactor / solve / solve_vjp)."""
    for name in ("refactor", "solve", "solve_vjp"):
        fn = getattr(_solver.Solver, name)

        def timed(self, *a, _fn=fn, _name=name, **k):
            t0 = time.perf_counter()
            try:
                return _fn(self, *a, **k)
            finally:
                timers.add("c_" + _name, time.perf_counter() - t0)
        setattr(_solver.Solver, name, timed)
    return lambda: [setattr(_solver.Solver, n, f) for n, f in originals.items()]


def train(backend, size, steps, lr=0.05, reg=1e-4, profile=False, T=None):
    n = (size - 2) ** 2
    row, col, W = assembly_map(size)
    f = torch.ones(n, dtype=torch.float64)
    k_true = kappa_true(size)
    if backend == "sla":
        def solve(kappa):
            A = torch_sla.SparseTensor(W @ kappa, row, col, (n, n))
            return A.solve(f, method="cholesky")
    else:
        def solve(kappa):
            return SciPyLUSolve.apply(W @ kappa, f, row, col, n)
    with torch.no_grad():
        u_obs = solve(k_true.reshape(-1))
    theta = torch.full((size * size,), math.log(math.e - 1.0), dtype=torch.float64,
                       requires_grad=True)
    opt = torch.optim.Adam([theta], lr=lr)
    T = T or Timers()
    clock, cpu = time.perf_counter, time.process_time
    t_start = clock()
    for _ in range(steps):
        c0 = cpu()
        t0 = clock()
        opt.zero_grad(set_to_none=True)
        kappa = torch.nn.functional.softplus(theta)
        if profile:
            t1 = clock()
            vals = W @ kappa
            t2 = clock()
            if backend == "sla":
                u = torch_sla.SparseTensor(vals, row, col, (n, n)).solve(f, method="cholesky")
            else:
                u = SciPyLUSolve.apply(vals, f, row, col, n)
            t3 = clock()
        else:
            u = solve(kappa)
        k2 = kappa.reshape(size, size)
        diffs = torch.cat([(k2[1:, :] - k2[:-1, :]).reshape(-1),
                           (k2[:, 1:] - k2[:, :-1]).reshape(-1)])
        loss = (u - u_obs).pow(2).sum() + reg * diffs.pow(2).sum() / k2.numel()
        t4 = clock()
        loss.backward()
        t5 = clock()
        opt.step()
        t6 = clock()
        if profile:
            T.add("softplus+zero_grad", t1 - t0)
            T.add("assembly", t2 - t1)
            T.add("forward", t3 - t2)
            T.add("loss", t4 - t3)
        T.add("backward", t5 - t4)
        T.add("adam", t6 - t5)
        T.add("step", t6 - t0)
        T.add("step_cpu", cpu() - c0)
        T.next_step()
    wall = clock() - t_start
    with torch.no_grad():
        kappa = torch.nn.functional.softplus(theta).reshape(size, size)
        k_err = float(torch.linalg.norm(kappa - k_true) / torch.linalg.norm(k_true))
    return {"ms_per_step": 1e3 * wall / steps,
            "median_ms_per_step": T.per_step_ms(steps)["step"],
            "best_ms_per_step": T.per_step_ms(steps, 0.0)["step"],
            "median_cpu_ms_per_step": T.per_step_ms(steps)["step_cpu"],
            "best_cpu_ms_per_step": T.per_step_ms(steps, 0.0)["step_cpu"], "kappa_error": k_err,
            "final_loss": float(loss), "phases_ms_per_step": T.per_step_ms(steps),
            "phases_best_ms": T.per_step_ms(steps, 0.0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--profile-steps", type=int, default=300)
    ap.add_argument("--skip-scipy", action="store_true")
    args = ap.parse_args()
    out = {"benchmark": "inverse_step", "size": args.size, "unknowns": (args.size - 2) ** 2,
           "steps": args.steps, "torch": torch.__version__, "scipy": scipy.__version__,
           "torch_num_threads": torch.get_num_threads(),
           "sla_num_threads": torch_sla.get_num_threads(),
           "loadavg_start": os.getloadavg()}
    # whole runs (no per-phase timers), torch_sla first, then SciPy, then torch_sla again so
    # that a change of machine load shows as a spread between the two torch_sla runs
    runs = {"sla": [train("sla", args.size, args.steps)]}
    if not args.skip_scipy:
        runs["scipy_splu"] = [train("scipy", args.size, args.steps)]
    runs["sla"].append(train("sla", args.size, args.steps))
    out["runs"] = runs
    if not args.skip_scipy:
        sc = runs["scipy_splu"][0]
        out["ratio_scipy_over_sla_median_step"] = [sc["median_ms_per_step"] /
                                                   r["median_ms_per_step"] for r in runs["sla"]]
        out["ratio_scipy_over_sla_wall"] = [sc["ms_per_step"] / r["ms_per_step"]
                                            for r in runs["sla"]]
        out["ratio_scipy_over_sla_best_step"] = [sc["best_ms_per_step"] / r["best_ms_per_step"]
                                                 for r in runs["sla"]]
        # process CPU time per step (all threads): on a shared machine the wall time of a step
        # includes other jobs' time slices, its CPU time does not
        out["ratio_scipy_over_sla_median_cpu_step"] = [
            sc["median_cpu_ms_per_step"] / r["median_cpu_ms_per_step"] for r in runs["sla"]]
        out["ratio_scipy_over_sla_best_cpu_step"] = [
            sc["best_cpu_ms_per_step"] / r["best_cpu_ms_per_step"] for r in runs["sla"]]
    # per-phase profiles on shorter runs
    timers = Timers()
    restore = wrap_solver_methods(timers)
    out["profile_sla"] = train("sla", args.size, args.profile_steps, profile=True, T=timers)
    restore()
    if not args.skip_scipy:
        out["profile_scipy_splu"] = train("scipy", args.size, args.profile_steps, profile=True)
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
