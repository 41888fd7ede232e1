#!/usr/bin/python3
"""Inverse coefficient problem: recover the conductivity κ(x, y) of −∇·(κ∇u) = 1 on the unit
square (u = 0 on the boundary) from the noise-free solution u_obs, by gradient descent through
the sparse solver (torch_sla: the backward is one adjoint solve on the forward's factors).

    κ*(x, y) = 1 + 0.5·sin(2πx)·sin(2πy)
    grid: size × size nodes (default 64), h = 1/(size − 1), unknowns at the (size − 2)² interior
          nodes; 5-point finite-volume stencil, face conductivity = mean of its two nodes' κ
    parameters: κ = softplus(θ) on all size² nodes, θ₀ such that κ₀ = 1
    loss: ‖u − u_obs‖² + 1e-4 · mean over the nodes of the squared first differences of κ
          (Σ over both directions / size²)
    optimiser: Adam, lr 0.05, 2000 steps

Identifiability: κ enters the equations only through face conductivities of faces that touch
an interior node. A boundary node's κ is therefore seen through its single face to the
interior, and the four corner nodes are not seen at all (their gradient is the regulariser's
alone; κ* = 1 there and they start at 1).

Solver: every step builds A(κ) on the same pattern, so torch_sla refactors one cached solver
(numeric work only) and the backward reuses its factors for the adjoint solve. The default
method is CHOLMOD's Cholesky (A is SPD); for this 3844-unknown matrix its refactorization took
1.4 ms against 1.9 ms for KLU, 3.3 ms for MUMPS LDLᵀ and 5.2 ms for UMFPACK LU
(--method klu, ldlt, lu, cg, ... select the others). CHOLMOD's rule picks a simplicial factor
here (flops/nnz(L) = 37 < 40) with AMD (nnz(L) 62.5k; METIS 63.9k): the raw cholmod_factorize
took 1.24–1.31 ms simplicial against 3.4–4.0 ms supernodal (too many small supernodes for BLAS to
pay). Every libsla kernel of this size runs on one thread (below the 4 MiB rule of
docs/krylov.md, "Threads"), so the thread count does not matter. The per-step profile against a
SciPy-splu autograd Function is bench/inverse_step.py.

Run:  PYTHONPATH=python /usr/bin/python3 examples/inverse_coefficient.py [--steps N] [--size S]
      [--method cholesky|klu|ldlt|lu|cg|...] [--out inverse_coefficient.png] [--lr 0.05]
"""
import argparse
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import torch_sla  # noqa: E402
from torch_sla import SparseTensor  # noqa: E402


def kappa_true(size):
    """κ* on the size × size nodes, [size, size] (index [i, j] ↔ (x_i, y_j))."""
    t = torch.linspace(0.0, 1.0, size, dtype=torch.float64)
    x, y = torch.meshgrid(t, t, indexing="ij")
    return 1.0 + 0.5 * torch.sin(2 * math.pi * x) * torch.sin(2 * math.pi * y)


def assembly_map(size):
    """The stiffness matrix's pattern (row, col, in CSR order) and the constant sparse map W
    with values = W @ κ (nnz × size²), so that A(κ) = SparseTensor(W @ κ, row, col, (n, n)).

    Row P = interior node (i, j); each of its 4 faces, to neighbour Q, has conductivity
    κ_f = (κ_P + κ_Q)/2 and adds κ_f/h² to A[P, P], and −κ_f/h² as A[P, Q] when Q is
    interior (a boundary Q has u = 0 and only contributes to the diagonal)."""
    m, n = size - 2, (size - 2) ** 2
    inv_h2 = float((size - 1) ** 2)
    ii, jj = torch.meshgrid(torch.arange(1, size - 1), torch.arange(1, size - 1), indexing="ij")
    ii, jj = ii.reshape(-1), jj.reshape(-1)             # interior nodes, in unknown order
    unk = (ii - 1) * m + (jj - 1)                        # unknown of node (i, j)
    node = ii * size + jj                                # κ index of node (i, j)
    rows, cols = [unk], [unk]                            # entries 0..n−1: the diagonal
    w_row, w_col, w_val = [], [], []
    count = n
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        qi, qj = ii + di, jj + dj
        qnode = qi * size + qj
        for k in (node, qnode):                          # diagonal += ½(κ_P + κ_Q)/h²
            w_row.append(unk)
            w_col.append(k)
            w_val.append(torch.full((n,), 0.5 * inv_h2, dtype=torch.float64))
        inner = (qi >= 1) & (qi <= size - 2) & (qj >= 1) & (qj <= size - 2)
        e = torch.arange(count, count + int(inner.sum()))
        rows.append(unk[inner])
        cols.append(((qi - 1) * m + (qj - 1))[inner])
        for k in (node[inner], qnode[inner]):            # A[P, Q] = −½(κ_P + κ_Q)/h²
            w_row.append(e)
            w_col.append(k)
            w_val.append(torch.full((e.numel(),), -0.5 * inv_h2, dtype=torch.float64))
        count += e.numel()
    row, col = torch.cat(rows), torch.cat(cols)
    order = torch.argsort(row * n + col)                 # CSR order: no gather at solve time
    rank = torch.empty_like(order)
    rank[order] = torch.arange(count)
    W = SparseTensor(torch.cat(w_val), rank[torch.cat(w_row)], torch.cat(w_col),
                     (count, size * size))
    return row[order], col[order], W


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=64, help="grid nodes per side (default 64)")
    ap.add_argument("--steps", type=int, default=2000, help="Adam steps (default 2000)")
    ap.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (default 0.05)")
    ap.add_argument("--reg", type=float, default=1e-4, help="regularisation weight (1e-4)")
    ap.add_argument("--method", default="cholesky",
                    help="torch_sla solve method (default cholesky)")
    ap.add_argument("--out", default="inverse_coefficient.png", help="PNG path ('' = none)")
    ap.add_argument("--print-every", type=int, default=100)
    args = ap.parse_args(argv)
    if args.size < 4:
        ap.error("--size must be ≥ 4")
    if args.steps < 1 or args.print_every < 1:
        ap.error("--steps and --print-every must be ≥ 1")
    if not (args.lr > 0 and math.isfinite(args.lr)) or not (args.reg >= 0 and
                                                            math.isfinite(args.reg)):
        ap.error("--lr must be finite and > 0, --reg finite and ≥ 0")
    try:
        if not torch_sla.method_available(args.method):
            ap.error(f"--method {args.method}: no backend of this libsla serves it "
                     f"(see torch_sla.show_backends())")
    except ValueError as e:
        ap.error(f"--method: {e}")
    out_dir = os.path.dirname(os.path.abspath(args.out)) if args.out else None
    if out_dir and not os.access(out_dir, os.W_OK):      # fail before training, not after
        ap.error(f"--out {args.out}: directory {out_dir} does not exist or is not writable")

    size, n = args.size, (args.size - 2) ** 2
    row, col, W = assembly_map(size)
    f = torch.ones(n, dtype=torch.float64)

    def solve(kappa_nodes):
        A = SparseTensor(W @ kappa_nodes, row, col, (n, n))
        return A.solve(f, method=args.method)

    k_true = kappa_true(size)
    with torch.no_grad():
        u_obs = solve(k_true.reshape(-1))

    theta = torch.full((size * size,), math.log(math.e - 1.0), dtype=torch.float64,
                       requires_grad=True)                 # softplus(θ₀) = 1
    opt = torch.optim.Adam([theta], lr=args.lr)
    print(f"inverse coefficient: {size}×{size} nodes, {n} unknowns, nnz(A) = {row.numel()}, "
          f"method {args.method}, Adam lr {args.lr}, {args.steps} steps "
          f"(libsla {torch_sla.__version__}, {torch.get_num_threads()} torch threads)")
    losses = []
    k_true_norm = torch.linalg.norm(k_true)
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        opt.zero_grad(set_to_none=True)
        kappa = torch.nn.functional.softplus(theta)
        u = solve(kappa)
        k2 = kappa.reshape(size, size)
        diffs = torch.cat([(k2[1:, :] - k2[:-1, :]).reshape(-1),
                           (k2[:, 1:] - k2[:, :-1]).reshape(-1)])
        misfit = (u - u_obs).pow(2).sum()
        # the mean per node of the squared first differences (both directions summed, divided
        # by the size² nodes), the normalisation of torch-sla's reference benchmark; dividing by
        # the number of differences instead (≈ 2·size²) halves the regulariser, and 2000 steps
        # then end at 1.03 % κ error instead of 0.48 %
        loss = misfit + args.reg * diffs.pow(2).sum() / k2.numel()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step % args.print_every == 0 or step == 1 or step == args.steps:
            k_rel = float(torch.linalg.norm(k2.detach() - k_true) / k_true_norm)
            print(f"  step {step:5d}  loss {losses[-1]:.6e}  misfit {float(misfit):.3e}  "
                  f"kappa error {100 * k_rel:.3f} %")
    wall = time.perf_counter() - t0

    with torch.no_grad():
        kappa = torch.nn.functional.softplus(theta).reshape(size, size)
        u = solve(kappa.reshape(-1))
        err = (kappa - k_true).abs()
        rel = lambda mask: float(torch.linalg.norm((kappa - k_true)[mask]) /
                                 torch.linalg.norm(k_true[mask]))
        interior = torch.zeros(size, size, dtype=torch.bool)
        interior[1:-1, 1:-1] = True
        corners = torch.zeros(size, size, dtype=torch.bool)
        corners[0, 0] = corners[0, -1] = corners[-1, 0] = corners[-1, -1] = True
        boundary = ~interior & ~corners
        k_err = rel(torch.ones(size, size, dtype=torch.bool))
        k_err_int, k_err_bnd = rel(interior), rel(boundary)
        u_err = float(torch.linalg.norm(u - u_obs) / torch.linalg.norm(u_obs))
        worst = divmod(int(err.argmax()), size)
    h = 1.0 / (size - 1)
    print(f"kappa relative L2 error: {k_err:.4e} over all {size * size} nodes "
          f"({100 * k_err:.3f} %)")
    print(f"  interior nodes {k_err_int:.4e}, boundary nodes without corners {k_err_bnd:.4e}, "
          f"corners (seen by no face) max |error| {float(err[corners].max()):.3e}; "
          f"max |error| {float(err.max()):.3e} at (x, y) = ({worst[0] * h:.3f}, "
          f"{worst[1] * h:.3f})")
    print(f"u relative L2 error:     {u_err:.4e}")
    print(f"wall time {wall:.2f} s for {args.steps} steps = {1e3 * wall / args.steps:.2f} ms/step")

    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(1, 4, figsize=(17, 4))
        ext = (0, 1, 0, 1)
        for a, img, title in ((ax[0], k_true, "κ* (true)"), (ax[1], kappa, "κ recovered")):
            im = a.imshow(img.T.numpy(), origin="lower", extent=ext, cmap="viridis",
                          vmin=float(k_true.min()), vmax=float(k_true.max()))
            a.set_title(title)
            fig.colorbar(im, ax=a, fraction=0.046)
        im = ax[2].imshow(err.T.numpy(), origin="lower", extent=ext, cmap="magma")
        ax[2].set_title(f"|κ − κ*| (rel. L2 {100 * k_err:.2f} %)")
        fig.colorbar(im, ax=ax[2], fraction=0.046)
        ax[3].semilogy(losses)
        ax[3].set_xlabel("Adam step")
        ax[3].set_title("loss")
        ax[3].grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(args.out, dpi=110)
        print(f"saved {args.out}")
    return {"kappa_error": k_err, "kappa_error_interior": k_err_int,
            "kappa_error_boundary": k_err_bnd, "u_error": u_err,
            "wall_s": wall, "ms_per_step": 1e3 * wall / args.steps, "losses": losses}


if __name__ == "__main__":
    main()
