#!/bin/sh
# Build the raw UDP perf peer (bench/PEERS.md) into target/bench-peers/udp-perf
# (relative to the repository root).  Idempotent: recompiles only when the
# source (or this script) is newer than the binary.  Works from any cwd;
# prints the binary's path on stdout (compiler output goes to stderr).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src="$here/udpperf.c"
out="$root/target/bench-peers/udp-perf"
if [ ! -x "$out" ] || [ "$src" -nt "$out" ] || [ "$here/build.sh" -nt "$out" ]; then
  mkdir -p "$(dirname "$out")"
  tmp="$out.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  ${CC:-gcc} -std=c11 -O2 -Wall -Wextra -Werror -o "$tmp" "$src" -lm >&2
  mv -f "$tmp" "$out"
fi
echo "$out"
