"""Tests of the installed `sla-mpi` (the sla tool under MPI) against the serial `sla`.

CTest (test cli.mpi) sets SLA_MPI_CLI to the installed sla-mpi, SLA_CLI to the serial sla and
SLA_MPIEXEC to mpirun; without them every test here is skipped. Each mpirun gets its own Open
MPI session folder (two mpirun starting at once race on creating the default one), and every
rank's exit code is recorded by a wrapper, so that "the same exit code on every rank" is
checked, not only mpirun's.
"""
import json
import math
import os
import shutil
import subprocess
import tempfile

import pytest
from cli_files import write_tridiag

CLI = os.environ.get("SLA_CLI", "sla")
MPI_CLI = os.environ.get("SLA_MPI_CLI")
MPIEXEC = os.environ.get("SLA_MPIEXEC", "mpirun")
MATRICES = os.environ.get("SLA_MATRIX_DIR", "../shared/matrices")

pytestmark = pytest.mark.skipif(not MPI_CLI or not os.path.exists(MPI_CLI),
                                reason="SLA_MPI_CLI (the sla-mpi executable) not given")
need_matrices = pytest.mark.skipif(not os.path.isdir(MATRICES), reason="shared matrices not found")

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMP_NUM_THREADS": "1", "OMPI_MCA_mpi_yield_when_idle": "1",
           "OMPI_MCA_hwloc_base_binding_policy": "none"}   # see tests/mpi/CMakeLists.txt
# each rank runs sla-mpi and leaves its exit code in RCDIR/rc.RANK, then exits 0 (mpirun kills
# the other ranks when one exits non-zero, perhaps before they wrote their code)
WRAPPER = '"$0" "$@"; echo $? > "$SLA_RCDIR/rc.$OMPI_COMM_WORLD_RANK"'


def mat(name):
    return os.path.join(MATRICES, name)


def serial(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def mpi(np, *args):
    """sla-mpi ARGS on np ranks; returns the CompletedProcess, rc = the exit code every rank
    gave (asserted to be the same on all of them)."""
    session = tempfile.mkdtemp(prefix="ompi", dir="/tmp")     # short: socket paths are limited
    try:
        env = dict(os.environ, **MPI_ENV, OMPI_MCA_orte_tmpdir_base=session, SLA_RCDIR=session)
        p = subprocess.run([MPIEXEC, "-q", "-np", str(np), "--oversubscribe", "sh", "-c", WRAPPER,
                            MPI_CLI, *args], capture_output=True, text=True, timeout=600, env=env)
        rcs = [int(open(os.path.join(session, f"rc.{r}")).read()) for r in range(np)]
    finally:
        shutil.rmtree(session, ignore_errors=True)
    assert len(set(rcs)) == 1, f"exit codes differ between ranks: {rcs}\n{p.stderr}"
    p.returncode = rcs[0]
    return p


def mpi_json(np, *args, rc=0):
    p = mpi(np, *args, "--json")
    assert p.returncode == rc, f"rc {p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}"
    return json.loads(p.stdout)


def serial_json(*args, rc=0):
    p = serial(*args, "--json")
    assert p.returncode == rc, f"rc {p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}"
    return json.loads(p.stdout)


def read_vector(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("%")]
    n = int(lines[0].split()[0])
    x = [float(l) for l in lines[1:]]
    assert len(x) == n
    return x


def max_rel_diff(x, y):
    scale = max(abs(v) for v in y) or 1.0
    return max(abs(a - b) for a, b in zip(x, y)) / scale


def write_mtx(path, n, entries, symmetry="general"):
    """entries (i, j, value), 0-based, as a Matrix Market coordinate file."""
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real {symmetry}\n{n} {n} {len(entries)}\n")
        f.writelines(f"{i + 1} {j + 1} {v!r}\n" for i, j, v in entries)
    return str(path)


@pytest.fixture(scope="module")
def poisson(tmp_path_factory):
    """2D Poisson (5-point, Dirichlet) on a 24 × 24 grid as a symmetric Matrix Market file."""
    m = 24
    path = tmp_path_factory.mktemp("poisson") / "poisson24.mtx"
    entries = []
    for y in range(m):
        for x in range(m):
            i = y * m + x
            entries.append((i, i, 4.0))
            if x > 0:
                entries.append((i, i - 1, -1.0))
            if y > 0:
                entries.append((i, i - m, -1.0))
    return write_mtx(path, m * m, entries, "symmetric")


@pytest.fixture(scope="module")
def convdiff(tmp_path_factory):
    """2D convection-diffusion (upwind, nonsymmetric) on a 20 × 20 grid, general storage."""
    m = 20
    path = tmp_path_factory.mktemp("convdiff") / "convdiff20.mtx"
    entries = []
    for y in range(m):
        for x in range(m):
            i = y * m + x
            entries.append((i, i, 4.5))
            entries += [(i, i - 1, -1.5)] if x > 0 else []
            entries += [(i, i + 1, -1.0)] if x < m - 1 else []
            entries += [(i, i - m, -1.25)] if y > 0 else []
            entries += [(i, i + m, -0.75)] if y < m - 1 else []
    return write_mtx(path, m * m, entries)


@pytest.mark.parametrize("method,precond,np_,part", [
    ("gmres", "jacobi", 3, "metis"), ("bicgstab", "ilu0", 2, "contiguous"),
    ("auto", "auto", 3, "contiguous"), ("lu", "auto", 3, "ptscotch")])
def test_solve_nonsymmetric_equals_serial(tmp_path, convdiff, method, precond, np_, part):
    xs, xm = tmp_path / "xs.mtx", tmp_path / "xm.mtx"
    opts = ["--rtol", "1e-13", "--rhs", "random"]
    # serial counterparts: auto under MPI is gmres + block-Jacobi ILU(0) (at 1 rank: ILU(0))
    sm, sp = ("gmres", "ilu0") if method == "auto" else (method, precond)
    js = serial_json("solve", convdiff, "--method", sm, "--precond", sp, *opts, "-o", str(xs))
    jm = mpi_json(np_, "solve", convdiff, "--method", method, "--precond", precond, *opts,
                  "-o", str(xm), "--partition", part)
    assert jm["converged"] and jm["method"] == sm
    assert abs(jm["residual"] - js["residual"]) <= 1e-10
    assert max_rel_diff(read_vector(xm), read_vector(xs)) <= 1e-10


def write_neumann(path, m):
    """Graph Laplacian of the m × m grid: singular (constant null vector)."""
    entries = []
    for y in range(m):
        for x in range(m):
            i = y * m + x
            nb = [(x + dx, y + dy) for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1))
                  if 0 <= x + dx < m and 0 <= y + dy < m]
            entries += [(i, b * m + a, -1.0) for a, b in nb] + [(i, i, float(len(nb)))]
    write_mtx(path, m * m, entries)


def test_help_and_serial_tool_free_of_mpi():
    p = mpi(1, "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: mpirun -np N sla-mpi")
    assert "eigsh FILE" in p.stdout and "convert is serial only" in p.stdout
    for cmd in ["solve", "logdet", "info", "eigsh"]:
        p = mpi(2, cmd, "--help")
        assert p.returncode == 0 and p.stdout.count("usage: mpirun -np N sla-mpi " + cmd) == 1
    # the serial tool does not link MPI (it is unchanged without mpirun)
    sla = shutil.which(CLI) or CLI
    ldd = subprocess.run(["ldd", sla], capture_output=True, text=True).stdout
    assert "libmpi" not in ldd and "libsla_mpi" not in ldd
    assert "libsla_mpi" in subprocess.run(["ldd", MPI_CLI], capture_output=True, text=True).stdout


@pytest.mark.parametrize("np_,part", [(1, "contiguous"), (2, "metis"), (3, "ptscotch"),
                                      (3, "contiguous")])
def test_solve_poisson_equals_serial(tmp_path, poisson, np_, part):
    """CG + Jacobi: residual and -o solution equal the serial tool's to 1e-10."""
    xs, xm = tmp_path / "xs.mtx", tmp_path / "xm.mtx"
    opts = ["--method", "cg", "--precond", "jacobi", "--rtol", "1e-13", "--rhs", "random"]
    js = serial_json("solve", poisson, *opts, "-o", str(xs))
    jm = mpi_json(np_, "solve", poisson, *opts, "-o", str(xm), "--partition", part)
    assert jm["converged"] and jm["method"] == "cg" and jm["precond"] == "jacobi"
    assert jm["ranks"] == np_ and jm["partition"]["name"] == part
    assert abs(jm["residual"] - js["residual"]) <= 1e-10 and jm["residual"] <= 1e-13 * 1.01
    assert abs(jm["iterations"] - js["iterations"]) <= 2
    assert max_rel_diff(read_vector(xm), read_vector(xs)) <= 1e-10


@need_matrices
@pytest.mark.parametrize("name,method,np_,part", [
    ("Laplace3D10.mtx", "cg", 2, "metis"), ("1138_bus.mtx", "lu", 3, "contiguous"),
    ("pores_1.mtx", "lu", 2, "metis"), ("Laplace3D10.mtx", "minres", 3, "contiguous"),
    ("Laplace3D10.mtx", "lu", 2, "ptscotch")])
def test_solve_real_matrix_equals_serial(tmp_path, name, method, np_, part):
    xs, xm = tmp_path / "xs.mtx", tmp_path / "xm.mtx"
    opts = ["--method", method, "--rtol", "1e-13"]
    serial_method = "lu" if method == "lu" else method
    js = serial_json("solve", mat(name), "--method", serial_method, "--rtol", "1e-13",
                     *(["--precond", "jacobi"] if method != "lu" else []), "-o", str(xs))
    jm = mpi_json(np_, "solve", mat(name), *opts, "-o", str(xm), "--partition", part,
                  *(["--precond", "jacobi"] if method != "lu" else []))
    assert jm["converged"] and js["converged"] and jm["method"] == method
    assert abs(jm["residual"] - js["residual"]) <= 1e-10
    assert max_rel_diff(read_vector(xm), read_vector(xs)) <= 1e-10


def test_text_output_printed_once(poisson):
    p = mpi(3, "solve", poisson, "--method", "lu")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("method:") == 1 and p.stdout.count("residual:") == 1
    assert "converged" in p.stdout and "distributed: 3 ranks, partition contiguous" in p.stdout
    assert p.stderr == ""


@need_matrices
@pytest.mark.parametrize("np_", [1, 2, 3])
def test_logdet_equals_serial(poisson, np_):
    for path in [poisson, mat("1138_bus.mtx"), mat("pores_1.mtx")]:
        js = serial_json("logdet", path)
        jm = mpi_json(np_, "logdet", path, "--partition", "metis" if np_ == 2 else "contiguous")
        assert jm["method"] == "lu" and jm["sign"] == js["sign"] and not jm["singular"]
        assert abs(jm["logabsdet"] - js["logabsdet"]) <= 1e-10 * abs(js["logabsdet"])


@need_matrices
def test_info_equals_serial():
    for name in ["bcsstk13.mtx", "west0479.mtx"]:
        js = serial_json("info", mat(name))
        jm = mpi_json(2, "info", mat(name), "--partition", "metis")
        for key in ["rows", "cols", "nnz", "entries_stored", "symmetry", "numerically_symmetric",
                    "diagonal", "norms", "row_nnz", "lower_bandwidth", "upper_bandwidth"]:
            assert jm[key] == js[key], key
        assert jm["ranks"] == 2 and jm["partition"]["edge_cut"] > 0
        assert jm["partition"]["nnz_imbalance"] >= 1
    assert jm["method"] == "gmres"                   # west0479: the distributed auto rules
    p = mpi(3, "info", mat("Laplace3D10.mtx"))
    assert p.stdout.count("auto:        cg") == 1 and "distributed: 3 ranks" in p.stdout


@need_matrices
def test_least_squares_rectangular():
    js = serial_json("solve", mat("illc1850.mtx"), "--rhs", "random", "--rtol", "1e-12")
    p = mpi(2, "solve", mat("illc1850.mtx"), "--rhs", "random", "--rtol", "1e-12",
            "--partition", "metis", "--json")
    assert p.returncode == 0, p.stderr
    jm = json.loads(p.stdout)
    assert jm["method"] == "lsqr" and jm["converged"] and jm["normal_residual"] < 1e-8
    assert abs(jm["residual"] - js["residual"]) <= 1e-10
    assert "--partition metis is ignored" in p.stderr and p.stderr.count("warning") == 1


def bad_cases(tmp_path, poisson):
    neumann = str(tmp_path / "neumann.mtx")
    write_neumann(neumann, 12)
    short = tmp_path / "short.mtx"
    short.write_text("%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n")
    garbage = tmp_path / "garbage.mtx"
    garbage.write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.0\n")
    nan = tmp_path / "nan.mtx"          # the NaN in the last row: owned by the last rank
    nan.write_text("%%MatrixMarket matrix coordinate real general\n4 4 4\n"
                   "1 1 1\n2 2 1\n3 3 1\n4 4 nan\n")
    return [
        (["solve", str(tmp_path / "missing.mtx")], 2, "cannot open"),
        (["solve", str(nan)], 2, "(row 3, col 3) is not finite"),
        (["logdet", str(nan)], 2, "(row 3, col 3) is not finite"),
        (["solve", str(garbage)], 2, None),
        (["solve", poisson, "--method", "nonsense"], 2, "--method"),
        (["solve", poisson, "--rtol", "-1"], 2, "below the minimum"),
        (["solve", poisson, "--rhs", str(short)], 2, "--rhs"),
        (["solve", poisson, "-o", poisson], 2, "would destroy the input"),
        (["solve", poisson, "-o", str(tmp_path / "no" / "such" / "x.mtx")], 3, "cannot create"),
        (["solve", neumann, "--method", "lu"], 3, "singular"),
        (["solve", poisson, "--method", "cg", "--precond", "none", "--maxiter", "3"], 1, None),
        (["logdet", str(tmp_path / "missing.mtx")], 2, "cannot open"),
        (["logdet", poisson, "--method", "cg"], 2, "iterative"),
        (["info", str(tmp_path / "missing.mtx")], 2, "cannot open"),
    ]


@pytest.mark.parametrize("np_", [1, 2, 3])
def test_bad_inputs_give_serial_exit_codes(tmp_path, poisson, np_):
    """The serial tool's exit code, the same on every rank, and the message printed once."""
    for args, want, text in bad_cases(tmp_path, poisson):
        s = serial(*args)
        assert s.returncode == want, (args, s.returncode, s.stderr)
        p = mpi(np_, *args)
        assert p.returncode == want, (args, p.returncode, p.stderr)
        if want != 1:
            lines = [l for l in p.stderr.splitlines() if l.startswith("sla-mpi ")]
            assert len(lines) == 1, (args, p.stderr)
            if text:
                assert text in lines[0], (args, lines)
            assert "converged" not in p.stdout
        j = json.loads(mpi(np_, *args, "--json").stdout)    # one JSON object on stdout
        if want != 1:
            assert j["exit_code"] == want


def test_mpirun_exit_code(poisson):
    """Without the wrapper: mpirun itself exits with the code all ranks gave."""
    session = tempfile.mkdtemp(prefix="ompi", dir="/tmp")
    try:
        env = dict(os.environ, **MPI_ENV, OMPI_MCA_orte_tmpdir_base=session)
        for args, want in [(["solve", poisson, "--method", "frob"], 2),
                           (["solve", poisson, "--maxiter", "2", "--method", "cg"], 1),
                           (["logdet", poisson], 0)]:
            p = subprocess.run([MPIEXEC, "-q", "-np", "2", "--oversubscribe", MPI_CLI, *args],
                               capture_output=True, text=True, timeout=600, env=env)
            assert p.returncode == want, (args, p.returncode, p.stderr)
    finally:
        shutil.rmtree(session, ignore_errors=True)


def test_mpi_only_refusals(poisson):
    p = mpi(2, "solve", poisson, "--method", "cholesky")
    assert p.returncode == 2 and "not available under MPI" in p.stderr
    p = mpi(2, "solve", poisson, "--partition", "random")
    assert p.returncode == 2 and p.stderr.count("--partition") == 1
    p = mpi(2, "convert", poisson, "x.mtx")
    assert p.returncode == 2 and "serial 'sla convert'" in p.stderr
    p = mpi(2, "eigsh", poisson, "-k", "2", "--which", "LM")
    assert p.returncode == 2 and "serial 'sla eigsh'" in p.stderr and p.stderr.count("--which") == 1
    p = mpi(2, "eigsh", poisson, "-k", "2", "--method", "lanczos")
    assert p.returncode == 2 and "serial 'sla eigsh'" in p.stderr
    p = mpi(2, "eigsh", poisson, "-k", "2", "--sigma", "inf")
    assert p.returncode == 2 and "--sigma" in p.stderr
    p = mpi(2, "solve", poisson, "--monitor")
    assert p.returncode == 2


@need_matrices
@pytest.mark.parametrize("name,k,which,np_,part", [
    ("Laplace3D10.mtx", 4, "SA", 1, "contiguous"), ("Laplace3D10.mtx", 4, "SA", 2, "metis"),
    ("Laplace3D10.mtx", 4, "SA", 3, "contiguous"), ("Laplace3D10.mtx", 3, "LA", 3, "ptscotch"),
    ("494_bus.mtx", 3, "LA", 2, "contiguous")])
def test_eigsh_equals_serial(name, k, which, np_, part):
    """sla-mpi eigsh (sla_dist_eigsh) against 'sla eigsh --method lobpcg' on a shared SPD
    matrix: the same eigenvalues to 1e-10 relative, converged, residuals below the tolerance."""
    js = serial_json("eigsh", mat(name), "-k", str(k), "--which", which, "--method", "lobpcg")
    jm = mpi_json(np_, "eigsh", mat(name), "--k", str(k), "--which", which, "--partition", part)
    assert jm["converged"] and js["converged"] and jm["method"] == "lobpcg"
    assert jm["which"] == which and jm["ranks"] == np_ and jm["partition"]["name"] == part
    assert len(jm["eigenvalues"]) == k and jm["residual"] <= 1e-10
    scale = max(abs(v) for v in js["eigenvalues"])
    assert max(abs(a - b) for a, b in zip(jm["eigenvalues"], js["eigenvalues"])) <= 1e-10 * scale
    assert jm["eigenvalues"] == sorted(jm["eigenvalues"])


@pytest.mark.parametrize("np_,part,which", [(1, "contiguous", "SA"), (3, "metis", "SA"),
                                            (2, "contiguous", "LA")])
def test_eigsh_mass_closed_form(tmp_path, np_, part, which):
    """--mass: 1D P1 finite elements, stiffness tridiag(−1, 2, −1)/h and consistent mass
    h/6·tridiag(1, 4, 1): λ_j = (6/h²)(1 − cos θ_j)/(2 + cos θ_j), θ_j = jπ/(n + 1), the same
    eigenvalues as the serial tool's; a mass matrix of another size (exit 2, named) and one that
    is not positive definite (exit 3), the same code on every rank."""
    n = 60
    h = 1.0 / (n + 1)
    K, M = tmp_path / "K.mtx", tmp_path / "M.mtx"
    write_tridiag(K, n, 2 / h, -1 / h)
    write_tridiag(M, n, 4 * h / 6, h / 6)
    jm = mpi_json(np_, "eigsh", str(K), "-k", "3", "--which", which, "--mass", str(M),
                  "--partition", part)
    js = serial_json("eigsh", str(K), "-k", "3", "--which", which, "--mass", str(M),
                     "--method", "lobpcg")
    j = range(1, 4) if which == "SA" else range(n, n - 3, -1)
    exact = sorted(6 / h**2 * (1 - math.cos(t)) / (2 + math.cos(t))
                   for t in (i * math.pi / (n + 1) for i in j))
    assert jm["converged"] and jm["residual"] <= 1e-10 and jm["ranks"] == np_
    for lam, ref, ser in zip(jm["eigenvalues"], exact, js["eigenvalues"]):
        assert math.isclose(lam, ref, rel_tol=1e-9) and math.isclose(lam, ser, rel_tol=1e-10)
    write_tridiag(tmp_path / "M5.mtx", 5, 4.0, 1.0)
    p = mpi(np_, "eigsh", str(K), "-k", "2", "--mass", str(tmp_path / "M5.mtx"))
    assert p.returncode == 2 and "M5.mtx is 5 × 5" in p.stderr and p.stderr.count("M5") == 1
    write_tridiag(tmp_path / "Mneg.mtx", n, -1.0, 0.0)
    p = mpi(np_, "eigsh", str(K), "-k", "2", "--mass", str(tmp_path / "Mneg.mtx"))
    assert p.returncode == 3 and "Mneg.mtx" in p.stderr, (p.returncode, p.stderr)


@need_matrices
@pytest.mark.parametrize("name,np_,part,sigma", [("Laplace3D10.mtx", 1, "contiguous", "4.1"),
                                                ("Laplace3D10.mtx", 3, "metis", "7.3"),
                                                ("494_bus.mtx", 2, "contiguous", "20")])
def test_eigsh_sigma_equals_serial(name, np_, part, sigma):
    """sla-mpi eigsh --sigma (shift-invert by the distributed LU) against 'sla eigsh --sigma
    --method dense' (serial Lanczos can miss a copy of Laplace3D10's triple eigenvalues): the
    eigenvalues nearest sigma (interior) to 1e-10 relative, converged."""
    js = serial_json("eigsh", mat(name), "-k", "3", "--sigma", sigma, "--method", "dense")
    p = mpi(np_, "eigsh", mat(name), "-k", "3", "--sigma", sigma, "--partition", part, "--json")
    if p.returncode == 2 and "SuperLU_DIST" in p.stderr:
        pytest.skip("no SuperLU_DIST")
    jm = json.loads(p.stdout)
    assert jm["converged"] and js["converged"] and jm["residual"] <= 1e-10
    scale = max(abs(v) for v in js["eigenvalues"])
    assert max(abs(a - b) for a, b in zip(jm["eigenvalues"], sorted(js["eigenvalues"]))) <= \
        1e-10 * scale


@need_matrices
def test_eigsh_text_once_and_exit_codes(tmp_path):
    path = mat("Laplace3D10.mtx")
    s = serial("eigsh", path, "-k", "2", "--which", "SA", "--method", "lobpcg")
    p = mpi(3, "eigsh", path, "-k", "2")          # SA is the distributed default
    assert p.returncode == 0 and s.returncode == 0, p.stderr
    assert p.stdout.count("method:") == 1 and p.stdout.count("lambda[1] = ") == 1
    assert "distributed: 3 ranks, partition contiguous" in p.stdout and p.stderr == ""
    def lam(out):
        return [float(l.split("=")[1]) for l in out.splitlines() if l.startswith("lambda[")]
    assert len(lam(p.stdout)) == 2 and max_rel_diff(lam(p.stdout), lam(s.stdout)) <= 1e-10
    # not converged within 2 iterations: exit 1 on every rank, the output still printed
    p = mpi(2, "eigsh", path, "-k", "2", "--maxiter", "2")
    assert p.returncode == 1 and p.stdout.count("converged: ") == 1 and "of 2," in p.stdout
    for args, text in [(["-k", "0"], "-k"), ([], "-k K"), (["-k", "1001"], "only 1000"),
                       (["-k", "2", "--precond", "ilu0"], "--precond")]:
        p = mpi(2, "eigsh", path, *args)
        assert p.returncode == 2, (args, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.startswith("sla-mpi ")]
        assert len(lines) == 1 and text in lines[0], (args, p.stderr)
    p = mpi(2, "eigsh", str(tmp_path / "missing.mtx"), "-k", "2")
    assert p.returncode == 2 and "cannot open" in p.stderr
    # k above LOBPCG's N/3: the library's refusal, agreed, exit 2
    p = mpi(2, "eigsh", path, "-k", "400")
    assert p.returncode == 2 and p.stderr.count("sla-mpi eigsh:") == 1
