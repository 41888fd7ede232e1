"""The torch-sla API table of docs/migrating.md: every public name torch-sla documents
(package exports, the members of its documented classes, torch_sla.datasets, the backend
utilities), and whether torch_sla (ours) has it.

    TORCH_SLA_REF=/path/to/torch-sla-checkout PYTHONPATH=python /usr/bin/python3 \
        bench/compat_api_table.py [--markdown]

Their names are listed by bench/compat_api_names.py run in a subprocess on their checkout
(it imports their package, so their import-time dependencies must be present: torch, numpy,
scipy). Status: 'present' (same name, same documented behaviour), 'mapped' (accepted and
translated onto libsla: the note says how), 'missing'. JSON on stdout by default.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# name -> note, for names that exist but translate their vocabulary or differ on purpose
MAPPED = {
    "SparseTensor.solve": "backend/method names mapped (docs/migrating.md); info.description says",
    "SparseTensor.to": "to(device, dtype) or to(dtype, device); device must be 'cpu'",
    "SparseTensor.cuda": "raises: libsla runs on the CPU",
    "SparseTensor.half": "raises: float16 is not a libsla dtype",
    "SparseTensor.to_dense": "a batch gives all items (theirs: item 0); batch_idx= as theirs",
    "SparseTensor.logdet": "NaN for det < 0 like torch.logdet (theirs log|det|): slogdet()",
    "torch_sla.spsolve": "backend/method names mapped",
    "torch_sla.solve": "backend/method names mapped; matrix-free callables probed",
    "torch_sla.show_backends": "lists libsla's backends",
    "torch_sla.get_available_backends": "libsla backend names (vocabulary= 'torch-sla' gives theirs)",
    "torch_sla.select_backend": "answers in their vocabulary; every name runs on libsla",
    "SparseTensorList.__add__": "item by item as theirs; concatenation is .concat()",
    "SparseTensorList.block_sizes": "a property as theirs (calling it still works)",
    "SparseTensorList.cuda": "raises: libsla runs on the CPU",
    "SparseTensor.eigs": "ARPACK dnaupd (complex results, not differentiable); symmetric → eigsh",
    "SparseTensorList.eigs": "as SparseTensor.eigs",
    "SparseTensor.svd": "Gram matrix (SpGEMM) + eigsh, differentiable; accuracy ε·κ²",
    "SparseTensor.condition_number": "ord=2 only (κ₂ by eigsh on AᵀA)",
    "SparseTensor.norm": "2-norm of any matrix (σmax); also inf, 'max'",
    "SparseTensor.det": "exact by default; DetConfig(method='hutchinson') estimates",
    "SparseTensor.conj": "identity (real dtypes)",
    "SparseTensor.H": "T() (real dtypes)",
    "SparseTensor.is_hermitian": "is_symmetric (real dtypes)",
    "SparseTensor.lu": "libsla's direct method (Cholesky for SPD), held; method='lu' for UMFPACK",
    "torch_sla.LUFactorization": "holds a libsla solver; solve(b) differentiable in b",
    "torch_sla.is_cudss_available": "False (CPU); backend 'cudss' requests run on libsla",
    "torch_sla.get_available_gpu_memory": "0",
    "torch_sla.estimate_direct_solver_memory": "their formula; libsla's auto measures fill",
    "torch_sla.SOLVER_CACHE": "handle on torch_sla's refactor cache",
    "torch_sla.DetConfig": "method 'hutchinson' = SLQ estimate; components not split",
    "torch_sla.PreconditionerConfig": "ssor/block_jacobi run as jacobi",
    "torch_sla.SolverConfig": "presets in their vocabulary, all on libsla",
    "torch_sla.datasets.helmholtz_1d": "real only: alpha ≠ 0 (complex) raises",
    "torch_sla.datasets.SuiteSparse": "a local folder of .mtx files; never downloads",
    "torch_sla.datasets.load_suitesparse": "from a local folder (directory=); never downloads",
    "torch_sla.datasets.is_suitesparse_available": "on disk",
    "torch_sla.datasets.Synthetic": "their real keys (the complex Helmholtz one is absent)",
    "torch_sla.datasets.DatasetUnavailable": "raised for a file not on disk",
    "torch_sla.load_metadata": "reads metadata.json (no DSparseTensor yet)",
}


def their_names():
    ref = os.environ.get("TORCH_SLA_REF", "/work/ext/torch-sla")
    env = dict(os.environ, PYTHONPATH=ref)
    out = subprocess.run([sys.executable, str(HERE / "compat_api_names.py")], env=env,
                         capture_output=True, text=True, check=True, cwd="/")
    return json.loads(out.stdout)


def our_object(group):
    import torch_sla
    if group == "torch_sla":
        return torch_sla
    if group == "SOLVER_CACHE":
        return getattr(torch_sla, "SOLVER_CACHE", None)
    if group.startswith("torch_sla."):
        import importlib
        try:
            return importlib.import_module(group)
        except ImportError:
            return None
    return getattr(torch_sla, group, None)


def table():
    rows = []
    for group, names in their_names().items():
        obj = our_object(group)
        for n in names:
            key = f"{group}.{n}"
            have = obj is not None and (hasattr(obj, n) or (
                group == "SparseTensor" and n in ("values", "row_indices", "col_indices")))
            status = "missing" if not have else ("mapped" if key in MAPPED else "present")
            rows.append({"name": key, "status": status, "note": MAPPED.get(key, "")})
    return rows


def main():
    rows = table()
    counts = {s: sum(r["status"] == s for r in rows) for s in ("present", "mapped", "missing")}
    if "--markdown" in sys.argv:
        print(f"{len(rows)} names: {counts['present']} present, {counts['mapped']} mapped, "
              f"{counts['missing']} missing\n")
        print("| name | ours | note |\n|---|---|---|")
        for r in rows:
            print(f"| `{r['name']}` | {r['status']} | {r['note']} |")
    else:
        print(json.dumps({"counts": counts, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
