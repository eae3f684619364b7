#!/usr/bin/env bash
# First side-by-side figures: halyard perf vs Cyclone ddsperf on loopback, same run, same
# command lines (ping/pong latency at 12 B and 1 KiB, pub/sub throughput at 1 KiB and 1 MiB).
# Prints the last statistics line of each run. Not a benchmark campaign (that is bench/).
set -uo pipefail
cd "$(dirname "$0")/.."
export HALYARD_INTERFACE=lo
export CYCLONEDDS_URI='<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>'
H=./target/release/halyard
D=${D:-5}
pair() { # name, long-lived command, measuring command, which output to report
    local name=$1 a=$2 b=$3 report=$4
    $a > /tmp/cmp_a.txt 2>&1 & local pa=$!
    sleep 0.5
    $b > /tmp/cmp_b.txt 2>&1
    wait $pa
    local f=/tmp/cmp_$report.txt
    printf '%-34s %s\n' "$name" "$(grep -E 'size [0-9]+ (mean|total)' $f | tail -1 | cut -d' ' -f3-)"
}
for size in 0 1k; do
  pair "ddsperf ping/pong size $size" "ddsperf -D $((D+1)) pong" "ddsperf -D $D ping size $size" b
  pair "halyard ping/pong size $size" "$H perf -D $((D+1)) pong" "$H perf -D $D ping size $size" b
done
for size in 1k 1M; do
  pair "ddsperf pub/sub size $size" "ddsperf -D $((D+1)) sub" "ddsperf -D $D pub size $size" a
  pair "halyard pub/sub size $size" "$H perf -D $((D+1)) sub" "$H perf -D $D pub size $size" a
done
