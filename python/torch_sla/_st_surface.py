"""The part of torch-sla's SparseTensor surface that acts on the stored values one by one
(elementwise math, scalar arithmetic, reductions with axis), its structured constructors and
structural predicates. Mixed into SparseTensor (sparse_tensor.py keeps the linear algebra).

As in torch-sla, elementwise functions and ``A + scalar`` act on the *stored* entries (each
entry of ``values``, in input order): structural zeros stay zero, and an entry given twice
(a COO duplicate) receives the scalar twice. Reductions over the matrix dimensions follow
torch-sla's definitions (``sum``/``mean`` over stored entries; ``prod``/``max``/``min`` over
the dense matrix, zeros included). All of them are differentiable through torch.
"""
import numbers

import torch

from ._args import as_int, as_real, batch_index


def _is_scalar(x):
    return isinstance(x, numbers.Number) and not isinstance(x, bool) or \
        (isinstance(x, torch.Tensor) and x.dim() == 0)


class SurfaceMixin:
    # --- torch-sla's shape vocabulary ---------------------------------------------------------
    @property
    def block_shape(self):
        """() : torch_sla has no block dimensions (values [*batch, nnz])."""
        return ()

    @property
    def is_block(self):
        return False

    @property
    def sparse_dim(self):
        """Positions of (M, N) in ``shape``: (ndim − 2, ndim − 1)."""
        n = len(self.shape)
        return (n - 2, n - 1)

    def cuda(self, device=None):
        raise ValueError("torch_sla runs on the CPU (libsla): keep tensors on the CPU "
                         "(A.cuda() is not available)")

    def half(self):
        raise TypeError("float16 is not a libsla dtype: use float32 or float64")

    # --- elementwise on the stored values -----------------------------------------------------
    def _map(self, fn):
        return self.with_values(fn(self.values))

    def _pair(self, other, what):
        if not (other._pattern is self._pattern or (
                torch.equal(other.row_indices, self.row_indices) and
                torch.equal(other.col_indices, self.col_indices))):
            raise ValueError(f"SparseTensor {what} needs matching sparsity patterns (equal "
                             f"row_indices and col_indices)")
        if other.sparse_shape != self.sparse_shape:
            raise ValueError(f"shapes {self.shape} and {other.shape} do not match")
        return other.values

    def __radd__(self, other):
        return self.__add__(other)

    def __rsub__(self, other):
        if _is_scalar(other):
            return self._map(lambda v: other - v)
        return NotImplemented

    def __rtruediv__(self, other):
        if _is_scalar(other):
            return self._map(lambda v: other / v)
        return NotImplemented

    def __pow__(self, exponent):
        if _is_scalar(exponent):
            return self._map(lambda v: v ** exponent)
        return NotImplemented

    def __pos__(self):
        return self

    def __abs__(self):
        return self._map(torch.abs)

    def abs(self):
        return self._map(torch.abs)

    def sqrt(self):
        return self._map(torch.sqrt)

    def square(self):
        return self._map(torch.square)

    def exp(self):
        return self._map(torch.exp)

    def log(self):
        return self._map(torch.log)

    def log10(self):
        return self._map(torch.log10)

    def log2(self):
        return self._map(torch.log2)

    def sin(self):
        return self._map(torch.sin)

    def cos(self):
        return self._map(torch.cos)

    def tanh(self):
        return self._map(torch.tanh)

    def sigmoid(self):
        return self._map(torch.sigmoid)

    def relu(self):
        return self._map(torch.relu)

    def sign(self):
        return self._map(torch.sign)

    def reciprocal(self):
        return self._map(torch.reciprocal)

    def pow(self, exponent):
        return self.__pow__(exponent)

    def clamp(self, min=None, max=None):
        return self._map(lambda v: v.clamp(min=min, max=max))

    def conj(self):
        """Complex conjugate (differentiable); the matrix itself for real values."""
        if not self.values.is_complex():
            return self
        return self.with_values(self.values.conj().resolve_conj())

    def H(self):
        """Conjugate transpose Aᴴ: T() for real matrices."""
        return self.T().conj()

    def is_hermitian(self, atol=1e-8, rtol=1e-5, force_recompute=False):
        """A = Aᴴ per matrix, |a_ij − conj(a_ji)| ≤ atol + rtol·max(|a_ij|, |a_ji|) (libsla's
        sla_matrix_is_hermitian; a diagonal entry needs |Im a_ii| within it); is_symmetric for
        real values. A bool tensor [] or [*batch]."""
        if not self.values.is_complex():
            return self.is_symmetric(atol=atol, rtol=rtol, force_recompute=force_recompute)
        return self._is_symmetric(as_real(atol, "atol", minimum=0),
                                  as_real(rtol, "rtol", minimum=0), hermitian=True)

    # --- reductions (torch-sla's definitions) -------------------------------------------------
    def _axes(self, axis):
        nd = len(self.shape)
        axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
        out = []
        for a in axes:
            a = as_int(a, "axis")
            if not -nd <= a < nd:
                raise ValueError(f"axis {a} is out of range for shape {tuple(self.shape)}")
            out.append(a % nd)
        return tuple(sorted(set(out)))

    def _reduce_batch(self, fn, axes, keepdim):
        """Reduction over batch axes only: a SparseTensor on the same pattern."""
        vals = fn(self.values, axes, keepdim)
        return self.with_values(vals)

    def sum(self, axis=None, keepdim=False):
        """Sum of the stored values: all of them (axis None, a 0-d tensor), over rows
        (axis M: a dense [*batch, N]), over columns (axis N: [*batch, M]), over both, or over
        batch axes (a SparseTensor on the same pattern)."""
        if axis is None:
            return self.values.sum()
        axes = self._axes(axis)
        nb = len(self.batch_shape)
        red_m, red_n = nb in axes, nb + 1 in axes
        batch_axes = tuple(a for a in axes if a < nb)
        if not (red_m or red_n):
            return self._reduce_batch(lambda v, ax, k: v.sum(dim=ax, keepdim=k), batch_axes,
                                      keepdim)
        M, N = self.sparse_shape
        v = self.values
        if red_m and red_n:
            out = v.sum(-1, keepdim=keepdim)
            if keepdim:
                out = out.unsqueeze(-1)
        else:
            idx, size = (self.col_indices, N) if red_m else (self.row_indices, M)
            out = v.new_zeros(v.shape[:-1] + (size,)).index_add(-1, idx, v)
            if keepdim:
                out = out.unsqueeze(-2 if red_m else -1)
        return out.sum(dim=batch_axes, keepdim=keepdim) if batch_axes else out

    def mean(self, axis=None, keepdim=False):
        """Mean of the stored values (torch-sla's definition: over the matrix dimensions the
        divisor is nnz, not M·N — ``to_dense().mean()`` for the dense mean)."""
        if axis is None:
            return self.values.mean()
        axes = self._axes(axis)
        nb = len(self.batch_shape)
        div = 1
        for a in axes:
            if a < nb:
                div *= self.shape[a]
        if any(a >= nb for a in axes):
            div *= self.nnz
        s = self.sum(axis, keepdim)
        return s / div if isinstance(s, torch.Tensor) else s.with_values(s.values / div)

    def _dense_reduce(self, name, axis, keepdim):
        axes = self._axes(axis)
        nb = len(self.batch_shape)
        if any(a >= nb for a in axes):
            d = self.to_dense()
            if name == "prod":
                for a in sorted(axes, reverse=True):
                    d = d.prod(dim=a, keepdim=keepdim)
                return d
            return getattr(d, "a" + name)(dim=axes, keepdim=keepdim)
        fn = {"prod": lambda v, ax, k: _prod_axes(v, ax, k),
              "max": lambda v, ax, k: v.amax(dim=ax, keepdim=k),
              "min": lambda v, ax, k: v.amin(dim=ax, keepdim=k)}[name]
        return self._reduce_batch(fn, axes, keepdim)

    def prod(self, axis=None, keepdim=False):
        """Product: of the stored values (axis None or batch axes), of the dense matrix over
        rows/columns (zeros included, as torch-sla)."""
        return self.values.prod() if axis is None else self._dense_reduce("prod", axis,
                                                                          keepdim)

    def max(self, axis=None, keepdim=False):
        """Max of the stored values (axis None or batch axes); over rows/columns of the dense
        matrix (zeros included)."""
        return self.values.max() if axis is None else self._dense_reduce("max", axis, keepdim)

    def min(self, axis=None, keepdim=False):
        return self.values.min() if axis is None else self._dense_reduce("min", axis, keepdim)

    # --- structured constructors --------------------------------------------------------------
    @classmethod
    def eye(cls, n, dtype=torch.float64, device="cpu"):
        """The n × n identity."""
        n = as_int(n, "n", minimum=0)
        idx = torch.arange(n)
        return cls(torch.ones(n, dtype=dtype, device=device), idx, idx, (n, n))

    @classmethod
    def diag(cls, values, device=None):
        """Diagonal matrix of a 1-D tensor (differentiable in values)."""
        if not isinstance(values, torch.Tensor) or values.dim() != 1:
            raise ValueError(f"diag needs a 1-D tensor, got "
                             f"{tuple(getattr(values, 'shape', ()))}")
        n = values.numel()
        idx = torch.arange(n)
        return cls(values, idx, idx, (n, n))

    @classmethod
    def tridiagonal(cls, n, diag=2.0, off_diag=-1.0, dtype=torch.float64, device="cpu"):
        """Symmetric tridiagonal n × n matrix: diag and off_diag scalars or tensors of n and
        n − 1 entries (2, −1: the 1-D Laplacian). Entries in CSR order (no reordering)."""
        n = as_int(n, "n", minimum=1)

        def vec(v, k, name):
            if isinstance(v, torch.Tensor):
                if v.dim() != 1 or v.numel() != k:
                    raise ValueError(f"{name} must have shape ({k},), got {tuple(v.shape)}")
                return v.to(dtype)
            return torch.full((k,), float(v), dtype=dtype)
        d, o = vec(diag, n, "diag"), vec(off_diag, n - 1, "off_diag")
        # rows in order, columns i−1, i, i+1 in each: CSR order, so no gather later
        i = torch.arange(n)
        row = torch.stack([i, i, i], 1).reshape(-1)
        col = torch.stack([i - 1, i, i + 1], 1).reshape(-1)
        zero = d.new_zeros(1)
        vals = torch.stack([torch.cat([zero, o]), d, torch.cat([o, zero])], 1).reshape(-1)
        keep = (col >= 0) & (col < n)
        return cls(vals[keep], row[keep], col[keep], (n, n))

    # --- structural predicates ----------------------------------------------------------------
    def _gershgorin_pd(self):
        """torch-sla's Gershgorin test per matrix: every diagonal entry positive and larger
        than its row's sum of |off-diagonal| (sufficient for SPD when symmetric, not
        necessary: a Poisson matrix fails it)."""
        M = self.sparse_shape[0]
        B = self.batch_size if self.is_batched else 1
        v = self._csr().detach()
        rows = self._pattern.csr_rows()
        cols = self._pattern.csr_cols()
        on = rows == cols
        # complex: Re a_ii against the moduli, and only for a Hermitian matrix (positive
        # definite means zᴴAz > 0 for every z, which needs A = Aᴴ)
        diag = v.real.new_zeros(B, M).index_add(1, rows[on], v[:, on].real)
        off = v.real.new_zeros(B, M).index_add(1, rows[~on], v[:, ~on].abs())
        ok = ((diag > off) & (diag > 0)).all(dim=1) if M else torch.ones(B, dtype=torch.bool)
        if v.is_complex():
            ok &= self.is_hermitian().reshape(-1)
        return self._unflatten(ok, ())

    def is_positive_definite(self, method="gershgorin", force_recompute=False):
        """Positive definiteness per matrix (a bool tensor [] or [*batch]): 'gershgorin'
        (torch-sla's default: cheap, sufficient only), 'cholesky' (exact: a CHOLMOD
        factorization succeeds; the matrix must be symmetric) or 'eigenvalue' (the smallest
        eigenvalue > 0, by eigsh)."""
        if method not in ("gershgorin", "cholesky", "eigenvalue"):
            raise ValueError(f"method = {method!r}: use 'gershgorin', 'cholesky' or "
                             f"'eigenvalue'")
        if not self.is_square:
            return self._unflatten(torch.zeros(self.batch_size if self.is_batched else 1,
                                               dtype=torch.bool), ())
        if method == "gershgorin":
            return self._gershgorin_pd()
        sym = (self.is_hermitian() if self.values.is_complex() else self.is_symmetric()).reshape(-1)
        out = []
        for i in range(sym.numel()):
            A = self[i] if self.is_batched else self
            ok = bool(sym[i])
            if ok and method == "cholesky":
                ok = _cholesky_succeeds(A)
            elif ok:
                lam, _ = A.detach().eigsh(k=1, which="SA", return_eigenvectors=False)
                ok = bool(lam[0] > 0)
            out.append(ok)
        return self._unflatten(torch.tensor(out, dtype=torch.bool), ())

    def detect_matrix_type(self):
        """'spd', 'symmetric' or 'general' (torch-sla's labels; Gershgorin for 'spd'; complex:
        'spd' Hermitian positive definite, 'symmetric' complex symmetric)."""
        if self.is_batched:
            raise ValueError("detect_matrix_type() needs an unbatched SparseTensor")
        if self.nnz == 0 or not self.is_square:
            return "general"
        sym = bool(self.is_symmetric())
        # complex: 'spd' is Hermitian positive definite (the Gershgorin test checks A = Aᴴ),
        # 'symmetric' is complex symmetric Aᵀ = A
        if (sym or self.values.is_complex()) and bool(self.is_positive_definite()):
            return "spd"
        return "symmetric" if sym else "general"

    def __getitem__(self, index):
        """A[i]: batch element i (an int of the flattened batch, or a tuple with one int per
        batch dimension) as an unbatched SparseTensor on the same pattern."""
        if not self.is_batched:
            raise IndexError("indexing an unbatched SparseTensor: only batches are indexed")
        j = batch_index(index, self.batch_shape)
        vals = self.values.reshape(self.batch_size, self.nnz)[j]
        return self.with_values(vals)

    # --- graph --------------------------------------------------------------------------------
    def connected_components(self):
        """(labels [N] int64 — [*batch, N] for a batch, the same for every item — and the
        number of components) of the graph of the pattern (stored (i, j) = undirected edge;
        components numbered in order of their smallest node). libsla union–find."""
        import ctypes
        from ._capi import check, lib
        N = self.sparse_shape[0]
        if not self.is_square:
            raise ValueError(f"connected_components needs a square matrix, A has shape "
                             f"{tuple(self.shape)}")
        labels = torch.empty(N, dtype=torch.int64)
        count = ctypes.c_int64()
        check(lib.sla_pattern_connected_components(self._pattern.ptr, labels.data_ptr(),
                                                   ctypes.byref(count)))
        if self.is_batched:
            labels = labels.expand(*self.batch_shape, N).contiguous()
        return labels, int(count.value)

    def has_isolated_components(self):
        """True if the graph has more than one connected component."""
        return self.connected_components()[1] > 1

    def to_connected_components(self):
        """A SparseTensorList with one matrix per connected component (its nodes renumbered
        0.. in increasing order; values stay differentiable)."""
        from .sparse_tensor_list import SparseTensorList
        if self.is_batched:
            raise NotImplementedError("to_connected_components of a batch: split A[i]")
        labels, k = self.connected_components()
        if k <= 1:
            return SparseTensorList([self])
        local = torch.empty_like(labels)
        out = []
        entry_comp = labels[self.row_indices]
        for c in range(k):
            nodes = (labels == c).nonzero(as_tuple=True)[0]
            local[nodes] = torch.arange(nodes.numel())
            sel = (entry_comp == c).nonzero(as_tuple=True)[0]
            out.append(type(self)(self.values[sel], local[self.row_indices[sel]],
                                  local[self.col_indices[sel]], (nodes.numel(),) * 2))
        return SparseTensorList(out)

    def spy(self, batch_idx=None, ax=None, title=None, cmap="viridis", show_colorbar=True,
            figsize=(8, 8), save_path=None, dpi=150, **kwargs):
        """Image of the pattern (matplotlib): each stored entry a pixel coloured by its
        normalised |value|, zeros white. Returns the Axes; saves to save_path if given."""
        import matplotlib.pyplot as plt
        import numpy as np
        j = batch_index(batch_idx if self.is_batched else None, self.batch_shape, "batch_idx")
        vals = self._csr().detach()[j].abs().numpy()
        M, N = self.sparse_shape
        img = np.full((M, N), np.nan, dtype=np.float32)
        top = vals.max() if vals.size else 0.0
        img[self._pattern.csr_rows().numpy(), self._pattern.csr_cols().numpy()] = \
            vals / top if top > 0 else vals
        if ax is None:
            fig, ax = plt.subplots(figsize=figsize)
        else:
            fig = ax.get_figure()
        cm = plt.get_cmap(cmap).copy()
        cm.set_bad("white")
        im = ax.imshow(img, cmap=cm, vmin=0, vmax=1, interpolation="nearest", aspect="equal")
        if show_colorbar:
            fig.colorbar(im, ax=ax, shrink=0.8).set_label("|value| (normalized)")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(title or f"{M}×{N}, nnz={self._pattern.nnz}")
        if save_path:
            fig.savefig(save_path, dpi=dpi, bbox_inches="tight")
        return ax


def _prod_axes(v, axes, keepdim):
    for a in sorted(axes, reverse=True):
        v = v.prod(dim=a, keepdim=keepdim)
    return v


def _cholesky_succeeds(A):
    from .errors import NotPositiveDefiniteError
    try:
        A.detach().slogdet(method="cholesky")
        return True
    except NotPositiveDefiniteError:
        return False
