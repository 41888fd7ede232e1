#!/usr/bin/env bash
# Packaging test (CTest label "install"): `pip install .` into fresh virtual environments
# that see Debian's torch (--system-site-packages), offline (--no-index), then
# `import torch_sla` from another directory with no PYTHONPATH, SLA_LIBRARY or
# LD_LIBRARY_PATH: the library must come from inside the installed package.
#   1. pip install --no-build-isolation .   (builds libsla with CMake; ccache if present)
#   2. pip install .                          (plain; libsla copied from the tree's build,
#                                             SLA_PREBUILT_LIBRARY, to keep the test short)
# Usage: pip_install.sh SOURCE_DIR PREBUILT_LIBSLA
set -euo pipefail
src=$1
prebuilt=$2
py=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/sla_pip_XXXXXX")
trap 'rm -rf "$work"' EXIT
# a copy of the sources (tracked and untracked, not ignored): the build leaves nothing behind
mkdir "$work/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$work/src"
else
  tar -C "$src" --exclude=./build --exclude=./build-py -cf - . | tar -xf - -C "$work/src"
fi
export CCACHE_BASEDIR="$work/src" CCACHE_NOHASHDIR=1
unset PYTHONPATH SLA_LIBRARY LD_LIBRARY_PATH
check() {   # $1: venv
  (cd "$work" && env -u PYTHONPATH -u SLA_LIBRARY -u LD_LIBRARY_PATH "$1/bin/python" - "$1" <<'PY'
import os, sys
import torch, torch_sla
venv = os.path.realpath(sys.argv[1])
lib = os.path.realpath(torch_sla.library_path)
assert lib.startswith(venv) and lib.endswith("torch_sla/_lib/libsla.so"), lib
assert os.path.realpath(torch_sla.__file__).startswith(venv), torch_sla.__file__
A = torch_sla.SparseTensor.tridiagonal(50, 4.0, -1.0)
v = A.values.clone().requires_grad_(True)
b = torch.ones(50, dtype=torch.float64)
x = A.with_values(v).solve(b, backend="scipy", method="lu")
x.sum().backward()
r = float((A @ x.detach() - b).norm())
assert r < 1e-12 and torch.isfinite(v.grad).all(), r
import torch_sla.backends, torch_sla.datasets
print("import from", os.getcwd(), "ok:", lib, "residual", r)
PY
  )
}
for mode in no-build-isolation plain; do
  venv="$work/venv-$mode"
  $py -m venv --system-site-packages "$venv"
  if [ "$mode" = no-build-isolation ]; then
    "$venv/bin/python" -m pip install -q --no-index --no-build-isolation "$work/src"
  else
    SLA_PREBUILT_LIBRARY="$prebuilt" "$venv/bin/python" -m pip install -q --no-index "$work/src"
  fi
  check "$venv"
done
echo "pip install: 2 passed, 0 failed"
