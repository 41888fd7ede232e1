"""The inverse-coefficient example at reduced size (smoke test: it runs and learns)."""
import os
import sys


from conftest import needs_method

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "examples"))


@needs_method("cholesky")
def test_inverse_coefficient_small(tmp_path, capsys):
    import inverse_coefficient
    png = tmp_path / "ic.png"
    r = inverse_coefficient.main(["--size", "16", "--steps", "50", "--out", str(png),
                                  "--print-every", "25"])
    losses = r["losses"]
    assert len(losses) == 50
    assert losses[-1] < 0.05 * losses[0]                    # it learns
    assert r["u_error"] < 0.2 and r["kappa_error"] < 0.2
    assert png.exists() and png.stat().st_size > 10000
    out = capsys.readouterr().out
    assert "kappa relative L2 error" in out and "ms/step" in out


def test_nonlinear_inverse_small(tmp_path, capsys):
    import nonlinear_inverse
    png = tmp_path / "nli.png"
    r = nonlinear_inverse.main(["--size", "12", "--steps", "60", "--out", str(png),
                                "--print-every", "30"])
    losses = r["losses"]
    assert len(losses) == 60
    assert losses[-1] < 0.02 * losses[0]                    # it learns
    assert r["u_error"] < 0.01 and r["kappa_error"] < 0.2
    assert png.exists() and png.stat().st_size > 10000
    out = capsys.readouterr().out
    assert "kappa relative L2 error" in out and "ms/step" in out


def test_helmholtz_small(tmp_path, capsys):
    """The complex Helmholtz example: the complex LU solve and its adjoint learn the complex
    source amplitudes and scatterer strength."""
    import helmholtz
    png = tmp_path / "h.png"
    r = helmholtz.main(["--size", "24", "--steps", "150", "--out", str(png),
                        "--print-every", "75"])
    losses = r["losses"]
    assert len(losses) == 150
    assert losses[-1] < 1e-4 * losses[0]                    # it learns
    assert r["q_error"] < 1e-2 and r["c_error"] < 1e-2
    assert png.exists() and png.stat().st_size > 10000
    assert "ms/step" in capsys.readouterr().out
