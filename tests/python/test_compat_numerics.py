"""torch-sla compatibility, item 8 of issue 17 (the part done): sparse @ sparse (SpGEMM) with
gradients for both operands, svd(k), condition_number, norm(2) of non-symmetric matrices."""
import pytest
import torch

from torch_sla import SparseTensor

f64 = torch.float64


def rnd(m, n, seed, density=0.3, diag=0.0):
    g = torch.Generator().manual_seed(seed)
    D = torch.randn(m, n, generator=g, dtype=f64) * (torch.rand(m, n, generator=g) < density)
    D += diag * torch.eye(m, n, dtype=f64)
    return SparseTensor.from_dense(D)


def test_spgemm_values_pattern_and_batches():
    A, B = rnd(7, 5, 1), rnd(5, 9, 2)
    C = A @ B
    assert torch.allclose(C.to_dense(), A.to_dense() @ B.to_dense(), atol=1e-14)
    assert C.pattern.identity and C.shape == (7, 9)
    # structural: every (i, j) with a common k is stored, cancellation or not
    Ad, Bd = (A.to_dense() != 0).double(), (B.to_dense() != 0).double()
    assert C.pattern.nnz == int(((Ad @ Bd) > 0).sum())
    Ab = A.with_values(torch.stack([A.values, 2 * A.values, -A.values]))
    Cb = Ab @ B
    assert Cb.shape == (3, 7, 9)
    assert torch.allclose(Cb.to_dense(), Ab.to_dense() @ B.to_dense(), atol=1e-13)
    Bb = B.with_values(torch.stack([B.values, B.values + 1, 3 * B.values]))
    assert torch.allclose((Ab @ Bb).to_dense(), Ab.to_dense() @ Bb.to_dense(), atol=1e-13)
    assert torch.allclose((A @ Bb).to_dense(), A.to_dense() @ Bb.to_dense(), atol=1e-13)
    with pytest.raises(ValueError, match="7×5"):
        A @ A
    assert torch.equal((A @ B).to_dense(), C.to_dense())       # the product pattern is cached


def test_spgemm_gradients_both_operands():
    A, B = rnd(6, 5, 3), rnd(5, 4, 4)
    a = A.values.clone().requires_grad_(True)
    b = B.values.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a, b: (A.with_values(a) @ B.with_values(b)).values, (a, b))
    ab = torch.stack([A.values, 2 * A.values]).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda ab, b: (A.with_values(ab) @ B.with_values(b)).to_dense(), (ab, b))
    # A·Aᵀ: both operands share the values
    sq = rnd(6, 6, 5, diag=2.0)
    v = sq.values.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: (sq.with_values(v) @ sq.with_values(v).T())
                                    .to_dense(), (v,))
    x = (A.with_values(a) @ B.with_values(b)).values.pow(2).sum()
    g = torch.autograd.grad(x, a, create_graph=True)[0]
    with pytest.raises(RuntimeError, match="once_differentiable|twice|double"):
        g.sum().backward()


@pytest.mark.parametrize("m,n", [(30, 20), (20, 30)])
def test_svd_against_dense(m, n):
    A = rnd(m, n, 6, density=0.4, diag=3.0)
    U, S, Vt = A.svd(k=4)
    D = A.to_dense()
    ref = torch.linalg.svdvals(D)[:4]
    assert torch.allclose(S, ref, atol=1e-12)
    assert torch.allclose(D @ Vt.t(), U * S, atol=1e-12)
    assert torch.allclose(U.t() @ U, torch.eye(4, dtype=f64), atol=1e-10)
    assert torch.allclose(Vt @ Vt.t(), torch.eye(4, dtype=f64), atol=1e-10)
    v = A.values.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: A.with_values(v).svd(k=3)[1], (v,))
    with pytest.raises(ValueError, match="k = 21"):
        A.svd(k=21)


def test_svd_batched_and_gradient_closed_form():
    A = rnd(12, 8, 7, density=0.5, diag=2.0)
    Ab = A.with_values(torch.stack([A.values, 2 * A.values]))
    _, S, _ = Ab.svd(k=2)
    assert torch.allclose(S[1], 2 * S[0], atol=1e-12)
    # ∂σ₁/∂a_ij = u_i v_j (simple top singular value)
    v = A.values.clone().requires_grad_(True)
    U, S, Vt = A.with_values(v).svd(k=1)
    S[0].backward()
    D = A.to_dense()
    u, s, vt = torch.linalg.svd(D)
    want = (u[:, 0][A.row_indices] * vt[0][A.col_indices])
    assert torch.allclose(v.grad, want, atol=1e-10)


def test_condition_number_and_norm2():
    d = torch.tensor([1.0, 2.0, 4.0], dtype=f64)
    idx = torch.arange(3)
    assert torch.allclose(SparseTensor(d, idx, idx, (3, 3)).condition_number(ord=2),
                          torch.tensor(4.0, dtype=f64))
    A = rnd(20, 20, 8, density=0.3, diag=4.0)
    D = A.to_dense()
    assert torch.allclose(A.condition_number(), torch.linalg.cond(D), rtol=1e-9)
    with pytest.raises(ValueError, match="ord"):
        A.condition_number(ord=1)
    assert not bool(A.is_symmetric())
    assert torch.allclose(A.norm(2), torch.linalg.matrix_norm(D, 2), rtol=1e-12)
    R = rnd(15, 9, 9, diag=1.0)
    assert torch.allclose(R.norm(2), torch.linalg.matrix_norm(R.to_dense(), 2), rtol=1e-12)
    v = A.values.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: A.with_values(v).norm(2), (v,))
    assert torch.autograd.gradcheck(lambda v: A.with_values(v).condition_number(), (v,))


def test_stochastic_logdet_is_a_marked_estimate():
    import torch_sla
    from torch_sla import datasets as D
    A = D.laplacian_2d(30).tensor()
    exact = float(A.logdet())
    est, std = A.logdet("hutchinson", num_probes=40, lanczos_iter=40, return_std=True)
    assert abs(float(est) - exact) < 4 * float(std) and abs(float(est) / exact - 1) < 0.02
    # Monte-Carlo error ~ 1/√p: 16× the probes, about a quarter of the standard error
    _, s25 = A.logdet("slq", num_probes=25, return_std=True)
    _, s400 = A.logdet("slq", num_probes=400, return_std=True)
    assert 0.15 < float(s400 / s25) < 0.4
    # quadrature error: exact for a diagonal matrix with one step per distinct eigenvalue
    d = torch.tensor([1.0, 2.0, 4.0], dtype=f64)
    Dg = SparseTensor.diag(d)
    assert abs(float(Dg.logdet("hutchinson", lanczos_iter=3, num_probes=4)) -
               float(d.log().sum())) < 1e-12
    # DetConfig scopes det/logdet; explicit keywords win
    with torch_sla.DetConfig(method="hutchinson", num_probes=8):
        scoped = float(A.logdet())
        assert float(A.logdet(method="cholesky")) == exact
    assert scoped != exact and float(A.logdet()) == exact
    with pytest.raises(torch_sla.NotPositiveDefiniteError, match="Ritz"):
        (-A).logdet("hutchinson")
    with pytest.raises(ValueError, match="return_std"):
        A.logdet(return_std=True)


def test_stochastic_logdet_gradient_estimate():
    from torch_sla import datasets as D
    A = D.laplacian_2d(12).tensor()
    v = A.values.clone().requires_grad_(True)
    A.with_values(v).logdet().backward()
    exact = v.grad.clone()
    errs = []
    for p in (25, 400):
        w = A.values.clone().requires_grad_(True)
        A.with_values(w).logdet("hutchinson", num_probes=p).backward()
        errs.append(float((w.grad - exact).norm() / exact.norm()))
    assert errs[1] < 0.35 and errs[1] < errs[0] / 2.5          # unbiased: error ~ 1/√p
    B = A.with_values(torch.stack([A.values, 2 * A.values]))
    lad = B.logdet("hutchinson", num_probes=50)
    ex = B.logdet()
    assert lad.shape == (2,) and torch.allclose(lad, ex, rtol=0.02)
    w = A.values.clone().requires_grad_(True)
    with pytest.raises(RuntimeError, match="second derivatives"):
        torch.autograd.grad(A.with_values(w).logdet("hutchinson"), w, create_graph=True)
    A32 = A.to(torch.float32)
    assert abs(float(A32.logdet("hutchinson", num_probes=50)) / float(A.logdet()) - 1) < 0.02


def test_eigs_non_symmetric():
    g = torch.Generator().manual_seed(1)
    D = torch.randn(40, 40, generator=g, dtype=f64) * (torch.rand(40, 40, generator=g) < 0.2) \
        + torch.diag(torch.arange(40.0, dtype=f64))
    A = SparseTensor.from_dense(D)
    lam, X = A.eigs(k=4)
    ref = torch.linalg.eigvals(D)
    assert torch.allclose(lam, ref[torch.argsort(-ref.abs())][:4], atol=1e-10)
    assert float((D.to(torch.complex128) @ X - X * lam).abs().max()) < 1e-10
    lr, _ = A.eigs(k=2, which="SR")
    assert torch.allclose(lr.real, ref.real.sort().values[:2], atol=1e-8)
    # a rotation block: a conjugate pair ±i, vectors complex, never cut at k
    R = torch.zeros(6, 6, dtype=f64)
    R[0, 1], R[1, 0] = 1.0, -1.0
    R[2, 2], R[3, 3], R[4, 4], R[5, 5] = 3.0, 0.5, 0.1, 0.05
    for k in (2, 3):
        lam, X = SparseTensor.from_dense(R).eigs(k=k)
        assert float((R.to(torch.complex128) @ X - X * lam).abs().max()) < 1e-12
    assert torch.allclose(lam[1:].imag.abs(), torch.ones(2, dtype=f64))
    # symmetric matrices go to eigsh (real, differentiable)
    S = SparseTensor.tridiagonal(10)
    ls, _ = S.eigs(k=2, which="LR")
    assert ls.dtype == f64
    v = A.values.clone().requires_grad_(True)
    lam, _ = A.with_values(v).eigs(k=2)
    with pytest.raises(RuntimeError, match="not differentiable"):
        lam.real.sum().backward()
    with pytest.raises(ValueError, match="k = 39"):
        A.eigs(k=39)
