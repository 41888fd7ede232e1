"""ctypes binding of libsla_mpi (include/sla/mpi.h): library loading, the MPI communicator
handle from mpi4py, C structs and prototypes. Only this module knows libsla_mpi's ABI.

Search order for the shared library (it must be the libsla_mpi built against the libsla that
``_capi`` loaded, so that both share one libsla and one ``sla_last_error()``):
  1. ``$SLA_MPI_LIBRARY`` (a file path);
  2. next to the loaded libsla (``libsla_mpi.so`` in the same folder: build tree, package);
  3. the build tree ``../../build/libsla_mpi.so`` relative to this package;
  4. the system: ``ctypes.util.find_library("sla_mpi")``.

The communicator: libsla_mpi takes a C ``MPI_Comm`` by value. mpi4py hands out its C handle as
an integer (``MPI._handleof(comm)``); its C type is a pointer for Open MPI and an int for
MPICH, told apart by ``MPI._sizeof(MPI.Comm)``. Importing mpi4py.MPI initializes MPI (and
finalizes it at exit, after Python's atexit handlers, so pending frees still run first).
"""
import ctypes
import ctypes.util
import os
from pathlib import Path

from ._capi import lib as _lib

c_int, c_int64, c_double, c_void_p = ctypes.c_int, ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
P = ctypes.POINTER

try:
    from mpi4py import MPI
except ImportError as e:     # pragma: no cover - Debian's python3-mpi4py is a dependency here
    MPI = None
    _MPI_ERROR = e
else:
    _MPI_ERROR = None

# sla_dist_partitioner (include/sla/mpi.h)
PARTITIONERS = {"contiguous": 0, "metis": 1, "ptscotch": 2, "rcb": 3, "hilbert": 4}


def require_mpi4py():
    if MPI is None:
        raise ImportError(f"torch_sla.distributed needs mpi4py (Debian: apt-get install "
                          f"python3-mpi4py): {_MPI_ERROR}")
    return MPI


def _comm_ctype():
    if MPI is not None and MPI._sizeof(MPI.Comm) == ctypes.sizeof(c_void_p):
        return c_void_p      # Open MPI: struct ompi_communicator_t *
    return c_int             # MPICH and derivatives: an int handle


MPI_Comm = _comm_ctype()


def comm_handle(comm):
    """The C MPI_Comm of an mpi4py communicator (borrowed: valid while `comm` lives)."""
    return MPI_Comm(MPI._handleof(comm))


class PartitionInfoC(ctypes.Structure):
    """sla_dist_partition_info."""
    _fields_ = [("nparts", c_int), ("edge_cut", c_int64), ("halo_total", c_int64),
                ("halo_max", c_int64), ("neighbours_max", c_int64),
                ("neighbours_total", c_int64), ("rows_min", c_int64), ("rows_max", c_int64),
                ("rows_imbalance", c_double), ("nnz_min", c_int64), ("nnz_max", c_int64),
                ("nnz_imbalance", c_double)]


class HaloInfoC(ctypes.Structure):
    """sla_dist_halo_info."""
    _fields_ = [("nrecv", c_int), ("recv_rank", P(c_int)), ("recv_ptr", P(c_int64)),
                ("nsend", c_int), ("send_rank", P(c_int)), ("send_ptr", P(c_int64)),
                ("send_idx", P(c_int64))]


class DistMatrixC(ctypes.Structure):
    """sla_dist_matrix: a borrowed view of this rank's local values."""
    _fields_ = [("pattern", c_void_p), ("dtype", c_int), ("batch", c_int64),
                ("values", c_void_p)]


class DistSolverOptionsC(ctypes.Structure):
    """sla_dist_solver_options (the distributed solvers of libsla_mpi; bound only when the
    loaded library exports sla_dist_solver_create)."""
    _fields_ = [("method", c_int), ("precond", c_int), ("rtol", c_double), ("atol", c_double),
                ("maxiter", c_int64), ("restart", c_int64), ("damp", c_double),
                ("initial_guess_nonzero", c_int)]


class DistEigshOptionsC(ctypes.Structure):
    """sla_dist_eigsh_options (LOBPCG on a distributed matrix)."""
    _fields_ = [("which", c_int), ("tol", c_double), ("maxiter", c_int64),
                ("block_size", c_int64), ("precond", c_int), ("M", c_void_p),
                ("residuals", c_void_p), ("sigma", c_double)]


# sla_dist_precond, with libsla's serial names as aliases of the block-Jacobi kinds
DIST_PRECONDS = {"auto": 0, "none": 1, "jacobi": 2, "bjacobi-ic0": 3, "ic0": 3,
                 "bjacobi-ilu0": 4, "ilu0": 4, "bjacobi-amg": 5, "amg": 5, "boomeramg": 6}

# Parts of libsla_mpi that land later (bound when the library exports them; see has()).
_OPTIONAL = {
    "sla_dist_solver_options_init": (None, [P(DistSolverOptionsC)]),
    "sla_dist_solver_create": (c_int, [P(DistMatrixC), P(DistSolverOptionsC), P(c_void_p)]),
    "sla_dist_solver_solve": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p,
                                      c_void_p]),
    "sla_dist_solver_solve_vjp": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p,
                                          c_void_p, c_void_p, c_void_p]),
    "sla_dist_solver_describe": (ctypes.c_char_p, [c_void_p]),
    "sla_dist_solver_lstsq_vjp": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p,
                                          c_void_p, c_void_p, c_void_p, c_void_p]),
    "sla_dist_solver_free": (None, [P(c_void_p)]),
    # distributed direct LU (SuperLU_DIST)
    "sla_dist_lu_create": (c_int, [P(DistMatrixC), P(c_void_p)]),
    "sla_dist_lu_solve": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p]),
    "sla_dist_lu_solve_vjp": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p, c_void_p,
                                      c_void_p, c_void_p]),
    "sla_dist_lu_logdet": (c_int, [c_void_p, c_void_p, c_void_p]),
    "sla_dist_lu_logdet_grad": (c_int, [c_void_p, c_void_p, c_void_p]),     # _dist_logdet.py
    "sla_dist_lu_describe": (ctypes.c_char_p, [c_void_p]),
    "sla_dist_lu_free": (None, [P(c_void_p)]),
    "sla_dist_have_superlu": (c_int, []),
    # any number of parts (distributed.partition_* with num_parts ≠ ranks)
    "sla_dist_partition_parts": (c_int, [c_void_p, c_int, c_int, c_int, c_void_p, c_void_p]),
    # distributed eigsh (LOBPCG)
    "sla_dist_eigsh_options_init": (None, [P(DistEigshOptionsC)]),
    "sla_dist_eigsh": (c_int, [P(DistMatrixC), c_int64, P(DistEigshOptionsC), c_void_p,
                               c_void_p, c_void_p]),          # info: P(EigshInfoC)
    "sla_dist_eigsh_vjp": (c_int, [P(DistMatrixC), c_void_p, c_int64, c_void_p, c_void_p,
                                   c_void_p, c_void_p, c_void_p, c_void_p]),
}

_PROTOTYPES = {
    "sla_dist_agree": (c_int, [MPI_Comm, ctypes.c_char_p, c_int]),
    "sla_dist_layout_create": (c_int, [MPI_Comm, c_int64, c_int64, P(c_void_p)]),
    "sla_dist_layout_create_owned": (c_int, [MPI_Comm, c_int64, c_int64, c_void_p,
                                             P(c_void_p)]),
    "sla_dist_layout_retain": (c_void_p, [c_void_p]),
    "sla_dist_layout_free": (None, [P(c_void_p)]),
    "sla_dist_layout_comm": (MPI_Comm, [c_void_p]),
    "sla_dist_layout_size": (c_int64, [c_void_p]),
    "sla_dist_layout_local_size": (c_int64, [c_void_p]),
    "sla_dist_layout_global": (c_void_p, [c_void_p]),
    "sla_dist_layout_is_contiguous": (c_int, [c_void_p]),
    "sla_dist_pattern_from_coo": (c_int, [c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
                                          P(c_void_p)]),
    "sla_dist_pattern_from_csr": (c_int, [c_void_p, c_void_p, c_int64, c_void_p, c_void_p,
                                          c_void_p, c_void_p, P(c_void_p)]),
    "sla_dist_pattern_retain": (c_void_p, [c_void_p]),
    "sla_dist_pattern_free": (None, [P(c_void_p)]),
    "sla_dist_pattern_rows": (c_void_p, [c_void_p]),
    "sla_dist_pattern_cols": (c_void_p, [c_void_p]),
    "sla_dist_pattern_nnz": (c_int64, [c_void_p]),
    "sla_dist_pattern_nnz_input": (c_int64, [c_void_p]),
    "sla_dist_pattern_ghosts": (c_void_p, [c_void_p, P(c_int64)]),
    "sla_dist_pattern_global_coo": (c_int, [c_void_p, c_void_p, c_void_p]),
    "sla_dist_pattern_halo": (c_int, [c_void_p, P(HaloInfoC)]),
    "sla_dist_values_gather": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p]),
    "sla_dist_values_scatter": (c_int, [c_void_p, c_int, c_int64, c_void_p, c_void_p]),
    "sla_dist_matrix_check": (c_int, [P(DistMatrixC), c_int]),
    "sla_dist_spmv": (c_int, [c_int, c_double, P(DistMatrixC), c_void_p, c_int, c_int64,
                              c_double, c_void_p]),
    "sla_dist_spmv_vjp": (c_int, [c_int, c_double, P(DistMatrixC), c_void_p, c_int, c_int64,
                                  c_void_p, c_void_p, c_void_p]),
    "sla_dist_vec_scatter": (c_int, [c_void_p, c_int, c_int64, c_int64, c_int, c_void_p,
                                     c_void_p]),
    "sla_dist_vec_gather": (c_int, [c_void_p, c_int, c_int64, c_int64, c_int, c_void_p,
                                    c_void_p]),
    "sla_dist_allsum": (c_int, [MPI_Comm, c_int, c_void_p, c_void_p]),
    "sla_dist_partition": (c_int, [c_void_p, c_int, c_int, c_void_p, P(c_void_p),
                                   P(PartitionInfoC)]),
    "sla_dist_pattern_info": (c_int, [c_void_p, P(PartitionInfoC)]),
}


def _candidates():
    env = os.environ.get("SLA_MPI_LIBRARY")
    if env:
        yield Path(env)
    if os.sep in str(_lib.path):
        yield Path(_lib.path).parent / "libsla_mpi.so"
    here = Path(__file__).resolve().parent
    yield here / "_lib" / "libsla_mpi.so"
    yield here.parent.parent / "build" / "libsla_mpi.so"
    found = ctypes.util.find_library("sla_mpi")
    if found:
        yield Path(found)


class _MpiLib:
    """libsla_mpi, loaded on first use (importing torch_sla must not need MPI)."""

    def __init__(self):
        self.cdll = None
        self.path = None

    def load(self):
        if self.cdll is not None:
            return self
        require_mpi4py()
        tried = []
        for path in _candidates():
            target = str(path)
            if os.sep in target and not path.exists():
                tried.append(f"{path} (absent)")
                continue
            try:
                cdll = ctypes.CDLL(target)
            except OSError as e:
                tried.append(f"{target} ({e})")
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(cdll, name)
                fn.restype, fn.argtypes = restype, argtypes
                setattr(self, name, fn)
            for name, (restype, argtypes) in _OPTIONAL.items():
                fn = getattr(cdll, name, None)
                if fn is not None:
                    fn.restype, fn.argtypes = restype, argtypes
                    setattr(self, name, fn)
            self.cdll, self.path = cdll, target
            return self
        raise ImportError("torch_sla.distributed: cannot find libsla_mpi (build with "
                          "-DSLA_WITH_MPI=ON, or set SLA_MPI_LIBRARY). Tried: " +
                          "; ".join(tried))

    def __getattr__(self, name):
        # called for attributes not set yet: the prototypes, before the first load
        if name.startswith("sla_") and self.__dict__.get("cdll") is None and \
                (name in _PROTOTYPES or name in _OPTIONAL):
            self.load()
            return getattr(self, name)
        raise AttributeError(name)

    def has(self, name):
        self.load()
        return name in self.__dict__


mlib = _MpiLib()
