"""Solver objects (a Python owner of a C ``sla_solver``) and the refactor cache.

Training-loop fast path
-----------------------
A loop that solves on the same pattern with new values at every step would otherwise run the
full ``sla_solver_create`` (symbolic analysis: ordering, elimination tree, AMG hierarchy...) each
time. :func:`acquire` keeps a small LRU cache of solvers keyed by (pattern, dtype, batch size,
options); on a hit it calls ``sla_solver_refactor`` with the new values (numeric work only). The
cache is always correct when values change: refactor always runs with the values of the call.

A solver is *pinned* while a call uses it, and, when saved by an autograd graph for its
backward, until that backward has run (or the graph is freed); a pinned solver is never
refactored for another call (in this thread or another) — a second solver is created
instead — so two outstanding solves on one pattern keep their own factors.
If a pinned solver's graph is backpropagated again after being released (``retain_graph``),
the backward notices that the solver was refactored since (generation counter) and refactors
it back with the forward's values before the adjoint solve.
"""
import ctypes
import threading
import weakref
from collections import OrderedDict

from ._capi import (METHODS, ORDERINGS, PRECONDS, REASONS, SolveInfoC,
                    SolverOptions, check, lib)
from ._args import as_int, as_opt_int, as_opt_real, choice
from ._lru import trim
from .errors import SlaError, SolveInfo

SOLVER_CACHE_SIZE = 8
_TORCH_SLA_BACKENDS = ("scipy", "eigen", "cupy", "cudss", "cusolver", "pytorch")


_BACKEND_NAMES = None


def _backend_names():
    """Names of every backend registered in libsla (compiled in or not: an unavailable one is
    refused by libsla with its reason), read once."""
    global _BACKEND_NAMES
    if _BACKEND_NAMES is None:
        from .backends import backends
        _BACKEND_NAMES = tuple(b.name for b in backends())
    return _BACKEND_NAMES


# SLA_PRECOND_USER needs a C callback: not offered to Python callers
_PY_PRECONDS = tuple(p for p in PRECONDS if p != "user")


class Options:
    """Solver options as a hashable key plus the C struct they describe. Every argument is
    checked here (type and value), so the C struct never receives a rounded or wrapped
    value. need_determinant: the solver will serve sla_solver_logdet (method 'auto' then
    chooses among direct methods only); it is part of the cache key, so a solver chosen for
    solves (possibly iterative) is never reused for a determinant."""

    __slots__ = ("method", "precond", "ordering", "backend", "rtol", "atol", "maxiter",
                 "restart", "need_determinant", "key")

    def __init__(self, method="auto", backend="auto", rtol=None, atol=None, maxiter=None,
                 preconditioner=None, ordering=None, restart=None, need_determinant=False):
        self.method = choice(method, METHODS, "method", default="auto")
        if preconditioner is not None and str(preconditioner).lower() == "user":
            raise ValueError("preconditioner = 'user' needs a C callback; torch_sla offers "
                             f"{', '.join(_PY_PRECONDS)}")
        self.precond = PRECONDS.index(_PY_PRECONDS[
            choice(preconditioner, _PY_PRECONDS, "preconditioner", default="auto")])
        self.ordering = choice(ordering, ORDERINGS, "ordering", default="auto")
        if backend is None:
            backend = "auto"
        if not isinstance(backend, str):
            raise TypeError(f"backend must be a string, got {type(backend).__name__}")
        if not backend.strip():
            raise ValueError("backend = '' : use 'auto' or a name from show_backends()")
        self.backend = backend.lower()
        if self.backend in _TORCH_SLA_BACKENDS:
            raise ValueError(f"backend = {backend!r} is a torch-sla backend; torch_sla runs on "
                             f"libsla: use backend='auto' or a name from "
                             f"torch_sla.show_backends()")
        if self.backend != "auto" and self.backend not in _backend_names():
            raise ValueError(f"backend = {backend!r} is not a libsla backend: use 'auto' or one "
                             f"of {', '.join(_backend_names())} (torch_sla.show_backends() "
                             f"lists them)")
        self.rtol = as_opt_real(rtol, "rtol", minimum=0)
        self.atol = as_opt_real(atol, "atol", minimum=0)
        self.maxiter = as_opt_int(maxiter, "maxiter", minimum=1)
        self.restart = as_opt_int(restart, "restart", minimum=1)
        self.need_determinant = bool(need_determinant)
        self.key = (self.method, self.precond, self.ordering, self.backend, self.rtol,
                    self.atol, self.maxiter, self.restart, self.need_determinant)

    @property
    def method_name(self):
        return METHODS[self.method]

    def to_c(self):
        """The C struct, and the bytes object its backend pointer borrows (keep it alive)."""
        opt = SolverOptions()
        lib.sla_solver_options_init(ctypes.byref(opt))
        opt.method, opt.precond, opt.ordering = self.method, self.precond, self.ordering
        backend = None if self.backend == "auto" else self.backend.encode()
        opt.backend = backend
        if self.rtol is not None:
            opt.rtol = self.rtol
        if self.atol is not None:
            opt.atol = self.atol
        if self.maxiter is not None:
            opt.maxiter = self.maxiter
        if self.restart is not None:
            opt.restart = self.restart
        opt.need_determinant = int(self.need_determinant)
        return opt, backend


_DIRECT_METHODS = frozenset(("cholesky", "ldlt", "lu", "klu"))
# what a direct solve's info says on success (converged, reason 0 = converged), for callers
# that did not ask for it (Solver._info); never written
_DIRECT_OK = SolveInfoC(converged=1)


def _first_args(first):
    """(op, nrhs, B pointer) for sla_solver_create_for / refactor_for from first = (op, B) with
    B the contiguous [batch, n, nrhs] right-hand side of the solve that follows, or None (also
    when this libsla lacks the calls): libsla may solve B along with its condition estimate
    (MUMPS: one triangular solve fewer) and return that X at the next solve with equal B."""
    if first is None or not lib.has("sla_solver_create_for"):
        return None
    op, B = first
    if not B.is_contiguous() or B.dim() != 3 or B.numel() == 0:
        return None
    return (op, B.shape[-1], B.data_ptr())


class _Pin:
    """Held by an autograd context while its backward may still use the solver."""
    __slots__ = ("__weakref__",)


class Solver:
    """Owns a C sla_solver. ``values`` is the [B, nnz] CSR tensor the C object borrows (kept
    alive here: iterative methods read it at every solve)."""

    def __init__(self, pattern, values, dtype_code, batch, options, first=None):
        self.pattern = pattern          # keeps the C pattern alive (the solver retains it too)
        self.options = options
        self.dtype_code = dtype_code
        self.batch = batch
        self.generation = 0
        self._pins = weakref.WeakSet()
        self._opt, self._backend_bytes = options.to_c()
        from ._capi import Matrix
        A = Matrix(pattern.ptr, dtype_code, batch, values.data_ptr())
        out = ctypes.c_void_p()
        f = _first_args(first)
        if f:
            check(lib.sla_solver_create_for(ctypes.byref(A), ctypes.byref(self._opt), *f,
                                            ctypes.byref(out)))
        else:
            check(lib.sla_solver_create(ctypes.byref(A), ctypes.byref(self._opt),
                                        ctypes.byref(out)))
        self.ptr = out.value
        self.values = values
        self._read_method()

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr and lib is not None and getattr(lib, "sla_solver_free", None) is not None:
            self.ptr = None
            lib.sla_solver_free(ctypes.byref(ctypes.c_void_p(ptr)))

    def _read_method(self):
        m = lib.sla_solver_method(self.ptr) if lib.has("sla_solver_method") else self.options.method
        self.method = METHODS[m] if 0 <= m < len(METHODS) else self.options.method_name

    # --- numeric set-up ---------------------------------------------------------------------
    def refactor(self, values, first=None):
        """New values on the same pattern. With method 'auto', libsla re-checks the facts its
        choice rests on (symmetry, sign pattern, definiteness) and decides again when they no
        longer hold, so the method may change here (and describe() says why)."""
        f = _first_args(first)
        try:
            if f:
                check(lib.sla_solver_refactor_for(self.ptr, values.data_ptr(), *f))
            else:
                check(lib.sla_solver_refactor(self.ptr, values.data_ptr()))
        finally:
            self._read_method()
        self.values = values
        self.generation += 1

    def ensure_values(self, values, generation):
        """Before a backward: make sure the factors are those of `values` (refactored back if
        another call refactored this solver since `generation`)."""
        if self.generation != generation:
            self.refactor(values)
        return self.generation

    @property
    def description(self):
        d = lib.sla_solver_describe(self.ptr)
        return d.decode("utf-8", "replace") if d else ""

    # --- pinning (see the module docstring) -------------------------------------------------
    def pin(self):
        p = _Pin()
        self._pins.add(p)
        return p

    def unpin(self, p):
        self._pins.discard(p)

    @property
    def busy(self):
        return len(self._pins) > 0

    # --- solves -----------------------------------------------------------------------------
    def _info(self, want_info):
        """(SolveInfoC to return, pointer to pass). An explicitly chosen direct method whose info
        nobody reads passes NULL: libsla then skips the true-residual SpMV it would measure for
        the info (a success status already means the factors solved the system, converged = 1;
        about 40 % of a solve on the training loop's 3844-unknown matrix). Method auto keeps
        the info: its converged flag may come from the backward-error check."""
        if not want_info and self.options.method_name in _DIRECT_METHODS:
            return _DIRECT_OK, None
        info = SolveInfoC()
        return info, ctypes.byref(info)

    def solve(self, op, nrhs, B, X, want_info=True):
        """op(A) X = B; B, X contiguous [batch, n, nrhs]. Returns (status, SolveInfoC) (convert
        with info_from_c when needed: most calls never look at it)."""
        info, ptr = self._info(want_info)
        st = check(lib.sla_solver_solve(self.ptr, op, nrhs, B.data_ptr(), X.data_ptr(), ptr))
        return st, info

    def solve_vjp(self, op, nrhs, X, G, dB, dvalues, want_info=True):
        info, ptr = self._info(want_info)
        st = check(lib.sla_solver_solve_vjp(
            self.ptr, op, nrhs, X.data_ptr(), G.data_ptr(),
            dB.data_ptr() if dB is not None else None,
            dvalues.data_ptr() if dvalues is not None else None, ptr))
        return st, info

    def lstsq_vjp(self, op, nrhs, B, X, G, dB, dvalues):
        """Backward of the least-squares solve (method lsqr): sla_solver_lstsq_vjp."""
        info = SolveInfoC()
        st = check(lib.sla_solver_lstsq_vjp(
            self.ptr, op, nrhs, B.data_ptr(), X.data_ptr(), G.data_ptr(),
            dB.data_ptr() if dB is not None else None,
            dvalues.data_ptr() if dvalues is not None else None, ctypes.byref(info)))
        return st, info

    def logdet(self):
        """(sign, log|det|) lists; for a complex dtype the sign is the complex phase (libsla
        returns it as {re, im} pairs)."""
        cplx = self.dtype_code in (2, 3)
        sign = (ctypes.c_double * (2 * self.batch if cplx else self.batch))()
        lad = (ctypes.c_double * self.batch)()
        check(lib.sla_solver_logdet(self.ptr, sign, lad))
        if cplx:
            return [complex(sign[2 * b], sign[2 * b + 1]) for b in range(self.batch)], list(lad)
        return list(sign), list(lad)

    def logdet_grad(self, g, dvalues):
        gc = (ctypes.c_double * self.batch)(*g)
        check(lib.sla_solver_logdet_grad(self.ptr, gc, dvalues.data_ptr()))


def info_from_c(info):
    method = METHODS[info.method] if 0 <= info.method < len(METHODS) else str(info.method)
    precond = PRECONDS[info.precond] if 0 <= info.precond < len(PRECONDS) else str(info.precond)
    reason = REASONS[info.reason] if 0 <= info.reason < len(REASONS) else str(info.reason)
    return SolveInfo(method=method, converged=bool(info.converged),
                     iterations=int(info.iterations), residual=float(info.residual_norm),
                     reason=reason, description=info.description.decode("utf-8", "replace"),
                     relative_residual=float(info.relative_residual), preconditioner=precond,
                     rcond=float(info.rcond), normal_residual=float(info.normal_residual))


# ------------------------------------------------------------------------------------------------
# The cache
# ------------------------------------------------------------------------------------------------
_cache = OrderedDict()      # key -> [Solver], least recently used key first
cache_stats = {"hits": 0, "misses": 0}   # refactors of a cached solver / new solvers
_lock = threading.Lock()


def _cache_key(pattern, dtype_code, batch, options):
    return (id(pattern), dtype_code, batch, options.key)


def acquire(pattern, values, dtype_code, batch, options, first=None):
    """(solver, pin): a cached idle solver refactored with `values`, else a new one, pinned for
    the caller (so that no other call, in this thread or another, refactors it meanwhile).
    `values` is a contiguous [batch, nnz] CSR tensor (detached). Release with solver.unpin(pin)
    once no backward will use it."""
    key = _cache_key(pattern, dtype_code, batch, options)
    if SOLVER_CACHE_SIZE > 0:
        with _lock:
            s = next((s for s in _cache.get(key, ()) if s.pattern is pattern and not s.busy),
                     None)
            pin = s.pin() if s is not None else None
            if s is not None:
                _cache.move_to_end(key)
        if s is not None:
            try:
                s.refactor(values, first)
                cache_stats["hits"] += 1
                return s, pin
            except SlaError:
                # method 'auto' decides again inside the refactor when the facts of its choice
                # change (libsla's sla_solver_refactor); an error left here (an explicit method
                # unsuitable for these values, out of memory, ...) drops the solver, and a fresh
                # create raises the definitive error
                s.unpin(pin)
                _forget(key, s)
            except BaseException:
                s.unpin(pin)
                raise
    s = Solver(pattern, values, dtype_code, batch, options, first)
    cache_stats["misses"] += 1
    pin = s.pin()
    if SOLVER_CACHE_SIZE > 0:
        with _lock:
            _cache.setdefault(key, []).append(s)
            _cache.move_to_end(key)
            trim(_cache, SOLVER_CACHE_SIZE)
    return s, pin


def _forget(key, s):
    with _lock:
        lst = _cache.get(key)
        if lst and s in lst:
            lst.remove(s)
            if not lst:
                del _cache[key]


def clear_solver_cache():
    """Drops every cached solver (solvers still saved by autograd graphs stay alive)."""
    with _lock:
        _cache.clear()


def set_solver_cache_size(n):
    """Maximum number of cached solvers, an integer ≥ 0 (0 disables the refactor fast path).
    Returns the old size."""
    global SOLVER_CACHE_SIZE
    n = as_int(n, "set_solver_cache_size: n", minimum=0)
    old, SOLVER_CACHE_SIZE = SOLVER_CACHE_SIZE, n
    with _lock:
        trim(_cache, SOLVER_CACHE_SIZE)
    return old


def solver_cache_info():
    """(number of cached solvers, maximum)."""
    with _lock:
        return sum(len(v) for v in _cache.values()), SOLVER_CACHE_SIZE
