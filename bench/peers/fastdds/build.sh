#!/bin/sh
# Build the Fast DDS perf peer (bench/PEERS.md contract) into
# <repo>/target/bench-peers/fastdds-perf; rebuilds only when a source is newer
# than the binary.  Prints the binary path.  Works from any directory.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
out="$repo/target/bench-peers/fastdds-perf"

missing=""
for h in /usr/include/fastdds/dds/domain/DomainParticipantFactory.hpp \
         /usr/include/fastdds/rtps/transport/UDPv4TransportDescriptor.h \
         /usr/include/fastcdr/Cdr.h; do
    [ -f "$h" ] || missing="$missing $h"
done
found_lib=""
for l in /usr/lib/*/libfastrtps.so /usr/lib/libfastrtps.so; do
    if [ -e "$l" ]; then found_lib=1; fi
done
if [ -z "$found_lib" ]; then missing="$missing libfastrtps.so"; fi
if [ -n "$missing" ]; then
    echo "error: Fast DDS 2.9 development files not found (missing:$missing)." >&2
    echo "       install them with: apt-get install libfastrtps-dev libfastcdr-dev" >&2
    exit 1
fi
for tool in g++ make; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool not found (apt-get install $tool)" >&2
        exit 1
    fi
done

make -s -C "$here" -f "$here/Makefile" OUT="$out" >&2
echo "$out"
