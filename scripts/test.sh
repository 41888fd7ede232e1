#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every C, Python and MPI test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j2 "$@"
