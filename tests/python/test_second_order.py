"""Second derivatives through torch_sla (double backward): gradgradcheck of every
differentiable op, Hessians and Hessian-vector products against dense torch references
(torch.linalg.solve / slogdet / eigvalsh / pinv on the dense matrix), a third derivative, the
clear error where a second derivative is not available (eigenvectors), and the first-order
path left unchanged (no graph recorded when create_graph is False)."""
import pytest
import torch
from torch.autograd import gradgradcheck
from torch.autograd.functional import hessian, hvp, vhp

import torch_sla
from torch_sla import SparseTensor
from conftest import dense_of, needs_method, needs_symbol, poisson2d, random_rect, \
    random_sparse, symmetric_param

f64 = torch.float64


def _unsym(n=6, seed=3, shuffle=True):
    """A random unsymmetric diagonally dominant matrix as COO; shuffled with two duplicate
    entries (so the Gather / Scatter pair is in the graph)."""
    row, col, val = random_sparse(n, seed=seed)
    if shuffle:
        p = torch.randperm(row.numel(), generator=torch.Generator().manual_seed(seed))
        row, col, val = row[p], col[p], val[p]
        row, col = torch.cat([row, row[:2]]), torch.cat([col, col[:2]])
        val = torch.cat([0.5 * val[:2], val[2:], 0.5 * val[:2]])
    return row, col, val


def _req(t):
    return t.detach().clone().requires_grad_()


# ------------------------------------------------------------------------------------------------
# gradgradcheck, op by op
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("batched", [False, True])
def test_gradgradcheck_solve_values_and_b(batched):
    row, col, val = _unsym()
    n = 6
    g = torch.Generator().manual_seed(1)
    if batched:
        v = torch.stack([val, 1.3 * val])
        b = torch.randn(2, n, 2, generator=g, dtype=f64)
        shape = (2, n, n)
    else:
        v, b, shape = val, torch.randn(n, generator=g, dtype=f64), (n, n)

    def f(v, b):
        return SparseTensor(v, row, col, shape).solve(b)
    assert gradgradcheck(f, (_req(v), _req(b)))


def test_gradgradcheck_solve_shared_rhs_of_a_batch():
    row, col, val = _unsym(seed=5)
    v = torch.stack([val, 0.7 * val, 1.1 * val])
    b = torch.randn(6, 2, dtype=f64, generator=torch.Generator().manual_seed(2))
    assert gradgradcheck(lambda v, b: SparseTensor(v, row, col, (3, 6, 6)).solve(b),
                         (_req(v), _req(b)))


@pytest.mark.parametrize("method", ["cholesky", "ldlt", "lu", "klu", "cg", "minres"])
def test_gradgradcheck_solve_each_method(method):
    """Symmetric parametrization (methods that read one triangle): the second derivative
    through Cholesky, LDLᵀ, LU, KLU and the Krylov methods (adjoint solves on the same
    preconditioner)."""
    if not torch_sla.method_available(method):
        pytest.skip(f"no backend serves {method}")
    R, C, expand, p0 = symmetric_param(*random_sparse(7, seed=11, spd=True))
    b = torch.randn(7, dtype=f64, generator=torch.Generator().manual_seed(3))
    kw = {"rtol": 1e-14} if method in ("cg", "minres") else {}

    def f(p, b):
        return SparseTensor(expand(p), R, C, (7, 7)).solve(b, method=method, **kw)
    assert gradgradcheck(f, (_req(p0), _req(b)))


@pytest.mark.parametrize("side", ["A @ x", "x @ A"])
@pytest.mark.parametrize("batched", [False, True])
def test_gradgradcheck_matvec(side, batched):
    row, col, val = _unsym(seed=7)
    g = torch.Generator().manual_seed(4)
    v = torch.stack([val, -val + 0.1]) if batched else val
    shape = (2, 6, 6) if batched else (6, 6)
    x = torch.randn(6, 3, generator=g, dtype=f64) if side == "A @ x" else \
        torch.randn(3, 6, generator=g, dtype=f64)

    def f(v, x):
        A = SparseTensor(v, row, col, shape)
        return A @ x if side == "A @ x" else x @ A
    assert gradgradcheck(f, (_req(v), _req(x)))


def test_gradgradcheck_rectangular_matvec():
    g = torch.Generator().manual_seed(8)
    dense = torch.randn(5, 7, generator=g, dtype=f64) * (torch.rand(5, 7, generator=g) < 0.5)
    row, col = dense.nonzero(as_tuple=True)
    x = torch.randn(7, generator=g, dtype=f64)
    assert gradgradcheck(lambda v, x: SparseTensor(v, row, col, (5, 7)) @ x,
                         (_req(dense[row, col]), _req(x)))


@pytest.mark.parametrize("fn", ["to_dense", "norm"])
def test_gradgradcheck_dense_conversion_and_norm(fn):
    row, col, val = _unsym(seed=6)
    v = torch.stack([val, 2 * val])
    assert gradgradcheck(lambda v: getattr(SparseTensor(v, row, col, (2, 6, 6)), fn)().pow(3),
                         (_req(v),))


@pytest.mark.parametrize("fn", ["logdet", "slogdet", "det"])
@pytest.mark.parametrize("batched", [False, True])
def test_gradgradcheck_determinants(fn, batched):
    row, col, val = _unsym(seed=9)
    v = torch.stack([val, 1.2 * val]) if batched else val
    shape = (2, 6, 6) if batched else (6, 6)

    def f(v):
        A = SparseTensor(v, row, col, shape)
        return A.slogdet()[1] if fn == "slogdet" else getattr(A, fn)()
    assert gradgradcheck(f, (_req(v),))


@needs_symbol("sla_eigsh")
@pytest.mark.parametrize("which", ["SA", "LA"])
def test_gradgradcheck_eigenvalues(which):
    R, C, expand, p0 = symmetric_param(*random_sparse(8, seed=4, spd=True))

    def f(p):
        A = SparseTensor(expand(p), R, C, (8, 8))
        return A.eigsh(k=3, which=which, return_eigenvectors=False)[0]
    assert gradgradcheck(f, (_req(p0),))


def _spd_pair(n=7, seed=12):
    (ra, ca, ea, a0) = symmetric_param(*random_sparse(n, seed=seed, spd=True))
    rm, cm, vm = random_sparse(n, density=0.3, seed=seed + 1, spd=True)
    rm, cm, em, m0 = symmetric_param(rm, cm, vm + 2.0 * (rm == cm))
    return (ra, ca, ea, a0), (rm, cm, em, m0)


@needs_symbol("sla_eigsh")
def test_gradgradcheck_generalized_eigenvalues():
    (ra, ca, ea, a0), (rm, cm, em, m0) = _spd_pair()

    def f(a, m):
        A = SparseTensor(ea(a), ra, ca, (7, 7))
        M = SparseTensor(em(m), rm, cm, (7, 7))
        return A.eigsh(3, which="SA", M=M, method="dense")[0]
    assert gradgradcheck(f, (_req(a0), _req(m0)))


@needs_method("lsqr")
@pytest.mark.parametrize("m,n", [(9, 5), (5, 9)])
def test_gradgradcheck_least_squares(m, n):
    """Tall (full column rank, inconsistent) and wide (minimum-norm solution: the null-space
    term of the derivative) least squares by LSQR."""
    row, col, val = random_rect(m, n, 3 * m + n, density=0.4)
    b = torch.randn(m, dtype=f64, generator=torch.Generator().manual_seed(5))
    assert gradgradcheck(lambda v, b: SparseTensor(v, row, col, (m, n)).solve(b, rtol=1e-12),
                         (_req(val), _req(b)))


# ------------------------------------------------------------------------------------------------
# Hessians and Hessian-vector products against dense torch
# ------------------------------------------------------------------------------------------------
def _hessian_error(f, fd, inputs):
    """max |H − H_dense| / max |H_dense| over every block of the Hessian."""
    H, Hd = hessian(f, inputs), hessian(fd, inputs)
    if not isinstance(inputs, tuple):
        H, Hd = ((H,),), ((Hd,),)
    err = max(float((a - b).abs().max()) for ra, rb in zip(H, Hd) for a, b in zip(ra, rb))
    scale = max(float(b.abs().max()) for rb in Hd for b in rb)
    assert scale > 1e-3                       # a Hessian that is not zero
    return err / scale


@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_hessian_of_solve_loss_matches_dense(dtype, tol):
    row, col, val = _unsym()
    val = val.to(dtype)
    b = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(6)).to(dtype)
    w = torch.linspace(-1, 2, 6, dtype=dtype)

    def f(v, b):
        x = SparseTensor(v, row, col, (6, 6)).solve(b)
        return (x * w).sum() + x.pow(2).sum()

    def fd(v, b):
        x = torch.linalg.solve(dense_of(row, col, v, (6, 6)), b)
        return (x * w).sum() + x.pow(2).sum()
    assert _hessian_error(f, fd, (val, b)) < tol


def test_hessian_of_matvec_loss_matches_dense():
    row, col, val = _unsym(seed=8)
    x = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(7))

    def f(v, x):
        return (SparseTensor(v, row, col, (6, 6)) @ x).pow(3).sum()

    def fd(v, x):
        return (dense_of(row, col, v, (6, 6)) @ x).pow(3).sum()
    assert _hessian_error(f, fd, (val, x)) < 1e-13


def test_hessian_of_logdet_matches_dense():
    row, col, val = _unsym(seed=10)

    def f(v):
        return SparseTensor(v, row, col, (6, 6)).slogdet()[1]

    def fd(v):
        return torch.linalg.slogdet(dense_of(row, col, v, (6, 6)))[1]
    assert _hessian_error(f, fd, val) < 1e-12


def test_hessian_of_logdet_in_column_blocks(monkeypatch):
    """The backward of the inverse entries runs in column blocks: a block of 3 columns gives
    the Hessian of one block (Poisson 4 × 4, n = 16)."""
    import torch_sla._solve_functions as sf
    row, col, val = poisson2d(4, shuffle=True)
    ref = hessian(lambda v: torch.linalg.slogdet(dense_of(row, col, v, (16, 16)))[1], val)
    monkeypatch.setattr(sf, "INVERSE_BLOCK_BYTES", 3 * 16 * 8)
    H = hessian(lambda v: SparseTensor(v, row, col, (16, 16)).logdet(), val)
    assert float((H - ref).abs().max()) < 1e-13 * float(ref.abs().max())


@needs_symbol("sla_eigsh")
def test_hessian_of_eigenvalues_matches_dense_eigvalsh():
    R, C, expand, p0 = symmetric_param(*random_sparse(8, seed=4, spd=True))
    w = torch.tensor([1.0, -2.0, 0.5], dtype=f64)

    def f(p):
        lam = SparseTensor(expand(p), R, C, (8, 8)).eigsh(k=3, which="SA")[0]
        return (w * lam).sum() + lam.pow(2).sum()

    def fd(p):
        lam = torch.linalg.eigvalsh(dense_of(R, C, expand(p), (8, 8)))[:3]
        return (w * lam).sum() + lam.pow(2).sum()
    assert _hessian_error(f, fd, p0) < 1e-10


@needs_symbol("sla_eigsh")
def test_hessian_of_generalized_eigenvalues_matches_dense():
    (ra, ca, ea, a0), (rm, cm, em, m0) = _spd_pair()

    def f(a, m):
        A = SparseTensor(ea(a), ra, ca, (7, 7))
        M = SparseTensor(em(m), rm, cm, (7, 7))
        return A.eigsh(2, which="LA", M=M, method="dense")[0].sum()

    def fd(a, m):
        L = torch.linalg.cholesky(dense_of(rm, cm, em(m), (7, 7)))
        Li = torch.linalg.inv(L)
        return torch.linalg.eigvalsh(Li @ dense_of(ra, ca, ea(a), (7, 7)) @ Li.T)[-2:].sum()
    assert _hessian_error(f, fd, (a0, m0)) < 1e-9


@needs_method("lsqr")
def test_hessian_of_least_squares_matches_pinv():
    row, col, val = random_rect(8, 5, 1, density=0.4)
    b = torch.randn(8, dtype=f64, generator=torch.Generator().manual_seed(8))

    def f(v, b):
        return SparseTensor(v, row, col, (8, 5)).solve(b, rtol=1e-12).pow(2).sum()

    def fd(v, b):
        return (torch.linalg.pinv(dense_of(row, col, v, (8, 5))) @ b).pow(2).sum()
    assert _hessian_error(f, fd, (val, b)) < 1e-8


def test_hessian_vector_products_every_entry_point():
    """hvp, vhp, and autograd.grad(create_graph=True) then grad again, against dense."""
    row, col, val = _unsym(seed=13)
    b = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(9))
    u = torch.randn(val.shape, dtype=f64, generator=torch.Generator().manual_seed(10))

    def f(v):
        return SparseTensor(v, row, col, (6, 6)).solve(b).pow(2).sum()

    def fd(v):
        return torch.linalg.solve(dense_of(row, col, v, (6, 6)), b).pow(2).sum()
    ref = hvp(fd, val, u)[1]
    assert ref.abs().max() > 1e-3
    tol = 1e-12 * float(ref.abs().max())
    assert float((hvp(f, val, u)[1] - ref).abs().max()) < tol
    assert float((vhp(f, val, u)[1] - ref).abs().max()) < tol
    v = _req(val)
    gv, = torch.autograd.grad(f(v), v, create_graph=True)
    Hu, = torch.autograd.grad(gv, v, grad_outputs=u)
    assert float((Hu - ref).abs().max()) < tol
    v.grad = None
    gv, = torch.autograd.grad(f(v), v, create_graph=True)
    (gv * u).sum().backward()
    assert float((v.grad - ref).abs().max()) < tol


def test_third_derivative_of_solve():
    """Any order: d³/dt³ of Σ (A + tE)⁻¹b at t = 0 by three nested autograd.grad calls."""
    row, col, val = _unsym(seed=14, shuffle=False)
    E = torch.linspace(0.1, 1.0, val.numel(), dtype=f64)
    b = torch.ones(6, dtype=f64)
    results = []
    for solve in (lambda v: SparseTensor(v, row, col, (6, 6)).solve(b),
                  lambda v: torch.linalg.solve(dense_of(row, col, v, (6, 6)), b)):
        t = torch.zeros((), dtype=f64, requires_grad=True)
        y = solve(val + t * E).sum()
        d1, = torch.autograd.grad(y, t, create_graph=True)
        d2, = torch.autograd.grad(d1, t, create_graph=True)
        d3, = torch.autograd.grad(d2, t)
        results.append(d3)
    assert abs(float(results[1])) > 1e-3
    assert abs(float(results[0] - results[1])) < 1e-12 * abs(float(results[1]))


def test_solver_serving_another_call_between_the_backwards():
    """The graph of a first gradient keeps its solver's values: a solve with other values on
    the same pattern in between does not change the Hessian-vector product."""
    row, col, val = _unsym(seed=15)
    b = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(11))
    u = torch.ones_like(val)
    ref = hvp(lambda v: torch.linalg.solve(dense_of(row, col, v, (6, 6)), b).pow(2).sum(),
              val, u)[1]
    v = _req(val)
    gv, = torch.autograd.grad(SparseTensor(v, row, col, (6, 6)).solve(b).pow(2).sum(), v,
                              create_graph=True)
    SparseTensor(2 * val, row, col, (6, 6)).solve(b)
    Hu, = torch.autograd.grad(gv, v, grad_outputs=u)
    assert float((Hu - ref).abs().max()) < 1e-12 * float(ref.abs().max())


# ------------------------------------------------------------------------------------------------
# Where a second derivative is not available: an error from every entry point
# ------------------------------------------------------------------------------------------------
_NO_SECOND = "second derivatives through eigenvectors are not available"


def _eigvec_loss(generalized):
    if generalized:
        (ra, ca, ea, a0), (rm, cm, em, m0) = _spd_pair()

        def f(p):
            A = SparseTensor(ea(p), ra, ca, (7, 7))
            M = SparseTensor(em(m0), rm, cm, (7, 7))
            return A.eigsh(2, which="SA", M=M, method="dense")[1][:, 1].pow(3).sum()
        return f, a0
    R, C, expand, p0 = symmetric_param(*random_sparse(8, seed=4, spd=True))

    def f(p):
        V = SparseTensor(expand(p), R, C, (8, 8)).eigsh(k=2, which="SA")[1]
        return V[:, 1].pow(3).sum()
    return f, p0


@needs_symbol("sla_eigsh")
@pytest.mark.parametrize("generalized", [False, True])
def test_eigenvector_second_derivative_raises_everywhere(generalized):
    f, p0 = _eigvec_loss(generalized)
    p = _req(p0)
    ref, = torch.autograd.grad(f(p), p)
    gp, = torch.autograd.grad(f(p), p, create_graph=True)     # the first gradient: exact
    assert torch.allclose(gp.detach(), ref, rtol=1e-12, atol=1e-14) and gp.requires_grad
    for second in (lambda: torch.autograd.grad(gp.sum(), p, allow_unused=True),
                   lambda: gp.sum().backward(),
                   lambda: hessian(f, p0),
                   lambda: hvp(f, p0, torch.ones_like(p0)),
                   lambda: gradgradcheck(f, (_req(p0),))):
        with pytest.raises(RuntimeError, match=_NO_SECOND):
            second()
        gp, = torch.autograd.grad(f(p), p, create_graph=True)


@needs_symbol("sla_eigsh")
def test_eigenvector_error_only_when_the_loss_uses_eigenvectors():
    """Eigenvalues and eigenvectors from one call, a loss of the eigenvalues only: the
    Hessian exists (the eigenvector output carries no cotangent)."""
    R, C, expand, p0 = symmetric_param(*random_sparse(8, seed=4, spd=True))

    def f(p):
        lam, V = SparseTensor(expand(p), R, C, (8, 8)).eigsh(k=2, which="SA")
        return lam.pow(2).sum() + 0 * V.detach().sum()

    def fd(p):
        return torch.linalg.eigvalsh(dense_of(R, C, expand(p), (8, 8)))[:2].pow(2).sum()
    assert _hessian_error(f, fd, p0) < 1e-10


# ------------------------------------------------------------------------------------------------
# The first-order path is unchanged
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["matmul", "solve", "logdet", "eigsh"])
def test_create_graph_first_gradient_equals_first_order(op):
    """create_graph=True gives the same first gradient (the differentiable path runs the same
    formulas), and without it no graph is recorded."""
    R, C, expand, p0 = symmetric_param(*random_sparse(7, seed=16, spd=True))
    x = torch.linspace(0.5, 1.5, 7, dtype=f64)
    fns = {"matmul": lambda A: (A @ x).pow(2).sum(), "solve": lambda A: A.solve(x).pow(2).sum(),
           "logdet": lambda A: A.logdet(),
           "eigsh": lambda A: A.eigsh(2, which="LA")[0].sum() + A.eigsh(2, which="LA")[1].sum()}
    if op == "eigsh" and not torch_sla._capi.lib.has("sla_eigsh"):
        pytest.skip("no eigsh")
    p = _req(p0)
    g1, = torch.autograd.grad(fns[op](SparseTensor(expand(p), R, C, (7, 7))), p)
    assert not g1.requires_grad and g1.grad_fn is None
    g2, = torch.autograd.grad(fns[op](SparseTensor(expand(p), R, C, (7, 7))), p,
                              create_graph=True)
    assert g2.requires_grad
    assert torch.allclose(g1, g2.detach(), rtol=1e-13, atol=1e-15)


def _count_solves(monkeypatch):
    """Counts libsla's solve entry points (forward solves and adjoint solves)."""
    lib = torch_sla._capi.lib
    counts = {}
    for name in ("sla_solver_solve", "sla_solver_solve_vjp"):
        fn = getattr(lib, name)

        def counted(*args, _fn=fn, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _fn(*args)
        monkeypatch.setattr(lib, name, counted)
    return counts


def test_solves_per_gradient_and_per_hessian_vector_product(monkeypatch):
    """First order: the forward solve and one fused adjoint call, as before double backward
    existed; a Hessian-vector product: 4 solves on the one factorization."""
    row, col, val = _unsym(seed=18)
    b = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(14))
    counts = _count_solves(monkeypatch)
    v = _req(val)
    SparseTensor(v, row, col, (6, 6)).solve(b).pow(2).sum().backward()
    assert counts == {"sla_solver_solve": 1, "sla_solver_solve_vjp": 1}
    counts.clear()
    gv, = torch.autograd.grad(SparseTensor(v, row, col, (6, 6)).solve(b).pow(2).sum(), v,
                              create_graph=True)
    torch.autograd.grad(gv, v, grad_outputs=torch.ones_like(gv))
    assert counts == {"sla_solver_solve": 1, "sla_solver_solve_vjp": 3}


# ------------------------------------------------------------------------------------------------
# Item: a square solve does not keep b (in-place changes of b afterwards are harmless)
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("requires_grad", [False, True])
def test_inplace_change_of_b_after_square_solve(requires_grad):
    """Like torch.linalg.solve, which needs A and x only: b modified in place after the solve
    does not make the backward fail, and the gradients are those of the b that was solved."""
    row, col, val = _unsym(seed=17)
    b0 = torch.randn(6, dtype=f64, generator=torch.Generator().manual_seed(12))
    grads = []
    for solve in (lambda v, b: SparseTensor(v, row, col, (6, 6)).solve(b),
                  lambda v, b: torch.linalg.solve(dense_of(row, col, v, (6, 6)), b)):
        v = _req(val)
        b = b0.clone().requires_grad_(requires_grad)
        leaf = b
        if requires_grad:
            b = b * 1.0                      # a non-leaf b can be changed in place
        x = solve(v, b)
        with torch.no_grad():
            b.add_(1.0)
        x.pow(2).sum().backward()
        grads.append((v.grad, leaf.grad))
    assert torch.allclose(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-14)
    if requires_grad:
        assert torch.allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-14)


@needs_method("lsqr")
def test_least_squares_still_guards_b():
    """Least squares reads b in its backward (the residual b − A x): an in-place change of b
    is reported by PyTorch's version counter instead of giving a wrong gradient."""
    row, col, val = random_rect(8, 5, 2)
    b = torch.randn(8, dtype=f64, generator=torch.Generator().manual_seed(13))
    v = _req(val)
    x = SparseTensor(v, row, col, (8, 5)).solve(b)
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x.pow(2).sum().backward()
