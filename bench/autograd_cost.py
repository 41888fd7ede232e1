"""Cost of torch_sla's backward passes: per-call times of forward, forward + first-order
backward, and (where the package supports it) a Hessian-vector product, on the 3844-unknown
SPD matrix of examples/inverse_coefficient.py (64 × 64 grid, CHOLMOD Cholesky through the
refactor cache), plus A @ x and logdet on the same matrix. One JSON object.

The first-order figures are the ones a training loop pays: the backward must cost one adjoint
solve (no extra solves, no extra Python graph) whatever double-backward support exists. Run it
twice in one session with PYTHONPATH pointing at two versions of the package to compare them
(timings on a shared machine are noisy: alternate the runs).

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/autograd_cost.py
[--repeats N] [--size S] [--method cholesky]
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import torch_sla  # noqa: E402
from torch_sla import SparseTensor  # noqa: E402
from inverse_coefficient import assembly_map  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import per_call  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--method", default="cholesky")
    args = ap.parse_args()
    size = args.size
    n = (size - 2) ** 2
    row, col, W = assembly_map(size)
    f = torch.ones(n, dtype=torch.float64)
    kappa0 = torch.full((size * size,), 1.0, dtype=torch.float64)
    kappa0 += 0.1 * torch.rand(size * size, generator=torch.Generator().manual_seed(0))
    vals0 = (W @ kappa0).detach()
    x0 = torch.linspace(0.5, 1.5, n, dtype=torch.float64)

    def solve_fwd():
        with torch.no_grad():
            SparseTensor(vals0, row, col, (n, n)).solve(f, method=args.method)

    def solve_fwd_bwd():
        v = vals0.clone().requires_grad_()
        bb = f.clone().requires_grad_()
        u = SparseTensor(v, row, col, (n, n)).solve(bb, method=args.method)
        u.pow(2).sum().backward()

    def matvec_fwd_bwd():
        v = vals0.clone().requires_grad_()
        x = x0.clone().requires_grad_()
        (SparseTensor(v, row, col, (n, n)) @ x).pow(2).sum().backward()

    def logdet_fwd_bwd():
        v = vals0.clone().requires_grad_()
        SparseTensor(v, row, col, (n, n)).logdet().backward()

    def solve_hvp():
        v = vals0.clone().requires_grad_()
        u = SparseTensor(v, row, col, (n, n)).solve(f, method=args.method)
        gv, = torch.autograd.grad(u.pow(2).sum(), v, create_graph=True)
        gv.backward(torch.ones_like(gv))

    out = {"problem": f"inverse_coefficient {size}x{size}: n = {n}, nnz = {row.numel()}, "
                      f"method {args.method}",
           "package": os.path.dirname(torch_sla.__file__),
           "threads": torch.get_num_threads(), "repeats": args.repeats,
           "solve_forward": per_call(solve_fwd, args.repeats),
           "solve_forward_backward": per_call(solve_fwd_bwd, args.repeats),
           "matvec_forward_backward": per_call(matvec_fwd_bwd, args.repeats),
           "logdet_forward_backward": per_call(logdet_fwd_bwd, max(args.repeats // 4, 5))}
    try:
        out["solve_hessian_vector_product"] = per_call(solve_hvp, args.repeats)
    except RuntimeError as e:
        out["solve_hessian_vector_product"] = f"unsupported: {e}"
    fb, fw = out["solve_forward_backward"]["median_ms"], out["solve_forward"]["median_ms"]
    out["ratio_backward_to_forward"] = (fb - fw) / fw
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
