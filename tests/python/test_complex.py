"""Complex SparseTensors (complex128, complex64): A @ x, x @ A, A.solve(b), slogdet / logdet /
det against dense torch references, torch.autograd.gradcheck on complex inputs (torch's
conjugate Wirtinger convention), gradients against the same loss on dense torch.linalg, real
matrices handed as complex, and the clear refusals of what does not take complex values yet."""
import pytest
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor

c128, c64 = torch.complex128, torch.complex64


def random_complex(n, seed=0, density=0.3, dtype=c128, batch=()):
    """(row, col, values, dense) of a random sparse diagonally dominant complex n × n."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < density
    mask |= torch.eye(n, dtype=torch.bool)
    row, col = mask.nonzero().t()
    shape = tuple(batch) + (row.numel(),)
    vals = torch.complex(torch.randn(shape, generator=g, dtype=torch.float64),
                         torch.randn(shape, generator=g, dtype=torch.float64))
    vals = vals + (row == col) * (3.0 + 1.5j) * n ** 0.5
    vals = vals.to(dtype)
    D = torch.zeros(tuple(batch) + (n, n), dtype=dtype)
    D[..., row, col] = vals
    return row, col, vals, D


def crandn(*shape, seed=1, dtype=c128):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(shape, generator=g, dtype=torch.float64),
                         torch.randn(shape, generator=g, dtype=torch.float64)).to(dtype)


@pytest.mark.parametrize("dtype,tol", [(c128, 1e-13), (c64, 1e-5)])
def test_matmul_and_rmatmul(dtype, tol):
    row, col, vals, D = random_complex(20, dtype=dtype)
    A = SparseTensor(vals, row, col, (20, 20))
    x, X = crandn(20, dtype=dtype), crandn(20, 3, dtype=dtype)
    assert (A @ x - D @ x).abs().max() <= tol * (D @ x).abs().max()
    assert (A @ X - D @ X).abs().max() <= tol * (D @ X).abs().max()
    assert (x @ A - x @ D).abs().max() <= tol * (x @ D).abs().max()


@pytest.mark.parametrize("method", ["lu", "klu"])
def test_direct_methods_gradcheck(method):
    n = 7
    row, col, vals, _ = random_complex(n, seed=24, density=0.4)
    v = vals.clone().requires_grad_(True)
    b = crandn(n, 2, seed=25).requires_grad_(True)
    assert gradcheck(lambda w, bb: SparseTensor(w, row, col, (n, n)).solve(bb, method=method),
                     (v, b), eps=1e-6, atol=1e-7)
    assert gradcheck(lambda w: SparseTensor(w, row, col, (n, n)).slogdet(method=method)[1],
                     (v,), eps=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype,tol", [(c128, 1e-12), (c64, 1e-5)])
def test_solve_against_dense(dtype, tol):
    row, col, vals, D = random_complex(30, seed=3, dtype=dtype)
    A = SparseTensor(vals, row, col, (30, 30))
    b = crandn(30, 2, seed=4, dtype=dtype)
    x, info = A.solve(b, return_info=True)
    ref = torch.linalg.solve(D.to(c128), b.to(c128))
    assert (x.to(c128) - ref).abs().max() <= tol * ref.abs().max()
    assert info.method == "lu" and info.relative_residual <= tol


def test_batched_solve_and_slogdet():
    row, col, vals, D = random_complex(12, seed=5, batch=(3,))
    A = SparseTensor(vals, row, col, (3, 12, 12))
    b = crandn(3, 12, seed=6)
    x = A.solve(b)
    ref = torch.linalg.solve(D, b.unsqueeze(-1)).squeeze(-1)
    assert (x - ref).abs().max() < 1e-12 * ref.abs().max()
    sign, lad = A.slogdet()
    s_ref, l_ref = torch.linalg.slogdet(D)
    assert (sign - s_ref).abs().max() < 1e-12 and (lad - l_ref).abs().max() < 1e-12
    assert lad.dtype == torch.float64 and sign.dtype == c128
    assert (A.det() - torch.linalg.det(D)).abs().max() < 1e-10 * torch.linalg.det(D).abs().max()
    assert (A.logdet() - torch.logdet(D)).abs().max() < 1e-12


def _ops(row, col, n):
    def mm(v, x):
        return SparseTensor(v, row, col, (n, n)) @ x

    def rmm(v, x):
        return x @ SparseTensor(v, row, col, (n, n))

    def solve(v, b):
        return SparseTensor(v, row, col, (n, n)).solve(b)

    def lad(v):
        return SparseTensor(v, row, col, (n, n)).slogdet()[1]

    def sign(v):
        return SparseTensor(v, row, col, (n, n)).slogdet()[0]

    def logdet(v):
        return SparseTensor(v, row, col, (n, n)).logdet()

    def det(v):          # scaled so that det is O(10): finite differences of 1e5 are noisy
        return SparseTensor(v / 4, row, col, (n, n)).det()
    return dict(mm=mm, rmm=rmm, solve=solve, lad=lad, sign=sign, logdet=logdet, det=det)


@pytest.mark.parametrize("op", ["mm", "rmm", "solve", "lad", "sign", "logdet", "det"])
def test_gradcheck(op):
    n = 7
    row, col, vals, _ = random_complex(n, seed=7, density=0.4)
    f = _ops(row, col, n)[op]
    v = vals.clone().requires_grad_(True)
    if op in ("mm", "rmm", "solve"):
        x = crandn(n, 2, seed=8) if op != "rmm" else crandn(2, n, seed=8)
        assert gradcheck(f, (v, x.requires_grad_(True)), eps=1e-6, atol=1e-7)
    else:
        assert gradcheck(f, (v,), eps=1e-6, atol=1e-7)


def test_gradients_match_dense_torch():
    """One real loss through solve, @ and slogdet: the same gradient as on dense torch.linalg."""
    n = 9
    row, col, vals, _ = random_complex(n, seed=9, density=0.35)
    b = crandn(n, seed=10)
    w = crandn(n, seed=11)

    def loss(x_of, lad_of, prod):
        x = x_of()
        return (w.conj() * x).real.sum() + lad_of() + (prod().abs() ** 2).sum()

    v1 = vals.clone().requires_grad_(True)
    b1 = b.clone().requires_grad_(True)
    A = SparseTensor(v1, row, col, (n, n))
    loss(lambda: A.solve(b1), lambda: A.slogdet()[1], lambda: A @ b1).backward()

    v2 = vals.clone().requires_grad_(True)
    b2 = b.clone().requires_grad_(True)
    D = torch.zeros(n, n, dtype=c128).index_put((row, col), v2)
    loss(lambda: torch.linalg.solve(D, b2), lambda: torch.linalg.slogdet(D)[1],
         lambda: D @ b2).backward()
    assert (v1.grad - v2.grad).abs().max() < 1e-11 * v2.grad.abs().max()
    assert (b1.grad - b2.grad).abs().max() < 1e-11 * b2.grad.abs().max()


def test_real_matrix_as_complex_gives_real_answers():
    row, col, vals, D = random_complex(10, seed=12)
    vr = vals.real.contiguous()
    Ar, Az = SparseTensor(vr, row, col, (10, 10)), SparseTensor(vr.to(c128), row, col, (10, 10))
    b = torch.randn(10, dtype=torch.float64)
    xr, xz = Ar.solve(b, method="lu"), Az.solve(b.to(c128))
    assert (xz.real - xr).abs().max() < 1e-13 and xz.imag.abs().max() == 0
    sr, lr = Ar.slogdet(method="lu")
    sz, lz = Az.slogdet()
    assert abs(float(lz - lr)) < 1e-12 and abs(complex(sz) - float(sr)) < 1e-14


def test_refusals_are_clear():
    row, col, vals, _ = random_complex(8, seed=13)
    A = SparseTensor(vals, row, col, (8, 8))
    b = crandn(8, seed=14)
    with pytest.raises(Exception, match="not complex symmetric"):    # ldlt: Aᵀ = A only
        A.solve(b, method="ldlt")
    with pytest.raises(Exception, match="not Hermitian"):     # eigsh: Hermitian only
        A.eigsh(k=2)
    with pytest.raises(TypeError, match="imaginary part"):
        A.to(torch.float64)
    # second derivatives through complex values are refused, never silently wrong
    v = vals.clone().requires_grad_(True)
    y = SparseTensor(v, row, col, (8, 8)).solve(b)
    with pytest.raises(NotImplementedError, match="second derivatives"):
        torch.autograd.grad(y.abs().sum(), v, create_graph=True)


@pytest.mark.parametrize("method,hermitian,pc", [("cg", True, "none"), ("minres", True, "none"),
                                                 ("gmres", False, "none"),
                                                 ("bicgstab", False, "none"),
                                                 ("cg", True, "jacobi"),
                                                 ("cg", True, "ic0"),
                                                 ("cg", True, "amg"),
                                                 ("cocg", "symmetric", "amg"),
                                                 ("gmres", False, "jacobi"),
                                                 ("gmres", False, "ilu0"),
                                                 ("bicgstab", False, "ilu0"),
                                                 ("cocg", "symmetric", "none"),
                                                 ("cocg", "symmetric", "jacobi"),
                                                 ("cocg", "symmetric", "ilu0")])
def test_krylov_complex(method, hermitian, pc):
    """Krylov methods on complex matrices (true complex methods on complex spaces) against
    dense solves, and their gradients against LU's."""
    n = 30
    row, col, vals, D = random_complex(n, seed=15)
    if hermitian == "symmetric":      # D + Dᵀ, complex symmetric (COCG's class)
        H = D + D.T
        H.diagonal().copy_(H.diagonal() + 4 * n ** 0.5)
        nz = H != 0
        row, col = nz.nonzero().t()
        vals, D = H[row, col], H
    elif hermitian:                   # D + Dᴴ with a dominant real diagonal: Hermitian PD
        H = D + D.conj().T
        H.diagonal().copy_(H.diagonal().real + 4 * n ** 0.5)
        nz = H != 0
        row, col = nz.nonzero().t()
        vals, D = H[row, col], H
    b = crandn(n, seed=16)
    v1 = vals.clone().requires_grad_(True)
    x = SparseTensor(v1, row, col, (n, n)).solve(b, method=method, rtol=1e-13, maxiter=5000,
                                                 preconditioner=pc)
    ref = torch.linalg.solve(D, b)
    assert (x - ref).abs().max() < 1e-10 * ref.abs().max()
    w = crandn(n, seed=17)
    (w.conj() * x).real.sum().backward()
    v2 = vals.clone().requires_grad_(True)
    (w.conj() * SparseTensor(v2, row, col, (n, n)).solve(b, method="lu")).real.sum().backward()
    assert (v1.grad - v2.grad).abs().max() < 1e-8 * v2.grad.abs().max()


def test_dense_norm_and_hermitian():
    row, col, vals, D = random_complex(9, seed=18)
    A = SparseTensor(vals, row, col, (9, 9))
    assert torch.equal(A.to_dense(), D)
    assert torch.equal(SparseTensor.from_dense(D).to_dense(), D)
    assert abs(float(A.norm()) - float(torch.linalg.norm(D))) < 1e-13 * float(torch.linalg.norm(D))
    v = vals.clone().requires_grad_(True)
    assert gradcheck(lambda w: SparseTensor(w, row, col, (9, 9)).norm(), (v,), eps=1e-6,
                     atol=1e-7)


def test_matrix_market_round_trip(tmp_path):
    row, col, vals, D = random_complex(10, seed=19)
    A = SparseTensor(vals, row, col, (10, 10))
    path = str(tmp_path / "z.mtx")
    torch_sla.save_mtx(A, path)
    B = torch_sla.load_mtx(path)
    assert B.dtype == c128 and torch.equal(B.to_dense(), D)
    assert torch_sla.load_mtx(path, dtype=c64).dtype == c64
    with pytest.raises(TypeError, match="complex"):
        torch_sla.load_mtx(path, dtype=torch.float64)
    H = D + D.conj().T
    nz = H != 0
    r, c = nz.nonzero().t()
    torch_sla.save_mtx(SparseTensor(H[r, c], r, c, (10, 10)), path, symmetry="hermitian")
    assert torch.equal(torch_sla.load_mtx(path).to_dense(), H)
    st = str(tmp_path / "z.safetensors")               # complex safetensors: C128 / C64
    torch_sla.save_sparse(A, st)
    B = torch_sla.load_sparse(st)
    assert B.dtype == c128 and torch.equal(B.to_dense(), D)
    torch_sla.save_sparse(SparseTensor(vals.to(c64), row, col, (10, 10)), st)
    B = torch_sla.load_sparse(st)
    assert B.dtype == c64 and torch.equal(B.to_dense(), D.to(c64))
    with pytest.raises(TypeError, match="complex"):
        torch_sla.load_sparse(st, dtype=torch.float64)


def test_young1c():
    """The shared complex matrix (Davis collection, 841 × 841 complex general): LU and GMRES."""
    import os
    from conftest import MATRIX_DIR
    path = os.path.join(MATRIX_DIR, "young1c.mtx")
    if not os.path.exists(path):
        pytest.skip("shared matrices not found")
    A = torch_sla.load_mtx(path)
    assert A.dtype == c128 and A.shape == (841, 841)
    b = crandn(841, seed=20)
    x, info = A.solve(b, return_info=True)
    assert info.relative_residual < 1e-12
    assert float((A @ x - b).abs().max()) < 1e-10 * float(b.abs().max())


def hermitian_pd(n, seed):
    row, col, vals, D = random_complex(n, seed=seed)
    H = D + D.conj().T
    H.diagonal().copy_(H.diagonal().real + 4 * n ** 0.5)
    r, c = (H != 0).nonzero().t()
    return r, c, H[r, c], H


def test_cholesky_hermitian_and_auto():
    n = 12
    row, col, vals, H = hermitian_pd(n, 21)
    A = SparseTensor(vals, row, col, (n, n))
    b = crandn(n, seed=22)
    x, info = A.solve(b, return_info=True)                 # auto: Cholesky (Hermitian PD)
    assert info.method == "cholesky"
    assert (x - torch.linalg.solve(H, b)).abs().max() < 1e-12
    sign, lad = A.slogdet()
    assert abs(complex(sign) - 1) < 1e-15 and abs(float(lad) - float(torch.linalg.slogdet(H)[1])) < 1e-12
    v = vals.clone().requires_grad_(True)

    def f(w, bb):                         # a Hermitian perturbation keeps the factorization valid
        return SparseTensor(w, row, col, (n, n)).solve(bb, method="cholesky")
    # gradcheck perturbs entries one by one (not Hermitian): the C side refuses that, so compare
    # the Cholesky gradient with LU's on the same loss instead
    w = crandn(n, seed=23)
    (w.conj() * f(v, b)).real.sum().backward()
    v2 = vals.clone().requires_grad_(True)
    (w.conj() * SparseTensor(v2, row, col, (n, n)).solve(b, method="lu")).real.sum().backward()
    assert (v.grad - v2.grad).abs().max() < 1e-12 * v2.grad.abs().max()
    with pytest.raises(Exception, match="not Hermitian"):
        SparseTensor(vals + 0.1j * (row != col), row, col, (n, n)).solve(b, method="cholesky")


def helmholtz_1d_complex(n, k=0.4):
    """−u'' − k²(1 + 0.1i)u with an absorbing end: complex symmetric, tridiagonal."""
    i = torch.arange(n)
    row = torch.cat([i, i[:-1], i[1:]])
    col = torch.cat([i, i[1:], i[:-1]])
    diag = torch.full((n,), 2 - k * k * (1 + 0.1j), dtype=torch.complex128)
    diag[-1] -= 1j * k
    vals = torch.cat([diag, -torch.ones(2 * (n - 1), dtype=torch.complex128)])
    return row, col, vals


@pytest.mark.parametrize("method,pc", [("cocg", "ilu0"), ("gmres", "jacobi"),
                                       ("bicgstab", "none")])
def test_krylov_complex_gradcheck(method, pc):
    """torch.autograd.gradcheck through a Krylov complex solve, in the values and in b."""
    n = 12
    row, col, vals = helmholtz_1d_complex(n)
    b = crandn(n, seed=21)
    v = vals.clone().requires_grad_(True)
    bb = b.clone().requires_grad_(True)

    def f(w, rhs):
        return SparseTensor(w, row, col, (n, n)).solve(rhs, method=method, preconditioner=pc,
                                                       rtol=1e-13, maxiter=2000)
    assert gradcheck(f, (v, bb), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_ldlt_complex_symmetric_gradcheck():
    """method 'ldlt' (MUMPS zmumps, complex symmetric LDLᵀ): against dense torch, and gradcheck
    through a symmetric parametrization (gradcheck's one-entry perturbations of the stored values
    break Aᵀ = A, which ldlt refuses, so the free parameters are the n diagonal entries and the
    n − 1 off-diagonal pairs, each pair written to both slots)."""
    n = 12
    row, col, vals = helmholtz_1d_complex(n)
    A = SparseTensor(vals, row, col, (n, n))
    D = A.to_dense()
    b = crandn(n, seed=31)
    for rhs in (b, torch.stack([b, 2j * b], dim=1)):
        x = A.solve(rhs, method="ldlt")
        assert (x - torch.linalg.solve(D, rhs)).abs().max() < 1e-12 * x.abs().max()
    sign, lad = A.slogdet(method="ldlt")
    sr, lr = torch.linalg.slogdet(D)
    assert abs(float(lad) - float(lr)) < 1e-12 and abs(complex(sign) - complex(sr)) < 1e-12
    # parameters p = (diagonal, upper pairs); slot s of the stored values takes p[idx[s]]
    idx = torch.cat([torch.arange(n), n + torch.arange(n - 1), n + torch.arange(n - 1)])
    p = torch.cat([vals[:n], vals[n:2 * n - 1]]).clone().requires_grad_(True)
    bb = b.clone().requires_grad_(True)

    def f(q, rhs):
        return SparseTensor(q[idx], row, col, (n, n)).solve(rhs, method="ldlt")
    assert gradcheck(f, (p, bb), eps=1e-6, atol=1e-7)
    assert gradcheck(lambda q: SparseTensor(q[idx], row, col, (n, n)).slogdet(method="ldlt")[1],
                     (p,), eps=1e-6, atol=1e-7)
    # the same loss on dense torch.linalg
    w = crandn(n, seed=32)
    (w.conj() * f(p, b)).real.sum().backward()
    p2 = p.detach().clone().requires_grad_(True)
    Dd = torch.zeros(n, n, dtype=torch.complex128).index_put((row, col), p2[idx], accumulate=True)
    (w.conj() * torch.linalg.solve(Dd, b)).real.sum().backward()
    assert (p.grad - p2.grad).abs().max() < 1e-11 * p2.grad.abs().max()
    with pytest.raises(Exception, match="Hermitian"):     # Hermitian, not complex symmetric
        h = vals.clone()
        h[:n] = h[:n].real + 0j
        h[n:2 * n - 1] = -1j
        h[2 * n - 1:] = 1j
        SparseTensor(h, row, col, (n, n)).solve(b, method="ldlt")


def random_rect_complex(m, n, seed):
    """(row, col, values) of a random complex m × n sparse matrix with a_jj + 3 + i."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(m, n, generator=g) < 0.4
    k = min(m, n)
    mask[torch.arange(k), torch.arange(k)] = True
    row, col = mask.nonzero().t()
    vals = torch.complex(torch.randn(row.numel(), generator=g, dtype=torch.float64),
                         torch.randn(row.numel(), generator=g, dtype=torch.float64))
    return row, col, vals + (row == col) * (3 + 1j)


@pytest.mark.parametrize("m,n", [(9, 5), (5, 9)])
def test_lsqr_complex(m, n):
    """Rectangular complex A.solve(b): LSQR on the complex space, x = A⁺b against the dense
    pseudo-inverse (minimum norm for a wide A); a real A handed as complex gives the real x;
    gradcheck in the values and b (conjugate Wirtinger convention); the gradient of a loss
    against the same loss through dense torch.linalg.pinv."""
    row, col, vals = random_rect_complex(m, n, seed=41 + m)
    b = crandn(m, 2, seed=42)
    A = SparseTensor(vals, row, col, (m, n))
    D = A.to_dense()
    x = A.solve(b, rtol=1e-13)
    ref = torch.linalg.pinv(D) @ b
    assert (x - ref).abs().max() < 1e-10 * ref.abs().max()
    Ar = SparseTensor(vals.real, row, col, (m, n))
    xr = Ar.solve(b.real, rtol=1e-13)
    xz = SparseTensor(vals.real.to(c128), row, col, (m, n)).solve(b.real.to(c128), rtol=1e-13)
    assert (xz.real - xr).abs().max() < 1e-13 * xr.abs().max() and xz.imag.abs().max() == 0
    v = vals.clone().requires_grad_(True)
    bb = b.clone().requires_grad_(True)
    assert gradcheck(lambda w, r: SparseTensor(w, row, col, (m, n)).solve(r, rtol=1e-14),
                     (v, bb), eps=1e-6, atol=1e-6, rtol=1e-5)
    w = crandn(n, 2, seed=43)
    (w.conj() * SparseTensor(v, row, col, (m, n)).solve(bb, rtol=1e-14)).real.sum().backward()
    v2 = vals.clone().requires_grad_(True)
    b2 = b.clone().requires_grad_(True)
    Dv = torch.zeros(m, n, dtype=c128).index_put((row, col), v2)
    (w.conj() * (torch.linalg.pinv(Dv) @ b2)).real.sum().backward()
    assert (v.grad - v2.grad).abs().max() < 1e-9 * v2.grad.abs().max()
    assert (bb.grad - b2.grad).abs().max() < 1e-9 * b2.grad.abs().max()


def test_conj_H_hermitian_predicates():
    """conj(), H(), is_hermitian() and is_positive_definite() on complex values: the complex
    conjugate and Aᴴ against dense torch, A = Aᴴ tested with conjugation (a Hermitian matrix is
    not complex symmetric and the other way round), HPD found by every method."""
    n = 6
    row, col, vals, D = random_complex(n, seed=3, density=0.5)
    Hd = D + D.conj().mT + 4 * n * torch.eye(n, dtype=c128)     # Hermitian, diagonally dominant
    Sd = D + D.mT + 4 * n * torch.eye(n, dtype=c128)            # complex symmetric
    mask = (Hd != 0) | (Sd != 0)
    r, c = mask.nonzero().t()
    Hs = SparseTensor(Hd[r, c].clone(), r, c, (n, n))
    Ss = SparseTensor(Sd[r, c].clone(), r, c, (n, n))
    assert torch.equal(Hs.conj().to_dense(), Hd.conj())
    assert torch.equal(Hs.H().to_dense(), Hd.conj().mT)
    assert torch.equal(Ss.H().to_dense(), Sd.conj().mT)
    assert bool(Hs.is_hermitian()) and not bool(Hs.is_symmetric())
    assert bool(Ss.is_symmetric()) and not bool(Ss.is_hermitian())
    for method in ("gershgorin", "cholesky", "eigenvalue"):
        assert bool(Hs.is_positive_definite(method=method)), method
        assert not bool(Ss.is_positive_definite(method=method)), method
        assert not bool(SparseTensor(-Hd[r, c], r, c, (n, n)).is_positive_definite(method=method))
    assert Hs.detect_matrix_type() == "spd"
    assert Ss.detect_matrix_type() == "symmetric"
    # conj is differentiable: L = Re Σ w·conj(v) = Σ (Re w·Re v + Im w·Im v), torch's gradient w
    v = Hd[r, c].clone().requires_grad_()
    w = crandn(r.numel(), seed=5)
    (SparseTensor(v, r, c, (n, n)).conj().values * w).real.sum().backward()
    assert torch.allclose(v.grad, w, rtol=0, atol=1e-15)


def test_lazy_conj_and_neg_views():
    """torch keeps x.conj() (and autograd's ConjBackward cotangents, and torch._neg_view) as a
    bit on the tensor, not in memory: handing data_ptr() to C read the unconjugated values, so
    A @ x.conj(), A.solve(b.conj()), SparseTensor(v.conj(), ...) and the gradient of any loss
    through .conj() were wrong without an error. Every result and gradient against dense torch."""
    n = 7
    row, col, vals, _ = random_complex(n, seed=11, density=0.4)
    b0, w = crandn(n, seed=12), crandn(n, seed=13)
    B0 = crandn(n, 3, seed=14)

    def dense(v):
        return torch.zeros(n, n, dtype=c128).index_put((row, col), v)

    cases = {
        "matvec of conj": (lambda A, v, b: A @ b.conj(), lambda D, v, b: D @ b.conj()),
        "matvec of neg view": (lambda A, v, b: A @ torch._neg_view(b),
                               lambda D, v, b: D @ (-b)),
        "matmat of conj": (lambda A, v, b: A @ (B0.conj() * b[0]),
                           lambda D, v, b: D @ (B0.conj() * b[0])),
        "x @ A of conj": (lambda A, v, b: b.conj() @ A, lambda D, v, b: b.conj() @ D),
        "solve of conj": (lambda A, v, b: A.solve(b.conj()),
                          lambda D, v, b: torch.linalg.solve(D, b.conj())),
        "conj of solve": (lambda A, v, b: A.solve(b).conj(),
                          lambda D, v, b: torch.linalg.solve(D, b).conj()),
        "conj of matvec": (lambda A, v, b: (A @ b).conj(), lambda D, v, b: (D @ b).conj()),
        "conj values": (lambda A, v, b: SparseTensor(v.conj(), row, col, (n, n)) @ b,
                        lambda D, v, b: D.conj() @ b),
        "conj values solve": (lambda A, v, b: SparseTensor(v.conj(), row, col, (n, n)).solve(b),
                              lambda D, v, b: torch.linalg.solve(D.conj(), b)),
        "conj values logdet": (lambda A, v, b: SparseTensor(v.conj(), row, col, (n, n)).logdet()
                               + 0 * b.sum(), lambda D, v, b: torch.logdet(D.conj()) + 0 * b.sum()),
        "conj of logdet": (lambda A, v, b: A.logdet().conj() * (1 + 2j) + 0 * b.sum(),
                           lambda D, v, b: torch.logdet(D).conj() * (1 + 2j) + 0 * b.sum()),
    }
    for name, (fs, fd) in cases.items():
        out = []
        for f, mk in ((fs, lambda v: SparseTensor(v, row, col, (n, n))), (fd, dense)):
            v = vals.clone().requires_grad_()
            b = b0.clone().requires_grad_()
            y = f(mk(v), v, b)
            loss = (y * (w if y.dim() == 1 and y.numel() == n else 1)).real.sum()
            loss.backward()
            out.append((y.detach().resolve_conj(), v.grad, b.grad))
        (ys, gvs, gbs), (yd, gvd, gbd) = out
        assert torch.allclose(ys, yd, rtol=1e-12, atol=1e-12), name
        assert torch.allclose(gvs, gvd, rtol=1e-10, atol=1e-12), name
        assert torch.allclose(gbs, gbd, rtol=1e-10, atol=1e-12), name


def test_spectral_norm_and_svd_complex():
    """‖A‖₂ of a complex Hermitian A is max |λ| (against torch.linalg.matrix_norm); svd and
    ‖A‖₂ of a complex non-Hermitian A are refused by name (no complex Gram product), not by a
    message from the SpGEMM they would need."""
    r, c = torch.tensor([0, 1, 1, 0, 2]), torch.tensor([0, 1, 0, 1, 2])
    herm = torch.tensor([2, 3, 1 - 1j, 1 + 1j, -5.5], dtype=torch.complex128)
    A = torch_sla.SparseTensor(herm, r, c, (3, 3))
    want = torch.linalg.matrix_norm(A.to_dense(), 2)
    assert abs(float(A.norm(2)) - float(want)) <= 1e-12 * float(want)
    gen = torch.tensor([2, 3, 1 - 1j, 2 + 1j, 5], dtype=torch.complex128)
    B = torch_sla.SparseTensor(gen, r, c, (3, 3))
    for call in (lambda: B.norm(2), lambda: B.svd(1), lambda: B.condition_number()):
        with pytest.raises(TypeError, match="complex SparseTensor"):
            call()

def test_auto_complex_class_in_description():
    """method auto on a complex symmetric A (1D Helmholtz, absorbing end) takes MUMPS's LDLᵀ and
    says why (docs/auto.md: half LU's factor, 1.3–1.8× faster on 2D Helmholtz 1000²); the
    solution against dense."""
    n = 30
    row, col, vals = helmholtz_1d_complex(n)
    A = SparseTensor(vals, row, col, (n, n))
    D = torch.zeros(n, n, dtype=c128)
    D[row, col] = vals
    b = crandn(n, seed=41)
    x, info = A.solve(b, return_info=True)
    assert info.method == "ldlt"
    assert "auto: complex symmetric (Aᵀ = A, not Hermitian): LDLᵀ (MUMPS" in info.description
    assert (x - torch.linalg.solve(D, b)).abs().max() < 1e-12 * x.abs().max()


def test_matrix_type_hermitian_on_complex_values():
    """matrix_type 'hermitian' on complex values is not LDLᵀ (complex symmetric only, which
    refuses a Hermitian A): Hermitian indefinite → LU, Hermitian PD → Cholesky; real values
    keep 'hermitian' → LDLᵀ."""
    n = 12
    H = hermitian_pd(n, 42)[3]
    # Hermitian indefinite on another pattern (torch_sla's solver cache refactors the solver of
    # a pattern it has seen, keeping its method): shifted between two middle eigenvalues
    G = hermitian_pd(n + 1, 44)[3]
    e = torch.linalg.eigvalsh(G)
    G = G - (e[6] + e[7]) / 2 * torch.eye(n + 1, dtype=c128)
    for M, method in ((G, "lu"), (H, "cholesky")):
        m = M.shape[0]
        b = crandn(m, seed=43)
        r, c = (M != 0).nonzero().t()
        x, info = SparseTensor(M[r, c], r, c, (m, m)).solve(b, matrix_type="hermitian",
                                                            return_info=True)
        assert info.method == method
        assert (x - torch.linalg.solve(M, b)).abs().max() < 1e-11 * x.abs().max()
    R = (H.real + H.real.T) / 2
    r, c = (R != 0).nonzero().t()
    x, info = SparseTensor(R[r, c], r, c, (n, n)).solve(b.real, matrix_type="hermitian",
                                                        return_info=True)
    assert info.method == "ldlt"
    assert (x - torch.linalg.solve(R, b.real)).abs().max() < 1e-11 * x.abs().max()


def magnetic_laplacian(N, alpha, shift=1e-4):
    """Weak-field magnetic Laplacian on an N × N grid: links −e^{iα(y+1)} along x, −1 along y,
    diagonal 4 + shift (Hermitian positive definite)."""
    rows, cols, vals = [], [], []
    for y in range(N):
        e = -complex(torch.cos(torch.tensor(alpha * (y + 1))), torch.sin(torch.tensor(alpha * (y + 1))))
        for x in range(N):
            i = y * N + x
            rows.append(i); cols.append(i); vals.append(4 + shift)
            if x + 1 < N:
                rows += [i, i + 1]; cols += [i + 1, i]; vals += [e, e.conjugate()]
            if y + 1 < N:
                rows += [i, i + N]; cols += [i + N, i]; vals += [-1, -1]
    return (torch.tensor(rows), torch.tensor(cols), torch.tensor(vals, dtype=c128))


def test_amg_magnetic_laplacian():
    """CG + complex AMG (R = Pᴴ) on a 40² magnetic Laplacian: the answer of the dense solve in
    fewer iterations than CG + Jacobi; GMRES + AMG of a complex symmetric A solves too, and CG +
    AMG of a non-Hermitian A is refused."""
    N = 40
    row, col, vals = magnetic_laplacian(N, 10.0 / N ** 2)
    n = N * N
    A = SparseTensor(vals, row, col, (n, n))
    D = torch.zeros(n, n, dtype=c128)
    D[row, col] = vals
    b = crandn(n, seed=21)
    ref = torch.linalg.solve(D, b)
    x, ia = A.solve(b, method="cg", preconditioner="amg", rtol=1e-12, return_info=True)
    _, ij = A.solve(b, method="cg", preconditioner="jacobi", rtol=1e-12, return_info=True)
    assert (x - ref).abs().max() < 1e-8 * ref.abs().max()
    assert ia.converged and 3 * ia.iterations < ij.iterations
    S = D.real + 0j                  # the Poisson matrix with a complex shift: A = Aᵀ ≠ Aᴴ
    S.diagonal().add_(-0.1 - 0.05j)
    r, c = (S != 0).nonzero().t()
    As = SparseTensor(S[r, c], r, c, (n, n))
    xs = As.solve(b, method="gmres", preconditioner="amg", rtol=1e-12, maxiter=2000)
    assert (xs - torch.linalg.solve(S, b)).abs().max() < 1e-8 * xs.abs().max()
    with pytest.raises(Exception, match="needs a Hermitian A"):
        As.solve(b, method="cg", preconditioner="amg")
