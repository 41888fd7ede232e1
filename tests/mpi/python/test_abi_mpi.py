"""The ctypes mirrors of libsla_mpi's structs (torch_sla/_mpi_capi.py) against include/sla/mpi.h,
with the parser of tests/python/test_abi.py (a drift is a crash, not an error, in ctypes)."""
import os
import sys

import ctypes
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from test_abi import _c_fields, _headers  # noqa: E402

from torch_sla import _mpi_capi  # noqa: E402

PAIRS = {"sla_dist_matrix": _mpi_capi.DistMatrixC, "sla_dist_halo_info": _mpi_capi.HaloInfoC,
         "sla_dist_partition_info": _mpi_capi.PartitionInfoC,
         "sla_dist_solver_options": _mpi_capi.DistSolverOptionsC}


@pytest.mark.parametrize("struct", sorted(PAIRS))
def test_struct_layout_matches_header(struct):
    text = _headers()
    if f"}} {struct};" not in text and struct == "sla_dist_solver_options":
        pytest.skip("include/sla/mpi.h has no distributed solvers yet")
    py = [(name, ctypes.sizeof(t)) for name, t in PAIRS[struct]._fields_]
    assert py == _c_fields(text, struct)


def test_partitioner_and_precond_codes_match_header():
    text = _headers()
    for name, code in _mpi_capi.PARTITIONERS.items():
        assert f"SLA_DIST_PART_{name.upper()} = {code}" in text
    if "SLA_DIST_PC_BOOMERAMG" in text:
        names = ["AUTO", "NONE", "JACOBI", "BJACOBI_IC0", "BJACOBI_ILU0", "BJACOBI_AMG",
                 "BOOMERAMG"]
        body = text[text.index("SLA_DIST_PC_AUTO"):text.index("SLA_DIST_PC_COUNT")]
        order = [n for n in names if f"SLA_DIST_PC_{n}" in body]
        assert order == names
        assert sorted(set(_mpi_capi.DIST_PRECONDS.values())) == list(range(len(names)))
