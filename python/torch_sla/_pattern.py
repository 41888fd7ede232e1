"""Sparsity patterns: a Python owner of a C ``sla_pattern`` and the cache that shares them.

A pattern is built once from COO indices (``sla_pattern_from_coo``: validation, CSR structure,
the map from input entries to CSR slots). SparseTensors built on the same index tensors share
one :class:`Pattern` through :func:`pattern_for` — a small cache keyed by shape and entry
count that returns a pattern only for indices equal, entry by entry, to those it was built
from, so a training loop that rebuilds values on fixed indices never rebuilds the pattern, and
indices changed in place (even behind torch's version counter) never get a stale one.
"""
import ctypes
import itertools
import threading
from collections import OrderedDict

import torch

from ._capi import check, lib
from ._lru import trim

PATTERN_CACHE_SIZE = 32


def _borrowed(addr, n, ctype, dtype):
    """A copy, as a torch tensor, of n elements of a C array owned by a pattern."""
    if n == 0:
        return torch.empty(0, dtype=dtype)
    buf = (ctype * n).from_address(addr)
    return torch.frombuffer(buf, dtype=dtype).clone()


# Index tensors lent to libsla patterns (sla_pattern_borrow_csr), by token: libsla calls
# _release(token) when the pattern's last reference goes (the Python Pattern, or a C solver or
# preconditioner that still holds it), and only then are the tensors let go.
_lent = {}
_lent_lock = threading.Lock()
_tokens = itertools.count(1)


def _release(token):
    with _lent_lock:
        _lent.pop(token, None)


_RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_release)


def lent_count():
    """Number of patterns whose index tensors libsla still borrows (for tests)."""
    with _lent_lock:
        return len(_lent)


class Pattern:
    """Owns one reference of a C sla_pattern (freed when this object is collected)."""

    __slots__ = ("ptr", "nrows", "ncols", "nnz", "nnz_input", "has_duplicates", "identity",
                 "_rowind", "_colind", "_transposed", "__weakref__")

    def __init__(self, ptr):
        self.ptr = ptr
        self.nrows = lib.sla_pattern_nrows(ptr)
        self.ncols = lib.sla_pattern_ncols(ptr)
        self.nnz = lib.sla_pattern_nnz(ptr)
        self.nnz_input = lib.sla_pattern_nnz_input(ptr)
        self.has_duplicates = bool(lib.sla_pattern_has_duplicates(ptr))
        self._rowind = self._colind = self._transposed = None
        # input order == CSR order: gather/scatter are the identity and are skipped. libsla
        # knows it for sorted unique CSR and gallery input without building the map (8 bytes
        # per entry, kept); COO input in CSR order is recognised from the map.
        self.identity = (lib.has("sla_pattern_map_is_identity") and
                         bool(lib.sla_pattern_map_is_identity(ptr))) or \
            (self.nnz == self.nnz_input and
             torch.equal(self.map(), torch.arange(self.nnz, dtype=torch.int64)))

    @classmethod
    def from_coo(cls, nrows, ncols, row, col):
        """row, col: contiguous int64 CPU tensors of equal length (checked by the caller)."""
        out = ctypes.c_void_p()
        check(lib.sla_pattern_from_coo(nrows, ncols, row.numel(), row.data_ptr(),
                                       col.data_ptr(), ctypes.byref(out)))
        return cls(out.value)

    @classmethod
    def from_csr(cls, nrows, ncols, rowptr, colind):
        """rowptr [nrows + 1], colind [rowptr[-1]]: contiguous int64 CPU tensors (validated in C;
        sorted unique rows are copied straight into the pattern, int32 columns, identity map)."""
        out = ctypes.c_void_p()
        check(lib.sla_pattern_from_csr(nrows, ncols, rowptr.data_ptr(), colind.data_ptr(),
                                       ctypes.byref(out)))
        return cls(out.value)

    @classmethod
    def borrow_csr(cls, nrows, ncols, rowptr, colind):
        """A pattern ON the tensors (no copy): rowptr [nrows + 1] contiguous int64 (borrowed) or
        int32 (widened into libsla's int64 array, 8 bytes per row), colind [rowptr[-1]]
        contiguous int32 with strictly increasing columns in each row (borrowed). The tensors
        are kept alive until libsla releases the pattern; the caller must not modify them."""
        r64 = rowptr.data_ptr() if rowptr.dtype == torch.int64 else None
        r32 = rowptr.data_ptr() if rowptr.dtype == torch.int32 else None
        token = next(_tokens)
        with _lent_lock:
            _lent[token] = (rowptr, colind)
        out = ctypes.c_void_p()
        try:
            check(lib.sla_pattern_borrow_csr(nrows, ncols, r64, r32, colind.data_ptr(),
                                             ctypes.cast(_RELEASE, ctypes.c_void_p), token,
                                             ctypes.byref(out)))
        except Exception:
            _release(token)         # refused: libsla keeps nothing and will not call back
            raise
        return cls(out.value)

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr and lib is not None and getattr(lib, "sla_pattern_free", None) is not None:
            self.ptr = None
            lib.sla_pattern_free(ctypes.byref(ctypes.c_void_p(ptr)))

    # --- copies of the C arrays -----------------------------------------------------------------
    def map(self):
        """[nnz_input] int64: CSR slot of each input entry."""
        return _borrowed(lib.sla_pattern_map(self.ptr), self.nnz_input, ctypes.c_int64,
                         torch.int64)

    def rowptr(self):
        return _borrowed(lib.sla_pattern_rowptr(self.ptr), self.nrows + 1, ctypes.c_int64,
                         torch.int64)

    def csr_rows(self):
        """[nnz] int64 row index of each CSR slot (cached)."""
        if self._rowind is None:
            addr = lib.sla_pattern_rowind(self.ptr)
            if not addr and self.nnz:
                raise MemoryError("sla_pattern_rowind: allocation failed")
            self._rowind = _borrowed(addr, self.nnz, ctypes.c_int64, torch.int64)
        return self._rowind

    def csr_cols(self):
        """[nnz] int64 column index of each CSR slot (cached)."""
        if self._colind is None:
            self._colind = _borrowed(lib.sla_pattern_colind(self.ptr), self.nnz, ctypes.c_int32,
                                     torch.int32).to(torch.int64)
        return self._colind

    def is_structurally_symmetric(self):
        return bool(lib.sla_pattern_is_structurally_symmetric(self.ptr))

    def __repr__(self):
        return (f"Pattern({self.nrows}×{self.ncols}, nnz={self.nnz}, "
                f"input entries={self.nnz_input})")


def _memcmp_fn():
    fn = getattr(lib.libc, "memcmp", None) if lib.libc is not None else None
    if fn is not None:
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return fn


_memcmp = _memcmp_fn()


def _same(a, b):
    """Equal contents of two contiguous int64 CPU tensors of one length: memcmp (stops at the
    first difference; 0.2 ms for 8 MB where torch.equal takes 0.8 ms), else torch.equal."""
    if _memcmp is None or a.numel() == 0:
        return torch.equal(a, b)
    return _memcmp(a.data_ptr(), b.data_ptr(), a.numel() * a.element_size()) == 0


class _Entry:
    """A cached pattern and private copies of the indices it was built from. The caller's
    tensors may change without torch's version counter seeing it (a write through
    ``t.numpy()``, through ``t.data``, or to NumPy memory shared with ``torch.from_numpy``), so
    neither their identity nor their version says that the contents are still those of the
    pattern: every hit compares contents with these copies (memory-bound: about 0.5 ms for
    1M entries, against 25–50 ms to build the pattern; bench/pattern_cache.py)."""
    __slots__ = ("row", "col", "pattern")

    def __init__(self, row, col, pattern):
        self.row, self.col, self.pattern = row.clone(), col.clone(), pattern

    def matches(self, row, col):
        return _same(self.row, row) and _same(self.col, col)


_cache = OrderedDict()     # (nrows, ncols, nnz_input) -> [_Entry], least recently used first
_cache_lock = threading.Lock()


def pattern_for(nrows, ncols, row, col):
    """The pattern of (row, col) indices (int64, contiguous, CPU): a cached one built from
    equal indices (compared entry by entry, whatever tensors hold them), else built in C and
    cached."""
    key = (nrows, ncols, row.numel())
    with _cache_lock:
        entries = _cache.get(key, [])
        for e in entries:
            if e.matches(row, col):
                entries.remove(e)             # most recently used last (trim drops the first)
                entries.append(e)
                _cache.move_to_end(key)
                return e.pattern
    pattern = Pattern.from_coo(nrows, ncols, row, col)
    if PATTERN_CACHE_SIZE > 0:
        with _cache_lock:
            _cache.setdefault(key, []).append(_Entry(row, col, pattern))
            _cache.move_to_end(key)
            trim(_cache, PATTERN_CACHE_SIZE)
    return pattern


def clear_pattern_cache():
    """Drops every cached pattern (patterns still used by live tensors stay alive)."""
    with _cache_lock:
        _cache.clear()
