"""Sparse @ sparse (SpGEMM) as an autograd Function on libsla's sla_spgemm / sla_spgemm_vjp:
gradients for the values of both operands (∂A = G·Bᵀ on A's pattern, ∂B = Aᵀ·G on B's)."""
import ctypes
import threading
from collections import OrderedDict

import torch
from torch.autograd.function import once_differentiable

from ._capi import check, lib, require
from ._functions import matrix_view
from ._pattern import Pattern

_products = OrderedDict()         # (id(A), id(B)) -> (A, B, C): the operands keep their ids
_lock = threading.Lock()
PRODUCT_CACHE_SIZE = 16


def product_pattern(pa, pb):
    """The pattern of A·B (cached per pair of patterns)."""
    key = (id(pa), id(pb))
    with _lock:
        hit = _products.get(key)
        if hit is not None and hit[0] is pa and hit[1] is pb:
            _products.move_to_end(key)
            return hit[2]
    require("sla_spgemm_pattern", "sparse @ sparse")
    out = ctypes.c_void_p()
    check(lib.sla_spgemm_pattern(pa.ptr, pb.ptr, ctypes.byref(out)))
    pc = Pattern(out.value)
    with _lock:
        _products[key] = (pa, pb, pc)
        while len(_products) > PRODUCT_CACHE_SIZE:
            _products.popitem(last=False)
    return pc


class SpGEMM(torch.autograd.Function):
    """c = values of A·B on pattern pc; a [Ba, nnzA], b [Bb, nnzB] CSR values (contiguous),
    c [max(Ba, Bb), nnzC]. Second derivatives are not provided (once_differentiable raises
    when a graph of the backward is asked for)."""

    @staticmethod
    def forward(ctx, a, b, pa, pb, pc):
        A, B = matrix_view(pa, a), matrix_view(pb, b)
        c = a.new_empty(max(a.shape[0], b.shape[0]), pc.nnz)
        check(lib.sla_spgemm(ctypes.byref(A), ctypes.byref(B), pc.ptr, c.data_ptr()))
        ctx.save_for_backward(a, b)
        ctx.patterns = (pa, pb, pc)
        return c

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        pa, pb, pc = ctx.patterns
        A, B = matrix_view(pa, a), matrix_view(pb, b)
        da = torch.empty_like(a) if ctx.needs_input_grad[0] else None
        db = torch.empty_like(b) if ctx.needs_input_grad[1] else None
        g = g.contiguous()
        check(lib.sla_spgemm_vjp(ctypes.byref(A), ctypes.byref(B), pc.ptr, g.data_ptr(),
                                 da.data_ptr() if da is not None else None,
                                 db.data_ptr() if db is not None else None))
        return da, db, None, None, None
