"""autograd Functions of the distributed tensors: each forward calls libsla_mpi, each backward
its adjoint. Every one of them is collective in both directions: forward and backward must
run on every rank of the communicator, in the same order (the distributed module agrees on
requires_grad before recording them, so the graph has the same shape on every rank).

Conventions: local values are [B, nnz_local] in the pattern's slot order (diagonal block, then
off-diagonal block); dense local blocks are [n_local, k] (shared by the batch) or
[B, n_local, k].
"""
import ctypes

import torch
from torch.autograd import Function

from ._capi import SLA_OP_N, SLA_OP_T, check
from ._functions import DTYPE_CODE, differentiable, other, unavailable
from ._mpi_capi import DistMatrixC, mlib


def dist_view(pattern, values):
    """sla_dist_matrix view of [B, nnz_local] contiguous values (keep `values` alive)."""
    return DistMatrixC(pattern.ptr, DTYPE_CODE[values.dtype], values.shape[0],
                       values.data_ptr())


def _ptr(t):
    """data pointer, or None for an empty tensor (libsla_mpi accepts NULL for 0 entries)."""
    return t.data_ptr() if t.numel() else None


# ------------------------------------------------------------------------------------------------
# COO values on each rank ↔ local slot values on their owners
# ------------------------------------------------------------------------------------------------
def _move(t, pattern, to_slots):
    t = t.contiguous()
    B = t.shape[0]
    out = t.new_zeros(B, pattern.nnz if to_slots else pattern.nnz_input)
    fn = mlib.sla_dist_values_gather if to_slots else mlib.sla_dist_values_scatter
    # NULL arrays are fine for zero entries, but a real (even dummy) pointer costs nothing
    src = t if t.numel() else t.new_zeros(1)
    dst = out if out.numel() else out.new_zeros(1)
    check(fn(pattern.ptr, DTYPE_CODE[t.dtype], B, src.data_ptr(), dst.data_ptr()))
    return out


class DistGather(Function):
    """This rank's COO values [B, nnz_input] → its local slot values [B, nnz_local]
    (sla_dist_values_gather: entries travel to their row's owner, duplicates summed); the
    backward is its transpose, sla_dist_values_scatter (each entry gets its slot's
    gradient, wherever the slot lives)."""

    @staticmethod
    def forward(ctx, coo, pattern):
        ctx.pattern = pattern
        return _move(coo, pattern, True)

    @staticmethod
    def backward(ctx, g):
        if differentiable():
            return DistScatterValues.apply(g, ctx.pattern), None
        return _move(g, ctx.pattern, False), None


class DistScatterValues(Function):
    """The transpose of DistGather (used by its differentiable backward)."""

    @staticmethod
    def forward(ctx, slots, pattern):
        ctx.pattern = pattern
        return _move(slots, pattern, False)

    @staticmethod
    def backward(ctx, g):
        if differentiable():
            return DistGather.apply(g, ctx.pattern), None
        return _move(g, ctx.pattern, True), None


# ------------------------------------------------------------------------------------------------
# y = op(A) x (distributed SpMV) and its VJP
# ------------------------------------------------------------------------------------------------
def _spmv(pattern, values, x, op):
    """y [B, ny, k] = op(A) x for x [nx, k] or [B, nx, k] (sla_dist_spmv)."""
    values, x = values.contiguous(), x.contiguous()
    B, k = values.shape[0], x.shape[-1]
    ny = pattern.m_local if op == SLA_OP_N else pattern.n_local
    y = values.new_empty(B, ny, k)
    A = dist_view(pattern, values)
    xb = x if x.numel() else x.new_zeros(1)
    yb = y if y.numel() else y.new_zeros(1)
    check(mlib.sla_dist_spmv(op, 1.0, ctypes.byref(A), xb.data_ptr(), int(x.dim() == 3), k,
                             0.0, yb.data_ptr()))
    return y


class DistSpMV(Function):
    """y = op(A) · x on every rank's slices. Backward (sla_dist_spmv_vjp): dx = op(A)ᵀ g by the
    other op's distributed product (the reverse halo exchange for op = N), summed over the
    batch for a shared x; dvalues local, with the ghost values of x (op = N) or g (op = T)
    from one forward exchange. `need` = (values, x) gradients wanted on some rank (agreed
    before the forward, so that every rank makes the same C call in the backward)."""

    @staticmethod
    def forward(ctx, values, x, pattern, op, need):
        ctx.pattern, ctx.op, ctx.need = pattern, op, need
        ctx.save_for_backward(values, x)
        return _spmv(pattern, values, x, op)

    @staticmethod
    def backward(ctx, g):
        values, x = ctx.saved_tensors
        pattern, op = ctx.pattern, ctx.op
        need_v, need_x = ctx.need
        if differentiable():
            dx = dv = None
            if need_x:
                gx = DistSpMV.apply(values, g, pattern, other(op), (True, True))
                dx = gx if x.dim() == 3 else gx.sum(0)
            if need_v:
                dv = _vjp(pattern, values, x, g, op, False, True)[1]
                dv = unavailable(dv, (values, x, g),
                                 "torch_sla: the second derivative of DSparseTensor @ x with "
                                 "respect to the matrix values is not implemented (the "
                                 "distributed pattern outer product has no autograd form yet)")
            return _only(dv, ctx, 0), _only(dx, ctx, 1), None, None, None
        dx, dv = _vjp(pattern, values, x, g, op, need_x, need_v)
        return _only(dv, ctx, 0), _only(dx, ctx, 1), None, None, None


def _only(t, ctx, i):
    """The gradient if this rank's input wants it (other ranks may have asked for it)."""
    return t if ctx.needs_input_grad[i] else None


def _vjp(pattern, values, x, g, op, want_x, want_v):
    values, x, g = values.contiguous(), x.contiguous(), g.contiguous()
    B, k = values.shape[0], x.shape[-1]
    A = dist_view(pattern, values)
    dx = torch.empty_like(x) if want_x else None
    dv = torch.empty_like(values) if want_v else None
    pad = values.new_zeros(1)

    def buf(t):
        return (t if t.numel() else pad).data_ptr()

    check(mlib.sla_dist_spmv_vjp(op, 1.0, ctypes.byref(A), buf(x), int(x.dim() == 3), k, buf(g),
                                 buf(dx) if want_x else None, buf(dv) if want_v else None))
    return dx, dv


# ------------------------------------------------------------------------------------------------
# Vectors: every rank's slices ↔ the global vector on every rank
# ------------------------------------------------------------------------------------------------
def allsum(layout, t):
    """Σ over the ranks of t (same shape on every rank), the same bits on every rank
    (sla_dist_allsum's fixed tree, in double). For a few values (flags, a norm):
    sla_dist_allsum sends 32 values per round."""
    flat = t.detach().to(torch.float64).contiguous().reshape(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    if n >= 2 ** 31:
        raise ValueError(f"torch_sla: allsum of {n} values exceeds the 2^31 − 1 of one call")
    pad = flat.new_zeros(1)
    comm = mlib.sla_dist_layout_comm(layout)
    check(mlib.sla_dist_allsum(comm, n, (flat if n else pad).data_ptr(),
                               (out if n else pad).data_ptr()))
    return out.reshape(t.shape).to(t.dtype)


def _rows_first(t):
    """[B, n, k] → a contiguous [n, B·k] (the rows to gather, each with its B·k values)."""
    return t.permute(1, 0, 2).reshape(t.shape[1], t.shape[0] * t.shape[2]).contiguous()


def allgatherv_rows(comm, t, counts):
    """Every rank's rows of t ([n_r, w], w the same everywhere) concatenated in rank order on
    every rank (MPI_Allgatherv: a copy, no arithmetic)."""
    w = t.shape[1]
    out = t.new_empty(sum(counts), w)
    comm.Allgatherv(t.numpy(), [out.numpy(), [c * w for c in counts]])
    return out


def reduce_scatter_rows(comm, t, counts):
    """The sum over the ranks of t ([Σ n_r, w], the same shape everywhere), each rank keeping
    its own n_r rows (MPI_Reduce_scatter: each entry is summed once, on its owner, in the
    order of Open MPI's algorithm for this size, fixed run to run)."""
    from mpi4py import MPI
    w = t.shape[1]
    r = comm.Get_rank()
    out = t.new_empty(counts[r], w)
    comm.Reduce_scatter(t.contiguous().numpy(), out.numpy(), [c * w for c in counts],
                        op=MPI.SUM)
    return out


class AllGatherRows(Function):
    """x_local [B, n_local, k] → the global [B, N, k] on every rank (one MPI_Allgatherv of the
    owned slices, placed at their global indices). Backward: the global cotangents of all
    ranks summed, each rank keeping its owned rows (MPI_Reduce_scatter), the adjoint of
    'copy to everyone'. `owners` = (every rank's owned global indices in rank order, counts)."""

    @staticmethod
    def forward(ctx, x, comm, owners, N):
        order, counts = owners
        ctx.comm, ctx.owners = comm, owners
        B, k = x.shape[0], x.shape[2]
        got = allgatherv_rows(comm, _rows_first(x.detach()), counts)     # [N, B·k]
        full = x.new_empty(N, B * k)
        full[order] = got
        return full.reshape(N, B, k).permute(1, 0, 2).contiguous()

    @staticmethod
    def backward(ctx, g):
        order, counts = ctx.owners
        B, k = g.shape[0], g.shape[2]
        mine = reduce_scatter_rows(ctx.comm, _rows_first(g.detach())[order], counts)
        return mine.reshape(mine.shape[0], B, k).permute(1, 0, 2).contiguous(), None, None, None


def vec_scatter_root(layout, dtype, batch, k, root, glob, n_local):
    """sla_dist_vec_scatter: [batch, N, k] on root → [batch, n_local, k] here."""
    out = torch.empty(batch, n_local, k, dtype=dtype)
    pad = torch.zeros(1, dtype=dtype)
    src = glob.contiguous() if glob is not None and glob.numel() else pad
    check(mlib.sla_dist_vec_scatter(layout, DTYPE_CODE[dtype], batch, k, root, src.data_ptr(),
                                    (out if out.numel() else pad).data_ptr()))
    return out


def vec_gather_root(layout, x, N, root, rank):
    """sla_dist_vec_gather: [batch, n_local, k] here → [batch, N, k] on root (None elsewhere)."""
    x = x.contiguous()
    batch, k = x.shape[0], x.shape[-1]
    pad = x.new_zeros(1)
    out = x.new_empty(batch, N, k) if rank == root else None
    dst = out if out is not None and out.numel() else pad
    check(mlib.sla_dist_vec_gather(layout, DTYPE_CODE[x.dtype], batch, k, root,
                                   (x if x.numel() else pad).data_ptr(), dst.data_ptr()))
    return out


class AllGatherSlots(Function):
    """Local slot values [B, nnz_local] → every rank's, concatenated in rank order
    [B, Σ nnz_local], on every rank (MPI_Allgatherv; for full_tensor). Backward: cotangents
    summed over the ranks, each keeping its own span (MPI_Reduce_scatter)."""

    @staticmethod
    def forward(ctx, values, comm, counts):
        ctx.comm, ctx.counts = comm, counts
        got = allgatherv_rows(comm, values.detach().t().contiguous(), counts)
        return got.t().contiguous()

    @staticmethod
    def backward(ctx, g):
        mine = reduce_scatter_rows(ctx.comm, g.detach().t().contiguous(), ctx.counts)
        return mine.t().contiguous(), None, None


# ------------------------------------------------------------------------------------------------
# X = op(A)⁻¹ B on libsla_mpi's distributed solver objects (when the library has them)
# ------------------------------------------------------------------------------------------------
class DistSolverObject:
    """Owns a distributed solver of libsla_mpi, kind "krylov" (sla_dist_solver_*) or "lu"
    (sla_dist_lu_*, SuperLU_DIST), and the values it borrows. Freeing it is collective, so it
    is freed right after the forward when no gradient is wanted (the same point on every
    rank), and otherwise kept with the autograd graph (a retained graph may run the backward
    again); when the graph goes, it is queued under its creation number (the same on every
    rank: creations are collective) and freed by the next solve on the communicator, for the
    numbers queued on every rank (distributed.free_solvers)."""

    _seq = {}

    def __init__(self, pattern, values, options, kind):
        self.values = values.contiguous()
        self.pattern, self.kind = pattern, kind
        self.key = _comm_key(pattern.comm)
        A = dist_view(pattern, self.values)
        out = ctypes.c_void_p()
        if kind == "lu":
            check(mlib.sla_dist_lu_create(ctypes.byref(A), ctypes.byref(out)))
        else:
            check(mlib.sla_dist_solver_create(ctypes.byref(A), ctypes.byref(options),
                                              ctypes.byref(out)))
        self.ptr = out.value
        self.seq = DistSolverObject._seq.get(self.key, 0)
        DistSolverObject._seq[self.key] = self.seq + 1

    def solve(self, op, nrhs, B, X, info):
        fn = mlib.sla_dist_lu_solve if self.kind == "lu" else mlib.sla_dist_solver_solve
        return fn(self.ptr, op, nrhs, B, X, info)

    def solve_vjp(self, op, nrhs, X, G, dB, dvalues, info):
        fn = mlib.sla_dist_lu_solve_vjp if self.kind == "lu" else mlib.sla_dist_solver_solve_vjp
        return fn(self.ptr, op, nrhs, X, G, dB, dvalues, info)

    def describe(self):
        fn = mlib.sla_dist_lu_describe if self.kind == "lu" else mlib.sla_dist_solver_describe
        d = fn(self.ptr)
        return d.decode("utf-8", "replace") if d else ""

    def free(self):
        if self.ptr:
            free_solver(self.kind, self.ptr)
            self.ptr = None

    def __del__(self):
        ptr = getattr(self, "ptr", None)
        if ptr:
            from .distributed import _defer_solver
            _defer_solver(self.key, self.seq, (self.kind, ptr))
            self.ptr = None


def free_solver(kind, ptr):
    box = ctypes.c_void_p(ptr)
    (mlib.sla_dist_lu_free if kind == "lu" else mlib.sla_dist_solver_free)(ctypes.byref(box))


def _comm_key(comm):
    from mpi4py import MPI
    return MPI._handleof(comm)


def _dist_solve(solver, op, b, config):
    from ._capi import SolveInfoC
    B = solver.values.shape[0]
    b = b.contiguous()
    if b.dim() == 2:
        b = b.expand(B, *b.shape).contiguous()
    # X lives on op(A)'s domain layout (rectangular lsqr: not b's)
    nx = solver.pattern.n_local if op == SLA_OP_N else solver.pattern.m_local
    x = b.new_zeros(B, nx, b.shape[-1])
    info = SolveInfoC()
    pad = b.new_zeros(1)
    st = check(solver.solve(op, b.shape[-1], (b if b.numel() else pad).data_ptr(),
                            (x if x.numel() else pad).data_ptr(), ctypes.byref(info)))
    config.report(st, info)
    return x


class DistSolve(Function):
    """X = op(A)⁻¹ B ([B, n, k]; b [n, k] is shared by the batch) on a distributed solver.
    Backward: sla_dist_solver_solve_vjp on the same object (λ = op(A)⁻ᵀ G by one transposed
    distributed solve; dB = λ, summed over the batch for a shared b; ∂a = −λ[r] X[c] local);
    method lsqr: the least-squares VJP (_lstsq_vjp, sla_dist_solver_lstsq_vjp).
    `need` = (values, b) gradients wanted on some rank (agreed)."""

    @staticmethod
    def forward(ctx, values, b, pattern, op, options, need, config, kind):
        solver = DistSolverObject(pattern, values, options, kind)
        try:
            x = _dist_solve(solver, op, b, config)
        except Exception:
            solver.free()
            raise
        ctx.solver, ctx.op, ctx.need, ctx.config = solver, op, need, config
        ctx.b_batched = b.dim() == 3
        ctx.lsqr = _is_lsqr(kind, options)
        if any(need):
            ctx.save_for_backward(x, b) if ctx.lsqr else ctx.save_for_backward(x)
        else:
            solver.free()
        return x

    @staticmethod
    def backward(ctx, g):
        from ._capi import SolveInfoC
        x = ctx.saved_tensors[0]
        solver = ctx.solver
        need_v, need_b = ctx.need
        g = g.contiguous()
        pad = g.new_zeros(1)

        def buf(t):
            return (t if t.numel() else pad).data_ptr()

        info = SolveInfoC()
        if ctx.lsqr:
            db, dv, st = _lstsq_vjp(ctx, solver, x, g, buf, info)
        else:
            db = torch.empty_like(g) if need_b else None
            dv = torch.empty_like(solver.values) if need_v else None
            st = check(solver.solve_vjp(ctx.op, g.shape[-1], buf(x), buf(g),
                                        buf(db) if need_b else None, buf(dv) if need_v else None,
                                        ctypes.byref(info)))
        ctx.config.report(st, info, adjoint=True)
        if db is not None and not ctx.b_batched:
            db = db.sum(0)
        msg = "torch_sla: second derivatives through DSparseTensor.solve are not implemented"
        if dv is not None:
            dv = unavailable(dv, (g,), msg)
        if db is not None:
            db = unavailable(db, (g,), msg)
        return _only(dv, ctx, 0), _only(db, ctx, 1), None, None, None, None, None, None


# ---- least-squares VJP (mpi-logdet): method lsqr, rectangular A (sla_dist_solver_lstsq_vjp) ----
def _is_lsqr(kind, options):
    from ._capi import METHODS
    return kind == "krylov" and options is not None and options.method == METHODS.index("lsqr")


def _lstsq_vjp(ctx, solver, x, g, buf, info):
    """dB (b's shape, on op(A)'s range layout) and dvalues of X = op(A)⁺ B: the minimum-norm
    least-squares VJP, three distributed LSQR solves (sla_dist_solver_lstsq_vjp)."""
    b = ctx.saved_tensors[1]
    if b.dim() == 2:                       # shared by the batch (dB is summed by the caller)
        b = b.expand(solver.values.shape[0], *b.shape)
    b = b.contiguous()
    need_v, need_b = ctx.need
    db = torch.empty_like(b) if need_b else None
    dv = torch.empty_like(solver.values) if need_v else None
    st = check(mlib.sla_dist_solver_lstsq_vjp(
        solver.ptr, ctx.op, g.shape[-1], buf(b), buf(x), buf(g), buf(db) if need_b else None,
        buf(dv) if need_v else None, ctypes.byref(info)))
    return db, dv, st


def dist_lu_logdet(pattern, values):
    """(sign [B], log|det| [B]) of the distributed LU of values [B, nnz_local]. Collective."""
    solver = DistSolverObject(pattern, values.detach(), None, "lu")
    try:
        B = values.shape[0]
        sign = torch.empty(B, dtype=torch.float64)
        logabs = torch.empty(B, dtype=torch.float64)
        check(mlib.sla_dist_lu_logdet(solver.ptr, sign.data_ptr(), logabs.data_ptr()))
    finally:
        solver.free()
    return sign.to(values.dtype), logabs.to(values.dtype)


__all__ = ["DistSolve", "DistSolverObject", "DistGather", "DistScatterValues", "DistSpMV",
           "AllGatherRows", "AllGatherSlots", "allsum", "vec_scatter_root", "vec_gather_root",
           "dist_view", "SLA_OP_N", "SLA_OP_T"]
