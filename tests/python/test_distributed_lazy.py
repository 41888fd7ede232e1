"""torch_sla.distributed loads on first use: importing torch_sla never initialises MPI (the MPI
tests of DSparseTensor are in tests/mpi/python, run under mpirun)."""
import os
import subprocess
import sys


def test_import_torch_sla_does_not_load_mpi():
    code = ("import sys, torch_sla; assert 'mpi4py.MPI' not in sys.modules; "
            "assert 'torch_sla.distributed' not in sys.modules; "
            "assert 'DSparseTensor' not in torch_sla.__all__; print('ok')")
    env = dict(os.environ)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.path.join(here, "..", "..", "python") + os.pathsep + \
        env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_unknown_attribute_still_raises():
    import pytest
    import torch_sla
    with pytest.raises(AttributeError, match="no attribute"):
        torch_sla.NoSuchThing  # noqa: B018
