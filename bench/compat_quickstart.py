"""torch-sla's README quick start on torch_sla (ours, libsla) and on torch-sla (theirs, a
checkout named by TORCH_SLA_REF, imported with the same Debian torch), both on the CPU, in
one run (the machine is shared: compare the ratios, not the times of different runs).

    TORCH_SLA_REF=/path/to/torch-sla PYTHONPATH=python /usr/bin/python3 bench/compat_quickstart.py

Cases (the same code runs on both packages):
  quickstart   the README's "Basic Solve" block: SparseTensor.from_dense of the 3 × 3 matrix,
               A.solve(b), A.solve(b, backend='scipy', method='lu')
  poisson_lu   their recommended CPU path on a 2D Poisson matrix (5-point, m × m):
               A.solve(b, backend='scipy', method='lu') with a gradient (x.sum().backward())
  batched      the README's batched block scaled up: 16 matrices on one pattern, A.solve(b)
Prints one JSON object: per case the median ms of each and theirs/ours.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def cases(torch_sla, m):
    import torch
    from torch_sla import SparseTensor
    f64 = torch.float64
    dense = torch.tensor([[4.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 4.0]], dtype=f64)
    b3 = torch.tensor([1.0, 2.0, 3.0], dtype=f64)

    def quickstart():
        A = SparseTensor.from_dense(dense)
        A.solve(b3)
        A.solve(b3, backend='scipy', method='lu')

    idx = torch.arange(m * m).reshape(m, m)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    vals = [torch.full((m * m,), 4.0, dtype=f64)]
    for a, c in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        for r, q in ((a, c), (c, a)):
            rows.append(r.reshape(-1))
            cols.append(q.reshape(-1))
            vals.append(torch.full((r.numel(),), -1.0, dtype=f64))
    row, col, val = torch.cat(rows), torch.cat(cols), torch.cat(vals)
    n = m * m
    b = torch.ones(n, dtype=f64)

    def poisson_lu():
        v = val.clone().requires_grad_(True)
        x = SparseTensor(v, row, col, (n, n)).solve(b, backend='scipy', method='lu')
        x.sum().backward()

    vb = torch.stack([val * (1 + 0.01 * i) for i in range(16)])
    bb = torch.ones(16, n, dtype=f64)

    def batched():
        SparseTensor(vb, row, col, (16, n, n)).solve(bb)

    return {"quickstart": (quickstart, 200), "poisson_lu": (poisson_lu, 10),
            "batched": (batched, 5)}


def run_here(m):
    sys.path.insert(0, HERE)
    from timing import per_call
    import torch_sla
    out = {}
    for name, (fn, reps) in cases(torch_sla, m).items():
        out[name] = per_call(fn, reps, warmup=2)["median_ms"]
    return out


def main():
    m = int(os.environ.get("SLA_QUICKSTART_M", "100"))
    if "--child" in sys.argv:
        print(json.dumps(run_here(m)))
        return
    ours = run_here(m)
    ref = os.environ.get("TORCH_SLA_REF", "/work/ext/torch-sla")
    env = dict(os.environ, PYTHONPATH=ref, SLA_QUICKSTART_M=str(m))
    env.pop("SLA_LIBRARY", None)
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"], env=env,
                       capture_output=True, text=True, cwd="/")
    theirs = json.loads(p.stdout) if p.returncode == 0 else {"error": p.stderr[-2000:]}
    res = {"m": m, "dof": m * m, "ours_ms": ours, "theirs_ms": theirs}
    if "error" not in theirs:
        res["theirs_over_ours"] = {k: theirs[k] / ours[k] for k in ours}
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
