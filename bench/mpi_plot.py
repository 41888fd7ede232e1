"""Scaling curves of bench_mpi_model (via bench/mpi.sh): predicted time per CG iteration and
parallel efficiency, strong and weak, 2D and 3D, RCB and contiguous strips.

Usage: /usr/bin/python3 bench/mpi_plot.py RESULTS.json OUT.png
RESULTS.json is bench/mpi.sh's output (its "model" entry) or bench_mpi_model's own JSON."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(c):
    rows = c.get("full_rows") or c.get("full_rows_per_rank")
    what = f"{rows:.2g} rows" if c["scaling"] == "strong" else f"{rows:.3g} rows/rank"
    return f"{c['dim']}D {c['partition']}, {what}"


def main(src, dst):
    d = json.load(open(src))
    m = d.get("model", d)
    fig, ax = plt.subplots(2, 2, figsize=(12, 9))
    for c in m["curves"]:
        P = [p["P"] for p in c["points"]]
        t = [p["t_iter_us"] for p in c["points"]]
        e = [p["efficiency"] for p in c["points"]]
        row = 0 if c["scaling"] == "strong" else 1
        style = "-" if c["partition"] == "rcb" else "--"
        line, = ax[row][0].loglog(P, t, style, marker="o", ms=3, label=label(c))
        ax[row][1].semilogx(P, e, style, marker="o", ms=3, color=line.get_color(), label=label(c))
        if c["scaling"] == "strong" and c["partition"] == "rcb":
            ax[row][0].loglog(P, [t[0] / q for q in P], ":", color=line.get_color(), lw=0.8)
    for row, name in enumerate(("strong", "weak")):
        ax[row][0].set_title(f"{name} scaling: predicted time per CG iteration"
                             + (" (dotted: ideal)" if name == "strong" else ""))
        ax[row][0].set_xlabel("ranks P")
        ax[row][0].set_ylabel("µs per iteration")
        ax[row][1].set_title(f"{name} scaling: parallel efficiency")
        ax[row][1].set_xlabel("ranks P")
        ax[row][1].set_ylabel("efficiency")
        for a in ax[row]:
            a.grid(True, which="both", alpha=0.3)
            a.legend(fontsize=7)
    fig.suptitle(f"libsla_mpi CG + Jacobi, α–β model: α = {m['alpha_us']} µs, "
                 f"β = 1/{m['beta_gbs']} GB/s, measured per rank: SpMV {m['spmv_gbs_per_rank']:.1f} GB/s, "
                 f"vectors {m['vector_gbs_per_rank']:.1f} GB/s, 2 allreduces per iteration", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
