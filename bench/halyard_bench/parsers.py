"""Parsers for the ddsperf-format output every peer prints (bench/PEERS.md, ddsperf
conventions §7) and for ``--latency-dump`` files.

Every parser is tolerant: lines it does not recognise (discovery messages, CPU lines, the
pub write-latency histogram, usage text, anything a peer adds) are skipped, and a malformed
number makes the line unrecognised rather than raising.
"""

from __future__ import annotations

import gzip
import math
import re
from dataclasses import dataclass, field
from typing import Iterable

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"
_PREFIX = r"^\[(?P<pid>\d+)\]\s+(?P<t>\d+(?:\.\d+)?)\s+"

PING_RE = re.compile(
    _PREFIX
    + r"(?P<peer>\S+)\s+(?:sublat\s+)?size\s+(?P<size>\d+)\s+"
    + rf"mean\s+(?P<mean>{_NUM})us\s+min\s+(?P<min>{_NUM})us\s+"
    + rf"50%\s+(?P<p50>{_NUM})us\s+90%\s+(?P<p90>{_NUM})us\s+99%\s+(?P<p99>{_NUM})us\s+"
    + rf"max\s+(?P<max>{_NUM})us\s+cnt\s+(?P<cnt>\d+)"
)
SUB_RE = re.compile(
    _PREFIX
    + r"size\s+(?P<size>\d+)\s+total\s+(?P<total>\d+)\s+lost\s+(?P<lost>\d+)\s+"
    + r"delta\s+(?P<delta>\d+)\s+lost\s+(?P<dlost>\d+)\s+"
    + rf"rate\s+(?P<ks>{_NUM})\s+kS/s\s+(?P<mbps>{_NUM})\s+Mb/s"
)
PUB_SENT_RE = re.compile(_PREFIX + r"pub\s+sent\s+(?P<sent>\d+)\s*$")
RSS_RE = re.compile(_PREFIX + r"rss:(?P<rss>[\d.]+)(?P<unit>[kM]B)\b")
ERROR_RE = re.compile(r"^(?:\[\d+\]\s+(?:\d+(?:\.\d+)?\s+)?)?error:\s*(?P<msg>.*)$")


@dataclass
class PingLine:
    """One per-second latency line of a pinging process (one per answering peer)."""

    pid: int
    t: float
    peer: str
    size: int
    mean: float
    min: float
    p50: float
    p90: float
    p99: float
    max: float
    cnt: int


@dataclass
class SubLine:
    """One per-second line of a subscribing process."""

    pid: int
    t: float
    size: int
    total: int
    lost: int
    delta: int
    dlost: int
    rate_ks: float
    rate_mbps: float


@dataclass
class PeerOutput:
    """Everything recognised in one process's stdout + stderr."""

    ping: list[PingLine] = field(default_factory=list)
    sub: list[SubLine] = field(default_factory=list)
    pub_sent: int | None = None
    rss_mb: float | None = None  # the last self-reported RSS (ddsperf CPU line), if any
    errors: list[str] = field(default_factory=list)
    lines: int = 0
    unknown: int = 0

    @property
    def has_stats(self) -> bool:
        return bool(self.ping or self.sub or self.pub_sent is not None)


def _f(s: str) -> float:
    return float(s)


def parse_ping_line(line: str) -> PingLine | None:
    """Parses a ping line, or returns None."""
    m = PING_RE.match(line.strip())
    if not m:
        return None
    try:
        return PingLine(
            pid=int(m["pid"]), t=_f(m["t"]), peer=m["peer"], size=int(m["size"]),
            mean=_f(m["mean"]), min=_f(m["min"]), p50=_f(m["p50"]), p90=_f(m["p90"]),
            p99=_f(m["p99"]), max=_f(m["max"]), cnt=int(m["cnt"]),
        )
    except ValueError:
        return None


def parse_sub_line(line: str) -> SubLine | None:
    """Parses a sub line, or returns None."""
    m = SUB_RE.match(line.strip())
    if not m:
        return None
    try:
        return SubLine(
            pid=int(m["pid"]), t=_f(m["t"]), size=int(m["size"]), total=int(m["total"]),
            lost=int(m["lost"]), delta=int(m["delta"]), dlost=int(m["dlost"]),
            rate_ks=_f(m["ks"]), rate_mbps=_f(m["mbps"]),
        )
    except ValueError:
        return None


def parse_output(text: str) -> PeerOutput:
    """Parses a process's whole output (stdout and stderr may be concatenated)."""
    out = PeerOutput()
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        out.lines += 1
        if (p := parse_ping_line(line)) is not None:
            out.ping.append(p)
        elif (s := parse_sub_line(line)) is not None:
            out.sub.append(s)
        elif (m := PUB_SENT_RE.match(line)) is not None:
            out.pub_sent = int(m["sent"])
        elif (m := RSS_RE.match(line)) is not None:
            v = float(m["rss"])
            out.rss_mb = v / 1024.0 if m["unit"] == "kB" else v
        elif (m := ERROR_RE.match(line)) is not None:
            out.errors.append(m["msg"].strip())
        else:
            out.unknown += 1
    return out


def parse_dump(lines: Iterable[str]) -> list[tuple[float, int]]:
    """Parses a ``--latency-dump`` file: ``SECONDS_SINCE_START LATENCY_NS`` per line.

    Returns (seconds, nanoseconds) pairs; blank, comment and malformed lines and
    non-finite or negative values are skipped.
    """
    samples: list[tuple[float, int]] = []
    for raw in lines:
        parts = raw.split()
        if len(parts) < 2 or parts[0].startswith("#"):
            continue
        try:
            t = float(parts[0])
            ns = int(float(parts[1])) if not parts[1].isdigit() else int(parts[1])
        except ValueError:
            continue
        if not math.isfinite(t) or ns < 0:
            continue
        samples.append((t, ns))
    return samples


def read_dump(path: str) -> list[tuple[float, int]] | None:
    """Reads a latency dump file (or its ``.gz``); None when it does not exist or cannot be read."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                return parse_dump(f)
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_dump(f)
    except (OSError, EOFError):
        return None


def first_error(*outputs: PeerOutput, stderr_tail: str = "") -> str | None:
    """The first error message of the given outputs, else the last stderr line, else None."""
    for o in outputs:
        if o.errors:
            return o.errors[0]
    tail = [ln.strip() for ln in stderr_tail.splitlines() if ln.strip()]
    return tail[-1] if tail else None
