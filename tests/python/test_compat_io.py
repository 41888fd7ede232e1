"""torch-sla compatibility, item 6 of issue 17: save_sparse / load_sparse and
SparseTensor.save / load in torch-sla's safetensors layout (batched values too), load_mtx_info,
load_metadata. Files written by torch-sla are made here byte for byte as the safetensors
format defines them (8-byte little-endian header length, JSON header padded with spaces,
raw little-endian buffers), with torch-sla's tensor names and metadata keys."""
import gzip
import json
import struct

import numpy as np
import pytest
import torch

import torch_sla
from torch_sla import SparseTensor

from conftest import random_sparse

f64 = torch.float64


def write_theirs(path, tensors, metadata):
    """A safetensors file as safetensors.torch.save_file writes it."""
    codes = {torch.float64: "F64", torch.float32: "F32", torch.int64: "I64"}
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        b = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": codes[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_as_spec(path):
    """The tensors and metadata of a safetensors file, parsed from the format's definition."""
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    hdr = json.loads(data[8:8 + n])
    buf = data[8 + n:]
    out = {}
    for name, e in hdr.items():
        if name == "__metadata__":
            continue
        dt = {"F64": np.float64, "F32": np.float32, "I64": np.int64}[e["dtype"]]
        b, en = e["data_offsets"]
        out[name] = np.frombuffer(buf[b:en], dtype=dt).reshape(e["shape"])
    return out, hdr.get("__metadata__", {})


THEIR_META = {"sparse_dim_0": "0", "sparse_dim_1": "1", "dtype": "torch.float64",
              "format": "sparse_tensor", "version": "1.0"}


def test_readme_persistence_block(tmp_path):
    row, col, val = random_sparse(30, seed=1)
    A = SparseTensor(val, row, col, (30, 30))
    p = str(tmp_path / "matrix.safetensors")
    A.save(p)
    B = SparseTensor.load(p, device="cpu")
    assert torch.equal(B.values, A.values) and torch.equal(B.row_indices, A.row_indices)
    torch_sla.save_mtx(A, str(tmp_path / "matrix.mtx"))
    C = torch_sla.load_mtx(str(tmp_path / "matrix.mtx"))
    assert torch.equal(C.to_dense(), A.to_dense())


def test_our_file_is_their_layout(tmp_path):
    row, col, val = random_sparse(8, seed=2)
    A = SparseTensor(val.to(torch.float32), row, col, (8, 8))
    p = str(tmp_path / "a.safetensors")
    torch_sla.save_sparse(A, p, metadata={"note": "hello"})
    t, meta = read_as_spec(p)
    assert set(t) == {"values", "row_indices", "col_indices", "shape"}
    assert t["values"].dtype == np.float32 and np.array_equal(t["values"], A.values.numpy())
    assert np.array_equal(t["row_indices"], row.numpy()) and list(t["shape"]) == [8, 8]
    assert meta["format"] == "sparse_tensor" and meta["dtype"] == "torch.float32"
    assert meta["sparse_dim_0"] == "0" and meta["note"] == "hello"
    B = torch_sla.load_sparse(p)
    assert B.dtype == torch.float32 and torch.equal(B.values, A.values)
    with pytest.raises(TypeError, match="strings"):
        torch_sla.save_sparse(A, p, metadata={"n": 3})


def test_read_their_file_including_a_batch(tmp_path):
    row, col, val = random_sparse(6, seed=3)
    vb = torch.stack([val, 2 * val, 3 * val])
    p = str(tmp_path / "theirs.safetensors")
    write_theirs(p, {"values": vb, "row_indices": row, "col_indices": col,
                     "shape": torch.tensor([6, 6])}, THEIR_META)
    A = torch_sla.load_sparse(p)
    assert A.shape == (3, 6, 6) and torch.equal(A.values, vb)
    x = A.solve(torch.ones(3, 6, dtype=f64))
    assert torch.allclose(A @ x, torch.ones(3, 6, dtype=f64), atol=1e-12)
    # our batched file round-trips, multi-dimensional batch included
    A2 = A.with_values(vb.reshape(3, 1, -1).expand(3, 2, -1).contiguous())
    q = str(tmp_path / "ours.safetensors")
    A2.save(q)
    t, _ = read_as_spec(q)
    assert t["values"].shape == (3, 2, row.numel()) and list(t["shape"]) == [6, 6]
    B = SparseTensor.load(q)
    assert B.shape == (3, 2, 6, 6) and torch.equal(B.values, A2.values)


def test_load_errors_name_the_file(tmp_path):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{oops")
    with pytest.raises(torch_sla.ParseError, match="bad.safetensors"):
        torch_sla.load_sparse(str(p))
    with pytest.raises(torch_sla.SlaIOError):
        torch_sla.load_sparse(str(tmp_path / "missing.safetensors"))
    with pytest.raises(ValueError, match="CPU"):
        torch_sla.load_sparse(str(p), device="cuda")


def test_load_mtx_info(tmp_path):
    p = tmp_path / "m.mtx"
    p.write_text("%%MatrixMarket matrix coordinate real symmetric\n% c\n\n4 4 3\n1 1 2\n"
                 "2 1 -1\n4 4 1\n")
    assert torch_sla.load_mtx_info(str(p)) == {"shape": (4, 4), "nnz": 3, "field": "real",
                                               "symmetry": "symmetric", "format": "coordinate"}
    z = tmp_path / "z.mtx.gz"
    z.write_bytes(gzip.compress(b"%%MatrixMarket matrix array real general\n2 3\n" +
                                b"1\n" * 6))
    info = torch_sla.load_mtx_info(str(z))
    assert info["shape"] == (2, 3) and info["nnz"] == 6 and info["format"] == "array"
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n4 four 3\n")
    with pytest.raises(torch_sla.ParseError, match="bad.mtx:2"):
        torch_sla.load_mtx_info(str(bad))


def test_load_metadata(tmp_path):
    (tmp_path / "metadata.json").write_text(json.dumps({"shape": [10, 10],
                                                        "num_partitions": 2}))
    assert torch_sla.load_metadata(str(tmp_path))["num_partitions"] == 2
