"""Matrix files the CLI tests write (shared by test_cli.py and test_cli_mpi.py)."""


def write_tridiag(path, n, diag, off):
    """A symmetric tridiagonal n × n Matrix Market file: diag on the diagonal, off beside it."""
    with open(path, "w") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n")
        f.write(f"{n} {n} {2 * n - 1}\n")
        for i in range(1, n + 1):
            f.write(f"{i} {i} {diag!r}\n")
            if i < n:
                f.write(f"{i + 1} {i} {off!r}\n")
