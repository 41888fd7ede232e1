"""A.solve(b) for every method libsla serves: SciPy references, scaled residuals, gradcheck
(values and b, duplicates, batches), the refactor cache, convergence reporting, errors."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spl
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import (DIRECT, ITERATIVE, dense_of, needs_method, poisson2d, random_rect,
                      random_sparse, symmetric_param)

f64 = torch.float64
SYMMETRIC_METHODS = ("cholesky", "ldlt", "cg", "minres")
TIGHT = dict(rtol=1e-13, maxiter=2000)       # iterative methods in gradchecks


def opts(method):
    return TIGHT if method in ITERATIVE else {}


def system(method, n=6, seed=0):
    """(row, col, expand, v0): a matrix suited to the method as a function of parameters v0,
    with duplicate COO entries in random order. Symmetric methods read one triangle, so their
    matrices are parametrized by the lower triangle (a perturbation keeps them symmetric);
    unsymmetric ones by every entry."""
    if method in SYMMETRIC_METHODS or method == "auto":
        return symmetric_param(*random_sparse(n, seed=seed, spd=True))
    row, col, val = random_sparse(n, seed=seed)
    row = torch.cat([row, row[:2]])
    col = torch.cat([col, col[:2]])
    val = torch.cat([val[:2] * 0.25, val[2:], val[:2] * 0.75])
    p = torch.randperm(row.numel(), generator=torch.Generator().manual_seed(seed))
    return row[p], col[p], (lambda v: v), val[p]


def scaled_residual(D, x, b):
    return float(torch.linalg.norm(b - D @ x) /
                 (torch.linalg.matrix_norm(D) * torch.linalg.norm(x) + torch.linalg.norm(b)))


ALL = ("auto",) + DIRECT + ITERATIVE


@pytest.mark.parametrize("method", ALL)
def test_solve_matches_scipy(method):
    needs = needs_method(method)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    if method in SYMMETRIC_METHODS:
        row, col, val = poisson2d(12, shuffle=True)
    else:
        row, col, val = random_sparse(80, density=0.05, seed=5)
    n = int(row.max()) + 1
    A = SparseTensor(val, row, col, (n, n))
    b = torch.randn(n, dtype=f64, generator=torch.Generator().manual_seed(1))
    x, info = A.solve(b, method=method, return_info=True, **opts(method))
    S = sp.csr_matrix((val.numpy(), (row.numpy(), col.numpy())), shape=(n, n))
    ref = spl.spsolve(S.tocsc(), b.numpy())
    assert np.allclose(x.numpy(), ref, rtol=1e-9, atol=1e-11)
    assert scaled_residual(A.to_dense(), x, b) < 1e-13
    assert info.converged and info.reason == "converged"
    assert info.method == method if method != "auto" else info.method in DIRECT
    assert info.description


@pytest.mark.parametrize("method", ALL)
def test_gradcheck_values_and_rhs(method):
    needs = needs_method(method)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    row, col, expand, val = system(method)
    v = val.clone().requires_grad_()
    b = torch.randn(6, 2, dtype=f64, requires_grad=True)
    fn = lambda v, b: SparseTensor(expand(v), row, col, (6, 6)).solve(b, method=method,
                                                                      **opts(method))
    assert gradcheck(fn, (v, b), atol=1e-6 if method in ITERATIVE else 1e-5)


@pytest.mark.parametrize("method", ("auto", "lu", "cg"))
def test_gradcheck_batched(method):
    needs = needs_method(method)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    row, col, expand, val = system(method, n=5)
    vb = val + 0.05 * torch.randn(3, val.numel(), dtype=f64,
                                  generator=torch.Generator().manual_seed(2))
    if method in SYMMETRIC_METHODS or method == "auto":
        vb = val.repeat(3, 1) * torch.tensor([[1.0], [1.5], [2.0]], dtype=f64)   # keeps SPD
    vb.requires_grad_()
    bb = torch.randn(3, 5, dtype=f64, requires_grad=True)
    bs = torch.randn(5, dtype=f64, requires_grad=True)                 # shared by the batch
    fn = lambda v, b: SparseTensor(expand(v), row, col, (3, 5, 5)).solve(b, method=method,
                                                                         **opts(method))
    assert gradcheck(fn, (vb, bb), atol=1e-6)
    assert gradcheck(fn, (vb, bs), atol=1e-6)


@pytest.mark.parametrize("method", DIRECT)
def test_batched_and_multi_rhs_forward(method):
    needs = needs_method(method)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    row, col, expand, val = system(method, n=7)
    vb = (expand(val).repeat(4, 1) * torch.arange(1.0, 5.0, dtype=f64)[:, None]).reshape(2, 2, -1)
    A = SparseTensor(vb, row, col, (2, 2, 7, 7))
    D = A.to_dense()
    b = torch.randn(2, 2, 7, 3, dtype=f64)
    x = A.solve(b, method=method)
    assert x.shape == (2, 2, 7, 3)
    assert torch.allclose(D @ x, b, atol=1e-12)
    bv = torch.randn(2, 2, 7, dtype=f64)
    assert torch.allclose((D @ A.solve(bv, method=method).unsqueeze(-1)).squeeze(-1), bv)


@needs_method("auto", torch.float32)
def test_float32_solve():
    row, col, val = poisson2d(8)
    A = SparseTensor(val.float(), row, col, (64, 64))
    b = torch.randn(64)
    x = A.solve(b)
    assert x.dtype == torch.float32
    assert scaled_residual(A.to_dense().double(), x.double(), b.double()) < 1e-6
    v = val.float().requires_grad_()
    xs = SparseTensor(v, row, col, (64, 64)).solve(b)
    xs.sum().backward()
    assert v.grad.dtype == torch.float32 and torch.isfinite(v.grad).all()


# ---------------------------------------------------------------------------------------------
# The refactor cache
# ---------------------------------------------------------------------------------------------
@needs_method("lu")
def test_refactor_cache_reuses_solver_and_stays_correct():
    torch_sla.clear_solver_cache()
    row, col, val = random_sparse(9, seed=7)
    b = torch.randn(9, dtype=f64)
    x1 = SparseTensor(val, row, col, (9, 9)).solve(b, method="lu")
    assert torch_sla.solver_cache_info()[0] == 1
    for scale in (2.0, 0.5, 3.0):
        v = val * scale + 0.1 * torch.rand(val.numel(), dtype=f64)
        A = SparseTensor(v, row, col, (9, 9))
        x = A.solve(b, method="lu")
        assert torch.allclose(A.to_dense() @ x, b, atol=1e-12)
    assert torch_sla.solver_cache_info()[0] == 1          # refactored, never re-created
    assert not torch.allclose(x, x1)


@needs_method("lu")
def test_two_outstanding_graphs_on_one_pattern():
    """Two solves on one pattern with different values before either backward: each backward
    must use its own factors (pinning), also when a graph is backpropagated twice after the
    solver was refactored for someone else."""
    torch_sla.clear_solver_cache()
    row, col, val = random_sparse(8, seed=11)
    b = torch.randn(8, dtype=f64)

    def grads(values):
        v = values.clone().requires_grad_()
        SparseTensor(v, row, col, (8, 8)).solve(b, method="lu").pow(2).sum().backward()
        return v.grad

    ref1, ref2 = grads(val), grads(2 * val + 1)
    v1 = val.clone().requires_grad_()
    v2 = (2 * val + 1).clone().requires_grad_()
    l1 = SparseTensor(v1, row, col, (8, 8)).solve(b, method="lu").pow(2).sum()
    l2 = SparseTensor(v2, row, col, (8, 8)).solve(b, method="lu").pow(2).sum()
    l1.backward(retain_graph=True)
    l2.backward()
    assert torch.allclose(v1.grad, ref1) and torch.allclose(v2.grad, ref2)
    # refactor the cached solvers with other values, then backpropagate l1 again
    SparseTensor(val + 5, row, col, (8, 8)).solve(b, method="lu")
    SparseTensor(val + 7, row, col, (8, 8)).solve(b, method="lu")
    v1.grad = None
    l1.backward()
    assert torch.allclose(v1.grad, ref1)


@needs_method("lu")
def test_in_place_change_of_values_is_detected():
    row, col, val = random_sparse(5, seed=3)
    order = torch.argsort(row * 5 + col)                   # CSR order: values used directly
    v = val[order].clone().requires_grad_()
    leaf = v.detach().clone().requires_grad_()
    w = leaf * 1.0
    x = SparseTensor(w, row[order], col[order], (5, 5)).solve(torch.ones(5, dtype=f64),
                                                               method="lu")
    with torch.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x.sum().backward()


# ---------------------------------------------------------------------------------------------
# Convergence reporting (iterative methods)
# ---------------------------------------------------------------------------------------------
@needs_method("cg")
def test_nonconvergence_warns_info_and_strict():
    row, col, val = poisson2d(20)
    A = SparseTensor(val, row, col, (400, 400))
    b = torch.ones(400, dtype=f64)
    with pytest.warns(torch_sla.ConvergenceWarning, match="did not converge"):
        x, info = A.solve(b, method="cg", preconditioner="none", maxiter=3, rtol=1e-12,
                          return_info=True)
    assert not info.converged and info.reason == "max iterations" and info.iterations == 3
    assert info.residual > 0
    with pytest.raises(torch_sla.ConvergenceError) as e:
        A.solve(b, method="cg", preconditioner="none", maxiter=3, rtol=1e-12, strict=True)
    assert isinstance(e.value, RuntimeError) and e.value.info.iterations == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, info = A.solve(b, method="cg", rtol=1e-10, return_info=True)
    assert info.converged and info.iterations > 0
    assert issubclass(torch_sla.ConvergenceWarning, UserWarning)


@needs_method("cg")
def test_adjoint_info_filled_by_backward():
    row, col, val = poisson2d(6)
    v = val.clone().requires_grad_()
    x, info = SparseTensor(v, row, col, (36, 36)).solve(torch.ones(36, dtype=f64), method="cg",
                                                        return_info=True)
    assert info.adjoint is None
    x.sum().backward()
    assert info.adjoint is not None and info.adjoint.converged


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------
def test_solve_argument_errors():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match=r"b must have shape \(9,\)"):
        A.solve(torch.ones(8, dtype=f64))
    with pytest.raises(TypeError, match="dtype"):
        A.solve(torch.ones(9, dtype=torch.float32))
    with pytest.raises(ValueError, match="method = 'foo'"):
        A.solve(torch.ones(9, dtype=f64), method="foo")
    with pytest.raises(ValueError, match="preconditioner"):
        A.solve(torch.ones(9, dtype=f64), preconditioner="bar")
    with pytest.raises(ValueError, match="square"):
        SparseTensor(torch.ones(2, dtype=f64), torch.tensor([0, 1]), torch.tensor([0, 1]),
                     (2, 3)).solve(torch.ones(2, dtype=f64), method="lu")
    with pytest.raises(ValueError, match="rtol"):
        A.solve(torch.ones(9, dtype=f64), rtol=-1.0)
    # torch-sla backend names run on libsla (tests/python/test_compat_solve.py)
    x, info = A.solve(torch.ones(9, dtype=f64), backend="scipy", return_info=True)
    assert "torch-sla backend 'scipy'" in info.description


def test_unknown_backend_is_a_value_error():
    """docs/python.md: an unknown backend name is a ValueError naming the function that lists
    the backends (the C message names sla_backend_count/sla_backend_get)."""
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match=r"'nosuch' is not a libsla backend.*"
                                         r"torch_sla\.show_backends\(\) lists them"):
        A.solve(torch.ones(9, dtype=f64), method="lu", backend="nosuch")
    assert hasattr(torch_sla, "show_backends")


@needs_method("lu")
def test_nonfinite_values_and_rhs_raise_value_error():
    row, col, val = random_sparse(4, seed=1)
    bad = val.clone()
    bad[1] = float("nan")
    with pytest.raises(ValueError, match="not finite|NaN|non-finite"):
        SparseTensor(bad, row, col, (4, 4)).solve(torch.ones(4, dtype=f64), method="lu")
    b = torch.ones(4, dtype=f64)
    b[2] = float("inf")
    with pytest.raises(ValueError, match=r"B\[0\]\[2\]\[0\] is not finite"):
        SparseTensor(val, row, col, (4, 4)).solve(b, method="lu")


@needs_method("lu")
def test_singular_matrix_raises_runtime_error():
    row = torch.tensor([0, 0, 1, 1])
    col = torch.tensor([0, 1, 0, 1])
    val = torch.tensor([1.0, 2.0, 2.0, 4.0], dtype=f64)
    with pytest.raises(torch_sla.SingularMatrixError) as e:
        SparseTensor(val, row, col, (2, 2)).solve(torch.ones(2, dtype=f64), method="lu")
    assert isinstance(e.value, RuntimeError) and str(e.value)


@needs_method("cholesky")
def test_cholesky_of_indefinite_matrix():
    d = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=f64)
    with pytest.raises(torch_sla.NotPositiveDefiniteError):
        SparseTensor.from_dense(d).solve(torch.ones(2, dtype=f64), method="cholesky")
    x = SparseTensor.from_dense(d).solve(torch.ones(2, dtype=f64))      # auto falls back
    assert torch.allclose(d @ x, torch.ones(2, dtype=f64))


def test_spsolve_functional_form():
    if not torch_sla.method_available("auto"):
        pytest.skip("no direct backend yet")
    row, col, val = poisson2d(4)
    b = torch.ones(16, dtype=f64)
    x = torch_sla.spsolve(val, row, col, (16, 16), b)
    assert torch.allclose(dense_of(row, col, val, (16, 16)) @ x, b)


@needs_method("lu")
def test_no_grad_solves_release_their_solver():
    torch_sla.clear_solver_cache()
    row, col, val = random_sparse(6, seed=12)
    b = torch.ones(6, dtype=f64)
    v = val.clone().requires_grad_()
    with torch.no_grad():
        xs = [SparseTensor(v * (1 + 0.1 * i), row, col, (6, 6)).solve(b, method="lu")
              for i in range(4)]
    assert torch_sla.solver_cache_info()[0] == 1          # one solver, refactored 4 times
    keep = [SparseTensor(v * (1 + 0.1 * i), row, col, (6, 6)).solve(b, method="lu")
            for i in range(2)]                             # graphs alive: two solvers
    assert torch_sla.solver_cache_info()[0] == 2 and all(k.requires_grad for k in keep)
    for i, x in enumerate(xs):
        D = dense_of(row, col, val * (1 + 0.1 * i), (6, 6))
        assert torch.allclose(D @ x, b)


@needs_method("lu")
def test_solves_from_several_threads():
    import threading
    row, col, val = random_sparse(30, seed=13)
    b = torch.randn(30, dtype=f64)
    errors = []

    def work(t):
        for i in range(20):
            v = val * (1 + 0.01 * (t * 20 + i))
            x = SparseTensor(v, row, col, (30, 30)).solve(b, method="lu")
            r = float(torch.linalg.norm(dense_of(row, col, v, (30, 30)) @ x - b))
            if r > 1e-10:
                errors.append((t, i, r))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors


@needs_method("cholesky")
def test_cached_symmetric_solver_refuses_unsymmetric_values():
    """Cholesky reads one triangle: new values that are not symmetric must not be refactored
    silently (a fresh create raises libsla's message; 'auto' chooses again)."""
    torch_sla.clear_solver_cache()
    row, col, val = random_sparse(8, seed=21, spd=True)
    b = torch.randn(8, dtype=f64)
    SparseTensor(val, row, col, (8, 8)).solve(b, method="cholesky")
    SparseTensor(val, row, col, (8, 8)).solve(b)                       # auto → cholesky
    bad = val.clone()
    off = (row != col).nonzero()[0, 0]
    bad[off] += 0.5
    with pytest.raises(ValueError):
        SparseTensor(bad, row, col, (8, 8)).solve(b, method="cholesky")
    if torch_sla.method_available("lu"):
        A = SparseTensor(bad, row, col, (8, 8))
        x, info = A.solve(b, return_info=True)
        assert info.method != "cholesky"
        assert torch.allclose(A.to_dense() @ x, b, atol=1e-12)


@pytest.mark.parametrize("m,n,method", [(30, 12, "auto"), (12, 30, "lsqr"), (15, 15, "lsqr")])
def test_least_squares_matches_numpy(m, n, method):
    """A rectangular (or square) A: x = argmin ‖b − A x‖ (minimum norm) like numpy's lstsq,
    batched with two right-hand sides."""
    row, col, val = random_rect(m, n, m + n)
    A = SparseTensor(val, row, col, (m, n))
    b = torch.randn(m, 2, dtype=f64, generator=torch.Generator().manual_seed(1))
    x, info = A.solve(b, method=method, rtol=1e-12, return_info=True)
    assert x.shape == (n, 2)
    assert info.method == "lsqr" and info.converged
    Ad = dense_of(row, col, val, (m, n)).numpy()
    ref = np.linalg.lstsq(Ad, b.numpy(), rcond=None)[0]
    np.testing.assert_allclose(x.numpy(), ref, rtol=1e-8, atol=1e-10)
    # the optimality measure ‖Aᵀ(b − A x)‖ (worst column) is reported and small
    nr = np.linalg.norm(Ad.T @ (b.numpy() - Ad @ x.numpy()), axis=0).max()
    assert info.normal_residual <= 1e-9 * np.linalg.norm(Ad) * np.linalg.norm(b.numpy())
    assert abs(info.normal_residual - nr) <= 1e-6 * np.linalg.norm(Ad) * np.linalg.norm(b.numpy())


@pytest.mark.parametrize("m,n", [(14, 6), (6, 14)])
def test_least_squares_gradcheck(m, n):
    """Gradients of the least-squares solution with respect to the values and b (full column
    rank, and the minimum-norm solution of a wide A) against finite differences."""
    row, col, val = random_rect(m, n, 7 * m + n)
    b = torch.randn(m, dtype=f64, generator=torch.Generator().manual_seed(2))

    def f(v, bb):
        return SparseTensor(v, row, col, (m, n)).solve(bb, rtol=1e-14)

    assert gradcheck(f, (val.clone().requires_grad_(), b.clone().requires_grad_()),
                     eps=1e-6, atol=1e-6, rtol=1e-5)
