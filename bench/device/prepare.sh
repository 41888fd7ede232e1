#!/bin/bash
# Fills .carry/ at the repository root with what bench/device/run.sh needs on the GPU machine,
# which has nvcc, CMake, ninja and PyTorch but no package registry and none of libsla's Debian
# libraries. Run it here (Debian 12 with apt), once:
#   bench/device/prepare.sh [TORCH_SLA_GIT_DIR]
# .carry/debs/  the .deb files of SuiteSparse, reference BLAS/LAPACK, LAPACKE, cJSON, cmocka,
#               zlib headers and the Fortran runtime (about 12 MB; run.sh unpacks them with
#               dpkg -x into /tmp, never into /)
# .carry/torch-sla/torch_sla  torch-sla's Python package (from a git checkout or mirror given
#               as the argument, e.g. /work/.mirror/sparsexlab+torch-sla/repo): its own CG runs
#               beside ours in the same run. Without it run.sh times a plain PyTorch CG instead.
# Then: device run with carry [".carry"] and command "bash bench/device/run.sh".
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
mkdir -p .carry/debs
pkgs="libsuitesparse-dev libamd2 libbtf1 libcamd2 libccolamd2 libcholmod3 libcolamd2 libklu1
      libumfpack5 librbio2 libsuitesparseconfig5 libmetis5 libblas3 libblas-dev liblapack3
      liblapack-dev liblapacke liblapacke-dev libtmglib3 libgfortran5 libquadmath0 libcjson1
      libcjson-dev libcmocka0 libcmocka-dev zlib1g-dev"
(cd .carry/debs && apt-get download $pkgs)
if [ $# -ge 1 ]; then
  rm -rf .carry/torch-sla && mkdir -p .carry/torch-sla
  git --git-dir="$1" archive HEAD torch_sla LICENSE | tar -x -C .carry/torch-sla
  git --git-dir="$1" log -1 --format='%H %cd' > .carry/torch-sla/COMMIT
fi
du -sh .carry
