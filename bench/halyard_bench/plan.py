"""The campaign's configuration points.

A *point* is one configuration (what runs, how big, how fast, how many receivers); every peer
runs every point. Points are shared between the dimensions that need them (the keyed/unkeyed
table reuses the KS 1024 B latency point, for instance), so each configuration runs once.

Dimensions:

- ``latency``      ping-pong, 1 ponger, reliable, KS, payload scan.
- ``throughput``   pub at full speed → 1 sub, reliable and best effort, payload scan.
- ``keyed``        -T KS size 16 / UK16 and KS size 1024 / UK1024, latency and throughput.
- ``subscribers``  ``ping 200Hz size 1024`` with N subscribers two ways: N pongers that all
                   answer, and (RTI perftest's way) 1 ponger plus N−1 passive subscribers
                   (``listen``) that receive every ping and answer none; 1…10 subs at full
                   speed, 1024 B.
- ``rate``         the threat-intelligence workload of seed 000: ``pub R Hz size S 100%``
                   with N subs for ≈1000 samples (latency, success rate, CPU, RSS).
- ``security``     issue 11: per DDS Security protection level (security.LEVELS), latency at
                   32 B and 1 KB, reliable throughput at 32 B, 1 KB and 63000 B, and the
                   seed-000 point (100 Hz, 1024 B, 10 subs). Level ``off`` is the plain
                   configuration (its points are the ordinary ones, shared with the other
                   dimensions); every other level's points carry ``security`` = the level.
                   Not part of any mode's default dimensions: ``--dims security``.
- ``seed000``      seed 000's whole evaluation, in its own layout (seed000_report.py): the
                   rate grid (50/75/100/125 msg/s x 32…8192 B, 1 sub; Table 11, Figures 11
                   and 14), the four protection levels at 50 msg/s (Figures 12, 15, 16), the
                   fully protected level at every rate (Table 12), 1/2/4/8/10 subscribers at
                   50 msg/s (Figure 13), each with the seed's QoS (RELIABLE, KEEP_ALL,
                   PERSISTENT through the embedded durability service); and the stress test
                   of its Figure 19 (reliable pub/sub at full speed per size, beside raw UDP
                   sockets). ``--seed000`` runs it, with the TAXII-polling baseline.
- ``durability``   issue 12: reliable throughput (32 B, 1 KB, 16 KB, 63000 B) and latency
                   (32 B, 1 KB, 63000 B), PERSISTENT beside the plain VOLATILE points, for the
                   peers that have a durability option (Halyard: its embedded durability
                   service, one SQLite store per process; Fast DDS: its SQLite persistence
                   plugin); then ``halyard durability-bench`` (stored, disk bytes per sample,
                   reload, and a late reader's catch-up of DURABILITY_CATCHUP samples of
                   1 KB). Not part of the default dimensions: ``--dims durability``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import security as sec

SIZES_FULL = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 63000, 1048576, 10485760]
SEED_RATES = [50, 75, 100, 125]
SEED_SIZES = [32, 256, 1024, 8192]
SEED_SIZES_FULL = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
SEED_SUBS = [1, 5, 10]
SEED_SUBS_FULL = [1, 2, 4, 8, 10]
SUBSCRIBER_COUNTS = [1, 2, 4, 8, 10]
SUBSCRIBER_PING_HZ = 200
DIMENSIONS = ("latency", "throughput", "keyed", "subscribers", "rate", "loss", "security", "durability",
              "seed000")
# What a campaign runs without --dims: everything but the security dimension (≈40 runs per
# peer and repeat, each with a secure handshake) and the durability one; asked for by name.
DEFAULT_DIMENSIONS = tuple(d for d in DIMENSIONS if d not in ("security", "durability", "seed000"))
# Seed 000's protection levels (its Figures 12, 15, 16) as security.LEVELS: no protection,
# integrity (signed), integrity + confidentiality (encrypted), and + origin authentication.
SEED_LEVELS = {"off": "no protection", "sign": "integrity", "encrypt": "integrity + confidentiality",
               "encrypt-origin": "integrity + confidentiality + origin authentication"}
# The rate of the seed's security and subscriber figures, and the stress test's run length.
SEED_FIGURE_RATE = 50
SEED_STRESS_S = 20.0
# The durability dimension: its sizes, and the late-joiner catch-up's sample count per mode
# (1 KB each; the catch-up target is stated for 1 M).
DURABILITY_THROUGHPUT_SIZES = [32, 1024, 16384, 63000]
DURABILITY_LATENCY_SIZES = [32, 1024, 63000]
# Halyard's default store sync level (halyard_store::SyncLevel's default: keep the two in
# step) and the levels measured besides it (throughput points only).
DURABILITY_DEFAULT_SYNC_LEVEL = "normal"
DURABILITY_OTHER_SYNC_LEVELS = ("process", "full")
DURABILITY_CATCHUP = {"tiny": 10_000, "quick": 200_000, "full": 1_000_000}
# The security dimension's points per level: latency sizes, reliable throughput
# sizes (63000 B is the campaign's "64 KB" point) and the seed-000 point (rate, size, subs).
SECURITY_LATENCY_SIZES = [32, 1024]
SECURITY_THROUGHPUT_SIZES = [32, 1024, 63000]
SECURITY_SEED_POINT = (100, 1024, 10)
# "loss" has no points: the campaign runs scripts/loss-bench.sh (root, network namespaces)
# after the points, except in tiny mode; its figures feed one target row.
LOSS_BENCH_ARGS = ["--reps", "5", "1M:30"]


@dataclass
class Point:
    """One configuration that every peer runs."""

    kind: str  # "latency" (ping/pong), "throughput" (pub/sub) or "rate" (pub R Hz X% / sub)
    size: int  # total sample size in bytes (12 + baggage for KS)
    reliable: bool = True
    topic: str = "KS"
    rate_hz: float | None = None  # ping or pub rate; None = as fast as possible
    receivers: int = 1
    duration: float = 3.0
    ping_pct: int | None = None  # rate kind: percentage of samples that are pings
    dims: list[str] = field(default_factory=list)
    listeners: int = 0  # latency kind: passive subscribers of the pings besides the pongers
    security: str | None = None  # a security.LEVELS level other than "off"; None = plain
    durability: str | None = None  # "persistent" (or another non-volatile kind); None = volatile
    sync: str | None = None  # Halyard's store sync level (HALYARD_DURABILITY_SYNC); None = default

    @property
    def key(self) -> str:
        """A stable identifier, also used in file names."""
        parts = [self.kind, self.topic, str(self.size), "rel" if self.reliable else "be"]
        if self.rate_hz:
            parts.append(f"{self.rate_hz:g}hz")
        parts.append(f"n{self.receivers}")
        if self.listeners:
            parts.append(f"l{self.listeners}")
        if self.security:
            parts.append(f"sec-{self.security}")
        if self.durability:
            parts.append(f"dur-{self.durability}")
        if self.sync:
            parts.append(f"sync-{self.sync}")
        return "-".join(parts)

    def describe(self) -> str:
        what = {"latency": "ping/pong", "throughput": "pub/sub", "rate": "pub-rate/sub"}[self.kind]
        rate = f" {self.rate_hz:g}Hz" if self.rate_hz else ""
        rel = "reliable" if self.reliable else "best-effort"
        ty = f"KS size {self.size}" if self.topic == "KS" else self.topic
        passive = f" +{self.listeners} passive" if self.listeners else ""
        secured = f" [security {self.security}]" if self.security else ""
        durable = f" [{self.durability}]" if self.durability else ""
        if self.sync:
            durable += f" [sync {self.sync}]"
        return f"{what}{rate} {ty} {rel} x{self.receivers}{passive}{secured}{durable}"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["key"] = self.key
        return d

    @staticmethod
    def from_dict(d: dict) -> "Point":
        d = {k: v for k, v in d.items() if k != "key"}
        return Point(**d)


@dataclass
class PlanOptions:
    mode: str = "quick"  # quick | full | tiny
    duration: float | None = None  # override of every point's duration
    dims: tuple[str, ...] = DEFAULT_DIMENSIONS
    security_levels: tuple[str, ...] = sec.LEVELS  # the security dimension's levels
    rate_samples: int | None = None  # seed-000 samples per run (default 1000, quick 300)
    rate_grid: str | None = None  # seed-000 grid: one | small | full (default: one for quick, full for full)


class _Builder:
    """Collects points, merging identical configurations."""

    def __init__(self) -> None:
        self.points: dict[str, Point] = {}

    def add(self, dim: str, p: Point) -> None:
        if p.key in self.points:
            if dim not in self.points[p.key].dims:
                self.points[p.key].dims.append(dim)
        else:
            p.dims = [dim]
            self.points[p.key] = p


def _size_of(topic: str, size: int) -> int:
    return {"UK16": 16, "UK1024": 1024}.get(topic, size)


def build_plan(opts: PlanOptions) -> list[Point]:
    """The points of a quick, full or tiny campaign, in running order."""
    b = _Builder()
    quick, tiny = opts.mode == "quick", opts.mode == "tiny"
    dur = opts.duration or {"tiny": 2.0, "quick": 2.5, "full": 8.0}[opts.mode]
    dims = opts.dims

    def lat(size: int, topic: str = "KS", rate: float | None = None, n: int = 1, dim: str = "latency",
            listeners: int = 0) -> None:
        b.add(dim, Point("latency", _size_of(topic, size), True, topic, rate, n, dur, listeners=listeners))

    def thr(size: int, reliable: bool = True, topic: str = "KS", n: int = 1, dim: str = "throughput") -> None:
        b.add(dim, Point("throughput", _size_of(topic, size), reliable, topic, None, n, dur))

    if tiny:
        for s in (32, 1024):
            if "latency" in dims:
                lat(s)
            if "throughput" in dims:
                thr(s)
        if "subscribers" in dims:  # the passive-subscriber path of every peer
            lat(1024, rate=SUBSCRIBER_PING_HZ, n=1, listeners=1, dim="subscribers")
        return list(b.points.values())

    if "latency" in dims:
        for s in ([32, 1024, 63000, 1048576, 10485760] if quick else SIZES_FULL):
            lat(s)
    if "throughput" in dims:
        for s in ([32, 1024, 63000, 1048576, 10485760] if quick else SIZES_FULL):
            thr(s)
        # Best effort: every size in a full campaign; the large-data targets' sizes in a
        # quick one.
        for s in ([1048576, 10485760] if quick else SIZES_FULL):
            thr(s, reliable=False)
    if "keyed" in dims:
        pairs = [(1024, "UK1024")] if quick else [(16, "UK16"), (1024, "UK1024")]
        for size, uk in pairs:
            for topic in ("KS", uk):
                lat(size, topic, dim="keyed")
                thr(size, topic=topic, dim="keyed")
    if "subscribers" in dims:
        for n in ([1, 10] if quick else SUBSCRIBER_COUNTS):
            lat(1024, rate=SUBSCRIBER_PING_HZ, n=n, dim="subscribers")
            if n > 1:
                lat(1024, rate=SUBSCRIBER_PING_HZ, n=1, listeners=n - 1, dim="subscribers")
            if not quick:
                thr(1024, n=n, dim="subscribers")
    if "rate" in dims:
        samples = opts.rate_samples or (300 if quick else 1000)
        for r, s, n in seed_grid(opts.rate_grid or ("one" if quick else "full")):
            # A rate point sends a fixed count (seed 000: 1000 samples), so --duration does
            # not apply to it; --rate-samples does.
            d = round(samples / r + 1.0, 2)
            b.add("rate", Point("rate", s, True, "KS", float(r), n, d, ping_pct=100))
    if "security" in dims:
        _security_points(b, opts, dur)
    if "seed000" in dims:
        _seed000_points(b, opts)
    if "durability" in dims:
        for kind in (None, "persistent"):
            for size in DURABILITY_THROUGHPUT_SIZES:
                b.add("durability", Point("throughput", size, True, "KS", None, 1, dur, durability=kind))
            for size in DURABILITY_LATENCY_SIZES:
                b.add("durability", Point("latency", size, True, "KS", None, 1, dur, durability=kind))
        # Halyard's other sync levels beside its default (the peers' points are skipped).
        for sync in DURABILITY_OTHER_SYNC_LEVELS:
            for size in DURABILITY_THROUGHPUT_SIZES:
                b.add("durability", Point("throughput", size, True, "KS", None, 1, dur,
                                          durability="persistent", sync=sync))
    return list(b.points.values())


def _security_points(b: _Builder, opts: PlanOptions, dur: float) -> None:
    """The security dimension: the same few points at every level (``off`` = plain)."""
    samples = opts.rate_samples or (300 if opts.mode == "quick" else 1000)
    r, s, n = SECURITY_SEED_POINT
    for level in opts.security_levels:
        lv = None if level == "off" else level
        for size in SECURITY_LATENCY_SIZES:
            b.add("security", Point("latency", size, True, "KS", None, 1, dur, security=lv))
        for size in SECURITY_THROUGHPUT_SIZES:
            b.add("security", Point("throughput", size, True, "KS", None, 1, dur, security=lv))
        b.add("security", Point("rate", s, True, "KS", float(r), n, round(samples / r + 1.0, 2),
                                ping_pct=100, security=lv))


def _seed000_points(b: _Builder, opts: PlanOptions) -> None:
    """The seed000 dimension (see the module's list); --rate-samples and --duration (the
    stress runs) apply, --sizes-like shortening is --rate-grid small (4 sizes)."""
    samples = opts.rate_samples or 1000
    sizes = SEED_SIZES if opts.rate_grid in ("one", "small") else SEED_SIZES_FULL

    def rate(r: int, s: int, n: int = 1, level: str | None = None) -> None:
        b.add("seed000", Point("rate", s, True, "KS", float(r), n, round(samples / r + 1.0, 2), ping_pct=100,
                               security=level, durability="persistent"))

    for r in SEED_RATES:
        for s in sizes:
            rate(r, s)
    for level in SEED_LEVELS:
        if level == "off":
            continue
        for s in sizes:
            rate(SEED_FIGURE_RATE, s, level=level)
        for r in SEED_RATES:
            if level == "encrypt-origin" and r != SEED_FIGURE_RATE:
                rate(r, 1024, level=level)
    for n in SEED_SUBS_FULL[1:]:
        for s in sizes:
            rate(SEED_FIGURE_RATE, s, n)
    for s in sizes:
        b.add("seed000", Point("throughput", s, True, "KS", None, 1, opts.duration or SEED_STRESS_S))


def seed_grid(which: str) -> list[tuple[int, int, int]]:
    """The seed-000 grid (rate Hz, size B, subscribers): ``one`` point (100 Hz, 1024 B,
    10 subs), ``small`` (4 rates x 4 sizes x 1/5/10 subs) or ``full`` (4 x 9 x 1/2/4/8/10)."""
    if which == "one":
        return [(100, 1024, 10)]
    if which == "small":
        return [(r, s, n) for r in SEED_RATES for s in SEED_SIZES for n in SEED_SUBS]
    if which == "full":
        return [(r, s, n) for r in SEED_RATES for s in SEED_SIZES_FULL for n in SEED_SUBS_FULL]
    raise ValueError(f"unknown seed-000 grid {which!r} (one, small, full)")
