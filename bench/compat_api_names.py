"""Lists torch-sla's documented public names (package exports, class members, datasets)
as JSON: run with PYTHONPATH=<their checkout>."""
import inspect, json, sys
import torch_sla as T
out = {}
pkg = [n for n in T.__all__ if n != "__version__"] + ["SOLVER_CACHE", "solve", "SolveInfo",
       "SolverConfig", "PreconditionerConfig", "DetConfig", "MatrixLike", "__version__"]
out["torch_sla"] = sorted(set(pkg))
def members(c):
    return sorted(n for n in dir(c) if not n.startswith("_") or n in (
        "__matmul__", "__rmatmul__", "__add__", "__sub__", "__mul__", "__truediv__",
        "__rtruediv__", "__pow__", "__neg__", "__abs__", "__radd__", "__rsub__", "__rmul__",
        "__len__", "__getitem__", "__iter__", "__enter__", "__call__"))
for c in ("SparseTensor", "SparseTensorList", "LUFactorization", "SolverConfig",
          "PreconditionerConfig", "SolveInfo", "DetConfig", "ParallelBatchSolver"):
    out[c] = members(getattr(T, c))
out["SparseTensor"] += ["values", "row_indices", "col_indices"]
out["SOLVER_CACHE"] = ["clear", "stats", "set_max_size", "get_or_build"]
import torch_sla.datasets as D
out["torch_sla.datasets"] = sorted(D.__all__)
out["torch_sla.backends"] = sorted(n for n in dir(T.backends) if n.startswith("is_") or n in (
    "BACKEND_METHODS", "DEFAULT_METHODS", "get_available_backends", "show_backends",
    "get_backend_methods", "get_default_method", "select_backend", "select_method"))
json.dump(out, sys.stdout, indent=1)
