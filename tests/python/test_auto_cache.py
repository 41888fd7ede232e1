"""method='auto' through torch_sla's refactor cache (issue 12, items 2, 9, 19): a cached solver
never keeps a choice whose facts no longer hold, a requested backend restricts auto's choice,
and with no tolerance the answer has a normwise backward error ≤ 1e-12 (float32 1e-5)."""
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor

from conftest import poisson2d

f64 = torch.float64


def backward_error(A, x, b):
    D = A.to_dense().to(f64)
    x, b = x.to(f64), b.to(f64)
    return ((b - D @ x).norm() / (torch.linalg.matrix_norm(D, "fro") * x.norm() + b.norm())).item()


def convection(row, col, val, c):
    """the same pattern with unsymmetric off-diagonals −1 ± c"""
    v = val.clone()
    off = row != col
    v[off] = -1 + c * torch.sign((col - row).to(f64))[off]
    return v


def test_cached_cg_is_not_reused_for_an_unsymmetric_matrix():
    torch_sla.clear_solver_cache()
    row, col, val = poisson2d(10)
    n = 100
    b = torch.linspace(-1, 1, n, dtype=f64)
    A = SparseTensor(val, row, col, (n, n))
    x, info = A.solve(b, return_info=True)
    assert info.method == "cg" and "Stieltjes" in info.description
    B = SparseTensor(convection(row, col, val, 0.9), row, col, (n, n))
    x, info = B.solve(b, return_info=True)
    assert info.converged and info.method != "cg"
    assert "SPD" not in info.description and "not symmetric" in info.description
    assert backward_error(B, x, b) <= 1e-15 and info.relative_residual <= 1e-12
    assert torch_sla.solver_cache_info()[0] == 1          # refactored, not recreated
    # and back: symmetric values decide again for CG, gradients through the cache stay right
    v = val.clone().requires_grad_()
    x = SparseTensor(v, row, col, (n, n)).solve(b)
    x.sum().backward()
    dense = torch.zeros(n, n, dtype=f64)
    dense[row, col] = val
    lam = torch.linalg.solve(dense.T, torch.ones(n, dtype=f64))
    xd = torch.linalg.solve(dense, b)
    assert torch.allclose(v.grad, -lam[row] * xd[col], atol=1e-9)


@pytest.mark.parametrize("backend,method", [("cholmod", "cholesky"), ("umfpack", "lu"),
                                            ("klu", "klu"), ("krylov", "cg")])
def test_backend_restricts_auto(backend, method):
    if not any(b.name == backend and b.available for b in torch_sla.backends()):
        pytest.skip(f"{backend} not in this build")
    row, col, val = poisson2d(9)          # auto's own first choice: CG + IC(0)
    A = SparseTensor(val, row, col, (81, 81))
    b = torch.ones(81, dtype=f64)
    x, info = A.solve(b, backend=backend, return_info=True)
    assert info.method == method and backward_error(A, x, b) <= 1e-12


def test_unknown_backend_names_show_backends():
    row, col, val = poisson2d(3)
    with pytest.raises(ValueError, match=r"torch_sla\.show_backends\(\)"):
        SparseTensor(val, row, col, (9, 9)).solve(torch.ones(9, dtype=f64), backend="petsc")


@pytest.mark.parametrize("dtype,target", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_default_accuracy(dtype, target):
    row, col, val = poisson2d(7, 23, dtype=dtype)          # 161 unknowns, SPD
    A = SparseTensor(val, row, col, (161, 161))
    g = torch.Generator().manual_seed(7)
    b = (torch.rand(161, generator=g, dtype=f64) * 2 - 1).to(dtype)
    x = A.solve(b)
    assert backward_error(A, x, b) <= target
    if dtype == torch.float64:          # an explicit rtol keeps its meaning (the classic rule)
        x, info = A.solve(b, rtol=1e-10, return_info=True)
        assert info.relative_residual <= 1e-10
