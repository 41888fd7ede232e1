"""One torch.autograd.Function per differentiable operation; forward and backward call libsla,
Python only shapes the arguments. This module holds the shared pieces, COO ↔ CSR order
(Gather, Scatter), the products (SpMV, PatternOuter), the norm and the dense conversion; solves
and determinants are in _solve_functions.py, eigenpairs in _eigsh_functions.py.

Two paths in every backward
---------------------------
* **First order** (the backward runs without grad mode: ``create_graph=False``, the training
  loop): the fused C adjoint (sla_spmv_vjp, sla_solver_solve_vjp, ...), one call, nothing
  recorded — as fast as a backward can be.
* **Differentiable** (``create_graph=True``: PyTorch runs the backward in grad mode): the same
  formulas composed of this package's differentiable Functions, so that autograd
  differentiates them again, to any order. The transposed product is an SpMV with the other
  op, the pattern outer product ∂a_s = Σ_j u[r_s][j]·v[c_s][j] is PatternOuter (its own
  backward is two SpMVs with the cotangent as values), the adjoint solve is a Solve on the
  forward's solver object with the other op. A term with no differentiable form (eigenvector
  cotangents of eigsh) goes through :func:`unavailable`, whose backward raises: a second
  derivative is exact or an error, never a silent zero.

Conventions: matrix values are [B, nnz] tensors in CSR order (B ≥ 1, the flattened batch),
dense blocks are [n, k] (shared by the batch) or [B, n, k].
"""
import ctypes
import warnings

import torch
from torch.autograd import Function

from ._capi import SLA_NOT_CONVERGED, SLA_OP_N, SLA_OP_T, Matrix, check, lib
from ._solver import info_from_c
from .errors import ConvergenceError, ConvergenceWarning

DTYPE_CODE = {torch.float64: 0, torch.float32: 1, torch.complex128: 2, torch.complex64: 3}

SECOND_ORDER_COMPLEX = ("second derivatives (create_graph=True) through complex sparse values "
                        "are not supported yet; first-order gradients are")


def refuse_complex_graph(*tensors):
    """Raises NotImplementedError when a differentiable backward meets complex values: the
    recorded formulas of the second-order path are written for real dtypes (N ↔ T, no
    conjugation), and a wrong second derivative must never pass silently."""
    if any(t is not None and t.dtype.is_complex for t in tensors):
        raise NotImplementedError(SECOND_ORDER_COMPLEX)


def real_dtype(dtype):
    """The real dtype of the same precision (complex128 → float64; a real dtype is itself)."""
    return {torch.complex128: torch.float64, torch.complex64: torch.float32}.get(dtype, dtype)


def materialize(t):
    """t with torch's lazy conjugate / negative bits applied to memory. x.conj(), x.mH,
    torch._neg_view and the cotangents of autograd's ConjBackward are views whose bit lives on
    the tensor, not in its storage: data_ptr() hands C the unconjugated values. A tensor
    without the bits is returned as it is (differentiable either way)."""
    if isinstance(t, torch.Tensor) and (t.is_conj() or t.is_neg()):
        return t.resolve_conj().resolve_neg()
    return t


def materializes_views(cls):
    """Class decorator for the autograd Functions that call C: every tensor argument of forward
    and every cotangent of backward goes through materialize()."""
    fwd, bwd = cls.forward, cls.backward

    def forward(ctx, *args):
        return fwd(ctx, *map(materialize, args))

    def backward(ctx, *grads):
        return bwd(ctx, *map(materialize, grads))
    forward.__doc__, backward.__doc__ = fwd.__doc__, bwd.__doc__
    cls.forward, cls.backward = staticmethod(forward), staticmethod(backward)
    return cls


def matrix_view(pattern, values):
    """sla_matrix for [B, nnz] CSR values (a borrowed view: keep `values` alive)."""
    if values.is_conj() or values.is_neg():     # C would read the values unconjugated
        raise RuntimeError("torch_sla internal: values with a lazy conj/neg bit reached C "
                           "(materialize() them first)")
    return Matrix(pattern.ptr, DTYPE_CODE[values.dtype], values.shape[0], values.data_ptr())


def other(op):
    """The other op: N ↔ T."""
    return SLA_OP_T if op == SLA_OP_N else SLA_OP_N


def differentiable():
    """True inside a backward whose result must itself be differentiable (create_graph=True):
    PyTorch runs a backward in grad mode exactly then."""
    return torch.is_grad_enabled()


class _Unavailable(Function):
    """Identity on `out` whose backward raises `message` (see unavailable())."""

    @staticmethod
    def forward(ctx, message, out, *deps):
        ctx.message = message
        return out.clone()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError(ctx.message)


def unavailable(out, deps, message):
    """`out` (computed in C, without a graph) made to depend on the tensors `deps` it was
    computed from, through a node whose backward raises `message`. With create_graph=True the
    first gradient stays exact; differentiating it with respect to anything it depends on
    raises. (torch's once_differentiable, or a detached result, would be disconnected from the
    saved tensors, and autograd.grad would return zero or None without a word.)"""
    deps = [d for d in deps if isinstance(d, torch.Tensor) and d.requires_grad]
    if not deps or not torch.is_grad_enabled():
        return out
    return _Unavailable.apply(message, out, *deps)


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
# COO order ↔ CSR order (linear maps, each the other's transpose)
# ------------------------------------------------------------------------------------------------
def _reorder(t, pattern, to_csr):
    """to_csr: [B, nnz] CSR values from [B, nnz_input] COO values, duplicates summed
    (sla_values_gather); else the other way, each COO entry getting its slot's value
    (sla_values_scatter)."""
    t = t.contiguous()
    out = t.new_empty(t.shape[0], pattern.nnz if to_csr else pattern.nnz_input)
    if t.shape[0]:
        fn = lib.sla_values_gather if to_csr else lib.sla_values_scatter
        check(fn(pattern.ptr, DTYPE_CODE[t.dtype], t.shape[0], t.data_ptr(), out.data_ptr()))
    return out


@materializes_views
class Reorder(Function):
    """COO → CSR order (to_csr: sla_values_gather, [B, nnz_input] → [B, nnz], duplicates summed)
    or back (sla_values_scatter: each duplicate gets its slot's value). The two maps are each
    other's transpose, so the backward of one is the other."""

    @staticmethod
    def forward(ctx, t, pattern, to_csr):
        ctx.pattern, ctx.to_csr = pattern, to_csr
        return _reorder(t, pattern, to_csr)

    @staticmethod
    def backward(ctx, g):
        if differentiable():
            return Reorder.apply(g, ctx.pattern, not ctx.to_csr), None, None
        return _reorder(g, ctx.pattern, not ctx.to_csr), None, None


def gather(coo, pattern):
    """Differentiable CSR values [B, nnz] from COO-ordered values [B, nnz_input]."""
    return Reorder.apply(coo, pattern, True)


# ------------------------------------------------------------------------------------------------
# y = op(A) x and the pattern outer product
# ------------------------------------------------------------------------------------------------
def _spmv(values, x, pattern, op, x_batched):
    """y [B, m, k] = op(A_b) x (sla_spmv); x [n, k] (x_batched = 0) or [B, n, k]."""
    B, k = values.shape[0], x.shape[-1]
    m = pattern.nrows if op == SLA_OP_N else pattern.ncols
    y = values.new_empty(B, m, k)
    if y.numel() == 0:
        return y
    if x.numel() == 0:
        return y.zero_()
    values, x = values.contiguous(), x.contiguous()
    A = matrix_view(pattern, values)
    check(lib.sla_spmv(op, 1.0, ctypes.byref(A), x.data_ptr(), x_batched, k, 0.0,
                       y.data_ptr()))
    return y


def spmv(values, x, pattern, op, x_batched):
    """op(A) x for backward passes: recorded (SpMV) in grad mode, a plain C call otherwise."""
    if differentiable():
        return SpMV.apply(values, x, pattern, op, x_batched)
    return _spmv(values, x, pattern, op, x_batched)


def _outer(u, v, pattern, batch):
    """[batch, nnz]: out[b][s] = Σ_j u[b][r_s][j]·v[b][c_s][j] (sla_pattern_outer_add), u
    [1 or batch, nrows, k], v [1 or batch, ncols, k] (a batch of 1 is shared)."""
    out = u.new_zeros(batch, pattern.nnz)
    k = u.shape[-1]
    if out.numel() == 0 or k == 0 or pattern.nrows == 0 or pattern.ncols == 0:
        return out
    u, v = u.contiguous(), v.contiguous()
    check(lib.sla_pattern_outer_add(pattern.ptr, DTYPE_CODE[u.dtype], batch, 1.0, u.data_ptr(),
                                    int(u.shape[0] == batch), v.data_ptr(),
                                    int(v.shape[0] == batch), k, out.data_ptr()))
    return out


def outer(u, v, pattern, batch):
    """The pattern outer product for backward passes: recorded (PatternOuter) in grad mode."""
    if differentiable():
        return PatternOuter.apply(u, v, pattern, batch)
    return _outer(u, v, pattern, batch)


@materializes_views
class SpMV(Function):
    """y [B, m, k] = op(A_b) x, x [n, k] (x_batched = 0, shared) or [B, n, k]. Backward, first
    order: one sla_spmv_vjp call gives dx = op(A)ᵀ g and dvalues (pattern-restricted outer
    product); differentiable: dx = SpMV with the other op, dvalues = PatternOuter(g, x) (op N)
    or PatternOuter(x, g) (op T)."""

    @staticmethod
    def forward(ctx, values, x, pattern, op, x_batched):
        ctx.pattern, ctx.op, ctx.x_batched = pattern, op, x_batched
        ctx.save_for_backward(values, x)
        return _spmv(values, x, pattern, op, x_batched)

    @staticmethod
    def backward(ctx, g):
        values, x = ctx.saved_tensors
        need_v, need_x = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        if not (need_v or need_x):
            return None, None, None, None, None
        if differentiable():
            refuse_complex_graph(values)
            return SpMV._graph(ctx, values, x, g, need_v, need_x) + (None, None, None)
        # saved as given (a differentiable backward passes cotangents of any layout)
        values, x = values.contiguous(), x.contiguous()
        run = g.numel() and x.numel()
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

    @staticmethod
    def _graph(ctx, values, x, g, need_v, need_x):
        p, op = ctx.pattern, ctx.op
        dv = dx = None
        if need_x:
            dx = SpMV.apply(values, g, p, other(op), 1)             # op(A)ᵀ g, [B, n, k]
            if not ctx.x_batched:
                dx = dx.sum(0)
        if need_v:
            x3 = x if ctx.x_batched else x.unsqueeze(0)
            u, v = (g, x3) if op == SLA_OP_N else (x3, g)
            dv = PatternOuter.apply(u, v, p, values.shape[0])
        return dv, dx


@materializes_views
class PatternOuter(Function):
    """dvalues [batch, nnz] = Σ_j u[b][r_s][j]·v[b][c_s][j] on the pattern (the primitive of
    every adjoint; sla_pattern_outer_add). Backward for a cotangent G [batch, nnz] (read as the
    values of a matrix A_G on the pattern): du = A_G v, dv = A_Gᵀ u (SpMVs; summed over the
    batch for a shared u or v)."""

    @staticmethod
    def forward(ctx, u, v, pattern, batch):
        ctx.pattern = pattern
        ctx.save_for_backward(u, v)
        return _outer(u, v, pattern, batch)

    @staticmethod
    def backward(ctx, G):
        u, v = ctx.saved_tensors
        refuse_complex_graph(u)
        batch, p = G.shape[0], ctx.pattern
        du = dv = None

        def product(op, w):
            shared = w.shape[0] != batch
            return spmv(G, w[0] if shared else w, p, op, 0 if shared else 1)

        if ctx.needs_input_grad[0]:
            du = product(SLA_OP_N, v)
            if u.shape[0] != batch:
                du = du.sum(0, keepdim=True)
        if ctx.needs_input_grad[1]:
            dv = product(SLA_OP_T, u)
            if v.shape[0] != batch:
                dv = dv.sum(0, keepdim=True)
        return du, dv, None, None


# ------------------------------------------------------------------------------------------------
# Norm and dense conversion
# ------------------------------------------------------------------------------------------------
@materializes_views
class FroNorm(Function):
    """‖A_b‖_F [B] (sla_matrix_norm 'F'); backward g·a/‖A‖ (zero where ‖A‖ = 0), in torch
    operations on the saved output (so differentiable again)."""

    @staticmethod
    def forward(ctx, values, pattern):
        norms = (ctypes.c_double * values.shape[0])()
        A = matrix_view(pattern, values)
        check(lib.sla_matrix_norm(ctypes.byref(A), b"F", norms))
        out = torch.tensor(list(norms), dtype=real_dtype(values.dtype))
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
    return torch.tensor(list(norms), dtype=real_dtype(values.dtype))


@materializes_views
class ToDense(Function):
    """Dense [B, m, n] (sla_matrix_to_dense); backward: the dense gradient read at the
    pattern's entries (torch indexing, differentiable again)."""

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
