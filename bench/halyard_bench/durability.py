"""The durability dimension's whole-service figures (issue 12): ``halyard durability-bench``
writes N samples of 1 KB through a PERSISTENT writer into a standalone service on a fresh
store, reports the disk bytes per sample, restarts the service on that file and times a late
reader's catch-up. Its four lines are parsed into ``results.json`` (``durability_bench``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from .peers import halyard_exe

SIZE = 1024
_LINES = {
    "stored": re.compile(r"stored (\d+) samples of (\d+) B in ([\d.]+) s \(([\d.]+) kS/s ([\d.]+) Mb/s\) commits (\d+)"),
    "disk": re.compile(r"disk ([\d.]+) B/sample \((\d+) B\)"),
    "reload": re.compile(r"reload (\d+) samples in ([\d.]+) s"),
    "catchup": re.compile(r"catch-up (\d+) samples of (\d+) B in ([\d.]+) s \(([\d.]+) kS/s ([\d.]+) Mb/s\)"),
}


def parse(text: str) -> dict:
    """The figures of ``halyard durability-bench``'s output (those it printed)."""
    out: dict = {}
    for line in text.splitlines():
        for name, rx in _LINES.items():
            m = rx.search(line)
            if not m:
                continue
            g = m.groups()
            if name == "stored":
                out.update(samples=int(g[0]), size=int(g[1]), store_s=float(g[2]),
                           store_kps=float(g[3]), store_mbps=float(g[4]), commits=int(g[5]))
            elif name == "disk":
                out.update(disk_bytes_per_sample=float(g[0]), disk_bytes=int(g[1]))
            elif name == "reload":
                out.update(reload_samples=int(g[0]), reload_s=float(g[1]))
            else:
                out.update(catchup_samples=int(g[0]), catchup_s=float(g[2]),
                           catchup_kps=float(g[3]), catchup_mbps=float(g[4]))
    return out


def run(root: str, out_dir: str, samples: int, domain: int, data: dict) -> None:
    """Runs the bench into ``data["durability_bench"]`` (or ``durability_bench_failed``)."""
    exe = halyard_exe(root)
    store = os.path.join(out_dir, "raw", "durability-bench.store")
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    cmd = [exe, "durability-bench", "--samples", str(samples), "--size", str(SIZE),
           "--store", store, "--domain", str(domain)]
    print(f"durability-bench: {' '.join(cmd)}", file=sys.stderr, flush=True)
    env = dict(os.environ, HALYARD_INTERFACE="lo")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        text, rc = p.stdout + p.stderr, p.returncode
    except (OSError, subprocess.TimeoutExpired) as e:
        text, rc = str(e), None
    finally:
        for suffix in ("", "-journal", "-wal", "-shm"):
            if os.path.exists(store + suffix):
                os.remove(store + suffix)
    with open(os.path.join(out_dir, "raw", "durability-bench.log"), "w", encoding="utf-8") as f:
        f.write(" ".join(cmd) + "\n" + text)
    figures = parse(text)
    figures["command"] = " ".join(cmd)
    if rc != 0 or "catchup_s" not in figures:
        data["durability_bench_failed"] = f"exit {rc}: {text.strip()[-300:]}"
        print(f"durability-bench: FAILED ({data['durability_bench_failed']})", file=sys.stderr, flush=True)
    data["durability_bench"] = figures
    print(f"durability-bench: {figures}", file=sys.stderr, flush=True)
