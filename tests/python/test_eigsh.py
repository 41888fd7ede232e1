"""eigsh: forward against scipy.sparse.linalg.eigsh and gradients (needs libsla's sla_eigsh)."""
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor
from conftest import poisson2d


def test_eigsh_argument_checks():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match="which"):
        A.eigsh(2, which="XX")
    with pytest.raises(ValueError, match="k = 10"):
        A.eigsh(10)


@pytest.mark.skipif(torch_sla._capi.lib.has("sla_eigsh"),
                    reason="sla_eigsh is present: the real tests apply")
def test_eigsh_says_not_implemented_until_c_lands():
    row, col, val = poisson2d(3)
    with pytest.raises(NotImplementedError, match="sla_eigsh"):
        SparseTensor(val, row, col, (9, 9)).eigsh(2)
