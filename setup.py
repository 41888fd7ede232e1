"""pip install . : builds libsla with CMake and installs torch_sla with the library inside the
package (torch_sla/_lib/libsla.so), so that `import torch_sla` needs no PYTHONPATH or
LD_LIBRARY_PATH. Offline with Debian's python3-setuptools and python3-wheel:

    python3 -m venv --system-site-packages env && env/bin/pip install --no-build-isolation .

(no pyproject.toml on purpose: pip then uses the setuptools and wheel it has instead of
fetching build requirements). Environment: SLA_CMAKE_ARGS (extra configure arguments),
SLA_BUILD_JOBS (default 2), SLA_PREBUILT_LIBRARY (copy this libsla.so instead of building:
the packaging test uses the tree's build). ccache is used when it is on PATH.
"""
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def _version():
    for line in (HERE / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(sla VERSION"):
            return line.split()[2]
    return "0.0.0"


class BuildWithLibsla(build_py):
    """build_py that also builds libsla (CMake, library target only) into the package."""

    def run(self):
        super().run()
        dest = Path(self.build_lib) / "torch_sla" / "_lib"
        dest.mkdir(parents=True, exist_ok=True)
        lib = os.environ.get("SLA_PREBUILT_LIBRARY") or self._cmake_build()
        shutil.copyfile(lib, dest / "libsla.so")

    def _cmake_build(self):
        bdir = Path(self.build_lib).parent / "cmake"
        args = ["cmake", "-S", str(HERE), "-B", str(bdir), "-DCMAKE_BUILD_TYPE=Release",
                "-DSLA_BUILD_TESTS=OFF", "-DSLA_BUILD_TOOLS=OFF", "-DSLA_BUILD_BENCH=OFF",
                "-DSLA_BUILD_EXAMPLES=OFF", "-DSLA_WITH_MPI=OFF"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_C_COMPILER_LAUNCHER=ccache")
        args += shlex.split(os.environ.get("SLA_CMAKE_ARGS", ""))
        subprocess.run(args, check=True)
        subprocess.run(["cmake", "--build", str(bdir), "--target", "sla", "-j",
                        os.environ.get("SLA_BUILD_JOBS", "2")], check=True)
        return str(bdir / "libsla.so")


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: platform-specific, not pure Python."""

    def has_ext_modules(self):
        return True


setup(
    name="torch-sla-libsla",
    version=_version(),
    description="torch_sla: differentiable sparse linear algebra for PyTorch on libsla "
                "(torch-sla's API)",
    package_dir={"": "python"},
    packages=["torch_sla"],
    python_requires=">=3.8",
    cmdclass={"build_py": BuildWithLibsla},
    distclass=BinaryDistribution,
    zip_safe=False,
)
