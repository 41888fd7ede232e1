#!/usr/bin/env bash
# Fuzzes the file readers: bash tests/fuzz/run.sh BUILD_DIR [SECONDS]
# BUILD_DIR was configured with CC=clang -DSLA_BUILD_FUZZ=ON (see scripts/sanitize.sh). SECONDS
# (default 60) is the total, split between the targets: half for the Matrix Market reader
# (plain and gzip), a quarter each for the Rutherford–Boeing and safetensors readers. Seed
# corpora are copied at run time into temporary folders, never into the project: the shared
# test matrices (header edge cases, a few small matrices, one gzip-compressed, the RB files)
# and tests/fuzz/seeds. Fails (exit status ≠ 0) when libFuzzer finds a crash, a sanitizer
# report, a leak or a timeout; the input that did it is kept as
# BUILD_DIR/fuzz-artifacts/TARGET-crash-* (or leak-*, timeout-*).
set -euo pipefail
build="${1:?usage: run.sh BUILD_DIR [SECONDS]}"
seconds="${2:-60}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
for t in fuzz_mm_read fuzz_rb_read fuzz_safetensors_read; do
  [ -x "$build/tests/fuzz/$t" ] || { echo "run.sh: $build/tests/fuzz/$t not built" >&2; exit 1; }
done

matrices="${SLA_MATRIX_DIR:-}"
for cand in "$matrices" "$root/../shared/matrices"; do
  if [ -n "$cand" ] && [ -f "$cand/README.md" ]; then matrices="$cand"; break; fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/sla-fuzz-corpus.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/mm" "$work/rb" "$work/safetensors"
if [ -n "$matrices" ] && [ -d "$matrices/headers" ]; then
  cp "$matrices"/headers/*.mtx "$work/mm"/
  for m in pores_1 west0479 494_bus; do
    [ -f "$matrices/$m.mtx" ] && cp "$matrices/$m.mtx" "$work/mm"/
  done
  [ -f "$matrices/pores_1.mtx" ] && gzip -c "$matrices/pores_1.mtx" > "$work/mm/pores_1.mtx.gz"
  [ -d "$matrices/rb" ] && cp "$matrices"/rb/* "$work/rb"/
else
  echo "run.sh: no shared matrices found; the Matrix Market reader starts from the dictionary"
fi
cp "$here"/seeds/rb/* "$work/rb"/
cp "$here"/seeds/safetensors/* "$work/safetensors"/

artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
# one target: NAME CORPUS DICT SECONDS
fuzz() {
  local name="$1" corpus="$2" dict="$3" secs="$4" log="$build/fuzz-$1.log" rc=0
  echo "run.sh: $name for ${secs}s, $(ls "$corpus" | wc -l) seeds, log in $log"
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    "$build/tests/fuzz/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -max_len=65536 -dict="$here/$dict" -artifact_prefix="$artifacts/$name-" \
      -print_final_stats=1 "$corpus" > "$log" 2>&1 || rc=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -n 60 "$log"
    echo "run.sh: $name failed (status $rc); inputs in $artifacts" >&2
    status=$rc
  fi
}
quarter=$(( seconds / 4 > 0 ? seconds / 4 : 1 ))
fuzz fuzz_mm_read "$work/mm" mm.dict $(( seconds - 2 * quarter > 0 ? seconds - 2 * quarter : 1 ))
fuzz fuzz_rb_read "$work/rb" rb.dict "$quarter"
fuzz fuzz_safetensors_read "$work/safetensors" safetensors.dict "$quarter"
[ "$status" -eq 0 ] && echo "run.sh: no crash in ${seconds}s"
exit "$status"
