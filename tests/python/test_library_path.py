"""torch_sla.library_path: the real path of the libsla file the process loaded, whatever name
found it ($SLA_LIBRARY through a symlink, the build tree's libsla.so, a bare soname)."""
import ctypes
import os
import subprocess
import sys

import pytest

import torch_sla
from torch_sla import _capi


def _mapped_files():
    with open("/proc/self/maps") as f:
        return {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}


def test_library_path_is_the_file_loaded():
    p = torch_sla.library_path
    assert os.path.isabs(p) and os.path.isfile(p) and os.path.realpath(p) == p
    if os.path.exists("/proc/self/maps"):
        assert p in _mapped_files()
    env = os.environ.get("SLA_LIBRARY")
    if env:
        assert p == os.path.realpath(env)


def test_soname_resolves_to_the_file():
    # the soname of the loaded library ("libsla.so.0") names the same, already loaded, object
    soname = os.path.basename(torch_sla.library_path).split(".so")[0] + ".so.0"
    try:
        cdll = ctypes.CDLL(soname)
    except OSError:
        pytest.skip(f"{soname} is not this library's soname")
    assert _capi._loaded_path(cdll, soname) == torch_sla.library_path


def test_symlinked_sla_library(tmp_path):
    link = tmp_path / "libsla-link.so"
    link.symlink_to(torch_sla.library_path)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(torch_sla.__file__)))
    env = dict(os.environ, SLA_LIBRARY=str(link),
               PYTHONPATH=os.pathsep.join([pkg, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", "import torch_sla; print(torch_sla.library_path)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == torch_sla.library_path
