"""CSR (crow_indices) and int32 index input (issue 18 item 3): the same results and gradients as
COO input, lazy COO views, clear errors naming the argument, inputs never modified; gallery
tensors wrap libsla's values and build no index tensors."""
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor, gallery


def _csr_problem(n=5, seed=0, dtype=torch.float64):
    """An SPD matrix (shifted 2D Laplacian plus a random symmetric perturbation) as sorted CSR."""
    A = gallery.grid([n, n], 4.0, -1.0, -1.0).to_dense()
    g = torch.Generator().manual_seed(seed)
    A = A + 0.1 * torch.diag(torch.rand(n * n, generator=g, dtype=torch.float64))
    S = A.to(dtype).to_sparse_csr()
    return S.values().clone(), S.crow_indices().clone(), S.col_indices().clone(), A.to(dtype)


@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_csr_matches_coo_solve_matmul_and_grads(index_dtype):
    val, crow, col, D = _csr_problem()
    n = D.shape[0]
    crow_i, col_i = crow.to(index_dtype), col.to(index_dtype)
    crow0, col0 = crow_i.clone(), col_i.clone()
    row = torch.repeat_interleave(torch.arange(n), crow[1:] - crow[:-1])
    v1 = val.clone().requires_grad_()
    v2 = val.clone().requires_grad_()
    A1 = SparseTensor(v1, row, col, (n, n))
    A2 = SparseTensor.from_csr(v2, crow_i, col_i, (n, n))
    assert A2._row is None                                  # COO views not built yet
    b = torch.linspace(-1.0, 2.0, n, dtype=torch.float64)
    x1, x2 = A1.solve(b), A2.solve(b)
    assert torch.equal(x1, x2)
    assert torch.allclose(x1, torch.linalg.solve(D, b), rtol=1e-10, atol=1e-12)
    y1, y2 = A1 @ b, A2 @ b
    assert torch.equal(y1, y2)
    (x1.square().sum() + y1.sum()).backward()
    (x2.square().sum() + y2.sum()).backward()
    assert torch.equal(v1.grad, v2.grad)
    assert A2._row is None
    assert torch.equal(A2.row_indices, row) and torch.equal(A2.col_indices, col)
    assert A2.col_indices.dtype == torch.int64
    # inputs untouched
    assert torch.equal(crow_i, crow0) and torch.equal(col_i, col0)
    assert crow_i.dtype == index_dtype and torch.equal(val, v2.detach())


def test_csr_unsorted_columns_and_gradcheck():
    # 3x3 with row 0 columns given as (2, 0), row 2 with a repeated column (summed)
    crow = torch.tensor([0, 2, 3, 6], dtype=torch.int32)
    col = torch.tensor([2, 0, 1, 2, 0, 2], dtype=torch.int32)
    val = torch.tensor([0.5, 4.0, 3.0, 2.0, 0.25, 1.5], dtype=torch.float64)
    dense = torch.tensor([[4.0, 0.0, 0.5], [0.0, 3.0, 0.0], [0.25, 0.0, 3.5]],
                         dtype=torch.float64)
    A = SparseTensor.from_csr(val, crow, col, (3, 3))
    assert torch.equal(A.to_dense(), dense)
    b = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    assert torch.allclose(A.solve(b), torch.linalg.solve(dense, b), rtol=1e-12)
    row = torch.repeat_interleave(torch.arange(3), crow[1:] - crow[:-1])
    B = SparseTensor(val, row, col, (3, 3))
    assert torch.equal(A.solve(b), B.solve(b))

    def f(v, bb):
        return SparseTensor.from_csr(v, crow, col, (3, 3)).solve(bb)
    assert torch.autograd.gradcheck(f, (val.clone().requires_grad_(), b.clone().requires_grad_()))
    assert torch.autograd.gradcheck(
        lambda v, x: SparseTensor.from_csr(v, crow, col, (3, 3)) @ x,
        (val.clone().requires_grad_(), b.clone().requires_grad_()))


def test_from_torch_sparse_csr_int32_keeps_csr():
    val, crow, col, D = _csr_problem(4)
    S = torch.sparse_csr_tensor(crow.to(torch.int32), col.to(torch.int32), val, D.shape)
    A = SparseTensor.from_torch_sparse(S)
    assert A._row is None and A._pattern.identity
    assert torch.equal(A.to_dense(), D)
    x = torch.ones(D.shape[0], dtype=torch.float64)
    assert torch.allclose(A @ x, D @ x, rtol=1e-14)


def test_csr_bad_input_names_the_argument():
    val = torch.ones(3, dtype=torch.float64)
    with pytest.raises(ValueError, match="crow_indices"):      # decreasing
        SparseTensor.from_csr(val, torch.tensor([0, 2, 1, 3]), torch.tensor([0, 1, 2]), (3, 3))
    with pytest.raises(ValueError, match="crow_indices"):      # does not start at 0
        SparseTensor.from_csr(val, torch.tensor([1, 2, 3, 3]), torch.tensor([0, 1, 2]), (3, 3))
    with pytest.raises(ValueError, match="crow_indices"):      # wrong length
        SparseTensor.from_csr(val, torch.tensor([0, 1, 3]), torch.tensor([0, 1, 2]), (3, 3))
    with pytest.raises(ValueError, match="crow_indices\\[-1\\]"):
        SparseTensor.from_csr(val, torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 2]), (3, 3))
    with pytest.raises((ValueError, IndexError), match="col_indices\\[2\\] = 3"):
        SparseTensor.from_csr(val, torch.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 3]), (3, 3))
    with pytest.raises((ValueError, IndexError), match="col_indices\\[0\\] = -1"):
        SparseTensor.from_csr(val, torch.tensor([0, 1, 2, 3]), torch.tensor([-1, 1, 2]), (3, 3))
    with pytest.raises(TypeError, match="crow_indices must be an integer tensor"):
        SparseTensor.from_csr(val, torch.tensor([0.0, 1, 2, 3]), torch.tensor([0, 1, 2]), (3, 3))
    with pytest.raises(TypeError, match="col_indices must be an integer tensor"):
        SparseTensor.from_csr(val, torch.tensor([0, 1, 2, 3]), torch.tensor([0.0, 1, 2]), (3, 3))
    with pytest.raises(TypeError, match="values must be"):
        SparseTensor.from_csr(val.int(), torch.tensor([0, 1, 2, 3]), torch.tensor([0, 1, 2]),
                              (3, 3))
    with pytest.raises(ValueError, match="values has shape"):
        SparseTensor.from_csr(torch.ones(4, dtype=torch.float64), torch.tensor([0, 1, 2, 3]),
                              torch.tensor([0, 1, 2]), (3, 3))


def test_gallery_tensor_wraps_c_values_and_builds_no_index_tensors():
    A = gallery.grid([6, 7], 4.0, -1.0, -1.0)
    assert A._row is None and A._col is None and A._pattern.identity
    B = A.with_values(2.0 * A.values)
    assert B._row is None
    b = torch.ones(42, dtype=torch.float64)
    x = A.solve(b, method="cg", preconditioner="amg", rtol=1e-12)
    assert float(torch.linalg.norm(A @ x - b)) < 1e-9
    D = A.to_dense()
    r, c = A.row_indices, A.col_indices
    assert torch.equal(D[r, c], A.values)
    assert torch.equal(torch.sparse_coo_tensor(torch.stack([r, c]), A.values, (42, 42))
                       .to_dense(), D)
    del A, B          # the C buffer is freed with the last tensor (ASan checks the free)
    import gc
    gc.collect()
