"""The distributed log-determinant as an autograd Function (DSparseTensor.slogdet/logdet/det).

Forward: libsla_mpi's distributed LU (SuperLU_DIST, sla_dist_lu_create + sla_dist_lu_logdet).
Backward: sla_dist_lu_logdet_grad, ∂ log|det A| / ∂a_s = (A⁻¹)[c_s, r_s] on this rank's slots,
times this rank's incoming gradient. libsla_mpi computes it by gathering A to rank 0 and running
the serial sparse inverse subset there (exact; rank 0's memory bounds the size: see
include/sla/mpi.h). Collective both ways, like every Function of _dist_functions.
"""
import ctypes

import torch
from torch.autograd import Function

from ._capi import check
from ._mpi_capi import mlib


class DistSlogdet(Function):
    """(sign [B], log|det A_b| [B]) of values [B, nnz_local]; the same on every rank. `need`:
    the values gradient is wanted on some rank (agreed), so the factorization is kept for the
    backward (freed with the graph, as DistSolve's). sign is not differentiable."""

    @staticmethod
    def forward(ctx, values, pattern, need):
        from ._dist_functions import DistSolverObject
        vals = values.detach().contiguous()
        solver = DistSolverObject(pattern, vals, None, "lu")
        B = vals.shape[0]
        sign = torch.empty(B, dtype=torch.float64)
        logabs = torch.empty(B, dtype=torch.float64)
        try:
            check(mlib.sla_dist_lu_logdet(solver.ptr, sign.data_ptr(), logabs.data_ptr()))
        except Exception:
            solver.free()
            raise
        if need:
            ctx.solver = solver
        else:
            solver.free()
        sign = sign.to(values.dtype)
        ctx.mark_non_differentiable(sign)
        return sign, logabs.to(values.dtype)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, g_sign, g_lad):
        solver = getattr(ctx, "solver", None)
        if solver is None:
            return None, None, None
        B = solver.values.shape[0]
        g = (g_lad if g_lad is not None else torch.zeros(B)).to(torch.float64).contiguous()
        dv = torch.empty_like(solver.values)
        buf = dv if dv.numel() else dv.new_zeros(1)
        check(mlib.sla_dist_lu_logdet_grad(solver.ptr, g.data_ptr(), buf.data_ptr()))
        return (dv if ctx.needs_input_grad[0] else None), None, None


__all__ = ["DistSlogdet"]
