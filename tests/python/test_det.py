"""det, logdet, slogdet from the factorization: dense references and gradcheck."""
import math
import os

import pytest
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import MATRIX_DIR, needs_method, poisson2d, random_sparse, symmetric_param

f64 = torch.float64
pytestmark = needs_method("auto")


def with_duplicates(row, col, val):
    return (torch.cat([row, row[:3]]), torch.cat([col, col[:3]]),
            torch.cat([val[:3] * 0.5, val[3:], val[:3] * 0.5]))


@pytest.mark.parametrize("spd", (True, False))
def test_det_logdet_against_dense(spd):
    row, col, val = random_sparse(12, seed=4, spd=spd)
    r, c, v = with_duplicates(row, col, val)
    A = SparseTensor(v, r, c, (12, 12))
    D = A.to_dense()
    sign, lad = A.slogdet()
    rs, rl = torch.linalg.slogdet(D)
    assert float(sign) == float(rs) and torch.allclose(lad, rl, rtol=1e-12)
    assert torch.allclose(A.det(), torch.det(D), rtol=1e-10)
    assert torch.allclose(A.logdet(), torch.logdet(D), rtol=1e-12)


def test_logdet_of_negative_determinant_is_nan():
    d = torch.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=f64)
    A = SparseTensor.from_dense(d)
    assert torch.isnan(A.logdet()) and float(A.det()) == -1.0
    sign, lad = A.slogdet()
    assert float(sign) == -1.0 and abs(float(lad)) < 1e-15


@pytest.mark.parametrize("method", ("auto", "cholesky", "ldlt", "lu", "klu"))
def test_gradcheck_logdet_and_det(method):
    needs = needs_method(method)
    if needs.args[0]:
        pytest.skip(needs.kwargs["reason"])
    if method in ("auto", "cholesky", "ldlt"):
        row, col, expand, val = symmetric_param(*random_sparse(6, seed=8, spd=True))
    else:
        row, col, val = with_duplicates(*random_sparse(6, seed=8))
        expand = lambda v: v
    v = val.clone().requires_grad_()
    assert gradcheck(lambda v: SparseTensor(expand(v), row, col, (6, 6)).logdet(method=method),
                     (v,))
    assert gradcheck(lambda v: SparseTensor(expand(v), row, col, (6, 6)).det(method=method),
                     (v,))


def test_gradient_is_inverse_transpose_on_pattern():
    row, col, val = random_sparse(7, seed=2)
    v = val.clone().requires_grad_()
    SparseTensor(v, row, col, (7, 7)).logdet().backward()
    Dinv = torch.linalg.inv(SparseTensor(val, row, col, (7, 7)).to_dense())
    assert torch.allclose(v.grad, Dinv.t()[row, col], rtol=1e-10)


def test_batched_logdet_and_gradcheck():
    row, col, expand, val = symmetric_param(*random_sparse(5, seed=6, spd=True))
    scale = torch.tensor([[1.0, 2.0, 3.0], [0.5, 1.5, 2.5]], dtype=f64)[..., None]
    A = SparseTensor(expand(val.repeat(2, 3, 1) * scale), row, col, (2, 3, 5, 5))
    assert A.logdet().shape == (2, 3)
    assert torch.allclose(A.logdet(), torch.logdet(A.to_dense()), rtol=1e-12)
    v = (val.repeat(2, 3, 1) * scale).requires_grad_()
    assert gradcheck(lambda v: SparseTensor(expand(v), row, col, (2, 3, 5, 5)).logdet(), (v,))


def test_iterative_method_refused():
    row, col, val = poisson2d(3)
    with pytest.raises(ValueError, match="direct method"):
        SparseTensor(val, row, col, (9, 9)).logdet(method="cg")


@needs_method("lu")
def test_singular_matrix_determinant_is_zero():
    d = torch.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 3.0]], dtype=f64)
    A = SparseTensor.from_dense(d)
    sign, lad = A.slogdet(method="lu")
    assert float(sign) == 0.0 and float(lad) == float("-inf")
    assert float(A.det(method="lu")) == 0.0
    v = A.values.clone().requires_grad_()
    with pytest.raises(torch_sla.SingularMatrixError):
        SparseTensor(v, A.row_indices, A.col_indices, (3, 3)).logdet(method="lu").backward()


# --- method 'auto' restricted to direct methods (options.need_determinant) -----------------------
def test_laplace3d_logdet_closed_form():
    """Laplace3D10 (7-point Laplacian, 10³ grid, an M-matrix for which 'auto' may choose CG for
    solves): the determinant ops must factorize. Closed form: log det = Σ log(λ_i + λ_j + λ_k),
    λ_m = 2 − 2 cos(π m / 11)."""
    A = torch_sla.load_mtx(os.path.join(MATRIX_DIR, "Laplace3D10.mtx"))
    lam = [2.0 - 2.0 * math.cos(math.pi * m / 11) for m in range(1, 11)]
    exact = math.fsum(math.log(a + b + c) for a in lam for b in lam for c in lam)
    sign, lad = A.slogdet()
    assert float(sign) == 1.0 and abs(float(lad) - exact) < 1e-10 * exact
    assert abs(float(A.logdet()) - exact) < 1e-10 * exact
    assert float(A.det()) == math.inf                         # e^1691.7 overflows, like torch
    v = A.values.clone().requires_grad_()
    SparseTensor(v, A.row_indices, A.col_indices, A.shape).logdet().backward()
    # ∂ log det / ∂a_ii = (A⁻¹)_ii: check one diagonal entry against a solve
    i = int((A.row_indices == A.col_indices).nonzero()[0])
    e = torch.zeros(1000, dtype=f64)
    e[int(A.row_indices[i])] = 1.0
    ref = A.solve(e, method="lu")[int(A.row_indices[i])]
    assert torch.allclose(v.grad[i], ref, rtol=1e-10)


def test_determinant_solver_is_not_shared_with_solves():
    """A solver created for solves under method 'auto' (possibly iterative) is cached apart
    from the determinant's: need_determinant is part of the cache key."""
    from torch_sla import _solver
    A = torch_sla.load_mtx(os.path.join(MATRIX_DIR, "Laplace3D10.mtx"))
    torch_sla.clear_solver_cache()
    _, info = A.solve(torch.ones(1000, dtype=f64), return_info=True)
    sign, lad = A.slogdet()
    assert float(sign) == 1.0 and math.isfinite(float(lad))
    solvers = {key[3][-1]: [s.method for s in lst] for key, lst in _solver._cache.items()
               if key[0] == id(A.pattern)}
    assert set(solvers) == {False, True}
    assert solvers[False] == [info.method]
    assert solvers[True][0] in ("cholesky", "ldlt", "lu", "klu")
    assert _solver.Options().key != _solver.Options(need_determinant=True).key
    # and in the other order: the cached determinant solver does not serve the solve either
    torch_sla.clear_solver_cache()
    A.slogdet()
    _, info2 = A.solve(torch.ones(1000, dtype=f64), return_info=True)
    assert info2.method == info.method


# --- slogdet: the form for indefinite matrices ---------------------------------------------------
def test_slogdet_of_indefinite_hangglider_matches_dense():
    """hangGlider_2: symmetric indefinite, inertia (+914, −733, 0), so det < 0: logdet is NaN
    (torch.logdet's convention) and slogdet gives (−1, log|det|), differentiable."""
    A = torch_sla.load_mtx(os.path.join(MATRIX_DIR, "hangGlider_2.mtx"))
    sign, lad = A.slogdet()
    rs, rl = torch.linalg.slogdet(A.to_dense())
    assert float(sign) == -1.0 == float(rs)
    assert abs(float(lad) - float(rl)) < 1e-9 * abs(float(rl))
    assert torch.isnan(A.logdet())
    v = A.values.clone().requires_grad_()
    s2, lad2 = SparseTensor(v, A.row_indices, A.col_indices, A.shape).slogdet()
    assert s2.grad_fn is None and not s2.requires_grad and lad2.requires_grad
    lad2.backward()
    assert torch.isfinite(v.grad).all() and v.grad.abs().max() > 0


def test_slogdet_like_torch_linalg_slogdet_with_gradcheck():
    row, col, val = with_duplicates(*random_sparse(6, seed=11, dominant=False))
    A = SparseTensor(val, row, col, (6, 6))
    sign, lad = A.slogdet()
    rs, rl = torch.linalg.slogdet(A.to_dense())
    assert float(sign) == float(rs) and torch.allclose(lad, rl, rtol=1e-12)
    v = val.clone().requires_grad_()
    assert gradcheck(lambda v: SparseTensor(v, row, col, (6, 6)).slogdet()[1], (v,))
