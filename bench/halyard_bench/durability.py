"""The durability dimension's whole-service figures (issue 12): ``halyard durability-bench``
writes N samples of 1 KB through a PERSISTENT writer into a standalone service on a fresh
store, reports the disk bytes per sample, restarts the service on that file and times a late
reader's catch-up. Its four lines are parsed into ``results.json`` (``durability_bench``).

Also the *append floor* (``durability_floor``): what one thread gets from appending 1 KB
records to a fresh file, 16 records per ``write`` (a store's page), with nothing else running and
no fsync. Any store that keeps its samples in files pays at least that per sample: it bounds
PERSISTENT throughput on the machine of the run the way the raw UDP peer bounds VOLATILE
throughput."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time

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


FLOOR_RECORDS_PER_WRITE = 16
FLOOR_PAUSE_S = 3.0  # between rounds: the freed page-cache pages of the last file settle


def append_floor(path: str, seconds: float, size: int = SIZE) -> dict:
    """Appends ``size``-byte records to a fresh file at ``path`` for ``seconds``, 16 per write;
    returns records per second and this thread's CPU microseconds per record. Removes the file."""
    chunk = b"\x5a" * (size * FLOOR_RECORDS_PER_WRITE)
    if os.path.exists(path):
        os.remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    written = 0
    try:
        cpu0, t0 = time.thread_time(), time.perf_counter()
        end = t0 + seconds
        while True:
            for _ in range(64):
                written += os.write(fd, chunk)
            if time.perf_counter() >= end:
                break
        wall, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
    finally:
        os.close(fd)
        os.remove(path)
    records = written / size
    return {"records_per_s": records / wall, "cpu_us_per_record": cpu / records * 1e6}


def run_append_floor(out_dir: str, rounds: int, seconds: float, data: dict) -> None:
    """Measures the append floor ``rounds`` times into ``data["durability_floor"]`` (median and
    each round), in the campaign's raw directory (the file system the stores were on)."""
    path = os.path.join(out_dir, "raw", "append-floor.bin")
    each = []
    try:
        for _ in range(max(1, rounds)):
            time.sleep(FLOOR_PAUSE_S)
            each.append(append_floor(path, seconds))
    except OSError as e:
        data["durability_floor_failed"] = str(e)
        print(f"append floor: FAILED ({e})", file=sys.stderr, flush=True)
        return
    data["durability_floor"] = {
        "size": SIZE,
        "seconds": seconds,
        "records_per_write": FLOOR_RECORDS_PER_WRITE,
        "records_per_s": statistics.median(r["records_per_s"] for r in each),
        "cpu_us_per_record": statistics.median(r["cpu_us_per_record"] for r in each),
        "rounds": each,
    }
    print(f"append floor: {data['durability_floor']}", file=sys.stderr, flush=True)
