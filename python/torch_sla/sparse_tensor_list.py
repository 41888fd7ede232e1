"""SparseTensorList: matrices with different patterns (and sizes), as in torch-sla."""
import numbers

import torch

from ._args import as_int
from .sparse_tensor import SparseTensor


class _Sizes(list):
    """block_sizes: a list of (M, N) pairs (torch-sla's property), also callable as the
    method it was before (``L.block_sizes()``)."""

    def __call__(self):
        return self


def _scalar(x):
    return (isinstance(x, numbers.Number) and not isinstance(x, bool)) or \
        (isinstance(x, torch.Tensor) and x.dim() == 0)


class SparseTensorList:
    """A list of SparseTensors with different patterns/shapes. List operations (len, indexing,
    iteration, append, extend, slicing, :meth:`concat`), per-matrix operations that return
    lists, and :meth:`to_block_diagonal` to merge them into one SparseTensor (one solve for
    all).

    Arithmetic is item by item, as in torch-sla: ``L1 + L2``, ``L1 - L2``, ``L1 * L2`` (same
    length; each pair as SparseTensor's operator), ``L + 2``, ``2 * L``, ``L / 2``, ``-L``;
    ``L @ [x_i]`` multiplies pairwise and ``L @ x`` multiplies every matrix by the one tensor
    x. Concatenation, which ``+`` did before torch-sla compatibility, is ``L1.concat(L2)``."""

    def __init__(self, tensors):
        tensors = list(tensors)
        for i, t in enumerate(tensors):
            if not isinstance(t, SparseTensor):
                raise TypeError(f"element {i} is a {type(t).__name__}, not a SparseTensor")
        self._tensors = tensors

    @classmethod
    def from_coo_list(cls, matrices):
        """From (values, row_indices, col_indices, shape) tuples."""
        out = []
        for i, m in enumerate(matrices):
            if not isinstance(m, (tuple, list)) or len(m) != 4:
                raise ValueError(f"matrices[{i}] must be a tuple (values, row_indices, "
                                 f"col_indices, shape), got {type(m).__name__}"
                                 + (f" of length {len(m)}" if isinstance(m, (tuple, list))
                                    else ""))
            out.append(SparseTensor(*m))
        return cls(out)

    @classmethod
    def from_torch_sparse_list(cls, tensors):
        return cls(SparseTensor.from_torch_sparse(t) for t in tensors)

    @classmethod
    def from_block_diagonal(cls, A, sizes):
        """Splits a block-diagonal SparseTensor into its blocks; sizes = [(M_i, N_i)] (a pair
        per block, e.g. ``A.block_sizes()`` of the list it was built from). Entries outside the
        diagonal blocks raise ValueError."""
        if not isinstance(A, SparseTensor):
            raise TypeError(f"from_block_diagonal needs a SparseTensor, got {type(A).__name__}")
        sizes = _block_sizes(sizes)
        ro = torch.tensor([0] + [m for m, _ in sizes], dtype=torch.int64).cumsum(0)
        co = torch.tensor([0] + [n for _, n in sizes], dtype=torch.int64).cumsum(0)
        if (int(ro[-1]), int(co[-1])) != tuple(A.sparse_shape):
            raise ValueError(f"block sizes sum to {(int(ro[-1]), int(co[-1]))}, matrix is "
                             f"{A.sparse_shape}")
        bi = torch.bucketize(A.row_indices, ro[1:], right=True)
        bj = torch.bucketize(A.col_indices, co[1:], right=True)
        if not torch.equal(bi, bj):
            k = int((bi != bj).nonzero()[0])
            raise ValueError(f"entry {k} ({int(A.row_indices[k])}, {int(A.col_indices[k])}) "
                             f"is outside the diagonal blocks")
        out = []
        for i, (m, n) in enumerate(sizes):
            sel = (bi == i).nonzero(as_tuple=True)[0]
            out.append(SparseTensor(A.values[..., sel], A.row_indices[sel] - ro[i],
                                    A.col_indices[sel] - co[i], A.batch_shape + (m, n)))
        return cls(out)

    # --- list behaviour -----------------------------------------------------------------------
    def __len__(self):
        return len(self._tensors)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return SparseTensorList(self._tensors[idx])
        return self._tensors[idx]

    def __iter__(self):
        return iter(self._tensors)

    def append(self, t):
        if not isinstance(t, SparseTensor):
            raise TypeError(f"can only append a SparseTensor, not {type(t).__name__}")
        self._tensors.append(t)

    def extend(self, ts):
        for t in ts:
            self.append(t)

    def concat(self, other):
        """A new list with the matrices of self then those of other (a SparseTensorList or
        an iterable of SparseTensors)."""
        other = other._tensors if isinstance(other, SparseTensorList) else list(other)
        return SparseTensorList(self._tensors + other)

    # --- arithmetic item by item (torch-sla) --------------------------------------------------
    def _zip(self, other, op):
        if isinstance(other, SparseTensorList):
            if len(other) != len(self):
                raise ValueError(f"length mismatch: {len(self)} and {len(other)} matrices")
            return SparseTensorList([op(a, b) for a, b in zip(self._tensors, other._tensors)])
        if _scalar(other):
            return SparseTensorList([op(a, other) for a in self._tensors])
        return NotImplemented

    def __add__(self, other):
        return self._zip(other, lambda a, b: a + b)

    def __radd__(self, other):
        return self._zip(other, lambda a, b: b + a)

    def __sub__(self, other):
        return self._zip(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._zip(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._zip(other, lambda a, b: a * b)

    def __rmul__(self, other):
        return self._zip(other, lambda a, b: b * a)

    def __truediv__(self, other):
        if isinstance(other, SparseTensorList):
            return NotImplemented
        return self._zip(other, lambda a, b: a / b)

    def __neg__(self):
        return SparseTensorList([-t for t in self._tensors])

    def _each(self, name, *args, **kwargs):
        return SparseTensorList([getattr(t, name)(*args, **kwargs) for t in self._tensors])

    def abs(self):
        return self._each("abs")

    def sqrt(self):
        return self._each("sqrt")

    def exp(self):
        return self._each("exp")

    def log(self):
        return self._each("log")

    def pow(self, exponent):
        return self._each("pow", exponent)

    def clamp(self, min=None, max=None):
        return self._each("clamp", min=min, max=max)

    def sum(self, axis=None):
        return [t.sum(axis=axis) for t in self._tensors]

    def mean(self, axis=None):
        return [t.mean(axis=axis) for t in self._tensors]

    def max(self):
        return [t.max() for t in self._tensors]

    def min(self):
        return [t.min() for t in self._tensors]

    def is_positive_definite(self, **kwargs):
        return [A.is_positive_definite(**kwargs) for A in self._tensors]

    def eigs(self, k=6, **kwargs):
        return [A.eigs(k, **kwargs) for A in self._tensors]

    def svd(self, k=6):
        return [A.svd(k) for A in self._tensors]

    def condition_number(self, ord=2):
        return [A.condition_number(ord) for A in self._tensors]

    def to(self, *args, **kwargs):
        return SparseTensorList([t.to(*args, **kwargs) for t in self._tensors])

    def cpu(self):
        return self

    def cuda(self):
        raise ValueError("torch_sla runs on the CPU (libsla): cuda() is not available")

    @property
    def total_nnz(self):
        return sum(t.nnz for t in self._tensors)

    @property
    def total_shape(self):
        return (sum(t.sparse_shape[0] for t in self._tensors),
                sum(t.sparse_shape[1] for t in self._tensors))

    def spy(self, indices=None, ncols=3, figsize=None, **kwargs):
        """One spy() panel per matrix (or per index in indices); returns the Figure."""
        import matplotlib.pyplot as plt
        idx = list(range(len(self))) if indices is None else list(indices)
        nrows = (len(idx) + ncols - 1) // ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=figsize or (4 * ncols, 4 * nrows),
                                 squeeze=False)
        for k, ax in enumerate(axes.flat):
            if k < len(idx):
                self._tensors[idx[k]].spy(ax=ax, show_colorbar=False, **kwargs)
            else:
                ax.axis("off")
        return fig

    def __repr__(self):
        return f"SparseTensorList({len(self)} matrices, shapes={self.shapes})"

    @property
    def shapes(self):
        return [t.shape for t in self._tensors]

    @property
    def dtype(self):
        return self._tensors[0].dtype if self._tensors else None

    @property
    def device(self):
        return torch.device("cpu")

    # --- per-matrix operations ----------------------------------------------------------------
    def __matmul__(self, xs):
        if isinstance(xs, torch.Tensor):            # one operand for every matrix
            return [A @ xs for A in self._tensors]
        return [A @ x for A, x in zip(self._tensors, self._check_list(xs))]

    def solve(self, bs, **kwargs):
        return [A.solve(b, **kwargs) for A, b in zip(self._tensors, self._check_list(bs))]

    def det(self, **kwargs):
        return [A.det(**kwargs) for A in self._tensors]

    def slogdet(self, **kwargs):
        """[(sign, log|det A_i|)] per matrix (see SparseTensor.slogdet)."""
        return [A.slogdet(**kwargs) for A in self._tensors]

    def logdet(self, **kwargs):
        return [A.logdet(**kwargs) for A in self._tensors]

    def norm(self, ord="fro"):
        return [A.norm(ord) for A in self._tensors]

    def is_symmetric(self, **kwargs):
        return [A.is_symmetric(**kwargs) for A in self._tensors]

    def eigsh(self, k=6, **kwargs):
        return [A.eigsh(k, **kwargs) for A in self._tensors]

    def to_dense(self):
        return [A.to_dense() for A in self._tensors]

    def _check_list(self, xs):
        if isinstance(xs, torch.Tensor) or not hasattr(xs, "__iter__"):
            raise TypeError(f"expected a list with one tensor per matrix ({len(self)}), got "
                            f"{type(xs).__name__}")
        xs = list(xs)
        if len(xs) != len(self._tensors):
            raise ValueError(f"{len(xs)} operands for {len(self._tensors)} matrices")
        return xs

    # --- block diagonal -------------------------------------------------------------------------
    def to_block_diagonal(self):
        """diag(A_1, ..., A_L) as one SparseTensor of shape (ΣM_i, ΣN_i); values are
        concatenated (differentiable). Batched members must share their batch shape."""
        if not self._tensors:
            raise ValueError("to_block_diagonal of an empty SparseTensorList")
        batch = self._tensors[0].batch_shape
        if any(t.batch_shape != batch for t in self._tensors):
            raise ValueError(f"batch shapes differ: {[t.batch_shape for t in self._tensors]}")
        if any(t.dtype != self.dtype for t in self._tensors):
            raise TypeError(f"dtypes differ: {[t.dtype for t in self._tensors]}")
        rows, cols, r0, c0 = [], [], 0, 0
        for t in self._tensors:
            rows.append(t.row_indices + r0)
            cols.append(t.col_indices + c0)
            r0 += t.sparse_shape[0]
            c0 += t.sparse_shape[1]
        values = torch.cat([t.values for t in self._tensors], dim=-1)
        return SparseTensor(values, torch.cat(rows), torch.cat(cols), batch + (r0, c0))

    @property
    def block_sizes(self):
        """[(M_i, N_i)] (a property as in torch-sla; calling it, ``block_sizes()``, works
        too)."""
        return _Sizes(t.sparse_shape for t in self._tensors)


def _block_sizes(sizes):
    """[(M_i, N_i)] as int pairs ≥ 0, or ValueError naming the bad entry."""
    if isinstance(sizes, torch.Tensor) or not hasattr(sizes, "__iter__"):
        raise ValueError(f"sizes must be a list of (M, N) pairs, one per block, got {sizes!r}")
    out = []
    for i, pair in enumerate(sizes):
        if isinstance(pair, torch.Tensor):
            pair = pair.tolist()
        if not isinstance(pair, (tuple, list, torch.Size)) or len(pair) != 2:
            raise ValueError(f"sizes[{i}] = {pair!r} must be a pair (M, N) of block sizes; "
                             f"sizes is a list of pairs, e.g. [(3, 3), (2, 2)] "
                             f"(SparseTensorList.block_sizes())")
        out.append((as_int(pair[0], f"sizes[{i}][0]", minimum=0),
                    as_int(pair[1], f"sizes[{i}][1]", minimum=0)))
    if not out:
        raise ValueError("sizes is empty: give one (M, N) pair per block")
    return out
