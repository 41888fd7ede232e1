"""torch_sla: differentiable sparse linear algebra for PyTorch, on libsla (C, OpenMP).

    >>> import torch, torch_sla
    >>> A = torch_sla.SparseTensor(values, row, col, (n, n))
    >>> x = A.solve(b)            # direct or iterative, differentiable in values and b
    >>> y = A @ x                 # SpMV, differentiable
    >>> A.logdet(), A.det()       # from the factorization, differentiable

The API follows the public torch-sla library (SparseTensor, SparseTensorList, spsolve,
solve/SolverConfig, load_mtx/save_mtx, save_sparse/load_sparse, datasets): torch-sla programs
run unchanged, their backend and method names translated onto libsla (docs/migrating.md).
All numerics run in libsla; this package checks arguments, passes tensor pointers (ctypes)
and registers one autograd Function per operation. See docs/python.md.
"""
import types as _types

from ._capi import lib as _lib
from . import backends as _backends_module
from ._batch import (ParallelBatchSolver, spsolve_batch_coo_different_layout,
                     spsolve_batch_coo_same_layout, spsolve_batch_different_layout,
                     spsolve_batch_same_layout)
from ._cache_api import SOLVER_CACHE
from ._lu import LUFactorization
from ._pattern import clear_pattern_cache
from ._slq import DetConfig
from ._solve_api import (MatrixLike, PreconditionerConfig, SolverConfig, solve, spsolve,
                         spsolve_coo, spsolve_csr)
from ._solver import clear_solver_cache, set_solver_cache_size, solver_cache_info
from ._vocab import (BACKEND_METHODS, DEFAULT_METHODS, BackendType, MethodType,
                     auto_select_method, estimate_direct_solver_memory,
                     get_available_gpu_memory, get_backend_methods, get_default_method,
                     is_cudss_available, is_cupy_available, is_pytorch_available,
                     is_scipy_available, select_backend, select_method)
from .backends import (BackendInfo, get_available_backends, method_available,
                       show_backends)
from .errors import (BreakdownError, ConvergenceError, ConvergenceWarning,
                     EigshInfo, NotPositiveDefiniteError, ParseError, SingularMatrixError,
                     SlaError, SlaIOError, SlaRuntimeError, SlaValueError, SolveInfo,
                     UnsupportedError)
from .io import load_metadata, load_mtx, load_mtx_info, load_sparse, save_mtx, save_sparse
from .nonlinear import NonlinearInfo, adjoint_solve, jacobian_sparsity, nonlinear_solve
from .sparse_tensor import SparseTensor
from .sparse_tensor_list import SparseTensorList


class _CallableModule(_types.ModuleType):
    """torch_sla.backends is a module (``import torch_sla.backends``, torch-sla's
    ``torch_sla.backends.is_strumpack_available``) that can still be called as the function
    ``torch_sla.backends()`` listing libsla's backends."""

    def __call__(self, *args, **kwargs):
        return self.backends(*args, **kwargs)


_backends_module.__class__ = _CallableModule

_DISTRIBUTED = ("DSparseTensor", "DSparseTensorList", "Partition", "partition_simple",
                "partition_graph_metis", "partition_coordinates")


def __getattr__(name):
    """torch_sla.DSparseTensor and friends load torch_sla.distributed (mpi4py, libsla_mpi)
    on first use, so that importing torch_sla never needs MPI."""
    if name in _DISTRIBUTED:
        from . import distributed
        return getattr(distributed, name)
    raise AttributeError(f"module 'torch_sla' has no attribute {name!r}")
backends = _backends_module

__version__ = _lib.sla_version().decode()


def set_num_threads(n):
    """Sets the threads of libsla's parallel regions (solves, SpMV, AMG set-up), process-wide;
    ``n = 0`` returns to the default. torch's own count (``torch.set_num_threads``) is neither
    read nor changed. Default, first rule that applies: ``$SLA_NUM_THREADS``,
    ``$OMP_NUM_THREADS``, the CPUs in the process's affinity mask (``os.sched_getaffinity``).
    Results are bit-identical run to run for a given count. Raises SlaValueError for n < 0."""
    from ._capi import check
    check(_lib.sla_set_num_threads(int(n)))


def get_num_threads():
    """The thread count libsla's parallel regions use now (see :func:`set_num_threads`)."""
    return int(_lib.sla_get_num_threads())
library_path = _lib.path

__all__ = [
    "SparseTensor", "SparseTensorList", "spsolve", "spsolve_coo", "spsolve_csr", "solve",
    "SolverConfig", "PreconditionerConfig", "DetConfig", "MatrixLike", "LUFactorization",
    "spsolve_batch_same_layout", "spsolve_batch_different_layout",
    "spsolve_batch_coo_same_layout", "spsolve_batch_coo_different_layout",
    "ParallelBatchSolver", "SOLVER_CACHE", "load_mtx", "save_mtx", "load_mtx_info",
    "save_sparse", "load_sparse", "load_metadata",
    "show_backends", "backends", "get_available_backends", "method_available", "BackendInfo",
    "get_backend_methods", "get_default_method", "select_backend", "select_method",
    "is_scipy_available", "is_cudss_available", "is_cupy_available", "is_pytorch_available", "BACKEND_METHODS", "DEFAULT_METHODS",
    "BackendType", "MethodType", "auto_select_method", "estimate_direct_solver_memory",
    "get_available_gpu_memory",
    "SolveInfo", "EigshInfo", "ConvergenceWarning", "ConvergenceError", "SlaError",
    "SlaValueError", "SlaRuntimeError", "SingularMatrixError", "NotPositiveDefiniteError",
    "BreakdownError", "UnsupportedError", "ParseError", "SlaIOError", "clear_pattern_cache",
    "clear_solver_cache", "set_solver_cache_size", "solver_cache_info", "library_path",
    "nonlinear_solve", "adjoint_solve", "NonlinearInfo", "jacobian_sparsity", "set_num_threads",
    "get_num_threads",
]
