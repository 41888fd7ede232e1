"""torch-sla compatibility, item 4 of issue 17 and the SparseTensorList behaviour: the
SparseTensor surface (shape vocabulary, to(), predicates, conversions with batch_idx,
scalar and elementwise arithmetic, reductions with axis, constructors, graph components, spy)
and SparseTensorList's item-by-item arithmetic. Written from torch-sla's documentation."""
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor, SparseTensorList

from conftest import poisson2d, random_sparse

f64 = torch.float64


@pytest.fixture
def tri():
    val = torch.tensor([4.0, -1.0, -1.0, 4.0, -1.0, -1.0, 4.0], dtype=f64)
    row = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    col = torch.tensor([0, 1, 0, 1, 2, 1, 2])
    return SparseTensor(val, row, col, (3, 3))


def test_shape_vocabulary(tri):
    assert tri.block_shape == () and not tri.is_block and tri.sparse_dim == (0, 1)
    B = tri.with_values(tri.values.expand(2, 4, -1).clone())
    assert B.sparse_dim == (2, 3) and B.batch_shape == (2, 4) and B.batch_size == 8
    assert B.is_batched and B.ndim == 4 and tri.is_square


def test_to_accepts_either_order(tri):
    for args in (("cpu", torch.float32), (torch.float32, "cpu"), (torch.float32,)):
        assert tri.to(*args).dtype == torch.float32
    assert tri.to(device="cpu", dtype=torch.float32).dtype == torch.float32
    assert tri.to("cpu") is tri
    with pytest.raises(ValueError, match="CPU"):
        tri.to("cuda")
    with pytest.raises(ValueError, match="CPU"):
        tri.cuda()
    with pytest.raises(TypeError, match="float16"):
        tri.half()


def test_is_symmetric_cache_and_force_recompute(tri):
    assert bool(tri.is_symmetric()) and bool(tri.is_hermitian())
    tri.values[1] = 5.0                        # in place: torch's version counter moves
    assert not bool(tri.is_symmetric())
    v = tri.values
    v.data[1] = -1.0                           # behind the version counter
    assert not bool(tri.is_symmetric())        # cached
    assert bool(tri.is_symmetric(force_recompute=True))


def test_transpose_conj_h(tri):
    row, col, val = random_sparse(6, seed=1)
    A = SparseTensor(val, row, col, (6, 6))
    assert torch.equal(A.H().to_dense(), A.to_dense().t())
    assert A.conj() is A


def test_conversions_with_batch_idx(tri):
    B = tri.with_values(torch.stack([tri.values, 2 * tri.values]))
    assert B.to_dense().shape == (2, 3, 3)                         # ours: all items
    assert torch.equal(B.to_dense(batch_idx=(1,)), 2 * tri.to_dense())
    assert torch.equal(B.to_dense(batch_idx=1), 2 * tri.to_dense())
    assert torch.equal(B.to_torch_sparse(batch_idx=(1,)).to_dense(), 2 * tri.to_dense())
    assert torch.equal(B.to_csr(batch_idx=(0,)).to_dense(), tri.to_dense())
    with pytest.raises(ValueError, match="batch_idx"):
        B.to_csr()
    with pytest.raises(ValueError, match="out of range"):
        B.to_dense(batch_idx=2)


def test_scalar_and_elementwise_arithmetic(tri):
    D = tri.to_dense()
    mask = D != 0
    assert torch.equal((tri + 1).to_dense(), torch.where(mask, D + 1, D))   # stored entries
    assert torch.equal((1 + tri).to_dense(), (tri + 1).to_dense())
    assert torch.equal((tri - 1).to_dense(), torch.where(mask, D - 1, D))
    assert torch.equal((10 - tri).to_dense(), torch.where(mask, 10 - D, D))
    assert torch.equal((tri * tri).to_dense(), D * D)
    assert torch.equal((tri / tri).to_dense(), mask.to(f64))
    assert torch.equal((2 / tri).values, 2 / tri.values)
    assert torch.equal((tri ** 2).to_dense(), D ** 2)
    assert torch.equal(abs(-tri).to_dense(), D.abs())
    for name in ("abs", "sqrt", "square", "exp", "log", "sin", "tanh", "sigmoid", "relu"):
        got = getattr(tri.abs(), name)().values
        assert torch.allclose(got, getattr(torch, name)(tri.values.abs())), name
    assert torch.equal(tri.clamp(min=0).values, tri.values.clamp(min=0))
    other = SparseTensor.eye(3)
    with pytest.raises(ValueError, match="pattern"):
        tri * other
    v = tri.values.clone().requires_grad_(True)
    (tri.with_values(v).exp() * 3 + 1).sum().backward()
    assert torch.allclose(v.grad, 3 * torch.exp(tri.values))


def test_reductions_follow_their_definitions(tri):
    D = tri.to_dense()
    assert torch.equal(tri.sum(), D.sum())
    assert torch.equal(tri.sum(axis=0), D.sum(0)) and torch.equal(tri.sum(axis=1), D.sum(1))
    assert torch.equal(tri.sum(axis=(0, 1)), D.sum())
    assert torch.allclose(tri.mean(), D.sum() / 7)                    # over stored entries
    assert torch.allclose(tri.mean(axis=0), D.sum(0) / 7)            # their divisor: nnz
    assert torch.equal(tri.max(), torch.tensor(4.0, dtype=f64))
    assert torch.equal(tri.min(axis=1), D.min(1).values)             # dense, zeros included
    assert torch.equal(tri.prod(axis=0), D.prod(0))
    assert torch.equal(tri.prod(), tri.values.prod())
    B = tri.with_values(torch.stack([tri.values, 2 * tri.values, 3 * tri.values]))
    S = B.sum(axis=0)
    assert isinstance(S, SparseTensor) and torch.equal(S.to_dense(), 6 * D)
    assert torch.equal(B.sum(axis=1), B.to_dense().sum(1))
    assert torch.equal(B.sum(axis=(0, 2)), B.to_dense().sum((0, 2)))
    assert torch.equal(B.max(axis=0).to_dense(), 3 * D.clamp(min=0) + D.clamp(max=0))
    assert torch.allclose(B.mean(axis=0).values, 2 * tri.values)
    with pytest.raises(ValueError, match="out of range"):
        tri.sum(axis=2)


def test_constructors():
    assert torch.equal(SparseTensor.eye(4).to_dense(), torch.eye(4, dtype=f64))
    d = torch.tensor([1.0, 2.0, 3.0], dtype=f64)
    assert torch.equal(SparseTensor.diag(d).to_dense(), torch.diag(d))
    T = SparseTensor.tridiagonal(5)
    ref = 2 * torch.eye(5, dtype=f64) - torch.diag(torch.ones(4, dtype=f64), 1) \
        - torch.diag(torch.ones(4, dtype=f64), -1)
    assert torch.equal(T.to_dense(), ref) and T.pattern.identity      # built in CSR order
    T2 = SparseTensor.tridiagonal(4, torch.arange(4.0, dtype=f64), torch.ones(3, dtype=f64))
    assert torch.equal(torch.diagonal(T2.to_dense()), torch.arange(4.0, dtype=f64))
    assert torch.equal(SparseTensor.tridiagonal(1).to_dense(), torch.tensor([[2.0]], dtype=f64))
    with pytest.raises(ValueError, match="off_diag"):
        SparseTensor.tridiagonal(4, 2.0, torch.ones(4, dtype=f64))


def test_positive_definite_methods():
    row, col, val = poisson2d(4)
    P = SparseTensor(val, row, col, (16, 16))            # SPD, only weakly dominant
    assert not bool(P.is_positive_definite())            # Gershgorin: sufficient only
    assert bool(P.is_positive_definite(method="cholesky"))
    assert bool(P.is_positive_definite(method="eigenvalue"))
    N = P.with_values(val - 5.0 * (row == col))          # indefinite
    assert not bool(N.is_positive_definite("cholesky"))
    assert not bool(N.is_positive_definite("eigenvalue"))
    B = P.with_values(torch.stack([val, val - 5.0 * (row == col)]))
    assert B.is_positive_definite("cholesky").tolist() == [True, False]
    assert SparseTensor.tridiagonal(5, 4.0, -1.0).detect_matrix_type() == "spd"
    assert P.detect_matrix_type() == "symmetric"
    row, col, val = random_sparse(6, seed=4)
    assert SparseTensor(val, row, col, (6, 6)).detect_matrix_type() == "general"
    with pytest.raises(ValueError, match="method"):
        P.is_positive_definite("nope")


def test_connected_components():
    A = SparseTensor(torch.ones(2), torch.tensor([0, 1]), torch.tensor([1, 0]), (3, 3))
    labels, n = A.connected_components()
    assert n == 2 and labels.tolist() == [0, 0, 1] and A.has_isolated_components()
    # two blocks, nodes interleaved, values differentiable through the split
    rows = torch.tensor([0, 2, 2, 4, 1, 3, 0, 1, 2, 3, 4])
    cols = torch.tensor([2, 0, 4, 2, 3, 1, 0, 1, 2, 3, 4])
    vals = torch.arange(1.0, 12.0, dtype=f64, requires_grad=True)
    G = SparseTensor(vals, rows, cols, (5, 5))
    labels, n = G.connected_components()
    assert n == 2 and labels.tolist() == [0, 1, 0, 1, 0]
    parts = G.to_connected_components()
    assert isinstance(parts, SparseTensorList) and [p.shape for p in parts] == [(3, 3), (2, 2)]
    D = G.to_dense()
    assert torch.equal(parts[0].to_dense(), D[[0, 2, 4]][:, [0, 2, 4]])
    assert torch.equal(parts[1].to_dense(), D[[1, 3]][:, [1, 3]])
    sum(p.values.sum() for p in parts).backward()
    assert torch.equal(vals.grad, torch.ones(11, dtype=f64))
    assert not SparseTensor.tridiagonal(4).has_isolated_components()
    Bt = SparseTensor.tridiagonal(4)
    batch = Bt.with_values(Bt.values.expand(3, -1))
    assert batch.connected_components()[0].shape == (3, 4)
    with pytest.raises(ValueError, match="square"):
        SparseTensor(torch.ones(1), torch.tensor([0]), torch.tensor([1]), (1, 2)) \
            .connected_components()


def test_spy(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    A = SparseTensor.tridiagonal(10)
    out = tmp_path / "spy.png"
    ax = A.spy(save_path=str(out), title="tridiag")
    assert ax.get_title() == "tridiag" and out.stat().st_size > 1000
    img = ax.images[0].get_array()
    assert img.shape == (10, 10) and bool(img.mask[0, 5]) and float(img[0, 0]) == 1.0
    fig = SparseTensorList([A, SparseTensor.eye(3)]).spy(ncols=2)
    assert len(fig.axes) == 2


def test_sparse_tensor_list_arithmetic_is_item_by_item(tri):
    L1 = SparseTensorList([tri, SparseTensor.eye(2)])
    L2 = SparseTensorList([2 * tri, 3 * SparseTensor.eye(2)])
    assert torch.equal((L1 + L2)[0].to_dense(), 3 * tri.to_dense())
    assert torch.equal((L2 - L1)[1].to_dense(), 2 * torch.eye(2, dtype=f64))
    assert torch.equal((L1 * L2)[0].to_dense(), 2 * tri.to_dense() ** 2)
    assert torch.equal((L1 / 2)[0].to_dense(), tri.to_dense() / 2)
    assert torch.equal((2 * L1)[1].to_dense(), 2 * torch.eye(2, dtype=f64))
    assert torch.equal((-L1)[0].values, -tri.values)
    assert torch.equal((L1 + 1)[1].values, torch.full((2,), 2.0, dtype=f64))
    assert torch.equal((1 - L1)[1].values, torch.zeros(2, dtype=f64))
    with pytest.raises(ValueError, match="length"):
        L1 + SparseTensorList([tri])
    C = L1.concat(L2)
    assert len(C) == 4 and C[2] is L2[0]
    assert L1.block_sizes == [(3, 3), (2, 2)] and L1.block_sizes() == [(3, 3), (2, 2)]
    assert L1.total_nnz == 9 and L1.total_shape == (5, 5)
    x = torch.ones(3, dtype=f64)
    ys = SparseTensorList([tri, 2 * tri]) @ x              # one operand for every matrix
    assert torch.equal(ys[0], tri @ x) and torch.equal(ys[1], 2 * (tri @ x))
    assert [t.tolist() for t in L1.sum()] == [8.0, 2.0]
    assert len(L1.abs()) == 2 and isinstance(L1.sqrt(), SparseTensorList)
    assert [bool(p) for p in L1.is_positive_definite()] == [True, True]
