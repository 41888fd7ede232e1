"""LUFactorization: a pinned libsla factorization for repeated solves (torch-sla's A.lu())."""
import torch

from . import _functions as F
from ._capi import SLA_OP_N, SLA_OP_T
from ._solver import Options, Solver


@F.materializes_views
class _FactorSolve(torch.autograd.Function):
    """x = A⁻¹ b on a held factorization; backward: ∂b = A⁻ᵀ g on the same factors (the
    matrix values are fixed at factorization time: no gradient for them)."""

    @staticmethod
    def forward(ctx, b3, lu):
        ctx.lu = lu
        return lu._apply(SLA_OP_N, b3)

    @staticmethod
    def backward(ctx, g):
        return ctx.lu._apply(SLA_OP_T, g.contiguous()), None


class LUFactorization:
    """A direct factorization of one square matrix, kept for repeated solves
    (``lu = A.lu(); x = lu.solve(b)``). The factorization is libsla's choice among its
    direct methods (``method``: CHOLMOD Cholesky for SPD matrices, else MUMPS LDLᵀ or
    UMFPACK LU; ``method='lu'`` asks for UMFPACK LU). ``solve(b)`` takes b [N] or [N, K] and
    is differentiable with respect to b (not the values, fixed when factorized). The object
    holds its own solver: the solver cache never refactors it for another matrix."""

    def __init__(self, A, method="auto"):
        from .sparse_tensor import SparseTensor
        if not isinstance(A, SparseTensor):
            raise TypeError(f"LUFactorization needs a SparseTensor, got {type(A).__name__}")
        if A.is_batched:
            raise ValueError(f"lu(): A is a batch {tuple(A.shape)}; factorize one matrix "
                             f"(A[i]) or use solve_batch")
        if not A.is_square:
            raise ValueError(f"lu(): A has shape {tuple(A.shape)}; a factorization needs a "
                             f"square matrix")
        opts = Options(method, need_determinant=True)
        vals = A._csr().detach().contiguous()
        self._solver = Solver(A.pattern, vals, F.DTYPE_CODE[vals.dtype], 1, opts)
        self._shape = tuple(A.sparse_shape)
        self._dtype = A.dtype
        self.method = self._solver.method

    @property
    def shape(self):
        return self._shape

    @property
    def description(self):
        return self._solver.description

    def _apply(self, op, b3):
        x = torch.empty_like(b3)
        self._solver.solve(op, b3.shape[-1], b3, x)
        return x

    def solve(self, b):
        if not isinstance(b, torch.Tensor):
            raise TypeError(f"b must be a torch.Tensor, got {type(b).__name__}")
        if b.dtype != self._dtype:
            raise TypeError(f"b has dtype {b.dtype} but the factorization has {self._dtype}")
        n = self._shape[0]
        if b.dim() not in (1, 2) or b.shape[0] != n:
            raise ValueError(f"lu.solve: b must have shape ({n},) or ({n}, K), got "
                             f"{tuple(b.shape)}")
        b3 = b.reshape(1, n, -1).contiguous()
        return _FactorSolve.apply(b3, self).reshape(b.shape)

    def __repr__(self):
        return f"LUFactorization(shape={self._shape}, method={self.method})"
