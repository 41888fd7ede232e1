"""Exceptions and warnings of torch_sla.

Every error raised by libsla becomes an :class:`SlaError` carrying the C status and the
library's message (``sla_last_error()``). Invalid input (``SLA_EINVAL``, ``SLA_EINDEX``,
``SLA_ESHAPE``, ``SLA_EDTYPE``, ``SLA_ENONFINITE``) also derives from :class:`ValueError`;
everything else from :class:`RuntimeError`, so plain ``except ValueError`` works.
"""
from dataclasses import dataclass, field
from typing import Optional


class SlaError(Exception):
    """An error reported by libsla. ``status`` is the C status code (negative)."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class SlaValueError(SlaError, ValueError):
    """Invalid argument, index, shape, dtype or a non-finite value (the message names it)."""


class SlaRuntimeError(SlaError, RuntimeError):
    """A failure while computing (singular matrix, out of memory, backend error, ...)."""


class SingularMatrixError(SlaRuntimeError):
    """SLA_ESINGULAR: the matrix is structurally or numerically singular."""


class NotPositiveDefiniteError(SlaRuntimeError):
    """SLA_ENOTSPD: Cholesky (or CG) found the matrix not symmetric positive definite."""


class BreakdownError(SlaRuntimeError):
    """SLA_EBREAKDOWN: an iterative method broke down."""


class UnsupportedError(SlaRuntimeError):
    """SLA_EUNSUPPORTED: method or backend not available in this build."""


class ParseError(SlaRuntimeError):
    """SLA_EPARSE: a file could not be parsed (the message names the line)."""


class SlaIOError(SlaRuntimeError):
    """SLA_EIO: a file could not be opened, read or written."""


class ConvergenceError(SlaRuntimeError):
    """An iterative solve stopped before its tolerance and ``strict=True`` was asked.
    ``info`` holds the :class:`SolveInfo`."""

    def __init__(self, message, info=None):
        super().__init__(message, status=1)
        self.info = info


class ConvergenceWarning(UserWarning):
    """An iterative solve stopped before its tolerance (default behaviour: a warning; the
    solution is the last iterate). Use ``return_info=True`` to inspect, ``strict=True`` to
    raise :class:`ConvergenceError` instead."""


_BY_STATUS = {
    -1: SlaValueError,        # SLA_EINVAL
    -2: SlaRuntimeError,      # SLA_ENOMEM (MemoryError would hide the message's context)
    -3: SlaValueError,        # SLA_EINDEX
    -4: SlaValueError,        # SLA_ESHAPE
    -5: SlaValueError,        # SLA_EDTYPE
    -6: ParseError,           # SLA_EPARSE
    -7: SlaIOError,           # SLA_EIO
    -8: SlaValueError,        # SLA_ENONFINITE
    -9: SingularMatrixError,  # SLA_ESINGULAR
    -10: NotPositiveDefiniteError,
    -11: BreakdownError,
    -12: UnsupportedError,
}


def error_for_status(status, message):
    """The exception instance for a negative sla_status."""
    return _BY_STATUS.get(status, SlaRuntimeError)(message, status)


@dataclass
class SolveInfo:
    """What a solve did (``return_info=True``). For batches and several right-hand sides the
    worst case over them.

    method: the method actually used (``'auto'`` is resolved); converged; iterations (0 for
    direct methods); residual: the true ‖b − A x‖₂ (max over systems); relative_residual:
    ‖b − A x‖₂/‖b‖₂; reason: why it stopped ('converged', 'max iterations', ...);
    description: libsla's one-line account (method, backend, ordering, why); preconditioner;
    rcond: reciprocal condition estimate (NaN if unknown); normal_residual: ‖Aᵀ(b − A x)‖₂ of a
    least-squares (LSQR) solve, the optimality measure when b is not in the range of A (NaN for
    the other methods); adjoint: the info of the backward
    (transposed) solve once backward has run, else None.
    """
    method: str
    converged: bool
    iterations: int
    residual: float
    reason: str
    description: str
    relative_residual: float = float("nan")
    preconditioner: str = "none"
    rcond: float = float("nan")
    normal_residual: float = float("nan")
    adjoint: Optional["SolveInfo"] = field(default=None, repr=False)


@dataclass
class EigshInfo:
    """What an eigsh did (``return_info=True``): method used ('lobpcg', 'lanczos', 'arpack',
    'dense'), converged (number of converged wanted pairs, min over the batch), k, iterations,
    max_residual (max ‖A v − λ v‖₂/‖A‖₁), sigma (shift of the factorized A − σI, NaN if none),
    factorizations, description (libsla's one line)."""
    method: str
    converged: int
    k: int
    iterations: int
    max_residual: float
    sigma: float
    factorizations: int
    description: str
