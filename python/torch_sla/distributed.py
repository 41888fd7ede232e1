"""Distributed sparse tensors over MPI: DSparseTensor (one matrix, rows partitioned over the
ranks, with halo exchange) and DSparseTensorList (a list of matrices, each owned whole by one
rank). All numerics run in libsla_mpi (include/sla/mpi.h); see docs/distributed_python.md.

    mpirun -np 4 /usr/bin/python3 script.py

    >>> from mpi4py import MPI
    >>> from torch_sla.distributed import DSparseTensor
    >>> D = DSparseTensor.partition(A, partition_method="metis")   # A: a SparseTensor on rank 0
    >>> x = D.scatter(x_global)          # this rank's owned rows
    >>> y = D @ x                        # distributed SpMV, differentiable in D.values and x
    >>> y_global = D.gather(y)           # the global vector on every rank

Collective calls. Every method that communicates is marked *collective*: every rank of the
communicator must call it, in the same order, with arguments of the same kind. Bad input on one
rank raises the same exception on every rank, naming the rank ("rank 2: ..."), never a hang.
Backward passes are collective too: every rank must call ``backward()`` (on its own local loss;
the gradients are those of the sum of the ranks' losses) when any rank does, and
``requires_grad`` is agreed across the ranks when an operation is recorded.

Object lifetime. Freeing a distributed pattern may free a communicator (MPI_Comm_free, a
collective call), so collected patterns are queued and freed by :func:`free_pending`
(collective) or at exit, never from a garbage collector's arbitrary moment.
"""
import atexit
import gc
import math

import torch

from . import _dist_functions as DF
from ._capi import SLA_OP_N, SLA_OP_T, check
from ._mpi_capi import (PARTITIONERS, HaloInfoC, PartitionInfoC, comm_handle, mlib,
                        require_mpi4py)
from .sparse_tensor import SparseTensor

_FLOAT_DTYPES = (torch.float64, torch.float32)
_DTYPES = (torch.float64, torch.float32)


# ------------------------------------------------------------------------------------------------
# Deferred frees (collective at a known point, never in a garbage collector's callback)
# ------------------------------------------------------------------------------------------------
_PENDING = []
_FINALIZED = [False]


def _defer(kind, ptr):
    if ptr and not _FINALIZED[0]:
        _PENDING.append((kind, ptr))


_PENDING_SOLVERS = {}     # communicator key -> {creation number: pointer}


def _defer_solver(key, seq, ptr):
    if not _FINALIZED[0]:
        _PENDING_SOLVERS.setdefault(key, {})[seq] = ptr


def free_solvers(comm):
    """Frees the collected distributed solvers of comm that every rank has collected, in
    creation order (one allgather of their numbers). Collective; run by every D.solve."""
    import ctypes
    from ._dist_functions import _comm_key
    mine = _PENDING_SOLVERS.get(_comm_key(comm), {})
    common = set(mine)
    for ids in comm.allgather(sorted(mine)):
        common &= set(ids)
    from ._dist_functions import free_solver
    for seq in sorted(common):
        free_solver(*mine.pop(seq))


def _free_all():
    import ctypes
    from ._dist_functions import free_solver
    for key in sorted(_PENDING_SOLVERS):
        for seq in sorted(_PENDING_SOLVERS[key]):
            free_solver(*_PENDING_SOLVERS[key][seq])
    _PENDING_SOLVERS.clear()
    import ctypes
    while _PENDING:
        kind, ptr = _PENDING.pop(0)
        box = ctypes.c_void_p(ptr)
        if kind == "pattern":
            mlib.sla_dist_pattern_free(ctypes.byref(box))
        else:
            mlib.sla_dist_layout_free(ctypes.byref(box))


def free_pending():
    """Frees the distributed patterns, layouts and solvers of collected DSparseTensors (and
    of solves whose graphs are gone). Collective:
    call it on every rank at the same point of the program (it runs the garbage collector
    first so that every rank frees the same objects)."""
    gc.collect()
    _free_all()


@atexit.register
def _at_exit():
    # runs before mpi4py's MPI_Finalize (a C-level exit handler, after Python's)
    try:
        from mpi4py import MPI
        if MPI.Is_initialized() and not MPI.Is_finalized():
            gc.collect()
            _free_all()
    finally:
        _FINALIZED[0] = True
        _PENDING.clear()
        _PENDING_SOLVERS.clear()


# ------------------------------------------------------------------------------------------------
# Agreement across the ranks (Python-side checks must fail on every rank together)
# ------------------------------------------------------------------------------------------------
def _default_comm(comm):
    MPI = require_mpi4py()
    return MPI.COMM_WORLD if comm is None else comm


def _agree(comm, what, exc=None, flags=()):
    """One MPI_Allreduce: if some rank holds an exception, every rank raises it (the lowest
    failing rank's type and message, "what: rank r: message"); else returns each flag OR-ed
    over the ranks. Collective."""
    import numpy as np
    MPI = require_mpi4py()
    size, rank = comm.Get_size(), comm.Get_rank()
    send = np.array([rank if exc is not None else size] + [-int(bool(f)) for f in flags],
                    dtype=np.int64)
    recv = np.empty_like(send)
    comm.Allreduce(send, recv, op=MPI.MIN)
    bad = int(recv[0])
    if bad < size:
        payload = (type(exc), str(exc)) if rank == bad else None
        etype, msg = comm.bcast(payload, root=bad)
        if msg.startswith(what + ": "):
            msg = msg[len(what) + 2:]
        text = f"{what}: rank {bad}: {msg}"
        try:
            err = etype(text)
        except Exception:      # an exception type with another constructor
            err = RuntimeError(text)
        if rank == bad and exc is not None:
            raise err from exc
        raise err
    return [bool(-v) for v in recv[1:]]


def _run_agreed(comm, what, fn, flags=()):
    """Runs the local check `fn` on this rank, then agrees (see _agree); returns (fn's result,
    flags OR-ed over ranks). Collective."""
    try:
        out, exc = fn(), None
    except Exception as e:     # noqa: BLE001 - re-raised on every rank by _agree
        out, exc = None, e
    return out, _agree(comm, what, exc, flags)


# ------------------------------------------------------------------------------------------------
# Owners of C objects
# ------------------------------------------------------------------------------------------------
def _int64_array(addr, n):
    import ctypes
    if n == 0 or not addr:
        return torch.empty(0, dtype=torch.int64)
    buf = (ctypes.c_int64 * n).from_address(addr)
    return torch.frombuffer(buf, dtype=torch.int64).clone()


class _Layout:
    """Owns one reference of an sla_dist_layout."""

    def __init__(self, ptr, comm):
        self.ptr, self.comm = ptr, comm
        self.N = mlib.sla_dist_layout_size(ptr)
        self.n_local = mlib.sla_dist_layout_local_size(ptr)
        self.owned = _int64_array(mlib.sla_dist_layout_global(ptr), self.n_local)

    @classmethod
    def balanced(cls, comm, N, n_local=-1):
        import ctypes
        out = ctypes.c_void_p()
        check(mlib.sla_dist_layout_create(comm_handle(comm), N, n_local, ctypes.byref(out)))
        return cls(out.value, comm)

    @classmethod
    def from_owned(cls, comm, N, owned):
        import ctypes
        owned = owned.to(torch.int64).contiguous()
        out = ctypes.c_void_p()
        pad = torch.zeros(1, dtype=torch.int64)
        check(mlib.sla_dist_layout_create_owned(comm_handle(comm), N, owned.numel(),
                                                (owned if owned.numel() else pad).data_ptr(),
                                                ctypes.byref(out)))
        return cls(out.value, comm)

    def __del__(self):
        _defer("layout", getattr(self, "ptr", None))


class _Pattern:
    """Owns one reference of an sla_dist_pattern (collected ones are freed by free_pending)."""

    def __init__(self, ptr, comm):
        self.ptr, self.comm = ptr, comm
        rows, cols = mlib.sla_dist_pattern_rows(ptr), mlib.sla_dist_pattern_cols(ptr)
        self.rows_ptr, self.cols_ptr = rows, cols
        self.M, self.N = mlib.sla_dist_layout_size(rows), mlib.sla_dist_layout_size(cols)
        self.m_local = mlib.sla_dist_layout_local_size(rows)
        self.n_local = mlib.sla_dist_layout_local_size(cols)
        self.row_owned = _int64_array(mlib.sla_dist_layout_global(rows), self.m_local)
        self.col_owned = (self.row_owned if rows == cols else
                          _int64_array(mlib.sla_dist_layout_global(cols), self.n_local))
        self.nnz = mlib.sla_dist_pattern_nnz(ptr)
        self.nnz_input = mlib.sla_dist_pattern_nnz_input(ptr)
        self.same_layouts = rows == cols
        self._coo = None
        self._owners = {}

    def owners(self, rows=True):
        """(every rank's owned global indices of the row (or column) layout, in rank order;
        the counts per rank), cached. Collective on first use."""
        if rows not in self._owners:
            owned = self.row_owned if rows else self.col_owned
            counts = self.comm.allgather(int(owned.numel()))
            from ._dist_functions import allgatherv_rows
            order = allgatherv_rows(self.comm, owned.reshape(-1, 1).contiguous(), counts)
            self._owners[rows] = (order.reshape(-1), counts)
        return self._owners[rows]

    @classmethod
    def from_coo(cls, rows, cols, row, col):
        """rows, cols: _Layout; row, col: int64 [nnz_in] global indices. Collective."""
        import ctypes
        row, col = row.contiguous(), col.contiguous()
        pad = torch.zeros(1, dtype=torch.int64)
        out = ctypes.c_void_p()
        n = row.numel()
        check(mlib.sla_dist_pattern_from_coo(rows.ptr, cols.ptr, n,
                                             (row if n else pad).data_ptr(),
                                             (col if n else pad).data_ptr(), ctypes.byref(out)))
        return cls(out.value, rows.comm)

    @classmethod
    def from_csr(cls, rows, cols, row_global, crow, col):
        """rows, cols: _Layout; row_global: int64 [nrows_in] or None (the owned rows in local
        order); crow: int64 [nrows_in + 1]; col: int64 or int32 [crow[-1]] global columns (int32
        passed as they lie). Collective."""
        import ctypes
        crow, col = crow.contiguous(), col.contiguous()
        pad = torch.zeros(1, dtype=torch.int64)
        out = ctypes.c_void_p()
        nr = crow.numel() - 1
        rg = None if row_global is None else (row_global.contiguous() if nr else pad)
        c = col if col.numel() else pad
        c64 = c.data_ptr() if col.dtype == torch.int64 else None
        c32 = c.data_ptr() if col.dtype == torch.int32 else None
        check(mlib.sla_dist_pattern_from_csr(rows.ptr, cols.ptr, nr,
                                             None if rg is None else rg.data_ptr(),
                                             crow.data_ptr(), c64, c32, ctypes.byref(out)))
        return cls(out.value, rows.comm)

    def __del__(self):
        _defer("pattern", getattr(self, "ptr", None))

    def slot_coo(self):
        """Global (row, col) of each local slot, [nnz_local] int64 each (local, cached)."""
        if self._coo is None:
            row = torch.empty(self.nnz, dtype=torch.int64)
            col = torch.empty(self.nnz, dtype=torch.int64)
            if self.nnz:
                check(mlib.sla_dist_pattern_global_coo(self.ptr, row.data_ptr(), col.data_ptr()))
            self._coo = (row, col)
        return self._coo

    def ghosts(self):
        import ctypes
        n = ctypes.c_int64()
        addr = mlib.sla_dist_pattern_ghosts(self.ptr, ctypes.byref(n))
        return _int64_array(addr, n.value)

    def halo(self):
        """(recv: {rank: ghost column range}, send: {rank: owned column indices})."""
        import ctypes
        h = HaloInfoC()
        check(mlib.sla_dist_pattern_halo(self.ptr, ctypes.byref(h)))
        recv, send = {}, {}
        for q in range(h.nrecv):
            recv[int(h.recv_rank[q])] = (int(h.recv_ptr[q]), int(h.recv_ptr[q + 1]))
        total = int(h.send_ptr[h.nsend]) if h.nsend else 0
        idx = _int64_array(ctypes.cast(h.send_idx, ctypes.c_void_p).value, total)
        for q in range(h.nsend):
            send[int(h.send_rank[q])] = idx[int(h.send_ptr[q]):int(h.send_ptr[q + 1])].clone()
        return recv, send

    def info(self):
        """sla_dist_pattern_info as a dict (square, rows and columns alike). Collective."""
        import ctypes
        info = PartitionInfoC()
        check(mlib.sla_dist_pattern_info(self.ptr, ctypes.byref(info)))
        return _info_dict(info)


def _info_dict(info):
    return {name: getattr(info, name) for name, _ in PartitionInfoC._fields_}


# ------------------------------------------------------------------------------------------------
# Partition: one rank's view of the distribution (torch-sla's field names)
# ------------------------------------------------------------------------------------------------
class Partition:
    """This rank's part of a distributed matrix's rows.

    Attributes (torch-sla's names): ``partition_id`` (this rank), ``owned_nodes`` (global
    indices of the owned rows, ascending), ``halo_nodes`` (global indices of the ghost columns,
    by owning rank then ascending), ``local_nodes`` (owned then halo), ``local_to_global``
    (= local_nodes), ``neighbor_partitions`` (ranks this one exchanges with),
    ``send_indices`` ({rank: local indices of owned entries sent there}), ``recv_indices``
    ({rank: positions in local_nodes that rank's values land in}); and the figures of the
    whole distribution, the same on every rank: ``edge_cut`` (undirected edges of A + Aᵀ
    between ranks), ``halo_total``, ``halo_max``, ``neighbours_max``, ``rows_imbalance``,
    ``nnz_imbalance`` ... (``info``; None for a rectangular matrix). ``global_to_local`` is
    computed on first use ([N] int64, −1 where not local).
    """

    def __init__(self, pattern, rank, info):
        self.partition_id = rank
        self.owned_nodes = pattern.row_owned.clone()
        self.halo_nodes = pattern.ghosts()
        self.local_nodes = torch.cat([self.owned_nodes, self.halo_nodes])
        self.local_to_global = self.local_nodes
        recv, send = pattern.halo()
        n_owned = self.owned_nodes.numel()
        self.recv_indices = {r: torch.arange(a, b, dtype=torch.int64) + n_owned
                             for r, (a, b) in recv.items()}
        self.send_indices = send
        self.neighbor_partitions = sorted(set(recv) | set(send))
        self.num_nodes = pattern.M
        self.info = info
        for key in ("edge_cut", "halo_total", "halo_max", "neighbours_max", "neighbours_total",
                    "rows_imbalance", "nnz_imbalance"):
            setattr(self, key, None if info is None else info[key])
        self._g2l = None

    @property
    def global_to_local(self):
        if self._g2l is None:
            g2l = torch.full((self.num_nodes,), -1, dtype=torch.int64)
            g2l[self.local_nodes] = torch.arange(self.local_nodes.numel(), dtype=torch.int64)
            self._g2l = g2l
        return self._g2l

    def __repr__(self):
        return (f"Partition(rank {self.partition_id}: {self.owned_nodes.numel()} owned, "
                f"{self.halo_nodes.numel()} halo, neighbours {self.neighbor_partitions}, "
                f"edge cut {self.edge_cut})")


# ------------------------------------------------------------------------------------------------
# Argument helpers
# ------------------------------------------------------------------------------------------------
def _index_1d(t, what, dtypes=None):
    """t as a 1-D CPU integer tensor (dtypes: the ones accepted, default any integer dtype)."""
    if not isinstance(t, torch.Tensor):
        t = torch.as_tensor(t)
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{what} must be {' or '.join(str(d)[6:] for d in dtypes)}, got {t.dtype}")
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{what} must be an integer tensor, got {t.dtype}")
    if t.dim() != 1:
        raise ValueError(f"{what} must be 1-D, got shape {tuple(t.shape)}")
    if t.device.type != "cpu":
        raise ValueError(f"{what} is on {t.device}; libsla_mpi runs on the CPU")
    return t


def _as_index(t, what):
    return _index_1d(t, what).to(torch.int64).contiguous()


def _csr_index(t, what):
    """A 1-D int32 or int64 CPU index tensor, contiguous (int32 kept as int32)."""
    return _index_1d(t, what, (torch.int32, torch.int64)).contiguous()


def _shape_and_values(shape, values):
    """(shape as a tuple of ints (*batch, M, N), values as a float CPU tensor), checked."""
    shp = tuple(int(s) for s in shape)
    if len(shp) < 2 or any(s < 0 for s in shp) or any(a != b for a, b in zip(shp, shape)):
        raise ValueError(f"shape must be (*batch, M, N) with integer sizes ≥ 0, got {shape}")
    v = values if isinstance(values, torch.Tensor) else torch.as_tensor(values)
    if v.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"values must be float64 or float32, got {v.dtype}")
    if v.device.type != "cpu":
        raise ValueError(f"values are on {v.device}; libsla_mpi runs on the CPU")
    return shp, v


def _layouts(comm, what, shp, dtype, orow, ocol):
    """Row and column layouts once every rank has the same shape, dtype and layout kind (else
    the agreed error): the owned lists given, else balanced contiguous blocks; the columns
    share the rows' layout for a square matrix without owned_cols. Collective."""
    metas = comm.allgather((shp, dtype, orow is None, ocol is None))
    _run_agreed(comm, what, lambda: _same(metas, comm.Get_rank()))
    M, N = shp[-2:]
    rows = _Layout.balanced(comm, M) if orow is None else _Layout.from_owned(comm, M, orow)
    if ocol is not None:
        return rows, _Layout.from_owned(comm, N, ocol)
    return rows, (rows if M == N else _Layout.balanced(comm, N))


def _method_code(method, coords):
    name = {"simple": "contiguous", "coordinates": "rcb", "geometric": "rcb"}.get(method, method)
    if name not in PARTITIONERS:
        raise ValueError(f"partition_method must be one of 'metis', 'contiguous', 'ptscotch', "
                         f"'coordinates' (= 'rcb'), 'hilbert'; got {method!r}")
    if name in ("rcb", "hilbert") and coords is None:
        raise ValueError(f"partition_method {method!r} needs coords ([N, dim] tensor)")
    return PARTITIONERS[name]


def _partition_layout(pattern, method, coords_local, dim):
    """sla_dist_partition: a new layout of P's rows (one part per rank). Collective."""
    import ctypes
    info = PartitionInfoC()
    out = ctypes.c_void_p()
    cptr = None
    if coords_local is not None:
        coords_local = coords_local.to(torch.float64).contiguous()
        cptr = (coords_local if coords_local.numel() else torch.zeros(1)).data_ptr()
    check(mlib.sla_dist_partition(pattern.ptr, method, dim, cptr, ctypes.byref(out),
                                  ctypes.byref(info)))
    return _Layout(out.value, pattern.comm), _info_dict(info)


# ------------------------------------------------------------------------------------------------
# DSparseTensor
# ------------------------------------------------------------------------------------------------
class DSparseTensor:
    """One sparse matrix [M, N] (or a batch [B, M, N] on one pattern) whose rows are
    distributed over the ranks of an MPI communicator.

    Each rank holds ``values``: its local slot values, [nnz] (or [B, nnz]), in the distributed
    pattern's order (the owned rows' diagonal block, then off-diagonal block; global indices of
    each slot in ``local_row``/``local_col``). Vectors are distributed alike: on each rank the
    owned entries, in ascending global order (``partition_info.owned_nodes``). Build with
    :meth:`partition` (a global matrix on rank 0) or :meth:`from_sparse_local` (each rank its
    own entries, the scalable path).
    """

    def __init__(self, pattern, values, op=SLA_OP_N, partition=None, batch_shape=()):
        self._pattern = pattern
        self._values = values                # [B, nnz_local], may carry a graph
        self._op = op
        self._partition = partition
        self._batch_shape = tuple(batch_shape)
        self.comm = pattern.comm

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def partition(cls, A, comm=None, partition_method="metis", coords=None, root=0):
        """Distributes a global SparseTensor A [M, N] (or [*batch, M, N]) held on rank `root`
        (other ranks may pass A too, or None: only root's is read) over `comm` (mpi4py,
        default MPI.COMM_WORLD). Collective.

        partition_method: "metis" (METIS k-way of A + Aᵀ, gathered on rank 0), "ptscotch"
        (parallel PT-Scotch), "contiguous" (ranges balanced by nnz + 1 per row), "coordinates"
        or "rcb" (recursive coordinate bisection) and "hilbert" (Hilbert-curve order), which
        need coords [N, dim] (dim 1..3) on root. Rectangular matrices are split contiguously.
        Gradients of the distributed values flow back to root's A.values.
        """
        comm = _default_comm(comm)
        rank = comm.Get_rank()
        what = "DSparseTensor.partition"

        def meta():
            if not isinstance(root, int) or not 0 <= root < comm.Get_size():
                raise ValueError(f"root {root!r} is not a rank of the {comm.Get_size()}")
            if rank != root:
                return None
            if not isinstance(A, SparseTensor):
                raise TypeError(f"A must be a torch_sla.SparseTensor on rank {root}, got "
                                f"{type(A).__name__}")
            M, N = A.sparse_shape
            code = _method_code(partition_method, coords) if M == N else 0
            if coords is not None and M == N:
                c = torch.as_tensor(coords)
                if c.dim() == 1:
                    c = c[:, None]
                if c.dim() != 2 or c.shape[0] != N or not 1 <= c.shape[1] <= 3:
                    raise ValueError(f"coords must be [N, dim] = [{N}, 1..3], got shape "
                                     f"{tuple(c.shape)}")
                dim = int(c.shape[1])
            else:
                dim = 0
            return (M, N, A.dtype, tuple(A.batch_shape), bool(A.values.requires_grad), code,
                    dim)

        m, _ = _run_agreed(comm, what, meta)
        M, N, dtype, batch_shape, rg, code, dim = comm.bcast(m, root=root)
        B = math.prod(batch_shape)
        if rank == root:
            row, col = A.row_indices, A.col_indices
            coo = A.values.reshape(B, A.values.shape[-1])
        else:
            row = col = torch.empty(0, dtype=torch.int64)
            coo = torch.zeros(B, 0, dtype=dtype, requires_grad=rg)

        rows = _Layout.balanced(comm, M)
        cols = rows if M == N else _Layout.balanced(comm, N)
        P = _Pattern.from_coo(rows, cols, row, col)
        info = None
        if M == N:
            cl = None
            if dim:
                glob = None
                if rank == root:
                    c = torch.as_tensor(coords).to(torch.float64)
                    glob = (c[:, None] if c.dim() == 1 else c)[None]
                cl = DF.vec_scatter_root(rows.ptr, torch.float64, 1, dim, root, glob,
                                         rows.n_local)[0]
            L, info = _partition_layout(P, code, cl, dim)
            P = _Pattern.from_coo(L, L, row, col)
        values = DF.DistGather.apply(coo, P)
        return cls(P, values, partition=Partition(P, rank, info), batch_shape=batch_shape)

    @classmethod
    def from_sparse_local(cls, values, row, col, shape, comm=None, owned_rows=None,
                          owned_cols=None):
        """From each rank's own COO entries (global indices; rows owned elsewhere are sent to
        their owner, duplicates on one rank or several are summed). Collective.

        values: [nnz_in] (or [*batch, nnz_in]) on this rank; shape: (M, N) or (*batch, M, N),
        the same on every rank. owned_rows: the global rows this rank owns ([n] int64; all
        ranks together a partition of 0..M−1), default the balanced contiguous split (rank r
        owns ⌊M/p⌋ or ⌊M/p⌋ + 1 rows, the larger first). owned_cols: the column layout (how x
        of D @ x is distributed), default owned_rows for a square matrix. Gradients flow to
        each rank's `values`.
        """
        comm = _default_comm(comm)
        what = "DSparseTensor.from_sparse_local"

        def check_local():
            shp, v = _shape_and_values(shape, values)
            r, c = _as_index(row, "row"), _as_index(col, "col")
            if r.numel() != c.numel():
                raise ValueError(f"row has {r.numel()} entries but col has {c.numel()}")
            if tuple(v.shape) != shp[:-2] + (r.numel(),):
                raise ValueError(f"values has shape {tuple(v.shape)}; with {r.numel()} entries "
                                 f"and shape {shp} it must be {shp[:-2] + (r.numel(),)}")
            orow = None if owned_rows is None else _as_index(owned_rows, "owned_rows")
            ocol = None if owned_cols is None else _as_index(owned_cols, "owned_cols")
            return shp, v, r, c, orow, ocol

        (res, (rg,)) = _run_agreed(comm, what, check_local,
                                   flags=(_requires_grad(values),))
        shp, v, r, c, orow, ocol = res
        rows, cols = _layouts(comm, what, shp, v.dtype, orow, ocol)
        P = _Pattern.from_coo(rows, cols, r, c)
        return cls._on_pattern(P, v, shp, rg, comm)

    @classmethod
    def from_csr_local(cls, values, crow_indices, col_indices, shape, comm=None,
                       owned_rows=None, owned_cols=None, row_indices=None):
        """From the rows each rank owns, in CSR (the lean path for a caller that assembles its
        own rows, as a generator or a finite-element code does: nothing is exchanged and no COO
        copy of the indices is made; libsla_mpi's ``sla_dist_pattern_from_csr``). Collective.

        crow_indices: [nrows_in + 1] int64 or int32 row pointers of the rows handed in
        (crow[0] = 0, non-decreasing); col_indices: [crow[-1]] int64 or int32 *global* column
        indices in [0, N) (int32 is read where it lies, 4 bytes an entry), any order within a
        row, a repeated column being a duplicate (summed); values: [nnz_in] or
        [*batch, nnz_in] in the same entry order. row_indices: the global rows handed in
        ([nrows_in] int64, each owned by this rank, once, any order; rows not listed are empty),
        default this rank's owned rows in ascending order (then nrows_in must be its number of
        rows). shape, owned_rows and owned_cols as in ``from_sparse_local``. Gradients flow to
        each rank's ``values`` in its CSR entry order. The same matrix as ``from_sparse_local``
        on the same entries, slot for slot.
        """
        comm = _default_comm(comm)
        what = "DSparseTensor.from_csr_local"

        def check_local():
            shp, v = _shape_and_values(shape, values)
            crow = _csr_index(crow_indices, "crow_indices").to(torch.int64)
            if crow.numel() < 1:
                raise ValueError("crow_indices must have nrows_in + 1 ≥ 1 entries, got 0")
            col = _csr_index(col_indices, "col_indices")
            nnz = int(crow[-1])
            if col.numel() != nnz:
                raise ValueError(f"col_indices has {col.numel()} entries but crow_indices[-1] "
                                 f"= {nnz}")
            if tuple(v.shape) != shp[:-2] + (nnz,):
                raise ValueError(f"values has shape {tuple(v.shape)}; with {nnz} entries and "
                                 f"shape {shp} it must be {shp[:-2] + (nnz,)}")
            rg = None if row_indices is None else _as_index(row_indices, "row_indices")
            if rg is not None and rg.numel() != crow.numel() - 1:
                raise ValueError(f"row_indices has {rg.numel()} entries but crow_indices "
                                 f"describes {crow.numel() - 1} rows")
            orow = None if owned_rows is None else _as_index(owned_rows, "owned_rows")
            ocol = None if owned_cols is None else _as_index(owned_cols, "owned_cols")
            return shp, v, crow, col, rg, orow, ocol

        (res, (rg_flag,)) = _run_agreed(comm, what, check_local,
                                        flags=(_requires_grad(values),))
        shp, v, crow, col, rg, orow, ocol = res
        rows, cols = _layouts(comm, what, shp, v.dtype, orow, ocol)
        P = _Pattern.from_csr(rows, cols, rg, crow, col)
        return cls._on_pattern(P, v, shp, rg_flag, comm)

    @classmethod
    def _on_pattern(cls, P, v, shp, requires_grad, comm):
        """The tensor on pattern P from this rank's input-entry values v [*batch, nnz_in]."""
        B = math.prod(shp[:-2])
        coo = v.reshape(B, -1)
        if requires_grad and not coo.requires_grad:
            coo = coo.detach().requires_grad_()    # another rank's values need the backward
        local = DF.DistGather.apply(coo, P)
        info = P.info() if (shp[-2] == shp[-1] and P.same_layouts) else None
        return cls(P, local, partition=Partition(P, comm.Get_rank(), info),
                   batch_shape=shp[:-2])

    def with_coo_values(self, values):
        """New values for the COO entries this rank handed to from_sparse_local (or, for
        partition, root's A.values), in that order, [nnz_in] or [*batch, nnz_in]: they travel
        to their owners as at construction (no pattern work). Collective; differentiable."""
        P = self._pattern
        what = "DSparseTensor.with_coo_values"

        def check_local():
            if not isinstance(values, torch.Tensor) or values.dtype not in _FLOAT_DTYPES:
                raise TypeError("values must be a float64 or float32 torch.Tensor")
            if values.dim() == 0 or values.shape[-1] != P.nnz_input:
                raise ValueError(f"values must be [*batch, {P.nnz_input}] (the entries this "
                                 f"rank handed in), got {tuple(values.shape)}")
            return values.reshape(math.prod(values.shape[:-1]), P.nnz_input)

        coo, (rg,) = _run_agreed(self.comm, what, check_local, flags=(_requires_grad(values),))
        if rg and not coo.requires_grad:
            coo = coo.detach().requires_grad_()
        return DSparseTensor(P, DF.DistGather.apply(coo, P), self._op, self._partition,
                             tuple(values.shape[:-1]))

    def with_values(self, values):
        """The same distributed pattern with new local slot values [nnz] or [B, nnz] (no
        communication, no pattern work: the training-loop path). Local."""
        if not isinstance(values, torch.Tensor):
            raise TypeError(f"values must be a torch.Tensor, got {type(values).__name__}")
        if values.dtype not in _FLOAT_DTYPES or values.shape[-1] != self._pattern.nnz:
            raise ValueError(f"values must be float64/float32 [*batch, {self._pattern.nnz}], "
                             f"got {values.dtype} {tuple(values.shape)}")
        batch = tuple(values.shape[:-1])
        return DSparseTensor(self._pattern, values.reshape(math.prod(batch), self._pattern.nnz),
                             self._op,
                             self._partition, batch)

    # --- properties ---------------------------------------------------------------------------
    @property
    def values(self):
        """This rank's local slot values, [nnz] or [*batch, nnz] (differentiable)."""
        return self._values.reshape(self._batch_shape + (self._pattern.nnz,))

    @property
    def local_row(self):
        """Global row of each local slot (of the untransposed matrix), [nnz] int64."""
        return self._pattern.slot_coo()[0]

    @property
    def local_col(self):
        return self._pattern.slot_coo()[1]

    @property
    def shape(self):
        M, N = self._pattern.M, self._pattern.N
        return self._batch_shape + ((M, N) if self._op == SLA_OP_N else (N, M))

    @property
    def local_shape(self):
        """(rows owned here, columns owned here) of this (possibly transposed) matrix."""
        m, n = self._pattern.m_local, self._pattern.n_local
        return (m, n) if self._op == SLA_OP_N else (n, m)

    @property
    def nnz(self):
        """Local slots on this rank."""
        return self._pattern.nnz

    @property
    def global_nnz(self):
        """Slots summed over the ranks (structural nonzeros of the global matrix). Collective."""
        return int(self.comm.allreduce(self._pattern.nnz))

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def device(self):
        return self._values.device

    @property
    def requires_grad(self):
        return self._values.requires_grad

    @property
    def partition_info(self):
        """This rank's :class:`Partition` (the rows of the untransposed matrix)."""
        return self._partition

    @property
    def owned_rows(self):
        """Global indices of this rank's entries of y = D @ x (ascending)."""
        P = self._pattern
        return P.row_owned if self._op == SLA_OP_N else P.col_owned

    @property
    def owned_cols(self):
        """Global indices of this rank's entries of x in D @ x (ascending)."""
        P = self._pattern
        return P.col_owned if self._op == SLA_OP_N else P.row_owned

    @property
    def rank(self):
        return self.comm.Get_rank()

    @property
    def world_size(self):
        return self.comm.Get_size()

    @property
    def T(self):
        """The transpose (no copy: products use the transposed distributed SpMV, whose halo
        exchange runs in reverse). Rows of Dᵀ are distributed as D's columns."""
        return DSparseTensor(self._pattern, self._values,
                             SLA_OP_T if self._op == SLA_OP_N else SLA_OP_N, self._partition,
                             self._batch_shape)

    def transpose(self):
        return self.T

    def t(self):
        return self.T

    def __repr__(self):
        return (f"DSparseTensor(shape={self.shape}, rank {self.rank}/{self.world_size}, "
                f"local nnz={self.nnz}, dtype={self.dtype}"
                f"{', transposed' if self._op == SLA_OP_T else ''})")

    # --- products -----------------------------------------------------------------------------
    def __matmul__(self, x):
        """D @ x_local: x [n_local] or [n_local, k] (shared by the batch) or [B, n_local, k]
        this rank's owned entries (``owned_cols``); returns this rank's rows of the product,
        [m_local], [m_local, k] or [*batch, m_local(, k)]. Collective; differentiable in the
        values and in x (backward: the transposed product with the reverse halo exchange)."""
        what = "DSparseTensor @ x"
        P = self._pattern
        m, n = self.local_shape
        B = self._values.shape[0]

        def check_local():
            if not isinstance(x, torch.Tensor):
                raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
            if x.dtype != self.dtype:
                raise TypeError(f"x has dtype {x.dtype} but the matrix has {self.dtype}")
            if x.device.type != "cpu":
                raise ValueError(f"x is on {x.device}; libsla_mpi runs on the CPU")
            if x.dim() == 1 and x.shape[0] == n:
                return x[:, None], "vec"
            if x.dim() == 2 and x.shape[0] == n:
                return x, "mat"
            nb = len(self._batch_shape)
            if (nb and x.dim() == nb + 2 and tuple(x.shape[:nb]) == self._batch_shape and
                    x.shape[nb] == n):
                return x.reshape(B, n, x.shape[-1]), "batched"
            if nb and x.dim() == nb + 1 and tuple(x.shape[:nb]) == self._batch_shape and \
                    x.shape[nb] == n:
                return x.reshape(B, n, 1), "batched_vec"
            raise ValueError(f"x has shape {tuple(x.shape)}; this rank owns {n} columns of "
                             f"the {self.shape} matrix, so x must be [{n}], [{n}, k] or "
                             f"[*batch, {n}(, k)]")

        (xx, kind), need = _run_agreed(self.comm, what, check_local,
                                       flags=(self._values.requires_grad,
                                              _requires_grad(x)))
        ks = self.comm.allgather(xx.shape[-1])
        _run_agreed(self.comm, what, lambda: _same_k(ks, self.comm.Get_rank()))
        if need[1] and not xx.requires_grad:
            xx = xx.detach().requires_grad_()
        vals = self._values
        if need[0] and not vals.requires_grad:
            vals = vals.detach().requires_grad_()
        y = DF.DistSpMV.apply(vals, xx, P, self._op, tuple(need))   # [B, m, k]
        if kind == "vec":
            y = y[0, :, 0] if not self._batch_shape else y[..., 0]
        elif kind == "mat":
            y = y[0] if not self._batch_shape else y
        elif kind == "batched_vec":
            y = y[..., 0]
        if self._batch_shape:
            y = y.reshape(self._batch_shape + tuple(y.shape[1:]))
        return y

    def matmul(self, x):
        return self @ x

    # --- vectors ------------------------------------------------------------------------------
    def scatter(self, b_global, root=None):
        """This rank's owned entries (``owned_cols``: the distribution of x in D @ x) of a
        global vector b_global [N], [N, k] or [B, N, k]; for a square matrix distributed alike
        (every constructor's default) rows and columns are distributed the same, so this also
        distributes right-hand sides. root=None: b_global is on every rank (local indexing, no
        communication, differentiable); root=r: only rank r's [N] or [N, k] is read
        (sla_dist_vec_scatter; collective, not differentiable)."""
        return self._scatter(b_global, root, self.owned_cols, rows=False)

    def scatter_rows(self, b_global, root=None):
        """As scatter, for a vector of D @ x's range (``owned_rows``; [M], [M, k], [B, M, k])."""
        return self._scatter(b_global, root, self.owned_rows, rows=True)

    def _scatter(self, b_global, root, idx, rows):
        if root is None:
            if not isinstance(b_global, torch.Tensor):
                raise TypeError(f"b_global must be a torch.Tensor, got "
                                f"{type(b_global).__name__}")
            return b_global[idx] if b_global.dim() <= 2 else b_global[..., idx, :]
        comm, rank = self.comm, self.comm.Get_rank()
        use_rows = rows == (self._op == SLA_OP_N)
        N = self._pattern.M if use_rows else self._pattern.N

        def meta():
            if not 0 <= root < comm.Get_size():
                raise ValueError(f"root {root} is not a rank of the {comm.Get_size()}")
            if rank != root:
                return None
            if not isinstance(b_global, torch.Tensor) or b_global.dim() not in (1, 2) or \
                    b_global.shape[0] != N:
                raise ValueError(f"b_global must be a [{N}] or [{N}, k] tensor on root, got "
                                 f"{tuple(getattr(b_global, 'shape', ()))}")
            return tuple(b_global.shape)

        m, _ = _run_agreed(comm, "DSparseTensor.scatter", meta)
        shp = comm.bcast(m, root=root)
        k = shp[1] if len(shp) == 2 else 1
        layout = self._pattern.rows_ptr if use_rows else self._pattern.cols_ptr
        glob = None
        if rank == root:
            glob = b_global.detach().to(self.dtype).reshape(1, shp[0], k)
        out = DF.vec_scatter_root(layout, self.dtype, 1, k, root, glob, idx.numel())[0]
        return out if len(shp) == 2 else out[:, 0]

    def gather(self, x_local, root=None):
        """The global vector from every rank's owned entries of D @ x's range (``owned_rows``):
        x_local [m_local] / [m_local, k] / [B, m_local, k], and for a batched D also
        [*batch, m_local] / [*batch, m_local, k] (what D @ x returns; read as the batch first
        when the shapes could mean either). root=None: on every rank
        (differentiable: MPI_Allgatherv, O(M) per rank; backward MPI_Reduce_scatter); root=r: on
        rank r only (sla_dist_vec_gather; None elsewhere; not differentiable). Collective."""
        return self._gather(x_local, root, rows=True)

    def gather_cols(self, x_local, root=None):
        """As gather, for a vector distributed as the columns (x of D @ x)."""
        return self._gather(x_local, root, rows=False)

    def _gather(self, x_local, root, rows):
        P = self._pattern
        use_rows = rows == (self._op == SLA_OP_N)
        layout = P.rows_ptr if use_rows else P.cols_ptr
        owned = P.row_owned if use_rows else P.col_owned
        N = P.M if use_rows else P.N

        m, bs = owned.numel(), self._batch_shape
        nb = len(bs)

        def check_local():
            # (x as [B, m, k], the output's leading shape, whether it has a k axis). A batched
            # D reads [*batch, m] and [*batch, m, k] as its batch (D @ x's outputs) first.
            s = tuple(getattr(x_local, "shape", ()))
            if isinstance(x_local, torch.Tensor):
                if nb and len(s) in (nb + 1, nb + 2) and s[:nb] == bs and s[nb] == m:
                    k = s[-1] if len(s) == nb + 2 else 1
                    return x_local.reshape(-1, m, k), bs, len(s) == nb + 2
                if len(s) == 1 and s[0] == m:
                    return x_local.reshape(1, m, 1), (), False
                if len(s) == 2 and s[0] == m:
                    return x_local[None], (), True
                if len(s) == 3 and s[1] == m:
                    return x_local, (s[0],), True
            extra = f", [*{bs}, {m}] or [*{bs}, {m}, k]" if nb else ""
            raise ValueError(f"x_local must be [{m}], [{m}, k] or [B, {m}, k]{extra}, got {s}")

        (x3, lead, has_k), _ = _run_agreed(self.comm, "DSparseTensor.gather", check_local)
        if root is None:
            out = DF.AllGatherRows.apply(x3, self.comm, P.owners(use_rows), N)
        else:
            out = DF.vec_gather_root(layout, x3.detach(), N, root, self.comm.Get_rank())
            if out is None:
                return None
        return out.reshape(lead + (N,) + ((out.shape[-1],) if has_k else ()))

    def full_tensor(self):
        """The global matrix as a SparseTensor on every rank (slots of all ranks, in rank
        order; differentiable in the local values). O(global nnz) memory per rank.
        Collective."""
        P = self._pattern
        counts = self.comm.allgather(P.nnz)
        total = sum(counts)
        row, col = P.slot_coo()
        gidx = DF.allgatherv_rows(self.comm, torch.stack([row, col], 1), counts).t()
        vals = DF.AllGatherSlots.apply(self._values, self.comm, counts)
        vals = vals.reshape(self._batch_shape + (total,))
        A = SparseTensor(vals, gidx[0], gidx[1], self._batch_shape + (P.M, P.N))
        return A.T() if self._op == SLA_OP_T else A

    def to_dense(self):
        """The global dense matrix on every rank (small matrices, tests). Collective."""
        return self.full_tensor().to_dense()

    # --- save / load --------------------------------------------------------------------------
    def save(self, path):
        """Writes the partitioned matrix: one file per rank, ``{path}.rank{r}.pt`` (its owned
        rows, the global (row, col) of its local slots and their values, torch.save), and
        ``{path}.meta.json`` from rank 0 (shape, dtype, rank count, transposed). Collective
        (the ranks agree that every file was written)."""
        import json
        P, rank = self._pattern, self.comm.Get_rank()
        row, col = P.slot_coo()

        def write():
            torch.save({"owned_rows": P.row_owned, "owned_cols": P.col_owned,
                        "same_layouts": P.same_layouts, "row": row, "col": col,
                        "values": self._values.detach()}, f"{path}.rank{rank}.pt")
            if rank == 0:
                with open(f"{path}.meta.json", "w") as f:
                    json.dump({"format": "torch_sla.DSparseTensor", "version": 1,
                               "shape": [P.M, P.N], "batch_shape": list(self._batch_shape),
                               "dtype": str(self.dtype).replace("torch.", ""),
                               "nranks": self.comm.Get_size(),
                               "transposed": self._op == SLA_OP_T}, f)

        _run_agreed(self.comm, "DSparseTensor.save", write)

    @classmethod
    def load(cls, path, comm=None):
        """Reads what save() wrote. Collective. On as many ranks as it was saved from, each
        rank reads its own file and keeps its rows; on another rank count, rank r reads the
        files r, r + p, ... and the rows are redistributed over the balanced contiguous
        layout (the entries travel to their owners as in from_sparse_local)."""
        import json
        comm = _default_comm(comm)
        rank, p = comm.Get_rank(), comm.Get_size()

        def read():
            with open(f"{path}.meta.json") as f:
                meta = json.load(f)
            if meta.get("format") != "torch_sla.DSparseTensor":
                raise ValueError(f"{path}.meta.json is not a saved DSparseTensor")
            parts = [torch.load(f"{path}.rank{q}.pt") for q in range(rank, meta["nranks"], p)]
            return meta, parts

        (meta, parts), _ = _run_agreed(comm, "DSparseTensor.load", read)
        M, N = meta["shape"]
        batch = tuple(meta["batch_shape"])
        dtype = getattr(torch, meta["dtype"])
        B = math.prod(batch)
        row = torch.cat([q["row"] for q in parts]) if parts else torch.empty(0, dtype=torch.int64)
        col = torch.cat([q["col"] for q in parts]) if parts else torch.empty(0, dtype=torch.int64)
        vals = (torch.cat([q["values"].reshape(B, -1) for q in parts], dim=1) if parts else
                torch.zeros(B, 0, dtype=dtype))
        same = meta["nranks"] == p
        D = cls.from_sparse_local(vals.reshape(batch + (row.numel(),)), row, col,
                                  batch + (M, N), comm=comm,
                                  owned_rows=parts[0]["owned_rows"] if same else None,
                                  owned_cols=(parts[0]["owned_cols"]
                                              if same and not parts[0]["same_layouts"] else
                                              None))
        return D.T if meta["transposed"] else D

    # --- structure ----------------------------------------------------------------------------
    def is_symmetric(self, atol=1e-8, rtol=1e-5):
        """True when |a_ij − a_ji| ≤ atol + rtol·max(|a_ij|, |a_ji|) for every entry of every
        batch element; the same answer on every rank. Exact pattern work in libsla_mpi: the
        pattern of A + Aᵀ is built distributed, A's and Aᵀ's values gathered onto it, and the
        slots compared locally. Collective."""
        P = self._pattern
        if P.M != P.N or not P.same_layouts:
            return False
        row, col = P.slot_coo()
        rows = _LayoutRef(P.rows_ptr, self.comm)
        S = _Pattern.from_coo(rows, rows, torch.cat([row, col]), torch.cat([col, row]))
        v = self._values.detach()
        z = torch.zeros_like(v)
        a = DF._move(torch.cat([v, z], dim=1), S, True)
        at = DF._move(torch.cat([z, v], dim=1), S, True)
        bad = ((a - at).abs() > atol + rtol * torch.maximum(a.abs(), at.abs())).any()
        total = DF.allsum(P.rows_ptr, torch.tensor([float(bad)], dtype=torch.float64))
        return bool(total.item() == 0)

    # --- solves (integration point) -----------------------------------------------------------
    def solve(self, b_local, method="auto", preconditioner="auto", rtol=1e-10, atol=0.0,
              maxiter=None, return_info=False, restart=None, strict=False, **kwargs):
        """x_local with D x = b: b_local [m_local], [m_local, k] or [*batch, m_local(, k)],
        this rank's owned rows. Collective; differentiable in the values and b (backward: one
        solve with the other op on the same solver object, then ∂a = −λ[r] x[c]).

        method "lu" (also "cholesky", "ldlt", "klu": every direct method is served by the one
        distributed direct solver): libsla_mpi's distributed LU by SuperLU_DIST (sla_dist_lu_*;
        libsla's singularity rule: a numerically singular matrix raises SingularMatrixError).
        method "cg", "bicgstab", "gmres", "minres", "lsqr": libsla_mpi's distributed Krylov
        solvers (sla_dist_solver_*; preconditioners "auto", "none", "jacobi", "ic0"/
        "bjacobi-ic0", "ilu0"/"bjacobi-ilu0", "amg"/"bjacobi-amg", "boomeramg"; stopping rule
        ‖b − A x‖₂ ≤ max(rtol·‖b‖₂, atol) in global norms; non-convergence warns, strict=True
        raises). method "auto": the Krylov solvers' auto where the library has them, else LU.
        method "lsqr" also takes a rectangular matrix (b on the rows, x on the columns of
        op(A)): x = op(A)⁺ b, differentiable by the least-squares VJP of the minimum-norm
        solution (sla_dist_solver_lstsq_vjp: three distributed LSQR solves).
        return_info=True returns (x, SolveInfo). A libsla_mpi without the asked solver raises
        NotImplementedError naming the missing piece (torch_sla carries no Python copy)."""
        have_krylov = mlib.has("sla_dist_solver_create")
        have_lu = mlib.has("sla_dist_lu_create") and bool(mlib.sla_dist_have_superlu())
        direct = method in ("lu", "superlu", "cholesky", "ldlt", "klu")
        if direct or (method == "auto" and not have_krylov):
            if not have_lu:
                raise NotImplementedError(_missing(
                    "DSparseTensor.solve", "the distributed direct LU (sla_dist_lu_* with "
                    "SuperLU_DIST)" + ("" if direct else " or the distributed Krylov solvers "
                                       "(sla_dist_solver_*)")))
            skind, cmethod = "lu", "lu"
        elif not have_krylov:
            raise NotImplementedError(_missing(
                f"DSparseTensor.solve(method={method!r})",
                "the distributed Krylov solvers (sla_dist_solver_*)" +
                ("; method='lu' (SuperLU_DIST) is available" if have_lu else "")))
        else:
            skind, cmethod = "krylov", method
        import ctypes
        from ._capi import METHODS
        from ._functions import SolveConfig
        from ._mpi_capi import DIST_PRECONDS, DistSolverOptionsC
        what = "DSparseTensor.solve"
        if kwargs:
            unknown = ", ".join(sorted(kwargs))
        m, _ = self.local_shape
        B = self._values.shape[0]
        nb = len(self._batch_shape)

        def check_local():
            if kwargs:
                raise TypeError(f"unexpected keyword arguments: {unknown}")
            if cmethod not in METHODS:
                raise ValueError(f"method must be one of {METHODS}, got {method!r}")
            if preconditioner not in DIST_PRECONDS:
                raise ValueError(f"preconditioner must be one of {tuple(DIST_PRECONDS)}, got "
                                 f"{preconditioner!r}")
            b = b_local
            if not isinstance(b, torch.Tensor) or b.dtype != self.dtype:
                raise TypeError(f"b_local must be a {self.dtype} torch.Tensor")
            if b.dim() == 1 and b.shape[0] == m:
                return b[:, None], "vec"
            if b.dim() == 2 and b.shape[0] == m:
                return b, "mat"
            if nb and tuple(b.shape[:nb]) == self._batch_shape and b.dim() in (nb + 1, nb + 2) \
                    and b.shape[nb] == m:
                k = b.shape[-1] if b.dim() == nb + 2 else 1
                return b.reshape(B, m, k), ("batched" if b.dim() == nb + 2 else "batched_vec")
            raise ValueError(f"b_local has shape {tuple(b.shape)}; this rank owns {m} rows, so "
                             f"it must be [{m}], [{m}, k] or [*batch, {m}(, k)]")

        (bb, kind), need = _run_agreed(self.comm, what, check_local,
                                       flags=(self._values.requires_grad, _requires_grad(b_local)))
        free_solvers(self.comm)          # those of earlier solves whose graphs are gone
        opts = None
        if skind == "krylov":
            opts = DistSolverOptionsC()
            mlib.sla_dist_solver_options_init(ctypes.byref(opts))
            opts.method = METHODS.index(cmethod)
            opts.precond = DIST_PRECONDS[preconditioner]
            opts.rtol, opts.atol = float(rtol), float(atol)
            if maxiter is not None:
                opts.maxiter = int(maxiter)
            if restart is not None:
                opts.restart = int(restart)
        if need[1] and not bb.requires_grad:
            bb = bb.detach().requires_grad_()
        vals = self._values
        if need[0] and not vals.requires_grad:
            vals = vals.detach().requires_grad_()
        config = SolveConfig(strict=strict, want_info=return_info, what=what)
        x = DF.DistSolve.apply(vals, bb, self._pattern, self._op, opts, tuple(need), config,
                               skind)
        if kind == "vec":
            x = x[0, :, 0] if not nb else x[..., 0]
        elif kind == "mat":
            x = x[0] if not nb else x
        elif kind == "batched_vec":
            x = x[..., 0]
        if nb:
            x = x.reshape(self._batch_shape + tuple(x.shape[1:]))
        return (x, config.info) if return_info else x

    def eigsh(self, k=6, which="SA", M=None, tol=1e-10, maxiter=None, return_eigenvectors=True,
              sigma=None):
        """k eigenpairs of the symmetric matrix (per batch element) by libsla_mpi's LOBPCG
        (sla_dist_eigsh): which "SA" (smallest algebraic, default) or "LA" (largest); LM/SM
        are not available distributed (ValueError: for an SPD matrix LA is LM). Returns
        eigenvalues [*batch, k] (ascending, the same on every rank) and this rank's rows of the
        eigenvectors [*batch, m_local, k] (sign convention of the serial eigsh).

        M : optional DSparseTensor, the SPD mass matrix of the generalized problem
            A v = λ M v, on the same row partition as this matrix (each rank owning the same
            rows: e.g. DSparseTensor.from_sparse_local(..., owned_rows=D.owned_rows)), float64,
            no batch or this batch shape. Eigenvectors are then M-orthonormal.

        sigma : optional float, shift-invert mode: the k eigenvalues nearest sigma (which is
            then ignored), by a distributed LU of A − sigma·M (SuperLU_DIST) and LOBPCG on the
            inverse (docs/mpi.md); residuals are those of the original problem. M must then be
            on A's pattern or diagonal. sigma an eigenvalue (A − sigma·M numerically singular)
            raises on every rank.

        Differentiable with respect to the values of A (and of M) through eigenvalues
        (Hellmann–Feynman) and eigenvectors (sla_dist_eigsh_vjp: projected solves with
        A − λ_i M on the complement of the k eigenvectors, by distributed MINRES), as the serial
        SparseTensor.eigsh. A loss on the eigenvectors must not depend on their sign or, for a
        repeated eigenvalue, on the basis of its eigenspace: a loss that does (including one on
        an eigenvalue tied with one not among the k computed) raises ValueError on every rank.
        The eigenvalues are replicated: a loss on them must be the same on every rank (it counts
        once); the eigenvector rows are this rank's, so their losses add up over the ranks.
        Collective."""
        what = "DSparseTensor.eigsh"
        if not mlib.has("sla_dist_eigsh"):
            raise NotImplementedError(_missing(what, "sla_dist_eigsh in the loaded libsla_mpi"))
        codes = {"LA": 2, "SA": 3}

        if sigma is not None and not (mlib.has("sla_dist_lu_create")
                                      and bool(mlib.sla_dist_have_superlu())):
            raise NotImplementedError(_missing(what + "(sigma=...)", "a distributed LU "
                                               "(SuperLU_DIST) in the loaded libsla_mpi"))

        def check_local():
            if sigma is not None and not math.isfinite(float(sigma)):
                raise ValueError(f"{what}: sigma = {sigma!r} must be finite")
            if sigma is None and which not in codes:
                raise ValueError(f"{what}: which = {which!r}: the distributed eigensolver has "
                                 f"'SA' and 'LA' (for an SPD matrix 'LA' is 'LM')")
            if self._values.dtype != torch.float64:
                raise TypeError(f"{what}: float64 values only, got {self._values.dtype}")
            if M is None:
                return
            if not isinstance(M, DSparseTensor):
                raise TypeError(f"{what}: M must be a DSparseTensor (on this matrix's row "
                                f"partition), got {type(M).__name__}")
            if tuple(M.shape) != tuple(self.shape[-2:]) and tuple(M.shape) != tuple(self.shape):
                raise ValueError(f"{what}: M has shape {tuple(M.shape)}, A {tuple(self.shape)}")
            if M._values.dtype != torch.float64:
                raise TypeError(f"{what}: M: float64 values only, got {M._values.dtype}")
            if M._batch_shape not in ((), self._batch_shape):
                raise ValueError(f"{what}: M has batch shape {M._batch_shape}: none or A's "
                                 f"{self._batch_shape}")
            if not torch.equal(M._pattern.row_owned, self._pattern.row_owned):
                raise ValueError(f"{what}: M's rows are partitioned unlike A's (rank "
                                 f"{self.comm.Get_rank()} owns other rows of M): build M on the "
                                 f"same partition")

        from ._dist_eigsh import DistEigsh
        mreq = M is not None and M._values.requires_grad
        _, need = _run_agreed(self.comm, what, check_local,
                              flags=(self._values.requires_grad, mreq))
        lam, V = DistEigsh.apply(self._values, M._values if M is not None else None,
                                 self._pattern, M._pattern if M is not None else None, self.comm,
                                 int(k), codes.get(which, 3), tol, maxiter,
                                 (bool(need[0]), bool(need[1])), sigma)
        lam = lam.reshape(self._batch_shape + (int(k),))
        V = V.reshape(self._batch_shape + tuple(V.shape[1:]))
        return (lam, V) if return_eigenvectors else lam

    def slogdet(self):
        """(sign, log|det|) of the matrix (per batch element: [*batch]), from libsla_mpi's
        distributed LU (SuperLU_DIST); (0, −inf) for a numerically singular matrix. The same
        on every rank. Collective (backward too). log|det| is differentiable in the local
        values: ∂ log|det A| / ∂a_s = (A⁻ᵀ)[r_s, c_s] by sla_dist_lu_logdet_grad: parallel
        MUMPS's selected inverse on distributed factors where libsla_mpi has it (rank 0 holds
        O(rows) vectors, and MUMPS's analysis of the graph), else A gathered to rank 0 for libsla's serial sparse inverse subset
        (docs/mpi.md, "Log-determinant gradient"; exact either way); a singular matrix raises
        in backward on every rank."""
        if not (mlib.has("sla_dist_lu_create") and bool(mlib.sla_dist_have_superlu())):
            raise NotImplementedError(_missing(
                "DSparseTensor.slogdet", "a distributed determinant (sla_dist_lu_logdet, with "
                "SuperLU_DIST)"))
        # ---- logdet gradient (mpi-logdet): DistSlogdet, python/torch_sla/_dist_logdet.py ----
        from ._dist_logdet import DistSlogdet
        _, need = _run_agreed(self.comm, "DSparseTensor.slogdet", lambda: None,
                              flags=(self._values.requires_grad,))
        if need[0] and not mlib.has("sla_dist_lu_logdet_grad"):
            from ._functions import unavailable
            sign, logabs = DistSlogdet.apply(self._values.detach(), self._pattern, False)
            logabs = unavailable(logabs, (self._values,), "torch_sla: the gradient of "
                                 "DSparseTensor.logdet needs sla_dist_lu_logdet_grad in "
                                 "libsla_mpi, which this build does not have")
        else:
            sign, logabs = DistSlogdet.apply(self._values, self._pattern, bool(need[0]))
        shape = self._batch_shape
        return sign.reshape(shape), logabs.reshape(shape)

    def logdet(self):
        """log det A as torch.logdet: NaN when det < 0, −inf when singular. See slogdet()."""
        sign, logabs = self.slogdet()
        return torch.where(sign < 0, torch.full_like(logabs, float("nan")), logabs)

    def det(self):
        sign, logabs = self.slogdet()
        return sign * torch.exp(logabs)


class _LayoutRef:
    """A borrowed layout (owned by a pattern that outlives this use)."""

    def __init__(self, ptr, comm):
        self.ptr, self.comm = ptr, comm


def _missing(what, piece):
    return (f"torch_sla: {what} needs {piece} in libsla_mpi, which this build "
            f"({mlib.load().path}) does not have yet. For a list of independent matrices "
            f"use DSparseTensorList (serial solves on the owning rank); for one matrix, "
            f"D.full_tensor().solve(...) solves the gathered matrix serially on every rank.")


def _requires_grad(t):
    return isinstance(t, torch.Tensor) and t.requires_grad


def _same(metas, rank):
    """Raises on this rank if its (shape, dtype, layout kinds) differ from rank 0's."""
    first, m = metas[0], metas[rank]
    if m[0] != first[0]:
        raise ValueError(f"shape {m[0]} differs from {first[0]} on rank 0")
    if m[1] != first[1]:
        raise TypeError(f"dtype {m[1]} differs from {first[1]} on rank 0")
    if m[2] != first[2] or m[3] != first[3]:
        raise ValueError("owned_rows/owned_cols given here but not on rank 0, or the reverse")


def _same_k(ks, rank):
    if ks[rank] != ks[0]:
        raise ValueError(f"x has {ks[rank]} columns here but {ks[0]} on rank 0")


# ------------------------------------------------------------------------------------------------
# Partitioners as functions (torch-sla's names): part ids for a global graph
# ------------------------------------------------------------------------------------------------
def _part_vector(row, col, num_nodes, method, coords, comm, num_parts=None):
    """Runs libsla_mpi's partitioner `method` on the graph (row, col) (given on every rank)
    with one part per rank of comm (num_parts None or comm's size), or num_parts parts
    (sla_dist_partition_parts); returns part[num_nodes] on every rank. Collective."""
    comm = _default_comm(comm)
    row, col = _as_index(row, "row"), _as_index(col, "col")
    L = _Layout.balanced(comm, num_nodes)
    # each rank hands the entries of its own contiguous rows (no exchange of the graph)
    lo = int(L.owned[0]) if L.n_local else 0
    hi = lo + L.n_local
    keep = (row >= lo) & (row < hi)
    P = _Pattern.from_coo(L, L, row[keep], col[keep])
    cl, dim = None, 0
    if coords is not None:
        c = torch.as_tensor(coords).to(torch.float64)
        c = c[:, None] if c.dim() == 1 else c
        dim = int(c.shape[1])
        cl = c[lo:hi]
    if num_parts is not None and int(num_parts) != comm.Get_size():
        return _parts_any(P, L, method, cl, dim, int(num_parts), comm), None
    newL, info = _partition_layout(P, method, cl, dim)
    counts = comm.allgather(int(newL.n_local))
    order = DF.allgatherv_rows(comm, newL.owned.reshape(-1, 1).contiguous(), counts).reshape(-1)
    part = torch.empty(num_nodes, dtype=torch.int64)
    part[order] = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
    return part, info


def partition_simple(num_nodes, num_parts):
    """Contiguous balanced split: part p gets ⌊n/P⌋ or ⌊n/P⌋ + 1 consecutive nodes, the larger
    parts first (libsla_mpi's balanced layout). [num_nodes] int64. Local."""
    n, p = int(num_nodes), int(num_parts)
    if p < 1 or n < 0:
        raise ValueError(f"partition_simple: num_parts ≥ 1 and num_nodes ≥ 0 needed, got "
                         f"{num_parts}, {num_nodes}")
    q, r = divmod(n, p)
    sizes = torch.tensor([q + 1] * r + [q] * (p - r), dtype=torch.int64)
    return torch.repeat_interleave(torch.arange(p, dtype=torch.int64), sizes)


def partition_graph_metis(row, col, num_nodes, num_parts=None, comm=None):
    """METIS k-way partition of the graph of A + Aᵀ (entries (row, col), given on every
    rank), balanced by nnz + 1 per row: part id per node, [num_nodes] int64, the same on every
    rank. Runs libsla_mpi's METIS partitioner: one part per rank of comm by default, or
    num_parts parts (any count ≥ 1, sla_dist_partition_parts). Collective."""
    comm = _default_comm(comm)
    _check_parts(num_parts, comm, "partition_graph_metis")
    return _part_vector(row, col, int(num_nodes), PARTITIONERS["metis"], None, comm,
                        num_parts)[0]


def partition_coordinates(coords, num_parts=None, method="rcb", comm=None, row=None, col=None):
    """Geometric partition by node coordinates coords [N, dim] (dim 1..3, on every rank):
    method "rcb" (recursive coordinate bisection) or "hilbert" (Hilbert-curve order cut into
    balanced pieces). Balanced by node (weight nnz + 1 of the graph (row, col) if given).
    num_parts: one part per rank of comm (default) or any count ≥ 1. [N] int64 on every rank;
    the same partition whatever the rank count. Collective."""
    comm = _default_comm(comm)
    _check_parts(num_parts, comm, "partition_coordinates")
    if method not in ("rcb", "hilbert"):
        raise ValueError(f"partition_coordinates: method must be 'rcb' or 'hilbert', got "
                         f"{method!r}")
    c = torch.as_tensor(coords)
    n = int(c.shape[0])
    if row is None:
        row = col = torch.arange(n, dtype=torch.int64)
    return _part_vector(row, col, n, PARTITIONERS[method], c, comm, num_parts)[0]


# ---- num_parts ≠ ranks (mpi-logdet): sla_dist_partition_parts ----
def _check_parts(num_parts, comm, what):
    """num_parts: None (one part per rank) or an int ≥ 1; another count than the ranks needs
    sla_dist_partition_parts in libsla_mpi. Local (the same verdict on every rank for the same
    arguments)."""
    if num_parts is None:
        return
    if isinstance(num_parts, bool) or int(num_parts) != num_parts or int(num_parts) < 1:
        raise ValueError(f"{what}: num_parts must be an integer ≥ 1, got {num_parts!r}")
    if int(num_parts) != comm.Get_size() and not mlib.has("sla_dist_partition_parts"):
        raise NotImplementedError(_missing(what, f"sla_dist_partition_parts (num_parts="
                                           f"{num_parts} on {comm.Get_size()} ranks)"))


def _parts_any(P, L, method, coords_local, dim, num_parts, comm):
    """part[num_nodes] (int64, every rank) of num_parts parts of P's rows, on the contiguous
    balanced layout L. Collective."""
    import ctypes
    part = torch.empty(max(L.n_local, 1), dtype=torch.int32)
    cptr = None
    if coords_local is not None:
        coords_local = coords_local.to(torch.float64).contiguous()
        cptr = (coords_local if coords_local.numel() else torch.zeros(1)).data_ptr()
    check(mlib.sla_dist_partition_parts(P.ptr, method, num_parts, dim, cptr,
                                        ctypes.c_void_p(part.data_ptr())))
    counts = comm.allgather(int(L.n_local))
    local = part[:L.n_local].to(torch.int64).reshape(-1, 1).contiguous()
    return DF.allgatherv_rows(comm, local, counts).reshape(-1)   # L is contiguous: rank order


from .distributed_list import DSparseTensorList  # noqa: E402  (uses _agree, _default_comm)

__all__ = ["DSparseTensor", "DSparseTensorList", "Partition", "partition_simple",
           "partition_graph_metis", "partition_coordinates", "free_pending"]
