"""Statistics: latency summaries (exact from raw samples, approximate from per-second ping
lines), warm-up trimming and per-second throughput series.

Definitions (bench/README.md repeats them):

- Percentiles of raw samples use the nearest-rank rule: the p-quantile of n sorted values
  is ``v[ceil(p·n) − 1]`` (p = 1 gives the maximum).
- Warm-up: the first second of traffic is excluded. For a latency dump that is every sample
  with ``t < t_first + 1``; for per-second lines it is the first line that carries data (it
  covers the start of traffic) and any line at ``SECS ≤ 1.05``. When that leaves nothing
  (a very short run) everything is used and the result is flagged ``warmup_included``.
- From ping lines only (ddsperf keeps no raw samples): Ave is the count-weighted mean of the
  per-second means (exact), Min/Max the extremes (exact), the 50/90/99 % figures are
  count-weighted means of the per-second percentiles (an approximation), Std and 99.99 %
  are not available.
- Throughput: the mean of per-second rates after warm-up; the last data line (the interval
  in which the publisher stopped, usually partial) is excluded too when at least three data
  lines exist; seconds without a line between data lines count as zero.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from .parsers import PingLine, SubLine

WARMUP_S = 1.0
EARLY_LINE_S = 1.05

# Fractions at which CDFs are stored (enough for a smooth plot, small in results.json).
CDF_FRACTIONS: tuple[float, ...] = tuple(
    [i / 100 for i in range(0, 100)] + [0.995, 0.999, 0.9999, 1.0]
)


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile of already sorted values (p in [0, 1])."""
    if not sorted_values:
        return math.nan
    n = len(sorted_values)
    k = max(1, math.ceil(p * n))
    return sorted_values[min(k, n) - 1]


def median(values: Iterable[float]) -> float:
    """Median of finite values (mean of the middle two); NaN when there are none."""
    v = sorted(x for x in values if x is not None and math.isfinite(x))
    if not v:
        return math.nan
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def geomean(values: Iterable[float]) -> float:
    """Geometric mean of positive finite values; NaN when there are none."""
    v = [x for x in values if x is not None and math.isfinite(x) and x > 0]
    if not v:
        return math.nan
    return math.exp(sum(math.log(x) for x in v) / len(v))


def finite(x: float | None) -> bool:
    """True for a real, finite number."""
    return isinstance(x, (int, float)) and math.isfinite(x)


@dataclass
class LatencyStats:
    """A latency summary in microseconds (one-way = round trip / 2)."""

    ave: float
    std: float | None
    min: float
    max: float
    p50: float
    p90: float
    p99: float
    p9999: float | None
    count: int
    source: str  # "dump" (raw samples) or "lines" (per-second ping lines)
    approx: bool  # True when the percentiles are count-weighted means of per-second ones
    warmup_included: bool = False
    cdf: list[tuple[float, float]] = field(default_factory=list)  # (latency µs, fraction)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cdf"] = [[round(x, 3), f] for x, f in self.cdf]
        return d


def latency_from_samples(samples_us: Sequence[float], warmup_included: bool = False) -> LatencyStats | None:
    """Exact summary of raw one-way latencies (µs); None without samples."""
    if not samples_us:
        return None
    v = sorted(samples_us)
    n = len(v)
    ave = sum(v) / n
    std = math.sqrt(sum((x - ave) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    cdf = [(percentile(v, f) if f > 0 else v[0], f) for f in CDF_FRACTIONS]
    return LatencyStats(
        ave=ave, std=std, min=v[0], max=v[-1], p50=percentile(v, 0.5),
        p90=percentile(v, 0.9), p99=percentile(v, 0.99), p9999=percentile(v, 0.9999),
        count=n, source="dump", approx=False, warmup_included=warmup_included, cdf=cdf,
    )


def trim_dump(samples: Sequence[tuple[float, int]]) -> tuple[list[float], bool]:
    """Drops the first second of a dump; returns (latencies in µs, warmup_included)."""
    if not samples:
        return [], False
    t0 = min(t for t, _ in samples)
    kept = [ns / 1e3 for t, ns in samples if t >= t0 + WARMUP_S]
    if kept:
        return kept, False
    return [ns / 1e3 for _, ns in samples], True


def trim_lines(lines: Sequence, has_data=lambda ln: True) -> tuple[list, bool]:
    """Drops warm-up lines (first data line, lines at SECS ≤ 1.05) of one series.

    Returns (kept lines, warmup_included). ``has_data`` tells lines with data apart.
    """
    data = sorted((ln for ln in lines if has_data(ln)), key=lambda ln: ln.t)
    if not data:
        return [], False
    kept = [ln for ln in data[1:] if ln.t > EARLY_LINE_S]
    if kept:
        return kept, False
    return data, True


def latency_from_ping_lines(lines: Sequence[PingLine]) -> LatencyStats | None:
    """Approximate whole-run summary from per-second ping lines (already trimmed)."""
    lines = [ln for ln in lines if ln.cnt > 0]
    if not lines:
        return None
    n = sum(ln.cnt for ln in lines)

    def wmean(attr: str) -> float:
        return sum(getattr(ln, attr) * ln.cnt for ln in lines) / n

    lo = min(ln.min for ln in lines)
    hi = max(ln.max for ln in lines)
    p50, p90, p99 = wmean("p50"), wmean("p90"), wmean("p99")
    cdf = [(lo, 0.0), (p50, 0.5), (p90, 0.9), (p99, 0.99), (hi, 1.0)]
    return LatencyStats(
        ave=wmean("mean"), std=None, min=lo, max=hi, p50=p50, p90=p90, p99=p99,
        p9999=None, count=n, source="lines", approx=True, cdf=cdf,
    )


def ping_series(lines: Sequence[PingLine]) -> dict[str, list[PingLine]]:
    """Groups ping lines by answering peer (HOST:PID)."""
    series: dict[str, list[PingLine]] = {}
    for ln in lines:
        series.setdefault(ln.peer, []).append(ln)
    return series


def latency_per_peer(lines: Sequence[PingLine]) -> tuple[dict[str, LatencyStats], bool]:
    """Per answering peer summaries from ping lines; returns (stats, any warm-up included)."""
    result: dict[str, LatencyStats] = {}
    any_warm = False
    for peer, series in ping_series(lines).items():
        kept, warm = trim_lines(series, lambda ln: ln.cnt > 0)
        st = latency_from_ping_lines(kept)
        if st is not None:
            st.warmup_included = warm
            any_warm |= warm
            result[peer] = st
    return result, any_warm


def latency_all_lines(lines: Sequence[PingLine]) -> LatencyStats | None:
    """Whole-run summary over all answering peers from ping lines (each series trimmed)."""
    kept_all: list[PingLine] = []
    warm_any = False
    for series in ping_series(lines).values():
        kept, warm = trim_lines(series, lambda ln: ln.cnt > 0)
        kept_all.extend(kept)
        warm_any |= warm
    st = latency_from_ping_lines(kept_all)
    if st is not None:
        st.warmup_included = warm_any
    return st


@dataclass
class SubStats:
    """Throughput seen by one subscriber."""

    samples_per_s: float  # mean of per-second rates after warm-up
    mbps: float  # the same in Mb/s (1e6 bits of `size`-byte samples)
    per_second: list[float]  # samples/s of each measured second
    total: int  # samples received over the whole run
    lost: int  # samples lost over the whole run (sequence gaps)
    size: int
    warmup_included: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def sub_stats(lines: Sequence[SubLine]) -> SubStats | None:
    """Throughput summary of one subscriber's lines; None when it received nothing."""
    if not lines:
        return None
    ordered = sorted(lines, key=lambda ln: ln.t)
    last = ordered[-1]
    total = max(ln.total for ln in ordered)
    lost = max(ln.lost for ln in ordered)
    size = last.size
    data = [ln for ln in ordered if ln.delta > 0]
    if not data:
        return SubStats(0.0, 0.0, [], total, lost, size)
    warm = False
    if len(data) >= 3:
        measured = data[1:-1]
    elif len(data) == 2:
        measured = data[1:]
    else:
        measured, warm = data, True
    early = [ln for ln in measured if ln.t <= EARLY_LINE_S]
    if early and len(early) < len(measured):
        measured = [ln for ln in measured if ln.t > EARLY_LINE_S]
    rates: list[float] = []
    prev_t = None if warm else data[0].t
    for ln in measured:
        dt = 1.0
        if prev_t is not None:
            gap = ln.t - prev_t
            if gap > 1.5:
                rates.extend([0.0] * (round(gap) - 1))
            elif 0.5 < gap < 1.5:
                dt = gap
        rates.append(ln.delta / dt)
        prev_t = ln.t
    sps = sum(rates) / len(rates)
    return SubStats(
        samples_per_s=sps, mbps=sps * size * 8 / 1e6, per_second=[round(r, 3) for r in rates],
        total=total, lost=lost, size=size, warmup_included=warm,
    )
