"""eigsh (libsla's sla_eigsh / sla_eigsh_vjp): SciPy references, eigenpair residuals, batches,
float32, gradcheck through eigenvalues and eigenvectors, errors."""
import numpy as np
import pytest
import scipy.sparse.linalg as spl
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import needs_symbol, poisson2d, random_sparse, symmetric_param

f64 = torch.float64
pytestmark = needs_symbol("sla_eigsh")


def test_eigsh_argument_checks():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match="which"):
        A.eigsh(2, which="XX")
    with pytest.raises(ValueError, match="k = 10"):
        A.eigsh(10)
    with pytest.raises(ValueError, match="method"):
        A.eigsh(2, method="power")


@pytest.mark.parametrize("which", ["LA", "SA", "LM", "SM"])
@pytest.mark.parametrize("method", ["auto", "lobpcg", "lanczos", "dense"])
def test_eigsh_against_scipy(which, method):
    needs_factor = method == "lanczos" and which != "LM"
    if needs_factor and not torch_sla.method_available("auto"):
        pytest.skip("shift-invert Lanczos needs a direct backend")
    row, col, val = poisson2d(12, 10, shuffle=True)
    A = SparseTensor(val, row, col, (120, 120))
    w, V, info = A.eigsh(4, which=which, method=method, return_info=True)
    ref = np.sort(spl.eigsh(A.to_scipy(), k=4, which=which)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9, atol=1e-10)
    D = A.to_dense()
    assert torch.allclose(D @ V, V * w, atol=1e-8)
    assert torch.allclose(V.t() @ V, torch.eye(4, dtype=f64), atol=1e-8)
    assert info.converged == 4 and info.method in ("lobpcg", "lanczos", "dense", "arpack")
    # sign convention: the largest-magnitude component of each vector is positive
    big = V.abs().argmax(0)
    assert (V[big, torch.arange(4)] > 0).all()


@pytest.mark.skipif(not torch_sla.method_available("auto"), reason="needs a direct backend")
def test_eigsh_sigma_nearest():
    row, col, val = poisson2d(10)
    A = SparseTensor(val, row, col, (100, 100))
    w, _ = A.eigsh(3, sigma=2.0)
    ref = np.sort(spl.eigsh(A.to_scipy(), k=3, sigma=2.0)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9)


def test_eigsh_batched_and_float32():
    row, col, val = poisson2d(6)
    vb = torch.stack([val, 2.0 * val, val + 0.5 * (row == col)])
    A = SparseTensor(vb, row, col, (3, 36, 36))
    w, V = A.eigsh(3, which="SA")
    assert w.shape == (3, 3) and V.shape == (3, 36, 3)
    ref = torch.linalg.eigvalsh(A.to_dense())[:, :3]
    assert torch.allclose(w, ref, atol=1e-9)
    w32, V32 = SparseTensor(val.float(), row, col, (36, 36)).eigsh(2, which="LA")
    assert w32.dtype == torch.float32
    assert torch.allclose(w32.double(), torch.linalg.eigvalsh(A.to_dense()[0])[-2:], rtol=1e-5)
    w0, none = A.eigsh(2, which="LA", return_eigenvectors=False)
    assert none is None and w0.shape == (3, 2)


def _sym_system(n=8, seed=5):
    """SPD matrix with well-separated eigenvalues, as a function of its lower triangle."""
    row, col, val = random_sparse(n, density=0.5, seed=seed, spd=True)
    val = val + 3.0 * (row == col) * (row.to(f64) + 1)     # spread the diagonal
    return symmetric_param(row, col, val)


@pytest.mark.parametrize("which", ["SA", "LA"])
def test_gradcheck_eigenvalues(which):
    row, col, expand, v0 = _sym_system()
    f = lambda v: SparseTensor(expand(v), row, col, (8, 8)).eigsh(3, which=which,
                                                                  method="dense")[0]
    assert gradcheck(f, (v0.clone().requires_grad_(),), atol=1e-6)


@pytest.mark.skipif(not torch_sla.method_available("ldlt") and
                    not torch_sla.method_available("lu"),
                    reason="eigenvector gradients factor A − λI (LDLᵀ or LU)")
def test_gradcheck_eigenvectors():
    row, col, expand, v0 = _sym_system()
    f = lambda v: SparseTensor(expand(v), row, col, (8, 8)).eigsh(2, which="SA",
                                                                  method="dense")[1]
    assert gradcheck(f, (v0.clone().requires_grad_(),), atol=1e-6)


def test_eigenvalue_gradient_is_outer_product_on_pattern():
    row, col, val = poisson2d(5)
    v = val.clone().requires_grad_()
    w, V = SparseTensor(v, row, col, (25, 25)).eigsh(2, which="SA")
    w.sum().backward()
    V = V.detach()
    assert torch.allclose(v.grad, (V[row] * V[col]).sum(1), atol=1e-10)


def test_unsymmetric_matrix_message_from_c():
    row, col, val = random_sparse(6, seed=2)
    with pytest.raises(ValueError, match="symmetr"):
        SparseTensor(val, row, col, (6, 6)).eigsh(2)


def test_eigsh_nonconvergence_warns_or_raises():
    row, col, val = poisson2d(30)
    A = SparseTensor(val, row, col, (900, 900))
    with pytest.warns(torch_sla.ConvergenceWarning, match="eigsh did not converge"):
        w, V, info = A.eigsh(4, which="SA", method="lobpcg", maxiter=2, tol=1e-14,
                             return_info=True)
    assert info.converged < 4 and info.max_residual > 1e-14
    with pytest.raises(torch_sla.ConvergenceError):
        A.eigsh(4, which="SA", method="lobpcg", maxiter=2, tol=1e-14, strict=True)


def _poisson3d(m):
    """7-point Laplacian (Dirichlet) of an m³ grid as (row, col, val)."""
    import scipy.sparse as sp
    T = sp.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    I = sp.identity(m)
    L = (sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)).tocoo()
    return (torch.from_numpy(L.row.astype(np.int64)), torch.from_numpy(L.col.astype(np.int64)),
            torch.from_numpy(L.data.astype(np.float64)))


@pytest.mark.skipif(not torch_sla.method_available("auto"), reason="needs a direct backend")
@pytest.mark.parametrize("which,sigma", [("SA", None), ("LA", None), ("LM", 1.5)])
def test_eigsh_every_copy_of_a_repeated_eigenvalue(which, sigma):
    """8³ grid: 3- and 6-fold eigenvalues (block-2 Lanczos returned 4 of 6 copies of
    Laplace3D10's 4.0810 as converged before the multiplicity rule): every copy, against
    numpy's full spectrum."""
    m = 8
    row, col, val = _poisson3d(m)
    A = SparseTensor(val, row, col, (m ** 3, m ** 3))
    w, V, info = A.eigsh(17, which=which, sigma=sigma, return_info=True)
    ev = np.linalg.eigvalsh(A.to_dense().numpy())
    if sigma is not None:
        ref = np.sort(ev[np.argsort(np.abs(ev - sigma), kind="stable")[:17]])
    else:
        ref = ev[:17] if which == "SA" else ev[-17:]
    assert info.method == "lanczos" and info.converged == 17
    assert np.allclose(w.numpy(), ref, rtol=1e-9, atol=1e-10)
    D = A.to_dense()
    assert torch.allclose(D @ V, V * w, atol=1e-8)
    assert torch.allclose(V.t() @ V, torch.eye(17, dtype=f64), atol=1e-8)


# ------------------------------------------------------------------------------------------------
# Generalized problem A v = λ M v (eigsh(k, M=B))
# ------------------------------------------------------------------------------------------------
def _fem1d(n):
    """1D P1 stiffness tridiag(−1, 2, −1)/h and consistent mass h/6·tridiag(1, 4, 1)."""
    h = 1.0 / (n + 1)
    i = torch.arange(n)
    row = torch.cat([i, i[1:], i[:-1]])
    col = torch.cat([i, i[:-1], i[1:]])
    def tri(diag, off):
        return torch.cat([torch.full((n,), diag, dtype=f64),
                          torch.full((2 * n - 2,), off, dtype=f64)])
    return row, col, tri(2.0 / h, -1.0 / h), tri(4 * h / 6, h / 6)


@pytest.mark.skipif(not torch_sla.method_available("cholesky"), reason="needs Cholesky")
@pytest.mark.parametrize("method", ["auto", "lanczos", "dense"])
def test_generalized_fem_closed_form(method):
    n = 400
    row, col, kv, mv = _fem1d(n)
    K = SparseTensor(kv, row, col, (n, n))
    M = SparseTensor(mv, row, col, (n, n))
    w, V, info = K.eigsh(5, which="SA", M=M, method=method, tol=1e-12, return_info=True)
    h, j = 1.0 / (n + 1), torch.arange(1, 6, dtype=f64)
    t = j * np.pi / (n + 1)
    exact = 6 / h**2 * (1 - torch.cos(t)) / (2 + torch.cos(t))
    assert torch.allclose(w, exact, rtol=1e-10)
    Md = M.to_dense()
    assert torch.allclose(V.t() @ Md @ V, torch.eye(5, dtype=f64), atol=1e-10)
    assert info.converged == 5
    # SciPy's eigsh(K, M=M, sigma=0) agrees
    ref = np.sort(spl.eigsh(K.to_scipy().tocsc(), k=5, M=M.to_scipy().tocsc(), sigma=0)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9)


def _pair_param(n=8, seed=7):
    """An SPD pair (A, M) as functions of their lower triangles; M has its own pattern."""
    ra, ca, ea, a0 = _sym_system(n, seed)
    rm, cm, vm = random_sparse(n, density=0.3, seed=seed + 1, spd=True)
    vm = vm + 2.0 * (rm == cm)
    rm, cm, em, m0 = symmetric_param(rm, cm, vm)
    return (ra, ca, ea, a0), (rm, cm, em, m0)


@pytest.mark.parametrize("vectors", [False, True])
def test_generalized_gradcheck(vectors):
    if vectors and not (torch_sla.method_available("ldlt") or torch_sla.method_available("lu")):
        pytest.skip("eigenvector gradients factor A − λM (LDLᵀ or LU)")
    (ra, ca, ea, a0), (rm, cm, em, m0) = _pair_param()

    def f(a, m):
        A = SparseTensor(ea(a), ra, ca, (8, 8))
        M = SparseTensor(em(m), rm, cm, (8, 8))
        w, V = A.eigsh(3, which="SA", M=M, method="dense")
        return V if vectors else w
    assert gradcheck(f, (a0.clone().requires_grad_(), m0.clone().requires_grad_()), atol=1e-6)


def test_generalized_errors():
    row, col, kv, mv = _fem1d(10)
    K = SparseTensor(kv, row, col, (10, 10))
    r2, c2, _, mv2 = _fem1d(11)
    with pytest.raises(ValueError, match="A's size"):
        K.eigsh(2, M=SparseTensor(mv2, r2, c2, (11, 11)))
    with pytest.raises(TypeError, match="dtype"):
        K.eigsh(2, M=SparseTensor(mv.float(), row, col, (10, 10)))
    bad = mv.clone()
    bad[3] = -1.0                      # diagonal entry (3, 3) of M
    with pytest.raises(torch_sla.SlaError, match="column 3"):
        K.eigsh(2, which="SA", M=SparseTensor(bad, row, col, (10, 10)), method="lanczos")
    kind = kv.clone()
    kind[:10] -= 22.0                  # diagonal 0: an indefinite A
    with pytest.raises(torch_sla.SlaError, match="no regular mode"):
        SparseTensor(kind, row, col, (10, 10)).eigsh(2, which="LM", method="lanczos",
                                                     M=SparseTensor(mv, row, col, (10, 10)))


@pytest.mark.parametrize("method", ["lanczos", "lobpcg", "arpack", "dense"])
def test_generalized_semidefinite_mass_refused(method):
    """M = I − 11ᵀ/n is positive semidefinite: its Cholesky passes on a last pivot of rounding
    size (~1e-17), which once let the iterative methods return an infinite eigenvalue of the
    pencil (LA: 2.3e14); every method refuses it as dsygvd does."""
    if method == "arpack" and not torch_sla.method_available("cholesky"):
        pytest.skip("no direct backend")
    n = 50
    L = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    Mp = np.eye(n) - np.ones((n, n)) / n

    def st(X):
        r, c = np.nonzero(X)
        return SparseTensor(torch.tensor(X[r, c]), torch.tensor(r), torch.tensor(c), X.shape)

    with pytest.raises(torch_sla.SlaError, match="mass matrix M"):
        st(L).eigsh(3, which="SA", M=st(Mp), method=method)


# ------------------------------------------------------------------------------------------------
# Eigenvector gradients at a multiplet split by k (sla_eigsh_vjp finds the uncomputed partner)
# ------------------------------------------------------------------------------------------------
needs_factor = pytest.mark.skipif(
    not (torch_sla.method_available("cholesky") and (torch_sla.method_available("ldlt") or
                                                     torch_sla.method_available("lu"))),
    reason="eigenvector gradients factor A − λI (LDLᵀ or LU); shift-invert needs Cholesky")
EIG_METHODS = ["auto", "lobpcg", "lanczos", "arpack", "dense"]


def _eigsh_or_skip(A, k, **kw):
    try:
        return A.eigsh(k, **kw)
    except torch_sla.UnsupportedError as e:
        pytest.skip(str(e))


def _d4_mass(m):
    """A diagonal mass 1 + r²/2 with the symmetries of the square: the pencil keeps the ties."""
    h = 0.5 * (m - 1)
    i, j = torch.meshgrid(torch.arange(m, dtype=f64), torch.arange(m, dtype=f64), indexing="ij")
    d = (1 + 0.5 * ((i - h) ** 2 + (j - h) ** 2) / h ** 2).reshape(-1)
    idx = torch.arange(m * m)
    return SparseTensor(d, idx, idx, (m * m, m * m))


def _tied_column(which):
    """6 × 6 grid Laplacian, k = 2: the column tied with the next eigenvalue outside the block
    (λ_2 = λ_3 for SA/SM; the second largest, column 0 in ascending order, for LA/LM)."""
    return 1 if which in ("SA", "SM") else 0


@needs_factor
@pytest.mark.parametrize("which, mass", [("SA", False), ("LA", False), ("LM", False),
                                         ("SM", False), ("SA", True), ("LA", True)])
@pytest.mark.parametrize("method", EIG_METHODS)
def test_eigenvector_gradient_at_multiplet_split_by_k(method, which, mass):
    row, col, val = poisson2d(6)
    v = val.clone().requires_grad_()
    M = _d4_mass(6) if mass else None
    w, V = _eigsh_or_skip(SparseTensor(v, row, col, (36, 36)), 2, which=which, method=method, M=M)
    tied = _tied_column(which)
    g = torch.Generator().manual_seed(3)
    loss = (V[:, tied] * torch.randn(36, generator=g, dtype=f64)).sum() ** 2
    with pytest.raises(ValueError, match="repeated eigenvalue.*whose partner is not among") as e:
        loss.backward()
    assert e.value.status == -1 and f"λ_{tied} = " in str(e.value)
    # a loss of the eigenvalues alone stays defined: Hellmann–Feynman
    v.grad = None
    w, V = _eigsh_or_skip(SparseTensor(v, row, col, (36, 36)), 2, which=which, method=method, M=M)
    (w * torch.tensor([1.0, -2.0], dtype=f64)).sum().backward()
    V = V.detach()
    assert torch.allclose(v.grad, V[row, 0] * V[col, 0] - 2 * V[row, 1] * V[col, 1], atol=1e-10)


@needs_factor
def test_eigenvector_gradient_tie_in_batch_and_float32():
    row, col, val = poisson2d(6)
    split = val + 1e-3 * (row == col) * torch.arange(36, dtype=f64)[row]   # breaks the tie
    vb = torch.stack([split, val]).requires_grad_()
    w, V = SparseTensor(vb, row, col, (2, 36, 36)).eigsh(2, which="SA")
    wts = torch.randn(36, generator=torch.Generator().manual_seed(4), dtype=f64)
    with pytest.raises(ValueError, match=r"\(batch 1\), whose partner is not among"):
        (V[:, :, 1] @ wts).sum().backward()
    v32 = val.float().requires_grad_()
    w, V = SparseTensor(v32, row, col, (36, 36)).eigsh(2, which="SA")
    with pytest.raises(ValueError, match="whose partner is not among"):
        (V[:, 1] * torch.arange(36.0)).sum().backward()


def _near_tie(rel):
    """The 6 × 6 grid Laplacian plus t·diag(d), t chosen so that λ_3 − λ_2 = rel·‖A‖₁ (generic
    eigenvectors: no components of equal magnitude for the sign convention to jump between)."""
    row, col, val = poisson2d(6)
    d = torch.rand(36, generator=torch.Generator().manual_seed(5), dtype=f64)[row] * (row == col)
    t = 1e-4
    for _ in range(3):
        D = SparseTensor(val + t * d, row, col, (36, 36)).to_dense()
        lam = torch.linalg.eigvalsh(D)
        t *= rel / ((lam[2] - lam[1]) / D.abs().sum(0).max()).item()
    return row, col, val + t * d


def _sym_grad(row, col, grad, n=36):
    """g(r, c) + g(c, r): the gradient for a symmetric parametrization."""
    G = torch.zeros(n, n, dtype=f64).index_put((row, col), grad, accumulate=True)
    return (G + G.t())[row, col]


@needs_factor
@pytest.mark.parametrize("method", EIG_METHODS)
def test_eigenvector_gradient_near_tie_is_exact(method):
    """Relative gap 1e-6 (above the 1e-8 tie bound): the gradient matches the dense reference
    of torch.linalg.eigh to 1e-8 (measured 1e-10 to 8e-10: the amplification 1/gap is 1e5 here,
    and A − λI is factored at λ itself; a shift δ off λ would add δ/gap, 1e-5 at δ = 1e-11·‖A‖₁);
    at 1e-10 it is refused."""
    row, col, val = _near_tie(1e-6)
    wts = torch.randn(36, generator=torch.Generator().manual_seed(6), dtype=f64)
    v = val.clone().requires_grad_()
    D = torch.zeros(36, 36, dtype=f64).index_put((row, col), v, accumulate=True)
    _, U = torch.linalg.eigh(D)
    u = U[:, 1] * torch.sign(U[U[:, 1].detach().abs().argmax(), 1])
    (u @ wts).pow(2).backward()
    ref = _sym_grad(row, col, v.grad)
    v.grad = None
    w, V = _eigsh_or_skip(SparseTensor(v, row, col, (36, 36)), 2, which="SA", method=method)
    (V[:, 1] @ wts).pow(2).backward()
    assert (_sym_grad(row, col, v.grad) - ref).norm() <= 1e-8 * ref.norm()
    row, col, val = _near_tie(1e-10)
    v = val.clone().requires_grad_()
    w, V = _eigsh_or_skip(SparseTensor(v, row, col, (36, 36)), 2, which="SA", method=method)
    with pytest.raises(ValueError, match="whose partner is not among"):
        (V[:, 1] @ wts).pow(2).backward()
