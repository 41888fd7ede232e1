"""The complex log-determinant gradient by the selected inverse (lu, klu, cholesky): the
gradients of log|det A| and of the phase against dense torch.linalg.slogdet on the same loss,
torch.autograd.gradcheck on complex inputs, and a size beyond the old n-solve limit."""
import pytest
import torch
from torch.autograd import gradcheck

from torch_sla import SparseTensor

c128 = torch.complex128


def random_complex(n, seed, density, hermitian=False):
    g = torch.Generator().manual_seed(seed)
    re = torch.randn(n, n, generator=g, dtype=torch.float64)
    im = torch.randn(n, n, generator=g, dtype=torch.float64)
    mask = (torch.rand(n, n, generator=g) < density) | torch.eye(n, dtype=torch.bool)
    D = torch.complex(re, im) * mask
    if hermitian:
        mask = mask | mask.t()
        D = (D + D.conj().t()) / 2 * mask
        D = D + torch.eye(n, dtype=c128) * (2.0 * n ** 0.5 + 4)
    else:
        D = D + torch.eye(n, dtype=c128) * (3.0 + 1.5j) * n ** 0.5
    row, col = mask.nonzero().t()
    return row, col, D[row, col], D


@pytest.mark.parametrize("method", ["lu", "klu", "cholesky"])
def test_slogdet_gradients_match_dense(method):
    n = 40
    row, col, vals, _ = random_complex(n, 3, 0.15, hermitian=method == "cholesky")
    phase_w = torch.tensor(0.3 - 0.8j, dtype=c128)

    def loss(sign, lad):
        return 1.7 * lad + (phase_w.conj() * sign).real

    v1 = vals.clone().requires_grad_(True)
    loss(*SparseTensor(v1, row, col, (n, n)).slogdet(method=method)).backward()
    v2 = vals.clone().requires_grad_(True)
    D = torch.zeros(n, n, dtype=c128).index_put((row, col), v2)
    loss(*torch.linalg.slogdet(D)).backward()
    assert (v1.grad - v2.grad).abs().max() < 1e-12 * v2.grad.abs().max()


@pytest.mark.parametrize("method", ["lu", "klu", "cholesky"])
def test_slogdet_gradcheck(method):
    n = 8
    row, col, vals, _ = random_complex(n, 5, 0.4, hermitian=method == "cholesky")
    v = vals.clone().requires_grad_(True)

    def values(w):       # cholesky: perturbations kept Hermitian, (W + Wᴴ)/2 on the pattern
        if method != "cholesky":
            return w
        W = torch.zeros(n, n, dtype=c128).index_put((row, col), w)
        return ((W + W.conj().t()) / 2)[row, col]
    assert gradcheck(lambda w: SparseTensor(values(w), row, col, (n, n)).slogdet(method=method)[1],
                     (v,), eps=1e-6, atol=1e-7)
    if method != "cholesky":        # the phase of a Hermitian PD det is 1 (perturbations leave it)
        assert gradcheck(lambda w: torch.view_as_real(
            SparseTensor(w, row, col, (n, n)).slogdet(method=method)[0]), (v,), eps=1e-6,
            atol=1e-7)


def test_beyond_the_old_limit():
    """n = 25000 (the n-solve gradient refused n > 20000): tridiagonal complex, whose
    log|det| gradient at the diagonal is conj of the diagonal of A⁻¹, checked on a few rows
    by solves."""
    n = 25000
    i = torch.arange(n)
    row = torch.cat([i, i[:-1], i[1:]])
    col = torch.cat([i, i[1:], i[:-1]])
    g = torch.Generator().manual_seed(0)
    vals = torch.complex(torch.randn(row.numel(), generator=g, dtype=torch.float64),
                         torch.randn(row.numel(), generator=g, dtype=torch.float64))
    vals[:n] += 4 - 2j
    v = vals.clone().requires_grad_(True)
    A = SparseTensor(v, row, col, (n, n))
    A.slogdet(method="lu")[1].backward()
    for r in (0, 1, n // 2, n - 1):
        e = torch.zeros(n, dtype=c128)
        e[r] = 1
        y = SparseTensor(vals, row, col, (n, n)).solve(e, method="lu")
        assert abs(v.grad[r] - y[r].conj()) < 1e-12 * (1 + abs(y[r]))
