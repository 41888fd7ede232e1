"""A @ x and x @ A (SpMV and its adjoint) against dense references, gradcheck, batches,
duplicates, float32."""
import pytest
import torch
from torch.autograd import gradcheck

from torch_sla import SparseTensor
from conftest import dense_of, random_sparse

f64 = torch.float64


def rect(m=5, n=4, seed=0, dtype=f64, dup=True):
    """Random m×n COO with duplicates (last two entries repeat the first two)."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(m, n, generator=g) < 0.5
    row, col = mask.nonzero(as_tuple=True)
    if dup:
        row, col = torch.cat([row, row[:2]]), torch.cat([col, col[:2]])
    val = torch.randn(row.numel(), generator=g, dtype=dtype)
    return row, col, val


@pytest.mark.parametrize("xshape", [(4,), (4, 3), (2, 4, 3)])
def test_matvec_unbatched(xshape):
    row, col, val = rect()
    A = SparseTensor(val, row, col, (5, 4))
    x = torch.randn(*xshape, dtype=f64)
    assert torch.allclose(A @ x, A.to_dense() @ x)


@pytest.mark.parametrize("xshape", [(5,), (3, 5), (2, 3, 5)])
def test_vecmat_unbatched(xshape):
    row, col, val = rect()
    A = SparseTensor(val, row, col, (5, 4))
    x = torch.randn(*xshape, dtype=f64)
    assert torch.allclose(x @ A, x @ A.to_dense())


@pytest.mark.parametrize("xshape", [(3, 4), (3, 4, 2), (4,), (4, 2)])
def test_matvec_batched(xshape):
    row, col, val = rect()
    vb = torch.randn(3, val.numel(), dtype=f64)
    A = SparseTensor(vb, row, col, (3, 5, 4))
    x = torch.randn(*xshape, dtype=f64)
    D = A.to_dense()
    ref = D @ x if len(xshape) != 2 or xshape[0] != 3 else (D @ x.unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(A @ x, ref)


@pytest.mark.parametrize("xshape", [(3, 5), (3, 2, 5), (5,), (2, 5)])
def test_vecmat_batched(xshape):
    row, col, val = rect()
    vb = torch.randn(3, val.numel(), dtype=f64)
    A = SparseTensor(vb, row, col, (3, 5, 4))
    x = torch.randn(*xshape, dtype=f64)
    D = A.to_dense()
    ref = x @ D if len(xshape) != 2 or xshape[0] != 3 else (x.unsqueeze(-2) @ D).squeeze(-2)
    assert torch.allclose(x @ A, ref)


def test_gradcheck_matvec_both_sides_with_duplicates():
    row, col, val = rect()
    v = val.clone().requires_grad_()
    x = torch.randn(4, 2, dtype=f64, requires_grad=True)
    y = torch.randn(3, 5, dtype=f64, requires_grad=True)
    assert gradcheck(lambda v, x: SparseTensor(v, row, col, (5, 4)) @ x, (v, x))
    assert gradcheck(lambda v, y: y @ SparseTensor(v, row, col, (5, 4)), (v, y))


def test_gradcheck_batched_shared_and_batched_x():
    row, col, val = rect()
    vb = torch.randn(3, val.numel(), dtype=f64, requires_grad=True)
    xs = torch.randn(4, 2, dtype=f64, requires_grad=True)        # shared by the batch
    xb = torch.randn(3, 4, dtype=f64, requires_grad=True)        # one per matrix
    yb = torch.randn(3, 2, 5, dtype=f64, requires_grad=True)
    assert gradcheck(lambda v, x: SparseTensor(v, row, col, (3, 5, 4)) @ x, (vb, xs))
    assert gradcheck(lambda v, x: SparseTensor(v, row, col, (3, 5, 4)) @ x, (vb, xb))
    assert gradcheck(lambda v, y: y @ SparseTensor(v, row, col, (3, 5, 4)), (vb, yb))


def test_duplicates_receive_their_slots_gradient():
    row = torch.tensor([0, 0, 1])
    col = torch.tensor([1, 1, 0])
    v = torch.tensor([1.0, 2.0, 3.0], dtype=f64, requires_grad=True)
    x = torch.tensor([5.0, 7.0], dtype=f64)
    y = SparseTensor(v, row, col, (2, 2)) @ x                   # y = [3·7, 3·5]
    assert torch.equal(y, torch.tensor([21.0, 15.0], dtype=f64))
    y.sum().backward()
    assert torch.equal(v.grad, torch.tensor([7.0, 7.0, 5.0], dtype=f64))


def test_float32_matmul():
    row, col, val = rect(dtype=torch.float32)
    A = SparseTensor(val, row, col, (5, 4))
    x = torch.randn(4, 3, dtype=torch.float32)
    y = A @ x
    assert y.dtype == torch.float32
    assert torch.allclose(y, A.to_dense() @ x, atol=1e-5)


def test_matmul_errors():
    row, col, val = rect()
    A = SparseTensor(val, row, col, (5, 4))
    with pytest.raises(ValueError, match="A is 5×4"):
        A @ torch.ones(5, dtype=f64)
    with pytest.raises(TypeError, match="dtype"):
        A @ torch.ones(4, dtype=torch.float32)
    with pytest.raises(ValueError, match="x @ A"):
        torch.ones(4, dtype=f64) @ A
    Ab = SparseTensor(torch.randn(3, val.numel(), dtype=f64), row, col, (3, 5, 4))
    with pytest.raises(ValueError, match="x must be"):
        Ab @ torch.ones(2, 4, dtype=f64)


def test_large_random_against_dense():
    row, col, val = random_sparse(60, density=0.1, seed=9)
    A = SparseTensor(val, row, col, (60, 60))
    x = torch.randn(60, 7, dtype=f64)
    assert torch.allclose(A @ x, dense_of(row, col, val, (60, 60)) @ x)
