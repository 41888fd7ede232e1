"""Sparse Jacobians of a residual function without a dense matrix: its sparsity pattern (given,
or detected once by probing), a distance-2 colouring (libsla's sla_pattern_color_columns,
Curtis–Powell–Reid), and the compressed products J·s_c (forward mode) or J_cᵀ·w (reverse mode),
one per colour.

Products, by mode:
  'forward'  J·v by torch.autograd.forward_ad (one dual evaluation of F);
  'reverse'  Jᵀ·w by torch.autograd.grad; J·v by the double-VJP identity J v = ∂/∂w (Jᵀw)·v;
  'auto'     forward, falling back to reverse where an operation has no forward-mode rule
             (e.g. a custom autograd.Function without jvp). The compressed Jacobian then colours
             the rows (columns of Jᵀ) instead and needs first-order VJPs only.

Pattern probing (no pattern given): NaN propagation. F(u0 + t) with t NaN on a set S of
columns is NaN exactly on the rows that depend on a column of S (0·NaN = NaN keeps structural
zeros that are numerically zero; entries never touched stay finite): one residual evaluation
per probe. Where F refuses NaN input (raises, or an operation checks finiteness), the probes
are products instead: a tangent (forward mode) or cotangent (reverse mode, the rows of Jᵀ)
that is NaN on S. Columns are split
by halves, level after level; at each level the blocks are coloured so that blocks sharing a
row differ, and two products per colour (left halves, right halves) tell every row which halves
it touches: about 2·colours·log₂(n) products once, O(nnz) memory. Where F's structure depends
on u (torch.where branches), the pattern is the one at u0: give jacobian_pattern then.
"""
import ctypes
import math
import weakref

import torch
import torch.autograd.forward_ad as fwAD

from ._capi import check
from ._nonlinear_capi import nl
from ._pattern import Pattern


class JacobianUnavailable(RuntimeError):
    """Neither forward- nor reverse-mode products work for this residual."""


def color_columns(pattern):
    """(colors int64 [ncols], ncolors) of a torch_sla Pattern (distance-2 colouring in C)."""
    n = pattern.ncols
    color = torch.empty(n, dtype=torch.int32)
    nc = ctypes.c_int64()
    check(nl.sla_pattern_color_columns(pattern.ptr, color.data_ptr(), ctypes.byref(nc)))
    return color.to(torch.int64), int(nc.value)


class Products:
    """J(u)·v and J(u)ᵀ·w of F(u) = fn(u) for tensors of u's shape (flat [n] in and out)."""

    def __init__(self, fn, shape, dtype, mode="auto"):
        if mode not in ("auto", "forward", "reverse"):
            raise ValueError(f"jacobian_mode = {mode!r}: use 'auto', 'forward' or 'reverse'")
        self.fn, self.shape, self.dtype, self.mode = fn, tuple(shape), dtype, mode
        self.n = math.prod(self.shape)

    def _out(self, F, what):
        if not isinstance(F, torch.Tensor):
            raise TypeError(f"residual_fn must return a tensor, got {type(F).__name__}")
        if F.numel() != self.n:
            raise ValueError(f"residual_fn returned {F.numel()} values for {self.n} unknowns "
                             f"({what}); F(u) = 0 needs as many equations as unknowns")
        return F.reshape(-1)

    def settle(self, u):
        """Decides mode 'auto' on one forward-mode product at u (reverse if it has no rule)."""
        if self.mode == "auto":
            self.jvp(u, torch.zeros(self.n, dtype=self.dtype), settle=True)

    def jvp(self, u, v, settle=False):
        if self.mode != "reverse":
            try:
                return self._jvp_forward(u, v)
            except (NotImplementedError, RuntimeError) as e:
                if self.mode == "forward" or not _no_forward_rule(e):
                    raise
                self.mode = "reverse"
        if settle:
            return None
        return self._jvp_double_vjp(u, v)

    def _jvp_forward(self, u, v):
        with torch.no_grad(), fwAD.dual_level():
            d = fwAD.make_dual(u.reshape(self.shape), v.reshape(self.shape).to(self.dtype))
            t = fwAD.unpack_dual(self._out(self.fn(d), "forward mode")).tangent
        if self.mode == "auto":
            self.mode = "forward"
        return torch.zeros(self.n, dtype=self.dtype) if t is None else t.reshape(-1)

    def _jvp_double_vjp(self, u, v):
        with torch.enable_grad():
            x = u.detach().reshape(self.shape).clone().requires_grad_(True)
            F = self._out(self.fn(x), "reverse mode")
            if not F.requires_grad:
                return torch.zeros(self.n, dtype=self.dtype)
            w = torch.zeros_like(F, requires_grad=True)
            (g,) = torch.autograd.grad(F, x, w, create_graph=True, allow_unused=True)
            if g is None:
                return torch.zeros(self.n, dtype=self.dtype)
            if not g.requires_grad:
                raise JacobianUnavailable(
                    "J·v needs forward-mode AD or a twice-differentiable residual; an operation "
                    "in residual_fn has neither (give jacobian_fn, or use a method and options "
                    "that need only Jᵀ·w)")
            (jv,) = torch.autograd.grad(g, w, v.reshape(self.shape).to(self.dtype),
                                        allow_unused=True)
        return torch.zeros(self.n, dtype=self.dtype) if jv is None else jv.reshape(-1)

    def vjp_many(self, u, ws):
        """[Jᵀ w for w in ws] from one evaluation of F with its graph."""
        with torch.enable_grad():
            x = u.detach().reshape(self.shape).clone().requires_grad_(True)
            F = self._out(self.fn(x), "reverse mode")
            out = []
            for k, w in enumerate(ws):
                if not F.requires_grad:
                    out.append(torch.zeros(self.n, dtype=self.dtype))
                    continue
                (g,) = torch.autograd.grad(F, x, w.to(self.dtype), retain_graph=k + 1 < len(ws),
                                           allow_unused=True)
                out.append(torch.zeros(self.n, dtype=self.dtype) if g is None else g.reshape(-1))
        return out

    def vjp(self, u, w):
        return self.vjp_many(u, [w])[0]

    @property
    def forward(self):
        return self.mode != "reverse"


def _no_forward_rule(e):
    msg = str(e)
    return ("forward" in msg.lower() and ("not implemented" in msg.lower() or
                                          "jvp" in msg.lower())) or "jvp" in msg


# ------------------------------------------------------------------------------------------------
# Pattern probing
# ------------------------------------------------------------------------------------------------
def _nan_rows(products, u, cols_mask, primal):
    """Rows of J that depend on a column in cols_mask (forward or primal) — or, in reverse mode,
    columns that a row in cols_mask touches (the same relation for Jᵀ)."""
    if not bool(cols_mask.any()):
        return torch.zeros(products.n, dtype=torch.bool)
    t = torch.zeros(products.n, dtype=products.dtype)
    t[cols_mask] = float("nan")
    if primal:
        with torch.no_grad():
            y = products._out(products.fn((u + t).reshape(products.shape)), "NaN probe")
    else:
        y = products.jvp(u, t) if products.forward else products.vjp(u, t)
    return torch.isnan(y)


def _primal_probes_work(products, u0):
    """True if NaN probes can be residual evaluations: F(u0) is finite (else every probe would
    be NaN everywhere) and F accepts NaN input."""
    try:
        with torch.no_grad():
            f0 = products.fn(u0.reshape(products.shape))
            y = products.fn((u0 + float("nan")).reshape(products.shape))
        ok = all(isinstance(t, torch.Tensor) and t.numel() == products.n for t in (f0, y))
        return ok and bool(torch.isfinite(f0).all())
    except Exception:                                     # noqa: BLE001 — F refuses NaN
        return False


def probe_pattern(products, u0):
    """(row, col) int64 of the structural pattern of J at u0 (in no particular order), by NaN
    group testing (see the module docstring). Costs about 2·colours·log₂(n) evaluations."""
    n = products.n
    u0 = u0.detach().reshape(-1)
    if n == 0:
        e = torch.empty(0, dtype=torch.int64)
        return e, e
    idx = torch.arange(n)
    primal = _primal_probes_work(products, u0)
    if not primal:
        products.settle(u0)
    forward = primal or products.forward
    shift = max(0, (n - 1).bit_length())
    # the relation (a, block) between the outputs a (rows in forward mode) and blocks of inputs
    touched = _nan_rows(products, u0, torch.ones(n, dtype=torch.bool), primal)
    a = idx[touched]
    blk = torch.zeros(a.numel(), dtype=torch.int64)
    while shift > 0:
        nblocks = ((n - 1) >> shift) + 1
        if a.numel() == 0:
            break
        p = Pattern.from_coo(n, nblocks, a.contiguous(), blk.contiguous())
        color, nc = color_columns(p)
        color_of_col = color[idx >> shift]
        half = ((idx >> (shift - 1)) & 1).bool()
        pair_color = color[blk]
        new_a, new_b = [], []
        for c in range(nc):
            in_c = color_of_col == c
            sel = pair_color == c                   # the pairs whose block has colour c
            pa, pb = a[sel], blk[sel]
            for h, cols in ((0, in_c & ~half), (1, in_c & half)):
                keep = _nan_rows(products, u0, cols, primal)[pa]
                new_a.append(pa[keep])
                new_b.append(2 * pb[keep] + h)
        a, blk = torch.cat(new_a), torch.cat(new_b)
        shift -= 1
    row, col = (a, blk) if forward else (blk, a)
    return row.contiguous(), col.contiguous()


# residual_fn → {(shape, dtype): (row, col)}: probing runs once per function
_probed = weakref.WeakKeyDictionary()


def cached_pattern(fn_key, products, u0):
    key = (products.shape, products.dtype)
    try:
        entry = _probed.get(fn_key)
    except TypeError:                  # not weak-referenceable: no cache
        entry = None
    if entry is not None and key in entry:
        return entry[key]
    pat = probe_pattern(products, u0)
    try:
        _probed.setdefault(fn_key, {})[key] = pat
    except TypeError:
        pass
    return pat


def clear_probed_patterns():
    _probed.clear()


# ------------------------------------------------------------------------------------------------
# Compressed Jacobians
# ------------------------------------------------------------------------------------------------
class CompressedJacobian:
    """Values of J(u) in the CSR order of `pattern` (a torch_sla Pattern of J's structure) from
    one product per colour: columns coloured for forward products, rows (columns of Jᵀ) for
    reverse ones."""

    def __init__(self, products, pattern):
        self.products = products
        self.pattern = pattern
        self.rows = pattern.csr_rows()
        self.cols = pattern.csr_cols()
        self._setup = None

    def _prepare(self):
        forward = self.products.forward
        if self._setup is None or self._setup[0] != forward:
            if forward:
                color, nc = color_columns(self.pattern)
                gather = color[self.cols] * self.products.n + self.rows
            else:
                pt = Pattern.from_coo(self.pattern.ncols, self.pattern.nrows, self.cols.contiguous(),
                                      self.rows.contiguous())
                color, nc = color_columns(pt)
                gather = color[self.rows] * self.products.n + self.cols
            seeds = [(color == c).to(self.products.dtype) for c in range(nc)]
            self._setup = (forward, nc, seeds, gather)
        return self._setup

    @property
    def ncolors(self):
        return self._prepare()[1]

    def values(self, u):
        """[nnz] values of J(u) in CSR order."""
        u = u.reshape(-1)
        self.products.settle(u)
        _, nc, seeds, gather = self._prepare()
        if self.products.forward:
            ys = [self.products.jvp(u, s) for s in seeds]
        else:
            ys = self.products.vjp_many(u, seeds)
        if not ys:
            return torch.zeros(self.rows.numel(), dtype=self.products.dtype)
        return torch.stack(ys).reshape(-1)[gather]
