"""Cost of torch_sla's pattern cache on a 1M-entry pattern (2D 5-point Laplacian, 448², entries
in random order): building the pattern (a miss: sla_pattern_from_coo) against a hit on the same
index tensors, on equal fresh tensors, and a miss among 8 cached patterns of the same size.
A hit compares the indices with the cache's private copies (they may have changed behind
torch's version counter); the ratios say what that costs next to a build. One JSON object.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/pattern_cache.py
[--side 448] [--repeats 20]
"""
import argparse
import json
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import torch  # noqa: E402

import torch_sla  # noqa: E402
from torch_sla._pattern import pattern_for  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import per_call  # noqa: E402


def laplacian_indices(s, seed=0):
    idx = torch.arange(s * s).reshape(s, s)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        rows += [a.reshape(-1), b.reshape(-1)]
        cols += [b.reshape(-1), a.reshape(-1)]
    row, col = torch.cat(rows), torch.cat(cols)
    p = torch.randperm(row.numel(), generator=torch.Generator().manual_seed(seed))
    return row[p].contiguous(), col[p].contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side", type=int, default=448)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    n = args.side ** 2
    row, col = laplacian_indices(args.side)

    def build():
        torch_sla.clear_pattern_cache()
        pattern_for(n, n, row, col)

    out = {"nnz": row.numel(), "n": n, "package": os.path.dirname(torch_sla.__file__),
           "threads": torch.get_num_threads(), "miss_build": per_call(build, args.repeats, warmup=0)}
    torch_sla.clear_pattern_cache()
    pattern_for(n, n, row, col)
    out["hit_same_tensors"] = per_call(lambda: pattern_for(n, n, row, col), args.repeats)
    r2, c2 = row.clone(), col.clone()
    out["hit_equal_tensors"] = per_call(lambda: pattern_for(n, n, r2, c2), args.repeats)
    others = [laplacian_indices(args.side, seed) for seed in range(1, 8)]
    for r, c in others:
        pattern_for(n, n, r, c)
    out["hit_among_8_same_size"] = per_call(lambda: pattern_for(n, n, row, col), args.repeats)
    b = out["miss_build"]["median_ms"]
    out["ratio_hit_to_build"] = out["hit_same_tensors"]["median_ms"] / b
    out["ratio_hit_among_8_to_build"] = out["hit_among_8_same_size"]["median_ms"] / b
    torch_sla.clear_pattern_cache()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
