"""torch-sla's solve entry points on libsla: ``SparseTensor.solve``'s argument handling,
``spsolve`` / ``spsolve_coo`` / ``spsolve_csr``, the top-level ``solve(A, b)`` with
``SolverConfig`` scopes and ``PreconditionerConfig``.

Names of backends and methods are translated by :mod:`._vocab`; the numerics are libsla's
(one ``SparseTensor._solve_libsla`` per call). See docs/migrating.md.
"""
import dataclasses
import functools
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple, Union

import torch

from . import _vocab
from ._args import as_real
from ._capi import METHODS

# libsla backend that serves each method (for SolveInfo.backend)
_METHOD_BACKEND = {"cholesky": "cholmod", "ldlt": "mumps", "lu": "umfpack", "klu": "klu"}


def _is_method_name(name):
    return isinstance(name, str) and (name.lower() in METHODS or
                                      name.lower() in _vocab.METHOD_MAP)


def _is_backend_name(name):
    return isinstance(name, str) and (name.lower() in _vocab.TORCH_SLA_BACKENDS or
                                      name.lower() == "auto")


def _properties(A):
    """Lazy symmetric / Gershgorin tests (asked only when a choice depends on them)."""
    return (lambda: bool(A.is_symmetric().all()),
            lambda: bool(A._gershgorin_pd().all()))


def solve_sparse(A, b, *, backend="auto", method="auto", atol=None, maxiter=None, tol=None,
                 verbose=False, rtol=None, preconditioner=None, restart=None, ordering=None,
                 return_info=False, strict=False, is_symmetric=None, is_spd=None,
                 matrix_type=None, mixed_precision=False, x0=None):
    """SparseTensor.solve: translate names, solve on libsla, report."""
    if x0 is not None:
        raise NotImplementedError("x0: torch_sla's solves start from x = 0 (an initial guess "
                                  "is not passed to libsla yet); drop x0")
    # the pre-torch-sla positional order solve(b, method[, backend]) still works
    if _is_method_name(backend) and not _is_backend_name(backend) and \
            (method in (None, "auto") or _is_backend_name(method)):
        backend, method = (method or "auto"), backend
    if tol is not None:
        if rtol is not None:
            raise ValueError("give rtol or tol, not both")
        rtol = as_real(tol, "tol", minimum=0)
    if isinstance(preconditioner, PreconditionerConfig):
        preconditioner = preconditioner.kind
    sym, dd = _properties(A)
    t = _vocab.translate(backend, method, symmetric=sym if is_symmetric is None else
                         is_symmetric, spd=is_spd, diag_dominant=dd, matrix_type=matrix_type,
                         preconditioner=preconditioner, complex_values=A.dtype.is_complex)
    want = return_info or verbose
    out = A._solve_libsla(b, method=t.method, backend=t.backend, rtol=rtol, atol=atol,
                          maxiter=maxiter, preconditioner=t.preconditioner, restart=restart,
                          ordering=ordering, return_info=want, strict=strict,
                          direct_only=t.direct_only and A.is_square)
    if not want:
        return out
    x, info = out
    _annotate(info, t, mixed_precision)
    if verbose:
        M, N = A.sparse_shape
        print(f"[torch_sla] solve: {M}×{N}, nnz={A.nnz}, batch={A.batch_size if A.is_batched else 1}, "
              f"dtype={str(A.dtype).replace('torch.', '')}, method={info.method}, "
              f"backend={info.backend}, iterations={info.iterations}, "
              f"residual={info.residual:.3e}; {info.description}")
    return (x, info) if return_info else x


def _annotate(info, t, mixed_precision):
    info.backend = _METHOD_BACKEND.get(info.method, "krylov" if info.method else "")
    notes = [n for n in (t.note, "mixed_precision ignored: libsla iterates in the matrix "
                         "dtype" if mixed_precision else "") if n]
    if notes:
        info.description = (info.description + "; " if info.description else "") + \
            "; ".join(notes)


# ---------------------------------------------------------------------------------------------
# spsolve family
# ---------------------------------------------------------------------------------------------
def spsolve(val, row, col, shape, b, backend="auto", method="auto", atol=None, maxiter=None,
            tol=None, matrix_type=None, is_symmetric=None, is_spd=None, preconditioner=None,
            mixed_precision=False, verbose=False, **kwargs):
    """Solves A x = b for A = SparseTensor(val, row, col, shape), torch-sla's positional
    order (val, row, col, shape, b, backend, method, atol, maxiter, tol, matrix_type,
    is_symmetric, is_spd, preconditioner, mixed_precision, verbose); further keywords as
    SparseTensor.solve (rtol, return_info, strict, ...). torch-sla's default
    matrix_type='general' and preconditioner='jacobi' are accepted as given (they do not
    force LU or Jacobi)."""
    if getattr(val, "is_cuda", False) or getattr(b, "is_cuda", False):
        # CUDA tensors: libsla's CUDA backend, no host copy of val and b (torch_sla/_cuda.py)
        from ._cuda import spsolve as cuda_spsolve
        return cuda_spsolve(val, row, col, shape, b, method=method, atol=atol, maxiter=maxiter,
                            preconditioner=preconditioner, rtol=kwargs.get("rtol", tol),
                            is_spd=is_spd)
    from .sparse_tensor import SparseTensor
    if matrix_type == "general":
        matrix_type = None
    A = SparseTensor(val, row, col, shape)
    return A.solve(b, backend, method, atol, maxiter, tol, verbose, matrix_type=matrix_type,
                   is_symmetric=is_symmetric, is_spd=is_spd, preconditioner=preconditioner,
                   mixed_precision=mixed_precision, **kwargs)


def spsolve_coo(A, b, **kwargs):
    """spsolve for a torch sparse COO tensor A (values stay differentiable)."""
    if not isinstance(A, torch.Tensor) or A.layout != torch.sparse_coo:
        raise TypeError(f"spsolve_coo needs a torch sparse COO tensor, got "
                        f"{getattr(A, 'layout', type(A).__name__)}")
    from .sparse_tensor import SparseTensor
    S = SparseTensor.from_torch_sparse(A)
    return spsolve(S.values, S.row_indices, S.col_indices, S.shape, b, **kwargs)


def spsolve_csr(A, b, **kwargs):
    """spsolve for a torch sparse CSR tensor A."""
    if not isinstance(A, torch.Tensor) or A.layout != torch.sparse_csr:
        raise TypeError(f"spsolve_csr needs a torch sparse CSR tensor, got "
                        f"{getattr(A, 'layout', type(A).__name__)}")
    from .sparse_tensor import SparseTensor
    S = SparseTensor.from_torch_sparse(A)
    return spsolve(S.values, S.row_indices, S.col_indices, S.shape, b, **kwargs)


# ---------------------------------------------------------------------------------------------
# PreconditionerConfig, SolverConfig, top-level solve()
# ---------------------------------------------------------------------------------------------
_UNSET = object()


@dataclass(frozen=True)
class PreconditionerConfig:
    """torch-sla's preconditioner description. kind: 'none', 'jacobi', 'ssor', 'ic0',
    'ilu0', 'block_jacobi', 'amg'. libsla has jacobi, ic0, ilu0 and amg (its own smoothed
    aggregation); 'ssor' and 'block_jacobi' run as 'jacobi' (info.description says so).
    The numeric fields (omega, block_size, amg_*) are accepted; libsla's AMG uses its own
    settings (docs/amg.md)."""
    kind: str = "jacobi"
    omega: float = 1.0
    block_size: int = 32
    amg_strength: float = 0.25
    amg_smoother: str = "gauss_seidel"
    amg_coarsening: str = "classical"

    @classmethod
    def from_string(cls, kind: str) -> "PreconditionerConfig":
        return cls(kind=kind)


class _Scopes(threading.local):
    def __init__(self):
        self.stack = []


_SCOPES = _Scopes()


def _active_defaults():
    merged = {}
    for layer in _SCOPES.stack:
        merged.update(layer)
    return merged


@dataclass(frozen=True)
class SolverConfig:
    """Default keywords of :func:`solve` within a scope: a context manager
    (``with SolverConfig(method='cg'): ...``) or a decorator (``@SolverConfig(...)``).
    Fields left None do nothing; explicit keywords of solve() win over the innermost scope,
    which wins over outer ones (torch-sla's precedence). Presets: ``SolverConfig.spd()``,
    ``.general()``, ``.indefinite()``, ``.convection_diffusion()``, ``.auto(A)``, chained with
    ``.cpu()`` / ``.gpu()`` / ``.direct()`` / ``.iterative()`` / ``.high_accuracy()`` /
    ``.replace(...)``; their backend names run on libsla (``.gpu()`` presets name CUDA
    backends, which raise here only if the tensors are on a GPU: libsla runs on the CPU)."""
    method: Optional[str] = None
    backend: Optional[str] = None
    preconditioner: Any = _UNSET
    atol: Optional[float] = None
    rtol: Optional[float] = None
    maxiter: Optional[int] = None
    restart: Optional[int] = None
    x0: Any = None
    matrix_type: Optional[str] = None
    mixed_precision: Optional[bool] = None
    return_info: Optional[bool] = None
    verbose: Optional[bool] = None
    _kind: Optional[str] = dataclasses.field(default=None, compare=False, repr=False)
    _device: Optional[str] = dataclasses.field(default=None, compare=False, repr=False)
    _direct: Optional[bool] = dataclasses.field(default=None, compare=False, repr=False)

    def _kwargs(self):
        out = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            v = getattr(self, f.name)
            if (v is not _UNSET) if f.name == "preconditioner" else (v is not None):
                out[f.name] = v
        return out

    def __enter__(self):
        _SCOPES.stack.append(self._kwargs())
        return self

    def __exit__(self, exc_type, exc, tb):
        _SCOPES.stack.pop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args, **kw):
            with self:
                return fn(*args, **kw)
        return wrapped

    # --- presets (torch-sla's table, in their vocabulary; all run on libsla) ---------------
    @classmethod
    def spd(cls):
        return _preset("spd", "cpu", False)

    @classmethod
    def general(cls):
        return _preset("general", "cpu", False)

    @classmethod
    def indefinite(cls):
        return _preset("indefinite", "cpu", False)

    @classmethod
    def convection_diffusion(cls):
        return _preset("convection_diffusion", "cpu", False)

    @classmethod
    def auto(cls, A, *, device=None, size_hint=None):
        """A preset from A's detected type (detect_matrix_type): 'spd' → direct Cholesky,
        'symmetric' → MINRES, 'general' → direct LU. (libsla's own method='auto' decides
        from the symbolic analysis; this preset is for torch-sla code that asks for one.)"""
        kind = {"spd": "spd", "symmetric": "indefinite"}.get(A.detect_matrix_type(), "general")
        return _preset(kind, "cpu", kind != "indefinite")

    def _chain(self, device=None, direct=None):
        kind = self._kind
        dev = device or self._device or "cpu"
        dr = self._direct if direct is None else direct
        if kind is None:
            return dataclasses.replace(self, _device=dev, _direct=dr)
        return _preset(kind, dev, bool(dr))

    def gpu(self):
        return self._chain(device="cuda")

    def cpu(self):
        return self._chain(device="cpu")

    def direct(self):
        return self._chain(direct=True)

    def iterative(self):
        return self._chain(direct=False)

    def high_accuracy(self, *, atol=1e-12, rtol=1e-10, maxiter=5000):
        return dataclasses.replace(self, atol=atol, rtol=rtol, maxiter=maxiter)

    def replace(self, **kwargs):
        return dataclasses.replace(self, **kwargs)


# (kind, device, direct) -> SolverConfig fields: torch-sla's preset table
_PRESETS = {
    ("spd", "cpu", True): dict(backend="scipy", method="cholesky"),
    ("spd", "cpu", False): dict(backend="pyamg", method="amg", atol=1e-9, maxiter=500),
    ("spd", "cuda", True): dict(backend="cudss", method="cholesky"),
    ("spd", "cuda", False): dict(backend="amgx", method="pcg", preconditioner="amg",
                                 atol=1e-9, maxiter=500),
    ("general", "cpu", True): dict(backend="scipy", method="lu"),
    ("general", "cpu", False): dict(backend="scipy", method="bicgstab",
                                    preconditioner="jacobi", atol=1e-8, maxiter=500),
    ("general", "cuda", True): dict(backend="cudss", method="lu"),
    ("general", "cuda", False): dict(backend="amgx", method="pbicgstab",
                                     preconditioner="multicolor_dilu", atol=1e-8, maxiter=500),
    ("indefinite", "cpu", True): dict(backend="scipy", method="lu"),
    ("indefinite", "cpu", False): dict(backend="scipy", method="minres", atol=1e-8,
                                       maxiter=500),
    ("indefinite", "cuda", True): dict(backend="cudss", method="ldlt"),
    ("indefinite", "cuda", False): dict(backend="amgx", method="pbicgstab",
                                        preconditioner="block_jacobi", atol=1e-8, maxiter=500),
    ("convection_diffusion", "cpu", False): dict(backend="scipy", method="gmres",
                                                 preconditioner="jacobi", atol=1e-8,
                                                 maxiter=500),
    ("convection_diffusion", "cuda", False): dict(backend="amgx", method="fgmres",
                                                  preconditioner="multicolor_dilu", atol=1e-8,
                                                  maxiter=500),
}


def _preset(kind, device, direct):
    if kind == "convection_diffusion" and direct:
        kind = "general"
    fields = _PRESETS[(kind, device, direct)]
    return SolverConfig(**fields, _kind=kind, _device=device, _direct=direct)


MatrixLike = Union["SparseTensor", Tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                         Tuple[int, int]], Any]


def _as_sparse_tensor(A, shape, dtype):
    """A SparseTensor from any matrix form solve() accepts."""
    from .sparse_tensor import SparseTensor
    if isinstance(A, SparseTensor):
        return A
    if isinstance(A, tuple) and len(A) == 4:
        return SparseTensor(*A)
    if callable(getattr(A, "tocoo", None)) and hasattr(A, "shape"):
        return SparseTensor.from_scipy(A, dtype=dtype)
    if isinstance(A, torch.Tensor):
        if A.layout in (torch.sparse_coo, torch.sparse_csr):
            return SparseTensor.from_torch_sparse(A)
        return SparseTensor.from_dense(A)
    if callable(A):
        # matrix-free: probed column by column (n products), as torch-sla does; the
        # operator itself is not differentiated through
        if shape is None:
            raise ValueError("a matrix-free callable needs shape=(m, n)")
        m, n = shape
        with torch.no_grad():
            cols = [A(torch.eye(n, dtype=dtype)[:, j]) for j in range(n)]
        return SparseTensor.from_dense(torch.stack(cols, dim=1).reshape(m, n))
    raise TypeError(f"solve: A must be a SparseTensor, a (val, row, col, shape) tuple, a "
                    f"scipy.sparse matrix, a torch tensor or a callable, got "
                    f"{type(A).__name__}")


def solve(A, b, *, shape=None, method=_UNSET, backend=_UNSET, preconditioner=_UNSET,
          atol=_UNSET, rtol=_UNSET, maxiter=_UNSET, x0=_UNSET, matrix_type=_UNSET,
          mixed_precision=_UNSET, return_info=_UNSET, verbose=_UNSET, restart=_UNSET,
          strict=False):
    """Solves A x = b for A in any form (a SparseTensor, a (val, row, col, shape) tuple, a
    scipy.sparse matrix, a dense or torch sparse tensor, or a callable x ↦ A x with shape=),
    differentiable as SparseTensor.solve. Unset keywords come from the innermost active
    SolverConfig scope, then from the defaults (method 'auto', backend 'auto', libsla's
    tolerances). return_info=True returns (x, SolveInfo)."""
    given = dict(method=method, backend=backend, preconditioner=preconditioner, atol=atol,
                 rtol=rtol, maxiter=maxiter, x0=x0, matrix_type=matrix_type,
                 mixed_precision=mixed_precision, return_info=return_info, verbose=verbose,
                 restart=restart)
    scope = _active_defaults()
    kw = {k: (v if v is not _UNSET else scope.get(k)) for k, v in given.items()}
    if not isinstance(b, torch.Tensor):
        raise TypeError(f"b must be a torch.Tensor, got {type(b).__name__}")
    S = _as_sparse_tensor(A, shape, b.dtype)
    if kw["matrix_type"] in ("general", "auto"):
        kw["matrix_type"] = None
    return S.solve(b, kw["backend"] or "auto", kw["method"] or "auto", kw["atol"],
                   kw["maxiter"], None, bool(kw["verbose"]), rtol=kw["rtol"],
                   preconditioner=kw["preconditioner"], restart=kw["restart"],
                   return_info=bool(kw["return_info"]), strict=strict,
                   matrix_type=kw["matrix_type"], mixed_precision=bool(kw["mixed_precision"]),
                   x0=kw["x0"])
