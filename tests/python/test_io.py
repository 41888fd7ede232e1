"""Matrix Market reading and writing through libsla, checked against scipy.io.mmread."""
import os

import numpy as np
import pytest
import scipy.io
import torch

import torch_sla
from torch_sla import SparseTensor
from conftest import MATRIX_DIR, needs_symbol, random_sparse

pytestmark = [needs_symbol("sla_mm_read"), needs_symbol("sla_mm_write")]


def shared(name):
    path = os.path.join(MATRIX_DIR, name)
    if not os.path.exists(path):
        pytest.skip(f"shared matrix {path} not found")
    return path


@pytest.mark.parametrize("name", ["494_bus.mtx", "west0479.mtx", "Laplace3D10.mtx",
                                  "bcspwr10.mtx"])
def test_load_against_scipy(name):
    path = shared(name)
    A = torch_sla.load_mtx(path)
    ref = scipy.io.mmread(path).tocsr()
    assert A.shape == ref.shape
    assert np.allclose(A.to_scipy().toarray(), ref.toarray(), rtol=0, atol=0)


def test_round_trip_general_symmetric_and_float32(tmp_path):
    row, col, val = random_sparse(9, seed=3)
    A = SparseTensor(val, row, col, (9, 9))
    p = tmp_path / "a.mtx"
    torch_sla.save_mtx(A, p, comment="round trip")
    B = torch_sla.load_mtx(p)
    assert torch.equal(B.to_dense(), A.to_dense())          # %.17g is exact
    assert "round trip" in p.read_text()
    row, col, val = random_sparse(9, seed=4, spd=True)
    S = SparseTensor(val, row, col, (9, 9))
    q = tmp_path / "s.mtx.gz"
    S.save_mtx(q, symmetry="symmetric")
    assert torch.equal(torch_sla.load_mtx(q).to_dense(), S.to_dense())
    C = torch_sla.load_mtx(q, dtype=torch.float32)
    assert C.dtype == torch.float32


def test_batched_save_index(tmp_path):
    row, col, val = random_sparse(4, seed=1)
    A = SparseTensor(torch.stack([val, 2 * val]), row, col, (2, 4, 4))
    A.save_mtx(tmp_path / "b.mtx", index=1)
    assert torch.equal(torch_sla.load_mtx(tmp_path / "b.mtx").to_dense(), A.to_dense()[1])
    with pytest.raises(ValueError, match="index"):
        A.save_mtx(tmp_path / "c.mtx", index=2)


def test_read_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
    with pytest.raises(torch_sla.ParseError, match=r"bad\.mtx:3"):
        torch_sla.load_mtx(bad)
    with pytest.raises(torch_sla.SlaIOError):
        torch_sla.load_mtx(tmp_path / "missing.mtx")


def test_nul_in_paths_and_comments_raises(tmp_path):
    """A NUL in a path was cut by C: load_mtx/save_mtx read or wrote the file named by the text
    before it. They raise ValueError, as open() does, and touch no file."""
    row, col, val = random_sparse(4, seed=2)
    A = SparseTensor(val, row, col, (4, 4))
    good = tmp_path / "a.mtx"
    torch_sla.save_mtx(A, good)
    with pytest.raises(ValueError, match="null"):
        open(str(good) + "\0ignored")
    for bad in [str(good) + "\0ignored", os.fsencode(str(good)) + b"\0x",
                str(tmp_path / "new.mtx") + "\0x"]:
        with pytest.raises(ValueError, match="embedded null byte"):
            torch_sla.load_mtx(bad)
        with pytest.raises(ValueError, match="embedded null byte"):
            torch_sla.save_mtx(A, bad)
        with pytest.raises(ValueError, match="embedded null byte"):
            A.save_mtx(bad)
    with pytest.raises(ValueError, match="null character in comment"):
        torch_sla.save_mtx(A, tmp_path / "c.mtx", comment="a\0b")
    assert sorted(os.listdir(tmp_path)) == ["a.mtx"]
    assert torch.equal(torch_sla.load_mtx(good).to_dense(), A.to_dense())


def test_failed_save_keeps_the_old_file(tmp_path):
    """save_mtx removed its target on a failed write, a device node included (as root, on
    /dev/full); now the old file and the device stay, and no partial file is left."""
    row, col, val = random_sparse(30, seed=5)
    A = SparseTensor(val, row, col, (30, 30))
    link = tmp_path / "full.mtx"
    os.symlink("/dev/full", link)
    with pytest.raises(torch_sla.SlaIOError, match="No space left on device"):
        torch_sla.save_mtx(A, link)
    assert os.path.islink(link) and os.path.exists("/dev/full")
    with pytest.raises(torch_sla.SlaIOError, match="Is a directory"):
        torch_sla.save_mtx(A, tmp_path)
    with pytest.raises(torch_sla.SlaIOError, match="Is a directory"):
        torch_sla.load_mtx(tmp_path)
    assert sorted(os.listdir(tmp_path)) == ["full.mtx"]
