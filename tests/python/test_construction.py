"""Construction, conversions, properties and argument errors of SparseTensor."""
import numpy as np
import pytest
import scipy.sparse as sp
import torch

import torch_sla
from torch_sla import SparseTensor
from conftest import dense_of, poisson2d, random_sparse


def test_coo_any_order_and_duplicates_to_dense():
    row = torch.tensor([2, 0, 1, 0, 2, 0])
    col = torch.tensor([1, 0, 2, 0, 2, 2])
    val = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=torch.float64)
    A = SparseTensor(val, row, col, (3, 3))
    expect = torch.tensor([[6.0, 0, 6], [0, 0, 3], [0, 1, 5]], dtype=torch.float64)
    assert torch.equal(A.to_dense(), expect)
    assert A.nnz == 6 and A.pattern.nnz == 5 and A.pattern.has_duplicates
    assert A.shape == (3, 3) and A.dtype == torch.float64 and not A.is_batched


def test_from_dense_roundtrip_and_grad():
    d = torch.tensor([[1.0, 0, 2], [0, 0, 3], [4, 0, 0]], dtype=torch.float64,
                     requires_grad=True)
    A = SparseTensor.from_dense(d)
    assert A.nnz == 4
    assert torch.equal(A.to_dense(), d.detach())
    A.to_dense().pow(2).sum().backward()
    assert torch.equal(d.grad, 2 * d.detach())


def test_from_dense_batched_union_pattern():
    d = torch.zeros(2, 3, 3, dtype=torch.float64)
    d[0, 0, 1] = 1.0
    d[1, 2, 0] = 2.0
    A = SparseTensor.from_dense(d)
    assert A.shape == (2, 3, 3) and A.nnz == 2
    assert torch.equal(A.to_dense(), d)


@pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")
def test_torch_sparse_coo_and_csr():
    row, col, val = random_sparse(7, seed=3)
    d = dense_of(row, col, val, (7, 7))
    coo = torch.sparse_coo_tensor(torch.stack([row, col]), val, (7, 7))
    assert torch.allclose(SparseTensor.from_torch_sparse(coo).to_dense(), d)
    csr = d.to_sparse_csr()
    A = SparseTensor.from_torch_sparse(csr)
    assert torch.allclose(A.to_dense(), d)
    assert torch.allclose(A.to_torch_sparse().to_dense(), d)
    assert torch.allclose(A.to_csr().to_dense(), d)


def test_scipy_roundtrip_keeps_duplicates():
    S = sp.coo_matrix((np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))),
                      shape=(2, 3))
    A = SparseTensor.from_scipy(S)
    assert A.nnz == 3 and A.shape == (2, 3)
    assert np.array_equal(A.to_scipy().toarray(), S.toarray())
    A32 = SparseTensor.from_scipy(S.astype(np.float32))
    assert A32.dtype == torch.float32


def test_pattern_shared_by_same_indices_and_derived_tensors():
    row, col, val = poisson2d(5, shuffle=True)
    A = SparseTensor(val, row, col, (25, 25))
    B = SparseTensor(val * 2, row, col, (25, 25))          # same index tensors
    C = SparseTensor(val * 3, row.clone(), col.clone(), (25, 25))   # equal content
    assert B.pattern is A.pattern and C.pattern is A.pattern
    assert A.with_values(val + 1).pattern is A.pattern
    assert (2.0 * A).pattern is A.pattern and (-A).pattern is A.pattern
    assert A.T().pattern is A.T().pattern                  # transposed pattern cached
    row2 = row.clone()
    row2[0] = (row2[0] + 1) % 25                           # different content: new pattern
    assert SparseTensor(val, row2, col, (25, 25)).pattern is not A.pattern


def _mutate(way, t, arr=None):
    """Sets t[0] = (t[0] + 1) % 6 in one of the ways torch's version counter does or does not
    see."""
    new = int((t[0] + 1) % 6)
    if way == "numpy view":
        t.numpy()[0] = new
    elif way == ".data":
        t.data[0] = new
    elif way == "shared numpy memory":
        arr[0] = new                    # t = torch.from_numpy(arr)
    elif way == "in place":
        t[0] = new                      # bumps the version counter
    else:
        raise AssertionError(way)


@pytest.mark.parametrize("which", ["row", "col"])
@pytest.mark.parametrize("way", ["numpy view", ".data", "shared numpy memory", "in place"])
def test_pattern_cache_never_returns_a_stale_pattern(way, which):
    """Indices changed in place after a SparseTensor was built on them: a new SparseTensor on
    the same tensors, or on fresh tensors equal to the changed ones, gets the structure of the
    indices it is given (before, the cache returned the old structure when the change went
    behind torch's version counter)."""
    row, col, val = random_sparse(6, seed=3)
    arrs = {"row": row.numpy().copy(), "col": col.numpy().copy()}
    row, col = torch.from_numpy(arrs["row"]), torch.from_numpy(arrs["col"])
    original = (row.clone(), col.clone())
    A = SparseTensor(val, row, col, (6, 6))
    before = A.pattern
    _mutate(way, row if which == "row" else col, arrs[which])
    expect = dense_of(row, col, val, (6, 6))
    assert not torch.equal(expect, A.to_dense())          # the change moved an entry
    for r, c in ((row, col), (row.clone(), col.clone())):
        B = SparseTensor(val, r, c, (6, 6))
        assert B.pattern is not before
        assert torch.equal(B.to_dense(), expect)
        x = torch.linspace(1, 2, 6, dtype=torch.float64)
        assert torch.allclose(B @ x, expect @ x, rtol=1e-15, atol=0)
    # the changed content again is a cache hit; the original content still finds its pattern
    assert SparseTensor(val, row.clone(), col.clone(), (6, 6)).pattern is B.pattern
    assert SparseTensor(val, *original, (6, 6)).pattern is before


def test_pattern_cache_keeps_private_copies():
    """The cache holds copies of the indices, not the caller's tensors (which can change, and
    whose memory it would otherwise keep alive)."""
    import torch_sla._pattern as pc
    torch_sla.clear_pattern_cache()
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    e = pc._cache[(9, 9, row.numel())][0]
    assert e.pattern is A.pattern
    assert e.row.data_ptr() != row.data_ptr() and e.col.data_ptr() != col.data_ptr()
    assert torch.equal(e.row, row) and torch.equal(e.col, col)


def test_identity_pattern_skips_gather():
    row, col, val = poisson2d(4)
    A = SparseTensor(val, row, col, (16, 16))
    order = torch.argsort(row * 16 + col)
    Acsr = SparseTensor(val[order], row[order], col[order], (16, 16))
    assert Acsr.pattern.identity and not A.pattern.identity
    assert torch.equal(Acsr.to_dense(), A.to_dense())


def test_transpose():
    row, col, val = random_sparse(6, seed=1)
    A = SparseTensor(val, row, col, (6, 6))
    assert torch.equal(A.T().to_dense(), A.to_dense().t())
    R = SparseTensor(torch.tensor([1.0, 2.0], dtype=torch.float64), torch.tensor([0, 1]),
                     torch.tensor([2, 0]), (2, 3))
    assert R.T().shape == (3, 2) and torch.equal(R.T().to_dense(), R.to_dense().t())


def test_is_symmetric_and_norms():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    assert bool(A.is_symmetric())
    row, col, val = random_sparse(6, seed=2)
    B = SparseTensor(val, row, col, (6, 6))
    assert not bool(B.is_symmetric())
    d = B.to_dense()
    assert torch.allclose(B.norm("fro"), torch.linalg.norm(d))
    assert torch.allclose(B.norm(1), torch.linalg.matrix_norm(d, 1))
    assert torch.allclose(B.norm(float("inf")), torch.linalg.matrix_norm(d, float("inf")))
    assert torch.allclose(B.norm("max"), d.abs().max())
    vb = torch.stack([val, val.flip(0)])
    Bb = SparseTensor(vb, row, col, (2, 6, 6))
    assert Bb.is_symmetric().shape == (2,)
    assert torch.allclose(Bb.norm(), torch.linalg.norm(Bb.to_dense(), dim=(1, 2)))


def test_float32_path():
    row, col, val = random_sparse(5, seed=4, dtype=torch.float32)
    A = SparseTensor(val, row, col, (5, 5))
    assert A.to_dense().dtype == torch.float32
    assert torch.allclose(A.to_dense(), dense_of(row, col, val, (5, 5)))


# ---------------------------------------------------------------------------------------------
# Argument errors: ValueError / TypeError with a message naming the problem
# ---------------------------------------------------------------------------------------------
def test_index_out_of_range_message_from_c():
    with pytest.raises(ValueError, match=r"row\[2\] = 5 is out of range \[0, 3\)") as e:
        SparseTensor(torch.ones(3, dtype=torch.float64), torch.tensor([0, 1, 5]),
                     torch.tensor([0, 1, 2]), (3, 3))
    assert isinstance(e.value, torch_sla.SlaError) and e.value.status == -3
    with pytest.raises(ValueError, match=r"col\[0\] = -1"):
        SparseTensor(torch.ones(1, dtype=torch.float64), torch.tensor([0]), torch.tensor([-1]),
                     (3, 3))


def test_bad_shapes_and_dtypes():
    one = torch.ones(3, dtype=torch.float64)
    r = torch.tensor([0, 1, 2])
    with pytest.raises(ValueError, match="values has shape"):
        SparseTensor(torch.ones(4, dtype=torch.float64), r, r, (3, 3))
    with pytest.raises(ValueError, match="col_indices has 2"):
        SparseTensor(one, r, r[:2], (3, 3))
    with pytest.raises(TypeError, match="float64, float32, complex128 or complex64"):
        SparseTensor(torch.ones(3, dtype=torch.int32), r, r, (3, 3))
    with pytest.raises(TypeError, match="integer"):
        SparseTensor(one, r.double(), r, (3, 3))
    with pytest.raises(ValueError, match="shape"):
        SparseTensor(one, r, r, (3,))
    with pytest.raises(ValueError, match="values has shape"):
        SparseTensor(one, r, r, (2, 3, 3))                 # batched values missing


def test_sparse_tensor_list():
    mats = []
    for n, seed in ((3, 0), (5, 1), (4, 2)):
        row, col, val = random_sparse(n, seed=seed)
        mats.append(SparseTensor(val, row, col, (n, n)))
    L = torch_sla.SparseTensorList(mats)
    assert len(L) == 3 and L.shapes == [(3, 3), (5, 5), (4, 4)] and L[1] is mats[1]
    assert len(L[1:]) == 2 and [m for m in L] == mats
    D = L.to_block_diagonal()
    assert D.shape == (12, 12)
    assert torch.equal(D.to_dense(), torch.block_diag(*[m.to_dense() for m in mats]))
    back = torch_sla.SparseTensorList.from_block_diagonal(D, L.block_sizes())
    for a, b in zip(back, mats):
        assert torch.equal(a.to_dense(), b.to_dense())
    xs = [torch.randn(m.shape[0], dtype=torch.float64) for m in mats]
    for y, m, x in zip(L @ xs, mats, xs):
        assert torch.allclose(y, m.to_dense() @ x)
    L.append(mats[0])
    assert len(L) == 4
    with pytest.raises(TypeError):
        L.append(torch.zeros(2))
    with pytest.raises(ValueError, match="outside the diagonal blocks"):
        torch_sla.SparseTensorList.from_block_diagonal(SparseTensor.from_dense(
            torch.ones(4, 4, dtype=torch.float64)), [(2, 2), (2, 2)])


def test_show_backends_lists_every_backend(capsys):
    infos = torch_sla.show_backends()
    out = capsys.readouterr().out
    assert len(infos) == torch_sla._capi.lib.sla_backend_count() >= 1
    for b in infos:
        assert b.name in out
        assert b.available or b.unavailable_reason
