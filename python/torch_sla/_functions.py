"""One torch.autograd.Function per differentiable operation. Forward and backward both call
libsla (the backward calls the C adjoint: sla_values_scatter, sla_spmv_vjp,
sla_solver_solve_vjp, sla_solver_logdet_grad); Python only shapes the arguments.

Conventions inside this module: matrix values are [B, nnz] contiguous tensors in CSR order
(B ≥ 1, the flattened batch), dense blocks are [n, k] (shared by the batch) or [B, n, k].
"""
import ctypes
import functools
import warnings

import torch
from torch._C import _functions as _torch_functions
from torch.autograd import Function

from ._capi import SLA_NOT_CONVERGED, SLA_OP_N, Matrix, check, lib
from ._solver import acquire, info_from_c
from .errors import ConvergenceError, ConvergenceWarning

DTYPE_CODE = {torch.float64: 0, torch.float32: 1}


def first_order(backward):
    """Marks a backward computed in C (not differentiable itself). Like PyTorch's
    once_differentiable, but a double backward (create_graph=True, then differentiating the
    gradients) raises instead of silently treating the gradients as constants also when only
    the tensors *saved* by the forward require grad (values, x): once_differentiable looks at
    the incoming gradients only, so e.g. ∂(A x)/∂values = g xᵀ would be taken as independent
    of x."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        track = torch.is_grad_enabled() and (
            any(isinstance(g, torch.Tensor) and g.requires_grad for g in grads) or
            any(t is not None and t.requires_grad for t in ctx.saved_tensors))
        with torch.no_grad():
            outputs = backward(ctx, *grads)
        if not track:
            return outputs
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        err = _torch_functions.DelayedError(
            b"torch_sla: double backward is not supported (the gradients of torch_sla "
            b"operations are computed in libsla and are not themselves differentiable)",
            len(outputs))

        def alias(t):
            if t is None:
                return None
            t = t.detach()
            t.requires_grad = True
            return t
        return err(*[alias(t) for t in outputs])
    return wrapper


def matrix_view(pattern, values):
    """sla_matrix for [B, nnz] CSR values (a borrowed view: keep `values` alive)."""
    return Matrix(pattern.ptr, DTYPE_CODE[values.dtype], values.shape[0], values.data_ptr())


class SolveConfig:
    """How a solve or eigsh reports non-convergence, and where it leaves its SolveInfo /
    EigshInfo (converted from the C struct only when asked for, or to build a warning)."""
    __slots__ = ("strict", "want_info", "info", "what")

    def __init__(self, strict=False, want_info=False, what="solve"):
        self.strict = strict
        self.want_info = want_info
        self.info = None
        self.what = what

    def report_eigsh(self, status, cinfo, k):
        from ._capi import EIGSH_METHODS
        from .errors import EigshInfo
        bad = status == SLA_NOT_CONVERGED
        if not (bad or self.want_info):
            return
        m = cinfo.method
        info = EigshInfo(method=EIGSH_METHODS[m] if 0 <= m < len(EIGSH_METHODS) else str(m),
                         converged=int(cinfo.converged), k=k, iterations=int(cinfo.iterations),
                         max_residual=float(cinfo.max_residual), sigma=float(cinfo.sigma),
                         factorizations=int(cinfo.factorizations),
                         description=cinfo.description.decode("utf-8", "replace"))
        self.info = info
        if bad:
            self._not_converged(f"torch_sla eigsh did not converge: {info.converged} of {k} "
                                f"pairs, max residual {info.max_residual:.3e} after "
                                f"{info.iterations} iterations; {info.description}", info)

    def _not_converged(self, msg, info):
        if self.strict:
            raise ConvergenceError(msg, info)
        warnings.warn(msg, ConvergenceWarning, stacklevel=6)

    def report(self, status, cinfo, adjoint=False):
        bad = status == SLA_NOT_CONVERGED or not cinfo.converged
        if not (bad or self.want_info):
            return
        info = info_from_c(cinfo)
        if adjoint:
            if self.info is not None:
                self.info.adjoint = info
        else:
            self.info = info
        if bad:
            what = f"{self.what} (adjoint, in backward)" if adjoint else self.what
            self._not_converged(
                f"torch_sla {what} did not converge: {info.method}, reason '{info.reason}' "
                f"after {info.iterations} iterations, residual {info.residual:.3e} "
                f"(relative {info.relative_residual:.3e}); {info.description}", info)


# ------------------------------------------------------------------------------------------------
# COO order -> CSR order
# ------------------------------------------------------------------------------------------------
class Gather(Function):
    """CSR values [B, nnz] from COO-ordered values [B, nnz_input] (duplicates summed, C
    sla_values_gather); backward: sla_values_scatter (each duplicate gets its slot's gradient)."""

    @staticmethod
    def forward(ctx, coo, pattern):
        out = coo.new_empty(coo.shape[0], pattern.nnz)
        ctx.pattern = pattern
        if coo.shape[0] == 0:                        # empty batch: nothing to gather
            return out
        check(lib.sla_values_gather(pattern.ptr, DTYPE_CODE[coo.dtype], coo.shape[0],
                                    coo.data_ptr(), out.data_ptr()))
        return out

    @staticmethod
    @first_order
    def backward(ctx, g):
        g = g.contiguous()
        out = g.new_empty(g.shape[0], ctx.pattern.nnz_input)
        if g.shape[0] == 0:
            return out, None
        check(lib.sla_values_scatter(ctx.pattern.ptr, DTYPE_CODE[g.dtype], g.shape[0],
                                     g.data_ptr(), out.data_ptr()))
        return out, None


# ------------------------------------------------------------------------------------------------
# y = op(A) x
# ------------------------------------------------------------------------------------------------
class SpMV(Function):
    """y [B, m, k] = op(A_b) x, x [n, k] (x_batched = 0, shared) or [B, n, k]. Backward: one
    sla_spmv_vjp call gives dx = op(A)ᵀ g and dvalues (pattern-restricted outer product)."""

    @staticmethod
    def forward(ctx, values, x, pattern, op, x_batched):
        B = values.shape[0]
        k = x.shape[-1]
        m = pattern.nrows if op == SLA_OP_N else pattern.ncols
        y = values.new_empty(B, m, k)
        ctx.pattern, ctx.op, ctx.x_batched = pattern, op, x_batched
        ctx.save_for_backward(values, x)
        if y.numel() == 0:
            return y
        if x.numel() == 0:
            return y.zero_()
        A = matrix_view(pattern, values)
        check(lib.sla_spmv(op, 1.0, ctypes.byref(A), x.data_ptr(), x_batched, k, 0.0,
                           y.data_ptr()))
        return y

    @staticmethod
    @first_order
    def backward(ctx, g):
        values, x = ctx.saved_tensors
        need_v, need_x = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        run = (need_v or need_x) and g.numel() and x.numel()
        alloc = torch.empty_like if run else torch.zeros_like      # the VJP overwrites
        dv = alloc(values) if need_v else None
        dx = alloc(x) if need_x else None
        if run:
            g = g.contiguous()
            A = matrix_view(ctx.pattern, values)
            check(lib.sla_spmv_vjp(ctx.op, 1.0, ctypes.byref(A), x.data_ptr(), ctx.x_batched,
                                   x.shape[-1], g.data_ptr(), dx.data_ptr() if need_x else None,
                                   dv.data_ptr() if need_v else None))
        return dv, dx, None, None, None


def _keep_pin(ctx, solver, pin, ninputs):
    """The pin stays with the autograd context when a backward may use the solver (released
    by that backward, or when the graph is freed); otherwise it is released now."""
    if any(ctx.needs_input_grad[:ninputs]):
        return pin
    solver.unpin(pin)
    return None


# ------------------------------------------------------------------------------------------------
# x = A⁻¹ b
# ------------------------------------------------------------------------------------------------
class Solve(Function):
    """X [B, n, k] = A_b⁻¹ B_b (B [B, m, k]; m ≠ n only for least squares, method lsqr). The
    solver comes from the refactor cache (see _solver.py) and is saved for the backward, which
    runs sla_solver_solve_vjp on it: one transposed solve with the same factors or
    preconditioner, then ∂a = −λ xᵀ on the pattern; for lsqr, sla_solver_lstsq_vjp (three
    LSQR solves, ∂a from the residual too: docs/krylov.md)."""

    @staticmethod
    def forward(ctx, values, b, pattern, options, config):
        vals = values.detach()
        solver, pin = acquire(pattern, vals, DTYPE_CODE[vals.dtype], vals.shape[0], options)
        try:
            x = b.new_empty((b.shape[0], pattern.ncols, b.shape[-1]))
            st, info = solver.solve(SLA_OP_N, b.shape[-1], b, x)
            config.report(st, info)
        except BaseException:
            solver.unpin(pin)
            raise
        ctx.solver, ctx.config = solver, config
        ctx.generation = solver.generation
        ctx.pin = _keep_pin(ctx, solver, pin, 2)
        ctx.save_for_backward(values, x, b)
        return x

    @staticmethod
    @first_order
    def backward(ctx, g):
        values, x, b = ctx.saved_tensors
        solver = ctx.solver
        need_v, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if not (need_v or need_b):
            return None, None, None, None, None
        ctx.generation = solver.ensure_values(values.detach(), ctx.generation)
        db = torch.empty_like(b) if need_b else None
        dv = torch.empty_like(values) if need_v else None
        if solver.method == "lsqr":
            st, info = solver.lstsq_vjp(SLA_OP_N, x.shape[-1], b.contiguous(), x,
                                        g.contiguous(), db, dv)
        else:
            st, info = solver.solve_vjp(SLA_OP_N, x.shape[-1], x, g.contiguous(), db, dv)
        ctx.config.report(st, info, adjoint=True)
        if ctx.pin is not None:
            solver.unpin(ctx.pin)
        return dv, db, None, None, None


# ------------------------------------------------------------------------------------------------
# log|det A|
# ------------------------------------------------------------------------------------------------
class Slogdet(Function):
    """(log|det A_b| [B], sign [B]) from a direct factorization (sla_solver_logdet); backward:
    sla_solver_logdet_grad (entries of A⁻ᵀ on the pattern, from the factors)."""

    @staticmethod
    def forward(ctx, values, pattern, options):
        vals = values.detach()
        solver, pin = acquire(pattern, vals, DTYPE_CODE[vals.dtype], vals.shape[0], options)
        try:
            sign, lad = solver.logdet()
        except BaseException:
            solver.unpin(pin)
            raise
        ctx.solver, ctx.generation = solver, solver.generation
        ctx.pin = _keep_pin(ctx, solver, pin, 1)
        ctx.save_for_backward(values)
        sign_t = torch.tensor(sign, dtype=values.dtype)
        ctx.mark_non_differentiable(sign_t)
        return torch.tensor(lad, dtype=values.dtype), sign_t

    @staticmethod
    @first_order
    def backward(ctx, g_lad, g_sign):
        (values,) = ctx.saved_tensors
        solver = ctx.solver
        ctx.generation = solver.ensure_values(values.detach(), ctx.generation)
        dv = torch.empty_like(values)
        solver.logdet_grad(g_lad.double().tolist(), dv)
        if ctx.pin is not None:
            solver.unpin(ctx.pin)
        return dv, None, None


# ------------------------------------------------------------------------------------------------
# Norm and dense conversion
# ------------------------------------------------------------------------------------------------
class FroNorm(Function):
    """‖A_b‖_F [B] (sla_matrix_norm 'F'); backward g·a/‖A‖ (zero where ‖A‖ = 0)."""

    @staticmethod
    def forward(ctx, values, pattern):
        norms = (ctypes.c_double * values.shape[0])()
        A = matrix_view(pattern, values)
        check(lib.sla_matrix_norm(ctypes.byref(A), b"F", norms))
        out = torch.tensor(list(norms), dtype=values.dtype)
        ctx.save_for_backward(values, out)
        return out

    @staticmethod
    def backward(ctx, g):
        values, norms = ctx.saved_tensors
        safe = torch.where(norms > 0, norms, torch.ones_like(norms))
        return values * (g / safe).unsqueeze(-1), None


def matrix_norm(pattern, values, which):
    """Non-differentiable norms: which = '1', 'I', 'M' (see sla_matrix_norm)."""
    norms = (ctypes.c_double * values.shape[0])()
    A = matrix_view(pattern, values)
    check(lib.sla_matrix_norm(ctypes.byref(A), which.encode(), norms))
    return torch.tensor(list(norms), dtype=values.dtype)


class ToDense(Function):
    """Dense [B, m, n] (sla_matrix_to_dense); backward: the dense gradient read at the
    pattern's entries."""

    @staticmethod
    def forward(ctx, values, pattern):
        out = values.new_empty(values.shape[0], pattern.nrows, pattern.ncols)
        if out.numel():
            A = matrix_view(pattern, values)
            check(lib.sla_matrix_to_dense(ctypes.byref(A), out.data_ptr()))
        ctx.pattern = pattern
        return out

    @staticmethod
    def backward(ctx, g):
        p = ctx.pattern
        return g[:, p.csr_rows(), p.csr_cols()], None


# ------------------------------------------------------------------------------------------------
# Eigenpairs of symmetric matrices
# ------------------------------------------------------------------------------------------------
def eigsh_forward(pattern, values, k, opts, config, mass=None):
    """(eigenvalues [B, k] ascending, eigenvectors [B, n, k]) from sla_eigsh. opts: dict with
    which, sigma, tol, maxiter, method (names). mass: (pattern, values [1 or B, nnz]) of M for
    A v = λ M v, or None. Non-convergence is reported through config."""
    from ._capi import EIGSH_METHODS, EIGSH_WHICH, EigshInfoC, EigshOptionsC, require
    require("sla_eigsh", "SparseTensor.eigsh")
    o = EigshOptionsC()
    lib.sla_eigsh_options_init(ctypes.byref(o))
    o.which = EIGSH_WHICH.index(opts["which"])
    o.method = EIGSH_METHODS.index(opts["method"])
    if opts["sigma"] is not None:
        o.sigma = opts["sigma"]
    if opts["tol"] is not None:
        o.tol = opts["tol"]
    if opts["maxiter"] is not None:
        o.maxiter = opts["maxiter"]
    B, n = values.shape[0], pattern.ncols
    evals = values.new_empty(B, k)
    evecs = values.new_empty(B, n, k)
    info = EigshInfoC()
    A = matrix_view(pattern, values)
    if mass is not None:
        Mc = matrix_view(*mass)     # kept alive until sla_eigsh returns
        o.M = ctypes.cast(ctypes.pointer(Mc), ctypes.c_void_p)
    st = check(lib.sla_eigsh(ctypes.byref(A), k, ctypes.byref(o), evals.data_ptr(),
                             evecs.data_ptr(), ctypes.byref(info)))
    config.report_eigsh(st, info, k)
    return evals, evecs


class Eigsh(Function):
    """k eigenpairs of symmetric A_b (sla_eigsh). Backward: sla_eigsh_vjp —
    ∂a_s = Σ_i gλ_i v_i[r_s] v_i[c_s] − Σ_i w_i[r_s] v_i[c_s], with w_i = (A − λ_i I)⁺ g_i for
    eigenvector cotangents (projected solves in libsla)."""

    @staticmethod
    def forward(ctx, values, pattern, k, opts, config):
        evals, evecs = eigsh_forward(pattern, values, k, opts, config)
        ctx.pattern = pattern
        ctx.save_for_backward(values, evals, evecs)
        return evals, evecs

    @staticmethod
    @first_order
    def backward(ctx, g_vals, g_vecs):
        values, evals, evecs = ctx.saved_tensors
        dv = torch.empty_like(values)
        gv = g_vals.contiguous() if g_vals is not None and bool(g_vals.ne(0).any()) else None
        gV = g_vecs.contiguous() if g_vecs is not None and bool(g_vecs.ne(0).any()) else None
        if gv is None and gV is None:
            return dv.zero_(), None, None, None, None
        A = matrix_view(ctx.pattern, values)
        check(lib.sla_eigsh_vjp(ctypes.byref(A), evals.shape[1], evals.data_ptr(),
                                evecs.data_ptr(), gv.data_ptr() if gv is not None else None,
                                gV.data_ptr() if gV is not None else None, dv.data_ptr()))
        return dv, None, None, None, None


class EigshGeneralized(Function):
    """k eigenpairs of A_b v = λ M_b v (sla_eigsh with options.M; M-orthonormal eigenvectors).
    Backward: sla_eigsh_generalized_vjp — gradients for the values of A and of M (its own
    pattern): ∂λ_i/∂A = v_i v_iᵀ, ∂λ_i/∂M = −λ_i v_i v_iᵀ, eigenvector terms through
    (A − λ_i M)⁺ (projected solves in libsla)."""

    @staticmethod
    def forward(ctx, values, mvalues, pattern, mpattern, k, opts, config):
        evals, evecs = eigsh_forward(pattern, values, k, opts, config, (mpattern, mvalues))
        ctx.patterns = (pattern, mpattern)
        ctx.save_for_backward(values, mvalues, evals, evecs)
        return evals, evecs

    @staticmethod
    @first_order
    def backward(ctx, g_vals, g_vecs):
        values, mvalues, evals, evecs = ctx.saved_tensors
        dv, dm = torch.empty_like(values), torch.empty_like(mvalues)
        gv = g_vals.contiguous() if g_vals is not None and bool(g_vals.ne(0).any()) else None
        gV = g_vecs.contiguous() if g_vecs is not None and bool(g_vecs.ne(0).any()) else None
        if gv is None and gV is None:
            return dv.zero_(), dm.zero_(), None, None, None, None, None
        A = matrix_view(ctx.patterns[0], values)
        M = matrix_view(ctx.patterns[1], mvalues)
        check(lib.sla_eigsh_generalized_vjp(
            ctypes.byref(A), ctypes.byref(M), evals.shape[1], evals.data_ptr(), evecs.data_ptr(),
            gv.data_ptr() if gv is not None else None, gV.data_ptr() if gV is not None else None,
            dv.data_ptr(), dm.data_ptr()))
        return dv, dm, None, None, None, None, None
