"""torch_sla: differentiable sparse linear algebra for PyTorch, on libsla (C, OpenMP).

    >>> import torch, torch_sla
    >>> A = torch_sla.SparseTensor(values, row, col, (n, n))
    >>> x = A.solve(b)            # direct or iterative, differentiable in values and b
    >>> y = A @ x                 # SpMV, differentiable
    >>> A.logdet(), A.det()       # from the factorization, differentiable

The API follows the public torch-sla library (SparseTensor, SparseTensorList, spsolve,
load_mtx/save_mtx). All numerics run in libsla; this package checks arguments, passes tensor
pointers (ctypes) and registers one autograd Function per operation. See docs/python.md.
"""
from ._capi import lib as _lib
from ._pattern import clear_pattern_cache
from ._solver import clear_solver_cache, set_solver_cache_size, solver_cache_info
from .backends import (BackendInfo, backends, get_available_backends, method_available,
                       show_backends)
from .errors import (BreakdownError, ConvergenceError, ConvergenceWarning,
                     EigshInfo, NotPositiveDefiniteError, ParseError, SingularMatrixError,
                     SlaError, SlaIOError, SlaRuntimeError, SlaValueError, SolveInfo,
                     UnsupportedError)
from .io import load_mtx, save_mtx
from .nonlinear import NonlinearInfo, jacobian_sparsity, nonlinear_solve
from .sparse_tensor import SparseTensor, spsolve
from .sparse_tensor_list import SparseTensorList

__version__ = _lib.sla_version().decode()
library_path = _lib.path

__all__ = [
    "SparseTensor", "SparseTensorList", "spsolve", "load_mtx", "save_mtx",
    "show_backends", "backends", "get_available_backends", "method_available", "BackendInfo",
    "SolveInfo", "EigshInfo", "ConvergenceWarning", "ConvergenceError", "SlaError",
    "SlaValueError", "SlaRuntimeError", "SingularMatrixError", "NotPositiveDefiniteError",
    "BreakdownError", "UnsupportedError", "ParseError", "SlaIOError", "clear_pattern_cache",
    "clear_solver_cache", "set_solver_cache_size", "solver_cache_info", "library_path",
    "nonlinear_solve", "NonlinearInfo", "jacobian_sparsity",
]
