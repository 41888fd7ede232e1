"""ctypes mirror of include/sla/nonlinear.h (and sla_pattern_color_columns): structs, callback
types, prototypes. Kept beside _capi.py so that the nonlinear solver's ABI lives in one place;
tests/python/test_nonlinear.py checks the layouts against the header."""
import ctypes

from ._capi import SLA_DESCRIPTION_LEN, SolverOptions, lib

c_int, c_int64, c_double, c_void_p = ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
P = ctypes.POINTER

METHODS = ("newton", "newton_krylov", "picard", "anderson")
REASONS = ("converged", "max iterations", "line search failed", "diverged", "non-finite",
           "stagnation", "linear solver failed", "callback failed", "error")

RESIDUAL_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
JACOBIAN_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
APPLY_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_void_p, c_void_p)
PARAM_VJP_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)


class LinearInfoC(ctypes.Structure):
    """sla_solve_info as embedded in sla_nonlinear_info (no tail padding inside a struct)."""
    _fields_ = [("method", c_int), ("precond", c_int), ("converged", c_int), ("reason", c_int),
                ("iterations", c_int64), ("residual_norm", c_double),
                ("relative_residual", c_double), ("rcond", c_double),
                ("normal_residual", c_double),
                ("description", ctypes.c_char * SLA_DESCRIPTION_LEN), ("peak_bytes", c_int64)]


class ProblemC(ctypes.Structure):
    """sla_nonlinear_problem."""
    _fields_ = [("n", c_int64), ("dtype", c_int), ("residual", RESIDUAL_FN),
                ("pattern", c_void_p), ("jacobian", JACOBIAN_FN),
                ("linearization", JACOBIAN_FN), ("jacobian_apply", APPLY_FN),
                ("param_vjp", PARAM_VJP_FN), ("ctx", c_void_p)]


class OptionsC(ctypes.Structure):
    """sla_nonlinear_options."""
    _fields_ = [("method", c_int), ("rtol", c_double), ("atol", c_double), ("stol", c_double),
                ("dtol", c_double), ("max_iter", c_int64), ("stagnation_window", c_int64),
                ("line_search", c_int), ("armijo_c", c_double), ("max_backtracks", c_int64),
                ("linear", SolverOptions), ("eta0", c_double), ("eta_max", c_double),
                ("ew_gamma", c_double), ("ew_alpha", c_double), ("damping", c_double),
                ("anderson_depth", c_int64), ("adjoint_rtol", c_double),
                ("adjoint_atol", c_double), ("adjoint_max_iter", c_int64)]


class InfoC(ctypes.Structure):
    """sla_nonlinear_info."""
    _fields_ = [("method", c_int), ("converged", c_int), ("reason", c_int),
                ("iterations", c_int64), ("residual_evaluations", c_int64),
                ("jacobian_evaluations", c_int64), ("jacobian_products", c_int64),
                ("linear_solves", c_int64), ("linear_iterations", c_int64),
                ("backtracks", c_int64), ("residual_norm", c_double),
                ("initial_residual_norm", c_double), ("tolerance", c_double),
                ("step_norm", c_double), ("history", P(c_double)), ("linear", LinearInfoC),
                ("description", ctypes.c_char * SLA_DESCRIPTION_LEN),
                ("_tail_pad", ctypes.c_char * 512)]


class VjpInfoC(ctypes.Structure):
    """sla_solve_info of sla_nonlinear_vjp (with the tail padding of _capi.SolveInfoC)."""
    _fields_ = LinearInfoC._fields_ + [("_tail_pad", ctypes.c_char * 512)]


_PROTOTYPES = {
    "sla_nonlinear_options_init_for": (None, [P(OptionsC), c_int]),
    "sla_nonlinear_create": (c_int, [P(ProblemC), P(OptionsC), P(c_void_p)]),
    "sla_nonlinear_solve": (c_int, [c_void_p, c_void_p, c_void_p, P(InfoC)]),
    "sla_nonlinear_vjp": (c_int, [c_void_p, c_void_p, c_void_p, P(VjpInfoC)]),
    "sla_nonlinear_solution": (c_void_p, [c_void_p]),
    "sla_nonlinear_free": (None, [P(c_void_p)]),
    "sla_pattern_color_columns": (c_int, [c_void_p, c_void_p, P(c_int64)]),
}


class _Functions:
    """The prototypes above, bound on first use (absent from an older libsla: has() is False)."""

    def __init__(self):
        self._bound = {}

    def has(self):
        return all(lib.has(name) for name in _PROTOTYPES)

    def __getattr__(self, name):
        if name not in _PROTOTYPES:
            raise AttributeError(name)
        fn = self._bound.get(name)
        if fn is None:
            if not lib.has(name):
                raise NotImplementedError(f"torch_sla.nonlinear_solve needs {name}() in libsla, "
                                          f"which this build ({lib.path}) does not export")
            fn = getattr(lib.cdll, name)
            fn.restype, fn.argtypes = _PROTOTYPES[name]
            self._bound[name] = fn
        return fn


nl = _Functions()
