"""CUDA tensors on libsla's CUDA backend (libsla_cuda, backend "cuda"; docs/cuda.md).

``spsolve(val, row, col, shape, b)`` with CUDA ``val`` and ``b`` lands here: the values and the
right-hand side stay on the device (their ``data_ptr()`` is handed to libsla, which solves on
the device with its own CG / BiCGStab / GMRES / MINRES and Jacobi), and the backward runs the
adjoint solve and the pattern outer product on the device too. Only the indices go to the host,
once per pattern (the symbolic structure is a host object, cached like every pattern). libsla
works on the legacy default CUDA stream: work on another current stream is synchronized first.

Without libsla_cuda next to libsla (a build without nvcc), or without a device, the call raises
UnsupportedError with the reason; nothing else of torch_sla changes.
"""
import ctypes
import os
import warnings
from pathlib import Path

import torch

from ._capi import PRECONDS, METHODS, Matrix, SolveInfoC, SolverOptions, check, lib
from .errors import ConvergenceWarning, error_for_status

SLA_EUNSUPPORTED = -12
_state = None            # (CDLL or None, reason: "" when usable)


def _load():
    """libsla_cuda beside the loaded libsla (or $SLA_CUDA_LIBRARY), registered once."""
    global _state
    if _state is not None:
        return _state
    env = os.environ.get("SLA_CUDA_LIBRARY")
    here = Path(lib.path).parent
    candidates = ([env] if env else []) + [str(here / "libsla_cuda.so"),
                                           str(here / "libsla_cuda.so.0")]
    tried = []
    for path in candidates:
        if not os.path.exists(path):
            tried.append(f"{path} (absent)")
            continue
        try:
            cdll = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        cdll.sla_cuda_register.restype = ctypes.c_int
        cdll.sla_cuda_unavailable_reason.restype = ctypes.c_char_p
        st = cdll.sla_cuda_register()
        if st < 0:
            tried.append(f"{path} (sla_cuda_register: {lib.sla_last_error().decode()})")
            continue
        _state = (cdll, cdll.sla_cuda_unavailable_reason().decode())
        return _state
    _state = (None, "this libsla was built without CUDA (libsla_cuda not found: " +
              "; ".join(tried) + ")")
    return _state


def unavailable_reason():
    """"" when CUDA tensors can be solved, else why not."""
    return _load()[1]


def available():
    return unavailable_reason() == ""


def _require():
    reason = unavailable_reason()
    if reason:
        raise error_for_status(SLA_EUNSUPPORTED, f"torch_sla: CUDA tensors need libsla's CUDA "
                               f"backend: {reason}")


class _DeviceSolver:
    """A C solver on a device view: values in CSR order on the device (kept alive here)."""

    def __init__(self, pattern, csr, method, precond, rtol, atol, maxiter):
        opt = SolverOptions()
        lib.sla_solver_options_init(ctypes.byref(opt))
        opt.method, opt.precond = METHODS.index(method), PRECONDS.index(precond)
        opt.backend = b"cuda"
        if rtol is not None:
            opt.rtol = rtol
        if atol is not None:
            opt.atol = atol
        if maxiter is not None:
            opt.maxiter = maxiter
        A = Matrix(pattern.ptr, 0 if csr.dtype == torch.float64 else 1, 1, csr.data_ptr(), 1)
        out = ctypes.c_void_p()
        check(lib.sla_solver_create(ctypes.byref(A), ctypes.byref(opt), ctypes.byref(out)))
        self.ptr, self.pattern, self.csr = out.value, pattern, csr

    def __del__(self):
        if getattr(self, "ptr", None) and lib is not None:
            lib.sla_solver_free(ctypes.byref(ctypes.c_void_p(self.ptr)))
            self.ptr = None

    def solve(self, B, X):
        info = SolveInfoC()
        st = check(lib.sla_solver_solve(self.ptr, 0, B.shape[1], B.data_ptr(), X.data_ptr(),
                                        ctypes.byref(info)))
        if st != 0:
            warnings.warn(f"torch_sla (cuda): not converged after {info.iterations} iterations "
                          f"(relative residual {info.relative_residual:.3g})", ConvergenceWarning)

    def vjp(self, X, G, dB, dvalues):
        check(lib.sla_solver_solve_vjp(self.ptr, 0, X.shape[1], X.data_ptr(), G.data_ptr(),
                                       dB.data_ptr(), dvalues.data_ptr(), None))


class _Solve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, val, b, solver, slot):
        vec = b.dim() == 1
        B = (b.unsqueeze(1) if vec else b).detach().contiguous()
        X = torch.empty_like(B)
        solver.solve(B, X)
        ctx.solver, ctx.slot, ctx.X, ctx.vec = solver, slot, X, vec
        return X.squeeze(1) if vec else X

    @staticmethod
    def backward(ctx, g):
        G = (g.unsqueeze(1) if ctx.vec else g).contiguous()
        dB = torch.empty_like(G)
        dcsr = torch.empty_like(ctx.solver.csr)
        with torch.cuda.device(ctx.X.device):       # libsla works on the current device
            _sync()
            ctx.solver.vjp(ctx.X, G, dB, dcsr)
        dval = dcsr[ctx.slot]                # every input entry gets its CSR slot's gradient
        return dval, (dB.squeeze(1) if ctx.vec else dB), None, None


def _sync():
    """libsla runs on the legacy default stream: finish work queued on another one first."""
    s = torch.cuda.current_stream()
    if s != torch.cuda.default_stream():
        s.synchronize()


def spsolve(val, row, col, shape, b, method="auto", preconditioner=None, rtol=None,
            atol=None, maxiter=None, is_spd=None):
    """A x = b for CUDA val [nnz] (COO order, duplicates summed) and b [n] or [n, k] on the
    same device, dtype float64 or float32; differentiable in val and b. method: cg, bicgstab,
    gmres, minres, or auto (cg when is_spd, else bicgstab); preconditioner: jacobi (default)
    or none."""
    _require()
    if not (isinstance(val, torch.Tensor) and isinstance(b, torch.Tensor) and val.is_cuda and
            b.is_cuda and val.device == b.device):
        raise ValueError(f"torch_sla (cuda): val and b must be CUDA tensors on one device "
                         f"(val on {getattr(val, 'device', None)}, b on "
                         f"{getattr(b, 'device', None)})")
    if val.dtype not in (torch.float64, torch.float32) or b.dtype != val.dtype or val.dim() != 1:
        raise ValueError(f"torch_sla (cuda): val must be 1-D float64/float32 and b of its dtype "
                         f"(val {val.dtype} {tuple(val.shape)}, b {b.dtype})")
    if method == "auto":
        method = "cg" if is_spd else "bicgstab"
    precond = "jacobi" if preconditioner in (None, "auto", "jacobi") else preconditioner
    from ._pattern import pattern_for
    n, m = int(shape[0]), int(shape[1])
    rows = torch.as_tensor(row).detach().to("cpu", torch.int64).contiguous()
    cols = torch.as_tensor(col).detach().to("cpu", torch.int64).contiguous()
    pattern = pattern_for(n, m, rows, cols)
    with torch.cuda.device(val.device):
        slot = pattern.map().to(val.device)
        if pattern.identity:
            csr = val.detach().contiguous()
        else:
            csr = torch.zeros(pattern.nnz, dtype=val.dtype, device=val.device)
            csr.index_add_(0, slot, val.detach())
        _sync()
        solver = _DeviceSolver(pattern, csr, method, precond, rtol, atol, maxiter)
        return _Solve.apply(val, b, solver, slot)
