#!/usr/bin/env python3
"""Halyard's benchmark campaign: Halyard vs Cyclone ddsperf, Fast DDS and raw UDP, side by side.

For every configuration point the peers run back to back (the order rotates from point to
point) so they see the same machine state. Results go to OUT: results.json (everything),
results.csv (one row per peer per point), report.md, report.html (self-contained), plots/
and raw/ (every process's output). See bench/README.md.

    python3 bench/campaign.py --quick [--peers halyard,cyclone] [--out DIR]
    python3 bench/campaign.py --full --repeat 3
    python3 bench/campaign.py --report-only bench/results/<run>/

Usually started through scripts/bench.sh, which builds Halyard and the peers first.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from halyard_bench import durability, machine, plan, report, results  # noqa: E402
from halyard_bench import security as sec  # noqa: E402
from halyard_bench.peers import ALL_PEERS, DURABLE_PEERS, halyard_exe, make_peers, peer_versions, probe_caps  # noqa: E402
from halyard_bench.procs import Spawner  # noqa: E402
from halyard_bench.runner import RunContext, execute  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="campaign.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="≈3 min: a few sizes, 3 s runs (default)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="every dimension and size, 8 s runs (hours with the full seed-000 grid)")
    mode.add_argument("--tiny", dest="mode", action="store_const", const="tiny",
                      help="2 sizes, latency + throughput, 2 s runs (the integration test)")
    mode.add_argument("--seed000", dest="mode", action="store_const", const="seed000",
                      help="seed 000's evaluation (the seed000 dimension, Halyard and raw UDP by default) "
                           "with the CTI node's TAXII-polling baseline (bench/cti/e2e.py); about 50 min")
    ap.add_argument("--out", help="output directory (default bench/results/<UTC time>-<mode>/)")
    ap.add_argument("--peers", default=None,
                    help="comma-separated subset of halyard,cyclone,fastdds,udp (default: all)")
    ap.add_argument("--duration", type=float, help="seconds per run, overriding the mode's")
    ap.add_argument("--repeat", type=int, default=1, help="run every point K times; report the median run")
    ap.add_argument("--dims", default=",".join(plan.DEFAULT_DIMENSIONS),
                    help="comma-separated dimensions: " + ",".join(plan.DIMENSIONS)
                    + " (default: all but security)")
    ap.add_argument("--security-levels", default=",".join(sec.LEVELS),
                    help="levels of the security dimension (default: all): " + ",".join(sec.LEVELS))
    ap.add_argument("--rate-grid", choices=("one", "small", "full"),
                    help="seed-000 grid (default: one for --quick, full for --full)")
    ap.add_argument("--rate-samples", type=int, help="seed-000 samples per run (default 1000; quick 300)")
    ap.add_argument("--domain", type=int, default=7,
                    help="DDS domain id of every run (default 7, away from tests on domain 0)")
    ap.add_argument("--extra-args", action="append", default=[], metavar="PEER=ARGS",
                    help="extra options for one peer's commands, e.g. 'halyard=--no-batching'")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("--report-only", metavar="DIR", help="regenerate the reports from DIR/results.json")
    ap.add_argument("--no-node", action="store_true",
                    help="--seed000: skip the CTI node's run (TAXII-polling baseline, node CPU and RSS)")
    a = ap.parse_args(argv)
    a.mode = a.mode or "quick"
    if a.mode == "seed000":
        # The seed's evaluation: its own dimension, full-length runs.
        a.mode, a.seed000 = "full", True
        a.dims = "seed000"
        a.peers = a.peers or "halyard,udp"
    else:
        a.seed000 = False
    a.peers = a.peers or ",".join(ALL_PEERS)
    return a


class Progress:
    """Current run i/N, elapsed and ETA on stderr."""

    OVERHEAD_S = 1.5

    def __init__(self, estimates: list[float]) -> None:
        self.estimates = estimates
        self.t0 = time.monotonic()
        self.done = 0

    @staticmethod
    def _hms(s: float) -> str:
        s = max(0, int(s))
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"

    def start(self, what: str) -> None:
        elapsed = time.monotonic() - self.t0
        est_done = sum(self.estimates[: self.done])
        factor = elapsed / est_done if est_done > 0 else 1.0
        remaining = sum(self.estimates[self.done:]) * factor
        print(f"[{self.done + 1}/{len(self.estimates)}] {self._hms(elapsed)} elapsed, "
              f"ETA {self._hms(remaining)}  {what}", file=sys.stderr, flush=True)

    def finish(self, summary: str) -> None:
        self.done += 1
        print(f"      {summary}", file=sys.stderr, flush=True)


def _run_summary(run: dict) -> str:
    st = run.get("stats") or {}
    bits = [run["status"]]
    if run["status"] != "ok":
        bits.append(run.get("reason", ""))
    lat = st.get("latency")
    if lat:
        bits.append(f"p50 {lat['p50']:.1f} us ({lat['source']}, n={lat['count']})")
    thr = st.get("throughput")
    if thr:
        bits.append(f"{thr['samples_per_s']:.0f} S/s {thr['mbps']:.1f} Mb/s lost {thr['lost']}")
    if st.get("success_pct") is not None:
        bits.append(f"success {st['success_pct']:.1f}%")
    bits.append(f"{run['seconds']:.1f}s")
    return "  ".join(b for b in bits if b)


def _extra_args(specs: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for spec in specs:
        name, _, args = spec.partition("=")
        if not args or name not in ALL_PEERS:
            sys.exit(f"--extra-args {spec!r}: expected PEER=ARGS with PEER one of {','.join(ALL_PEERS)}")
        out.setdefault(name, []).extend(args.split())
    return out


def _ignore_results_dir(path: str) -> None:
    """Keeps the default results directory out of git (a .gitignore of its own)."""
    os.makedirs(path, exist_ok=True)
    marker = os.path.join(path, ".gitignore")
    if not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as f:
            f.write("# benchmark results (bench/campaign.py); not versioned\n*\n")


def run_loss_bench(out: str, data: dict) -> None:
    """The "loss" dimension: scripts/loss-bench.sh (1 MiB at 30 % loss each way, Halyard and
    ddsperf alternating) into OUT/loss-bench.json, its log into OUT/raw/loss-bench.log. It
    needs root (network namespaces, nftables); without, the report says the row was not run."""
    if os.geteuid() != 0:
        data["loss_bench_skipped"] = "needs root (network namespaces and nftables)"
        print(f"loss-bench: skipped: {data['loss_bench_skipped']}", file=sys.stderr, flush=True)
        return
    dest = os.path.join(out, "loss-bench.json")
    cmd = [os.path.join(ROOT, "scripts", "loss-bench.sh"), "--json", dest, *plan.LOSS_BENCH_ARGS]
    print(f"loss-bench: {' '.join(cmd)} (about 2 minutes)", file=sys.stderr, flush=True)
    with open(os.path.join(out, "raw", "loss-bench.log"), "w", encoding="utf-8") as log:
        rc = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False).returncode
    if rc != 0 or not os.path.exists(dest):
        data["loss_bench_skipped"] = f"scripts/loss-bench.sh exited {rc} (see raw/loss-bench.log)"
        print(f"loss-bench: {data['loss_bench_skipped']}", file=sys.stderr, flush=True)
        return
    with open(dest, encoding="utf-8") as f:
        data["loss_bench"] = json.load(f)


def run_node_baseline(out: str, data: dict) -> None:
    """--seed000: the CTI node's end-to-end run (bench/cti/e2e.py: publish → served latency,
    the TAXII-polling baseline with medallion and taxii2-client, the node's CPU and RSS at
    125 objects/s), its results.json kept as ``seed000_node``."""
    exe = os.environ.get("HALYARD_CTI_BIN") or os.path.join(ROOT, "target", "release", "halyard-cti")
    node_out = os.path.join(out, "node")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "cti", "e2e.py"), "--bin", exe, "--load-seconds", "30",
           "--out", node_out]
    print("seed000: the CTI node's run: " + " ".join(cmd), file=sys.stderr, flush=True)
    if not os.path.exists(exe):
        data["seed000_node"] = {"error": f"{exe} is missing: cargo build --release -p halyard-cti"}
        return
    r = subprocess.run(cmd, cwd=ROOT)
    path = os.path.join(node_out, "results.json")
    if r.returncode != 0 or not os.path.exists(path):
        data["seed000_node"] = {"error": f"bench/cti/e2e.py exited {r.returncode}"}
        return
    with open(path, encoding="utf-8") as f:
        data["seed000_node"] = json.load(f)


def prepare_security(points: list[plan.Point], raw: str) -> dict[str, sec.Setup]:
    """One `halyard security init` set-up per secured level of the plan, under raw/security/
    (private keys: never committed), with an identity per process of the largest run."""
    levels = list(dict.fromkeys(p.security for p in points if p.security))
    if not levels:
        return {}
    names = sec.participants(max(p.receivers for p in points if p.security),
                             max(p.listeners for p in points if p.security))
    exe = halyard_exe(ROOT)
    setups = {}
    for level in levels:
        s = sec.prepare(exe, os.path.join(raw, "security"), level, names)
        setups[level] = s
        print(f"security {level}: " + (f"set-up in {s.dir}" if s.ok else f"SET-UP FAILED: {s.error}"),
              file=sys.stderr, flush=True)
    return setups


def run_campaign(a: argparse.Namespace, argv: list[str]) -> int:
    names = [p.strip() for p in a.peers.split(",") if p.strip()]
    bad = [n for n in names if n not in ALL_PEERS]
    if bad:
        sys.exit(f"unknown peer(s) {','.join(bad)}; choose from {','.join(ALL_PEERS)}")
    dims = tuple(d.strip() for d in a.dims.split(",") if d.strip())
    if any(d not in plan.DIMENSIONS for d in dims):
        sys.exit(f"--dims: choose from {','.join(plan.DIMENSIONS)}")
    try:
        levels = sec.parse_levels(a.security_levels)
    except ValueError as e:
        sys.exit(f"--security-levels: {e}")
    points = plan.build_plan(plan.PlanOptions(a.mode, a.duration, dims, levels, a.rate_samples, a.rate_grid))
    if a.list:
        for p in points:
            print(f"{p.key:40s} {p.duration:5.1f}s  {'+'.join(p.dims):22s} {p.describe()}")
        print(f"{len(points)} points x {len(names)} peers x {a.repeat}")
        return 0

    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if not a.out:
        _ignore_results_dir(os.path.join(ROOT, "bench", "results"))
    out = os.path.abspath(a.out or os.path.join(ROOT, "bench", "results", f"{stamp}-{a.mode}"))
    raw = os.path.join(out, "raw")
    os.makedirs(raw, exist_ok=True)
    print(f"campaign {a.mode}: results in {out}", file=sys.stderr, flush=True)

    spawner = Spawner()
    extra = _extra_args(a.extra_args)
    peers = make_peers(ROOT, names)
    for p in peers:
        p.extra_opts = extra.get(p.name, [])
    data: dict = {
        "schema": results.SCHEMA,
        "campaign": {
            "mode": a.mode, "argv": argv, "command_line": " ".join(["bench/campaign.py", *argv]),
            "invoked_as": os.environ.get("HALYARD_BENCH_INVOCATION") or " ".join(["bench/campaign.py", *argv]),
            "start": datetime.now(timezone.utc).isoformat(timespec="seconds"), "end": None,
            "peers_requested": names, "dims": list(dims), "repeat": a.repeat, "domain": a.domain,
            "duration_override": a.duration, "rate_grid": a.rate_grid, "rss_clean": spawner.clean_rss,
            "security_levels": list(levels) if "security" in dims else [],
            "interrupted": False,
        },
        "machine": machine.machine_facts(),
        "versions": peer_versions(ROOT),
        "peers": [],
        "points": [p.to_dict() for p in points],
        "runs": [],
        "rows": [],
    }

    def save() -> None:
        data["peers"] = [p.to_dict() for p in peers]
        data["rows"] = results.summary_rows(data["points"], data["runs"], data["peers"])
        results.write_json(os.path.join(out, "results.json"), data)
        results.write_csv(os.path.join(out, "results.csv"), data["rows"])

    def on_term(signum, frame):  # SIGTERM behaves like Ctrl-C: clean up, keep partial results
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)  # also when started with SIGINT ignored (background job)
    ctx = RunContext(spawner, raw, a.domain)
    ctx.security = prepare_security(points, raw)
    data["security"] = {lv: s.to_dict() for lv, s in ctx.security.items()}
    if ctx.security:  # the cipher floor of the security section, measured in this run
        data["security_cipher"] = sec.cipher_floor(halyard_exe(ROOT))
    status = 0
    try:
        for i, p in enumerate(peers):
            if p.available:
                print(f"probing {p.name} ...", file=sys.stderr, flush=True)
                probe_caps(p, spawner, a.domain, ctx.ports(2)[0])
            state = "ok" if p.available else f"SKIPPED: {p.reason}"
            missing = [k for k in ("minmatch", "latency_dump", "pub_ping_pct") if not getattr(p.caps, k)]
            print(f"  {p.name:8s} {state}" + (f" (without {', '.join(missing)})" if missing and p.available else ""),
                  file=sys.stderr, flush=True)
        active = [p for p in peers if p.available]
        schedule = []  # peers back to back per point; the order rotates between points and repeats
        for rep in range(a.repeat):
            for i, pt in enumerate(points):
                k = (i + rep) % len(active) if active else 0
                for peer in active[k:] + active[:k]:
                    if pt.durability and peer.name not in DURABLE_PEERS:
                        continue  # ddsperf and the raw UDP peer have no durability
                    if pt.sync and peer.name != "halyard":
                        continue  # the sync level is an option of Halyard's store
                    schedule.append((pt, peer, rep))
        prog = Progress([pt.duration + Progress.OVERHEAD_S + 0.3 * pt.receivers for pt, _, _ in schedule])
        save()
        for pt, peer, rep in schedule:
            prog.start(f"{pt.describe()}  [{peer.name}]" + (f" repeat {rep + 1}" if a.repeat > 1 else ""))
            run = execute(pt, peer, rep, ctx).to_dict()
            data["runs"].append(run)
            prog.finish(_run_summary(run))
            save()
        if "loss" in dims and a.mode != "tiny":
            run_loss_bench(out, data)
        if a.seed000 and not a.no_node:
            run_node_baseline(out, data)
        if "durability" in dims and any(p.name == "halyard" and p.available for p in peers):
            durability.run(ROOT, out, plan.DURABILITY_CATCHUP[a.mode], a.domain, data)
            durability.run_append_floor(out, a.repeat, a.duration or 3.0, data)
    except KeyboardInterrupt:
        print("interrupted: stopping processes, writing partial results", file=sys.stderr, flush=True)
        data["campaign"]["interrupted"] = True
        status = 130
    finally:
        spawner.cleanup()
    data["campaign"]["end"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    save()
    report.generate(out, results.load_json(os.path.join(out, "results.json")))
    print(f"wrote {out}/report.md, report.html, results.json, results.csv", file=sys.stderr)
    print(report.console_summary(results.load_json(os.path.join(out, "results.json"))))
    return status


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if a.report_only:
        d = os.path.abspath(a.report_only)
        data = results.load_json(os.path.join(d, "results.json"))
        report.generate(d, data)
        print(f"wrote {d}/report.md and report.html", file=sys.stderr)
        return 0
    return run_campaign(a, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
