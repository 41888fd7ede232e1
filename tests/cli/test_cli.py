"""Tests of the installed `sla` command-line tool on the shared matrices.

CTest installs the project into <build>/test-install first (fixture sla_install) and sets
SLA_CLI to the installed binary and SLA_MATRIX_DIR to the shared matrices.
"""
import gzip
import json
import math
import os
import subprocess

import pytest
from cli_files import write_tridiag

CLI = os.environ.get("SLA_CLI", "sla")
MATRICES = os.environ.get("SLA_MATRIX_DIR", "../shared/matrices")

need_matrices = pytest.mark.skipif(not os.path.isdir(MATRICES), reason="shared matrices not found")


def mat(name):
    return os.path.join(MATRICES, name)


def run(*args, check_rc=None):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)
    if check_rc is not None:
        assert p.returncode == check_rc, f"rc {p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}"
    return p


def run_json(*args, check_rc=0):
    p = run(*args, "--json", check_rc=check_rc)
    return json.loads(p.stdout)


def test_help_and_usage_errors():
    p = run("--help", check_rc=0)
    assert "exit codes" in p.stdout
    for cmd in ["info", "solve", "eigsh", "logdet", "convert"]:
        p = run(cmd, "--help", check_rc=0)
        assert p.stdout.startswith("usage: sla " + cmd)
    run(check_rc=2)
    p = run("frobnicate", check_rc=2)
    assert "unknown command" in p.stderr
    p = run("--json", check_rc=2)                 # stdout is one JSON object under --json
    j = json.loads(p.stdout)
    assert j["exit_code"] == 2 and j["error"] == "sla: unknown command '--json'"
    p = run("solve", check_rc=2)
    assert "missing FILE" in p.stderr


@need_matrices
def test_info_spd():
    j = run_json("info", mat("bcsstk13.mtx"))
    assert (j["rows"], j["cols"]) == (2003, 2003)
    assert j["entries_stored"] == 42943
    assert j["nnz"] == 83883
    assert j["symmetry"] == "symmetric" and j["numerically_symmetric"]
    assert j["diagonal"]["positive"] == 2003
    assert math.isclose(j["norms"]["max"], 1.2e12, rel_tol=0.05)
    assert "cholesky" in j["auto"]


@need_matrices
def test_info_unsymmetric_pattern_and_rectangular():
    j = run_json("info", mat("west0479.mtx"))
    assert not j["numerically_symmetric"]
    assert j["diagonal"]["present"] == 8
    j = run_json("info", mat("bcspwr10.mtx"))
    assert j["field"] == "pattern" and j["nnz"] == 2 * 13571 - j["diagonal"]["present"]
    j = run_json("info", mat("illc1850.mtx"))
    assert (j["rows"], j["cols"]) == (1850, 712)
    assert j["auto"].startswith("lsqr") and "rectangular 1850 × 712" in j["auto"]


@need_matrices
@pytest.mark.parametrize("name,method", [
    ("bcsstk13.mtx", "auto"), ("1138_bus.mtx", "cholesky"), ("hangGlider_2.mtx", "auto"),
    ("west0479.mtx", "auto"), ("rajat19.mtx", "klu"), ("pores_1.mtx", "lu")])
def test_solve_direct(name, method):
    j = run_json("solve", mat(name), "--method", method, "--rhs", "random")
    assert j["converged"] and j["reason"] == "converged"
    assert j["residual"] < 1e-8
    for key in ["method", "iterations", "time_s", "peak_memory_bytes", "description"]:
        assert key in j


@need_matrices
def test_solve_iterative_and_monitor(tmp_path):
    out = tmp_path / "x.mtx"
    p = run("solve", mat("Laplace3D10.mtx"), "--method", "cg", "--precond", "jacobi",
            "--rtol", "1e-10", "--monitor", "--monitor-every", "5", "-o", str(out), "--json",
            check_rc=0)
    j = json.loads(p.stdout)
    assert j["method"] == "cg" and j["iterations"] > 5 and j["residual"] <= 1e-10 * 1.01
    lines = [l for l in p.stderr.splitlines() if l.startswith("iteration")]
    assert len(lines) >= j["iterations"] // 5 - 1
    # the solution file solves the system: A x = 1 within tolerance (checked with sla again)
    text = out.read_text().splitlines()
    assert text[0].startswith("%%MatrixMarket matrix array real general")
    assert len(text) == 3 + 1000


@need_matrices
def test_solve_not_converged_exit_code():
    j = run_json("solve", mat("bcsstk13.mtx"), "--method", "cg", "--precond", "none",
                 "--maxiter", "5", check_rc=1)
    assert not j["converged"] and j["reason"] == "max iterations" and j["iterations"] == 5


@need_matrices
@need_matrices
def test_solve_device_cuda():
    """--device cuda: on a GPU machine a CG solve on the CUDA backend; elsewhere (no device, or
    a build without libsla_cuda) an error naming the reason, never a crash or a CPU solve."""
    p = run("solve", mat("nos6.mtx"), "--device", "cuda", "--method", "cg", "--precond", "jacobi",
            "--json")
    if p.returncode == 0:
        out = json.loads(p.stdout)
        assert "CUDA" in out["description"] and out["residual"] <= 1e-9
    else:
        assert p.returncode in (2, 3), p.stderr
        assert "--device cuda" in p.stderr and "CUDA" in p.stderr
        assert json.loads(p.stdout)["exit_code"] == p.returncode
    run("solve", mat("nos6.mtx"), "--device", "tpu", check_rc=2)


def test_solve_least_squares():
    """A rectangular file: auto solves min ||b - A x|| by LSQR and reports ||A^T r||."""
    j = run_json("solve", mat("illc1850.mtx"), "--rhs", "random", "--rtol", "1e-12")
    assert j["method"] == "lsqr" and j["converged"] is True and j["iterations"] > 100
    # an inconsistent system: a residual remains, its normal-equation residual is ~0
    assert 0.1 < j["residual"] < 1 and j["normal_residual"] < 1e-8
    p = run("solve", mat("illc1850.mtx"), check_rc=0)
    assert "normal eq.:" in p.stdout and "lsqr" in p.stdout


@need_matrices
def test_solve_rejects():
    p = run("solve", mat("illc1850.mtx"), "--method", "lu", check_rc=2)
    assert "square" in p.stderr and "lsqr" in p.stderr
    p = run("solve", mat("west0479.mtx"), "--method", "cholesky", check_rc=2)
    assert "cholesky" in p.stderr.lower() or "not" in p.stderr
    p = run("solve", mat("west0479.mtx"), "--method", "magic", check_rc=2)
    assert "unknown method 'magic'" in p.stderr
    p = run("solve", mat("west0479.mtx"), "--rtol", "abc", check_rc=2)
    assert "not a number" in p.stderr
    p = run("solve", mat("young1c.mtx"), "-o", "/nonexistent/x.mtx", check_rc=3)
    assert "cannot create" in p.stderr        # complex -o is checked before the work too


@need_matrices
def test_solve_complex():
    """young1c (complex general, 841 × 841): complex128 LU, full GMRES, and the complex
    GMRES(50) + ILU(0) (the equivalent real formulation's GMRES(50) + Jacobi stalled at 0.18;
    see docs/complex.md)."""
    o = run_json("solve", mat("young1c.mtx"))
    assert o["method"] == "lu" and o["converged"] and o["residual"] < 1e-12
    o = run_json("solve", mat("young1c.mtx"), "--method", "gmres", "--precond", "none",
                 "--restart", "841", "--rtol", "1e-10", "--rhs", "random")
    assert o["converged"] and o["residual"] < 1e-9 and "complex128" in o["description"]
    o = run_json("solve", mat("young1c.mtx"), "--method", "gmres", "--precond", "ilu0",
                 "--rtol", "1e-10")
    assert o["converged"] and o["residual"] < 1e-9 and "ilu0" in o["description"]


@need_matrices
@pytest.mark.parametrize("name,line", [
    ("fmm_invalid_index_oob.mtx", None), ("fmm_invalid_truncated.mtx", None),
    ("bad_zero_based_index.mtx", None), ("bad_mangled9_sym_rect.mtx", None)])
def test_bad_files_exit_2(name, line):
    p = run("info", mat(os.path.join("headers", name)), check_rc=2)
    assert name in p.stderr and ":" in p.stderr


def test_missing_file():
    p = run("info", "/nonexistent/file.mtx", check_rc=2)
    assert "/nonexistent/file.mtx" in p.stderr


@need_matrices
def test_logdet():
    j = run_json("logdet", mat("hangGlider_2.mtx"))
    assert j["sign"] == -1.0          # inertia (+914, -733, 0): 733 negative eigenvalues
    j = run_json("logdet", mat("1138_bus.mtx"))
    assert j["sign"] == 1.0 and math.isfinite(j["logabsdet"])
    j2 = run_json("logdet", mat("1138_bus.mtx"), "--method", "lu")
    assert math.isclose(j["logabsdet"], j2["logabsdet"], rel_tol=1e-10)
    p = run("logdet", mat("1138_bus.mtx"), "--method", "cg", check_rc=2)
    assert "direct" in p.stderr


@need_matrices
def test_convert_round_trips(tmp_path):
    src = mat("west0479.mtx")
    ref = run_json("info", src)
    for ext in [".mtx.gz", ".safetensors", ".rua", ".mtx"]:
        out = tmp_path / ("w" + ext)
        run("convert", src, str(out), check_rc=0)
        j = run_json("info", str(out))
        assert (j["rows"], j["cols"], j["nnz"]) == (ref["rows"], ref["cols"], ref["nnz"])
        assert math.isclose(j["norms"]["fro"], ref["norms"]["fro"], rel_tol=1e-15)
    with gzip.open(tmp_path / "w.mtx.gz", "rt") as f:
        assert f.readline().startswith("%%MatrixMarket")
    # symmetric input stays symmetric; RB input converts to Matrix Market
    out = tmp_path / "b.mtx"
    run("convert", mat("1138_bus.mtx"), str(out), check_rc=0)
    assert "symmetric" in out.read_text().splitlines()[0]
    out = tmp_path / "g20.mtx"
    run("convert", mat("rb/g20.rua"), str(out), check_rc=0)
    assert run_json("info", str(out))["rows"] == 400
    p = run("convert", src, str(tmp_path / "x.xyz"), check_rc=2)
    assert "unknown output format" in p.stderr


@need_matrices
def test_eigsh_1138_bus():
    p = run("eigsh", mat("1138_bus.mtx"), "-k", "2", "--which", "SA", "--json")
    if p.returncode == 3 and "not available" in p.stderr:
        pytest.skip("eigsh not in this build yet")
    assert p.returncode == 0, p.stderr
    j = json.loads(p.stdout)
    ev = j["eigenvalues"]
    assert math.isclose(ev[0], 3.517e-3, rel_tol=1e-3)
    assert math.isclose(ev[1], 9.862e-2, rel_tol=1e-3)


# ---- review fixes: refusals, messages, option ranges, JSON contract --------------------------

COMMON_KEYS = {"method", "reason", "converged", "iterations", "residual", "time_s"}


@need_matrices
def test_convert_refuses_same_file(tmp_path):
    """`sla convert IN IN` used to overwrite IN; other spellings and links are the same file."""
    src = tmp_path / "a.mtx"
    src.write_bytes(open(mat("nos6.mtx"), "rb").read())
    before = src.read_bytes()
    (tmp_path / "sub").mkdir()
    os.symlink(src, tmp_path / "link.mtx")
    os.link(src, tmp_path / "hard.mtx")
    for out in [str(src), str(tmp_path / "sub" / ".." / "a.mtx"), str(tmp_path / "link.mtx"),
                str(tmp_path / "hard.mtx")]:
        p = run("convert", str(src), out, check_rc=2)
        assert p.stderr.startswith("sla convert: ") and "is the input file" in p.stderr
        assert src.read_bytes() == before
    p = run("convert", str(src), str(src), "--json", check_rc=2)
    assert json.loads(p.stdout)["status"] == "usage"


@need_matrices
def test_messages_name_command_and_file(tmp_path):
    cplx = mat("young1c.mtx")         # complex general: eigsh refuses it, naming the file
    p = run("eigsh", cplx, "-k", "1", check_rc=2)
    assert p.stderr.startswith(f"sla eigsh: {cplx}: "), p.stderr
    assert "complex and not Hermitian" in p.stderr
    # -o to a folder that does not exist: fails before the solve, with the command's prefix
    # (a failed write, exit 3)
    p = run("solve", mat("nos6.mtx"), "-o", "/nonexistent/x.mtx", check_rc=3)
    assert p.stderr.startswith("sla solve: -o /nonexistent/x.mtx: cannot create")
    assert p.stdout == ""
    # convert errors name the path once
    out = "/nonexistent/y.mtx"
    p = run("convert", mat("nos6.mtx"), out, check_rc=3)
    assert p.stderr.startswith("sla convert: ") and p.stderr.count(out) == 1, p.stderr
    p = run("convert", "/nonexistent/in.mtx", str(tmp_path / "y.mtx"), check_rc=2)
    assert p.stderr.count("/nonexistent/in.mtx") == 1, p.stderr


@need_matrices
@pytest.mark.parametrize("args,phrase", [
    (["solve", "--maxiter", "-5"], "--maxiter: -5 is below the minimum 1"),
    (["solve", "--maxiter", "0"], "--maxiter: 0 is below the minimum 1"),
    (["solve", "--maxiter", "99999999999999999999"], "--maxiter: 99999999999999999999 is out of range"),
    (["solve", "--monitor-every", "0"], "--monitor-every: 0 is below"),
    (["solve", "--monitor-every", "-3"], "--monitor-every: -3 is below"),
    (["solve", "--restart", "0"], "--restart: 0 is below"),
    (["solve", "--rtol", "-1e-8"], "--rtol: -1e-8 is below"),
    (["solve", "--rtol", "nan"], "--rtol: 'nan' is not finite"),
    (["solve", "--atol", "inf"], "--atol: 'inf' is not finite"),
    (["eigsh", "-k", "0"], "-k: 0 is below the minimum 1"),
    (["eigsh", "-k", "676"], "-k 676: the 675 × 675 matrix has only 675 eigenvalues"),
    (["eigsh", "-k", "2", "--tol", "-1"], "--tol: -1 is below"),
    (["eigsh", "-k", "2", "--maxiter", "-2"], "--maxiter: -2 is below"),
    (["eigsh", "-k", "2", "--sigma", "nan"], "--sigma: 'nan' is not finite"),
])
def test_option_values_checked(args, phrase):
    """Values used to be clamped silently (--maxiter -5 ran with the default)."""
    p = run(args[0], mat("nos6.mtx"), *args[1:], check_rc=2)
    assert phrase in p.stderr, p.stderr
    p = run(args[0], mat("nos6.mtx"), *args[1:], "--json", check_rc=2)
    j = json.loads(p.stdout)
    assert j["status"] == "usage" and phrase in j["error"] and j["exit_code"] == 2


@need_matrices
def test_precond_with_direct_method_warns():
    p = run("solve", mat("nos6.mtx"), "--method", "cholesky", "--precond", "amg", "--json",
            check_rc=0)
    assert "warning: --precond amg is ignored: method cholesky is direct" in p.stderr
    assert json.loads(p.stdout)["method"] == "cholesky"
    p = run("solve", mat("nos6.mtx"), "--method", "cg", "--precond", "jacobi", "--rtol", "1e-8",
            check_rc=0)
    assert "warning" not in p.stderr


@need_matrices
def test_json_common_keys():
    j = run_json("solve", mat("nos6.mtx"))
    assert COMMON_KEYS <= set(j)
    j = run_json("eigsh", mat("nos6.mtx"), "-k", "2", "--which", "SA")
    assert COMMON_KEYS <= set(j) and len(j["eigenvalues"]) == 2
    j = run_json("logdet", mat("nos6.mtx"))
    assert COMMON_KEYS <= set(j) and {"sign", "logabsdet", "singular"} <= set(j)
    assert j["reason"] == "converged" and j["converged"] is True and j["iterations"] == 0
    assert j["residual"] is None and j["singular"] is False and j["sign"] == 1
    j = run_json("info", mat("nos6.mtx"))
    assert COMMON_KEYS <= set(j)
    assert j["method"] == j["auto_method"] == "cg" and "Stieltjes" in j["auto"] and j["converged"] is None
    j = run_json("info", mat("illc1850.mtx"))
    assert j["method"] == j["auto_method"] == "lsqr"


@need_matrices
def test_logdet_singular():
    """bcspwr10 is singular (ldlt: null pivots): sign 0, no '+0', no '-inf' string in JSON."""
    p = run("logdet", mat("bcspwr10.mtx"), check_rc=0)
    lines = dict(l.split(":", 1) for l in p.stdout.splitlines() if ":" in l)
    assert lines["sign"].strip() == "0"
    assert lines["log|det|"].strip() == "-inf"
    j = run_json("logdet", mat("bcspwr10.mtx"))
    assert j["sign"] == 0 and j["logabsdet"] is None and j["singular"] is True
    # the whole trace fits (it was cut at "determinant reque" when descriptions had 512 bytes)
    assert j["description"].endswith("; determinant requested: direct")
    j = run_json("logdet", mat("hangGlider_2.mtx"))
    assert j["sign"] == -1 and j["singular"] is False
    p = run("logdet", mat("hangGlider_2.mtx"), check_rc=0)
    assert "sign:        -1" in p.stdout


@need_matrices
def test_json_errors_on_stdout(tmp_path):
    """With --json an error is still one JSON object on stdout; the exit code is unchanged."""
    cases = [(["solve", mat("bcspwr10.mtx")], 3, "singular matrix"),
             (["solve", mat("illc1850.mtx"), "--method", "cg"], 2, "shape mismatch"),
             (["eigsh", mat("west0479.mtx"), "-k", "2"], 2, None),
             (["logdet", mat("illc1850.mtx")], 2, "shape"),
             (["logdet", mat("illc1850.mtx"), "--method", "lu"], 2, "shape"),
             (["eigsh", mat("young1c.mtx"), "-k", "2"], 2, "invalid argument"),
             (["info", "/nonexistent/file.mtx"], 2, None),
             (["solve", mat("nos6.mtx"), "--method", "magic"], 2, None)]
    for args, rc, status in cases:
        p = run(*args, "--json", check_rc=rc)
        j = json.loads(p.stdout)
        assert set(j) == {"error", "status", "command", "exit_code"}, j
        assert j["command"] == args[0] and j["exit_code"] == rc
        assert j["error"].startswith(f"sla {args[0]}: ")
        assert j["error"] in p.stderr
        if status:
            assert j["status"] == status


@need_matrices
def test_convert_rb_pattern_and_empty(tmp_path):
    """A pattern matrix to RB failed with 'invalid arguments (RBio -8)'."""
    rb = tmp_path / "bcspwr10.rb"
    run("convert", mat("bcspwr10.mtx"), str(rb), check_rc=0)
    back = tmp_path / "back.mtx"
    run("convert", str(rb), str(back), check_rc=0)
    j, ref = run_json("info", str(back)), run_json("info", mat("bcspwr10.mtx"))
    assert j["field"] == "pattern" and j["symmetry"] == "symmetric"
    assert (j["rows"], j["nnz"]) == (ref["rows"], ref["nnz"]) == (5300, ref["nnz"])
    for name in ["empty_3x4.mtx", "a04_0x4.mtx"]:
        p = run("convert", mat("headers/" + name), str(tmp_path / "e.rb"), check_rc=2)
        assert "without stored entries cannot be written in Rutherford" in p.stderr
        assert not (tmp_path / "e.rb").exists()


@need_matrices
def test_long_reasons_are_whole_or_marked():
    """Preconditioner failures quoted in a description keep whole characters: hangGlider_2
    with CG (IC(0) and Jacobi both fail) once printed "l_ik² = -5.3 ≤ ; jacobi failed"."""
    j = run_json("solve", mat("hangGlider_2.mtx"), "--method", "cg", "--maxiter", "10",
                 check_rc=None)
    d = j["description"]
    assert "= -5.3 ≤ 0; jacobi failed: Jacobi: zero or missing diagonal entry in row 914" in d


def test_eigsh_mass_matrix(tmp_path):
    """--mass: 1D P1 finite elements, stiffness tridiag(−1, 2, −1)/h and consistent mass
    h/6·tridiag(1, 4, 1): λ_j = (6/h²)(1 − cos θ_j)/(2 + cos θ_j), θ_j = jπ/(n + 1)."""
    n = 200
    h = 1.0 / (n + 1)
    K, M = tmp_path / "K.mtx", tmp_path / "M.mtx"
    write_tridiag(K, n, 2 / h, -1 / h)
    write_tridiag(M, n, 4 * h / 6, h / 6)
    j = run_json("eigsh", str(K), "-k", "3", "--which", "SA", "--mass", str(M))
    for i, lam in enumerate(j["eigenvalues"], start=1):
        t = i * math.pi / (n + 1)
        assert math.isclose(lam, 6 / h**2 * (1 - math.cos(t)) / (2 + math.cos(t)), rel_tol=1e-9)
    assert j["converged"] is True
    # a mass matrix of another size, and one that is not positive definite: exit 2 / 3, named
    write_tridiag(tmp_path / "M5.mtx", 5, 4.0, 1.0)
    p = run("eigsh", str(K), "-k", "2", "--mass", str(tmp_path / "M5.mtx"), check_rc=2)
    assert "M5.mtx" in p.stderr and "5 × 5" in p.stderr
    write_tridiag(tmp_path / "Mneg.mtx", n, -1.0, 0.0)
    p = run("eigsh", str(K), "-k", "2", "--mass", str(tmp_path / "Mneg.mtx"), check_rc=3)
    assert "positive definite" in p.stderr or "not SPD" in p.stderr or "SPD" in p.stderr


# ---- files: outputs never destroy inputs or what was there; one exit rule for failed writes ----

def _copy_input(tmp_path, name="a.mtx"):
    src = tmp_path / name
    src.write_bytes(open(mat("nos6.mtx"), "rb").read())
    return src


@need_matrices
def test_outputs_never_overwrite_inputs(tmp_path):
    """`sla solve A.mtx -o A.mtx` and `--rhs b.mtx -o b.mtx` overwrote the input; every command
    with an output compares it with its inputs by device and inode, as convert does."""
    src = _copy_input(tmp_path)
    before = src.read_bytes()
    os.symlink(src, tmp_path / "link.mtx")
    os.link(src, tmp_path / "hard.mtx")
    (tmp_path / "sub").mkdir()
    rhs = tmp_path / "b.mtx"
    rhs.write_text("%%MatrixMarket matrix array real general\n675 1\n" + "1\n" * 675)
    rhs_before = rhs.read_bytes()
    spellings = [str(src), str(tmp_path / "sub" / ".." / "a.mtx"), str(tmp_path / "link.mtx"),
                 str(tmp_path / "hard.mtx")]
    for out in spellings:
        p = run("solve", str(src), "-o", out, check_rc=2)
        assert p.stderr.startswith("sla solve: -o ") and "is the input file" in p.stderr
        p = run("convert", str(src), out, check_rc=2)
        assert "is the input file" in p.stderr
    p = run("solve", str(src), "--rhs", str(rhs), "-o", str(rhs), check_rc=2)
    assert "is the input file" in p.stderr and str(rhs) in p.stderr
    p = run("solve", str(src), "--rhs", str(rhs), "-o", str(rhs), "--json", check_rc=2)
    assert json.loads(p.stdout)["status"] == "usage"
    assert src.read_bytes() == before and rhs.read_bytes() == rhs_before
    # a different output is fine, and reading it back as --rhs works
    run("solve", str(src), "--rhs", str(rhs), "-o", str(tmp_path / "x.mtx"), check_rc=0)
    assert (tmp_path / "x.mtx").read_text().startswith("%%MatrixMarket matrix array real general")


def _limit_file_size(nbytes):
    import resource
    import signal

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


@need_matrices
def test_failed_writes_exit_3_and_keep_the_old_file(tmp_path):
    """A failed write exited 2 from convert and 3 from solve -o, and removed the target (a device
    node included, when run as root). Now: exit 3 everywhere, the old file or device stays."""
    big = mat("bcsstk13.mtx")
    for ext in [".mtx", ".mtx.gz", ".rua", ".safetensors"]:
        out = tmp_path / ("old" + ext)
        out.write_text("old contents\n")
        p = subprocess.run([CLI, "convert", big, str(out)], capture_output=True, text=True,
                           preexec_fn=_limit_file_size(4096), timeout=600)
        assert p.returncode == 3, p.stderr
        assert p.stderr.startswith("sla convert: ") and str(out) in p.stderr
        assert out.read_text() == "old contents\n"
    out = tmp_path / "x.mtx"
    out.write_text("old contents\n")
    p = subprocess.run([CLI, "solve", big, "-o", str(out), "--json"], capture_output=True,
                       text=True, preexec_fn=_limit_file_size(4096), timeout=600)
    assert p.returncode == 3, p.stderr
    j = json.loads(p.stdout)
    assert j["exit_code"] == 3 and j["status"] == "io" and "File too large" in j["error"]
    assert out.read_text() == "old contents\n"
    assert sorted(os.listdir(tmp_path)) == sorted(["old" + e for e in
                                                   [".mtx", ".mtx.gz", ".rua", ".safetensors"]] + ["x.mtx"])
    # a device behind a link: written in place, exit 3, the device and the link stay
    for ext in [".mtx", ".rua", ".safetensors"]:
        link = tmp_path / ("full" + ext)
        os.symlink("/dev/full", link)
        p = run("convert", mat("nos6.mtx"), str(link), check_rc=3)
        assert "No space left on device" in p.stderr
        assert os.path.islink(link) and os.path.exists("/dev/full")
    p = run("solve", mat("nos6.mtx"), "-o", "/dev/full", check_rc=3)
    assert p.stderr.startswith("sla solve: ") and "/dev/full" in p.stderr
    assert os.path.exists("/dev/full")
    run("solve", mat("nos6.mtx"), "-o", "/dev/null", check_rc=0)
    # an output that is a directory: exit 3 before any work
    p = run("solve", mat("nos6.mtx"), "-o", str(tmp_path), check_rc=3)
    assert "Is a directory" in p.stderr


def test_rhs_file_nonfinite_names_the_file(tmp_path):
    """A NaN in --rhs FILE was reported against the matrix file."""
    K = tmp_path / "K.mtx"
    write_tridiag(K, 5, 2.0, -1.0)
    b = tmp_path / "b.mtx"
    b.write_text("%%MatrixMarket matrix array real general\n5 1\n1\n1\nnan\n1\n1\n")
    p = run("solve", str(K), "--rhs", str(b), check_rc=2)
    assert p.stderr.startswith(f"sla solve: --rhs {b}: b[2] (row 3) is nan"), p.stderr
    assert str(K) not in p.stderr
    b.write_text("%%MatrixMarket matrix coordinate real general\n5 1 2\n2 1 1e308\n2 1 1e308\n")
    p = run("solve", str(K), "--rhs", str(b), "--json", check_rc=2)
    j = json.loads(p.stdout)
    assert j["status"] == "non-finite value" and "b[1] (row 2) is inf" in j["error"]


def test_info_nonfinite_diagonal(tmp_path):
    """A NaN diagonal was counted as zero, and a NaN or inf diagonal made a symmetric matrix
    'not symmetric' (inf - inf is NaN, and a diagonal entry is its own mirror)."""
    f = tmp_path / "n.mtx"
    f.write_text("%%MatrixMarket matrix coordinate real symmetric\n4 4 6\n"
                 "1 1 nan\n2 2 inf\n3 3 -inf\n4 4 0\n2 1 1\n4 3 -2\n")
    j = run_json("info", str(f))
    d = j["diagonal"]
    assert (d["present"], d["positive"], d["negative"], d["zero"], d["nan"]) == (4, 1, 1, 1, 1)
    assert j["numerically_symmetric"] is True and j["structurally_symmetric"] is True
    p = run("info", str(f), check_rc=0)
    assert "1 positive, 1 negative, 1 zero, 1 NaN" in p.stdout
    # an off-diagonal NaN against a number is still unsymmetric
    f.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 nan\n2 1 1\n")
    assert run_json("info", str(f))["numerically_symmetric"] is False


def test_readers_on_directories_and_fortran_fields(tmp_path):
    """A directory named x.safetensors was an out-of-memory error (an 8-EiB buffer), x.rb a parse
    error: both are I/O errors naming the file. RB values are read by the format's widths."""
    for name in ["x.safetensors", "x.rb", "x.mtx"]:
        d = tmp_path / name
        d.mkdir()
        p = run("info", str(d), check_rc=2)
        assert "Is a directory" in p.stderr and str(d) in p.stderr
    rb = tmp_path / "d.rua"
    rb.write_text("D exponents, touching fields, a token past the record" + " " * 19 + "KEY     \n"
                  "             3             1             1             1\n"
                  "RUA                        2             2             3             0\n"
                  "(3I5)           (3I5)           (3D16.8)            \n"
                  "    1    3    4\n    1    2    2\n"
                  "  1.00000000D+05 -2.00000000D+00-3.00000000D-01   9.9\n")
    out = tmp_path / "d.mtx"
    run("convert", str(rb), str(out), check_rc=0)
    assert out.read_text().splitlines()[3:] == ["1 1 100000", "2 1 -2", "2 2 -0.29999999999999999"]
