#!/usr/bin/env bash
# Second build of the C tests with AddressSanitizer and UndefinedBehaviorSanitizer, and a short
# libFuzzer run of the file readers (clang): Matrix Market, Rutherford–Boeing and safetensors,
# SLA_FUZZ_SECONDS (60) in all, split by tests/fuzz/run.sh. Used by CI after scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSLA_SANITIZE=ON -DSLA_BUILD_BENCH=OFF \
      -DSLA_BUILD_TOOLS=ON -DSLA_BUILD_EXAMPLES=OFF
cmake --build build-asan -j"$(nproc)"
# The Python tests load the ASan libsla into Debian's uninstrumented interpreter with the ASan
# runtime preloaded (tests/CMakeLists.txt sets LD_PRELOAD and turns leak detection off for them).
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j2
if [ -f tests/fuzz/CMakeLists.txt ]; then
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DSLA_BUILD_FUZZ=ON -DSLA_BUILD_TESTS=OFF \
        -DSLA_BUILD_BENCH=OFF -DSLA_BUILD_TOOLS=OFF -DSLA_BUILD_EXAMPLES=OFF -DSLA_WITH_MPI=OFF
  cmake --build build-fuzz -j"$(nproc)"
  bash tests/fuzz/run.sh build-fuzz "${SLA_FUZZ_SECONDS:-60}"
fi
