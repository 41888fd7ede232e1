"""det, logdet, slogdet from the factorization: dense references and gradcheck."""
import pytest
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import needs_method, poisson2d, random_sparse, symmetric_param

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
