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

    dtype: torch.float64 (default) or torch.float32. Errors (bad banner, index out of range,
    truncated file...) raise ParseError / SlaIOError with libsla's "FILE:LINE: what" message;
    a path holding a NUL byte raises ValueError, as open() does.
    """
    from .sparse_tensor import SparseTensor
    require("sla_mm_read", "load_mtx")
    if torch.device(device).type != "cpu":
        raise ValueError("torch_sla runs on the CPU (libsla); device must be 'cpu'")
    dtype = torch.float64 if dtype is None else dtype
    if dtype not in (torch.float64, torch.float32):
        raise TypeError(f"dtype must be torch.float64 or torch.float32, got {dtype}")
    coo = ctypes.POINTER(CooC)()
    check(lib.sla_mm_read(_c_path(path), ctypes.byref(coo)))
    try:
        c = coo.contents
        if c.field == MM_FIELDS["complex"]:
            raise TypeError(f"{path}: complex Matrix Market files are not supported yet "
                            f"(complex dtype)")
        n = c.nnz
        row = _copy(c.row, n, ctypes.c_int64, torch.int64)
        col = _copy(c.col, n, ctypes.c_int64, torch.int64)
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
    'integer' or 'pattern'; symmetry: 'general' or 'symmetric' (lower triangle; the matrix must
    be numerically symmetric). index: an int of the flattened batch, or a tuple with one int
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
    if field not in ("real", "integer", "pattern"):
        raise ValueError(f"field = {field!r}: use 'real', 'integer' or 'pattern'")
    if symmetry not in ("general", "symmetric"):
        raise ValueError(f"symmetry = {symmetry!r}: use 'general' or 'symmetric'")
    raw_path = _c_path(path)
    text = _c_text(comment, "comment") if comment else None
    index = batch_index(index, A.batch_shape)
    vals = A._csr().detach().contiguous()
    view = matrix_view(A.pattern, vals)
    check(lib.sla_mm_write(raw_path, ctypes.byref(view), index, MM_FIELDS[field],
                           MM_SYMMETRIES[symmetry], text))
