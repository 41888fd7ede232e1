"""Eigenpairs of symmetric matrices as torch.autograd.Functions (the two backward paths are
described in _functions.py).

Eigenvalue cotangents gλ give ∂a_s = Σ_i gλ_i·v_i[r_s]·v_i[c_s] (Hellmann–Feynman; with a mass
matrix also ∂m_t = −Σ_i gλ_i·λ_i·v_i[r_t]·v_i[c_t]). In the differentiable path this is
PatternOuter(V·diag(gλ), V) with V the forward's output, so the second derivative of an
eigenvalue comes from the eigenvector derivative — the first-order eigenvector VJP in libsla
(projected solves with A − λ_i I): Hessians and Hessian-vector products of eigenvalue losses
are exact. The eigenvector VJP itself (sla_eigsh_vjp with eigenvector cotangents) has no
differentiable form here: differentiating a gradient that went through it raises.

Complex Hermitian A (complex128, complex64): real eigenvalues, complex eigenvectors (phase:
the largest-magnitude entry real positive); the backward is sla_eigsh_vjp in torch's
convention (∂λ/∂A = v vᴴ on the pattern; eigenvector losses must not depend on the phase of
the eigenvectors, as for torch.linalg.eigh), first order only (docs/complex.md).
"""
import ctypes

import torch
from torch.autograd import Function

from ._capi import check, lib
from ._functions import (PatternOuter, differentiable, materializes_views, matrix_view, real_dtype,
                         refuse_complex_graph, unavailable)

EIGENVECTOR_SECOND_ORDER = (
    "torch_sla eigsh: second derivatives through eigenvectors are not available (the "
    "eigenvector backward, sla_eigsh_vjp with eigenvector cotangents, is computed in libsla "
    "and is not differentiable); losses of the eigenvalues alone have second derivatives "
    "(Hessians, Hessian-vector products, gradgradcheck)")


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
    evals = values.new_empty(B, k, dtype=real_dtype(values.dtype))    # real for Hermitian A
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


def _carries(g):
    """g (contiguous), or None when it carries nothing: absent, or zero with no graph behind
    it (a differentiable backward keeps a zero cotangent that requires grad)."""
    if g is None or not (g.requires_grad or bool(g.ne(0).any())):
        return None
    return g.contiguous()


def _ptr(t):
    return t.data_ptr() if t is not None else None


def _add(a, b):
    return b if a is None else a + b


@materializes_views
class Eigsh(Function):
    """k eigenpairs of symmetric A_b (sla_eigsh). Backward: sla_eigsh_vjp —
    ∂a_s = Σ_i gλ_i v_i[r_s] v_i[c_s] − Σ_i w_i[r_s] v_i[c_s], with w_i = (A − λ_i I)⁺ g_i for
    eigenvector cotangents (projected solves in libsla); differentiable: the eigenvalue term
    as PatternOuter (module docstring), the eigenvector term through unavailable()."""

    @staticmethod
    def forward(ctx, values, pattern, k, opts, config):
        evals, evecs = eigsh_forward(pattern, values, k, opts, config)
        ctx.pattern = pattern
        ctx.save_for_backward(values, evals, evecs)
        return evals, evecs

    @staticmethod
    def _vjp(ctx, values, evals, evecs, gv, gV):
        dv = torch.empty_like(values)
        A = matrix_view(ctx.pattern, values)
        check(lib.sla_eigsh_vjp(ctypes.byref(A), evals.shape[1], evals.data_ptr(),
                                evecs.data_ptr(), _ptr(gv), _ptr(gV), dv.data_ptr()))
        return dv

    @staticmethod
    def backward(ctx, g_vals, g_vecs):
        values, evals, evecs = ctx.saved_tensors
        gv, gV = _carries(g_vals), _carries(g_vecs)
        if gv is None and gV is None:
            return torch.zeros_like(values), None, None, None, None
        if differentiable():
            refuse_complex_graph(values)
        if not differentiable():
            return Eigsh._vjp(ctx, values, evals, evecs, gv, gV), None, None, None, None
        dv = None
        if gv is not None:
            dv = PatternOuter.apply(evecs * gv.unsqueeze(1), evecs, ctx.pattern,
                                    values.shape[0])
        if gV is not None:
            with torch.no_grad():
                part = Eigsh._vjp(ctx, values, evals, evecs, None, gV)
            dv = _add(dv, unavailable(part, (values, evals, evecs, gV),
                                      EIGENVECTOR_SECOND_ORDER))
        return dv, None, None, None, None


@materializes_views
class EigshGeneralized(Function):
    """k eigenpairs of A_b v = λ M_b v (sla_eigsh with options.M; M-orthonormal eigenvectors).
    Backward: sla_eigsh_generalized_vjp — gradients for the values of A and of M (its own
    pattern): ∂λ_i/∂A = v_i v_iᵀ, ∂λ_i/∂M = −λ_i v_i v_iᵀ, eigenvector terms through
    (A − λ_i M)⁺ (projected solves in libsla); differentiable: as Eigsh."""

    @staticmethod
    def forward(ctx, values, mvalues, pattern, mpattern, k, opts, config):
        evals, evecs = eigsh_forward(pattern, values, k, opts, config, (mpattern, mvalues))
        ctx.patterns = (pattern, mpattern)
        ctx.save_for_backward(values, mvalues, evals, evecs)
        return evals, evecs

    @staticmethod
    def _vjp(ctx, values, mvalues, evals, evecs, gv, gV):
        dv, dm = torch.empty_like(values), torch.empty_like(mvalues)
        A = matrix_view(ctx.patterns[0], values)
        M = matrix_view(ctx.patterns[1], mvalues)
        check(lib.sla_eigsh_generalized_vjp(
            ctypes.byref(A), ctypes.byref(M), evals.shape[1], evals.data_ptr(),
            evecs.data_ptr(), _ptr(gv), _ptr(gV), dv.data_ptr(), dm.data_ptr()))
        return dv, dm

    @staticmethod
    def backward(ctx, g_vals, g_vecs):
        values, mvalues, evals, evecs = ctx.saved_tensors
        gv, gV = _carries(g_vals), _carries(g_vecs)
        none = (None,) * 5
        if gv is None and gV is None:
            return (torch.zeros_like(values), torch.zeros_like(mvalues)) + none
        if differentiable():
            refuse_complex_graph(values)
        if not differentiable():
            return EigshGeneralized._vjp(ctx, values, mvalues, evals, evecs, gv, gV) + none
        dv = dm = None
        B = values.shape[0]
        if gv is not None:
            U = evecs * gv.unsqueeze(1)
            dv = PatternOuter.apply(U, evecs, ctx.patterns[0], B)
            dm = -PatternOuter.apply(U * evals.unsqueeze(1), evecs, ctx.patterns[1], B)
            if mvalues.shape[0] != B:
                dm = dm.sum(0, keepdim=True)
        if gV is not None:
            with torch.no_grad():
                pa, pm = EigshGeneralized._vjp(ctx, values, mvalues, evals, evecs, None, gV)
            deps = (values, mvalues, evals, evecs, gV)
            dv = _add(dv, unavailable(pa, deps, EIGENVECTOR_SECOND_ORDER))
            dm = _add(dm, unavailable(pm, deps, EIGENVECTOR_SECOND_ORDER))
        return (dv, dm) + none
