#!/usr/bin/python3
"""Memory and time of the gradient of ‖x‖² through k CG iterations: torch_sla's adjoint
(the backward is one more CG solve, O(n + nnz) memory whatever k) against a naive CG written
with torch operations under autograd (what users write without us: the graph keeps every
iterate, O(k·(n + nnz)) memory).

Problem: 2D Poisson, 5-point stencil, 316 × 316 grid (99 856 unknowns, 498 697 nonzeros),
b = 1, x = CG_k(A, b) with maxiter = k and rtol = atol = 0 (exactly k iterations, no
preconditioner on either side), loss = ‖x‖², gradient with respect to the matrix values and b.

Each (implementation, k) runs in its own process under an address-space limit
(RLIMIT_AS, --limit-gb, default 6): peak RSS is the high-water mark of that process from just
before the forward (reset through /proc/self/clear_refs when the kernel allows it, else the
process's whole-life peak), and a run that exceeds the limit is recorded as out of memory.

A run that exceeds the limit is also estimated by extrapolating the naive runs that fitted
(linear in k: the graph grows by the same amount per iteration). Prints one JSON object. Run: /usr/bin/python3 bench/adjoint_memory.py [--grid 316]
[--iters 10 100 1000 2000] [--limit-gb 6]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------------------------------------
# Child process: one measurement
# ------------------------------------------------------------------------------------------------
def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak():
    """Resets VmHWM to the current RSS (Linux ≥ 4.0). Returns True if it worked."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def poisson(grid):
    import torch
    n = grid * grid
    idx = torch.arange(n).reshape(grid, grid)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    vals = [torch.full((n,), 4.0, dtype=torch.float64)]
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        for r, c in ((a, b), (b, a)):
            rows.append(r.reshape(-1))
            cols.append(c.reshape(-1))
            vals.append(torch.full((r.numel(),), -1.0, dtype=torch.float64))
    row, col, val = torch.cat(rows), torch.cat(cols), torch.cat(vals)
    order = torch.argsort(row * n + col)
    return row[order], col[order], val[order], n


def naive_cg(val, row, col, n, b, k):
    """Plain CG with torch operations (autograd records every iteration)."""
    import torch

    def matvec(p):
        return torch.zeros(n, dtype=p.dtype).index_add(0, row, val * p[col])

    x = torch.zeros_like(b)
    r = b.clone()
    p = r.clone()
    rr = r @ r
    for _ in range(k):
        Ap = matvec(p)
        alpha = rr / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def child(impl, k, grid):
    import warnings
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    row, col, val0, n = poisson(grid)
    val = val0.clone().requires_grad_()
    b = torch.ones(n, dtype=torch.float64, requires_grad=True)
    out = {"impl": impl, "iterations": k}
    if impl == "torch_sla":
        import torch_sla
        if not torch_sla.method_available("cg"):
            out["status"] = "unavailable: no libsla backend serves cg yet"
            return out
        A = torch_sla.SparseTensor(val, row, col, (n, n))
        solve = lambda: A.solve(b, method="cg", preconditioner="none", rtol=0.0, atol=0.0,
                                maxiter=k, return_info=True)
    else:
        solve = lambda: (naive_cg(val, row, col, n, b, k), None)
    warnings.simplefilter("ignore")          # rtol = 0: "not converged" by design
    baseline_kb = _status_kb("VmRSS")
    out["peak_reset"] = _reset_peak()
    try:
        t0 = time.perf_counter()
        x, info = solve()
        loss = (x * x).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
    except (MemoryError, RuntimeError) as e:
        if isinstance(e, MemoryError) or "alloc" in str(e).lower() or "memory" in str(e).lower():
            out.update(status="out of memory", error=str(e).splitlines()[0][:200],
                       peak_rss_mb=_status_kb("VmHWM") / 1024, baseline_rss_mb=baseline_kb / 1024)
            return out
        raise
    peak_kb = _status_kb("VmHWM") if out["peak_reset"] else \
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out.update(status="ok", forward_s=t1 - t0, backward_s=t2 - t1,
               peak_rss_mb=peak_kb / 1024, baseline_rss_mb=baseline_kb / 1024,
               extra_mb=(peak_kb - baseline_kb) / 1024,
               loss=float(loss), grad_values_norm=float(val.grad.norm()),
               grad_b_norm=float(b.grad.norm()))
    if info is not None:
        out["iterations_done"] = info.iterations
        out["adjoint_iterations"] = info.adjoint.iterations if info.adjoint else None
    return out


# ------------------------------------------------------------------------------------------------
# Parent: run every case in its own process under the memory limit
# ------------------------------------------------------------------------------------------------
def run_case(impl, k, grid, limit_gb, timeout):
    limit = int(limit_gb * 2 ** 30)

    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    cmd = [sys.executable, os.path.abspath(__file__), "--child", impl, str(k), "--grid",
           str(grid)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=preexec,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"impl": impl, "iterations": k, "status": f"timeout after {timeout} s"}
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode == 0 and lines:
        return json.loads(lines[-1])
    err = (p.stderr.strip().splitlines() or [""])[-1][:300]
    oom = p.returncode < 0 or "memory" in err.lower() or "alloc" in err.lower()
    return {"impl": impl, "iterations": k,
            "status": "out of memory" if oom else f"failed (exit {p.returncode})",
            "error": err}


def _naive_estimate(runs, k):
    """Extra memory (MB) of the naive run at k iterations, extrapolated linearly in k from the
    naive runs that fitted under the limit (the graph grows by the same amount every
    iteration); None with fewer than two such runs."""
    ok = [(r["iterations"], r["extra_mb"]) for r in runs
          if r["impl"] == "naive" and r.get("status") == "ok"]
    if len(ok) < 2:
        return None
    (k0, m0), (k1, m1) = ok[-2], ok[-1]
    slope = (m1 - m0) / (k1 - k0)
    return m1 + slope * (k - k1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--grid", type=int, default=316)
    ap.add_argument("--iters", type=int, nargs="+", default=[10, 100, 1000, 2000])
    ap.add_argument("--limit-gb", type=float, default=6.0)
    ap.add_argument("--timeout", type=float, default=1200.0)
    ap.add_argument("--child", nargs=2, metavar=("IMPL", "K"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.grid < 2 or any(k < 1 for k in args.iters):
        ap.error("--grid must be ≥ 2 and every --iters value ≥ 1")
    if not (args.limit_gb > 0 and args.timeout > 0):
        ap.error("--limit-gb and --timeout must be > 0")
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]), args.grid)))
        return
    runs = []
    for k in args.iters:
        for impl in ("torch_sla", "naive"):
            r = run_case(impl, k, args.grid, args.limit_gb, args.timeout)
            runs.append(r)
            print(f"# {impl:9s} k={k:5d}: {r.get('status')}  peak {r.get('peak_rss_mb', 0):.0f} MB"
                  f"  extra {r.get('extra_mb', float('nan')):.0f} MB  fwd "
                  f"{r.get('forward_s', float('nan')):.3f} s  bwd "
                  f"{r.get('backward_s', float('nan')):.3f} s", file=sys.stderr)
    ratios = {}
    for k in args.iters:
        a = next(r for r in runs if r["impl"] == "torch_sla" and r["iterations"] == k)
        b = next(r for r in runs if r["impl"] == "naive" and r["iterations"] == k)
        if a.get("status") == "ok" and b.get("status") == "ok":
            ratios[str(k)] = {"peak_rss": b["peak_rss_mb"] / a["peak_rss_mb"],
                              "extra_memory": b["extra_mb"] / max(a["extra_mb"], 1e-3),
                              "time": (b["forward_s"] + b["backward_s"]) /
                                      (a["forward_s"] + a["backward_s"])}
        elif a.get("status") == "ok" and b.get("status") == "out of memory":
            est = _naive_estimate(runs, k)
            r = {"naive": f"out of memory under {args.limit_gb} GB",
                 "extra_memory_lower_bound": (args.limit_gb * 1024 - b.get("baseline_rss_mb", 0))
                 / max(a["extra_mb"], 1e-3)}
            if est is not None:
                r.update(naive_extra_mb_estimated=est, naive_peak_rss_mb_estimated=est +
                         a["baseline_rss_mb"], extra_memory_estimated=est / max(a["extra_mb"], 1e-3),
                         peak_rss_estimated=(est + a["baseline_rss_mb"]) / a["peak_rss_mb"])
            ratios[str(k)] = r
    n = args.grid ** 2
    print(json.dumps({
        "benchmark": "adjoint_memory",
        "problem": {"grid": args.grid, "n": n, "nnz": 5 * n - 4 * args.grid,
                    "loss": "||x||^2, x = CG_k(A, b), rtol = atol = 0, no preconditioner",
                    "gradient": "values and b"},
        "memory_limit_gb": args.limit_gb,
        "note": "naive = unrolled CG under torch autograd (differentiates the truncated "
                "iteration); torch_sla = adjoint (one transposed CG solve of the same length)",
        "runs": runs, "ratios_naive_over_torch_sla": ratios}, indent=1))


if __name__ == "__main__":
    main()
