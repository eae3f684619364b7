#!/bin/sh
# Build the Cyclone DDS passive ping listener (bench/peers/cyclone/README.md)
# into target/bench-peers/cyclone-listen (relative to the repository root).
# Idempotent: regenerates and recompiles only when a source (listen.c,
# keyedseq.idl) or this script is newer than the binary.  Works from any cwd;
# prints the binary's path on stdout (idlc and compiler output go to stderr).
# Needs Cyclone DDS's idlc and C headers/library (Debian: cyclonedds-tools,
# cyclonedds-dev).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/target/bench-peers/cyclone-listen"
cc=${CC:-gcc}

stale=false
if [ ! -x "$out" ]; then
  stale=true
else
  for f in "$here/listen.c" "$here/keyedseq.idl" "$here/build.sh"; do
    if [ "$f" -nt "$out" ]; then
      stale=true
    fi
  done
fi

if $stale; then
  if ! command -v idlc >/dev/null 2>&1; then
    echo "cyclone-listen: Cyclone DDS's idlc not found; install the Debian packages: apt-get install cyclonedds-dev cyclonedds-tools" >&2
    exit 1
  fi
  if ! printf '#include <dds/dds.h>\n' | $cc -E -x c - >/dev/null 2>&1; then
    echo "cyclone-listen: Cyclone DDS headers (dds/dds.h) not found; install the Debian packages: apt-get install cyclonedds-dev cyclonedds-tools" >&2
    exit 1
  fi
  mkdir -p "$root/target/bench-peers"
  gen="$root/target/bench-peers/cyclone-build.$$"
  tmp="$out.tmp.$$"
  trap 'rm -rf "$gen" "$tmp"' EXIT
  mkdir -p "$gen"
  idlc -o "$gen" "$here/keyedseq.idl" >&2
  $cc -std=c11 -O2 -Wall -Wextra -Werror -I"$gen" -o "$tmp" \
    "$here/listen.c" "$gen/keyedseq.c" -lddsc -lpthread -lm >&2
  mv -f "$tmp" "$out"
fi
echo "$out"
