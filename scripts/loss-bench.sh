#!/usr/bin/env bash
# Large-sample throughput under packet loss, Halyard against Cyclone DDS's ddsperf, side by
# side: two network namespaces joined by a veth pair (MTU 1500), nftables dropping PCT % of
# the UDP datagrams sent each way (scripts/netns.sh), reliable KEEP_ALL pub/sub at full speed.
# Runs alternate between the implementations so both see the same machine load.
#
#   sudo scripts/loss-bench.sh [--reps N] [--duration S] [--json FILE] SIZE:PCT ...
#   e.g. scripts/loss-bench.sh --reps 3 1M:10 1M:30 256k:30 1M:1
#
# --json FILE also writes every run and, per point, each implementation's worst, median and
# mean Mb/s (the benchmark campaign's report reads it as loss-bench.json, see bench/README.md).
# For each run it prints the subscriber's per-second rates; "Mb/s" is the mean of the
# per-second rates after the first second (start-up) and without the last (the publisher
# stops within it), as bench/README.md defines throughput. "lost" is the sequence gaps the
# subscriber counted: reliable KEEP_ALL must report 0. Needs root, iproute2, nftables,
# ddsperf (cyclonedds-tools) and a release build (cargo build --release -p halyard-cli).
set -euo pipefail
cd "$(dirname "$0")/.."

reps=3
duration=8
json=
args="$*"
points=()
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) points+=("$1"); shift ;;
    esac
done
[ ${#points[@]} -gt 0 ] || { sed -n '2,19p' "$0"; exit 2; }
halyard=target/release/halyard
[ -x "$halyard" ] || { echo "loss-bench: build first: cargo build --release -p halyard-cli" >&2; exit 2; }
command -v ddsperf >/dev/null || { echo "loss-bench: ddsperf not found (apt install cyclonedds-tools)" >&2; exit 2; }

export TAG=${TAG:-31}
out=$(mktemp -d)
trap 'scripts/netns.sh down "$TAG" >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
scripts/netns.sh up "$TAG" >/dev/null

# One run: prints "<Mb/s> <lost> <per-second rates>".
run() {
    local impl=$1 size=$2 cmd
    if [ "$impl" = halyard ]; then cmd=("$halyard" perf); else cmd=(ddsperf); fi
    scripts/netns.sh exec b "${cmd[@]}" -D $((duration + 4)) sub >"$out/sub" 2>&1 &
    local sub=$!
    sleep 0.5
    scripts/netns.sh exec a "${cmd[@]}" -Qminmatch:1 -Qinitwait:5 -D "$duration" pub size "$size" \
        >"$out/pub" 2>&1 || true
    wait "$sub" || true
    awk '/ size / { f = 0; for (i = 1; i <= NF; i++) { if ($i == "rate") r[++n] = $(i + 3); if ($i == "lost" && !f) { l = $(i + 1); f = 1 } } }
         END { s = 0; k = 0; for (i = 2; i < n; i++) { s += r[i]; k++ }
               printf "%.0f %s", (k ? s / k : 0), (l == "" ? "?" : l);
               for (i = 1; i <= n; i++) printf " %.0f", r[i]; print "" }' "$out/sub"
}

printf '%-6s %4s %-8s %4s %9s %6s  %s\n' size loss impl rep Mb/s lost "per-second Mb/s"
for p in "${points[@]}"; do
    size=${p%%:*} pct=${p##*:}
    scripts/netns.sh loss "$pct" "$TAG" >/dev/null
    declare -A sum=([halyard]=0 [ddsperf]=0)
    for rep in $(seq 1 "$reps"); do
        order=(halyard ddsperf)
        [ $((rep % 2)) -eq 0 ] && order=(ddsperf halyard)
        for impl in "${order[@]}"; do
            read -r mbps lost rates < <(run "$impl" "$size")
            printf '%-6s %3s%% %-8s %4s %9s %6s  %s\n' "$size" "$pct" "$impl" "$rep" "$mbps" "$lost" "$rates"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$size" "$pct" "$impl" "$rep" "$mbps" "$lost" "$rates" >>"$out/runs.tsv"
            sum[$impl]=$((sum[$impl] + mbps))
        done
    done
    h=$((sum[halyard] / reps)) c=$((sum[ddsperf] / reps))
    ratio=$(awk -v h="$h" -v c="$c" 'BEGIN { printf "%.2f", (c > 0 ? h / c : 0) }')
    printf '%-6s %3s%% mean of %d: halyard %d Mb/s, ddsperf %d Mb/s, ratio %s\n\n' "$size" "$pct" "$reps" "$h" "$c" "$ratio"
done

if [ -n "$json" ]; then
    python3 - "$out/runs.tsv" "$json" "$duration" "$args" <<'PY'
import json, statistics, sys
tsv, dest, duration = sys.argv[1], sys.argv[2], float(sys.argv[3])
points = {}
for line in open(tsv):
    size, pct, impl, rep, mbps, lost, rates = line.rstrip("\n").split("\t")
    pt = points.setdefault((size, int(pct)), {"size": size, "loss_pct": int(pct), "runs": []})
    pt["runs"].append({"impl": impl, "rep": int(rep), "mbps": float(mbps),
                       "lost": None if lost == "?" else int(lost),
                       "per_second_mbps": [float(x) for x in rates.split()]})
for pt in points.values():
    pt["summary"] = {}
    for impl in sorted({r["impl"] for r in pt["runs"]}):
        v = [r["mbps"] for r in pt["runs"] if r["impl"] == impl]
        pt["summary"][impl] = {"worst": min(v), "median": statistics.median(v),
                               "mean": statistics.mean(v), "runs": len(v)}
json.dump({"tool": "scripts/loss-bench.sh", "duration_s": duration,
           "command": "scripts/loss-bench.sh " + sys.argv[4], "points": list(points.values())},
          open(dest, "w"), indent=1)
PY
    echo "loss-bench: wrote $json"
fi
