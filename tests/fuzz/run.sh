#!/usr/bin/env bash
# Fuzzes the Matrix Market reader: bash tests/fuzz/run.sh BUILD_DIR [SECONDS]
# BUILD_DIR was configured with CC=clang -DSLA_BUILD_FUZZ=ON (see scripts/sanitize.sh). The seed
# corpus is copied at run time from the shared test matrices (header edge cases and a few small
# matrices, one gzip-compressed) into a temporary folder, never into the project. Fails (exit
# status ≠ 0) when libFuzzer finds a crash, a sanitizer report, a leak or a timeout; the input
# that did it is kept as BUILD_DIR/fuzz-artifacts/crash-* (or leak-*, timeout-*).
set -euo pipefail
build="${1:?usage: run.sh BUILD_DIR [SECONDS]}"
seconds="${2:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
fuzzer="$build/tests/fuzz/fuzz_mm_read"
[ -x "$fuzzer" ] || { echo "run.sh: $fuzzer not built" >&2; exit 1; }

matrices="${SLA_MATRIX_DIR:-}"
for cand in "$matrices" "$root/../shared/matrices" /work/shared/matrices; do
  if [ -n "$cand" ] && [ -f "$cand/README.md" ]; then matrices="$cand"; break; fi
done

corpus="$(mktemp -d "${TMPDIR:-/tmp}/sla-fuzz-corpus.XXXXXX")"
trap 'rm -rf "$corpus"' EXIT
if [ -n "$matrices" ] && [ -d "$matrices/headers" ]; then
  cp "$matrices"/headers/*.mtx "$corpus"/
  for m in pores_1 west0479 494_bus; do
    [ -f "$matrices/$m.mtx" ] && cp "$matrices/$m.mtx" "$corpus"/
  done
  [ -f "$matrices/pores_1.mtx" ] && gzip -c "$matrices/pores_1.mtx" > "$corpus/pores_1.mtx.gz"
else
  echo "run.sh: no shared matrices found; fuzzing from an empty corpus and the dictionary"
fi

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
log="$build/fuzz.log"
echo "run.sh: fuzzing sla_mm_read_buffer for ${seconds}s, $(ls "$corpus" | wc -l) seeds, log in $log"
status=0
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
            -dict="$here/mm.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
            "$corpus" > "$log" 2>&1 || status=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$log" || true
if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  echo "run.sh: the fuzzer failed (status $status); inputs in $artifacts" >&2
  exit "$status"
fi
echo "run.sh: no crash in ${seconds}s"
