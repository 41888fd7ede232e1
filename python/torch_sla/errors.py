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


@dataclass(init=False)
class SolveInfo:
    """What a solve did (``return_info=True``). For batches and several right-hand sides the
    worst case over them.

    method: the method actually used (``'auto'`` is resolved); converged; iterations (0 for
    direct methods); residual: the true ‖b − A x‖₂ (max over systems); relative_residual:
    ‖b − A x‖₂/‖b‖₂; reason: why it stopped ('converged', 'max iterations', ...);
    description: libsla's one-line account (method, backend, ordering, why; and, when a
    torch-sla backend or method name was translated, what it became); preconditioner;
    rcond: reciprocal condition estimate (NaN if unknown); normal_residual: ‖Aᵀ(b − A x)‖₂ of a
    least-squares (LSQR) solve, the optimality measure when b is not in the range of A (NaN for
    the other methods); backend: the libsla backend that ran (cholmod, mumps, umfpack, klu,
    krylov); adjoint: the info of the backward (transposed) solve once backward has run, else
    None.

    torch-sla's fields are accepted too: ``iter_count`` is ``iterations`` (a keyword of the
    constructor and an attribute), ``backend`` is a field; every field has a default, so
    ``SolveInfo()`` and ``SolveInfo(iter_count=3, residual=1e-9, converged=True, method='cg',
    backend='krylov')`` work as in torch-sla.
    """
    method: str = ""
    converged: bool = True
    iterations: int = 0
    residual: float = float("nan")
    reason: str = ""
    description: str = ""
    relative_residual: float = float("nan")
    preconditioner: str = "none"
    rcond: float = float("nan")
    normal_residual: float = float("nan")
    backend: str = ""
    adjoint: Optional["SolveInfo"] = field(default=None, repr=False)

    def __init__(self, method="", converged=True, iterations=0, residual=float("nan"),
                 reason="", description="", relative_residual=float("nan"),
                 preconditioner="none", rcond=float("nan"), normal_residual=float("nan"),
                 backend="", adjoint=None, *, iter_count=None):
        if iter_count is not None:
            iterations = iter_count
        self.method, self.converged, self.iterations = method, converged, iterations
        self.residual, self.reason, self.description = residual, reason, description
        self.relative_residual, self.preconditioner = relative_residual, preconditioner
        self.rcond, self.normal_residual = rcond, normal_residual
        self.backend, self.adjoint = backend, adjoint

    @property
    def iter_count(self):
        """torch-sla's name of ``iterations``."""
        return self.iterations

    @iter_count.setter
    def iter_count(self, n):
        self.iterations = n


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
