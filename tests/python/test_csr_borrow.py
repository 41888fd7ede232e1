"""from_csr(borrow=True): libsla's pattern lies on the caller's index tensors (zero-copy), solves
to the same bits as the copying path, keeps the tensors alive until libsla lets go, and refuses
unsorted rows."""
import pytest
import torch

from torch_sla import SparseTensor, gallery
from torch_sla._capi import lib
from torch_sla._pattern import lent_count


@pytest.mark.parametrize("crow_dtype", [torch.int64, torch.int32])
def test_borrow_zero_copy_and_same_solve(crow_dtype):
    S = gallery.grid([30, 30], 4.0, -1.0, -1.0).to_torch_sparse().to_sparse_csr()
    v, crow, col = S.values().clone(), S.crow_indices().to(crow_dtype), S.col_indices().to(torch.int32)
    n = crow.numel() - 1
    before = lent_count()
    A = SparseTensor.from_csr(v, crow, col, (n, n), borrow=True)
    assert lib.sla_pattern_colind(A._pattern.ptr) == col.data_ptr()
    if crow_dtype == torch.int64:
        assert lib.sla_pattern_rowptr(A._pattern.ptr) == crow.data_ptr()
    B = SparseTensor.from_csr(v, crow, col, (n, n))
    b = torch.linspace(-1.0, 1.0, n, dtype=torch.float64)
    xa = A.solve(b, method="cg", preconditioner="jacobi", rtol=1e-10)
    xb = B.solve(b, method="cg", preconditioner="jacobi", rtol=1e-10)
    assert torch.equal(xa, xb)
    assert lent_count() == before + 1      # the tensors are held for libsla


def test_borrow_refuses_unsorted_rows():
    crow = torch.tensor([0, 2, 3], dtype=torch.int64)
    col = torch.tensor([1, 0, 1], dtype=torch.int32)
    before = lent_count()
    with pytest.raises(ValueError, match="col_indices"):
        SparseTensor.from_csr(torch.ones(3, dtype=torch.float64), crow, col, (2, 2), borrow=True)
    assert lent_count() == before
    with pytest.raises(IndexError, match="col_indices"):
        SparseTensor.from_csr(torch.ones(3, dtype=torch.float64), crow,
                              torch.tensor([0, 1, 2**32 + 1]), (2, 2), borrow=True)
