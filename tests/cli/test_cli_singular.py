"""`sla solve` and `sla logdet` on numerically singular matrices (the rule of SLA_RCOND_SINGULAR):
a singular matrix never prints "converged" nor exits 0 from solve; logdet reports sign 0."""
import json
import os
import subprocess

import pytest

CLI = os.environ.get("SLA_CLI", "sla")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def write_neumann(path, m, shift):
    """Graph Laplacian of the m × m grid (diagonal = number of neighbours) + shift·I."""
    entries = []
    for y in range(m):
        for x in range(m):
            i = y * m + x
            nbrs = [(x + dx, y + dy) for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1))
                    if 0 <= x + dx < m and 0 <= y + dy < m]
            entries += [(i, b * m + a, -1.0) for a, b in nbrs]
            entries.append((i, i, len(nbrs) + shift))
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real general\n")
        f.write(f"{m * m} {m * m} {len(entries)}\n")
        for i, j, v in entries:
            f.write(f"{i + 1} {j + 1} {v!r}\n")


@pytest.mark.parametrize("method", ["auto", "klu", "lu", "ldlt", "cholesky"])
def test_solve_singular_exits_3(tmp_path, method):
    path = tmp_path / "neumann.mtx"
    write_neumann(path, 20, 0.0)
    p = run("solve", str(path), "--method", method)
    assert p.returncode == 3, (p.returncode, p.stdout, p.stderr)
    assert "converged" not in p.stdout
    want = "not positive definite" if method == "cholesky" else "singular"
    assert want in p.stderr
    p = run("solve", str(path), "--method", method, "--json")
    assert p.returncode == 3
    j = json.loads(p.stdout)
    assert j["exit_code"] == 3 and "converged" not in j
    assert j["status"] == ("matrix not symmetric positive definite" if method == "cholesky"
                           else "singular matrix")


def test_logdet_singular_and_regular(tmp_path):
    path = tmp_path / "neumann.mtx"
    write_neumann(path, 20, 0.0)
    j = json.loads(run("logdet", str(path), "--json").stdout)
    assert j["sign"] == 0 and j["logabsdet"] is None and j["singular"] is True
    assert "numerically singular" in j["description"]
    write_neumann(path, 20, 1e-6)          # κ ≈ 8e6: regular, solved
    p = run("solve", str(path), "--method", "klu")
    assert p.returncode == 0 and "converged" in p.stdout, p.stderr
    j = json.loads(run("logdet", str(path), "--json").stdout)
    assert j["sign"] == 1 and j["singular"] is False
