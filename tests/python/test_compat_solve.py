"""torch-sla compatibility, items 1–3 and 5 of issue 17: solve / spsolve calling conventions,
backend and method names, the top-level solve with SolverConfig / PreconditionerConfig,
SolveInfo fields, LUFactorization, solve_batch, the spsolve_* family, ParallelBatchSolver,
SOLVER_CACHE and the backend utilities. Written from torch-sla's documentation (README,
docs/source/*.rst, docstrings of its public API)."""
import importlib

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import torch_sla
from torch_sla import SparseTensor

from conftest import poisson2d, random_sparse

f64 = torch.float64


def _residual(A, x, b):
    return float((A.to_dense() @ x - b).norm() / b.norm())


@pytest.fixture
def readme_A():
    dense = torch.tensor([[4.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 4.0]], dtype=f64)
    return SparseTensor.from_dense(dense), torch.tensor([1.0, 2.0, 3.0], dtype=f64)


def test_readme_basic_solve(readme_A):
    A, b = readme_A
    x = A.solve(b)
    x2 = A.solve(b, backend='scipy', method='lu')
    ref = torch.linalg.solve(A.to_dense(), b)
    assert torch.allclose(x, ref, atol=1e-14) and torch.allclose(x2, ref, atol=1e-14)


@pytest.mark.parametrize("backend,method,ours", [
    ("scipy", "lu", "lu"), ("scipy", "umfpack", "lu"), ("scipy", "superlu", "lu"),
    ("scipy", "cg", "cg"), ("scipy", "bicgstab", "bicgstab"), ("scipy", "gmres", "gmres"),
    ("scipy", "lgmres", "gmres"), ("scipy", "minres", "minres"), ("scipy", "qmr", "bicgstab"),
    ("pytorch", "cg", "cg"), ("pytorch", "bicgstab", "bicgstab"),
    ("pytorch", "auto", "bicgstab"),   # a Poisson matrix fails Gershgorin: theirs too
    ("pytorch", "lsmr", "lsqr"), ("pytorch", "lsqr", "lsqr"),
    ("cudss", "cholesky", "cholesky"), ("cudss", "ldlt", "ldlt"), ("cudss", "lu", "lu"),
    ("amgx", "pcg", "cg"), ("amgx", "pbicgstab", "bicgstab"), ("amgx", "fgmres", "gmres"),
    ("pyamg", "amg", "cg"), ("pyamg", "ruge_stuben", "cg"), ("strumpack", "lu", "lu"),
    ("eigen", "auto", None), ("cupy", "auto", None), ("auto", "cudss_lu", "lu"),
    ("auto", "cudss_cholesky", "cholesky"), ("auto", "strumpack", None),
])
def test_backend_method_names_map_to_libsla(backend, method, ours):
    row, col, val = poisson2d(6)
    A = SparseTensor(val, row, col, (36, 36))
    b = torch.arange(1.0, 37.0, dtype=f64)
    x, info = A.solve(b, backend=backend, method=method, return_info=True)
    assert _residual(A, x, b) < 1e-9
    if ours is not None:
        assert info.method == ours
    else:                                   # a direct backend with method auto: a factorization
        assert info.method in ("cholesky", "ldlt", "lu", "klu")
    assert "torch-sla backend" in info.description
    assert info.backend in ("cholmod", "mumps", "umfpack", "klu", "krylov")


def test_pytorch_backend_picks_cg_for_diagonally_dominant_symmetric():
    A = SparseTensor.tridiagonal(30, 4.0, -1.0)
    b = torch.ones(30, dtype=f64)
    x, info = A.solve(b, 'pytorch', return_info=True)
    assert info.method == "cg" and _residual(A, x, b) < 1e-9


def test_pytorch_backend_picks_bicgstab_for_unsymmetric():
    row, col, val = random_sparse(20, seed=3)
    A = SparseTensor(val, row, col, (20, 20))
    b = torch.ones(20, dtype=f64)
    x, info = A.solve(b, 'pytorch', return_info=True)
    assert info.method == "bicgstab" and _residual(A, x, b) < 1e-8


def test_positional_order_is_torch_slas(readme_A):
    A, b = readme_A
    # solve(b, backend, method, atol, maxiter, tol, verbose)
    x, info = A.solve(b, 'pytorch', 'cg', 1e-12, 50, 1e-12, False, return_info=True)
    assert info.method == "cg" and info.converged
    # the pre-compat order solve(b, method) still works
    assert A.solve(b, 'cg', return_info=True)[1].method == "cg"
    assert A.solve(b, 'ldlt', 'auto', return_info=True)[1].method == "ldlt"


def test_maxiter_positional_is_honoured():
    row, col, val = poisson2d(20)
    A = SparseTensor(val, row, col, (400, 400))
    with pytest.warns(torch_sla.ConvergenceWarning):
        x, info = A.solve(torch.ones(400, dtype=f64), 'pytorch', 'cg', None, 3,
                          return_info=True, preconditioner='none')
    assert info.iterations == 3 and not info.converged


def test_hints_skip_the_spd_trial():
    row, col, val = poisson2d(5)
    A = SparseTensor(val, row, col, (25, 25))
    b = torch.ones(25, dtype=f64)
    assert A.solve(b, is_spd=True, return_info=True)[1].method == "cholesky"
    assert A.solve(b, matrix_type="spd", return_info=True)[1].method == "cholesky"
    assert A.solve(b, matrix_type="symmetric", return_info=True)[1].method == "ldlt"
    # a wrong hint is an error, never a wrong answer
    with pytest.raises(torch_sla.NotPositiveDefiniteError):
        (-A).solve(b, is_spd=True)
    x, info = A.solve(b, mixed_precision=True, return_info=True)
    assert "mixed_precision" in info.description and _residual(A, x, b) < 1e-9


def test_verbose_prints_one_line(readme_A, capsys):
    A, b = readme_A
    A.solve(b, backend='scipy', method='lu', verbose=True)
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and "[torch_sla] solve: 3×3" in out[0] and "method=lu" in out[0]


def test_gradients_through_mapped_backends(readme_A):
    A, b = readme_A
    for backend, method in (("scipy", "lu"), ("pytorch", "cg"), ("cudss", "cholesky")):
        val = A.values.clone().requires_grad_(True)
        bb = b.clone().requires_grad_(True)
        x = SparseTensor(val, A.row_indices, A.col_indices, (3, 3)).solve(
            bb, backend=backend, method=method)
        x.sum().backward()
        D = A.to_dense()
        lam = torch.linalg.solve(D.t(), torch.ones(3, dtype=f64))
        xr = torch.linalg.solve(D, b)
        assert torch.allclose(bb.grad, lam, atol=1e-9)
        assert torch.allclose(val.grad, -lam[A.row_indices] * xr[A.col_indices], atol=1e-9)


def test_readme_batched_and_multi_rhs():
    val = torch.tensor([4.0, -1.0, -1.0, 4.0, -1.0, -1.0, 4.0], dtype=f64)
    row = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    col = torch.tensor([0, 1, 0, 1, 2, 1, 2])
    val_batch = val.unsqueeze(0).expand(4, -1).clone() * torch.arange(1.0, 5.0, dtype=f64)[:, None]
    A = SparseTensor(val_batch, row, col, (4, 3, 3))
    b = torch.randn(4, 3, dtype=f64)
    x = A.solve(b)
    assert x.shape == (4, 3)
    assert torch.allclose(torch.linalg.solve(A.to_dense(), b), x, atol=1e-12)
    A1 = SparseTensor(val, row, col, (3, 3))
    B = torch.randn(3, 5, dtype=f64)
    assert torch.allclose(A1.solve(B), torch.linalg.solve(A1.to_dense(), B), atol=1e-12)


def test_readme_gradient_block():
    val = torch.tensor([4.0, -1.0, -1.0, 4.0, -1.0, -1.0, 4.0], dtype=f64, requires_grad=True)
    row = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    col = torch.tensor([0, 1, 0, 1, 2, 1, 2])
    b = torch.tensor([1.0, 2.0, 3.0], dtype=f64, requires_grad=True)
    A = SparseTensor(val, row, col, (3, 3))
    x = A.solve(b)
    x.sum().backward()
    assert val.grad is not None and b.grad is not None and torch.isfinite(val.grad).all()


def test_spsolve_positional_and_defaults():
    val = torch.tensor([4.0, -1.0, -1.0, 4.0, -1.0, -1.0, 4.0], dtype=f64)
    row = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    col = torch.tensor([0, 1, 0, 1, 2, 1, 2])
    b = torch.tensor([1.0, 2.0, 3.0], dtype=f64)
    ref = torch.linalg.solve(SparseTensor(val, row, col, (3, 3)).to_dense(), b)
    for x in (torch_sla.spsolve(val, row, col, (3, 3), b),
              torch_sla.spsolve(val, row, col, (3, 3), b, 'scipy', 'lu'),
              torch_sla.spsolve(val, row, col, (3, 3), b, 'pytorch', 'cg', 1e-12, 100, 1e-12,
                                'general', True, True, 'jacobi', False, False)):
        assert torch.allclose(x, ref, atol=1e-10)
    A_coo = SparseTensor(val, row, col, (3, 3)).to_torch_sparse()
    assert torch.allclose(torch_sla.spsolve_coo(A_coo, b), ref, atol=1e-12)
    assert torch.allclose(torch_sla.spsolve_csr(A_coo.to_sparse_csr(), b), ref, atol=1e-12)
    with pytest.raises(TypeError, match="COO"):
        torch_sla.spsolve_coo(A_coo.to_dense(), b)


def test_top_level_solve_accepts_every_matrix_form():
    row, col, val = random_sparse(12, seed=5)
    S = SparseTensor(val, row, col, (12, 12))
    D = S.to_dense()
    b = torch.randn(12, dtype=f64)
    ref = torch.linalg.solve(D, b)
    forms = [S, (val, row, col, (12, 12)), sp.csr_matrix(D.numpy()), D, D.to_sparse()]
    for A in forms:
        assert torch.allclose(torch_sla.solve(A, b), ref, atol=1e-10), type(A)
    x = torch_sla.solve(lambda v: D @ v, b, shape=(12, 12))
    assert torch.allclose(x, ref, atol=1e-10)
    with pytest.raises(ValueError, match="shape"):
        torch_sla.solve(lambda v: D @ v, b)
    x, info = torch_sla.solve(S, b, method="gmres", preconditioner="jacobi", return_info=True)
    assert isinstance(info, torch_sla.SolveInfo) and info.iter_count > 0 and info.converged
    assert info.method == "gmres" and info.preconditioner == "jacobi"
    with pytest.raises(NotImplementedError, match="x0"):
        torch_sla.solve(S, b, x0=torch.zeros(12, dtype=f64))


def test_solver_config_scopes_and_precedence():
    row, col, val = poisson2d(6)
    A = SparseTensor(val, row, col, (36, 36))
    b = torch.ones(36, dtype=f64)

    @torch_sla.SolverConfig(method="cg", atol=1e-8)
    def pipeline():
        with torch_sla.SolverConfig(method="minres"):
            inner = torch_sla.solve(A, b, return_info=True)[1].method
            kw = torch_sla.solve(A, b, method="gmres", return_info=True)[1].method
        outer = torch_sla.solve(A, b, return_info=True)[1].method
        return inner, kw, outer
    assert pipeline() == ("minres", "gmres", "cg")
    assert torch_sla.solve(A, b, return_info=True)[1].method != "minres"   # scope ended
    with torch_sla.SolverConfig(return_info=True, backend="scipy", method="lu"):
        x, info = torch_sla.solve(A, b)
    assert info.method == "lu"
    # presets in their vocabulary run here
    for cfg in (torch_sla.SolverConfig.spd(), torch_sla.SolverConfig.spd().direct(),
                torch_sla.SolverConfig.general().cpu(), torch_sla.SolverConfig.indefinite(),
                torch_sla.SolverConfig.convection_diffusion(), torch_sla.SolverConfig.auto(A),
                torch_sla.SolverConfig.spd().high_accuracy(),
                torch_sla.SolverConfig.general().replace(maxiter=1000)):
        with cfg:
            assert _residual(A, torch_sla.solve(A, b), b) < 1e-7, cfg
    assert torch_sla.SolverConfig.spd().direct() == torch_sla.SolverConfig.spd().direct().cpu()
    assert torch_sla.SolverConfig.spd().direct().method == "cholesky"


def test_preconditioner_config():
    row, col, val = poisson2d(8)
    A = SparseTensor(val, row, col, (64, 64))
    b = torch.ones(64, dtype=f64)
    P = torch_sla.PreconditionerConfig
    assert P.from_string("ic0") == P(kind="ic0")
    for kind, ours in (("jacobi", "jacobi"), ("ic0", "ic0"), ("ilu0", "ilu0"), ("amg", "amg"),
                       ("ssor", "jacobi"), ("block_jacobi", "jacobi"), ("none", "none")):
        x, info = torch_sla.solve(A, b, method="cg", preconditioner=P(kind=kind),
                                  return_info=True)
        assert info.preconditioner == ours and _residual(A, x, b) < 1e-8


def test_solve_info_fields_and_defaults():
    i = torch_sla.SolveInfo()
    assert (i.iter_count, i.converged, i.method, i.backend) == (0, True, "", "")
    assert i.residual != i.residual          # NaN
    j = torch_sla.SolveInfo(iter_count=3, residual=1e-9, converged=False, method="cg",
                            backend="krylov")
    assert j.iterations == 3 and j.iter_count == 3 and not j.converged


def test_lu_factorization_repeated_solves():
    d = torch.tensor([2.0, 4.0], dtype=f64)
    idx = torch.arange(2)
    lu = SparseTensor(d, idx, idx, (2, 2)).lu()
    assert isinstance(lu, torch_sla.LUFactorization)
    assert torch.allclose(lu.solve(torch.tensor([2.0, 4.0], dtype=f64)),
                          torch.ones(2, dtype=f64), rtol=1e-15)
    assert torch.allclose(lu.solve(torch.tensor([4.0, 8.0], dtype=f64)),
                          2 * torch.ones(2, dtype=f64), rtol=1e-15)
    row, col, val = random_sparse(15, seed=2)
    A = SparseTensor(val, row, col, (15, 15))
    lu = A.lu(method="lu")
    assert lu.method == "lu" and "UMFPACK" in lu.description
    B = torch.randn(15, 3, dtype=f64)
    assert torch.allclose(lu.solve(B), torch.linalg.solve(A.to_dense(), B), atol=1e-12)
    b = torch.randn(15, dtype=f64, requires_grad=True)
    lu.solve(b).sum().backward()
    lam = torch.linalg.solve(A.to_dense().t(), torch.ones(15, dtype=f64))
    assert torch.allclose(b.grad, lam, atol=1e-12)
    with pytest.raises(ValueError, match="batch"):
        SparseTensor(val.expand(2, -1), row, col, (2, 15, 15)).lu()


def test_solve_batch_same_pattern():
    row, col, val = poisson2d(5)
    A = SparseTensor(val, row, col, (25, 25))
    vb = torch.stack([val * (1 + 0.1 * i) for i in range(4)])
    bb = torch.randn(4, 25, dtype=f64)
    x = A.solve_batch(vb, bb)
    for i in range(4):
        Ai = SparseTensor(vb[i], row, col, (25, 25))
        assert _residual(Ai, x[i], bb[i]) < 1e-9


def test_batch_functions_and_parallel_batch_solver():
    row, col, val = random_sparse(10, seed=7)
    vb = torch.stack([val * (1 + 0.2 * i) for i in range(3)])
    bb = torch.randn(3, 10, dtype=f64)
    refs = [torch.linalg.solve(SparseTensor(vb[i], row, col, (10, 10)).to_dense(), bb[i])
            for i in range(3)]
    x = torch_sla.spsolve_batch_same_layout(vb, row, col, (10, 10), bb)
    assert all(torch.allclose(x[i], refs[i], atol=1e-8) for i in range(3))
    mats = [(vb[i], row, col, (10, 10)) for i in range(3)]
    xs = torch_sla.spsolve_batch_different_layout(mats, list(bb), method="lu")
    assert all(torch.allclose(xs[i], refs[i], atol=1e-12) for i in range(3))
    tmpl = torch.sparse_coo_tensor(torch.stack([row, col]), val, (10, 10)).coalesce()
    order = tmpl.indices()[0] * 10 + tmpl.indices()[1]
    perm = torch.argsort(row * 10 + col)
    assert torch.equal(order, (row * 10 + col)[perm])
    x = torch_sla.spsolve_batch_coo_same_layout(tmpl, vb[:, perm], bb, method="lu")
    assert all(torch.allclose(x[i], refs[i], atol=1e-12) for i in range(3))
    A_list = [torch.sparse_coo_tensor(torch.stack([row, col]), vb[i], (10, 10)) for i in range(3)]
    xs = torch_sla.spsolve_batch_coo_different_layout(A_list, list(bb), method="lu")
    assert all(torch.allclose(xs[i], refs[i], atol=1e-12) for i in range(3))
    solver = torch_sla.ParallelBatchSolver(row, col, (10, 10), method="lu")
    before = torch_sla.SOLVER_CACHE.stats()["hits"]
    for _ in range(3):
        x = solver(vb, bb)
    assert all(torch.allclose(x[i], refs[i], atol=1e-12) for i in range(3))
    assert torch_sla.SOLVER_CACHE.stats()["hits"] >= before + 2     # refactored, not rebuilt
    with pytest.raises(ValueError, match="CPU"):
        torch_sla.ParallelBatchSolver(row, col, (10, 10), device="cuda")


def test_solver_cache_handle():
    c = torch_sla.SOLVER_CACHE
    c.clear()
    s = c.stats()
    assert set(s) == {"hits", "misses", "size", "max_size"} and s["size"] == 0
    row, col, val = poisson2d(4)
    A = SparseTensor(val, row, col, (16, 16))
    A.solve(torch.ones(16, dtype=f64), method="cholesky")
    A.with_values(val * 2).solve(torch.ones(16, dtype=f64), method="cholesky")
    s2 = c.stats()
    assert s2["misses"] == s["misses"] + 1 and s2["hits"] == s["hits"] + 1 and len(c) == 1
    old = s2["max_size"]
    c.set_max_size(3)
    assert c.stats()["max_size"] == 3
    with pytest.raises(ValueError):
        c.set_max_size(0)
    assert c.get_or_build("k", lambda: 42) == 42 and c.get_or_build("k", lambda: 0) == 42
    c.set_max_size(old)
    assert "SolverCache(" in repr(c)


def test_backend_utilities_vocabulary():
    B = importlib.import_module("torch_sla.backends")
    assert torch_sla.backends is B                      # a module again
    assert [b.name for b in torch_sla.backends()]       # and still callable
    assert B.is_strumpack_available() and torch_sla.is_scipy_available()
    assert not torch_sla.is_cudss_available()
    assert torch_sla.BACKEND_METHODS["scipy"][0] == "lu"
    assert torch_sla.DEFAULT_METHODS["pytorch"] == "cg"
    assert torch_sla.get_backend_methods("cudss") == ["lu", "cholesky", "ldlt"]
    assert torch_sla.get_backend_methods("cholmod") == ["cholesky"]
    assert torch_sla.get_default_method("nosuch") == "auto"
    assert torch_sla.select_backend(torch.device("cpu"), n=10) == "scipy"
    assert torch_sla.select_backend("cpu", prefer_direct=False) == "pytorch"
    with pytest.raises(ValueError, match="CPU"):
        torch_sla.select_backend(torch.device("cuda"))
    assert torch_sla.select_method("cudss", is_symmetric=True, is_spd=True) == "cholesky"
    assert torch_sla.select_method("pytorch", is_spd=False) == "bicgstab"
    row, col, val = poisson2d(4)
    assert torch_sla.auto_select_method(SparseTensor(val, row, col, (16, 16))) == "lu"
    D = SparseTensor.tridiagonal(5, 4.0, -1.0)
    assert torch_sla.auto_select_method(D) == "cholesky"
    assert torch_sla.estimate_direct_solver_memory(100, 10, f64) > 0
    assert torch_sla.get_available_gpu_memory() == 0
    for name in ("select_backend", "select_method", "is_pyamg_available", "BACKEND_METHODS",
                 "get_available_backends", "show_backends"):
        assert hasattr(B, name)
