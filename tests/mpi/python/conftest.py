"""Fixtures of the torch_sla.distributed tests. Every rank runs the same pytest session (so the
same collective calls in the same order): `mpirun -np N /usr/bin/python3 -m pytest -q -p
no:cacheprovider tests/mpi/python`. A check that fails on one rank must fail on all (see
agree_all), or the next test's collectives would pair with the wrong calls."""
import os
import sys

import pytest
import torch

_here = os.path.dirname(os.path.abspath(__file__))
_python = os.path.join(_here, "..", "..", "..", "python")
if _python not in sys.path:
    sys.path.insert(0, _python)

from mpi4py import MPI  # noqa: E402

import torch_sla  # noqa: E402,F401


@pytest.fixture
def comm():
    return MPI.COMM_WORLD


def agree_all(comm, ok, msg=""):
    """Asserts `ok` on every rank: fails on all ranks if it fails on any (naming them)."""
    bad = comm.allgather(bool(ok))
    failing = [r for r, v in enumerate(bad) if not v]
    mine = msg if not ok else ""
    msgs = comm.allgather(mine)
    assert not failing, f"failed on ranks {failing}: " + " | ".join(m for m in msgs if m)


def max_err(a, b):
    return float((a - b).abs().max()) if a.numel() else 0.0


def grid_matrix(n, dtype=torch.float64, seed=0, symmetric=False):
    """A 2-D grid operator on n × n nodes (5-point stencil) with random values, unsymmetric
    unless asked, as global COO (row, col, val) on every rank, with the node coordinates."""
    g = torch.Generator().manual_seed(seed)
    idx = torch.arange(n * n).reshape(n, n)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        for r, c in ((a, b), (b, a)):
            rows.append(r.reshape(-1))
            cols.append(c.reshape(-1))
    row, col = torch.cat(rows), torch.cat(cols)
    val = -1.0 - torch.rand(row.numel(), generator=g, dtype=torch.float64)
    if symmetric:
        dense = torch.zeros(n * n, n * n, dtype=torch.float64)
        dense[row, col] = val
        dense = 0.5 * (dense + dense.t())
        val = dense[row, col]
    diag = row == col
    val[diag] = 6.0 + torch.rand(int(diag.sum()), generator=g, dtype=torch.float64)
    xy = torch.stack(torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij"),
                     -1).reshape(-1, 2).to(torch.float64)
    return row, col, val.to(dtype), xy
