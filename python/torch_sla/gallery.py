"""Gallery matrices built in libsla directly in CSR order (include/sla/gallery.h): the
SparseTensor's entries *are* its CSR slots (no gather, no COO pass in Python)."""
import ctypes
import weakref

import torch

from ._args import as_int, as_real
from ._capi import check, lib, require
from ._pattern import Pattern


def _tensor(pattern_ptr, values_ptr):
    """A float64 SparseTensor owning a new C pattern and libsla-allocated CSR values: the tensor
    wraps libsla's buffer (freed with sla_free when the tensor's storage goes), so the build
    holds one copy of the values, and the COO index tensors are computed only on first access
    of row_indices / col_indices."""
    from .sparse_tensor import SparseTensor
    p = Pattern(pattern_ptr)
    n = p.nnz
    if n:
        buf = (ctypes.c_double * n).from_address(values_ptr)
        fin = weakref.finalize(buf, lib.sla_free, values_ptr)   # libsla's allocator (ASan's too)
        fin.atexit = False       # at exit a live tensor may still point at it: the OS frees it
        vals = torch.frombuffer(buf, dtype=torch.float64)
    else:
        lib.sla_free(values_ptr)
        vals = torch.empty(0, dtype=torch.float64)
    return SparseTensor(vals, None, None, (p.nrows, p.ncols), _pattern=p)


def grid(dims, diag, lower, upper):
    """The stencil matrix of a row-major grid dims (last axis fastest): diag on the diagonal,
    lower[a] / upper[a] at the neighbour one step down / up axis a (Dirichlet: none outside).
    lower, upper: a number (every axis) or one per axis. sla_gallery_grid."""
    require("sla_gallery_grid", "gallery.grid")
    dims = [as_int(d, f"dims[{i}]", minimum=1) for i, d in enumerate(dims)]
    nd = len(dims)

    def per_axis(w, name):
        w = [w] * nd if not hasattr(w, "__len__") else list(w)
        if len(w) != nd:
            raise ValueError(f"{name} has {len(w)} entries for {nd} grid dimensions")
        return (ctypes.c_double * nd)(*[as_real(x, f"{name}[{i}]") for i, x in enumerate(w)])
    pat, vals = ctypes.c_void_p(), ctypes.c_void_p()
    check(lib.sla_gallery_grid(nd, (ctypes.c_int64 * nd)(*dims), as_real(diag, "diag"),
                               per_axis(lower, "lower"), per_axis(upper, "upper"),
                               ctypes.byref(pat), ctypes.byref(vals)))
    return _tensor(pat.value, vals.value)


def graph_laplacian(n, edges, weights=None, shift=0.0):
    """L = D − W + shift·I of an undirected graph: edges a [E, 2] integer tensor (or a pair of
    [E] tensors), weights [E] (default 1). sla_gallery_graph_laplacian."""
    require("sla_gallery_graph_laplacian", "gallery.graph_laplacian")
    if isinstance(edges, (tuple, list)) and len(edges) == 2:
        src, dst = (torch.as_tensor(e, dtype=torch.int64).contiguous() for e in edges)
    else:
        e = torch.as_tensor(edges, dtype=torch.int64)
        if e.dim() != 2 or e.shape[1] != 2:
            raise ValueError(f"edges must be [E, 2] or a pair of [E] tensors, got "
                             f"{tuple(e.shape)}")
        src, dst = e[:, 0].contiguous(), e[:, 1].contiguous()
    if src.shape != dst.shape:
        raise ValueError("edges: source and destination lists differ in length")
    w = None
    if weights is not None:
        w = torch.as_tensor(weights, dtype=torch.float64).contiguous()
        if w.shape != src.shape:
            raise ValueError(f"weights has shape {tuple(w.shape)}, edges {tuple(src.shape)}")
    pat, vals = ctypes.c_void_p(), ctypes.c_void_p()
    check(lib.sla_gallery_graph_laplacian(as_int(n, "n", minimum=0), src.numel(),
                                          src.data_ptr(), dst.data_ptr(),
                                          w.data_ptr() if w is not None else None,
                                          as_real(shift, "shift"), ctypes.byref(pat),
                                          ctypes.byref(vals)))
    return _tensor(pat.value, vals.value)
