"""The solver backends compiled into libsla (sla_backend_count / sla_backend_get)."""
import ctypes
from dataclasses import dataclass
from typing import List, Optional

import torch

from ._args import choice
from ._capi import METHODS, BackendInfoC, check, lib

_DTYPES = (torch.float64, torch.float32, torch.complex128, torch.complex64)


@dataclass(frozen=True)
class BackendInfo:
    name: str
    description: str
    methods: tuple
    dtypes: tuple
    priority: int
    available: bool
    unavailable_reason: Optional[str]


def backends() -> List[BackendInfo]:
    """Every registered backend, compiled in or not."""
    out = []
    for i in range(lib.sla_backend_count()):
        info = BackendInfoC()
        check(lib.sla_backend_get(i, ctypes.byref(info)))
        dec = (lambda b: b.decode("utf-8", "replace") if b else None)
        out.append(BackendInfo(
            name=dec(info.name), description=dec(info.description) or "",
            methods=tuple(m for j, m in enumerate(METHODS) if info.methods >> j & 1),
            dtypes=tuple(d for j, d in enumerate(_DTYPES) if info.dtypes >> j & 1),
            priority=info.priority, available=bool(info.available),
            unavailable_reason=dec(info.unavailable_reason)))
    return out


def get_available_backends() -> List[str]:
    """Names of the backends compiled into this build (torch-sla name)."""
    return [b.name for b in backends() if b.available]


def method_available(method, dtype=torch.float64, backend=None) -> bool:
    """True if some available backend (or the named one) serves `method` for `dtype`.
    'auto' is available when any direct method is. An unknown method or backend name raises
    ValueError (a typo would otherwise read as "not available")."""
    method = METHODS[choice(method, METHODS, "method")]
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype, got {dtype!r}")
    bs = backends()
    if backend is not None:
        if not isinstance(backend, str):
            raise TypeError(f"backend must be a string, got {type(backend).__name__}")
        names = [b.name for b in bs]
        if backend != "auto" and backend not in names:
            raise ValueError(f"backend = {backend!r} is not one of auto, {', '.join(names)} "
                             f"(torch_sla.show_backends() lists them)")
    if method == "auto":
        return any(method_available(m, dtype, backend) for m in ("cholesky", "ldlt", "lu"))
    return any(b.available and method in b.methods and dtype in b.dtypes and
               (backend in (None, "auto") or b.name == backend) for b in bs)


def show_backends(file=None):
    """Prints the backends of the loaded libsla (name, availability, methods, dtypes,
    priority, description or why not) and returns them."""
    import sys
    from ._capi import lib as _lib
    file = file or sys.stdout
    bs = backends()
    print(f"libsla {_lib.sla_version().decode()} ({_lib.path})", file=file)
    for b in sorted(bs, key=lambda b: -b.priority):
        state = "available" if b.available else "missing  "
        methods = ",".join(b.methods) or "-"
        dtypes = ",".join(str(d).replace("torch.", "") for d in b.dtypes) or "-"
        why = b.description if b.available else (b.unavailable_reason or "")
        print(f"  {b.name:<10} {state}  prio {b.priority:>3}  methods {methods:<34} "
              f"dtypes {dtypes:<16} {why}", file=file)
    return bs


# torch-sla's backend utilities and vocabulary (BACKEND_METHODS, is_*_available,
# select_backend, ...): docs/migrating.md
from ._vocab import *  # noqa: E402,F401,F403
