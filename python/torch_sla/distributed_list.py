"""DSparseTensorList: a list of sparse matrices with different patterns, each owned whole by
one rank of an MPI communicator (torch-sla's partition_batch / BatchShard). Every operation
on an item runs serially on its owning rank (SparseTensor: libsla), so gradients are per item
and the backward needs no communication; only assignment and gather communicate.
"""
import torch

from .sparse_tensor import SparseTensor


def assign_by_nnz(nnz, nranks):
    """Owner rank of each item: longest-processing-time greedy on nnz (largest item first, to
    the least loaded rank, lowest rank on ties; ties between items by index), so loads differ
    by at most one item's nnz from the best split. Deterministic, the same on every rank."""
    order = sorted(range(len(nnz)), key=lambda i: (-int(nnz[i]), i))
    load = [0] * nranks
    owner = [0] * len(nnz)
    for i in order:
        r = min(range(nranks), key=lambda q: (load[q], q))
        owner[i] = r
        load[r] += int(nnz[i]) + 1
    return owner


class DSparseTensorList:
    """Items 0 … n−1 of a list of SparseTensors, distributed whole over the ranks.

    On each rank: ``local`` (the SparseTensors it owns, in global index order),
    ``local_indices`` (their global indices), ``owner`` (owning rank of every item, the same
    on every rank). Operations take and return lists aligned with ``local`` (or, for inputs,
    a list of all n items, from which the owned ones are taken).
    """

    def __init__(self, local, local_indices, owner, comm):
        self.local = list(local)
        self.local_indices = list(local_indices)
        self.owner = list(owner)
        self.comm = comm

    @classmethod
    def partition(cls, matrices, comm=None):
        """From the whole list (a list of SparseTensors or a SparseTensorList, the same on
        every rank: only its nnz counts are compared): items assigned by nnz (assign_by_nnz),
        each rank keeping its own items (the same objects: gradients reach their values).
        Collective."""
        from .distributed import _agree, _default_comm
        comm = _default_comm(comm)
        items = list(getattr(matrices, "_tensors", matrices))
        exc = None
        for i, A in enumerate(items):
            if not isinstance(A, SparseTensor):
                exc = TypeError(f"item {i} is a {type(A).__name__}, not a SparseTensor")
                break
        _agree(comm, "DSparseTensorList.partition", exc)
        nnz = [A.nnz for A in items]
        everyone = comm.allgather(nnz)
        bad = next((r for r, v in enumerate(everyone) if v != everyone[0]), None)
        _agree(comm, "DSparseTensorList.partition",
               None if bad is None or comm.Get_rank() != bad else
               ValueError(f"the list differs from rank 0's ({len(nnz)} items, nnz {nnz[:8]})"))
        owner = assign_by_nnz(nnz, comm.Get_size())
        mine = [i for i, r in enumerate(owner) if r == comm.Get_rank()]
        return cls([items[i] for i in mine], mine, owner, comm)

    @classmethod
    def from_local(cls, local, comm=None):
        """From each rank's own items (global order: rank 0's, then rank 1's, ...).
        Collective (one allgather of the counts)."""
        from .distributed import _default_comm
        comm = _default_comm(comm)
        local = list(getattr(local, "_tensors", local))
        counts = comm.allgather(len(local))
        start = sum(counts[:comm.Get_rank()])
        owner = [r for r, c in enumerate(counts) for _ in range(c)]
        return cls(local, range(start, start + len(local)), owner, comm)

    # --- sizes --------------------------------------------------------------------------------
    def __len__(self):
        return len(self.owner)

    @property
    def num_local(self):
        return len(self.local)

    def local_nnz(self):
        return sum(A.nnz for A in self.local)

    def __iter__(self):
        return iter(self.local)

    def _aligned(self, xs, what):
        xs = list(xs)
        if len(xs) == len(self.local):
            return xs
        if len(xs) == len(self.owner):
            return [xs[i] for i in self.local_indices]
        raise ValueError(f"DSparseTensorList.{what}: got {len(xs)} inputs; this rank owns "
                         f"{len(self.local)} of the {len(self.owner)} items, so pass "
                         f"{len(self.local)} (aligned with .local) or {len(self.owner)} (all)")

    # --- per-item operations (local, serial libsla) -------------------------------------------
    def __matmul__(self, xs):
        """[A_i @ x_i for the owned items]. Local."""
        return [A @ x for A, x in zip(self.local, self._aligned(xs, "__matmul__"))]

    def matmul(self, xs):
        return self @ xs

    def solve(self, bs, **kwargs):
        """[A_i.solve(b_i, **kwargs) for the owned items] (any serial method; differentiable
        in each item's values and b). Local."""
        return [A.solve(b, **kwargs) for A, b in zip(self.local, self._aligned(bs, "solve"))]

    def logdet(self, **kwargs):
        return [A.logdet(**kwargs) for A in self.local]

    def slogdet(self, **kwargs):
        return [A.slogdet(**kwargs) for A in self.local]

    def det(self, **kwargs):
        return [A.det(**kwargs) for A in self.local]

    def eigsh(self, k=6, M=None, **kwargs):
        """[A_i.eigsh(k, M=M_i, **kwargs) for the owned items]: serial libsla per item, so
        differentiable through eigenvalues and eigenvectors (SparseTensor.eigsh). M: None, a
        list of mass matrices (SparseTensors or None; aligned with .local or all n items) or a
        DSparseTensorList with the same owners. Local."""
        if M is None:
            ms = [None] * len(self.local)
        elif isinstance(M, DSparseTensorList):
            if M.owner != self.owner:
                raise ValueError("DSparseTensorList.eigsh: M's items are owned by other ranks "
                                 "than A's: partition both lists alike (from_local, or "
                                 "partition of lists with the same nnz)")
            ms = M.local
        else:
            ms = self._aligned(M, "eigsh")
        return [A.eigsh(k, M=m, **kwargs) for A, m in zip(self.local, ms)]

    def is_symmetric(self, **kwargs):
        return [A.is_symmetric(**kwargs) for A in self.local]

    # --- communication ------------------------------------------------------------------------
    def gather(self, local_results, root=None):
        """The results of all n items in global order, from each rank's list aligned with
        .local: on every rank (root=None) or on rank root (None elsewhere). Values are detached
        copies (gradients flow through the local results on their owning rank: sum the
        ranks' local losses). Collective."""
        local_results = list(local_results)
        if len(local_results) != len(self.local):
            raise ValueError(f"gather: {len(local_results)} results for {len(self.local)} "
                             f"owned items")
        mine = [(i, _detach(r)) for i, r in zip(self.local_indices, local_results)]
        parts = (self.comm.allgather(mine) if root is None else
                 self.comm.gather(mine, root=root))
        if parts is None:
            return None
        out = [None] * len(self.owner)
        for part in parts:
            for i, r in part:
                out[i] = r
        return out

    def __repr__(self):
        return (f"DSparseTensorList({len(self)} items, {self.num_local} on rank "
                f"{self.comm.Get_rank()}/{self.comm.Get_size()}, local nnz {self.local_nnz()})")


def _detach(r):
    if isinstance(r, torch.Tensor):
        return r.detach()
    if isinstance(r, (tuple, list)):
        return type(r)(_detach(v) for v in r)
    return r
