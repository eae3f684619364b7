#!/usr/bin/env bash
# Two network namespaces joined by a veth pair, for reproducing by hand what
# crates/halyard-cli/tests/netns_faults.rs tests (run as root; needs iproute2 + nftables).
# Traffic stays inside the namespaces: 10.77.TAG.1/24 (side a) and 10.77.TAG.2/24 (side b).
#
#   scripts/netns.sh up [TAG]              create hy_nf<TAG>_a / hy_nf<TAG>_b (default TAG 9)
#   scripts/netns.sh loss PCT [TAG]        drop PCT % of UDP sent each way (0 = none)
#   scripts/netns.sh partition on|off [TAG]  drop all UDP both ways / stop doing so
#   scripts/netns.sh exec a|b CMD...       (TAG from the environment, default 9)
#                                          run CMD in a side with HALYARD_INTERFACE and
#                                          CYCLONEDDS_URI set for its veth
#   scripts/netns.sh down [TAG]            delete both namespaces (and the veth pair)
#
# Example:
#   scripts/netns.sh up && scripts/netns.sh loss 10
#   scripts/netns.sh exec b target/release/halyard perf -D 20 sub &
#   scripts/netns.sh exec a ddsperf -D 10 pub 2000Hz size 1k
#   scripts/netns.sh down
set -euo pipefail

cmd=${1:-}
shift || true

ns_of() { echo "hy_nf${TAG}_$1"; }
dev_of() { echo "hynf${TAG}$1"; }

nft_in() { ip netns exec "$(ns_of "$1")" nft -f -; }

case "$cmd" in
up)
    TAG=${1:-${TAG:-9}}
    for s in a b; do ip netns del "$(ns_of $s)" 2>/dev/null || true; done
    ip link del "$(dev_of a)" 2>/dev/null || true
    ip netns add "$(ns_of a)"
    ip netns add "$(ns_of b)"
    ip link add "$(dev_of a)" type veth peer name "$(dev_of b)"
    n=1
    for s in a b; do
        ns=$(ns_of $s) dev=$(dev_of $s)
        ip link set "$dev" netns "$ns"
        ip -n "$ns" addr add "10.77.$TAG.$n/24" dev "$dev"
        ip -n "$ns" link set "$dev" up
        ip -n "$ns" link set lo up
        ip -n "$ns" route add 224.0.0.0/4 dev "$dev"
        nft_in $s <<EOF
table inet hynf {
  chain out { type filter hook output priority 0; policy accept; }
}
EOF
        n=$((n + 1))
    done
    echo "up: $(ns_of a) ($(dev_of a) 10.77.$TAG.1) <-> $(ns_of b) ($(dev_of b) 10.77.$TAG.2)"
    ;;
loss)
    pct=${1:?loss PCT}
    TAG=${2:-${TAG:-9}}
    for s in a b; do
        {
            echo "flush chain inet hynf out"
            if [ "$pct" -gt 0 ]; then
                echo "add rule inet hynf out oifname \"$(dev_of $s)\" meta l4proto udp numgen random mod 100 < $pct drop"
            fi
        } | nft_in $s
    done
    echo "loss: $pct % each way"
    ;;
partition)
    what=${1:?partition on|off}
    TAG=${2:-${TAG:-9}}
    for s in a b; do
        if [ "$what" = on ]; then
            nft_in $s <<EOF
table inet hypart {
  chain out { type filter hook output priority -10; policy accept; oifname "$(dev_of $s)" meta l4proto udp drop; }
}
EOF
        else
            echo "delete table inet hypart" | nft_in $s
        fi
    done
    echo "partition: $what"
    ;;
exec)
    side=${1:?exec a|b CMD...}
    shift
    TAG=${TAG:-9}
    dev=$(dev_of "$side")
    exec ip netns exec "$(ns_of "$side")" env HALYARD_INTERFACE="$dev" \
        CYCLONEDDS_URI="<General><Interfaces><NetworkInterface name=\"$dev\" multicast=\"true\"/></Interfaces></General>" \
        "$@"
    ;;
down)
    TAG=${1:-${TAG:-9}}
    for s in a b; do ip netns del "$(ns_of $s)" 2>/dev/null || true; done
    ip link del "$(dev_of a)" 2>/dev/null || true
    echo "down"
    ;;
*)
    sed -n '2,17p' "$0"
    exit 2
    ;;
esac
