"""Matrix Market files through libsla's reader and writer (plain or gzip-compressed)."""
import ctypes
import os

import torch

from ._args import batch_index
from ._capi import MM_FIELDS, MM_SYMMETRIES, CooC, check, lib, require
from ._functions import matrix_view


def _c_path(path):
    """A path as the bytes libsla gets: str, bytes or os.PathLike, refused as open() refuses it
    when it holds a NUL (C would silently read or write the file named by the text before it)."""
    raw = os.fsencode(path)
    if b"\0" in raw:
        raise ValueError(f"embedded null byte in path {path!r}")
    return raw


def _c_text(text, what):
    raw = text.encode()
    if b"\0" in raw:
        raise ValueError(f"embedded null character in {what}")
    return raw


def load_mtx(path, dtype=None, device="cpu"):
    """Reads a Matrix Market file (coordinate or array; real, integer or pattern; general,
    symmetric or skew-symmetric; gzip recognised by content) into a SparseTensor. Symmetric
    storage is expanded (both triangles), entries stay in file order.

    dtype: torch.float64 (default) or torch.float32; a complex file needs torch.complex128
    (its default) or torch.complex64, and a real file read as complex gets zero imaginary
    parts. Errors (bad banner, index out of range,
    truncated file...) raise ParseError / SlaIOError with libsla's "FILE:LINE: what" message;
    a path holding a NUL byte raises ValueError, as open() does.
    """
    from .sparse_tensor import SparseTensor
    require("sla_mm_read", "load_mtx")
    if torch.device(device).type != "cpu":
        raise ValueError("torch_sla runs on the CPU (libsla); device must be 'cpu'")
    if dtype is not None and dtype not in (torch.float64, torch.float32, torch.complex128,
                                           torch.complex64):
        raise TypeError(f"dtype must be torch.float64, float32, complex128 or complex64, got "
                        f"{dtype}")
    coo = ctypes.POINTER(CooC)()
    check(lib.sla_mm_read(_c_path(path), ctypes.byref(coo)))
    try:
        c = coo.contents
        cplx = c.field == MM_FIELDS["complex"]
        if dtype is None:
            dtype = torch.complex128 if cplx else torch.float64
        if cplx and not dtype.is_complex:
            raise TypeError(f"{path}: the file is complex but dtype={dtype} is real (read it as "
                            f"torch.complex128 or torch.complex64)")
        n = c.nnz
        row = _copy(c.row, n, ctypes.c_int64, torch.int64)
        col = _copy(c.col, n, ctypes.c_int64, torch.int64)
        if cplx:
            values = torch.view_as_complex(
                _copy(c.values, 2 * n, ctypes.c_double, torch.float64).reshape(n, 2)).to(dtype)
        else:
            values = _copy(c.values, n, ctypes.c_double, torch.float64).to(dtype)
        shape = (c.nrows, c.ncols)
    finally:
        lib.sla_coo_free(ctypes.byref(coo))
    return SparseTensor(values, row, col, shape)


def _copy(ptr, n, ctype, dtype):
    if n == 0:
        return torch.empty(0, dtype=dtype)
    addr = ctypes.cast(ptr, ctypes.c_void_p).value
    return torch.frombuffer((ctype * n).from_address(addr), dtype=dtype).clone()


def save_mtx(A, path, comment="", field="real", symmetry="general", index=0):
    """Writes matrix `index` of a (batched) SparseTensor as a Matrix Market coordinate file
    (gzip-compressed if path ends in .gz). Duplicates are summed. field: 'real' (%.17g),
    'integer', 'pattern' or 'complex' (what a complex tensor is written as: its default);
    symmetry: 'general', 'symmetric' (lower triangle; the matrix must be exactly symmetric) or
    'hermitian' (complex: a_ij = conj(a_ji) exactly). index: an int of the flattened batch, or a tuple with one int
    per batch dimension (0 for an unbatched tensor). A failed write leaves an existing file at
    path as it was (the data go to a temporary file renamed into place). A path or comment
    holding a NUL raises ValueError, as open() does."""
    from .sparse_tensor import SparseTensor
    require("sla_mm_write", "save_mtx")
    if not isinstance(A, SparseTensor):
        raise TypeError(f"save_mtx writes a SparseTensor, got {type(A).__name__} (for a dense "
                        f"tensor use SparseTensor.from_dense)")
    if not isinstance(comment, str):
        raise TypeError(f"comment must be a string, got {type(comment).__name__}")
    if A.dtype.is_complex and field == "real":
        field = "complex"                  # the default field of a complex tensor
    if field not in ("real", "integer", "pattern", "complex"):
        raise ValueError(f"field = {field!r}: use 'real', 'integer', 'pattern' or 'complex'")
    if symmetry not in ("general", "symmetric", "hermitian"):
        raise ValueError(f"symmetry = {symmetry!r}: use 'general', 'symmetric' or 'hermitian'")
    raw_path = _c_path(path)
    text = _c_text(comment, "comment") if comment else None
    index = batch_index(index, A.batch_shape)
    vals = A._csr().detach().contiguous()
    view = matrix_view(A.pattern, vals)
    check(lib.sla_mm_write(raw_path, ctypes.byref(view), index, MM_FIELDS[field],
                           MM_SYMMETRIES[symmetry], text))


# ------------------------------------------------------------------------------------------------
# safetensors (torch-sla's layout) and Matrix Market headers
# ------------------------------------------------------------------------------------------------
SAFETENSORS_MAX_DIMS = 8      # include/sla/io.h


def save_sparse(tensor, path, metadata=None):
    """Writes a SparseTensor in torch-sla's safetensors layout (libsla's writer): "values"
    [*batch, nnz] in the dtype of the tensor (float64 F64, float32 F32, complex128 C128 or
    complex64 C64: (re, im) pairs), "row_indices" and
    "col_indices" [nnz] int64 in the tensor's entry order, "shape" [M, N]; metadata:
    torch-sla's keys (format, version, dtype, sparse_dim_0/1) plus the caller's dict of
    strings. A batched tensor is written whole (torch-sla's reader and ours read it back)."""
    from .sparse_tensor import SparseTensor
    require("sla_safetensors_write_batch", "save_sparse")
    if not isinstance(tensor, SparseTensor):
        raise TypeError(f"save_sparse writes a SparseTensor, got {type(tensor).__name__}")
    meta = {"sparse_dim_0": str(tensor.sparse_dim[0]), "sparse_dim_1": str(tensor.sparse_dim[1])}
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must map strings to strings, got {k!r}: {v!r}")
        meta[k] = v
    if len(tensor.batch_shape) >= SAFETENSORS_MAX_DIMS:
        raise ValueError(f"save_sparse: {len(tensor.batch_shape)} batch dimensions (at most "
                         f"{SAFETENSORS_MAX_DIMS - 1})")
    row = tensor.row_indices.contiguous()
    col = tensor.col_indices.contiguous()
    cplx = tensor.dtype.is_complex
    vals = tensor.values.detach()
    vals = (torch.view_as_real(vals.to(torch.complex128)) if cplx
            else vals.to(torch.float64)).contiguous()
    M, N = tensor.sparse_shape
    coo = CooC(nrows=M, ncols=N, nnz=tensor.nnz, nnz_stored=tensor.nnz,
               row=ctypes.cast(row.data_ptr(), ctypes.POINTER(ctypes.c_int64)),
               col=ctypes.cast(col.data_ptr(), ctypes.POINTER(ctypes.c_int64)),
               values=ctypes.cast(vals.data_ptr(), ctypes.POINTER(ctypes.c_double)),
               field=MM_FIELDS["complex" if cplx else "real"], symmetry=MM_SYMMETRIES["general"],
               is_array=0)
    bs = (ctypes.c_int64 * max(1, len(tensor.batch_shape)))(*tensor.batch_shape)
    pairs = [x.encode() for kv in meta.items() for x in kv] + [None]
    carr = (ctypes.c_char_p * len(pairs))(*pairs)
    from ._functions import DTYPE_CODE
    check(lib.sla_safetensors_write_batch(os.fsencode(path), ctypes.byref(coo),
                                          DTYPE_CODE[tensor.dtype], len(tensor.batch_shape), bs,
                                          carr))


def _values_dtype(path):
    """torch dtype of the "values" tensor named in a safetensors header (libsla validates the
    file; this only reads the dtype word so that float32 files load as float32)."""
    import json
    import struct
    try:
        with open(path, "rb") as f:
            n = struct.unpack("<Q", f.read(8))[0]
            hdr = json.loads(f.read(min(n, 100 << 20)))
        return {"F32": torch.float32, "C128": torch.complex128,
                "C64": torch.complex64}.get(hdr["values"]["dtype"], torch.float64)
    except (OSError, ValueError, KeyError, TypeError, struct.error):
        return torch.float64          # libsla's reader gives the precise error below


def load_sparse(path, device="cpu", dtype=None):
    """Reads a SparseTensor written by save_sparse or by torch-sla (values [nnz] or a batch
    [*batch, nnz]). dtype: the file's (F32 → float32, C128 → complex128, C64 → complex64,
    else float64) unless given; a complex file needs a complex dtype. The
    header, offsets and indices are validated by libsla (sla_safetensors_read_batch); errors
    raise ParseError / SlaIOError naming the file and the tensor."""
    from .sparse_tensor import SparseTensor
    require("sla_safetensors_read_batch", "load_sparse")
    if torch.device(device).type != "cpu":
        raise ValueError("torch_sla runs on the CPU (libsla); device must be 'cpu'")
    if dtype is None:
        dtype = _values_dtype(path)
    if dtype not in (torch.float64, torch.float32, torch.complex128, torch.complex64):
        raise TypeError(f"dtype must be torch.float64, float32, complex128 or complex64, got "
                        f"{dtype}")
    coo = ctypes.POINTER(CooC)()
    nd = ctypes.c_int()
    dims = (ctypes.c_int64 * SAFETENSORS_MAX_DIMS)()
    check(lib.sla_safetensors_read_batch(os.fsencode(path), ctypes.byref(coo), ctypes.byref(nd),
                                         dims))
    try:
        c = coo.contents
        batch = tuple(dims[:nd.value])
        nb = 1
        for d in batch:
            nb *= d
        n = c.nnz
        row = _copy(c.row, n, ctypes.c_int64, torch.int64)
        col = _copy(c.col, n, ctypes.c_int64, torch.int64)
        if c.field == MM_FIELDS["complex"]:
            if not dtype.is_complex:
                raise TypeError(f"{path}: the file is complex but dtype={dtype} is real (read "
                                f"it as torch.complex128 or torch.complex64)")
            values = torch.view_as_complex(
                _copy(c.values, 2 * n * nb, ctypes.c_double, torch.float64).reshape(-1, 2))
            values = values.to(dtype)
        else:
            values = _copy(c.values, n * nb, ctypes.c_double, torch.float64).to(dtype)
        shape = (c.nrows, c.ncols)
    finally:
        lib.sla_coo_free(ctypes.byref(coo))
    return SparseTensor(values.reshape(batch + (n,)), row, col, batch + shape)


def load_mtx_info(path):
    """The header of a Matrix Market file without reading its entries: {'shape': (M, N),
    'nnz': entries stored in the file (before symmetric expansion), 'field', 'symmetry',
    'format' ('coordinate' or 'array')}; gzip recognised by its magic bytes. A malformed
    header raises ParseError naming the file and line."""
    import gzip
    from .errors import ParseError
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="latin-1") as f:
        banner = f.readline()
        words = banner.split()
        if len(words) < 4 or words[0].lower() != "%%matrixmarket" or words[1].lower() != "matrix":
            raise ParseError(f"{path}:1: not a Matrix Market banner: {banner.strip()[:80]!r}")
        fmt, field = words[2].lower(), words[3].lower()
        symmetry = words[4].lower() if len(words) > 4 else "general"
        line_no, line = 1, ""
        for line in f:
            line_no += 1
            if line.strip() and not line.lstrip().startswith("%"):
                break
        else:
            raise ParseError(f"{path}:{line_no}: no size line")
        try:
            sizes = [int(x) for x in line.split()]
        except ValueError:
            raise ParseError(f"{path}:{line_no}: bad size line {line.strip()[:80]!r}") from None
    want = 3 if fmt == "coordinate" else 2
    if len(sizes) != want or min(sizes) < 0:
        raise ParseError(f"{path}:{line_no}: the size line must have {want} non-negative "
                         f"integers, got {line.strip()[:80]!r}")
    M, N = sizes[0], sizes[1]
    if fmt == "coordinate":
        nnz = sizes[2]
    elif symmetry == "general":
        nnz = M * N
    else:
        nnz = N * (N + 1) // 2 if symmetry != "skew-symmetric" else N * (N - 1) // 2
    return {"shape": (M, N), "nnz": nnz, "field": field, "symmetry": symmetry, "format": fmt}


def load_metadata(directory):
    """metadata.json of a sharded (distributed) sparse tensor directory, as a dict."""
    import json
    from pathlib import Path
    with open(Path(directory) / "metadata.json") as f:
        return json.load(f)
