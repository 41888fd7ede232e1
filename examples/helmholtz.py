#!/usr/bin/python3
"""2D Helmholtz with an absorbing (complex-shifted) boundary layer: recover the complex
amplitudes of point sources and the complex strength of a scatterer from the wave field seen
at receivers, by gradient descent through a complex sparse solve (torch_sla, complex128: the
backward is one adjoint solve with Aᴴ on the forward's LU factors).

    −Δu − k²·(1 + i·σ(x, y) + c·m(x, y))·u = Σ_j q_j·δ(x − s_j)   on the unit square, u = 0 outside
    σ: a sponge layer, 0 inside and σ_max·(d/w)² within w of the boundary (the complex shift
       absorbs outgoing waves instead of reflecting them)
    m: a Gaussian bump (the scatterer), c its complex strength (c* = 0.3 + 0.1i)
    q: three complex source amplitudes (q* below)
    grid: size × size interior nodes, 5-point Laplacian, h = 1/(size + 1); k = 2π·waves
    data: u*(receivers), receivers on a ring; loss: Σ |u − u*|² / Σ |u*|² at the receivers
    optimiser: Adam on the complex parameters (q, c), lr 0.05

A(c) = L − k²(1 + iσ) − c·k²·m is complex symmetric (not Hermitian): method auto takes sparse LU
(UMFPACK's complex factorization). Every step refactors the cached solver on the same pattern.

Run:  PYTHONPATH=python /usr/bin/python3 examples/helmholtz.py [--size 96] [--steps 300]
      [--waves 6] [--out helmholtz.png]
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

c128 = torch.complex128
Q_TRUE = (1.0 + 0.5j, -0.7 + 0.8j, 0.4 - 1.1j)
C_TRUE = 0.3 + 0.1j


def grid(size):
    """Node coordinates (x, y) [size²] of the interior nodes, h."""
    h = 1.0 / (size + 1)
    t = torch.arange(1, size + 1, dtype=torch.float64) * h
    x, y = torch.meshgrid(t, t, indexing="ij")
    return x.reshape(-1), y.reshape(-1), h


def laplacian(size, h):
    """(row, col, values) of the 5-point −Δ (Dirichlet), in CSR order."""
    n = size * size
    idx = torch.arange(n)
    i, j = idx // size, idx % size
    rows, cols, vals = [idx], [idx], [torch.full((n,), 4.0 / h ** 2, dtype=torch.float64)]
    for di, dj in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        ok = (i + di >= 0) & (i + di < size) & (j + dj >= 0) & (j + dj < size)
        rows.append(idx[ok])
        cols.append(((i + di) * size + (j + dj))[ok])
        vals.append(torch.full((int(ok.sum()),), -1.0 / h ** 2, dtype=torch.float64))
    row, col, val = torch.cat(rows), torch.cat(cols), torch.cat(vals)
    order = torch.argsort(row * n + col)
    return row[order], col[order], val[order]


def setup(size, waves, width=0.15, sigma_max=2.0):
    x, y, h = grid(size)
    k2 = (2 * math.pi * waves) ** 2
    d = torch.clamp(width - torch.minimum(torch.minimum(x, 1 - x), torch.minimum(y, 1 - y)),
                    min=0) / width
    sigma = sigma_max * d ** 2
    bump = torch.exp(-((x - 0.62) ** 2 + (y - 0.45) ** 2) / (2 * 0.06 ** 2))
    row, col, lap = laplacian(size, h)
    diag = row == col
    base = lap.to(c128)
    base[diag] -= k2 * (1 + 1j * sigma[row[diag]])
    bump_vals = torch.zeros_like(base)
    bump_vals[diag] = -k2 * bump[row[diag]].to(c128)
    # sources at three nodes (point sources: δ/h²), receivers on a ring of radius 0.3
    n = size * size

    def node(px, py):
        return int(round(px / h - 1)) * size + int(round(py / h - 1))
    src = torch.tensor([node(0.3, 0.3), node(0.35, 0.7), node(0.7, 0.65)])
    S = torch.zeros(n, 3, dtype=c128)
    S[src, torch.arange(3)] = 1.0 / h ** 2
    ang = torch.linspace(0, 2 * math.pi, 41)[:-1]
    recv = torch.tensor(sorted({node(0.5 + 0.3 * math.cos(a), 0.5 + 0.3 * math.sin(a))
                                for a in ang.tolist()}))
    return dict(row=row, col=col, base=base, bump=bump_vals, S=S, recv=recv, n=n, x=x, y=y)


def field(P, q, c):
    """u = A(c)⁻¹ S q: differentiable in the complex q [3] and c (a 0-d complex tensor)."""
    A = SparseTensor(P["base"] + c * P["bump"], P["row"], P["col"], (P["n"], P["n"]))
    return A.solve(P["S"] @ q)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=96, help="interior nodes per side (default 96)")
    ap.add_argument("--steps", type=int, default=300, help="Adam steps (default 300)")
    ap.add_argument("--waves", type=float, default=6.0, help="wavelengths per unit (default 6)")
    ap.add_argument("--lr", type=float, default=0.05, help="Adam learning rate (default 0.05)")
    ap.add_argument("--out", default="helmholtz.png", help="PNG path ('' = none)")
    ap.add_argument("--print-every", type=int, default=50)
    args = ap.parse_args(argv)
    if args.size < 8 or args.steps < 1 or args.print_every < 1:
        ap.error("--size must be ≥ 8, --steps and --print-every ≥ 1")

    P = setup(args.size, args.waves)
    q_true = torch.tensor(Q_TRUE, dtype=c128)
    c_true = torch.tensor(C_TRUE, dtype=c128)
    with torch.no_grad():
        u_true = field(P, q_true, c_true)
    d_obs = u_true[P["recv"]]
    scale = float((d_obs.abs() ** 2).sum())

    q = torch.zeros(3, dtype=c128, requires_grad=True)
    c = torch.zeros((), dtype=c128, requires_grad=True)
    opt = torch.optim.Adam([q, c], lr=args.lr)
    print(f"helmholtz: {args.size}×{args.size} unknowns (complex128), {args.waves:g} waves, "
          f"{P['recv'].numel()} receivers, Adam lr {args.lr}, {args.steps} steps "
          f"(libsla {torch_sla.__version__})")
    losses = []
    t0 = time.perf_counter()
    for step in range(1, args.steps + 1):
        opt.zero_grad(set_to_none=True)
        u = field(P, q, c)
        loss = ((u[P["recv"]] - d_obs).abs() ** 2).sum() / scale
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step % args.print_every == 0 or step == 1 or step == args.steps:
            print(f"  step {step:5d}  loss {losses[-1]:.4e}  c = {complex(c.detach()):.4f}")
    wall = time.perf_counter() - t0
    q_err = float((q.detach() - q_true).abs().max())
    c_err = abs(complex(c.detach()) - C_TRUE)
    with torch.no_grad():
        u = field(P, q, c)
        u_err = float(torch.linalg.norm(u - u_true) / torch.linalg.norm(u_true))
    print(f"source amplitudes max |q − q*| {q_err:.3e}; scatterer |c − c*| {c_err:.3e}; "
          f"field relative L2 error {u_err:.3e}")
    print(f"wall time {wall:.2f} s for {args.steps} steps = {1e3 * wall / args.steps:.2f} ms/step")

    if args.out:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        s = args.size
        fig, ax = plt.subplots(1, 3, figsize=(15, 4.5))
        for a, img, title in ((ax[0], u_true.real, "Re u* (true field)"),
                              (ax[1], u.real, "Re u (recovered)")):
            im = a.imshow(img.reshape(s, s).T.numpy(), origin="lower", extent=(0, 1, 0, 1),
                          cmap="RdBu_r")
            a.plot(P["x"][P["recv"]], P["y"][P["recv"]], "k.", ms=3)
            a.set_title(title)
            fig.colorbar(im, ax=a, fraction=0.046)
        ax[2].semilogy(losses)
        ax[2].set_xlabel("Adam step")
        ax[2].set_title("relative misfit at the receivers")
        fig.tight_layout()
        fig.savefig(args.out, dpi=90)
        print(f"wrote {args.out}")
    return dict(losses=losses, q_error=q_err, c_error=c_err, u_error=u_err)


if __name__ == "__main__":
    main()
