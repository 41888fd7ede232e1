"""DetConfig and the stochastic log-determinant (torch-sla's 'hutchinson' method):
libsla's stochastic Lanczos quadrature (sla_logdet_slq) for SPD matrices too large to
factor. The value and its gradient are ESTIMATES:

  value     SLQ with p probes and m Lanczos steps; its standard error over the probes is
            returned with return_std=True (Monte-Carlo error ~1/√p; the quadrature error
            decays like exp(−2m/√κ));
  gradient  Hutchinson's estimate of A⁻ᵀ on the pattern with the same probes,
            ∂a_k ≈ g/p Σ_j (A⁻¹z_j)[r_k] z_j[c_k] (one CG solve with p right-hand sides),
            unbiased for ∂ log det A = A⁻ᵀ; it is not the derivative of the SLQ value itself.
"""
import ctypes
import dataclasses
import functools
import threading
from dataclasses import dataclass
from typing import Optional

import torch

from ._capi import check, lib, require
from ._functions import DTYPE_CODE, matrix_view

STOCHASTIC = ("hutchinson", "slq", "stochastic", "spectral")


class _Scopes(threading.local):
    def __init__(self):
        self.stack = []


_SCOPES = _Scopes()
_DEFAULTS = dict(method="auto", backend="auto", num_probes=20, lanczos_iter=30,
                 distribution="rademacher", cpu_fallback=True, detect_components=True)


@dataclass
class DetConfig:
    """Scoped defaults of det() / logdet() (context manager or decorator; explicit keywords
    win): method 'auto' / 'lu' / 'cholesky' / 'ldlt' (factorizations) or 'hutchinson'
    (= 'slq': the stochastic estimate, SPD only); num_probes (20), lanczos_iter (30),
    distribution 'rademacher' or 'gaussian'. backend, cpu_fallback and detect_components are
    accepted (libsla factorizes on the CPU; components are not split)."""
    method: Optional[str] = None
    backend: Optional[str] = None
    num_probes: Optional[int] = None
    lanczos_iter: Optional[int] = None
    distribution: Optional[str] = None
    cpu_fallback: Optional[bool] = None
    detect_components: Optional[bool] = None

    def _kwargs(self):
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None}

    def __enter__(self):
        _SCOPES.stack.append(self._kwargs())
        return self

    def __exit__(self, *exc):
        _SCOPES.stack.pop()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kw):
            with self:
                return fn(*args, **kw)
        return wrapped


def resolve(**explicit):
    """Explicit keywords over the innermost DetConfig scope over the defaults."""
    out = dict(_DEFAULTS)
    for layer in _SCOPES.stack:
        out.update(layer)
    out.update({k: v for k, v in explicit.items() if v is not None})
    return out


def probes(n, p, distribution, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(int(seed))
    if distribution == "rademacher":
        return (torch.randint(0, 2, (n, p), generator=g) * 2 - 1).to(dtype)
    if distribution == "gaussian":
        return torch.randn(n, p, generator=g, dtype=dtype)
    raise ValueError(f"distribution = {distribution!r}: use 'rademacher' or 'gaussian'")


class SlqLogdet(torch.autograd.Function):
    """lad [B] = SLQ estimate of log det of each matrix (CSR values vals [B, nnz]); also the
    standard errors (not differentiable)."""

    @staticmethod
    def forward(ctx, vals, pattern, Z, steps, owner):
        require("sla_logdet_slq", "logdet(method='hutchinson')")
        if vals.dtype.is_complex:
            raise TypeError(f"logdet(method='hutchinson') needs a real SPD matrix; got "
                            f"{vals.dtype} (use the factorization: method='auto')")
        v64 = vals.detach().to(torch.float64).contiguous()
        A = matrix_view(pattern, v64)
        B = vals.shape[0]
        lad = (ctypes.c_double * B)()
        err = (ctypes.c_double * B)()
        check(lib.sla_logdet_slq(ctypes.byref(A), Z.shape[1], Z.data_ptr(), steps, lad, err))
        ctx.save_for_backward(vals)
        ctx.pattern, ctx.Z, ctx.owner = pattern, Z, owner
        out = torch.tensor(list(lad), dtype=vals.dtype)
        std = torch.tensor(list(err), dtype=vals.dtype)
        ctx.mark_non_differentiable(std)
        return out, std

    @staticmethod
    def backward(ctx, g, _gstd):
        if torch.is_grad_enabled():
            raise RuntimeError("logdet(method='hutchinson'): second derivatives of the "
                               "stochastic estimate are not provided")
        vals, = ctx.saved_tensors
        Z = ctx.Z.to(vals.dtype)
        A = ctx.owner.detach()
        B, p = vals.shape[0], Z.shape[1]
        X = A._solve_libsla(Z.expand(B, *Z.shape).contiguous() if A.is_batched else Z,
                            method="cg")                       # A⁻¹ Z
        X = X.reshape(B, Z.shape[0], p).contiguous()
        dv = torch.zeros_like(vals)
        scale = 1.0 / p
        for b in range(B):
            check(lib.sla_pattern_outer_add(ctx.pattern.ptr, DTYPE_CODE[vals.dtype], 1,
                                            scale * float(g[b]), X[b].data_ptr(), 0,
                                            Z.contiguous().data_ptr(), 0, p,
                                            dv[b].data_ptr()))
        return dv, None, None, None, None
