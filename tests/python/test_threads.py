"""libsla's own thread count (torch_sla.set_num_threads, rule in include/sla/base.h): the
environment rule in fresh processes, torch's setting untouched in both directions, and
bit-identical solves for a given count whatever torch's count is."""
import os
import subprocess
import sys

import pytest
import torch

import torch_sla
from conftest import poisson2d


def _count_in_fresh_process(env_changes):
    env = dict(os.environ)
    for k, v in env_changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    code = "import torch, torch_sla; print(torch_sla.get_num_threads(), torch.get_num_threads())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), int(out[1])


def test_rule_from_environment():
    ncpu = len(os.sched_getaffinity(0))
    assert _count_in_fresh_process({"SLA_NUM_THREADS": None, "OMP_NUM_THREADS": None})[0] == ncpu
    assert _count_in_fresh_process({"SLA_NUM_THREADS": None, "OMP_NUM_THREADS": "3,1"})[0] == 3
    assert _count_in_fresh_process({"SLA_NUM_THREADS": "5", "OMP_NUM_THREADS": "3"})[0] == 5
    # a value that is not a positive integer is ignored
    assert _count_in_fresh_process({"SLA_NUM_THREADS": "x", "OMP_NUM_THREADS": None})[0] == ncpu


def test_set_get_and_torch_untouched():
    torch_count = torch.get_num_threads()
    default = torch_sla.get_num_threads()
    try:
        torch_sla.set_num_threads(3)
        assert torch_sla.get_num_threads() == 3
        assert torch.get_num_threads() == torch_count
        with pytest.raises(torch_sla.SlaValueError, match="negative"):
            torch_sla.set_num_threads(-2)
        assert torch_sla.get_num_threads() == 3
        torch.set_num_threads(1)
        assert torch_sla.get_num_threads() == 3
    finally:
        torch.set_num_threads(torch_count)
        torch_sla.set_num_threads(0)
    assert torch_sla.get_num_threads() == default


def _solve(A, b):
    return A.solve(b, method="cg", preconditioner="jacobi", rtol=1e-10)


def test_bit_identical_for_a_given_count():
    r, c, v = poisson2d(400)
    A = torch_sla.SparseTensor(v, r, c, (160000, 160000))
    b = torch.linspace(-1, 1, 160000, dtype=torch.float64)
    torch_count = torch.get_num_threads()
    try:
        torch_sla.set_num_threads(2)
        x0 = _solve(A, b)
        torch.set_num_threads(1)        # what importing torch does on a one-core count
        x1 = _solve(A, b)
        torch.set_num_threads(2)
        x2 = _solve(A, b)
    finally:
        torch.set_num_threads(torch_count)
        torch_sla.set_num_threads(0)
    assert torch.equal(x0, x1) and torch.equal(x0, x2)
    assert torch.linalg.norm(A @ x0 - b) <= 1e-9 * torch.linalg.norm(b)
