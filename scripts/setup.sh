#!/usr/bin/env bash
# Installs what sla needs on Debian 12 (only packages that are missing), as root or via sudo.
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config git
  libsuitesparse-dev libopenblas-dev liblapacke-dev libmetis-dev
  libcmocka-dev libcjson-dev zlib1g-dev
  libarpack2-dev libmumps-seq-dev libmumps-dev libhypre-dev
  libopenmpi-dev openmpi-bin libptscotch-dev libsuperlu-dist-dev
  clang libclang-rt-14-dev libomp-14-dev
  python3 python3-torch python3-numpy python3-scipy python3-pytest python3-cffi
  python3-matplotlib python3-mpi4py python3-pip python3-venv python3-setuptools python3-wheel
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} Debian packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
