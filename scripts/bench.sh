#!/usr/bin/env bash
# The benchmark campaign in one command: builds Halyard (release) and the benchmark peers,
# then runs bench/campaign.py, which measures Halyard against Cyclone's ddsperf, Fast DDS and
# raw UDP side by side and writes results.json/.csv, report.md and report.html.
#
#   scripts/bench.sh [--quick|--full|--tiny|--seed000] [--out DIR] [--peers halyard,cyclone,fastdds,udp]
#                    [--duration S] [--repeat K] [--no-build] [other campaign.py options]
#
# --quick (default) takes about 3 minutes; --full takes hours (see bench/README.md);
# --seed000 reproduces seed 000's evaluation (Halyard and raw UDP, and the CTI node's TAXII
# polling baseline: it builds halyard-cti too) in about 50 minutes.
# HALYARD_BENCH_EXE=PATH runs that halyard binary instead of building the release one (the
# test suite's smoke run uses the binary its tests built; published figures use the release
# build).
# A peer that cannot be built is reported as skipped by the campaign, never fatal.
set -uo pipefail
cd "$(dirname "$0")/.."

build=1
peers="halyard,cyclone,fastdds,udp"
seed000=0
for a in "$@"; do
  [ "$a" = "--seed000" ] && { seed000=1; peers="halyard,udp"; }
done
args=()
prev=""
for a in "$@"; do
  case "$a" in
    --no-build) build=0; continue ;;
    --peers=*) peers="${a#--peers=}" ;;
    -h|--help) exec python3 bench/campaign.py --help ;;
  esac
  [ "$prev" = "--peers" ] && peers="$a"
  prev="$a"
  args+=("$a")
done

wants() { [[ ",$peers," == *",$1,"* ]]; }
failed=""
if [ "$build" = 1 ]; then
  if wants halyard && [ -n "${HALYARD_BENCH_EXE:-}" ]; then
    echo "bench.sh: HALYARD_BENCH_EXE=$HALYARD_BENCH_EXE: no build of Halyard" >&2
  elif wants halyard; then
    echo "bench.sh: cargo build --release -p halyard-cli" >&2
    cargo build --release -p halyard-cli >&2 || failed+="halyard: cargo build --release -p halyard-cli failed"$'\n'
  fi
  if [ "$seed000" = 1 ]; then
    echo "bench.sh: cargo build --release -p halyard-cti (the node's TAXII-polling baseline)" >&2
    bash scripts/web-deps.sh >&2 || true
    cargo build --release -p halyard-cti >&2 || failed+="halyard-cti: cargo build --release -p halyard-cti failed"$'\n'
  fi
  for peer in fastdds udp; do
    wants "$peer" || continue
    script="bench/peers/$peer/build.sh"
    if [ -f "$script" ]; then
      echo "bench.sh: $script" >&2
      sh "$script" >/dev/null || failed+="$peer: $script failed (exit $?)"$'\n'
    else
      failed+="$peer: $script does not exist"$'\n'
    fi
  done
  # Cyclone's passive subscriber (ddsperf has none); without it only the passive-subscriber
  # points of Cyclone fail, with the reason, so its build failing does not skip Cyclone.
  if wants cyclone; then
    echo "bench.sh: bench/peers/cyclone/build.sh" >&2
    sh bench/peers/cyclone/build.sh >/dev/null ||
      echo "bench.sh: bench/peers/cyclone/build.sh failed: Cyclone's passive-subscriber points will fail" >&2
  fi
  [ -n "$failed" ] && printf 'bench.sh: build problems (those peers will be skipped):\n%s' "$failed" >&2
fi
export HALYARD_BENCH_BUILD_FAILED="$failed"
export HALYARD_BENCH_INVOCATION="scripts/bench.sh $*"
export PYTHONDONTWRITEBYTECODE=1
exec python3 bench/campaign.py "${args[@]}"
