"""The functionality of torch-sla's example scripts (basic_usage, spsolve, batched_solve,
matrix_multiplication, determinant without DSparseTensor, gcn_example / gcn_batched,
persistence), written from their documentation and checked against dense references."""
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor, SparseTensorList

f64 = torch.float64


def tridiag(n, d=4.0):
    return SparseTensor.tridiagonal(n, d, -1.0)


def test_basic_usage_walkthrough(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    A = tridiag(10)
    D = A.to_dense()
    assert A.nnz == 28 and A.shape == (10, 10)
    assert torch.equal(SparseTensor.from_dense(D).to_dense(), D)
    A.spy(save_path=str(tmp_path / "spy.png"))
    assert bool(A.is_symmetric()) and bool(A.is_positive_definite())
    B = SparseTensor.from_dense(torch.triu(D))
    assert not bool(B.is_symmetric())
    x = torch.randn(10, dtype=f64)
    assert torch.allclose(A @ x, D @ x) and torch.allclose(A @ torch.eye(10, dtype=f64), D)
    assert torch.allclose(A.norm("fro"), torch.linalg.matrix_norm(D))
    lam, _ = A.eigsh(k=3, which="LA")
    assert torch.allclose(lam, torch.linalg.eigvalsh(D)[-3:], atol=1e-10)
    b = torch.ones(10, dtype=f64)
    assert torch.allclose(A.solve(b), torch.linalg.solve(D, b), atol=1e-12)
    v = A.values.clone().requires_grad_(True)
    bb = b.clone().requires_grad_(True)
    A.with_values(v).solve(bb).pow(2).sum().backward()
    assert v.grad.shape == A.values.shape                     # sparse gradient
    Ab = A.with_values(torch.stack([A.values, 2 * A.values]))
    assert Ab.solve(torch.ones(2, 10, dtype=f64)).shape == (2, 10)


def test_spsolve_example_functionality():
    A = tridiag(50)
    b = torch.randn(50, dtype=f64)
    ref = torch.linalg.solve(A.to_dense(), b)
    for backend, method in (("scipy", "lu"), ("scipy", "cg"), ("scipy", "bicgstab"),
                            ("scipy", "gmres"), ("pytorch", "cg"), ("auto", "auto")):
        x = torch_sla.spsolve(A.values, A.row_indices, A.col_indices, (50, 50), b,
                              backend=backend, method=method)
        assert torch.allclose(x, ref, atol=1e-8), (backend, method)
    print(torch_sla.get_available_backends(), torch_sla.is_cupy_available())
    assert torch_sla.get_backend_methods("scipy")


def test_batched_solve_example_functionality():
    A = tridiag(20)
    vb = torch.stack([A.values * (1 + 0.1 * i) for i in range(4)])
    Ab = A.with_values(vb)
    bb = torch.randn(4, 20, dtype=f64)
    assert torch.allclose(Ab.to_dense() @ Ab.solve(bb).unsqueeze(-1), bb.unsqueeze(-1),
                          atol=1e-10)
    assert torch.allclose(A.solve_batch(vb, bb), Ab.solve(bb))
    L = SparseTensorList([tridiag(n) for n in (5, 8, 11)])
    xs = L.solve([torch.ones(n, dtype=f64) for n in (5, 8, 11)])
    assert [x.shape[0] for x in xs] == [5, 8, 11]
    assert [round(float(n), 6) for n in L.norm("fro")] == \
        [round(float(t.to_dense().norm()), 6) for t in L]
    lam, _ = Ab.eigsh(k=1, which="LA")
    assert lam.shape == (4, 1)
    U, S, Vt = Ab.svd(k=2)
    assert S.shape == (4, 2) and torch.allclose(S[:, 0], lam[:, 0], atol=1e-10)  # SPD: σ = λ


def test_matrix_multiplication_example_functionality():
    A, B = tridiag(12), SparseTensor.from_dense(torch.randn(12, 7, dtype=f64) *
                                                (torch.rand(12, 7) < 0.3))
    X = torch.randn(12, 3, dtype=f64)
    assert torch.allclose(A @ X, A.to_dense() @ X)
    assert torch.allclose(X.t() @ A, X.t() @ A.to_dense())
    C = A @ B
    assert torch.allclose(C.to_dense(), A.to_dense() @ B.to_dense(), atol=1e-14)
    v = A.values.clone().requires_grad_(True)
    (A.with_values(v) @ A.with_values(v)).to_dense().sum().backward()
    assert v.grad is not None and v.grad.shape == v.shape


def test_determinant_example_functionality():
    A = tridiag(6, 3.0)
    D = A.to_dense()
    assert torch.allclose(A.det(), torch.linalg.det(D))
    v = A.values.clone().requires_grad_(True)
    A.with_values(v).det().backward()
    Dd = D.clone().requires_grad_(True)
    torch.linalg.det(Dd).backward()
    assert torch.allclose(v.grad, Dd.grad[A.row_indices, A.col_indices])
    assert torch.allclose(A.logdet(), torch.logdet(D))


def test_gcn_functionality():
    """Symmetric normalisation D^-1/2 (A + I) D^-1/2 with SparseTensor ops, two-layer GCN
    message passing and training through the sparse values."""
    torch.manual_seed(0)
    n, f = 30, 4
    src = torch.randint(0, n, (60,))
    dst = torch.randint(0, n, (60,))
    row = torch.cat([src, dst, torch.arange(n)])
    col = torch.cat([dst, src, torch.arange(n)])
    adj = SparseTensor(torch.ones(row.numel(), dtype=f64), row, col, (n, n))
    deg = adj.sum(axis=1)                                      # row sums
    dinv = deg.pow(-0.5)
    norm = adj.with_values(adj.values * dinv[row] * dinv[col])
    dense = adj.to_dense()
    ref = torch.diag(dense.sum(1).pow(-0.5)) @ dense @ torch.diag(dense.sum(1).pow(-0.5))
    assert torch.allclose(norm.to_dense(), ref)
    assert torch.allclose(norm.clamp(min=0.01, max=0.5).values,
                          norm.values.clamp(0.01, 0.5))
    X = torch.randn(n, f, dtype=f64)
    W1 = torch.randn(f, 8, dtype=f64, requires_grad=True)
    W2 = torch.randn(8, 2, dtype=f64, requires_grad=True)
    ew = norm.values.clone().requires_grad_(True)
    target = torch.randint(0, 2, (n,))
    opt = torch.optim.Adam([W1, W2, ew], lr=0.05)
    losses = []
    for _ in range(40):
        A = norm.with_values(ew)
        out = A @ torch.relu(A @ (X @ W1)) @ W2
        loss = torch.nn.functional.cross_entropy(out, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < 0.8 * losses[0]
    # batched graphs as one block-diagonal operator (gcn_batched)
    L = SparseTensorList([norm, tridiag(5)])
    BD = L.to_block_diagonal()
    Y = BD @ torch.ones(n + 5, dtype=f64)
    assert torch.allclose(Y[:n], norm @ torch.ones(n, dtype=f64))


def test_persistence_example(tmp_path):
    A = tridiag(9)
    A.save(str(tmp_path / "m.safetensors"), metadata={"name": "tri"})
    assert torch.equal(SparseTensor.load(str(tmp_path / "m.safetensors")).to_dense(),
                       A.to_dense())
    torch_sla.save_mtx(A, str(tmp_path / "m.mtx"))
    info = torch_sla.load_mtx_info(str(tmp_path / "m.mtx"))
    assert info["shape"] == (9, 9) and info["nnz"] == 25
