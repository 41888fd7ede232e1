"""`sla info|logdet|eigsh|convert|solve -o` on complex Matrix Market files (complex Hermitian,
complex symmetric, general, and young1c), against numpy / scipy references."""
import json
import math
import os
import subprocess

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

CLI = os.environ.get("SLA_CLI", "sla")
MATRICES = os.environ.get("SLA_MATRIX_DIR", "../shared/matrices")


def run(*args, rc=0):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    assert p.returncode == rc, f"rc {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def run_json(*args, rc=0):
    return json.loads(run(*args, "--json", rc=rc).stdout)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cplx")
    n = 8
    B = sp.random(n, n, density=0.4, random_state=1) + 1j * sp.random(n, n, density=0.4, random_state=2)
    mats = {"h": (B + B.conj().T + 6 * sp.eye(n)).tocoo(),
            "s": (B + B.T + (5 + 1j) * sp.eye(n)).tocoo(),
            "g": (B + (3 - 2j) * sp.eye(n)).tocoo()}
    out = {}
    for k, A in mats.items():
        p = str(d / f"{k}.mtx")
        scipy.io.mmwrite(p, A, symmetry={"h": "hermitian", "s": "symmetric", "g": "general"}[k])
        out[k] = (p, scipy.io.mmread(p).toarray())     # the values as written in the file
    out["dir"] = d
    return out


def test_info_classes(files):
    for k, cls in [("h", "hermitian"), ("s", "complex symmetric"), ("g", "general")]:
        j = run_json("info", files[k][0])
        A = files[k][1]
        assert j["field"] == "complex" and j["complex_class"] == cls
        assert j["hermitian"] == (k == "h") and j["numerically_symmetric"] == (k == "s")
        assert math.isclose(j["norms"]["fro"], np.linalg.norm(A), rel_tol=1e-13)
        assert math.isclose(j["norms"]["one"], np.abs(A).sum(0).max(), rel_tol=1e-13)
        d = np.diag(A)
        assert j["diagonal"]["nonreal"] == int(np.sum(d.imag != 0))
        assert j["diagonal"]["positive"] == int(np.sum((d.imag == 0) & (d.real > 0)))
        assert j["method"] == {"h": "cholesky", "s": "ldlt", "g": "lu"}[k]   # auto (docs/auto.md)


def test_logdet_phase(files):
    for k in "hsg":
        sgn, lad = np.linalg.slogdet(files[k][1])
        j = run_json("logdet", files[k][0])
        assert abs(complex(*j["sign"]) - sgn) < 1e-12 and not j["singular"]
        assert math.isclose(j["logabsdet"], lad, rel_tol=1e-12)
        assert math.isclose(j["phase_angle"], np.angle(sgn), abs_tol=1e-12)
        assert "phase:" in run("logdet", files[k][0]).stdout


def test_eigsh_hermitian(files):
    ev = np.linalg.eigvalsh(files["h"][1])
    j = run_json("eigsh", files["h"][0], "-k", "3", "--which", "SA")
    assert np.allclose(j["eigenvalues"], ev[:3], rtol=0, atol=1e-10 * abs(ev).max())
    j = run_json("eigsh", files["h"][0], "-k", "2", "--which", "LA", "--method", "lobpcg")
    assert np.allclose(sorted(j["eigenvalues"]), ev[-2:], rtol=0, atol=1e-8 * abs(ev).max())


def test_eigsh_refuses_non_hermitian(files):
    for k, word in [("s", "complex symmetric"), ("g", "general")]:
        j = run_json("eigsh", files[k][0], "-k", "2", rc=2)
        assert "not Hermitian" in j["error"] and word in j["error"]


def test_convert_round_trip(files):
    d = files["dir"]
    for k, sym in [("h", "hermitian"), ("s", "symmetric"), ("g", "general")]:
        for ext in [".mtx", ".safetensors", ".cua"]:
            out = str(d / f"{k}_out{ext}")
            run("convert", files[k][0], out)
            if ext == ".mtx":
                assert f"complex {sym}" in open(out).readline()
                assert np.array_equal(scipy.io.mmread(out).toarray(), files[k][1])
            back = str(d / f"{k}_back{ext}.mtx")
            run("convert", out, back)
            assert np.array_equal(scipy.io.mmread(back).toarray(), files[k][1])


def test_solve_writes_complex_solution(files):
    for k in "hsg":
        out = str(files["dir"] / f"x_{k}.mtx")
        run("solve", files[k][0], "-o", out)
        assert "array complex general" in open(out).readline()
        x = scipy.io.mmread(out).ravel()
        ref = np.linalg.solve(files[k][1], np.ones(len(x)))
        assert np.linalg.norm(x - ref) <= 1e-12 * np.linalg.norm(ref)


@pytest.mark.skipif(not os.path.isfile(os.path.join(MATRICES, "young1c.mtx")), reason="no young1c")
def test_young1c(tmp_path):
    f = os.path.join(MATRICES, "young1c.mtx")
    A = scipy.io.mmread(f).toarray()
    j = run_json("info", f)
    assert j["complex_class"] == "general" and j["rows"] == 841
    sgn, lad = np.linalg.slogdet(A)
    j = run_json("logdet", f)
    assert math.isclose(j["logabsdet"], lad, rel_tol=1e-11) and abs(complex(*j["sign"]) - sgn) < 1e-9
    assert "not Hermitian" in run_json("eigsh", f, "-k", "2", rc=2)["error"]


@pytest.mark.skipif(not os.path.isfile(os.path.join(MATRICES, "young1c.mtx")), reason="no young1c")
def test_file_size_limit_with_default_sigxfsz(tmp_path):
    """Under `ulimit -f` a shell leaves SIGXFSZ at its default action, which killed sla in the
    middle of a write (exit 153) and left its temporary file (.OUT.sla-XXXX) behind. A write
    past the limit is a failed write: exit 3, the old OUT kept, nothing else left."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    src = os.path.join(MATRICES, "young1c.mtx")
    for cmd in (["convert", src, "OUT.mtx"], ["convert", src, "OUT.safetensors"],
                ["convert", src, "OUT.cua"], ["solve", src, "-o", "OUT.mtx"]):
        out = tmp_path / cmd[-1]
        out.write_text("old contents\n")
        p = subprocess.run([CLI, *cmd[:-1], str(out)], capture_output=True, text=True,
                           preexec_fn=limit, timeout=600)
        assert p.returncode == 3, (cmd, p.returncode, p.stderr)
        assert "File too large" in p.stderr, p.stderr
        assert out.read_text() == "old contents\n"
        assert sorted(os.listdir(tmp_path)) == [out.name], os.listdir(tmp_path)
        out.unlink()
