"""Checks of public arguments: integers, non-negative reals, choices, shapes, batch indices.

Every check raises TypeError (wrong kind of object) or ValueError (right kind, wrong value)
with a message naming the argument and the value it got, so that nothing is silently rounded
(``2.5 → 2``), wrapped (``2**70`` → 0 in a C int64) or ignored (a typo in a choice).
"""
import math
import numbers
import operator

INT64_MAX = 2**63 - 1


def shape_str(dims):
    """A shape for messages: symbolic dimensions without quotes, "(2, 3, K)", "(3,)"."""
    dims = tuple(dims)
    inner = ", ".join(str(d) for d in dims)
    return f"({inner},)" if len(dims) == 1 else f"({inner})"


def as_int(value, name, minimum=None, maximum=INT64_MAX):
    """`value` as a Python int: an integer (int, NumPy integer, integer 0-d tensor) in
    [minimum, maximum]. A real number that is not an int (2.5, even 3.0) or a bool raises
    ValueError, anything else (a string, None) TypeError."""
    try:
        if isinstance(value, bool):
            raise TypeError
        v = operator.index(value)
    except TypeError:
        if isinstance(value, bool) or _is_real(value):
            raise ValueError(f"{name} = {value!r} is not an integer") from None
        raise TypeError(f"{name} must be an integer, got {value!r} "
                        f"({type(value).__name__})") from None
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} = {v} must be ≥ {minimum}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name} = {v} must be ≤ {maximum}")
    return v


def as_opt_int(value, name, minimum=None, maximum=INT64_MAX):
    """None (the library default) or as_int."""
    return None if value is None else as_int(value, name, minimum, maximum)


def as_real(value, name, minimum=None, positive=False):
    """`value` as a finite Python float (int, float, NumPy or 0-d tensor real; not a bool nor a
    string), ≥ minimum (> 0 if positive)."""
    if isinstance(value, (bool, str, bytes)) or not _is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} = {value!r} must be finite")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} = {value!r} must be ≥ {minimum:g}")
    if positive and v <= 0:
        raise ValueError(f"{name} = {value!r} must be > 0")
    return v


def as_opt_real(value, name, minimum=None, positive=False):
    return None if value is None else as_real(value, name, minimum, positive)


def _is_real(value):
    if isinstance(value, numbers.Real):
        return True
    import torch
    return (isinstance(value, torch.Tensor) and value.dim() == 0 and
            not value.dtype.is_complex and value.dtype != torch.bool)


def choice(value, names, name, default=None):
    """The index of `value` (a string, case-insensitive) in `names`; None → `default`'s."""
    if value is None and default is not None:
        value = default
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, one of {', '.join(names)}; got {value!r}")
    v = value.lower()
    if v not in names:
        raise ValueError(f"{name} = {value!r} is not one of {', '.join(names)}")
    return names.index(v)


def as_shape(shape, name="shape"):
    """A tuple of ints ≥ 0 with at least two dimensions (*batch, M, N)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{name} must be a tuple (*batch, M, N) of integers, got {shape!r}")
    out = []
    for i, s in enumerate(shape):
        try:
            if isinstance(s, bool):
                raise TypeError
            out.append(operator.index(s))
        except TypeError:
            raise ValueError(f"{name}[{i}] = {s!r} is not an integer (shape {tuple(shape)}); "
                             f"sizes must be integers ≥ 0") from None
    if len(out) < 2 or any(s < 0 for s in out):
        raise ValueError(f"{name} must be (*batch, M, N) with sizes ≥ 0, got {tuple(out)}")
    return tuple(out)


def batch_index(index, batch_shape, name="index"):
    """Position in the flattened batch of `index`: an int (of the flattened batch, negative
    counts from the end) or a tuple with one int per batch dimension. An unbatched tensor is a
    batch of one (index None, 0 or -1)."""
    batch_shape = tuple(batch_shape)
    B = math.prod(batch_shape)
    if index is None:
        if batch_shape:
            raise ValueError(f"a batched SparseTensor (batch shape {shape_str(batch_shape)}) "
                             f"needs {name}= (an int or a tuple of {len(batch_shape)} ints)")
        return 0
    if isinstance(index, tuple):
        if len(index) != len(batch_shape):
            raise ValueError(f"{name} = {index!r} has {len(index)} entries for the batch "
                             f"shape {shape_str(batch_shape)}")
        flat = 0
        for i, (j, size) in enumerate(zip(index, batch_shape)):
            j = as_int(j, f"{name}[{i}]")
            if not -size <= j < size:
                raise ValueError(f"{name}[{i}] = {j} is out of range for batch dimension {i} "
                                 f"of size {size}")
            flat = flat * size + j % size
        return flat
    j = as_int(index, name)
    n = B if batch_shape else 1
    if not -n <= j < n:
        raise ValueError(f"{name} = {j} is out of range for a batch of {n}")
    return j % n
