"""torch_sla.nonlinear_solve: Bratu (1D closed form, 2D against scipy.optimize.root), nonlinear
diffusion, gradients against central differences and gradcheck for every method, the gradient
independent of the number of Newton steps, SparseTensor values inside residual_fn, Jacobians by
colouring (probed patterns, reverse mode), failure modes, the ABI of the structs."""
import ctypes
import math
import re
import warnings

import numpy as np
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor, nonlinear_solve
from torch_sla import _coloring, _nonlinear_capi as nlc

from conftest import needs_method, needs_symbol, poisson2d

pytestmark = needs_symbol("sla_nonlinear_solve")
D = torch.float64
METHODS = ("newton", "newton_krylov", "picard", "anderson")


# ---- problems ---------------------------------------------------------------------------------
def lap1d(u, h):
    up = torch.cat([u.new_zeros(1), u, u.new_zeros(1)])
    return (2 * up[1:-1] - up[:-2] - up[2:]) / h ** 2


def lap2d(u, h):
    """−Δ_h u for u of shape (nx, nx), zero Dirichlet values around it."""
    up = torch.nn.functional.pad(u, (1, 1, 1, 1))
    return (4 * up[1:-1, 1:-1] - up[:-2, 1:-1] - up[2:, 1:-1] - up[1:-1, :-2] - up[1:-1, 2:]) / h ** 2


def bratu1d(u, lam):
    h = 1 / (u.numel() + 1)
    return lap1d(u, h) - lam * torch.exp(u)


def bratu2d(u, lam):
    h = 1 / (u.shape[0] + 1)
    return lap2d(u, h) - lam * torch.exp(u)


def laplacian_2d_sparse(nx):
    """−Δ_h on the nx × nx grid as a SparseTensor (Picard's linearization of Bratu)."""
    row, col, val = poisson2d(nx)
    h = 1 / (nx + 1)
    return SparseTensor(val / h ** 2, row, col, (nx * nx, nx * nx))


def picard_opts(nx):
    L = laplacian_2d_sparse(nx)
    return dict(linearization_fn=lambda u, *p: L)


def bratu1d_exact(lam, x):
    t = 0.0
    for _ in range(200):
        t = math.sqrt(2 * lam) * math.cosh(t / 4)
    return -2 * torch.log(torch.cosh((x - 0.5) * t / 2) / math.cosh(t / 4))


def diffusion(u, f):
    """−∇·(κ(u)∇u) = f, κ(u) = 1 + u², 5-point finite volumes with arithmetic-mean faces."""
    nx = u.shape[0]
    h = 1 / (nx + 1)
    up = torch.nn.functional.pad(u, (1, 1, 1, 1))
    k = 1 + up ** 2
    kx = 0.5 * (k[1:, 1:-1] + k[:-1, 1:-1])            # faces between rows i, i+1
    ky = 0.5 * (k[1:-1, 1:] + k[1:-1, :-1])
    fx = kx * (up[1:, 1:-1] - up[:-1, 1:-1])
    fy = ky * (up[1:-1, 1:] - up[1:-1, :-1])
    div = (fx[1:] - fx[:-1]) + (fy[:, 1:] - fy[:, :-1])
    return -div / h ** 2 - f


# ---- solutions --------------------------------------------------------------------------------
def test_bratu1d_closed_form():
    n, lam = 199, 1.0
    u, info = nonlinear_solve(bratu1d, torch.zeros(n, dtype=D), lam, rtol=1e-12, return_info=True)
    x = torch.arange(1, n + 1, dtype=D) / (n + 1)
    assert info.converged and info.reason == "converged" and info.iterations <= 6
    assert (u - bratu1d_exact(lam, x)).abs().max() < 1e-6        # O(h²): 3.6e-7 here
    assert info.colors == 3 and info.pattern_nnz == 3 * n - 2
    assert info.history[-1] == info.residual and info.history[0] == info.initial_residual


def test_adjoint_solve_is_torch_slas_alias():
    """torch-sla exports adjoint_solve as another name of nonlinear_solve: same u, same gradient."""
    import torch_sla
    assert torch_sla.adjoint_solve is torch_sla.nonlinear_solve
    n = 49
    lam = torch.tensor(1.0, dtype=D, requires_grad=True)
    u = torch_sla.adjoint_solve(bratu1d, torch.zeros(n, dtype=D), lam, rtol=1e-12)
    x = torch.arange(1, n + 1, dtype=D) / (n + 1)
    assert (u - bratu1d_exact(1.0, x)).abs().max() < 1e-4
    (g,) = torch.autograd.grad(u.sum(), lam)
    assert torch.isfinite(g) and g > 0                 # u grows with λ on the lower branch


@pytest.mark.parametrize("method", METHODS)
def test_bratu2d_against_scipy(method):
    from scipy.optimize import root
    nx, lam = 12, 5.0
    opts = picard_opts(nx) if method in ("picard", "anderson") else {}
    u, info = nonlinear_solve(bratu2d, torch.zeros(nx, nx, dtype=D), lam, method=method,
                              rtol=1e-12, return_info=True, **opts)
    assert info.converged and u.shape == (nx, nx)
    ref = root(lambda v: bratu2d(torch.from_numpy(v).reshape(nx, nx), lam).reshape(-1).numpy(),
               np.zeros(nx * nx), method="hybr", tol=1e-13)
    assert ref.success
    assert np.abs(u.reshape(-1).numpy() - ref.x).max() < 1e-9


def test_nonlinear_diffusion_newton_and_picard():
    nx = 16
    f = torch.ones(nx, nx, dtype=D) * 10
    u_n, i_n = nonlinear_solve(diffusion, torch.zeros(nx, nx, dtype=D), f, rtol=1e-11,
                               return_info=True)

    assert i_n.converged and i_n.iterations <= 8
    r = diffusion(u_n, f)
    assert r.norm() <= 1e-11 * diffusion(torch.zeros_like(u_n), f).norm()
    u_a, i_a = nonlinear_solve(diffusion, torch.zeros(nx, nx, dtype=D), f, method="anderson",
                               rtol=1e-11, return_info=True, anderson_depth=5,
                               linearization_fn=lambda u, f: frozen_kappa_matrix(u, nx))
    assert i_a.converged
    assert (u_a - u_n).abs().max() < 1e-9
    assert i_a.iterations > i_n.iterations          # linear convergence, fewer than plain Picard
    u_p, i_p = nonlinear_solve(diffusion, torch.zeros(nx, nx, dtype=D), f, method="picard",
                               rtol=1e-11, return_info=True,
                               linearization_fn=lambda u, f: frozen_kappa_matrix(u, nx))
    assert i_p.converged and (u_p - u_n).abs().max() < 1e-9
    assert i_p.iterations > i_a.iterations


def frozen_kappa_matrix(u, nx):
    """A(u): the 5-point matrix of −∇·(κ(u)∇ ·) with κ frozen at u (Picard's linearization)."""
    h = 1 / (nx + 1)
    up = torch.nn.functional.pad(u.detach().reshape(nx, nx), (1, 1, 1, 1))
    k = 1 + up ** 2
    kx = 0.5 * (k[1:, 1:-1] + k[:-1, 1:-1])            # (nx + 1, nx)
    ky = 0.5 * (k[1:-1, 1:] + k[1:-1, :-1])            # (nx, nx + 1)
    idx = torch.arange(nx * nx).reshape(nx, nx)
    diag = (kx[1:] + kx[:-1] + ky[:, 1:] + ky[:, :-1]).reshape(-1)
    rows, cols, vals = [idx.reshape(-1)], [idx.reshape(-1)], [diag]
    rows += [idx[1:].reshape(-1), idx[:-1].reshape(-1), idx[:, 1:].reshape(-1), idx[:, :-1].reshape(-1)]
    cols += [idx[:-1].reshape(-1), idx[1:].reshape(-1), idx[:, :-1].reshape(-1), idx[:, 1:].reshape(-1)]
    vals += [-kx[1:-1].reshape(-1), -kx[1:-1].reshape(-1), -ky[:, 1:-1].reshape(-1),
             -ky[:, 1:-1].reshape(-1)]
    return torch.cat(vals) / h ** 2, torch.cat(rows), torch.cat(cols), (nx * nx, nx * nx)


# ---- gradients --------------------------------------------------------------------------------
def _loss(method, theta, nx=6, **kw):
    lam, f = theta[0], theta[1:]
    opts = picard_opts(nx) if method in ("picard", "anderson") else {}
    opts.update(kw)

    def F(u, lam, f):
        return bratu2d(u, lam) - f.reshape(nx, nx)

    u = nonlinear_solve(F, torch.zeros(nx, nx, dtype=D), lam, f, method=method, rtol=1e-13,
                        atol=0, adjoint_rtol=1e-13, **opts)
    w = torch.sin(torch.arange(nx * nx, dtype=D)).reshape(nx, nx)
    return (w * u).sum() + (u ** 2).sum()


@pytest.mark.parametrize("method", METHODS)
def test_gradient_against_central_differences(method):
    nx = 6
    torch.manual_seed(0)
    theta = torch.cat([torch.tensor([3.0], dtype=D), 0.5 * torch.rand(nx * nx, dtype=D)])
    t = theta.clone().requires_grad_(True)
    _loss(method, t).backward()
    g = t.grad
    h = 1e-5
    worst = 0.0
    for k in (0, 1, 7, 20, 36):
        e = torch.zeros_like(theta)
        e[k] = h
        with torch.no_grad():
            fd = (_loss(method, theta + e) - _loss(method, theta - e)) / (2 * h)
        worst = max(worst, abs(float(g[k] - fd)) / abs(float(fd)))
    print(f"{method}: max relative error vs central FD {worst:.2e}")
    assert worst <= 1e-6


@pytest.mark.parametrize("method", METHODS)
def test_gradcheck(method):
    nx = 4
    theta = torch.cat([torch.tensor([2.0], dtype=D), 0.3 * torch.rand(nx * nx, dtype=D)])
    theta.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: _loss(method, t, nx=nx), (theta,), eps=1e-6,
                                    atol=1e-7, rtol=1e-6)


def test_gradient_independent_of_steps():
    """3 Newton steps from u0 = 0, ~30 from a far start: the same gradient to 1e-10."""
    n = 60
    lam = torch.tensor(10.0, dtype=D, requires_grad=True)

    def F(u, lam):
        return lap1d(u, 1 / (n + 1)) + u ** 3 - lam

    grads, its = [], []
    for u0 in (torch.zeros(n, dtype=D), 1e5 * (1 + 0.5 * torch.cos(7 * torch.arange(n, dtype=D)))):
        lam.grad = None
        u, info = nonlinear_solve(F, u0, lam, rtol=0, atol=1e-10, max_iter=200, return_info=True)
        (torch.sin(torch.arange(n, dtype=D)) * u).sum().backward()
        grads.append(float(lam.grad))
        its.append(info.iterations)
    assert its[0] <= 5 and its[1] >= 25
    assert abs(grads[0] - grads[1]) <= 1e-10 * abs(grads[0])


def test_backward_graph_flat_in_steps():
    """The autograd graph saves the same tensors whether the solve took 4 or 30 steps."""
    n = 60

    def F(u, lam):
        return lap1d(u, 1 / (n + 1)) + u ** 3 - lam

    counts = []
    for u0 in (torch.zeros(n, dtype=D), 1e5 * torch.ones(n, dtype=D)):
        saved = []
        lam = torch.tensor(10.0, dtype=D, requires_grad=True)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.numel()) or t,
                                                      lambda t: t):
            u, info = nonlinear_solve(F, u0, lam, rtol=0, atol=1e-10, max_iter=200,
                                      return_info=True)
        counts.append((sum(saved), info.iterations))
    assert counts[0][1] < 6 and counts[1][1] > 20
    assert counts[0][0] == counts[1][0]


def test_sparse_tensor_values_inside_residual():
    """A @ u + u³ = f with A a SparseTensor whose values require grad (captured by the closure,
    or passed by A.nonlinear_solve): gradients for A's values and f against central FD."""
    nx = 5
    row, col, val = poisson2d(nx)
    n = nx * nx
    val = val.clone().requires_grad_(True)
    f = torch.linspace(0.5, 1.5, n, dtype=D).requires_grad_(True)

    def run(val, f, via_method):
        A = SparseTensor(val, row, col, (n, n))
        if via_method:
            u = A.nonlinear_solve(lambda u, A, f: A @ u + u ** 3 - f, torch.zeros(n, dtype=D), f,
                                  rtol=1e-13, atol=0)
        else:
            u = nonlinear_solve(lambda u, f: A @ u + u ** 3 - f, torch.zeros(n, dtype=D), f,
                                rtol=1e-13, atol=0)
        return (u * torch.cos(torch.arange(n, dtype=D))).sum()

    for via in (False, True):
        val.grad = f.grad = None
        run(val, f, via).backward()
        h = 1e-6
        for k in (0, 3, 40):
            e = torch.zeros_like(val)
            e[k] = h
            with torch.no_grad():
                fd = (run(val + e, f, via) - run(val - e, f, via)) / (2 * h)
            assert abs(float(val.grad[k] - fd)) <= 1e-6 * abs(float(fd)) + 1e-12
        e = torch.zeros_like(f)
        e[4] = h
        with torch.no_grad():
            fd = (run(val, f + e, via) - run(val, f - e, via)) / (2 * h)
        assert abs(float(f.grad[4] - fd)) <= 1e-6 * abs(float(fd))


# ---- Jacobians --------------------------------------------------------------------------------
def test_probed_pattern_and_colors():
    nx = 9
    row, col = torch_sla.jacobian_sparsity(bratu2d, torch.zeros(nx, nx, dtype=D), 2.0)
    r, c, _ = poisson2d(nx)
    ref = set(zip(r.tolist(), c.tolist()))
    assert set(zip(row.tolist(), col.tolist())) == ref
    # the compressed Jacobian equals the dense one
    u = torch.rand(nx, nx, dtype=D)
    J = torch.autograd.functional.jacobian(lambda v: bratu2d(v.reshape(nx, nx), 2.0).reshape(-1),
                                           u.reshape(-1))
    p = torch_sla._pattern.Pattern.from_coo(nx * nx, nx * nx, row, col)
    cj = _coloring.CompressedJacobian(_coloring.Products(lambda v: bratu2d(v, 2.0), u.shape, D), p)
    vals = cj.values(u)
    assert torch.allclose(vals, J[p.csr_rows(), p.csr_cols()], rtol=0, atol=1e-9)
    assert 5 <= cj.ncolors <= 8


def test_reverse_mode_jacobian():
    """An SpMV inside F has no forward-mode rule: the Jacobian comes from reverse mode (rows
    coloured) and agrees with jacobian_fn's."""
    nx = 6
    row, col, val = poisson2d(nx)
    n = nx * nx
    A = SparseTensor(val, row, col, (n, n))
    F = lambda u, f: A @ u + torch.sinh(u) - f                  # noqa: E731
    f = torch.ones(n, dtype=D)
    u1, i1 = nonlinear_solve(F, torch.zeros(n, dtype=D), f, rtol=1e-12, return_info=True)

    def jac(u, f):
        return (torch.cat([val, torch.cosh(u)]), torch.cat([row, torch.arange(n)]),
                torch.cat([col, torch.arange(n)]), (n, n))

    u2, i2 = nonlinear_solve(F, torch.zeros(n, dtype=D), f, jacobian_fn=jac, rtol=1e-12,
                             return_info=True)
    assert i1.converged and i2.converged and i1.iterations == i2.iterations
    assert (u1 - u2).abs().max() < 1e-12
    # Newton–Krylov: J·v by forward differences or double VJP, Jᵀ·w by reverse mode
    u3, i3 = nonlinear_solve(F, torch.zeros(n, dtype=D), f, method="newton_krylov", rtol=1e-10,
                             return_info=True)
    assert i3.converged and (u3 - u1).abs().max() < 1e-8


def test_jacobian_fn_and_pattern_arguments():
    n = 40
    lam = 1.0
    h = 1 / (n + 1)

    def jac(u, lam):
        d = 2 / h ** 2 - lam * torch.exp(u)
        i = torch.arange(n)
        return (torch.cat([d, -torch.ones(2 * n - 2, dtype=D) / h ** 2]),
                torch.cat([i, i[1:], i[:-1]]), torch.cat([i, i[:-1], i[1:]]), (n, n))

    u1 = nonlinear_solve(bratu1d, torch.zeros(n, dtype=D), lam, jacobian_fn=jac, rtol=1e-12)
    r, c = jac(torch.zeros(n, dtype=D), lam)[1:3]
    u2 = nonlinear_solve(bratu1d, torch.zeros(n, dtype=D), lam, jacobian_pattern=(r, c), rtol=1e-12)
    assert (u1 - u2).abs().max() < 1e-12
    with pytest.raises(ValueError, match="changed its sparsity pattern"):
        calls = [0]

        def moving(u, lam):
            calls[0] += 1
            v, rr, cc, s = jac(u, lam)
            return (v[:-1], rr[:-1], cc[:-1], s) if calls[0] > 1 else (v, rr, cc, s)
        nonlinear_solve(bratu1d, torch.ones(n, dtype=D), lam, jacobian_fn=moving)


def test_newton_krylov_preconditioned():
    nx = 32
    its = {}
    for pc in (None, "ilu0", "amg"):
        u, info = nonlinear_solve(bratu2d, torch.zeros(nx, nx, dtype=D), 6.0,
                                  method="newton_krylov", preconditioner=pc, rtol=1e-10,
                                  linear_maxiter=3000, return_info=True)
        assert info.converged
        its[pc] = info.linear_iterations
    assert its["amg"] < its["ilu0"] < its[None]


# ---- failures ---------------------------------------------------------------------------------
def test_singular_jacobian_raises():
    def F(u):
        return (u.sum() - 1).expand(3)                   # J = ones(3, 3): rank 1

    with pytest.raises(torch_sla.SingularMatrixError, match="iteration 1"):
        nonlinear_solve(F, torch.tensor([0.5, 0.0, 2.0], dtype=D))


def test_diverging_start_warns_and_refuses_backward():
    theta = torch.tensor(4.0, dtype=D, requires_grad=True)      # 1D Bratu: no solution beyond 3.51
    with pytest.warns(torch_sla.ConvergenceWarning, match="did not converge"):
        u, info = nonlinear_solve(bratu1d, torch.zeros(30, dtype=D), theta, return_info=True)
    assert not info.converged and info.reason != "converged"
    with pytest.raises(ValueError, match="did not converge"):
        u.sum().backward()
    with pytest.raises(torch_sla.ConvergenceError):
        nonlinear_solve(bratu1d, torch.zeros(30, dtype=D), 4.0, strict=True)
    with pytest.warns(torch_sla.ConvergenceWarning):          # G(u) = 2u diverges under Picard
        _, info = nonlinear_solve(lambda u: -u, torch.ones(3, dtype=D), method="picard",
                                  return_info=True)
    assert info.reason == "diverged"


def test_nan_from_residual():
    with pytest.raises(ValueError, match=r"F\(u0\)\[0\]"):
        nonlinear_solve(lambda u: torch.log(u), -torch.ones(3, dtype=D))
    # NaN at trial points: the line search backs off (log(u) − 1 from u0 = 10)
    u, info = nonlinear_solve(lambda u: torch.log(u) - 1, 10 * torch.ones(3, dtype=D),
                              rtol=1e-12, return_info=True)
    assert info.converged and info.backtracks >= 1
    assert torch.allclose(u, torch.full((3,), math.e, dtype=D))


class Boom(Exception):
    pass


def test_callback_that_raises():
    calls = [0]

    def F(u, lam):
        calls[0] += 1
        if calls[0] == 3:
            raise Boom("residual exploded")
        return bratu1d(u, lam)

    i = torch.arange(20)
    pattern = (torch.cat([i, i[1:], i[:-1]]), torch.cat([i, i[:-1], i[1:]]))
    for k in (1, 3, 5):          # F(u0); a product of the compressed Jacobian; a line-search trial
        calls[0] = -k + 3
        with pytest.raises(Boom, match="residual exploded") as e:
            nonlinear_solve(F, torch.zeros(20, dtype=D), 1.0, jacobian_pattern=pattern)
        notes = getattr(e.value, "__notes__", [])
        assert any(re.search(r"libsla: sla_nonlinear_solve: the (residual|jacobian) callback "
                             r"returned 1", n) for n in notes), notes
    with pytest.raises(ValueError, match="returned 5 values"):
        nonlinear_solve(lambda u: u[:5], torch.zeros(20, dtype=D))
    with pytest.raises(KeyboardInterrupt):
        def stop(u):
            raise KeyboardInterrupt
        nonlinear_solve(stop, torch.zeros(4, dtype=D))


def test_arguments():
    with pytest.raises(ValueError, match="method"):
        nonlinear_solve(bratu1d, torch.zeros(4, dtype=D), 1.0, method="bisection")
    with pytest.raises(ValueError, match="tol = 0.1 and rtol = 0.01"):
        nonlinear_solve(bratu1d, torch.zeros(4, dtype=D), 1.0, tol=0.1, rtol=0.01)
    with pytest.raises(TypeError, match="float64 or float32"):
        nonlinear_solve(bratu1d, torch.zeros(4, dtype=torch.int64), 1.0)
    u = nonlinear_solve(bratu1d, torch.zeros(10, dtype=D), 1.0, tol=1e-10, method="nk")
    assert bratu1d(u, 1.0).norm() <= 1e-10 * bratu1d(torch.zeros(10, dtype=D), 1.0).norm()


def test_float32():
    u, info = nonlinear_solve(bratu1d, torch.zeros(50, dtype=torch.float32), 1.0, rtol=1e-3,
                              return_info=True)
    assert u.dtype == torch.float32 and info.converged
    x = torch.arange(1, 51, dtype=D) / 51
    assert (u.double() - bratu1d_exact(1.0, x)).abs().max() < 1e-3


# ---- ABI --------------------------------------------------------------------------------------
def test_struct_layouts_match_header():
    from test_abi import _headers
    text = _headers()
    nested = {"sla_solver_options": ctypes.sizeof(torch_sla._capi.SolverOptions),
              "sla_solve_info": ctypes.sizeof(nlc.LinearInfoC)}
    sizes = {"int64_t": 8, "double": 8, "int": 4, "char": 1, "sla_dtype": 4, "sla_nonlinear_method": 4,
             "sla_nonlinear_reason": 4}
    for struct, cls in (("sla_nonlinear_problem", nlc.ProblemC),
                        ("sla_nonlinear_options", nlc.OptionsC),
                        ("sla_nonlinear_info", nlc.InfoC)):
        m = re.search(r"typedef\s+struct\s+%s\s*\{(.*?)\}\s*%s\s*;" % (struct, struct), text, re.S)
        assert m
        fields = []
        for decl in m.group(1).split(";"):
            decl = " ".join(decl.split()).replace("const ", "")
            if not decl:
                continue
            ctype, rest = decl.split(" ", 1)
            for item in rest.split(","):
                mm = re.match(r"\s*(\**)\s*(\w+)\s*(?:\[(\w+)\])?", item)
                ptr, name, dim = mm.groups()
                size = 8 if ptr or ctype.endswith("_fn") else nested.get(ctype, sizes.get(ctype))
                assert size, f"{struct}.{name}: {ctype}"
                if dim:
                    size *= 1024                                  # SLA_DESCRIPTION_LEN
                fields.append((name, size))
        py = [(name, ctypes.sizeof(t)) for name, t in cls._fields_ if name != "_tail_pad"]
        assert py == fields, struct
    # the embedded sla_solve_info has the fields of _capi's mirror
    assert [f[0] for f in nlc.LinearInfoC._fields_] == \
        [f[0] for f in torch_sla._capi.SolveInfoC._fields_ if f[0] != "_tail_pad"]
