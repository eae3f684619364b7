#!/usr/bin/env bash
# Runs Halyard's cargo-fuzz targets: bash scripts/fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS defaults to 600 per target; TARGETs default to all of them, run one after another.
# Installs cargo-fuzz if missing; needs the nightly toolchain (rustup toolchain install nightly).
# Seeds are read from fuzz/corpus/<t>/ (committed, small); new inputs go to fuzz/corpus-work/<t>/
# (ignored by git). Prints libFuzzer's executions per target and exits non-zero if any target
# crashed (reproducer in fuzz/artifacts/<t>/; minimize with `cargo +nightly fuzz tmin <t> FILE`
# and keep it in fuzz/regressions/<t>/).
set -euo pipefail

ALL_TARGETS=(rtps_message parameter_list cdr_decode core_datagram secure_submessage security_token typeobject_decode)
SECONDS_PER_TARGET="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT/fuzz"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi

mkdir -p logs
failed=()
summary=()
for t in "${TARGETS[@]}"; do
    mkdir -p "corpus-work/$t" "corpus/$t" "artifacts/$t"
    log="logs/$t.log"
    echo "== $t: ${SECONDS_PER_TARGET}s (log: fuzz/$log)"
    status=0
    # Regressions are replayed first as seeds, so a known crash that came back fails at once.
    seeds=("corpus/$t")
    [ -d "regressions/$t" ] && seeds+=("regressions/$t")
    cargo +nightly fuzz run "$t" "corpus-work/$t" "${seeds[@]}" -- \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -print_final_stats=1 \
        >"$log" 2>&1 || status=$?
    # Final stats line: "#12345	DONE   cov: ... exec/s: 678 rss: 90Mb"
    done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n1 || true)"
    execs="$(grep -E '^stat::number_of_executed_units:' "$log" | tail -n1 | awk '{print $2}' || true)"
    if [ -z "$execs" ] && [ -n "$done_line" ]; then
        execs="$(echo "$done_line" | sed -E 's/^#([0-9]+).*/\1/')"
    fi
    rate="$(echo "$done_line" | sed -nE 's/.*exec\/s: ([0-9]+).*/\1/p')"
    if [ "$status" -ne 0 ] || [ -z "$done_line" ]; then
        echo "!! $t: CRASH or failure (exit $status); see fuzz/$log and fuzz/artifacts/$t/"
        grep -E 'panicked at|ERROR: libFuzzer|SUMMARY|Test unit written to' "$log" | head -n 8 || true
        failed+=("$t")
        summary+=("$t: FAILED after ${execs:-?} executions")
    else
        echo "   $t: ${execs} executions in ${SECONDS_PER_TARGET}s (${rate} exec/s)"
        summary+=("$t: ${execs} executions in ${SECONDS_PER_TARGET}s (${rate} exec/s), no crash")
    fi
done

echo
echo "== summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
    echo "crashed: ${failed[*]}"
    exit 1
fi
