"""torch-sla's backend and method vocabulary, translated onto libsla.

torch-sla names solver *backends* after the Python packages it dispatches to (``scipy``,
``pytorch``, ``cudss``, ``pyamg``, ``amgx``, ``strumpack``, older ``eigen`` / ``cupy``) and
*methods* after their routines (``umfpack``, ``superlu``, ``pcg``, ``pbicgstab``, ``fgmres``,
``cudss_lu`` ...). Every one of them runs on libsla here: :func:`translate` turns a
(backend, method) pair into libsla's method, backend and preconditioner, and a note that the
solve appends to ``info.description`` so that the user sees what ran instead.

The module also holds torch-sla's backend utilities (``BACKEND_METHODS``,
``DEFAULT_METHODS``, ``is_*_available``, ``get_backend_methods``, ``select_backend``,
``select_method``, ``auto_select_method``, ``estimate_direct_solver_memory``), answering in
torch-sla's vocabulary; ``torch_sla.backends`` re-exports them. See docs/migrating.md.
"""
from typing import Dict, List, Literal, Optional

import torch

BackendType = Literal['scipy', 'pytorch', 'cudss', 'pyamg', 'amgx', 'strumpack', 'auto']
MethodType = Literal['auto', 'lu', 'umfpack', 'cholesky', 'ldlt', 'cg', 'cgs', 'bicgstab',
                     'gmres', 'lgmres', 'minres', 'qmr', 'lsqr', 'lsmr', 'amg', 'ruge_stuben',
                     'smoothed_aggregation', 'sa']

# torch-sla's documented tables (their names; all served by libsla here)
BACKEND_METHODS: Dict[str, List[str]] = {
    'scipy': ['lu', 'umfpack', 'cg', 'bicgstab', 'gmres', 'lgmres', 'minres', 'qmr'],
    'pytorch': ['cg', 'bicgstab', 'gmres', 'minres', 'lsqr', 'lsmr'],
    'cudss': ['lu', 'cholesky', 'ldlt'],
    'pyamg': ['amg', 'ruge_stuben', 'smoothed_aggregation', 'sa'],
    'amgx': ['amg', 'cg', 'pcg', 'bicgstab', 'pbicgstab', 'gmres', 'fgmres'],
    'strumpack': ['lu'],
}
DEFAULT_METHODS: Dict[str, str] = {
    'scipy': 'lu', 'pytorch': 'cg', 'cudss': 'cholesky', 'pyamg': 'ruge_stuben',
    'amgx': 'pbicgstab', 'strumpack': 'lu',
}
CUDA_ITERATIVE_THRESHOLD = 2_000_000

# every backend name torch-sla has used; 'direct' ones factorize, the others iterate
DIRECT_BACKENDS = ("scipy", "eigen", "cupy", "cudss", "cusolver", "strumpack")
ITERATIVE_BACKENDS = ("pytorch", "pyamg", "amgx")
TORCH_SLA_BACKENDS = DIRECT_BACKENDS + ITERATIVE_BACKENDS

# their method name -> libsla's (None: decided from the matrix, see translate)
METHOD_MAP = {
    "auto": "auto", "lu": "lu", "umfpack": "lu", "superlu": "lu", "splu": "lu", "klu": "klu",
    "cholesky": "cholesky", "ldlt": "ldlt",
    "cg": "cg", "pcg": "cg", "bicgstab": "bicgstab", "pbicgstab": "bicgstab",
    "cgs": "bicgstab", "qmr": "bicgstab", "gmres": "gmres", "fgmres": "gmres",
    "lgmres": "gmres", "minres": "minres", "lsqr": "lsqr", "cocg": "cocg",
    # LSMR (Fong & Saunders 2011) is not in libsla yet: LSQR reaches the same minimum-norm
    # least-squares solution (other iterates, other stopping estimates); the note says so
    "lsmr": "lsqr",
    "amg": None, "ruge_stuben": None, "smoothed_aggregation": None, "sa": None,
}
_DIRECT_METHODS = ("cholesky", "ldlt", "lu", "klu")
AMG_METHODS = ("amg", "ruge_stuben", "smoothed_aggregation", "sa")
# their preconditioner kinds -> libsla's
PRECOND_MAP = {"none": "none", "jacobi": "jacobi", "jacobi_l1": "jacobi", "ic0": "ic0",
               "ilu0": "ilu0", "amg": "amg", "ssor": "jacobi", "block_jacobi": "jacobi",
               "multicolor_dilu": "ilu0", "auto": "auto"}
# hints that name a factorization (cuDSS's matrix_type vocabulary)
MATRIX_TYPE_METHOD = {"spd": "cholesky", "hpd": "cholesky", "symmetric": "ldlt",
                      "hermitian": "ldlt"}
# complex values: 'hermitian' (cuDSS: Hermitian, maybe indefinite) is not LDLᵀ, which is
# libsla's complex *symmetric* (Aᵀ = A) factorization and refuses a Hermitian A; libsla's auto
# takes Cholesky (LLᴴ) when A is Hermitian positive definite, else LU (docs/auto.md)
MATRIX_TYPE_METHOD_COMPLEX = dict(MATRIX_TYPE_METHOD, hermitian="auto")


class Translation:
    """libsla's method / backend / preconditioner for a torch-sla (backend, method) pair.
    ``direct_only``: method 'auto' must choose a factorization (their direct backends);
    ``note``: one sentence for info.description ('' when nothing was translated)."""
    __slots__ = ("method", "backend", "preconditioner", "direct_only", "note", "their_backend")

    def __init__(self, method, backend, preconditioner, direct_only, note, their_backend):
        self.method, self.backend, self.preconditioner = method, backend, preconditioner
        self.direct_only, self.note, self.their_backend = direct_only, note, their_backend


def _norm(name, what):
    if name is None:
        return "auto"
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string, got {type(name).__name__}")
    return name.strip().lower()


def split_combined(backend, method):
    """'cudss_lu' → ('cudss', 'lu'); method 'strumpack' → ('strumpack', 'auto')."""
    if backend == "auto" and method != "auto":
        for bk in TORCH_SLA_BACKENDS:
            if method.startswith(bk + "_"):
                return bk, method[len(bk) + 1:]
            if method == bk:
                return bk, "auto"
    return backend, method


def translate(backend, method, *, symmetric=None, spd=None, diag_dominant=None,
              matrix_type=None, preconditioner=None, complex_values=False):
    """(backend, method) in either vocabulary → Translation.

    symmetric, diag_dominant: callables (or bools) telling whether the matrix is symmetric /
    passes the Gershgorin test for positive definiteness, asked only when the choice depends on
    it (backend 'pytorch' or 'pyamg' with method 'auto' or 'amg': CG when both hold, as
    torch-sla decides). spd: the caller's hint (True, or None when not given).
    Hints: spd=True or matrix_type 'spd'/'hpd' with method 'auto' → Cholesky at once (no SPD
    trial); matrix_type 'symmetric'/'hermitian' → LDLᵀ. complex_values (a complex dtype):
    'hermitian' → libsla's auto (Cholesky if positive definite, else LU), 'symmetric' (complex
    symmetric, Aᵀ = A) → LDLᵀ. libsla names pass through unchanged.
    """
    b0, m0 = _norm(backend, "backend"), _norm(method, "method")
    b, m = split_combined(b0, m0)
    pc = preconditioner
    notes = []
    if isinstance(pc, str) and pc.lower() in PRECOND_MAP and PRECOND_MAP[pc.lower()] != pc.lower():
        notes.append(f"preconditioner {pc!r} → {PRECOND_MAP[pc.lower()]}")
        pc = PRECOND_MAP[pc.lower()]

    def ask(v):
        return bool(v()) if callable(v) else bool(v)

    table = MATRIX_TYPE_METHOD_COMPLEX if complex_values else MATRIX_TYPE_METHOD
    hint = table.get(_norm(matrix_type, "matrix_type")) if matrix_type else None
    if hint == "auto":
        hint = None
        notes.append(f"matrix_type {matrix_type!r} on complex values → auto (Cholesky if "
                     "positive definite, else LU; LDLᵀ is for complex symmetric A)")
    if hint is None and spd is True:
        hint = "cholesky"
    if b not in TORCH_SLA_BACKENDS:
        # libsla's vocabulary (or auto); their method names are still understood
        lm = METHOD_MAP.get(m, m)
        if lm is None:                             # 'amg' without a torch-sla backend
            lm, pc = ("cg" if ask(symmetric) else "gmres"), pc or "amg"
            notes.append(f"method {m0!r} → libsla {lm} + AMG preconditioner")
        elif lm != m:
            notes.append(f"method {m0!r} → libsla {lm}")
        if lm == "auto" and hint:
            lm = hint
            notes.append(f"hint → {hint} (no SPD trial)")
        if lm in _DIRECT_METHODS:
            pc = None
        return Translation(lm, b, pc, False, "; ".join(notes), None)
    direct = b in DIRECT_BACKENDS
    lm = METHOD_MAP.get(m, m)
    if m in AMG_METHODS or (lm == "auto" and b in ("pyamg",)):
        lm, pc = ("cg" if ask(symmetric) else "gmres"), pc or "amg"
    elif lm == "auto" and b == "amgx":
        lm, pc = "bicgstab", pc or "amg"
    elif lm == "auto" and b == "pytorch":
        lm = "cg" if spd is True or (ask(symmetric) and ask(diag_dominant)) else "bicgstab"
    elif lm == "auto" and hint:
        lm = hint
    if b == "amgx" and pc is None:
        pc = "amg"
    if lm in _DIRECT_METHODS:
        pc = None                                  # factorizations take no preconditioner
    what = f"torch-sla backend {b0!r}" + (f", method {m0!r}" if m0 != "auto" else "")
    where = "a direct method chosen by libsla's auto" if lm == "auto" else f"libsla {lm}"
    if pc not in (None, "auto") and lm not in ("auto", "cholesky", "ldlt", "lu", "klu"):
        where += f" + {pc}"
    notes.append(f"{what} → {where}")
    return Translation(lm, "auto", pc, direct and lm == "auto", "; ".join(notes), b)


# ---------------------------------------------------------------------------------------------
# torch-sla's backend utilities, answering in their vocabulary
# ---------------------------------------------------------------------------------------------
def _have(module):
    import importlib.util
    return importlib.util.find_spec(module) is not None


def is_scipy_available() -> bool:
    """True: backend 'scipy' is served by libsla (UMFPACK / CHOLMOD / Krylov), SciPy or not."""
    return True


def is_pytorch_available() -> bool:
    """True: backend 'pytorch' (Krylov) is served by libsla's built-in Krylov methods."""
    return True


def is_cudss_available() -> bool:
    """False: libsla runs on the CPU (backend 'cudss' requests run on libsla's direct
    methods, CPU tensors only)."""
    return False


def is_strumpack_available() -> bool:
    """True: backend 'strumpack' (sparse direct LU) is served by libsla's direct methods."""
    return True


def is_pyamg_available() -> bool:
    """True: backend 'pyamg' is served by libsla's own algebraic multigrid (as a Krylov
    preconditioner)."""
    return True


def is_amgx_available() -> bool:
    """False: AmgX is a CUDA library; backend 'amgx' requests run on libsla's AMG-Krylov
    on the CPU."""
    return False


def is_cupy_available() -> bool:
    """False: CuPy is a CUDA library (torch-sla's older 'cupy' backend); requests for it run on
    libsla's direct methods on the CPU."""
    return False


def is_eigen_available() -> bool:
    """False: torch-sla's older C++ 'eigen' backend; requests for it run on libsla."""
    return False


def is_torch_spsolve_available() -> bool:
    """False: torch.sparse.spsolve is not used (libsla solves)."""
    return False


def get_backend_methods(backend: str) -> List[str]:
    """Methods of a backend: torch-sla's table for their names, libsla's for its own."""
    if backend in BACKEND_METHODS:
        return list(BACKEND_METHODS[backend])
    from .backends import backends as _libsla_backends
    for b in _libsla_backends():
        if b.name == backend:
            return list(b.methods)
    return []


def get_default_method(backend: str) -> str:
    return DEFAULT_METHODS.get(backend, "auto")


def _device_type(device):
    if device is None:
        return "cpu"
    return torch.device(device).type


def select_backend(device=None, n: Optional[int] = None, dtype=None,
                   prefer_direct: bool = True) -> str:
    """torch-sla's rule in its vocabulary: 'scipy' (direct) on the CPU, 'pytorch'
    (iterative) when prefer_direct is False. Both run on libsla; a CUDA device raises
    (libsla runs on the CPU)."""
    if _device_type(device) != "cpu":
        raise ValueError(f"device {device!r}: torch_sla runs on the CPU (libsla)")
    return "scipy" if prefer_direct else "pytorch"


def select_method(backend: str, is_symmetric: bool = False, is_spd: bool = False,
                  prefer_direct: bool = True) -> str:
    """torch-sla's method choice for a backend and matrix properties (their names)."""
    if backend == "scipy":
        return "lu" if prefer_direct else ("cg" if is_spd else "bicgstab")
    if backend == "pytorch":
        return "cg" if is_spd else "bicgstab"
    if backend == "cudss":
        return "cholesky" if is_spd else ("ldlt" if is_symmetric else "lu")
    methods = BACKEND_METHODS.get(backend, [])
    return DEFAULT_METHODS.get(backend, methods[0] if methods else "auto")


def estimate_direct_solver_memory(nnz: int, n: int, dtype=torch.float64) -> int:
    """torch-sla's rough estimate of a direct factorization's memory in bytes (fill factor
    10 on the entries, plus the index arrays). libsla's auto measures the fill from the
    symbolic analysis instead (docs/auto.md); this number is for torch-sla's callers."""
    size = torch.empty((), dtype=dtype).element_size()
    return int(nnz * 10 * (size + 8) + n * 8)


def get_available_gpu_memory() -> int:
    """0: torch_sla uses no GPU."""
    return 0


def auto_select_method(A, prefer_direct: bool = True) -> str:
    """Their name of the method torch_sla would use for A: 'cholesky' for symmetric
    matrices with a positive diagonal when prefer_direct, 'lu' otherwise; 'cg' / 'bicgstab'
    when not prefer_direct. libsla's own auto (method='auto') decides from the symbolic
    analysis and says why in info.description."""
    sym = bool(A.is_symmetric().all())
    if prefer_direct:
        return "cholesky" if sym and bool(A.is_positive_definite().all()) else "lu"
    return "cg" if sym and bool(A.is_positive_definite().all()) else "bicgstab"


def torch_sla_available_backends() -> List[str]:
    """Their backend names that run here (all on libsla)."""
    return ["scipy", "pytorch", "strumpack", "pyamg"]


__all__ = [
    "BackendType", "MethodType", "BACKEND_METHODS", "DEFAULT_METHODS",
    "CUDA_ITERATIVE_THRESHOLD", "is_scipy_available", "is_pytorch_available",
    "is_cudss_available", "is_strumpack_available", "is_pyamg_available", "is_amgx_available",
    "is_torch_spsolve_available", "is_cupy_available", "is_eigen_available", "get_backend_methods", "get_default_method",
    "select_backend", "select_method", "estimate_direct_solver_memory",
    "get_available_gpu_memory", "auto_select_method",
]
