"""The durability dimension's whole-service figures (issue 12): ``halyard durability-bench``
writes N samples of 1 KB through a PERSISTENT writer into a standalone service on a fresh
store, reports the disk bytes per sample, restarts the service on that file and times a late
reader's catch-up. Its four lines are parsed into ``results.json`` (``durability_bench``).

Also the *append floor* (``durability_floor``): what one thread gets from appending 1 KB
records to a fresh file, 16 records per ``write`` (a store's page), with nothing else running and
no fsync. Any store that keeps its samples in files pays at least that per sample: it bounds
PERSISTENT throughput on the machine of the run the way the raw UDP peer bounds VOLATILE
throughput. Beside it the *direct* floor: the same records 1024 to a write (a commit batch of
1 KB samples) with ``O_DIRECT``, past the page cache, and one fdatasync at the end: what a
store that writes its batches that way would pay instead."""

from __future__ import annotations

import mmap
import os
import re
import shutil
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


# The files of a store beside its path (journal, log, shared-memory index) and the directory
# of its payload segments (crates/halyard-store, "segments").
STORE_SUFFIXES = ("", "-journal", "-wal", "-shm")
PAYLOAD_DIR_SUFFIX = "-payloads"


def remove_store(store: str) -> int:
    """Removes a store's files and payload segments; returns the bytes they held."""
    total = 0
    for suffix in STORE_SUFFIXES:
        try:
            total += os.path.getsize(store + suffix)
            os.remove(store + suffix)
        except OSError:
            pass
    payloads = store + PAYLOAD_DIR_SUFFIX
    if os.path.isdir(payloads):
        for name in os.listdir(payloads):
            try:
                total += os.path.getsize(os.path.join(payloads, name))
            except OSError:
                pass
        shutil.rmtree(payloads, ignore_errors=True)
    return total


def run(root: str, out_dir: str, samples: int, domain: int, data: dict) -> None:
    """Runs the bench into ``data["durability_bench"]`` (or ``durability_bench_failed``)."""
    exe = halyard_exe(root)
    store = os.path.join(out_dir, "raw", "durability-bench.store")
    remove_store(store)
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
        remove_store(store)
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
DIRECT_RECORDS_PER_WRITE = 1024
FLOOR_PAUSE_S = 3.0  # between rounds: the freed page-cache pages of the last file settle


def append_floor(path: str, seconds: float, size: int = SIZE, direct: bool = False) -> dict:
    """Appends ``size``-byte records to a fresh file at ``path`` for ``seconds``, 16 per write
    (``direct``: 1024 per write with ``O_DIRECT``, then an fdatasync, timed too); returns
    records per second and this thread's CPU microseconds per record. Removes the file."""
    per_write = DIRECT_RECORDS_PER_WRITE if direct else FLOOR_RECORDS_PER_WRITE
    chunk = mmap.mmap(-1, size * per_write)  # page-aligned, as O_DIRECT wants
    chunk.write(b"\x5a" * (size * per_write))
    if os.path.exists(path):
        os.remove(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | (os.O_DIRECT if direct else 0)
    fd = os.open(path, flags, 0o600)
    written = 0
    try:
        cpu0, t0 = time.thread_time(), time.perf_counter()
        end = t0 + seconds
        while True:
            for _ in range(4 if direct else 64):
                written += os.write(fd, chunk)
            if time.perf_counter() >= end:
                break
        if direct:
            os.fdatasync(fd)
        wall, cpu = time.perf_counter() - t0, time.thread_time() - cpu0
    finally:
        os.close(fd)
        os.remove(path)
        chunk.close()
    records = written / size
    return {"records_per_s": records / wall, "cpu_us_per_record": cpu / records * 1e6}


def _floor_summary(each: list[dict], per_write: int, seconds: float) -> dict:
    return {
        "size": SIZE,
        "seconds": seconds,
        "records_per_write": per_write,
        "records_per_s": statistics.median(r["records_per_s"] for r in each),
        "cpu_us_per_record": statistics.median(r["cpu_us_per_record"] for r in each),
        "rounds": each,
    }


def run_append_floor(out_dir: str, rounds: int, seconds: float, data: dict) -> None:
    """Measures the append floor and the direct one ``rounds`` times each, alternating, into
    ``data["durability_floor"]`` and ``data["durability_floor_direct"]`` (median and each
    round), in the campaign's raw directory (the file system the stores were on). A floor
    that fails (``O_DIRECT`` refused by the file system, say) is recorded as failed."""
    path = os.path.join(out_dir, "raw", "append-floor.bin")
    each: dict[bool, list[dict]] = {False: [], True: []}
    failed: dict[bool, str] = {}
    for _ in range(max(1, rounds)):
        for direct in (False, True):
            if direct in failed:
                continue
            time.sleep(FLOOR_PAUSE_S)
            try:
                each[direct].append(append_floor(path, seconds, direct=direct))
            except OSError as e:
                failed[direct] = str(e)
    for direct, key, per_write in ((False, "durability_floor", FLOOR_RECORDS_PER_WRITE),
                                   (True, "durability_floor_direct", DIRECT_RECORDS_PER_WRITE)):
        if direct in failed:
            data[key + "_failed"] = failed[direct]
            print(f"{key}: FAILED ({failed[direct]})", file=sys.stderr, flush=True)
        else:
            data[key] = _floor_summary(each[direct], per_write, seconds)
            print(f"{key}: {data[key]}", file=sys.stderr, flush=True)
