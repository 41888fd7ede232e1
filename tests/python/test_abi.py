"""The ctypes mirrors of libsla's public structs (torch_sla/_capi.py) against the headers in
include/sla: same fields, in the same order, with the same sizes (a drift is a crash, not an
error, in ctypes)."""
import ctypes
import os
import re

import pytest

from torch_sla import _capi

INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "sla")
PAIRS = {"sla_matrix": _capi.Matrix, "sla_solver_options": _capi.SolverOptions,
         "sla_solve_info": _capi.SolveInfoC, "sla_backend_info": _capi.BackendInfoC,
         "sla_coo": _capi.CooC, "sla_eigsh_options": _capi.EigshOptionsC,
         "sla_eigsh_info": _capi.EigshInfoC}
SCALARS = {"int64_t": 8, "double": 8, "uint32_t": 4, "int": 4, "size_t": 8, "float": 4}


def _headers():
    if not os.path.isdir(INCLUDE):
        pytest.skip(f"headers not found at {INCLUDE}")
    text = ""
    for name in sorted(os.listdir(INCLUDE)):
        if name.endswith(".h"):
            with open(os.path.join(INCLUDE, name)) as f:
                text += f.read() + "\n"
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _c_fields(text, struct):
    m = re.search(r"typedef\s+struct\s+%s\s*\{(.*?)\}\s*%s\s*;" % (struct, struct), text, re.S)
    assert m, f"struct {struct} not found in include/sla"
    defines = dict(re.findall(r"#define\s+(\w+)\s+(\d+)", text))
    enums = set(re.findall(r"typedef\s+enum\s+\w*\s*\{.*?\}\s*(\w+)\s*;", text, re.S))
    fields = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        base = re.match(r"((?:const\s+)?[\w]+)\s*(.*)", decl)
        ctype, rest = base.group(1).replace("const ", ""), base.group(2)
        for item in rest.split(","):
            item = item.strip()
            arr = re.match(r"(\**)\s*(\w+)\s*(?:\[(\w+)\])?", item)
            ptr, name, dim = arr.groups()
            if ptr or ctype.endswith("_fn"):
                size = 8
            elif ctype in SCALARS:
                size = SCALARS[ctype]
            elif ctype in enums:
                size = 4
            elif ctype == "char":
                size = 1
            else:
                raise AssertionError(f"{struct}.{name}: unknown C type {ctype}")
            if dim:
                size *= int(defines.get(dim, dim))
            fields.append((name, size))
    return fields


@pytest.mark.parametrize("struct", sorted(PAIRS))
def test_struct_layout_matches_header(struct):
    cls = PAIRS[struct]
    py = [(name, ctypes.sizeof(t)) for name, t in cls._fields_ if name != "_tail_pad"]
    assert py == _c_fields(_headers(), struct)


def test_description_length_matches_header():
    m = re.search(r"#define\s+SLA_DESCRIPTION_LEN\s+(\d+)", _headers())
    assert m and int(m.group(1)) == _capi.SLA_DESCRIPTION_LEN
