"""torch_sla.datasets: torch-sla's test and benchmark problems, built in libsla directly in
CSR order (torch_sla.gallery: sla_gallery_grid / sla_gallery_graph_laplacian), and a loader
for SuiteSparse Matrix Collection files that the user has on disk (never a download).

Generators return a :class:`SparseProblem` (torch-sla's record: ``val, row, col, shape,
rhs, exact, properties, meta``; here also ``.A``, the SparseTensor itself, whose entries are
its CSR slots). Grids are numbered row-major (last axis fastest) as in torch-sla, so that the
matrices are theirs entry for entry (their COO order differs: ours is CSR).

Not here: complex matrices (helmholtz_1d with alpha ≠ 0, torch-sla's complex Helmholtz
benchmarks; libsla's dtypes are real), DIMACS10 and anything that downloads.
"""
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import torch

from . import gallery

__all__ = [
    "SparseProblem", "laplacian_1d", "laplacian_2d", "laplacian_3d", "poisson_2d",
    "poisson_3d", "bratu_1d", "helmholtz_1d", "anisotropic_diffusion_2d",
    "advection_diffusion_2d", "graph_laplacian", "laplacian_1d_eigenvalues",
    "laplacian_2d_eigenvalues", "PROBLEMS", "list_problems", "get", "default_sizes",
    "load_suitesparse", "is_suitesparse_available", "RECOMMENDED", "SuiteSparse", "Synthetic",
    "DatasetUnavailable", "cache_dir",
]


class DatasetUnavailable(RuntimeError):
    """A named dataset is not on disk (torch_sla never downloads)."""


@dataclass
class SparseProblem:
    """One sparse problem: COO view (val, row, col in CSR order), shape, optional rhs and
    exact solution, properties ({'spd', 'symmetric', 'complex'}) and free-form meta."""
    name: str
    val: torch.Tensor
    row: torch.Tensor
    col: torch.Tensor
    shape: tuple
    rhs: Optional[torch.Tensor] = None
    exact: Optional[torch.Tensor] = None
    properties: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    A: object = field(default=None, repr=False, compare=False)

    def coo(self):
        return self.val, self.row, self.col, self.shape

    def nnz(self):
        return self.val.numel()

    def to_dense(self):
        return self.tensor().to_dense()

    def matvec(self, x):
        return self.tensor() @ x

    def tensor(self):
        """The SparseTensor (shares val; built once)."""
        if self.A is None:
            from .sparse_tensor import SparseTensor
            self.A = SparseTensor(self.val, self.row, self.col, self.shape)
        return self.A


_SPD = {"spd": True, "symmetric": True, "complex": False}


def _problem(name, A, **kw):
    return SparseProblem(name=name, val=A.values, row=A.row_indices, col=A.col_indices,
                         shape=tuple(A.shape), A=A, **kw)


def laplacian_1d_eigenvalues(n):
    """Eigenvalues 2 − 2cos(kπ/(n+1)), k = 1..n, of tridiag(−1, 2, −1)."""
    k = torch.arange(1, n + 1, dtype=torch.float64)
    return 2 - 2 * torch.cos(k * math.pi / (n + 1))


def laplacian_2d_eigenvalues(m):
    """All m² eigenvalues of the m × m 5-point Laplacian (pairwise sums of the 1-D ones)."""
    lam = laplacian_1d_eigenvalues(m)
    return (lam[:, None] + lam[None, :]).flatten()


def laplacian_1d(n=200):
    """tridiag(−1, 2, −1), n interior nodes (SPD)."""
    A = gallery.grid([n], 2.0, -1.0, -1.0)
    return _problem(f"laplacian_1d(n={n})", A, properties=dict(_SPD),
                    meta={"dof": n, "source": "pde", "pde": "laplacian1d", "n": n,
                          "eigenvalues": "2-2cos(k*pi/(n+1))"})


def laplacian_2d(m=30):
    """5-point graph Laplacian of an m × m grid (4, −1)."""
    A = gallery.grid([m, m], 4.0, -1.0, -1.0)
    return _problem(f"laplacian_2d(m={m})", A, properties=dict(_SPD),
                    meta={"dof": m * m, "source": "pde", "pde": "laplacian2d", "m": m})


def laplacian_3d(m=10):
    """7-point graph Laplacian of an m × m × m grid (6, −1)."""
    A = gallery.grid([m, m, m], 6.0, -1.0, -1.0)
    return _problem(f"laplacian_3d(m={m})", A, properties=dict(_SPD),
                    meta={"dof": m ** 3, "source": "pde", "pde": "laplacian3d", "m": m})


def _grid_points(m, d):
    h = 1.0 / (m + 1)
    xs = torch.arange(1, m + 1, dtype=torch.float64) * h
    return h, torch.meshgrid(*([xs] * d), indexing="ij")


def poisson_2d(m=31):
    """−Δu = f on the unit square, h = 1/(m+1): A = 5-point/h², exact u = sin πx sin πy,
    f = 2π² u."""
    h, (X, Y) = _grid_points(m, 2)
    inv = 1.0 / (h * h)
    A = gallery.grid([m, m], 4.0 * inv, -inv, -inv)
    u = (torch.sin(math.pi * X) * torch.sin(math.pi * Y)).flatten()
    return _problem(f"poisson_2d(m={m})", A, rhs=2 * math.pi ** 2 * u, exact=u,
                    properties=dict(_SPD),
                    meta={"dof": m * m, "source": "pde", "pde": "poisson2d", "m": m, "h": h,
                          "manufactured": "sin(pi x) sin(pi y)"})


def poisson_3d(m=10):
    """−Δu = f on the unit cube: A = 7-point/h², exact u = sin πx sin πy sin πz, f = 3π² u."""
    h, (X, Y, Z) = _grid_points(m, 3)
    inv = 1.0 / (h * h)
    A = gallery.grid([m, m, m], 6.0 * inv, -inv, -inv)
    u = (torch.sin(math.pi * X) * torch.sin(math.pi * Y) * torch.sin(math.pi * Z)).flatten()
    return _problem(f"poisson_3d(m={m})", A, rhs=3 * math.pi ** 2 * u, exact=u,
                    properties=dict(_SPD),
                    meta={"dof": m ** 3, "source": "pde", "pde": "poisson3d", "m": m, "h": h,
                          "manufactured": "sin(pi x) sin(pi y) sin(pi z)"})


def _bratu_c(lam):
    """Lower-branch root of c = sqrt(2λ) cosh(c/4) (fixed point)."""
    k, c = math.sqrt(2.0 * lam), 0.1
    for _ in range(200):
        c = k * math.cosh(c / 4.0)
    return c


def bratu_1d(n=100, lam=1.0):
    """The linear part A = tridiag(−1, 2, −1)/h² of Bratu's F(u) = A u − λ eᵘ (h = 1/(n+1));
    exact: u(x) = −2 ln(cosh((c/2)(x − ½)) / cosh(c/4)), c = sqrt(2λ) cosh(c/4)."""
    h = 1.0 / (n + 1)
    inv = 1.0 / (h * h)
    A = gallery.grid([n], 2.0 * inv, -inv, -inv)
    x = torch.linspace(h, 1 - h, n, dtype=torch.float64)
    c = _bratu_c(lam)
    u = -2.0 * torch.log(torch.cosh((c / 2.0) * (x - 0.5)) / math.cosh(c / 4.0))
    return _problem(f"bratu_1d(n={n}, lam={lam})", A, exact=u, properties=dict(_SPD),
                    meta={"dof": n, "source": "pde", "pde": "bratu1d", "n": n, "h": h,
                          "lam": lam, "nonlinear": True, "residual": "A@u - lam*exp(u)",
                          "x": x})


def helmholtz_1d(n=300, k=8.0, alpha=0.0):
    """1-D Helmholtz tridiag(−1, 2, −1)/h² − k² I (symmetric indefinite). torch-sla's default
    alpha = 2 adds −iα I (complex symmetric): complex dtypes are not in libsla, so alpha ≠ 0
    raises TypeError (torch-sla's default call is helmholtz_1d(alpha=2.0))."""
    if alpha:
        raise TypeError(f"helmholtz_1d(alpha={alpha}): the absorbing term −iα is complex; "
                        f"torch_sla supports real dtypes only (alpha=0 gives the real "
                        f"indefinite Helmholtz matrix)")
    h = 1.0 / (n + 1)
    inv = 1.0 / (h * h)
    A = gallery.grid([n], 2.0 * inv - k * k, -inv, -inv)
    return _problem(f"helmholtz_1d(n={n}, k={k}, alpha={alpha})", A,
                    properties={"spd": False, "symmetric": True, "complex": False},
                    meta={"dof": n, "source": "pde", "pde": "helmholtz1d", "n": n, "h": h,
                          "k": k, "alpha": alpha})


def anisotropic_diffusion_2d(m=30, eps=1e-2):
    """−ε u_xx − u_yy (5-point, h = 1/(m+1)); SPD, κ grows like 1/ε."""
    h = 1.0 / (m + 1)
    cx, cy = eps / (h * h), 1.0 / (h * h)
    A = gallery.grid([m, m], 2.0 * (cx + cy), [-cx, -cy], [-cx, -cy])
    return _problem(f"anisotropic_diffusion_2d(m={m}, eps={eps})", A, properties=dict(_SPD),
                    meta={"dof": m * m, "source": "pde", "pde": "anisotropic2d", "m": m,
                          "h": h, "eps": eps})


def advection_diffusion_2d(m=30, peclet=20.0):
    """−Δu + Pe (u_x + u_y), 5-point diffusion and first-order upwind convection (velocity
    (+1, +1): backward differences), h = 1/(m+1); non-symmetric."""
    h = 1.0 / (m + 1)
    inv, b = 1.0 / (h * h), peclet / h
    A = gallery.grid([m, m], 4.0 * inv + 2.0 * b, -inv - b, -inv)
    return _problem(f"advection_diffusion_2d(m={m}, peclet={peclet})", A,
                    properties={"spd": False, "symmetric": False, "complex": False},
                    meta={"dof": m * m, "source": "pde", "pde": "advdiff2d", "m": m, "h": h,
                          "peclet": peclet})


def graph_laplacian(n, edges, weights=None, shift=0.0, name="graph_laplacian"):
    """L = D − W + shift·I of an undirected graph (edges [E, 2]; weights [E], default 1):
    positive semidefinite, SPD for shift > 0 (DIMACS10-style regularised Laplacians)."""
    A = gallery.graph_laplacian(n, edges, weights, shift)
    return _problem(name, A, properties={"spd": shift > 0, "symmetric": True, "complex": False},
                    meta={"dof": n, "source": "graph", "shift": shift})


PROBLEMS = {
    "laplacian_1d": laplacian_1d, "laplacian_2d": laplacian_2d, "laplacian_3d": laplacian_3d,
    "poisson_2d": poisson_2d, "poisson_3d": poisson_3d, "bratu_1d": bratu_1d,
    "helmholtz_1d": helmholtz_1d, "anisotropic_diffusion_2d": anisotropic_diffusion_2d,
    "advection_diffusion_2d": advection_diffusion_2d,
}
_DEFAULT_SIZES = {
    "laplacian_1d": [{"n": n} for n in (100, 500, 2000, 10000)],
    "laplacian_2d": [{"m": m} for m in (16, 32, 64, 128)],
    "laplacian_3d": [{"m": m} for m in (8, 16, 24, 32)],
    "poisson_2d": [{"m": m} for m in (15, 31, 63, 127)],
    "poisson_3d": [{"m": m} for m in (8, 16, 24, 32)],
    "bratu_1d": [{"n": n} for n in (50, 200, 800, 3200)],
    "helmholtz_1d": [{"n": n} for n in (100, 400, 1600, 6400)],
    "anisotropic_diffusion_2d": [{"m": m} for m in (16, 32, 64, 128)],
    "advection_diffusion_2d": [{"m": m} for m in (16, 32, 64, 128)],
}


def list_problems():
    return list(PROBLEMS)


def get(name, **kwargs):
    if name not in PROBLEMS:
        raise KeyError(f"unknown problem {name!r}; available: {list_problems()}")
    return PROBLEMS[name](**kwargs)


def default_sizes(name):
    if name not in _DEFAULT_SIZES:
        raise KeyError(f"unknown problem {name!r}; available: {list_problems()}")
    return [dict(kw) for kw in _DEFAULT_SIZES[name]]


# ---------------------------------------------------------------------------------------------
# torch-sla's Synthetic collection (unscaled Kronecker stencils, their keys)
# ---------------------------------------------------------------------------------------------
_SYNTHETIC = {
    "poisson_2d_16": lambda: gallery.grid([16, 16], 4.0, -1.0, -1.0),
    "poisson_2d_64": lambda: gallery.grid([64, 64], 4.0, -1.0, -1.0),
    "poisson_3d_16": lambda: gallery.grid([16] * 3, 6.0, -1.0, -1.0),
    # −ε ∂xx − ∂yy with kron(I, εT) + kron(T, I): the fast axis carries ε
    "anisotropic_2d_64_eps_001": lambda: gallery.grid([64, 64], 2.0 + 2.0 * 0.01,
                                                      [-1.0, -0.01], [-1.0, -0.01]),
    "convdiff_2d_64_peclet_10": lambda: gallery.grid([64, 64], 4.0 + 2.0 * 10.0, -1.0 - 10.0,
                                                     -1.0),
}


class _Synthetic(Mapping):
    """torch-sla's Synthetic benchmarks by key (SparseProblem values, built on first use;
    their complex Helmholtz entry is not offered)."""

    def __init__(self):
        self._loaded = {}

    def __getitem__(self, key):
        if key not in _SYNTHETIC:
            raise KeyError(f"unknown Synthetic key {key!r}; available: {sorted(_SYNTHETIC)}")
        if key not in self._loaded:
            A = _SYNTHETIC[key]()
            sym = "convdiff" not in key
            self._loaded[key] = _problem(key, A, properties={"spd": sym, "symmetric": sym,
                                                             "complex": False},
                                         meta={"dof": A.shape[0], "source": "synthetic"})
        return self._loaded[key]

    def __iter__(self):
        return iter(_SYNTHETIC)

    def __len__(self):
        return len(_SYNTHETIC)


Synthetic = _Synthetic()


# ---------------------------------------------------------------------------------------------
# SuiteSparse Matrix Collection files on disk
# ---------------------------------------------------------------------------------------------
RECOMMENDED = ["bcsstk13", "nos6", "Laplace3D10", "hangGlider_2"]


def cache_dir():
    """Where datasets are looked for: $TORCH_SLA_DATASET, else ~/.cache/torch_sla/datasets."""
    return os.environ.get("TORCH_SLA_DATASET") or \
        os.path.join(os.path.expanduser("~"), ".cache", "torch_sla", "datasets")


def _find(name, group, directory):
    root = Path(directory or cache_dir())
    stems = [name] + ([f"{group}/{name}", f"{group}_{name}"] if group else [])
    for stem in stems:
        for cand in (root / f"{stem}.mtx", root / f"{stem}.mtx.gz", root / stem / f"{name}.mtx",
                     root / stem / f"{name}.mtx.gz"):
            if cand.is_file():
                return cand
    return None


def is_suitesparse_available(name=None, group=None, directory=None):
    """True if the named matrix is on disk (name None: the folder exists)."""
    if name is None:
        return Path(directory or cache_dir()).is_dir()
    return _find(name, group, directory) is not None


def load_suitesparse(name, group=None, directory=None, dtype=torch.float64):
    """A SuiteSparse Matrix Collection matrix from a Matrix Market file the user has
    (directory, default cache_dir(); looked up as NAME.mtx[.gz], NAME/NAME.mtx[.gz] or
    GROUP/NAME.mtx...). Never downloads: a missing file raises DatasetUnavailable naming the
    places looked at."""
    path = _find(name, group, directory)
    if path is None:
        raise DatasetUnavailable(f"SuiteSparse matrix {name!r} is not in "
                                 f"{directory or cache_dir()} (torch_sla does not download: put "
                                 f"{name}.mtx there, or pass directory=)")
    from .io import load_mtx
    A = load_mtx(str(path), dtype=dtype)
    sym = bool(A.is_symmetric()) if A.is_square else False
    return _problem(name, A, properties={"spd": None, "symmetric": sym, "complex": False},
                    meta={"dof": A.shape[0], "source": "suitesparse", "path": str(path),
                          "group": group})


class _SuiteSparseDir(Mapping):
    """Matrices of a folder of Matrix Market files by name: SuiteSparse(directory)[name]
    (or the default folder through the module-level SuiteSparse[name])."""

    def __init__(self, directory=None):
        self.directory = directory

    def __call__(self, directory):
        return _SuiteSparseDir(directory)

    def _names(self):
        root = Path(self.directory or cache_dir())
        if not root.is_dir():
            return []
        out = set()
        for p in root.rglob("*.mtx*"):
            if p.name.endswith((".mtx", ".mtx.gz")):
                out.add(p.name[:-4] if p.name.endswith(".mtx") else p.name[:-7])
        return sorted(out)

    def __getitem__(self, name):
        return load_suitesparse(name, directory=self.directory)

    def __iter__(self):
        return iter(self._names())

    def __len__(self):
        return len(self._names())


SuiteSparse = _SuiteSparseDir()
