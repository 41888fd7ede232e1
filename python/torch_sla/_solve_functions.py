"""Solves and determinants as torch.autograd.Functions (the two backward paths, first order
and differentiable, are described in _functions.py).

Solve: X = op(A)⁻¹ B on a solver of the refactor cache (_solver.py). With Λ = op(A)⁻ᵀ G:
    ∂B = Λ,   ∂a_s = −Σ_j Λ[r_s][j]·X[c_s][j] (op N),  −Σ_j X[r_s][j]·Λ[c_s][j] (op T).
First order: sla_solver_solve_vjp (one transposed solve on the same factors / preconditioner,
the outer product in C). Differentiable: Λ = SolveOn(values, G) with the other op on the same
solver object, ∂a = −PatternOuter(Λ, X); X is the forward's output, whose derivative is this
Solve again. Least squares (method lsqr) follows sla_solver_lstsq_vjp's formula
(src/solve/lstsq.c) the same two ways. Only lsqr keeps B (its backward reads the residual
B − op(A)X); a square solve's backward needs the values and X only, like torch.linalg.solve,
so changing B in place after the solve is harmless.

Slogdet: ∂log|det A|/∂a_s = (A⁻ᵀ)[r_s, c_s] (sla_solver_logdet_grad, from the factors); its
differentiable form is InverseEntries, whose backward −(A⁻ᵀHᵀA⁻ᵀ)[r_s, c_s] costs two solves
with n right-hand sides in all (in column blocks).
"""
import ctypes

import torch
from torch.autograd import Function

from ._capi import SLA_OP_N, SLA_OP_T, SolveInfoC, check, lib
from ._functions import (DTYPE_CODE, SolveConfig, differentiable, materializes_views, other, outer,
                         PatternOuter, refuse_complex_graph, spmv)
from ._solver import acquire

# bytes of the dense right-hand-side blocks of InverseEntries' backward (per block)
INVERSE_BLOCK_BYTES = 1 << 26


def _keep_pin(ctx, solver, pin, ninputs):
    """The pin stays with the autograd context when a backward may use the solver (released
    by that backward, or when the graph is freed); otherwise it is released now."""
    if any(ctx.needs_input_grad[:ninputs]):
        return pin
    solver.unpin(pin)
    return None


def _release(ctx):
    """After a first-order backward: the solver may serve other calls again. A differentiable
    backward keeps the pin (the graph it built will run this node again)."""
    if ctx.pin is not None and not differentiable():
        ctx.solver.unpin(ctx.pin)
        ctx.pin = None


def _rows(solver, op, of_x):
    """Rows of X (of_x) or of B in op(A) X = B."""
    p = solver.pattern
    return (p.ncols if op == SLA_OP_N else p.nrows) if of_x else \
        (p.nrows if op == SLA_OP_N else p.ncols)


def adjoint_solve(solver, op, G, config):
    """op(A)⁻ᵀ G [B, m, k] for G [B, n, k] on `solver` (op(A)⁺ᵀ G for lsqr): the adjoint entry
    point with only dB requested (sla_solver_solve_vjp / sla_solver_lstsq_vjp), so G is scaled
    by a power of two near 1/‖G‖∞ (atol alike) and G = 0 gives 0 at once."""
    G = G.contiguous()
    out = G.new_empty(G.shape[0], _rows(solver, op, of_x=False), G.shape[-1])
    info = SolveInfoC()
    if solver.method == "lsqr":
        st = check(lib.sla_solver_lstsq_vjp(solver.ptr, op, G.shape[-1], None, None,
                                            G.data_ptr(), out.data_ptr(), None,
                                            ctypes.byref(info)))
    else:
        st = check(lib.sla_solver_solve_vjp(solver.ptr, op, G.shape[-1], None, G.data_ptr(),
                                            out.data_ptr(), None, ctypes.byref(info)))
    config.report(st, info, adjoint=True)
    return out


def _save(ctx, solver, op, config, pin, values, b, x):
    """What a solve's backward needs: the values always (the factors are refactored back from
    them if the solver served another call meanwhile), X only for ∂values, B only for the
    least-squares ∂values."""
    ctx.op, ctx.config = op, config
    _hold(ctx, solver, pin, 2)
    ctx.lsqr = solver.method == "lsqr"
    need_v = ctx.needs_input_grad[0]
    ctx.save_for_backward(values, x if need_v else None, b if need_v and ctx.lsqr else None)


def _pinned(solver, pin, run):
    """run() while `pin` holds the solver; the pin is released if run() fails."""
    try:
        return run()
    except BaseException:
        solver.unpin(pin)
        raise


def _hold(ctx, solver, pin, ninputs):
    """The solver, the generation of its values and the pin (kept while a backward may use
    them: _keep_pin) on the autograd context."""
    ctx.solver, ctx.generation = solver, solver.generation
    ctx.pin = _keep_pin(ctx, solver, pin, ninputs)


@materializes_views
class Solve(Function):
    """X [B, n, k] = A_b⁻¹ B_b (B [B, m, k]; m ≠ n only for least squares, method lsqr). The
    solver comes from the refactor cache (see _solver.py) and is saved for the backward."""

    @staticmethod
    def forward(ctx, values, b, pattern, options, config):
        vals = values.detach()
        first = (SLA_OP_N, b.detach()) if (b.dtype == vals.dtype and b.dim() == 3 and
                                            b.shape[0] == vals.shape[0]) else None
        solver, pin = acquire(pattern, vals, DTYPE_CODE[vals.dtype], vals.shape[0], options,
                              first)

        def run():
            x = b.new_empty((b.shape[0], pattern.ncols, b.shape[-1]))
            st, info = solver.solve(SLA_OP_N, b.shape[-1], b, x, want_info=config.want_info)
            config.report(st, info)
            return x
        x = _pinned(solver, pin, run)
        _save(ctx, solver, SLA_OP_N, config, pin, values, b, x)
        return x

    @staticmethod
    def backward(ctx, g):
        return solve_backward(ctx, g) + (None, None, None)


@materializes_views
class SolveOn(Function):
    """X = op(A)⁻¹ B (op(A)⁺ B for lsqr) on a given solver whose factors are those of `values`
    at `generation` (refactored back otherwise): the solves of differentiable backward passes.
    Computed by the adjoint entry point of the other op (adjoint_solve: scaled right-hand
    side); its backward is a solve's, with op."""

    @staticmethod
    def forward(ctx, values, b, solver, op, generation, config):
        def run():
            solver.ensure_values(values.detach(), generation)
            return adjoint_solve(solver, other(op), b, config)
        pin = solver.pin()
        x = _pinned(solver, pin, run)
        _save(ctx, solver, op, config, pin, values, b, x)
        return x

    @staticmethod
    def backward(ctx, g):
        return solve_backward(ctx, g) + (None, None, None, None)


def solve_on(values, b, solver, op, generation, config):
    """SolveOn in grad mode, the plain adjoint solve otherwise."""
    if differentiable():
        return SolveOn.apply(values, b, solver, op, generation, config)
    solver.ensure_values(values.detach(), generation)
    return adjoint_solve(solver, other(op), b, config)


def solve_backward(ctx, g):
    """(∂values, ∂B) of X = op(A)⁻¹ B (or op(A)⁺ B) for the cotangent g of X."""
    values, x, b = ctx.saved_tensors
    need_v, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    if not (need_v or need_b):
        return None, None
    solver, op = ctx.solver, ctx.op
    ctx.generation = solver.ensure_values(values.detach(), ctx.generation)
    if differentiable():
        refuse_complex_graph(values)
        dv, db = (_lstsq_graph if ctx.lsqr else _solve_graph)(ctx, values, b, x, g, need_v)
        return dv, (db if need_b else None)
    if not need_v:                    # ∂B alone: the adjoint solve
        db = adjoint_solve(solver, op, g, ctx.config)
        _release(ctx)
        return None, db
    g = g.contiguous()
    dv = torch.empty_like(values)
    db = g.new_empty(g.shape[0], _rows(solver, op, of_x=False), g.shape[-1]) if need_b else None
    if ctx.lsqr:
        st, info = solver.lstsq_vjp(op, x.shape[-1], b.contiguous(), x, g, db, dv)
    else:
        st, info = solver.solve_vjp(op, x.shape[-1], x, g, db, dv, want_info=ctx.config.want_info)
    ctx.config.report(st, info, adjoint=True)
    _release(ctx)
    return dv, db


def _solve_graph(ctx, values, b, x, g, need_v):
    """Differentiable: Λ = op(A)⁻ᵀ g on the same solver, ∂a = −Λ ⊗ X on the pattern."""
    lam = SolveOn.apply(values, g, ctx.solver, other(ctx.op), ctx.generation, ctx.config)
    if not need_v:
        return None, lam
    u, v = (lam, x) if ctx.op == SLA_OP_N else (x, lam)
    return -PatternOuter.apply(u, v, ctx.solver.pattern, values.shape[0]), lam


def _lstsq_graph(ctx, values, b, x, g, need_v):
    """Differentiable form of sla_solver_lstsq_vjp (src/solve/lstsq.c), A for op(A):
    c = A⁺ᵀg, λ = A⁺c, r = b − A x, w = g − Aᵀc, z = A⁺ᵀx (only when ‖w‖ > rtol‖g‖);
    ∂b = c, ∂A = r λᵀ − c xᵀ + z wᵀ on the pattern."""
    solver, op, gen = ctx.solver, ctx.op, ctx.generation
    opt, p, batch = other(op), solver.pattern, values.shape[0]

    def lstsq(rhs, o):
        return SolveOn.apply(values, rhs, solver, o, gen, ctx.config)

    c = lstsq(g, opt)
    if not need_v:
        return None, c
    lam = lstsq(c, op)
    r = b - spmv(values, x, p, op, 1)
    w = g - spmv(values, c, p, opt, 1)

    def term(left, right):            # left ⊗ right for op N, right ⊗ left for op T
        return outer(left, right, p, batch) if op == SLA_OP_N else outer(right, left, p, batch)

    dv = term(r, lam) - term(c, x)
    if float(torch.linalg.norm(w.detach())) > solver._opt.rtol * float(torch.linalg.norm(g)):
        dv = dv + term(lstsq(x, opt), w)
    return dv, c


# ------------------------------------------------------------------------------------------------
# log|det A|
# ------------------------------------------------------------------------------------------------
@materializes_views
class Slogdet(Function):
    """(log|det A_b| [B], sign [B]) from a direct factorization (sla_solver_logdet). Backward,
    first order: sla_solver_logdet_grad (entries of A⁻ᵀ on the pattern, from the factors);
    differentiable: g · InverseEntries(values).
    Complex values: sign is the phase s = det/|det| (complex, differentiable) and log|det| is
    real. With Z = conj(A⁻ᵀ) on the pattern (sla_solver_logdet_grad, g = 1), d log|det| =
    Re tr(A⁻¹dA) and dθ = Im tr(A⁻¹dA) give torch's gradient (g_lad + i·c)·Z, where
    c = Im(g_sign·conj(s)) is the phase's share (s = e^{iθ})."""

    @staticmethod
    def forward(ctx, values, pattern, options):
        vals = values.detach()
        solver, pin = acquire(pattern, vals, DTYPE_CODE[vals.dtype], vals.shape[0], options)
        sign, lad = _pinned(solver, pin, solver.logdet)
        _hold(ctx, solver, pin, 1)
        ctx.save_for_backward(values)
        sign_t = torch.tensor(sign, dtype=values.dtype)
        if not values.dtype.is_complex:
            ctx.mark_non_differentiable(sign_t)    # ±1, 0: piecewise constant
        ctx.sign = sign_t
        real = values.real.dtype if values.dtype.is_complex else values.dtype
        return torch.tensor(lad, dtype=real), sign_t

    @staticmethod
    def backward(ctx, g_lad, g_sign):
        (values,) = ctx.saved_tensors
        solver = ctx.solver
        ctx.generation = solver.ensure_values(values.detach(), ctx.generation)
        if values.dtype.is_complex:
            if differentiable():
                refuse_complex_graph(values)
            z = torch.empty_like(values)
            solver.logdet_grad([1.0] * values.shape[0], z)
            _release(ctx)
            w = g_lad.to(values.dtype) if g_lad is not None else \
                torch.zeros(values.shape[0], dtype=values.dtype)
            if g_sign is not None:
                w = w + 1j * (g_sign * ctx.sign.conj()).imag
            return w.unsqueeze(-1) * z, None, None
        if differentiable():
            z = InverseEntries.apply(values, solver, ctx.generation)
            return g_lad.unsqueeze(-1) * z, None, None
        dv = torch.empty_like(values)
        solver.logdet_grad(g_lad.double().tolist(), dv)
        _release(ctx)
        return dv, None, None


@materializes_views
class InverseEntries(Function):
    """Z [B, nnz], Z_s = (A_b⁻ᵀ)[r_s, c_s] on the pattern (sla_solver_logdet_grad with g = 1:
    selected entries of the inverse from the factors), for a direct solver holding `values`.
    Backward for a cotangent H (read as a matrix on the pattern): dZ = −A⁻ᵀ dAᵀ A⁻ᵀ gives
        ∂a_s = −(A⁻ᵀ Hᵀ A⁻ᵀ)[r_s, c_s],
    column block by column block E of the identity: Y = A⁻ᵀE, V = A⁻ᵀ(HᵀY), read at the
    pattern (2 solves with n right-hand sides in all, O(n·block) memory; differentiable again
    through SolveOn and SpMV)."""

    @staticmethod
    def forward(ctx, values, solver, generation):
        def run():
            solver.ensure_values(values.detach(), generation)
            z = torch.empty_like(values)
            solver.logdet_grad([1.0] * values.shape[0], z)
            return z
        pin = solver.pin()
        z = _pinned(solver, pin, run)
        _hold(ctx, solver, pin, 1)
        ctx.save_for_backward(values)
        return z

    @staticmethod
    def backward(ctx, H):
        (values,) = ctx.saved_tensors
        solver = ctx.solver
        ctx.generation = solver.ensure_values(values.detach(), ctx.generation)
        dv = _inverse_entries_vjp(values, H, solver, ctx.generation)
        _release(ctx)
        return dv, None, None


def _inverse_entries_vjp(values, H, solver, generation):
    p, config = solver.pattern, SolveConfig(what="logdet second derivative")
    n, B = p.nrows, values.shape[0]
    rows, cols = p.csr_rows(), p.csr_cols()
    block = max(1, min(n, INVERSE_BLOCK_BYTES // (values.element_size() * B * max(n, 1))))
    pieces, slots = [], []
    for c0 in range(0, n, block):
        cb = min(block, n - c0)
        sel = ((cols >= c0) & (cols < c0 + cb)).nonzero().squeeze(1)
        if sel.numel() == 0:
            continue
        E = values.new_zeros(B, n, cb)
        E[:, torch.arange(c0, c0 + cb), torch.arange(cb)] = 1
        Y = solve_on(values, E, solver, SLA_OP_T, generation, config)       # A⁻ᵀ E
        V = solve_on(values, spmv(H, Y, p, SLA_OP_T, 1), solver, SLA_OP_T, generation,
                     config)                                                 # A⁻ᵀ Hᵀ A⁻ᵀ E
        pieces.append(V[:, rows[sel], cols[sel] - c0])
        slots.append(sel)
    out = values.new_zeros(B, p.nnz)
    if not pieces:
        return out
    return -out.index_copy(1, torch.cat(slots), torch.cat(pieces, 1))
