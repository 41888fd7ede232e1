"""eigsh of complex Hermitian SparseTensors (complex128, complex64): eigenvalues against
torch.linalg.eigvalsh (on the real form of the dense matrix) for each method and which, eigenpair residuals and
orthonormality, torch.autograd.gradcheck through the eigenvalues and a phase-invariant
eigenvector loss (standard and generalized), the gradients against torch.linalg.eigh's on the
same loss of the dense matrix, and the refusals (non-Hermitian A, a phase-dependent loss)."""
import pytest
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import needs_symbol

c128, c64 = torch.complex128, torch.complex64
pytestmark = needs_symbol("sla_eigsh")
needs_direct = pytest.mark.skipif(not torch_sla.method_available("auto"),
                                  reason="shift-invert needs a direct backend")


def hermitian_pattern(n, seed=0, density=0.25):
    """(row, col, mirror) of a random structurally symmetric pattern with the diagonal;
    mirror[s] is the index of entry (col[s], row[s])."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < density
    mask = mask | mask.t() | torch.eye(n, dtype=torch.bool)
    row, col = mask.nonzero().t()
    index = torch.full((n, n), -1, dtype=torch.long)
    index[row, col] = torch.arange(row.numel())
    return row, col, index[col, row]


def hermitize(x, mirror):
    """Values of a Hermitian matrix from free complex parameters x (one per entry)."""
    return 0.5 * (x + x[..., mirror].conj())


def random_params(nnz, seed=1, dtype=c128):
    g = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(nnz, generator=g, dtype=torch.float64),
                         torch.randn(nnz, generator=g, dtype=torch.float64)).to(dtype)


def eigvalsh_reference(D):
    """All eigenvalues of the dense Hermitian D by torch.linalg.eigvalsh on its real symmetric
    form [[Re D, −Im D], [Im D, Re D]] (each twice): the complex LAPACK path (zheevd) goes
    through OpenBLAS 0.3.21's multithreaded zgemv, which segfaults for n ≳ 58 (docs/complex.md)."""
    K = torch.cat([torch.cat([D.real, -D.imag], 1), torch.cat([D.imag, D.real], 1)], 0)
    return torch.linalg.eigvalsh(K)[::2]


def dense(vals, row, col, n):
    D = torch.zeros(vals.shape[:-1] + (n, n), dtype=vals.dtype)
    D[..., row, col] = vals
    return D


@pytest.mark.parametrize("which", ["SA", "LA", "LM"])
@pytest.mark.parametrize("method", ["auto", "dense", "lobpcg", "lanczos"])
def test_eigenvalues_against_eigvalsh(which, method):
    if method == "lanczos" and which == "LM":
        pytest.skip("covered by the shift test")
    if method == "lanczos" and not torch_sla.method_available("auto"):
        pytest.skip("shift-invert Lanczos needs a direct backend")
    n, k = 180, 4
    row, col, mirror = hermitian_pattern(n, seed=3, density=0.03)
    vals = hermitize(random_params(row.numel(), seed=4), mirror)
    A = SparseTensor(vals, row, col, (n, n))
    w, V, info = A.eigsh(k, which=which, method=method, return_info=True)
    assert w.dtype == torch.float64 and V.dtype == c128
    ref = eigvalsh_reference(dense(vals, row, col, n))
    sel = {"SA": ref[:k], "LA": ref[-k:],
           "LM": ref[ref.abs().argsort(descending=True)[:k]].sort().values}[which]
    assert torch.allclose(w, sel, atol=1e-9)
    D = A.to_dense()
    assert (D @ V - V * w).abs().max() < 1e-8
    assert torch.allclose(V.conj().t() @ V, torch.eye(k, dtype=c128), atol=1e-9)
    native = method in ("auto", "lanczos") and which != "LM"
    assert ("complex Hermitian thick-restart Lanczos" if native else "real symmetric") \
        in info.description


def test_shift_invert_and_complex64():
    n, k = 150, 3
    row, col, mirror = hermitian_pattern(n, seed=5, density=0.03)
    vals = hermitize(random_params(row.numel(), seed=6), mirror)
    ref = eigvalsh_reference(dense(vals, row, col, n))
    sigma = float(ref[n // 2])
    w, V = SparseTensor(vals, row, col, (n, n)).eigsh(k, sigma=sigma + 1e-3)
    near = ref[(ref - sigma - 1e-3).abs().argsort()[:k]].sort().values
    assert torch.allclose(w, near, atol=1e-9)
    w32, V32 = SparseTensor(vals.to(c64), row, col, (n, n)).eigsh(k, which="SA")
    assert w32.dtype == torch.float32 and V32.dtype == c64
    assert torch.allclose(w32.double(), ref[:k], atol=1e-4)


def _setup(n=10, seed=7):
    row, col, mirror = hermitian_pattern(n, seed=seed, density=0.35)
    x = random_params(row.numel(), seed=seed + 1)
    return row, col, mirror, x


def _weights(n, k):
    return torch.linspace(0.5, 1.5, n, dtype=torch.float64)[:, None] * \
        torch.arange(1, k + 1, dtype=torch.float64)


@pytest.mark.parametrize("method", ["dense", "lobpcg", "lanczos"])
def test_gradcheck_eigenvalues_and_phase_invariant_loss(method):
    n, k = 10, 2
    row, col, mirror, x = _setup(n)
    Wt = _weights(n, k)

    def lam(p):
        return SparseTensor(hermitize(p, mirror), row, col, (n, n)).eigsh(
            k, which="SA", method=method, tol=0)[0]

    def vec_loss(p):
        w, V = SparseTensor(hermitize(p, mirror), row, col, (n, n)).eigsh(
            k, which="SA", method=method, tol=0)
        return (V.abs() ** 2 * Wt).sum() + (w * w).sum()

    p = x.clone().requires_grad_(True)
    assert gradcheck(lam, (p,), eps=1e-6, atol=1e-6)
    assert gradcheck(vec_loss, (p,), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("method", ["auto", "lanczos"])
def test_gradients_match_dense_eigh(method):
    n, k = 12, 3
    row, col, mirror, x = _setup(n, seed=11)
    Wt = _weights(n, k)
    grads = []
    for sparse in (True, False):
        p = x.clone().requires_grad_(True)
        vals = hermitize(p, mirror)
        if sparse:
            w, V = SparseTensor(vals, row, col, (n, n)).eigsh(k, which="LA", tol=0, method=method)
        else:
            ew, EV = torch.linalg.eigh(dense(vals, row, col, n))
            w, V = ew[-k:], EV[:, -k:]
        L = (V.abs() ** 2 * Wt).sum() + (torch.arange(k) + 1.0).double() @ w
        grads.append(torch.autograd.grad(L, p)[0])
    assert (grads[0] - grads[1]).abs().max() < 1e-9 * grads[1].abs().max()


def test_generalized_gradcheck():
    n, k = 9, 2
    row, col, mirror, x = _setup(n, seed=13)
    mrow, mcol, mmirror, y = _setup(n, seed=17)
    y = 0.3 * y + (mrow == mcol) * 6.0                  # Hermitian positive definite M
    Wt = _weights(n, k)

    def f(p, q):
        A = SparseTensor(hermitize(p, mirror), row, col, (n, n))
        M = SparseTensor(hermitize(q, mmirror), mrow, mcol, (n, n))
        w, V = A.eigsh(k, which="SA", M=M, method="dense", tol=0)
        return (V.abs() ** 2 * Wt).sum() + w.sum()

    assert gradcheck(f, (x.clone().requires_grad_(True), y.clone().requires_grad_(True)),
                     eps=1e-6, atol=1e-6)


def test_refusals():
    n = 10
    row, col, mirror, x = _setup(n, seed=19)
    with pytest.raises(Exception, match="not Hermitian"):
        SparseTensor(x, row, col, (n, n)).eigsh(2)
    # a loss that depends on the phase of an eigenvector: refused, as by torch.linalg.eigh
    p = x.clone().requires_grad_(True)
    w, V = SparseTensor(hermitize(p, mirror), row, col, (n, n)).eigsh(2, which="SA")
    with pytest.raises(Exception, match="phase"):
        torch.autograd.grad(V[0, 0].imag + V[1, 0].real + V[2, 0].imag, p)
    ew, EV = torch.linalg.eigh(dense(hermitize(p, mirror), row, col, n))
    with pytest.raises(RuntimeError):
        torch.autograd.grad(EV[0, 0].imag + EV[1, 0].real + EV[2, 0].imag, p)
    # second derivatives through complex values are refused, never silently wrong
    w, V = SparseTensor(hermitize(p, mirror), row, col, (n, n)).eigsh(2, which="SA")
    with pytest.raises(NotImplementedError, match="second derivatives"):
        torch.autograd.grad(w.sum(), p, create_graph=True)


def test_batched_with_gradient():
    n, k = 11, 2
    row, col, mirror, x = _setup(n, seed=23)
    xb = torch.stack([x, 1.7 * x + 0.3 * (row == col)])

    def f(p):
        A = SparseTensor(hermitize(p, mirror), row, col, (2, n, n))
        w, V = A.eigsh(k, which="LA", method="lobpcg", tol=0)
        return w, (V.abs() ** 2).sum(-2)            # column norms: phase invariant, all 1

    p = xb.clone().requires_grad_(True)
    w, norms = f(p)
    assert w.shape == (2, k) and torch.allclose(norms, torch.ones(2, k, dtype=torch.float64))
    D = dense(hermitize(xb, mirror), row, col, n)
    for b in range(2):
        assert torch.allclose(w[b], eigvalsh_reference(D[b])[-k:], atol=1e-10)
    assert gradcheck(lambda q: f(q)[0], (p,), eps=1e-6, atol=1e-6)


def magnetic(theta, m, gauge=None):
    """Magnetic Laplacian of an m × m grid (Dirichlet): 4 on the diagonal, −e^{iθ_l} on the link
    l = (i, j) and its conjugate on (j, i); theta holds one phase per link (differentiable), or
    gauge (one phase φ per site: θ_ij = φ_i − φ_j, zero flux, the real Laplacian's spectrum)."""
    idx = torch.arange(m * m).reshape(m, m)
    a = torch.cat([idx[:, :-1].reshape(-1), idx[:-1, :].reshape(-1)])
    b = torch.cat([idx[:, 1:].reshape(-1), idx[1:, :].reshape(-1)])
    if gauge is not None:
        theta = gauge[a] - gauge[b]
    e = -torch.exp(1j * theta.to(torch.float64))
    d = torch.arange(m * m)
    row, col = torch.cat([d, a, b]), torch.cat([d, b, a])
    vals = torch.cat([torch.full((m * m,), 4.0, dtype=c128), e, e.conj()])
    return SparseTensor(vals, row, col, (m * m, m * m))


@needs_direct
def test_native_magnetic_laplacian():
    """n = 400 > 150: auto runs the native complex kernels (SA: Cholesky-proved shift; sigma:
    LU); eigenvalues to 1e-10 relative of the dense reference, residuals, VᴴV = I."""
    m, k = 20, 6
    theta = torch.rand(2 * m * (m - 1), generator=torch.Generator().manual_seed(3),
                       dtype=torch.float64) * 3
    A = magnetic(theta, m)
    ref = eigvalsh_reference(A.to_dense())
    for kw, sel in (({"which": "SA"}, ref[:k]),
                    ({"sigma": 2.0}, ref[(ref - 2.0).abs().argsort()[:k]].sort().values)):
        w, V, info = A.eigsh(k, return_info=True, **kw)
        assert "complex Hermitian thick-restart Lanczos" in info.description
        assert ((w - sel).abs() <= 1e-10 * sel.abs()).all()
        D = A.to_dense()
        assert (D @ V - V * w).abs().max() < 1e-9
        assert torch.allclose(V.conj().t() @ V, torch.eye(k, dtype=c128), atol=1e-10)


@needs_direct
def test_native_multiplicity():
    """zero flux (a gauge transform of the grid Laplacian): the closed-form spectrum with its
    double eigenvalues λ_ab = λ_ba, every copy found by the native kernels."""
    m, k = 20, 6
    phi = torch.rand(m * m, generator=torch.Generator().manual_seed(4), dtype=torch.float64) * 3
    A = magnetic(None, m, gauge=phi)
    h = torch.pi / (m + 1)
    ab = torch.tensor([[1, 1], [1, 2], [2, 1], [2, 2], [1, 3], [3, 1]], dtype=torch.float64)
    ref = (4 - 2 * torch.cos(ab[:, 0] * h) - 2 * torch.cos(ab[:, 1] * h)).sort().values
    w, V, info = A.eigsh(k, which="SA", return_info=True)
    assert "complex Hermitian thick-restart Lanczos" in info.description
    assert ((w - ref).abs() <= 1e-10 * ref).all()
    assert torch.allclose(V.conj().t() @ V, torch.eye(k, dtype=c128), atol=1e-10)


@needs_direct
def test_native_gradcheck_gauge_invariant():
    """gradcheck through the native path (n = 169 > 150, auto) in the link phases: eigenvalues
    and the phase-invariant Σ w_ij |V_ij|² (gauge-invariant losses only)."""
    m, k = 13, 3
    theta = torch.rand(2 * m * (m - 1), generator=torch.Generator().manual_seed(6),
                       dtype=torch.float64).requires_grad_(True)
    Wt = _weights(m * m, k)
    probe = magnetic(theta.detach(), m).eigsh(k, which="SA", return_info=True)[2]
    assert "complex Hermitian thick-restart Lanczos" in probe.description

    def f(t):
        w, V = magnetic(t, m).eigsh(k, which="SA", tol=0)
        return w.sum() + (V.abs() ** 2 * Wt).sum()

    assert gradcheck(f, (theta,), eps=1e-6, atol=1e-6)
