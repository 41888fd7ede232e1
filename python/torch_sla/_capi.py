"""ctypes binding of libsla: library loading, C structs, prototypes and status checking.

Only this module knows the C ABI. Everything else calls ``lib.<function>`` and passes its
status through :func:`check`, which raises the library's own message (``sla_last_error()``).

Search order for the shared library:
  1. ``$SLA_LIBRARY`` (a file path);
  2. the copy inside the installed package, ``torch_sla/_lib/libsla.so`` (``pip install .``);
  3. the build tree: ``../../build/libsla.so`` relative to this package (``python/torch_sla``);
  4. the system: ``ctypes.util.find_library("sla")``, then ``<prefix>/lib*/libsla.so`` for the
     Python prefix and ``/usr/local``.
"""
import ctypes
import ctypes.util
import os
import sys
from pathlib import Path

from .errors import error_for_status

c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_uint32 = ctypes.c_uint32
c_double = ctypes.c_double
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
P = ctypes.POINTER

# ------------------------------------------------------------------------------------------------
# Enumerations (values of include/sla/*.h)
# ------------------------------------------------------------------------------------------------
SLA_OK = 0
SLA_NOT_CONVERGED = 1
SLA_FLOAT64, SLA_FLOAT32 = 0, 1
SLA_OP_N, SLA_OP_T = 0, 1
METHODS = ("auto", "cholesky", "ldlt", "lu", "klu", "cg", "bicgstab", "gmres", "minres", "lsqr", "cocg")
PRECONDS = ("auto", "none", "jacobi", "ic0", "ilu0", "amg", "user")
ORDERINGS = ("auto", "natural", "amd", "metis")
REASONS = ("converged", "max iterations", "breakdown", "indefinite", "non-finite", "stagnation",
           "error")
ITERATIVE = frozenset(("cg", "bicgstab", "gmres", "minres", "lsqr", "cocg"))
MM_FIELDS = {"real": 0, "integer": 1, "pattern": 2, "complex": 3}
MM_SYMMETRIES = {"general": 0, "symmetric": 1, "skew-symmetric": 2, "hermitian": 3}


SLA_DESCRIPTION_LEN = 1024     # include/sla/base.h
# Spare room after the trailing description buffer of the info structs: if libsla's buffer
# grows, C writes into this padding instead of past Python's struct (tests/python/test_abi.py
# checks the layouts against the headers).
_TAIL_PAD = ("_tail_pad", ctypes.c_char * 512)


class Matrix(ctypes.Structure):
    """sla_matrix: a borrowed view (pattern, dtype, batch, values in CSR order)."""
    _fields_ = [("pattern", c_void_p), ("dtype", c_int), ("batch", c_int64), ("values", c_void_p),
                ("space", c_int)]       # sla_memspace: 0 host (the default), 1 device


class SolverOptions(ctypes.Structure):
    """sla_solver_options (include/sla/solver.h)."""
    _fields_ = [("method", c_int), ("precond", c_int), ("ordering", c_int),
                ("backend", c_char_p), ("rtol", c_double), ("atol", c_double),
                ("maxiter", c_int64), ("restart", c_int64), ("initial_guess_nonzero", c_int),
                ("monitor", c_void_p), ("monitor_ctx", c_void_p), ("monitor_every", c_int64),
                ("user_precond", c_void_p), ("user_precond_ctx", c_void_p),
                ("memory_budget", c_double), ("flop_budget", c_double),
                ("need_determinant", c_int), ("damp", c_double), ("allow_singular", c_int)]


class SolveInfoC(ctypes.Structure):
    """sla_solve_info."""
    _fields_ = [("method", c_int), ("precond", c_int), ("converged", c_int), ("reason", c_int),
                ("iterations", c_int64), ("residual_norm", c_double),
                ("relative_residual", c_double), ("rcond", c_double),
                ("normal_residual", c_double),
                ("description", ctypes.c_char * SLA_DESCRIPTION_LEN), ("peak_bytes", c_int64),
                _TAIL_PAD]


class BackendInfoC(ctypes.Structure):
    """sla_backend_info."""
    _fields_ = [("name", c_char_p), ("description", c_char_p), ("methods", c_uint32),
                ("dtypes", c_uint32), ("priority", c_int), ("available", c_int),
                ("unavailable_reason", c_char_p)]


EIGSH_WHICH = ("LM", "SM", "LA", "SA")
EIGSH_METHODS = ("auto", "lobpcg", "lanczos", "arpack", "dense")


class EigshOptionsC(ctypes.Structure):
    """sla_eigsh_options (include/sla/eig.h)."""
    _fields_ = [("which", c_int), ("sigma", c_double), ("tol", c_double), ("maxiter", c_int64),
                ("method", c_int), ("v0", c_void_p), ("nv0", c_int64), ("block_size", c_int64),
                ("ncv", c_int64), ("precond_solver", c_void_p), ("precond", c_void_p),
                ("precond_ctx", c_void_p), ("factor_options", c_void_p),
                ("residuals", c_void_p), ("M", c_void_p)]


class EigshInfoC(ctypes.Structure):
    """sla_eigsh_info."""
    _fields_ = [("method", c_int), ("which", c_int), ("sigma", c_double),
                ("iterations", c_int64), ("restarts", c_int64),
                ("operator_applications", c_int64), ("precond_applications", c_int64),
                ("spmv", c_int64), ("factorizations", c_int64), ("converged", c_int64),
                ("max_residual", c_double), ("norm_A", c_double), ("norm_M", c_double),
                ("description", ctypes.c_char * SLA_DESCRIPTION_LEN), _TAIL_PAD]


class CooC(ctypes.Structure):
    """sla_coo (include/sla/io.h)."""
    _fields_ = [("nrows", c_int64), ("ncols", c_int64), ("nnz", c_int64),
                ("nnz_stored", c_int64), ("row", P(c_int64)), ("col", P(c_int64)),
                ("values", P(c_double)), ("field", c_int), ("symmetry", c_int),
                ("is_array", c_int)]


# name: (restype, argtypes). Functions missing from the loaded library (parts of libsla that
# have not landed yet) are simply absent: see has().
_PROTOTYPES = {
    # base.h
    "sla_status_string": (c_char_p, [c_int]),
    "sla_last_error": (c_char_p, []),
    "sla_clear_error": (None, []),
    "sla_version": (c_char_p, []),
    "sla_set_num_threads": (c_int, [c_int]),
    "sla_get_num_threads": (c_int, []),
    "sla_peak_rss_bytes": (c_int64, []),
    "sla_free": (None, [c_void_p]),
    # pattern.h
    "sla_pattern_from_coo": (c_int, [c_int64, c_int64, c_int64, c_void_p, c_void_p, P(c_void_p)]),
    "sla_pattern_from_csr": (c_int, [c_int64, c_int64, c_void_p, c_void_p, P(c_void_p)]),
    "sla_pattern_borrow_csr": (c_int, [c_int64, c_int64, c_void_p, c_void_p, c_void_p, c_void_p,
                                       c_void_p, P(c_void_p)]),
    "sla_pattern_free": (None, [P(c_void_p)]),
    "sla_pattern_nrows": (c_int64, [c_void_p]),
    "sla_pattern_ncols": (c_int64, [c_void_p]),
    "sla_pattern_nnz": (c_int64, [c_void_p]),
    "sla_pattern_nnz_input": (c_int64, [c_void_p]),
    "sla_pattern_rowptr": (c_void_p, [c_void_p]),
    "sla_pattern_colind": (c_void_p, [c_void_p]),
    "sla_pattern_map": (c_void_p, [c_void_p]),
    "sla_pattern_rowind": (c_void_p, [c_void_p]),
    "sla_pattern_has_duplicates": (c_int, [c_void_p]),
    "sla_pattern_map_is_identity": (c_int, [c_void_p]),
    "sla_pattern_is_structurally_symmetric": (c_int, [c_void_p]),
    "sla_pattern_connected_components": (c_int, [c_void_p, c_void_p, P(c_int64)]),
    # spgemm.h
    "sla_spgemm_pattern": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
    "sla_spgemm": (c_int, [P(Matrix), P(Matrix), c_void_p, c_void_p]),
    "sla_spgemm_vjp": (c_int, [P(Matrix), P(Matrix), c_void_p, c_void_p, c_void_p, c_void_p]),
    # logdet.h
    "sla_logdet_slq": (c_int, [P(Matrix), c_int64, c_void_p, c_int64, P(c_double), P(c_double)]),
    # eigs.h
    "sla_eigs": (c_int, [P(Matrix), c_int64, c_int, c_double, c_int64, c_int64, c_void_p,
                         c_void_p, c_void_p, P(c_int64)]),
    # gallery.h
    "sla_gallery_grid": (c_int, [c_int, P(c_int64), c_double, P(c_double), P(c_double),
                                 P(c_void_p), P(c_void_p)]),
    "sla_gallery_graph_laplacian": (c_int, [c_int64, c_int64, c_void_p, c_void_p, c_void_p,
                                            c_double, P(c_void_p), P(c_void_p)]),
    # matrix.h
    "sla_values_gather": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p]),
    "sla_values_scatter": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p]),
    "sla_matrix_is_symmetric": (c_int, [P(Matrix), c_double, c_double, P(c_int)]),
    "sla_matrix_is_hermitian": (c_int, [P(Matrix), c_double, c_double, P(c_int)]),
    "sla_matrix_norm": (c_int, [P(Matrix), ctypes.c_char, P(c_double)]),
    "sla_matrix_to_dense": (c_int, [P(Matrix), c_void_p]),
    # spmv.h
    "sla_spmv": (c_int, [c_int, c_double, P(Matrix), c_void_p, c_int, c_int64, c_double,
                         c_void_p]),
    "sla_spmv_vjp": (c_int, [c_int, c_double, P(Matrix), c_void_p, c_int, c_int64, c_void_p,
                             c_void_p, c_void_p]),
    "sla_pattern_outer_add": (c_int, [c_void_p, c_int, c_int64, c_double, c_void_p, c_int,
                                      c_void_p, c_int, c_int64, c_void_p]),
    # solver.h
    "sla_solver_options_init": (None, [P(SolverOptions)]),
    "sla_solver_create": (c_int, [P(Matrix), P(SolverOptions), P(c_void_p)]),
    "sla_solver_refactor": (c_int, [c_void_p, c_void_p]),
    "sla_solver_create_for": (c_int, [P(Matrix), P(SolverOptions), c_int, c_int64, c_void_p,
                                      P(c_void_p)]),
    "sla_solver_refactor_for": (c_int, [c_void_p, c_void_p, c_int, c_int64, c_void_p]),
    "sla_solver_solve": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, P(SolveInfoC)]),
    "sla_solver_solve_vjp": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p,
                                     c_void_p, P(SolveInfoC)]),
    "sla_solver_lstsq_vjp": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p,
                                     c_void_p, c_void_p, P(SolveInfoC)]),
    "sla_solver_logdet": (c_int, [c_void_p, P(c_double), P(c_double)]),
    "sla_solver_logdet_grad": (c_int, [c_void_p, P(c_double), c_void_p]),
    "sla_solver_describe": (c_char_p, [c_void_p]),
    "sla_solver_method": (c_int, [c_void_p]),
    "sla_solver_free": (None, [P(c_void_p)]),
    "sla_backend_count": (c_int64, []),
    "sla_backend_get": (c_int, [c_int64, P(BackendInfoC)]),
    # eig.h
    "sla_eigsh_options_init": (None, [P(EigshOptionsC)]),
    "sla_eigsh": (c_int, [P(Matrix), c_int64, P(EigshOptionsC), c_void_p, c_void_p,
                          P(EigshInfoC)]),
    "sla_eigsh_vjp": (c_int, [P(Matrix), c_int64, c_void_p, c_void_p, c_void_p, c_void_p,
                              c_void_p]),
    "sla_eigsh_generalized_vjp": (c_int, [P(Matrix), P(Matrix), c_int64, c_void_p, c_void_p,
                                          c_void_p, c_void_p, c_void_p, c_void_p]),
    # io.h
    "sla_mm_read": (c_int, [c_char_p, P(P(CooC))]),
    "sla_coo_free": (None, [P(P(CooC))]),
    "sla_mm_write": (c_int, [c_char_p, P(Matrix), c_int64, c_int, c_int, c_char_p]),
    "sla_safetensors_read_batch": (c_int, [c_char_p, P(P(CooC)), P(c_int), P(c_int64)]),
    "sla_safetensors_write_batch": (c_int, [c_char_p, P(CooC), c_int, c_int, P(c_int64),
                                            P(c_char_p)]),
}


def _candidates():
    env = os.environ.get("SLA_LIBRARY")
    if env:
        yield Path(env)
    here = Path(__file__).resolve().parent
    yield here / "_lib" / "libsla.so"
    build = here.parent.parent / "build"
    for name in ("libsla.so", "libsla.dylib"):
        yield build / name
    found = ctypes.util.find_library("sla")
    if found:
        yield Path(found)
    for prefix in dict.fromkeys((sys.prefix, "/usr/local", "/usr")):
        for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
            yield Path(prefix) / libdir / "libsla.so"


def _load():
    tried = []
    for path in _candidates():
        # find_library returns a bare soname ("libsla.so.0"): let the loader resolve it
        if not path.is_absolute() and os.sep not in str(path):
            target = str(path)
        elif path.exists():
            target = str(path)
        else:
            tried.append(f"{path} (absent)")
            continue
        try:
            return ctypes.CDLL(target), target
        except OSError as e:
            tried.append(f"{target} ({e})")
    raise ImportError("torch_sla: cannot find libsla. Build it (cmake -S . -B build && cmake "
                      "--build build) or set SLA_LIBRARY to its path. Tried: " + "; ".join(tried))


class _DlInfo(ctypes.Structure):
    """Dl_info of dladdr(3)."""
    _fields_ = [("dli_fname", c_char_p), ("dli_fbase", c_void_p), ("dli_sname", c_char_p),
                ("dli_saddr", c_void_p)]


def _loaded_path(cdll, target):
    """The real path of the file the dynamic loader mapped for `cdll` (dladdr of one of its
    symbols, symlinks resolved): what a bare soname such as "libsla.so.0" or a symlinked
    $SLA_LIBRARY resolved to. Falls back to `target` resolved, when that is a path."""
    for libname in (None, ctypes.util.find_library("dl")):     # glibc < 2.34: dladdr in libdl
        try:
            dladdr = ctypes.CDLL(libname).dladdr
        except (OSError, AttributeError, TypeError):
            continue
        dladdr.argtypes, dladdr.restype = [c_void_p, P(_DlInfo)], c_int
        info = _DlInfo()
        if dladdr(ctypes.cast(cdll.sla_version, c_void_p), ctypes.byref(info)) and info.dli_fname:
            return os.path.realpath(os.fsdecode(info.dli_fname))
    return os.path.realpath(target) if os.sep in target else target


class _Lib:
    """The loaded library with typed functions as attributes."""

    def __init__(self):
        self.cdll, target = _load()
        self.path = _loaded_path(self.cdll, target)
        self._missing = set()
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                fn = getattr(self.cdll, name)
            except AttributeError:
                self._missing.add(name)
                continue
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        libc_name = ctypes.util.find_library("c")
        self.libc = ctypes.CDLL(libc_name) if libc_name else None

    def has(self, name):
        """True if the loaded libsla exports `name` (parts of the library land over time)."""
        if name in self._missing:
            return False
        if hasattr(self, name):
            return True
        return hasattr(self.cdll, name)


lib = _Lib()


def last_error():
    msg = lib.sla_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def check(status, what=None):
    """Raises the exception of a negative status with sla_last_error()'s message; returns the
    status otherwise (0, or a positive warning such as SLA_NOT_CONVERGED)."""
    if status < 0:
        msg = last_error()
        if not msg:
            msg = lib.sla_status_string(status).decode()
        if what:
            msg = f"{what}: {msg}"
        raise error_for_status(status, msg)
    return status


def require(name, feature):
    """Raises NotImplementedError when the loaded libsla lacks a function."""
    if not lib.has(name):
        raise NotImplementedError(
            f"torch_sla: {feature} needs {name}() in libsla, which this build ({lib.path}) does "
            f"not export yet")
