"""CUDA tensors in torch_sla (torch_sla/_cuda.py, docs/cuda.md). Here (no GPU, Debian's torch
without CUDA) only the host side runs: the CUDA route reports why it is unavailable and raises
UnsupportedError with that reason; CPU tensors are untouched by it. On a GPU machine with
libsla_cuda (bench/device/run.sh) the device tests compare against the CPU solve and its
gradients to 1e-10."""
import pytest
import torch

import torch_sla
from torch_sla import _cuda
from torch_sla.errors import UnsupportedError

from conftest import poisson2d


def test_reason_or_available():
    reason = _cuda.unavailable_reason()
    if torch.cuda.is_available() and _cuda.available():
        assert reason == ""
    else:
        assert reason, "no CUDA here: a reason must be given"
        assert "CUDA" in reason
        with pytest.raises(UnsupportedError, match="CUDA tensors need libsla's CUDA backend"):
            _cuda._require()


def test_cpu_tensors_do_not_take_the_cuda_route():
    row, col, val = poisson2d(6)
    shape = (36, 36)
    b = torch.ones(shape[0], dtype=torch.float64)
    x = torch_sla.spsolve(val, row, col, shape, b)
    assert not x.is_cuda
    assert torch.allclose(torch_sla.SparseTensor(val, row, col, shape) @ x, b, atol=1e-10)


needs_gpu = pytest.mark.skipif(not (torch.cuda.is_available() and _cuda.available()),
                               reason="needs a CUDA device, torch with CUDA and libsla_cuda")


@needs_gpu
@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres", "minres"])
def test_cuda_solve_matches_cpu(method):
    row, col, val = poisson2d(20, shuffle=True)      # COO order ≠ CSR order: the device map
    shape = (400, 400)
    g = torch.Generator().manual_seed(0)
    b = torch.rand(shape[0], 2, dtype=torch.float64, generator=g)
    gx = torch.rand(shape[0], 2, dtype=torch.float64, generator=g)
    vc, bc = val.clone().requires_grad_(), b.clone().requires_grad_()
    xc = torch_sla.spsolve(vc, row, col, shape, bc, method=method, rtol=1e-13)
    (xc * gx).sum().backward()
    vd, bd = val.cuda().requires_grad_(), b.cuda().requires_grad_()
    xd = torch_sla.spsolve(vd, row.cuda(), col.cuda(), shape, bd, method=method, rtol=1e-13)
    assert xd.is_cuda
    (xd * gx.cuda()).sum().backward()
    rel = lambda a, r: float((a.cpu() - r).norm() / r.norm())
    assert rel(xd.detach(), xc.detach()) <= 1e-10
    assert rel(bd.grad, bc.grad) <= 1e-10
    assert rel(vd.grad, vc.grad) <= 1e-10
