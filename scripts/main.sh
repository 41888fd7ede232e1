#!/usr/bin/env bash
# The main job: install dependencies, build, run the flagship example.
set -euo pipefail
# threads wait passively: spinning OpenMP threads collapse on a shared machine (README)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
if [ -f examples/inverse_coefficient.py ]; then
  SLA_LIBRARY="$PWD/build/libsla.so" PYTHONPATH="$PWD/python" /usr/bin/python3 examples/inverse_coefficient.py "$@"
else
  ./build/examples/example_poisson_spmv "${1:-../shared/matrices/west0479.mtx}"
fi
