"""Differentiable nonlinear solves F(u, θ) = 0 (torch-sla's ``nonlinear_solve``) on libsla's
sla_nonlinear_* (include/sla/nonlinear.h): Newton with Armijo backtracking, Newton–Krylov with
Eisenstat–Walker forcing terms, Picard and Anderson acceleration run in C; this module turns
``residual_fn`` into the C callbacks and registers the adjoint.

Jacobians: ``jacobian_fn`` if given (COO or SparseTensor, the sparsity pattern fixed), else a
sparse Jacobian from products of ``residual_fn`` by a structural colouring (see _coloring.py):
cost ≈ (number of colours) residual evaluations, never a dense n × n matrix. Newton–Krylov needs
only products J·v (its preconditioner, if asked for, is built on the same sparse Jacobian).

Gradients (implicit function theorem): at the solution u*, ∂L/∂θ = −(∂F/∂θ)ᵀλ with
J(u*)ᵀλ = ∂L/∂u*: one adjoint linear solve in C (sla_nonlinear_vjp, on the last Newton step's
factors or preconditioner), then autograd through one evaluation of F(u*, θ) with the
cotangent −λ. So every tensor that F depends on receives its gradient — the params, and
SparseTensor values or module weights used inside residual_fn — at a memory cost independent
of the number of iterations. See docs/nonlinear.md.
"""
import ctypes
import math
import warnings
from dataclasses import dataclass, field
from typing import List, Optional

import torch

from . import _coloring
from ._args import as_opt_int, as_opt_real
from ._capi import SLA_FLOAT32, SLA_FLOAT64, SLA_NOT_CONVERGED, SLA_OP_N, check, lib
from ._nonlinear_capi import (APPLY_FN, JACOBIAN_FN, METHODS, PARAM_VJP_FN, REASONS, RESIDUAL_FN,
                              InfoC, OptionsC, ProblemC, VjpInfoC, nl)
from ._pattern import Pattern
from ._solver import Options, info_from_c
from .errors import ConvergenceError, ConvergenceWarning, SlaError

_METHOD_ALIASES = {"nk": "newton_krylov", "jfnk": "newton_krylov", "newton-krylov": "newton_krylov"}


@dataclass
class NonlinearInfo:
    """What a nonlinear solve did (``return_info=True``).

    method; converged (‖F(u)‖ ≤ max(rtol·‖F(u0)‖, atol) holds for the returned u); reason
    ('converged', 'max iterations', 'line search failed', 'diverged', 'non-finite',
    'stagnation', 'linear solver failed', 'callback failed'); iterations; residual (‖F(u)‖₂);
    initial_residual; tolerance; history (‖F(u_k)‖₂, k = 0..iterations); linear_solves,
    linear_iterations, backtracks, residual_evaluations, jacobian_evaluations,
    jacobian_products (counts); colors (colours of the compressed Jacobian, 0 if none);
    pattern_nnz; description (libsla's one line); linear (the last linear solve's SolveInfo);
    adjoint: the SolveInfo of the adjoint solve once backward has run, else None.
    """
    method: str
    converged: bool
    reason: str
    iterations: int
    residual: float
    initial_residual: float
    tolerance: float
    history: List[float]
    linear_solves: int
    linear_iterations: int
    backtracks: int
    residual_evaluations: int
    jacobian_evaluations: int
    jacobian_products: int
    description: str
    colors: int = 0
    pattern_nnz: int = 0
    linear: object = field(default=None, repr=False)
    adjoint: Optional[object] = field(default=None, repr=False)


# ------------------------------------------------------------------------------------------------
# Tensors over C memory
# ------------------------------------------------------------------------------------------------
_CTYPES = {torch.float64: ctypes.c_double, torch.float32: ctypes.c_float}


def _view(addr, n, dtype):
    """A tensor sharing the C array of n entries at addr (valid during the callback only)."""
    if n == 0:
        return torch.empty(0, dtype=dtype)
    return torch.frombuffer((_CTYPES[dtype] * n).from_address(addr), dtype=dtype)


def _flat(t, n, dtype, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{what} must return a tensor, got {type(t).__name__}")
    if t.numel() != n:
        raise ValueError(f"{what} returned {t.numel()} values, expected {n}")
    return t.detach().reshape(-1).to(dtype)


# ------------------------------------------------------------------------------------------------
# Matrix sources on one union pattern: a user's jacobian_fn / linearization_fn, or the colouring
# ------------------------------------------------------------------------------------------------
def _coo_of(out, n, what):
    """(val, row, col) of a jacobian_fn result: (val, row, col, shape) or a SparseTensor."""
    from .sparse_tensor import SparseTensor
    if isinstance(out, SparseTensor):
        if out.is_batched or tuple(out.shape) != (n, n):
            raise ValueError(f"{what} returned a SparseTensor of shape {tuple(out.shape)}; "
                             f"expected ({n}, {n})")
        return out.values, out.row_indices, out.col_indices
    if not isinstance(out, (tuple, list)) or len(out) not in (3, 4):
        raise TypeError(f"{what} must return (values, row, col, shape) or a SparseTensor, got "
                        f"{type(out).__name__}")
    val, row, col = out[0], out[1], out[2]
    if len(out) == 4 and tuple(int(s) for s in out[3]) != (n, n):
        raise ValueError(f"{what} returned shape {tuple(out[3])}; expected ({n}, {n})")
    row = torch.as_tensor(row).to(torch.int64).reshape(-1).contiguous()
    col = torch.as_tensor(col).to(torch.int64).reshape(-1).contiguous()
    if not isinstance(val, torch.Tensor) or val.numel() != row.numel() or col.numel() != row.numel():
        raise ValueError(f"{what}: values, row and col must have the same length")
    return val, row, col


class _UserMatrix:
    """A jacobian_fn / linearization_fn: its first call fixes the pattern."""

    def __init__(self, fn, params, u0, n, dtype, what):
        self.fn, self.params, self.n, self.dtype, self.what = fn, params, n, dtype, what
        with torch.no_grad():
            val, self.row, self.col = _coo_of(fn(u0, *params), n, what)
        self._first = (u0.detach().reshape(-1).clone(), _flat(val, self.row.numel(), dtype, what))

    def coo_values(self, u):
        if self._first is not None:
            u0, v0 = self._first
            self._first = None
            if torch.equal(u0, u.reshape(-1)):
                return v0
        with torch.no_grad():
            val, row, col = _coo_of(self.fn(u, *self.params), self.n, self.what)
        if not ((row is self.row or torch.equal(row, self.row)) and
                (col is self.col or torch.equal(col, self.col))):
            raise ValueError(f"{self.what} changed its sparsity pattern between calls; the "
                             f"pattern must be fixed (include structural zeros)")
        return _flat(val, self.row.numel(), self.dtype, self.what)


class _ColoredMatrix:
    """The compressed Jacobian on a pattern given or probed."""

    def __init__(self, products, row, col):
        self.pattern = Pattern.from_coo(products.n, products.n, row, col)
        # its entries in CSR order (duplicates of the given pattern merged), the values' order
        self.row, self.col = self.pattern.csr_rows(), self.pattern.csr_cols()
        self.jac = _coloring.CompressedJacobian(products, self.pattern)
        self.what = "the compressed Jacobian"

    def coo_values(self, u):
        return self.jac.values(u)        # CSR order of its own pattern = its COO order here


class _Union:
    """One pattern holding every source's entries; each source's values summed into its slots."""

    def __init__(self, n, sources):
        self.sources = [s for s in sources if s is not None]
        rows = torch.cat([s.row for s in self.sources])
        cols = torch.cat([s.col for s in self.sources])
        self.pattern = Pattern.from_coo(n, n, rows.contiguous(), cols.contiguous())
        slot_map, self.slots, k = self.pattern.map(), {}, 0
        for s in self.sources:
            self.slots[id(s)] = slot_map[k:k + s.row.numel()]
            k += s.row.numel()

    def csr(self, source, u, out):
        vals = source.coo_values(u)
        out.zero_()
        out.index_add_(0, self.slots[id(source)], vals.to(out.dtype))


# ------------------------------------------------------------------------------------------------
# The C callbacks
# ------------------------------------------------------------------------------------------------
class _Callbacks:
    """ctypes callbacks over Python functions; an exception is kept and the callback returns 1
    (libsla then stops with SLA_ECALLBACK and the Python exception is raised again)."""

    def __init__(self, fn, shape, dtype, products, union, jac_source, lin_source):
        self.fn, self.shape, self.dtype, self.products = fn, shape, dtype, products
        self.n = math.prod(shape)
        self.union, self.jac_source, self.lin_source = union, jac_source, lin_source
        self.nnz = union.pattern.nnz if union is not None else 0
        self.error = None
        self.residual = RESIDUAL_FN(self._residual)
        self.jacobian = JACOBIAN_FN(self._jacobian) if jac_source else JACOBIAN_FN()
        self.linearization = JACOBIAN_FN(self._linearization) if lin_source else JACOBIAN_FN()
        self.apply = APPLY_FN(self._apply)

    def _guard(self, f, *args):
        try:
            f(*args)
            return 0
        except BaseException as e:            # noqa: B902 — KeyboardInterrupt too: re-raised
            if self.error is None:
                self.error = e
            return 1

    def _u(self, addr):
        return _view(addr, self.n, self.dtype).clone().reshape(self.shape)

    def _residual(self, ctx, u, F):
        return self._guard(self._do_residual, u, F)

    def _do_residual(self, u, F):
        with torch.no_grad():
            out = self.fn(self._u(u))
        _view(F, self.n, self.dtype).copy_(_flat(out, self.n, self.dtype, "residual_fn"))

    def _jacobian(self, ctx, u, values):
        return self._guard(self._matrix, self.jac_source, u, values)

    def _linearization(self, ctx, u, values):
        return self._guard(self._matrix, self.lin_source, u, values)

    def _matrix(self, source, u, values):
        self.union.csr(source, self._u(u), _view(values, self.nnz, self.dtype))

    def _apply(self, ctx, op, u, v, y):
        return self._guard(self._do_apply, op, u, v, y)

    def _do_apply(self, op, u, v, y):
        uu, vv = self._u(u), _view(v, self.n, self.dtype).clone()
        out = self.products.jvp(uu, vv) if op == SLA_OP_N else self.products.vjp(uu, vv)
        _view(y, self.n, self.dtype).copy_(out)

    def raise_error(self, status):
        """Raises the kept Python exception (with libsla's message as a note), or libsla's."""
        e, self.error = self.error, None
        if e is not None:
            msg = lib.sla_last_error().decode("utf-8", "replace")
            if hasattr(e, "add_note") and msg:
                e.add_note(f"libsla: {msg}")
            raise e
        check(status)


class _Handle:
    """Owns the C sla_nonlinear (and what its callbacks need) until the graph is freed."""

    def __init__(self, problem, options, callbacks, n, dtype):
        self.callbacks, self.n, self.dtype = callbacks, n, dtype
        self.problem, self.options = problem, options      # keep the structs alive
        out = ctypes.c_void_p()
        check(nl.sla_nonlinear_create(ctypes.byref(problem), ctypes.byref(options),
                                      ctypes.byref(out)))
        self.ptr = out.value
        self.info = None

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr:
            self.ptr = None
            nl.sla_nonlinear_free(ctypes.byref(ctypes.c_void_p(ptr)))

    def solve(self, u0):
        u0 = u0.detach().reshape(-1).to(self.dtype).contiguous()
        u = torch.empty_like(u0)
        info = InfoC()
        st = nl.sla_nonlinear_solve(self.ptr, u0.data_ptr(), u.data_ptr(), ctypes.byref(info))
        if st < 0:
            self.callbacks.raise_error(st)
        return st, u, info

    def vjp(self, g):
        g = g.detach().reshape(-1).to(self.dtype).contiguous()
        lam = torch.empty_like(g)
        info = VjpInfoC()
        st = nl.sla_nonlinear_vjp(self.ptr, g.data_ptr(), lam.data_ptr(), ctypes.byref(info))
        if st < 0:
            self.callbacks.raise_error(st)
        return st, lam, info


class _Adjoint(torch.autograd.Function):
    """out = 0 (shape of u); backward: the cotangent g of u* becomes −λ on F(u*, θ), λ = J⁻ᵀg."""

    @staticmethod
    def forward(ctx, F_star, handle, info):
        ctx.handle, ctx.info = handle, info
        return torch.zeros_like(F_star)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g):
        st, lam, vi = ctx.handle.vjp(g)
        adj = info_from_c(vi)
        if ctx.info is not None:
            ctx.info.adjoint = adj
        if st == SLA_NOT_CONVERGED:
            warnings.warn(f"nonlinear_solve backward: the adjoint solve stopped above its "
                          f"tolerance ({adj.description}; relative residual "
                          f"{adj.relative_residual:.2e})", ConvergenceWarning, stacklevel=2)
        return -lam.reshape(g.shape).to(g.dtype), None, None


# ------------------------------------------------------------------------------------------------
# The public function
# ------------------------------------------------------------------------------------------------
def _method(method):
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, got {type(method).__name__}")
    m = _METHOD_ALIASES.get(method.lower(), method.lower())
    if m not in METHODS:
        raise ValueError(f"method = {method!r}: use one of {', '.join(METHODS)}")
    return m


def _pattern_arg(jacobian_pattern, n):
    from .sparse_tensor import SparseTensor
    if isinstance(jacobian_pattern, SparseTensor):
        return jacobian_pattern.row_indices, jacobian_pattern.col_indices
    if isinstance(jacobian_pattern, torch.Tensor) and jacobian_pattern.dim() == 2 and \
            jacobian_pattern.shape[0] == 2:
        return jacobian_pattern[0].to(torch.int64).contiguous(), \
            jacobian_pattern[1].to(torch.int64).contiguous()
    if isinstance(jacobian_pattern, (tuple, list)) and len(jacobian_pattern) == 2:
        return (torch.as_tensor(jacobian_pattern[0]).to(torch.int64).reshape(-1).contiguous(),
                torch.as_tensor(jacobian_pattern[1]).to(torch.int64).reshape(-1).contiguous())
    raise TypeError("jacobian_pattern must be (row, col), a [2, nnz] index tensor or a "
                    "SparseTensor")


def _info(info, method, colors, nnz):
    hist = [info.history[k] for k in range(info.iterations + 1)] if info.history else []
    return NonlinearInfo(
        method=method, converged=bool(info.converged),
        reason=REASONS[info.reason] if 0 <= info.reason < len(REASONS) else str(info.reason),
        iterations=int(info.iterations), residual=float(info.residual_norm),
        initial_residual=float(info.initial_residual_norm), tolerance=float(info.tolerance),
        history=hist, linear_solves=int(info.linear_solves),
        linear_iterations=int(info.linear_iterations), backtracks=int(info.backtracks),
        residual_evaluations=int(info.residual_evaluations),
        jacobian_evaluations=int(info.jacobian_evaluations),
        jacobian_products=int(info.jacobian_products),
        description=info.description.decode("utf-8", "replace"), colors=colors, pattern_nnz=nnz,
        linear=info_from_c(info.linear) if info.linear_solves else None)


def jacobian_sparsity(residual_fn, u0, *params, jacobian_mode="auto"):
    """(row, col) int64 of the structural sparsity pattern of ∂F/∂u at u0 (entries in no
    particular order), detected by NaN
    probing (about 2·colours·log₂(n) Jacobian products; see torch_sla._coloring). Pass it as
    ``jacobian_pattern=`` to skip detection; nonlinear_solve caches it per residual_fn."""
    params_d = tuple(p.detach() if isinstance(p, torch.Tensor) else p for p in params)
    products = _coloring.Products(lambda u: residual_fn(u, *params_d), u0.shape, u0.dtype,
                                  jacobian_mode)
    return _coloring.probe_pattern(products, u0.detach())


def nonlinear_solve(residual_fn, u0, *params, jacobian_fn=None, method="newton", tol=None,
                    rtol=None, atol=1e-10, max_iter=None, line_search=True, verbose=False,
                    linear_solver="auto", linear_method="auto", preconditioner=None,
                    linear_rtol=None, linear_maxiter=None, jacobian_pattern=None,
                    linearization_fn=None, jacobian_mode="auto", anderson_depth=5, damping=1.0,
                    adjoint_rtol=1e-10, strict=False, return_info=False, _pattern_key=None):
    r"""Solves F(u, θ) = ``residual_fn(u, *params)`` = 0 for u, differentiably.

    Parameters (torch-sla's signature, with libsla's additions)
    ----------
    residual_fn : callable ``(u, *params) -> F`` with F of u's size (n equations, n unknowns).
        May use anything differentiable: params, SparseTensors (``A @ u``), modules.
    u0 : Tensor, float64 or float32, CPU, any shape (u keeps it). Not differentiated.
    params : tensors θ; those requiring grad receive ∂L/∂θ. Tensors captured by residual_fn
        (SparseTensor values, nn.Module weights) receive gradients as well.
    jacobian_fn : optional ``(u, *params) -> (values, row, col, shape)`` or a SparseTensor: the
        exact ∂F/∂u on a fixed pattern. Default: the compressed Jacobian by colouring, on
        ``jacobian_pattern`` or on the pattern detected once (see :func:`jacobian_sparsity`).
    method : 'newton' (Armijo line search, sparse direct or iterative linear solves),
        'newton_krylov' (matrix-free, Eisenstat–Walker forcing terms, GMRES by default),
        'picard' (u ← u − A(u)⁻¹F(u) with ``linearization_fn``, else u ← u − ω F(u)),
        'anderson' (Anderson acceleration of that map, depth ``anderson_depth``).
    rtol (alias tol), atol : converged iff ‖F(u)‖₂ ≤ max(rtol·‖F(u0)‖₂, atol); defaults
        rtol 1e-8, atol 1e-10.
    max_iter : nonlinear iterations (default 50; 500 for picard and anderson).
    line_search : Armijo backtracking (newton, newton_krylov).
    linear_method, linear_solver : method and backend of the linear solves ('auto': libsla's
        choice, made once and refactored every step), e.g. 'cholesky', 'lu', 'cg', 'gmres'.
        newton_krylov: the Krylov method (auto: gmres).
    preconditioner : of iterative linear solves ('auto', 'none', 'jacobi', 'ic0', 'ilu0',
        'amg'). newton_krylov: built on the sparse Jacobian (jacobian_fn or colouring) or on
        ``linearization_fn`` (the Amat/Pmat split); default none without one of them.
    linear_rtol, linear_maxiter : of the linear solves (newton, picard).
    linearization_fn : optional A(u) ≈ ∂F/∂u like jacobian_fn: Picard's matrix, the
        preconditioning matrix of newton_krylov.
    jacobian_mode : 'auto' (forward mode, reverse where an operation lacks a forward rule),
        'forward', 'reverse'.
    adjoint_rtol : tolerance of the adjoint solve J(u*)ᵀλ = ∂L/∂u* (default 1e-10).
    strict : raise ConvergenceError instead of warning when the solve does not converge.
    return_info : also return a :class:`NonlinearInfo`.

    Returns u (shape of u0), or (u, info). A solve that did not converge warns
    (ConvergenceWarning) and returns the last iterate, whose backward raises (the implicit
    function theorem needs a solution). Errors: a failing residual_fn raises its own exception;
    a singular Jacobian raises SingularMatrixError; NaN in F(u0) raises ValueError.
    """
    if not nl.has():
        nl.sla_nonlinear_create               # raises NotImplementedError naming the symbol
    if not callable(residual_fn):
        raise TypeError("residual_fn must be callable")
    if not isinstance(u0, torch.Tensor):
        raise TypeError(f"u0 must be a torch.Tensor, got {type(u0).__name__}")
    if u0.device.type != "cpu":
        raise ValueError(f"u0 is on {u0.device}; libsla runs on the CPU")
    if u0.dtype not in (torch.float64, torch.float32):
        raise TypeError(f"u0 must be float64 or float32, got {u0.dtype}")
    m = _method(method)
    if tol is not None and rtol is not None and float(tol) != float(rtol):
        raise ValueError(f"tol = {tol} and rtol = {rtol}: give one (tol is torch-sla's name)")
    rtol = as_opt_real(rtol if rtol is not None else tol, "rtol", minimum=0)
    atol = as_opt_real(atol, "atol", minimum=0)
    max_iter = as_opt_int(max_iter, "max_iter", minimum=0)
    dtype, shape, n = u0.dtype, tuple(u0.shape), u0.numel()
    u0d = u0.detach()
    params_d = tuple(p.detach() if isinstance(p, torch.Tensor) else p for p in params)

    def fn(u):
        return residual_fn(u, *params_d)

    products = _coloring.Products(fn, shape, dtype, jacobian_mode)
    no_pc = preconditioner is not None and str(preconditioner).lower() == "none"
    # newton_krylov preconditions when asked to, or when a matrix is given for it
    nk_pc = m == "newton_krylov" and not no_pc and (
        preconditioner is not None or jacobian_fn is not None or linearization_fn is not None)
    jac_src = lin_src = colored = None
    if jacobian_fn is not None:
        jac_src = _UserMatrix(jacobian_fn, params_d, u0d, n, dtype, "jacobian_fn")
    if linearization_fn is not None:
        lin_src = _UserMatrix(linearization_fn, params_d, u0d, n, dtype, "linearization_fn")
    want_colored = jac_src is None and (m == "newton" or jacobian_pattern is not None or
                                        (nk_pc and lin_src is None))
    if want_colored:
        if jacobian_pattern is not None:
            row, col = _pattern_arg(jacobian_pattern, n)
        else:
            row, col = _coloring.cached_pattern(_pattern_key or residual_fn, products, u0d)
        colored = jac_src = _ColoredMatrix(products, row, col)
    if nk_pc and lin_src is None:
        lin_src = jac_src
    union = _Union(n, [jac_src, lin_src if lin_src is not jac_src else None]) \
        if (jac_src or lin_src) else None
    cbs = _Callbacks(fn, shape, dtype, products, union, jac_src, lin_src)

    opt = OptionsC()
    nl.sla_nonlinear_options_init_for(ctypes.byref(opt), METHODS.index(m))
    lin_opts = Options(method=linear_method, backend=linear_solver, rtol=linear_rtol,
                       maxiter=linear_maxiter, preconditioner=preconditioner or "auto")
    opt.linear, backend_bytes = lin_opts.to_c()
    if m == "newton_krylov" and not nk_pc:
        opt.linear.precond = 1                      # SLA_PRECOND_NONE
    opt.rtol = 1e-8 if rtol is None else rtol
    opt.atol = atol if atol is not None else 0.0
    if max_iter is not None:
        opt.max_iter = max_iter
    opt.line_search = int(bool(line_search))
    opt.anderson_depth = int(anderson_depth)
    opt.damping = float(damping)
    opt.adjoint_rtol = float(adjoint_rtol)
    prob = ProblemC(n=n, dtype=SLA_FLOAT64 if dtype == torch.float64 else SLA_FLOAT32,
                    residual=cbs.residual, pattern=union.pattern.ptr if union else None,
                    jacobian=cbs.jacobian, linearization=cbs.linearization,
                    jacobian_apply=cbs.apply, param_vjp=PARAM_VJP_FN(), ctx=None)
    handle = _Handle(prob, opt, cbs, n, dtype)
    handle.keep = (backend_bytes, union, colored)
    st, u, cinfo = handle.solve(u0d)
    info = _info(cinfo, m, colored.jac.ncolors if colored else 0,
                 union.pattern.nnz if union else 0)
    if verbose:
        print(f"nonlinear_solve: {info.description}\n  ‖F‖: " +
              " ".join(f"{h:.3e}" for h in info.history))
    if st == SLA_NOT_CONVERGED:
        msg = f"nonlinear_solve did not converge: {info.description}"
        if strict:
            raise ConvergenceError(msg, info)
        warnings.warn(msg, ConvergenceWarning, stacklevel=2)
    u = u.reshape(shape)
    if torch.is_grad_enabled():
        with torch.enable_grad():
            F_star = residual_fn(u, *params)
        if isinstance(F_star, torch.Tensor) and F_star.requires_grad:
            u = u + _Adjoint.apply(F_star.reshape(shape).to(dtype), handle, info)
    return (u, info) if return_info else u


def _sparse_tensor_nonlinear_solve(A, residual_fn, u0, *params, jac_fn=None, jacobian_fn=None,
                                   **kwargs):
    """SparseTensor.nonlinear_solve: residual_fn(u, A, *params) with A this SparseTensor (its
    values differentiable); jac_fn (torch-sla's name) or jacobian_fn(u, A, *params)."""
    if A.is_batched:
        raise NotImplementedError("nonlinear_solve is not supported for batched SparseTensors")
    if jac_fn is not None and jacobian_fn is not None:
        raise ValueError("give jac_fn or jacobian_fn, not both")
    jf = jac_fn or jacobian_fn
    jac = (lambda u, *p: jf(u, A, *p)) if jf is not None else None
    return nonlinear_solve(lambda u, *p: residual_fn(u, A, *p), u0, *params, jacobian_fn=jac,
                           _pattern_key=residual_fn, **kwargs)


# torch-sla's alias (its __init__ exports both names for the one function)
adjoint_solve = nonlinear_solve
