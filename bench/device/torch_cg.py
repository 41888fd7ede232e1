"""The PyTorch side of bench/device/run.sh: CG + Jacobi on the GPU for the 2D Poisson 5-point
matrix of side N (float64, b = 1, rtol 1e-8), timed like bench_cuda_cg (best of --reps after a
warm-up, torch.cuda.synchronize() around each solve). Uses torch-sla's own
``pcg_solve_fused(preconditioner='jacobi')`` when its package was carried to
.carry/torch-sla (bench/device/prepare.sh); otherwise a plain PyTorch CG with the same
kernels torch-sla's loop uses (CSR torch.mv, vdot, add_), labelled as such. Prints JSON."""
import argparse
import json
import os
import sys
import time

import torch


def poisson(n, device):
    idx = torch.arange(n * n, device=device)
    i, j = idx // n, idx % n
    rows, cols, vals = [idx], [idx], [torch.full((n * n,), 4.0, dtype=torch.float64, device=device)]
    for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        ok = (i + di >= 0) & (i + di < n) & (j + dj >= 0) & (j + dj < n)
        rows.append(idx[ok])
        cols.append(((i + di) * n + j + dj)[ok])
        vals.append(torch.full((int(ok.sum()),), -1.0, dtype=torch.float64, device=device))
    return torch.cat(vals), torch.cat(rows), torch.cat(cols)


def plain_cg(val, row, col, n, b, rtol, maxiter):
    A = torch.sparse_coo_tensor(torch.stack([row, col]), val, (n, n)).coalesce().to_sparse_csr()
    d = torch.zeros(n, dtype=val.dtype, device=val.device).index_add_(0, row[row == col], val[row == col])
    dinv = 1.0 / d
    x = torch.zeros_like(b)
    r = b.clone()
    z = dinv * r
    p = z.clone()
    rz = torch.dot(r, z)
    bn = torch.linalg.norm(b)
    it = 0
    while it < maxiter:
        Ap = torch.mv(A, p)
        alpha = rz / torch.dot(p, Ap)
        x.add_(p, alpha=alpha)
        r.add_(Ap, alpha=-alpha)
        it += 1
        if torch.linalg.norm(r) <= rtol * bn:       # one sync per iteration, as CG needs
            break
        torch.mul(dinv, r, out=z)
        rz_new = torch.dot(r, z)
        p.mul_(rz_new / rz).add_(z)
        rz = rz_new
    return x, it


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--carry", default=os.path.join(os.getcwd(), ".carry", "torch-sla"))
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"skipped": "torch sees no CUDA device"}))
        return
    dev = torch.device("cuda")
    val, row, col = poisson(a.n, dev)
    n = a.n * a.n
    b = torch.ones(n, dtype=torch.float64, device=dev)
    fused, label, why = None, "plain PyTorch CG + Jacobi (torch-sla not carried)", ""
    if os.path.isdir(os.path.join(a.carry, "torch_sla")):
        sys.path.insert(0, a.carry)
        try:
            from torch_sla.backends.pytorch_backend import pcg_solve_fused as fused
            label = "torch-sla pcg_solve_fused(preconditioner='jacobi')"
        except Exception as e:        # their package's own imports may need more than is here
            why = f"torch-sla import failed: {e!r}"

    def run():
        if fused is not None:
            res = fused(val, row, col, (n, n), b, atol=0.0, rtol=a.rtol, maxiter=100000,
                        preconditioner="jacobi")
            return res.x, int(res.num_iters)
        return plain_cg(val, row, col, n, b, a.rtol, 100000)

    times = []
    for r in range(a.reps + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x, iters = run()
        torch.cuda.synchronize()
        if r:
            times.append(time.perf_counter() - t0)
    A = torch.sparse_coo_tensor(torch.stack([row, col]), val, (n, n)).coalesce()
    rel = float(torch.linalg.norm(b - torch.sparse.mm(A, x.unsqueeze(1)).squeeze(1)) /
                torch.linalg.norm(b))
    print(json.dumps({"solver": label, "note": why, "side": a.n, "unknowns": n,
                      "iterations": iters, "relative_residual": rel,
                      "solve_ms_min": 1e3 * min(times),
                      "solve_ms_median": 1e3 * sorted(times)[len(times) // 2],
                      "torch": torch.__version__}, indent=1))


if __name__ == "__main__":
    main()
