"""SparseTensor: a (batch of) sparse matrices on one pattern, differentiable in its values.

API follows the public torch-sla library (``SparseTensor(values, row_indices, col_indices,
shape)``, ``A @ x``, ``A.solve(b)``, ``A.eigsh(k)``, ``A.det()`` ...) so its users can switch.
All numerics run in libsla; see docs/python.md.
"""
import math
import numbers

import torch

from . import _eigsh_functions as EF
from . import _functions as F
from . import _solve_functions as SF
from ._args import (as_int, as_opt_int, as_opt_real, as_real, as_shape, batch_index,
                    shape_str)
from ._capi import ITERATIVE, SLA_OP_N, SLA_OP_T, Matrix, check, lib
from ._pattern import Pattern, pattern_for
from ._solver import Options
from ._st_spectral import SpectralMixin
from ._st_surface import SurfaceMixin, _is_scalar

_FLOAT_DTYPES = (torch.float64, torch.float32)
# values: the real dtypes and the complex ones (complex support: @, solve, slogdet/logdet/det
# with first-order gradients in torch's convention; docs/complex.md)
_VALUE_DTYPES = _FLOAT_DTYPES + (torch.complex128, torch.complex64)


def _check_cpu(t, what):
    if t.device.type != "cpu":
        raise ValueError(f"{what} is on {t.device}; SparseTensor runs on the CPU (use .cpu()); "
                         f"CUDA tensors: torch_sla.spsolve(val, row, col, shape, b) solves on "
                         f"libsla's CUDA backend")


def _as_index(t, what):
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    _check_cpu(t, what)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{what} must be an integer tensor, got {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"{what} must be 1-D, got shape {tuple(t.shape)}")
    if t.dtype != torch.int64:
        t = t.to(torch.int64)
    return t.contiguous()


def _as_index_any(t, what):
    """A 1-D integer CPU tensor of the caller's width (no int64 copy)."""
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    _check_cpu(t, what)
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{what} must be an integer tensor, got {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"{what} must be 1-D, got shape {tuple(t.shape)}")
    return t


def _check_int32_columns(col, N):
    """Columns that the int32 conversion of from_csr(borrow=True) would wrap are refused first
    (a wrapped column could land in range: a wrong matrix, no error)."""
    if col.dtype == torch.int32 or col.numel() == 0:
        return
    bad = ((col < 0) | (col >= N)).nonzero()
    if bad.numel():
        k = int(bad[0])
        raise IndexError(f"colind[{k}] = {int(col[k])} is out of range [0, {N})")


def _check_dense(x, dtype, what):
    """x checked (a CPU tensor of the matrix's dtype), its lazy conj/neg bits applied."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{what} must be a torch.Tensor, got {type(x).__name__}")
    _check_cpu(x, what)
    if x.dtype != dtype:
        raise TypeError(f"{what} has dtype {x.dtype} but the matrix has {dtype}; convert one "
                        f"of them (e.g. x.to({dtype}))")
    return F.materialize(x)


class SparseTensor(SurfaceMixin, SpectralMixin):
    """Sparse matrix [M, N] or batch of matrices [*batch, M, N] sharing one pattern.

    Parameters
    ----------
    values : Tensor [nnz] or [*batch, nnz], float64 or float32, CPU
        Entries in the order of the index arrays (any order; duplicates are summed).
    row_indices, col_indices : integer Tensors [nnz]
        0-based COO indices (checked in C; an out-of-range index raises ValueError naming it).
    shape : tuple (*batch, M, N)

    The C pattern (CSR structure) is built once and shared: by tensors derived from this one
    (``T()``, ``with_values``, arithmetic) and, through a small cache keyed by the index tensors,
    by SparseTensors built later on the same indices.

    At scale prefer CSR input (``from_csr``, int32 accepted) or ``torch_sla.gallery``: their
    ``row_indices`` / ``col_indices`` are computed on first access only, and the pattern cache
    (which keeps private copies of COO indices) is not used (docs/scale.md).
    """

    __array_priority__ = 1000    # so that ndarray @ A defers to __rmatmul__

    def __init__(self, values, row_indices, col_indices, shape, sparse_dim=(-2, -1),
                 _pattern=None, _coo=None):
        shape = as_shape(shape)
        if tuple(sparse_dim) not in ((-2, -1), (len(shape) - 2, len(shape) - 1)):
            raise NotImplementedError("torch_sla supports sparse_dim=(-2, -1) only (no block "
                                      "dimensions after the matrix dimensions)")
        if not isinstance(values, torch.Tensor):
            values = torch.as_tensor(values)
        _check_cpu(values, "values")
        if values.dtype not in _VALUE_DTYPES:
            raise TypeError(f"values must be float64, float32, complex128 or complex64, got "
                            f"{values.dtype}")
        if row_indices is None and col_indices is None and _pattern is not None:
            # internal: COO indices computed on first access (CSR input, gallery); _coo is the
            # caller's (crow, col) tensors, or None to read them from the pattern (CSR order)
            row = col = None
            nnz = _pattern.nnz_input
        else:
            row = _as_index(row_indices, "row_indices")
            col = _as_index(col_indices, "col_indices")
            if row.numel() != col.numel():
                raise ValueError(f"row_indices has {row.numel()} entries but col_indices has "
                                 f"{col.numel()}")
            nnz = row.numel()
        expect = shape[:-2] + (nnz,)
        if tuple(values.shape) != expect:
            raise ValueError(f"values has shape {shape_str(values.shape)}; for shape "
                             f"{shape_str(shape)} with {nnz} entries it must be "
                             f"{shape_str(expect)}")
        self.values = F.materialize(values)      # C reads memory: no lazy conj/neg bit
        self._row, self._col, self._coo = row, col, _coo
        self._nnz = nnz
        self._shape = shape
        self._pattern = _pattern if _pattern is not None else \
            pattern_for(shape[-2], shape[-1], row, col)
        self._csr_cache = None

    @property
    def row_indices(self):
        """[nnz] int64 row index of each entry. For tensors built from CSR (``from_csr``,
        ``from_torch_sparse`` of a CSR tensor) or by ``torch_sla.gallery`` it is computed on first
        access (8 bytes per entry, then kept), not at construction."""
        if self._row is None:
            self._row, self._col = self._lazy_coo()
        return self._row

    @property
    def col_indices(self):
        """[nnz] int64 column index of each entry (computed on first access, as row_indices)."""
        if self._col is None:
            self._row, self._col = self._lazy_coo()
        return self._col

    def _lazy_coo(self):
        if self._coo is None:
            p = self._pattern
            return p.csr_rows(), p.csr_cols()
        crow, col = self._coo
        row = torch.repeat_interleave(torch.arange(self._shape[-2]), crow[1:] - crow[:-1])
        return row, col.to(torch.int64)

    # ------------------------------------------------------------------------------------------
    # Construction
    # ------------------------------------------------------------------------------------------
    def with_values(self, values):
        """A SparseTensor on the same pattern (no pattern work) with new values of shape
        [*batch, nnz] (the batch may differ)."""
        if not isinstance(values, torch.Tensor):
            raise TypeError(f"values must be a torch.Tensor, got {type(values).__name__}")
        if values.dim() == 0:
            raise ValueError(f"values must have shape [*batch, {self.nnz}], got a 0-d tensor")
        shape = tuple(values.shape[:-1]) + self.sparse_shape
        return SparseTensor(values, self._row, self._col, shape, _pattern=self._pattern,
                            _coo=self._coo)

    @classmethod
    def from_dense(cls, A, sparse_dim=(-2, -1)):
        """From a dense [*batch, M, N] tensor; keeps the entries that are nonzero in any batch
        element. Values stay differentiable with respect to A; as with torch's
        ``Tensor.to_sparse()``, entries that are zero in A are not part of the pattern and get
        no gradient (build the SparseTensor on the full pattern to differentiate there)."""
        if not isinstance(A, torch.Tensor):
            A = torch.as_tensor(A)
        _check_cpu(A, "A")
        if A.dtype not in _VALUE_DTYPES:
            raise TypeError(f"from_dense: A must be float64, float32, complex128 or complex64, "
                            f"got {A.dtype}")
        if A.dim() < 2:
            raise ValueError(f"from_dense needs a [*batch, M, N] tensor, got shape "
                             f"{tuple(A.shape)}")
        flat = A.reshape(-1, A.shape[-2], A.shape[-1])
        mask = (flat != 0).any(dim=0)
        row, col = mask.nonzero(as_tuple=True)
        values = flat[:, row, col].reshape(*A.shape[:-2], row.numel())
        return cls(values, row, col, tuple(A.shape), sparse_dim)

    @classmethod
    def from_csr(cls, values, crow_indices, col_indices, shape, borrow=False):
        """From CSR arrays: values [*batch, nnz] (float64/float32/complex, CPU), crow_indices
        [M + 1] (0 first, non-decreasing, last = nnz) and col_indices [nnz] in [0, N), integer
        tensors of any width (int32 is not widened except transiently while the C pattern is
        built, for col_indices). Columns within a row may come in any order (they are sorted in
        the pattern; repeats are summed like COO duplicates); values stay in the given order and
        differentiable. Sorted unique rows are copied straight into libsla's pattern (int64 row
        pointers, int32 columns) and need no gather. The inputs are neither modified nor
        copied into this tensor: row_indices / col_indices (int64 COO, 16 bytes per entry)
        are computed on first access. CSR patterns are not shared through the COO pattern cache.

        borrow=True: libsla's pattern is built ON the index tensors, zero-copy
        (``sla_pattern_borrow_csr``): an int32 contiguous col_indices is used where it lies (any
        other is converted to int32 once), an int64 crow_indices too (an int32 one is widened
        into libsla's int64 row pointers, 8 bytes per row). The tensors are kept alive until
        libsla drops the pattern; they must not be modified meanwhile (the pattern is checked
        once). Columns must increase strictly within each row (else ValueError: use the
        default copy, which sorts and merges). At 4M unknowns this takes the 28 B/unknown
        pattern copy and the transient int64 widening off from_csr (docs/scale.md).

        Errors: TypeError (dtype), ValueError naming crow_indices / col_indices (length, a
        decreasing row pointer, a column out of range; with borrow=True an unsorted row)."""
        shape = as_shape(shape)
        if len(shape) < 2:
            raise ValueError(f"shape must be (*batch, M, N), got {shape_str(shape)}")
        M, N = shape[-2], shape[-1]
        crow = _as_index_any(crow_indices, "crow_indices")
        col = _as_index_any(col_indices, "col_indices")
        if crow.numel() != M + 1:
            raise ValueError(f"crow_indices has {crow.numel()} entries; for {M} rows it must "
                             f"have {M + 1}")
        last = int(crow[-1])
        if last != col.numel():
            raise ValueError(f"crow_indices[-1] = {last} but col_indices has {col.numel()} "
                             f"entries")
        try:
            if borrow:
                _check_int32_columns(col, N)
                rp = crow if crow.dtype in (torch.int32, torch.int64) else crow.to(torch.int64)
                pattern = Pattern.borrow_csr(M, N, rp.contiguous(),
                                             col.to(torch.int32).contiguous())
            else:
                pattern = Pattern.from_csr(M, N, crow.to(torch.int64).contiguous(),
                                           col.to(torch.int64).contiguous())
        except (ValueError, IndexError) as e:
            msg = str(e).replace("rowptr", "crow_indices").replace("colind", "col_indices")
            raise type(e)(f"from_csr: {msg}") from None
        return cls(values, None, None, shape, _pattern=pattern, _coo=(crow, col))

    @classmethod
    def from_torch_sparse(cls, A):
        """From a 2-D torch sparse COO or CSR tensor (values stay differentiable)."""
        if not isinstance(A, torch.Tensor):
            raise TypeError(f"from_torch_sparse needs a torch sparse tensor, got "
                            f"{type(A).__name__}")
        if A.layout == torch.sparse_csr:
            if A.dim() != 2:
                raise ValueError(f"from_torch_sparse supports 2-D sparse tensors, got shape "
                                 f"{shape_str(A.shape)}")
            return cls.from_csr(A.values(), A.crow_indices(), A.col_indices(), tuple(A.shape))
        if A.layout != torch.sparse_coo:
            raise TypeError(f"expected a torch sparse COO or CSR tensor, got layout {A.layout}")
        if A.sparse_dim() != 2 or A.dense_dim() != 0:
            raise ValueError("from_torch_sparse supports 2-D sparse tensors without dense "
                             "dimensions")
        A = A.coalesce()
        idx = A.indices()
        return cls(A.values(), idx[0], idx[1], tuple(A.shape))

    @classmethod
    def from_scipy(cls, S, dtype=None):
        """From any scipy.sparse matrix or array (converted to COO, duplicates kept). dtype:
        torch.float64, float32, complex128 or complex64 (default: the data's precision; complex
        data gives complex128, complex64 for complex64 data). A real dtype for complex data
        raises TypeError (the imaginary part is never dropped silently)."""
        import numpy as np
        if not callable(getattr(S, "tocoo", None)):
            raise TypeError(f"from_scipy needs a scipy.sparse matrix or array, got "
                            f"{type(S).__name__} (use from_dense for dense arrays)")
        if dtype is not None and dtype not in _VALUE_DTYPES:
            raise TypeError(f"dtype must be torch.float64, float32, complex128 or complex64, "
                            f"got {dtype!r}")
        coo = S.tocoo()
        data = np.asarray(coo.data)
        if np.iscomplexobj(data):
            if dtype is not None and not dtype.is_complex:
                raise TypeError(f"from_scipy: the matrix has complex dtype {data.dtype} but "
                                f"dtype={dtype} is real (take .real explicitly if the "
                                f"imaginary part is meant to be dropped)")
            if dtype is None:
                dtype = torch.complex64 if data.dtype == np.complex64 else torch.complex128
        if not (np.issubdtype(data.dtype, np.number) or data.dtype == np.bool_):
            raise TypeError(f"from_scipy: unsupported data dtype {data.dtype}")
        if dtype is None:
            dtype = torch.float32 if data.dtype == np.float32 else torch.float64
        values = torch.as_tensor(data).to(dtype)
        row = torch.as_tensor(np.asarray(coo.row, dtype=np.int64))
        col = torch.as_tensor(np.asarray(coo.col, dtype=np.int64))
        return cls(values, row, col, tuple(coo.shape))

    # ------------------------------------------------------------------------------------------
    # Properties
    # ------------------------------------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @property
    def sparse_shape(self):
        return self._shape[-2:]

    @property
    def batch_shape(self):
        return self._shape[:-2]

    @property
    def batch_size(self):
        return math.prod(self.batch_shape)

    @property
    def is_batched(self):
        return len(self._shape) > 2

    @property
    def ndim(self):
        return len(self._shape)

    @property
    def nnz(self):
        """Number of stored entries as given (duplicates counted)."""
        return self._nnz

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    @property
    def is_cuda(self):
        return False

    @property
    def is_square(self):
        return self._shape[-1] == self._shape[-2]

    @property
    def requires_grad(self):
        return self.values.requires_grad

    @property
    def grad(self):
        return self.values.grad

    @property
    def pattern(self):
        """The shared C pattern (torch_sla._pattern.Pattern)."""
        return self._pattern

    def requires_grad_(self, requires_grad=True):
        self.values.requires_grad_(requires_grad)
        return self

    def detach(self):
        return self.with_values(self.values.detach())

    def clone(self):
        return self.with_values(self.values.clone())

    def to(self, *args, device=None, dtype=None):
        """A.to(device), A.to(dtype), A.to(device, dtype) or A.to(dtype, device) (torch-sla's
        order is (device, dtype); either is accepted, as keywords too). device must be the
        CPU; dtype float64 or float32."""
        if len(args) > 2:
            raise TypeError(f"to() takes at most a device and a dtype, got {len(args)} arguments")
        for a in args:
            if isinstance(a, torch.dtype):
                if dtype is not None:
                    raise TypeError("to(): two dtypes given")
                dtype = a
            elif a is not None:
                if device is not None:
                    raise TypeError("to(): two devices given")
                device = a
        if device is not None and torch.device(device).type != "cpu":
            raise ValueError("torch_sla runs on the CPU (libsla); device must be 'cpu'")
        if dtype is not None and dtype not in _VALUE_DTYPES:
            raise TypeError(f"dtype must be torch.float64, float32, complex128 or complex64, "
                            f"got {dtype!r}")
        if dtype is not None and self.dtype.is_complex and not dtype.is_complex:
            raise TypeError(f"to({dtype}) would drop the imaginary part of {self.dtype} "
                            f"values; convert the values explicitly (A.with_values(A.values.real))")
        return self if dtype is None or dtype == self.dtype else \
            self.with_values(self.values.to(dtype))

    def double(self):
        return self.to(torch.float64)

    def float(self):
        return self.to(torch.float32)

    def cpu(self):
        return self

    def __repr__(self):
        return (f"SparseTensor(shape={self._shape}, nnz={self.nnz}, dtype={self.dtype}, "
                f"device=cpu)")

    # ------------------------------------------------------------------------------------------
    # CSR values (internal)
    # ------------------------------------------------------------------------------------------
    def _csr(self):
        """Values in CSR order as a contiguous [B, nnz_unique] tensor, differentiable: a view of
        the values when they are already in CSR order, else one C gather. Cached while the
        values are unchanged (version counter) and the grad mode is the same."""
        values = self.values
        key = (values._version, torch.is_grad_enabled() and values.requires_grad)
        cache = self._csr_cache
        if cache is not None and cache[0] == key:
            return cache[1]
        B = self.batch_size if self.is_batched else 1
        flat = values.reshape(B, self.nnz).contiguous()
        out = flat if self._pattern.identity else F.gather(flat, self._pattern)
        self._csr_cache = (key, out)
        return out

    def _unflatten(self, t, tail):
        """[B, *tail] → [*batch, *tail] (or [*tail] when not batched)."""
        return t.reshape(tuple(self.batch_shape) + tuple(tail))

    # ------------------------------------------------------------------------------------------
    # Conversions
    # ------------------------------------------------------------------------------------------
    def to_dense(self, batch_idx=None):
        """Dense [*batch, M, N] (differentiable); with batch_idx (an int of the flattened batch
        or a tuple of one int per batch dimension, torch-sla's keyword) the one matrix [M, N].
        Note: torch-sla's to_dense() of a batch gives the first item; torch_sla gives all."""
        d = self._unflatten(F.ToDense.apply(self._csr(), self._pattern), self.sparse_shape)
        if batch_idx is None:
            return d
        j = batch_index(batch_idx, self.batch_shape, "batch_idx")
        return d.reshape(-1, *self.sparse_shape)[j]

    def to_torch_sparse(self, batch_idx=None):
        """torch sparse COO tensor (indices as given, not coalesced): [*batch → B, M, N] for a
        batch, or batch element batch_idx ([M, N])."""
        if self.is_batched and batch_idx is not None:
            j = batch_index(batch_idx, self.batch_shape, "batch_idx")
            return torch.sparse_coo_tensor(torch.stack([self.row_indices, self.col_indices]),
                                           self.values.reshape(-1, self.nnz)[j],
                                           self.sparse_shape)
        if self.is_batched:
            B = self.batch_size
            b = torch.arange(B).repeat_interleave(self.nnz)
            idx = torch.stack([b, self.row_indices.repeat(B), self.col_indices.repeat(B)])
            t = torch.sparse_coo_tensor(idx, self.values.reshape(-1), (B,) + self.sparse_shape)
            return t
        return torch.sparse_coo_tensor(torch.stack([self.row_indices, self.col_indices]),
                                       self.values, self._shape)

    def to_csr(self, batch_idx=None):
        """torch sparse CSR tensor of the matrix (or of batch element batch_idx), duplicates
        summed."""
        if self.is_batched and batch_idx is None:
            raise ValueError("to_csr() of a batch needs batch_idx= (one matrix)")
        j = batch_index(batch_idx, self.batch_shape, "batch_idx") if self.is_batched else 0
        p = self._pattern
        return torch.sparse_csr_tensor(p.rowptr(), p.csr_cols(), self._csr()[j],
                                       self.sparse_shape)

    def to_scipy(self, index=None):
        """scipy.sparse.csr_matrix of batch element `index` of a batched tensor: an int (of
        the flattened batch) or a tuple of one int per batch dimension."""
        import scipy.sparse as sp
        p = self._pattern
        vals = self._csr().detach()[batch_index(index, self.batch_shape)]
        return sp.csr_matrix((vals.numpy().copy(), p.csr_cols().numpy(), p.rowptr().numpy()),
                             shape=self.sparse_shape)

    def T(self):
        """Transpose of the matrix dimensions (values shared, differentiable). The transposed
        pattern is built once and cached."""
        p = self._pattern
        if p._transposed is None:
            p._transposed = pattern_for(self._shape[-1], self._shape[-2], self.col_indices,
                                        self.row_indices)
        shape = self.batch_shape + (self._shape[-1], self._shape[-2])
        return SparseTensor(self.values, self.col_indices, self.row_indices, shape,
                            _pattern=p._transposed)

    t = T

    # ------------------------------------------------------------------------------------------
    # Properties of the values
    # ------------------------------------------------------------------------------------------
    def is_symmetric(self, atol=1e-8, rtol=1e-5, force_recompute=False):
        """Numerical symmetry |a_ij − a_ji| ≤ atol + rtol·max(|a_ij|, |a_ji|) (libsla).
        Returns a bool tensor: [] or [*batch]. The answer is cached while the values are
        unchanged (torch's version counter; force_recompute=True asks again)."""
        atol = as_real(atol, "atol", minimum=0)
        rtol = as_real(rtol, "rtol", minimum=0)
        key = (id(self.values), self.values._version, atol, rtol)
        cached = getattr(self, "_sym_cache", None)
        if not force_recompute and cached is not None and cached[0] == key:
            return cached[1]
        out = self._is_symmetric(atol, rtol)
        self._sym_cache = (key, out)
        return out

    def _is_symmetric(self, atol, rtol, hermitian=False):
        import ctypes
        test = lib.sla_matrix_is_hermitian if hermitian else lib.sla_matrix_is_symmetric
        vals = self._csr().detach()
        out = []
        esize = vals.element_size() * vals.shape[1]
        for b in range(vals.shape[0]):
            A = Matrix(self._pattern.ptr, F.DTYPE_CODE[vals.dtype], 1,
                         vals.data_ptr() + b * esize)
            flag = ctypes.c_int()
            check(test(ctypes.byref(A), rtol, atol, ctypes.byref(flag)))
            out.append(bool(flag.value))
        return self._unflatten(torch.tensor(out, dtype=torch.bool), ())

    def norm(self, ord="fro"):
        """Matrix norm per batch element: 'fro' (differentiable), 1 (max column sum),
        inf (max row sum), 'max' (max |a_ij|), 2 (spectral norm σmax: max|λ| by eigsh for a
        symmetric matrix, else √λmax(AᵀA); differentiable)."""
        if isinstance(ord, bool) or not isinstance(ord, (str, numbers.Real, type(None))):
            raise ValueError(f"ord = {ord!r}: use 'fro', 1, inf or 'max'")
        if ord in ("fro", "f", "F", None):
            which = "F"
        elif ord in (1, "1"):
            which = "1"
        elif ord in (math.inf, "inf"):
            which = "I"
        elif ord == "max":
            which = "M"
        elif ord == 2:
            return self._spectral_norm()
        else:
            raise ValueError(f"ord = {ord!r}: use 'fro', 1, inf or 'max'")
        vals = self._csr()
        if vals.shape[0] == 0:                       # empty batch: libsla needs batch ≥ 1
            out = vals.sum(-1)
        elif which == "F":
            out = F.FroNorm.apply(vals, self._pattern)
        else:
            out = F.matrix_norm(self._pattern, vals.detach(), which)
        return self._unflatten(out, ())

    # ------------------------------------------------------------------------------------------
    # Products
    # ------------------------------------------------------------------------------------------
    def _spmv(self, x, op):
        """op(A) applied to columns: returns [B, m_op, k] from x [n_op, k] or [B, n_op, k]."""
        batched = 1 if x.dim() == 3 else 0
        return F.SpMV.apply(self._csr(), x.contiguous(), self._pattern, op, batched)

    def matmul(self, x):
        """A @ x. Unbatched A: x [N] → [M]; x [..., N, K] → [..., M, K].
        Batched A [*batch, M, N]: x [*batch, N] → [*batch, M]; x [*batch, N, K] →
        [*batch, M, K]; x [N] or [N, K] is shared by every matrix of the batch."""
        if isinstance(x, SparseTensor):
            return self._spgemm(x)
        x = _check_dense(x, self.dtype, "x")
        M, N = self.sparse_shape
        if not self.is_batched:
            if x.dim() == 0 or x.shape[-1 if x.dim() == 1 else -2] != N:
                raise ValueError(f"A @ x: A is {M}×{N} but x has shape {shape_str(x.shape)}")
            if x.dim() == 1:
                return self._spmv(x.reshape(N, 1), SLA_OP_N).reshape(M)
            rest = x.shape[:-2]
            cols = x.movedim(-2, 0).reshape(N, -1)          # [N, (...)·K]
            y = self._spmv(cols, SLA_OP_N).reshape(M, *rest, x.shape[-1])
            return y.movedim(0, -2)
        bs, B = self.batch_shape, self.batch_size
        xs = tuple(x.shape)
        if xs == bs + (N,):
            return self._spmv(x.reshape(B, N, 1), SLA_OP_N).reshape(*bs, M)
        if len(xs) == len(bs) + 2 and xs[:-1] == bs + (N,):
            return self._spmv(x.reshape(B, N, xs[-1]), SLA_OP_N).reshape(*bs, M, xs[-1])
        if xs == (N,):
            return self._spmv(x.reshape(N, 1), SLA_OP_N).reshape(*bs, M)
        if len(xs) == 2 and xs[0] == N:
            return self._spmv(x, SLA_OP_N).reshape(*bs, M, xs[1])
        raise ValueError(f"A @ x: A has shape {shape_str(self._shape)}; x must be "
                         f"{shape_str(bs + (N,))}, {shape_str(bs + (N, 'K'))}, ({N},) or "
                         f"({N}, K), got {shape_str(xs)}")

    def _spgemm(self, other):
        """A @ B for two SparseTensors (libsla SpGEMM): a SparseTensor on the pattern of the
        product, differentiable in the values of both (a batch of either broadcasts)."""
        from ._spgemm_functions import SpGEMM, product_pattern
        if other.dtype != self.dtype:
            raise TypeError(f"A @ B: dtypes {self.dtype} and {other.dtype} differ")
        if self.sparse_shape[1] != other.sparse_shape[0]:
            raise ValueError(f"A @ B: A is {self.sparse_shape[0]}×{self.sparse_shape[1]}, B is "
                             f"{other.sparse_shape[0]}×{other.sparse_shape[1]}")
        if self.is_batched and other.is_batched and self.batch_shape != other.batch_shape:
            raise ValueError(f"A @ B: batch shapes {self.batch_shape} and {other.batch_shape} "
                             f"differ")
        pc = product_pattern(self._pattern, other._pattern)
        c = SpGEMM.apply(self._csr(), other._csr(), self._pattern, other._pattern, pc)
        batch = self.batch_shape if self.is_batched else other.batch_shape
        return SparseTensor(c.reshape(tuple(batch) + (pc.nnz,)), pc.csr_rows(), pc.csr_cols(),
                            tuple(batch) + (self.sparse_shape[0], other.sparse_shape[1]),
                            _pattern=pc)

    def rmatmul(self, x):
        """x @ A. Unbatched A: x [..., M] → [..., N] (each row times A).
        Batched A: x [*batch, M] → [*batch, N]; x [*batch, K, M] → [*batch, K, N];
        x [M] or [K, M] is shared by every matrix of the batch."""
        x = _check_dense(x, self.dtype, "x")
        M, N = self.sparse_shape
        if not self.is_batched:
            if x.dim() == 0 or x.shape[-1] != M:
                raise ValueError(f"x @ A: A is {M}×{N} but x has shape {shape_str(x.shape)}")
            rows = x.reshape(-1, M)                          # [R, M]
            y = self._spmv(rows.t(), SLA_OP_T)               # [1, N, R] = Aᵀ rowsᵀ
            return y.reshape(N, -1).t().reshape(*x.shape[:-1], N)
        bs, B = self.batch_shape, self.batch_size
        xs = tuple(x.shape)
        if xs == bs + (M,):
            return self._spmv(x.reshape(B, M, 1), SLA_OP_T).reshape(*bs, N)
        if len(xs) == len(bs) + 2 and xs[:-2] == bs and xs[-1] == M:
            y = self._spmv(x.reshape(B, xs[-2], M).transpose(1, 2), SLA_OP_T)   # [B, N, K]
            return y.transpose(1, 2).reshape(*bs, xs[-2], N)
        if xs == (M,):
            return self._spmv(x.reshape(M, 1), SLA_OP_T).reshape(*bs, N)
        if len(xs) == 2 and xs[1] == M:
            y = self._spmv(x.t(), SLA_OP_T)                  # [B, N, K]
            return y.transpose(1, 2).reshape(*bs, xs[0], N)
        raise ValueError(f"x @ A: A has shape {shape_str(self._shape)}; x must be "
                         f"{shape_str(bs + (M,))}, {shape_str(bs + ('K', M))}, ({M},) or "
                         f"(K, {M}), got {shape_str(xs)}")

    def __matmul__(self, x):
        return self.matmul(x)

    def __rmatmul__(self, x):
        if not isinstance(x, torch.Tensor):
            # an ndarray or list: converted to the matrix's dtype, but never by dropping an
            # imaginary part or a bool meaning
            x = torch.as_tensor(x)
            if x.dtype.is_complex or x.dtype == torch.bool:
                raise TypeError(f"x @ A: x has dtype {x.dtype}; A has {self.dtype}")
            x = x.to(self.dtype)
        return self.rmatmul(x)

    # ------------------------------------------------------------------------------------------
    # Linear solve
    # ------------------------------------------------------------------------------------------
    def _rhs(self, b):
        """b → ([B or 1, M, K] tensor, output shape of x): b has A's M rows, x its N columns."""
        b = _check_dense(b, self.dtype, "b")
        M, N = self.sparse_shape
        bs = tuple(b.shape)
        if not self.is_batched:
            if len(bs) == 1 and bs[0] == M:
                return b.reshape(1, M, 1), (N,)
            if len(bs) == 2 and bs[0] == M:
                return b.reshape(1, M, bs[1]), (N, bs[1])
            raise ValueError(f"solve: A is {M}×{N}; b must have shape ({M},) or ({M}, K), "
                             f"got {shape_str(bs)}")
        batch, B = self.batch_shape, self.batch_size
        if bs == batch + (M,):
            return b.reshape(B, M, 1), batch + (N,)
        if len(bs) == len(batch) + 2 and bs[:-1] == batch + (M,):
            return b.reshape(B, M, bs[-1]), batch + (N, bs[-1])
        if bs == (M,):
            return b.reshape(1, M, 1).expand(B, M, 1), batch + (N,)
        if len(bs) == 2 and bs[0] == M:
            return b.reshape(1, M, bs[1]).expand(B, M, bs[1]), batch + (N, bs[1])
        raise ValueError(f"solve: A has shape {shape_str(self._shape)}; b must be "
                         f"{shape_str(batch + (M,))}, {shape_str(batch + (M, 'K'))}, ({M},) "
                         f"or ({M}, K), got {shape_str(bs)}")

    def solve(self, b, backend="auto", method="auto", atol=None, maxiter=None, tol=None,
              verbose=False, *, rtol=None, preconditioner=None, restart=None, ordering=None,
              return_info=False, strict=False, is_symmetric=None, is_spd=None,
              matrix_type=None, mixed_precision=False, x0=None):
        """Solves A x = b (each matrix of a batch with its right-hand side), differentiable
        with respect to the values and b (adjoint method: one transposed solve in backward,
        on the same factors / preconditioner).

        Positional order as torch-sla's: ``solve(b, backend, method, atol, maxiter, tol,
        verbose)``; the rest are keywords.

        backend : 'auto', a libsla backend name (see show_backends()), or a torch-sla name
            ('scipy', 'pytorch', 'cudss', 'strumpack', 'pyamg', 'amgx', 'eigen', 'cupy'),
            which runs on libsla (docs/migrating.md; info.description says what it became).
        method : 'auto', 'cholesky', 'ldlt', 'lu', 'klu', 'cg', 'bicgstab', 'gmres', 'minres',
            'lsqr', 'cocg' (complex symmetric A = Aᵀ), or a torch-sla name ('umfpack', 'superlu', 'pcg', 'pbicgstab', 'fgmres',
            'lgmres', 'cgs', 'qmr', 'amg', 'cudss_lu', ...). A rectangular A (M × N, M ≠ N)
            is solved in the least-squares sense, x = argmin ‖b − A x‖₂ (the minimum-norm one
            when A is rank deficient), by LSQR (method 'auto' or 'lsqr'; b has M rows, x N);
            its backward is the gradient of that x (sla_solver_lstsq_vjp, docs/krylov.md).
            (The pre-torch-sla order ``solve(b, method)`` still works: a method name given as
            backend is taken as the method.)
        rtol, atol, maxiter : stopping rule of iterative methods,
            ‖b − A x‖₂ ≤ max(rtol·‖b‖₂, atol) (libsla defaults: rtol 1e-10, atol 0,
            maxiter 10·max(M, N) + 100; with neither tolerance given, method 'auto' returns x
            with ‖b − Ax‖/(‖A‖_F‖x‖ + ‖b‖) ≤ 1e-12, float32 1e-5); LSQR stops on Paige & Saunders' two rules instead,
            ‖r‖ ≤ rtol·(‖A‖‖x‖ + ‖b‖) or ‖r‖ ≤ atol (consistent) and ‖Aᵀr‖ ≤ rtol·‖A‖‖r‖
            (inconsistent; info.normal_residual). ``tol`` is accepted as an alias of rtol
            (torch-sla). float32 needs rtol ≥ ~1e-5.
        preconditioner : 'auto', 'none', 'jacobi', 'ic0', 'ilu0', 'amg'
        is_symmetric, is_spd, matrix_type : torch-sla's hints. is_spd=True or matrix_type
            'spd' with method 'auto' factorizes by Cholesky at once (no SPD trial; a matrix that
            is not SPD then raises NotPositiveDefiniteError); matrix_type 'symmetric' → LDLᵀ.
        mixed_precision : accepted; libsla iterates in the matrix dtype (float64 or float32).
        verbose : print one line per solve (size, what ran, iterations, residual).
        return_info : also return a SolveInfo (its ``adjoint`` field is filled by backward)
        strict : raise ConvergenceError instead of warning (ConvergenceWarning) when an
            iterative method stops before its tolerance.

        Shapes (A of shape M × N; M = N for every method but LSQR): b [M] or [M, K]
        (unbatched A); b [*batch, M], [*batch, M, K], or a shared [M] / [M, K] for a batched A.
        x has the shape of b with N rows (and the batch when b is shared).
        """
        from ._solve_api import solve_sparse
        return solve_sparse(self, b, backend=backend, method=method, atol=atol,
                            maxiter=maxiter, tol=tol, verbose=verbose, rtol=rtol,
                            preconditioner=preconditioner, restart=restart, ordering=ordering,
                            return_info=return_info, strict=strict, is_symmetric=is_symmetric,
                            is_spd=is_spd, matrix_type=matrix_type,
                            mixed_precision=mixed_precision, x0=x0)

    def _solve_libsla(self, b, method="auto", backend="auto", rtol=None, atol=None,
                      maxiter=None, preconditioner=None, restart=None, ordering=None,
                      return_info=False, strict=False, direct_only=False):
        """solve() in libsla's vocabulary only (names already translated)."""
        if not self.is_square and str(method).lower() not in ("auto", "lsqr"):
            raise ValueError(f"solve: A has shape {self._shape}; method {method!r} needs a "
                             f"square matrix (least squares: method 'auto' or 'lsqr')")
        opts = Options(method, backend, rtol, atol, maxiter, preconditioner, ordering, restart,
                       need_determinant=direct_only)
        b3, out_shape = self._rhs(b)
        if b3.shape[-1] == 0 or b3.shape[0] == 0:
            # no right-hand side (b [N, 0]) or an empty batch: an empty x, like
            # torch.linalg.solve
            x = b3.new_zeros(out_shape)
            if not return_info:
                return x
            from .errors import SolveInfo
            return x, SolveInfo(method=opts.method_name, converged=True, iterations=0,
                                residual=0.0, reason="converged", relative_residual=0.0,
                                description="nothing to solve (no right-hand side or an "
                                            "empty batch)")
        vals = self._csr()
        config = F.SolveConfig(strict=strict, want_info=return_info)
        x = SF.Solve.apply(vals, b3.contiguous(), self._pattern, opts, config)
        x = x.reshape(out_shape)
        return (x, config.info) if return_info else x

    # ------------------------------------------------------------------------------------------
    # Determinants
    # ------------------------------------------------------------------------------------------
    def slogdet(self, method="auto", backend="auto"):
        """(sign, log|det A|) per matrix like torch.linalg.slogdet, from a direct
        factorization (method 'auto' chooses among cholesky, ldlt, lu, klu): sign is −1, 0 or
        1, log|det A| is differentiable (gradient A⁻ᵀ on the pattern, computed in libsla from
        the factors). The form to use for indefinite matrices (logdet is NaN there)."""
        if not self.is_square:
            raise ValueError(f"slogdet needs a square matrix, A has shape {self._shape}")
        # need_determinant: method 'auto' chooses among direct methods only (an M-matrix may
        # otherwise get CG), and the cache keeps these solvers apart from the solves' ones
        opts = Options(method, backend, need_determinant=True)
        if opts.method_name in ITERATIVE:
            raise ValueError(f"method {method!r} is iterative; determinants need a direct "
                             f"method (auto, cholesky, ldlt, lu, klu)")
        vals = self._csr()
        if vals.shape[0] == 0:                       # empty batch: libsla needs batch ≥ 1
            lad = vals.sum(-1)
            return self._unflatten(lad.detach(), ()), self._unflatten(lad, ())
        lad, sign = SF.Slogdet.apply(vals, self._pattern, opts)
        return self._unflatten(sign, ()), self._unflatten(lad, ())

    def logdet(self, method=None, backend=None, *, num_probes=None, lanczos_iter=None,
               distribution=None, seed=0, return_std=False):
        """log det A like torch.logdet: NaN where det < 0, −inf where det = 0 (from a
        factorization; torch-sla returns log|det| there: use slogdet()). Defaults come from
        the innermost DetConfig scope. method 'hutchinson' (or 'slq'): AN ESTIMATE for SPD
        matrices too large to factor, by stochastic Lanczos quadrature (num_probes probes of
        the given distribution from `seed`, lanczos_iter steps), differentiable through
        Hutchinson's estimate of A⁻ᵀ (one CG solve); return_std=True also returns the
        estimate's standard error over the probes. See _slq.py."""
        from . import _slq
        o = _slq.resolve(method=method, backend=backend, num_probes=num_probes,
                         lanczos_iter=lanczos_iter, distribution=distribution)
        m = str(o["method"]).lower()
        if m in _slq.STOCHASTIC:
            if not self.is_square:
                raise ValueError(f"logdet needs a square matrix, A has shape {self._shape}")
            n = self.sparse_shape[0]
            p = as_int(o["num_probes"], "num_probes", minimum=1)
            Z = _slq.probes(n, p, o["distribution"], seed)
            lad, std = _slq.SlqLogdet.apply(self._csr(), self._pattern, Z,
                                            as_int(o["lanczos_iter"], "lanczos_iter",
                                                   minimum=1), self)
            lad, std = self._unflatten(lad, ()), self._unflatten(std, ())
            return (lad, std) if return_std else lad
        if return_std:
            raise ValueError("return_std=True is for the stochastic estimate "
                             "(method='hutchinson'); a factorization's log det is exact")
        m = "auto" if m in ("components",) else m
        sign, lad = self.slogdet(m, o["backend"] or "auto")
        if sign.dtype.is_complex:               # torch.logdet of a complex matrix: log|det| + iθ
            return torch.complex(lad, torch.angle(sign))
        return torch.where(sign < 0, torch.full_like(lad, math.nan), lad)

    def det(self, method=None, backend=None):
        """det A = sign · exp(log|det A|) (differentiable: ∂det/∂A = det · A⁻ᵀ); under
        DetConfig(method='hutchinson') exp of the stochastic estimate (SPD)."""
        from . import _slq
        o = _slq.resolve(method=method, backend=backend)
        if str(o["method"]).lower() in _slq.STOCHASTIC:
            return torch.exp(self.logdet(o["method"]))
        sign, lad = self.slogdet(o["method"], o["backend"] or "auto")
        return sign * torch.exp(lad)

    # ------------------------------------------------------------------------------------------
    # Eigenvalues
    # ------------------------------------------------------------------------------------------
    def nonlinear_solve(self, residual_fn, u0, *params, **kwargs):
        """Solves residual_fn(u, self, *params) = 0 (torch-sla's SparseTensor.nonlinear_solve):
        this matrix is passed to residual_fn and its values get gradients; see
        torch_sla.nonlinear_solve (jac_fn: torch-sla's name for jacobian_fn(u, A, *params))."""
        from .nonlinear import _sparse_tensor_nonlinear_solve
        return _sparse_tensor_nonlinear_solve(self, residual_fn, u0, *params, **kwargs)

    def eigsh(self, k=6, which="LM", sigma=None, return_eigenvectors=True, *, M=None, tol=None,
              maxiter=None, method="auto", return_info=False, strict=False):
        """k eigenpairs of each symmetric matrix (libsla's sla_eigsh): which = 'LM' (largest
        magnitude, default), 'SM', 'LA', 'SA', or with sigma the k eigenvalues nearest sigma
        (shift-invert). Returns (eigenvalues [*batch, k] ascending, eigenvectors
        [*batch, N, k]) (None instead of the eigenvectors if return_eigenvectors=False).
        Eigenvectors are unit vectors (M-normalized, vᵀMv = 1, with M) whose largest-magnitude
        component is positive.

        method : 'auto', 'lobpcg', 'lanczos', 'arpack', 'dense' (libsla chooses by default)
        tol : relative residual ‖A v − λ v‖₂ / ‖A‖₁ (libsla default 1e-10)
        return_info, strict : as for solve (EigshInfo; ConvergenceWarning / ConvergenceError)

        Differentiable with respect to the values, through eigenvalues and eigenvectors
        (sla_eigsh_vjp: Hellmann–Feynman for eigenvalues, projected solves for eigenvectors).
        Each stored entry is an independent variable: parametrize a symmetric matrix by one
        triangle (or store both triangles from the same parameters) so that perturbations stay
        symmetric.

        M : optional SparseTensor, the SPD mass matrix of the generalized problem A v = λ M v
            (same N and dtype, its own pattern, no batch or A's batch shape). Every method:
            'lanczos' / 'arpack' shift-invert on (A − σM)⁻¹M, 'lobpcg' with B = M, 'dense'
            LAPACK dsygvd. Eigenvectors
            are M-orthonormal (VᵀMV = I); tol is on ‖A v − λ M v‖₂/((‖A‖₁ + |λ|‖M‖₁)‖v‖₂).
            Differentiable with respect to the values of A and of M
            (sla_eigsh_generalized_vjp).

        Complex (complex128/complex64) A must be Hermitian (and M Hermitian positive
        definite): the eigenvalues are real (float64/float32), the eigenvectors complex with
        the largest-magnitude entry real positive. Gradients in torch's convention
        (∂λ/∂A = v vᴴ on the pattern); a loss of the eigenvectors must not depend on their
        phase (as for torch.linalg.eigh: it raises otherwise); first order only
        (docs/complex.md)."""
        if which not in ("LA", "SA", "LM", "SM"):
            raise ValueError(f"which = {which!r}: use 'LA', 'SA', 'LM' or 'SM'")
        if not self.is_square:
            raise ValueError(f"eigsh needs a square matrix, A has shape {self._shape}")
        from ._capi import EIGSH_METHODS
        if not isinstance(method, str) or method not in EIGSH_METHODS:
            raise ValueError(f"method = {method!r} is not one of {', '.join(EIGSH_METHODS)}")
        N = self._shape[-1]
        if N == 0:
            raise ValueError(f"eigsh of a 0×0 matrix: there are no eigenpairs (k = {k!r})")
        k = as_int(k, "k")
        if not 1 <= k <= N:
            raise ValueError(f"k = {k} must be in [1, {N}] for a {N}×{N} matrix")
        opts = {"which": which, "sigma": as_opt_real(sigma, "sigma"),
                "tol": as_opt_real(tol, "tol", minimum=0),
                # libsla reads maxiter ≤ 0 as its default: refuse it rather than ignore it
                "maxiter": as_opt_int(maxiter, "maxiter", minimum=1), "method": method}
        config = F.SolveConfig(strict=strict, want_info=return_info, what="eigsh")
        vals = self._csr()
        mvals = self._mass_values(M) if M is not None else None
        if vals.shape[0] == 0:                       # empty batch: libsla needs batch ≥ 1
            evals, evecs = vals.new_zeros(0, k), vals.new_zeros(0, N, k)
        elif M is not None:
            evals, evecs = EF.EigshGeneralized.apply(vals, mvals, self._pattern, M._pattern, k,
                                                    opts, config)
        else:
            evals, evecs = EF.Eigsh.apply(vals, self._pattern, k, opts, config)
        evals = self._unflatten(evals, (k,))
        evecs = self._unflatten(evecs, (N, k)) if return_eigenvectors else None
        return (evals, evecs, config.info) if return_info else (evals, evecs)

    def _mass_values(self, M):
        """The CSR values [1 or B, nnz(M)] of the mass matrix M of eigsh, checked against self."""
        if not isinstance(M, SparseTensor):
            raise TypeError(f"M must be a SparseTensor, not {type(M).__name__}")
        if tuple(M.sparse_shape) != tuple(self.sparse_shape):
            raise ValueError(f"M has shape {tuple(M.sparse_shape)} but A is "
                             f"{tuple(self.sparse_shape)}: the mass matrix must have A's size")
        if M.dtype != self.dtype:
            raise TypeError(f"M is {M.dtype} but A is {self.dtype}: the mass matrix must have "
                            f"A's dtype")
        if M.is_batched and tuple(M.batch_shape) != tuple(self.batch_shape):
            raise ValueError(f"M has batch shape {tuple(M.batch_shape)}; it must have none or "
                             f"A's {tuple(self.batch_shape)}")
        return M._csr()

    # ------------------------------------------------------------------------------------------
    # Elementwise arithmetic on the values (same pattern)
    # ------------------------------------------------------------------------------------------
    def _same_pattern(self, other):
        return other._pattern is self._pattern and other.sparse_shape == self.sparse_shape

    def __mul__(self, other):
        """A * scalar (or a 0-d tensor), or A * B elementwise (Hadamard) on the same pattern."""
        if _is_scalar(other):
            return self.with_values(self.values * other)
        if isinstance(other, SparseTensor):
            return self.with_values(self.values * self._pair(other, "multiplication"))
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        """A / scalar, or A / B elementwise on the same pattern."""
        if _is_scalar(other):
            return self.with_values(self.values / other)
        if isinstance(other, SparseTensor):
            return self.with_values(self.values / self._pair(other, "division"))
        return NotImplemented

    def __neg__(self):
        return self.with_values(-self.values)

    def __add__(self, other):
        """A + B (same pattern: values added; different patterns: the union, entries
        concatenated and summed as duplicates), or A + scalar: the scalar added to every
        stored entry (torch-sla's definition; structural zeros stay zero)."""
        if _is_scalar(other):
            return self.with_values(self.values + other)
        if isinstance(other, SparseTensor):
            if self._same_pattern(other):
                return self.with_values(self.values + other.values)
            if other.sparse_shape != self.sparse_shape:
                raise ValueError(f"shapes {self._shape} and {other._shape} do not match")
            vals = torch.cat([self.values, other.values], dim=-1)
            return SparseTensor(vals, torch.cat([self.row_indices, other.row_indices]),
                                torch.cat([self.col_indices, other.col_indices]),
                                tuple(vals.shape[:-1]) + self.sparse_shape)
        return NotImplemented

    def __sub__(self, other):
        if _is_scalar(other):
            return self.with_values(self.values - other)
        if isinstance(other, SparseTensor):
            return self + (-other)
        return NotImplemented

    # ------------------------------------------------------------------------------------------
    # torch-sla's factorization and batch entry points
    # ------------------------------------------------------------------------------------------
    def lu(self, method="auto"):
        """A held factorization for repeated solves: ``lu = A.lu(); x = lu.solve(b)``
        (LUFactorization; method 'auto' lets libsla pick the direct method, 'lu' asks for
        UMFPACK)."""
        from ._lu import LUFactorization
        return LUFactorization(self, method)

    def solve_batch(self, values, b, backend="auto", method="auto", atol=None, maxiter=None,
                    tol=None, **kwargs):
        """Solves with new values [*batch, nnz] on this pattern: one batched libsla solve
        (one symbolic analysis), x [*batch, N]; arguments as solve()."""
        return self.with_values(values).solve(b, backend, method, atol, maxiter, tol,
                                              **kwargs)

    # ------------------------------------------------------------------------------------------
    # I/O
    # ------------------------------------------------------------------------------------------
    def save(self, path, metadata=None):
        """Writes this tensor in torch-sla's safetensors layout (io.save_sparse)."""
        from .io import save_sparse
        save_sparse(self, path, metadata)

    @classmethod
    def load(cls, path, device="cpu", dtype=None):
        """Reads a safetensors file of torch-sla's layout (io.load_sparse)."""
        from .io import load_sparse
        return load_sparse(path, device, dtype)

    def save_mtx(self, path, comment="", field="real", symmetry="general", index=0):
        from .io import save_mtx
        save_mtx(self, path, comment=comment, field=field, symmetry=symmetry, index=index)


from ._solve_api import spsolve  # noqa: E402,F401  (the functional form, torch-sla's)
