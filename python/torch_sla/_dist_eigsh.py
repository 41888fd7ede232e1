"""DSparseTensor.eigsh's autograd function: libsla_mpi's LOBPCG (sla_dist_eigsh), standard or
generalized (A v = λ M v, M a DSparseTensor on A's row partition), with the VJP of
sla_dist_eigsh_vjp for eigenvalues and eigenvectors. Every rank calls the same C functions in
the same order; the VJP's errors (a tie whose eigenvectors the loss depends on) are agreed in
C, so every rank raises the same exception."""
import ctypes
import warnings

import torch
from torch.autograd import Function

from ._capi import SLA_NOT_CONVERGED, EigshInfoC, check
from ._dist_functions import _only, dist_view
from ._mpi_capi import DistEigshOptionsC, mlib
from .errors import ConvergenceWarning


def _buf(t):
    """t, or a 1-element stand-in for an empty tensor (a rank without rows)."""
    return t if t.numel() else t.new_zeros(1)


class DistEigsh(Function):
    """(Λ [B, k], V [B, n_local, k]) = the k smallest (which SA) or largest (LA) eigenpairs of
    every matrix of the batch (of the pencil (A_b, M_b) when mvalues is given: M-normalized
    V). Backward: sla_dist_eigsh_vjp — Hellmann–Feynman for Λ; for V the projected solves
    with A − λ_i M on the complement of the block (MINRES, distributed). `need`: (A's, M's)
    values gradient wanted on some rank (agreed)."""

    @staticmethod
    def forward(ctx, values, mvalues, pattern, mpattern, comm, k, which, tol, maxiter, need,
                sigma=None):
        values = values.contiguous()
        B = values.shape[0]
        lam = values.new_empty(B, k)
        V = values.new_empty(B, pattern.m_local, k)
        opt = DistEigshOptionsC()
        mlib.sla_dist_eigsh_options_init(ctypes.byref(opt))
        opt.which = which
        opt.tol = float(tol)
        if maxiter is not None:
            opt.maxiter = int(maxiter)
        if sigma is not None:               # shift-invert: the k eigenvalues nearest sigma
            opt.sigma = float(sigma)
        A = dist_view(pattern, values)
        Mv = None
        if mvalues is not None:
            mvalues = mvalues.contiguous()
            Mv = dist_view(mpattern, mvalues)
            opt.M = ctypes.cast(ctypes.pointer(Mv), ctypes.c_void_p)
        info = EigshInfoC()
        st = check(mlib.sla_dist_eigsh(ctypes.byref(A), k, ctypes.byref(opt), lam.data_ptr(),
                                       _buf(V).data_ptr(), ctypes.byref(info)))
        if st == SLA_NOT_CONVERGED:         # agreed: every rank warns alike
            warnings.warn(f"DSparseTensor.eigsh did not converge: {info.converged} of {k} pairs, "
                          f"max residual {info.max_residual:.3e} after {info.iterations} "
                          f"iterations", ConvergenceWarning, stacklevel=3)
        ctx.pattern, ctx.mpattern, ctx.comm, ctx.k, ctx.need = pattern, mpattern, comm, k, need
        ctx.has_M = mvalues is not None
        ctx.save_for_backward(values, mvalues if ctx.has_M else values.new_zeros(0), lam, V)
        return lam, V

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, glam, gV):
        values, mvalues, lam, V = ctx.saved_tensors
        from mpi4py import MPI
        if not any(ctx.need):
            return (None,) * 11
        # "g_eigenvectors given" must be the same on every rank (a rank without rows, or whose
        # eigenvector rows the loss does not touch, passes zeros)
        on_vectors = ctx.comm.allreduce(int(gV is not None), op=MPI.MAX)
        glam = (glam if glam is not None else torch.zeros_like(lam)).contiguous()
        gv = None
        if on_vectors:
            gv = (gV if gV is not None else torch.zeros_like(V)).contiguous()
        dv = torch.empty_like(values)
        A = dist_view(ctx.pattern, values)
        Mp, dm = None, None
        if ctx.has_M:
            Mv = dist_view(ctx.mpattern, mvalues)
            Mp = ctypes.byref(Mv)
            dm = torch.empty_like(mvalues)
        st = check(mlib.sla_dist_eigsh_vjp(ctypes.byref(A), Mp, ctx.k, lam.data_ptr(),
                                           _buf(V).data_ptr(), glam.data_ptr(),
                                           _buf(gv).data_ptr() if gv is not None else None,
                                           _buf(dv).data_ptr(),
                                           _buf(dm).data_ptr() if dm is not None else None))
        if st == SLA_NOT_CONVERGED:
            warnings.warn("DSparseTensor.eigsh backward: a projected solve for an eigenvector "
                          "gradient did not converge (the gradient is that of its best "
                          "iterate)", ConvergenceWarning, stacklevel=2)
        return (_only(dv, ctx, 0), _only(dm, ctx, 1) if dm is not None else None,
                None, None, None, None, None, None, None, None, None)


__all__ = ["DistEigsh"]
