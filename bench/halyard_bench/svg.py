"""Hand-made SVG charts (no plotting library): line charts with linear or log axes, optional
whiskers, and grouped bar charts. Output is a standalone ``<svg>`` element that works both
as a file and inlined in HTML.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Callable

FONT = "font-family:Helvetica,Arial,sans-serif"


def fmt_bytes(v: float) -> str:
    """32, 1k, 64k, 1M, 10M (powers of 1024 where exact, else plain)."""
    for unit, mult in (("M", 1 << 20), ("k", 1 << 10)):
        if v >= mult and abs(v / mult - round(v / mult)) < 1e-9:
            return f"{round(v / mult)}{unit}"
    if v >= 10000:
        return f"{v / 1000:g}k"
    return f"{v:g}"


def fmt_num(v: float) -> str:
    """Compact tick labels: 0.5, 10, 2k, 1M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:g}M"
    if a >= 1e4:
        return f"{v / 1e3:g}k"
    if a >= 1:
        return f"{v:g}"
    return f"{v:.3g}"


@dataclass
class Axis:
    lo: float
    hi: float
    log: bool = False
    label: str = ""
    fmt: Callable[[float], str] = fmt_num
    bytes_ticks: bool = False  # log axis of sizes: ticks at powers of 2 (16, 64, 256, 1k, ...)
    integer: bool = False  # linear axis of counts: whole-number ticks only

    def frac(self, v: float) -> float:
        if self.log:
            lo, hi, v = math.log10(self.lo), math.log10(self.hi), math.log10(max(v, 1e-300))
        else:
            lo, hi = self.lo, self.hi
        return 0.5 if hi == lo else (v - lo) / (hi - lo)

    def ticks(self) -> list[float]:
        if self.log and self.bytes_ticks:
            e0, e1 = math.floor(math.log2(self.lo)), math.ceil(math.log2(self.hi))
            step = 1 if e1 - e0 <= 8 else 2
            return [2.0 ** e for e in range(e0, e1 + 1) if e % step == 0 and self.lo <= 2.0 ** e <= self.hi]
        if self.log:
            out = []
            e0, e1 = math.floor(math.log10(self.lo)), math.ceil(math.log10(self.hi))
            decades = e1 - e0
            steps = (1, 2, 5) if decades <= 4 else (1,)
            for e in range(e0, e1 + 1):
                for m in steps:
                    v = m * 10 ** e
                    if self.lo * 0.999 <= v <= self.hi * 1.001:
                        out.append(v)
            return out
        span = self.hi - self.lo
        raw = span / 5 if span > 0 else 1
        mag = 10 ** math.floor(math.log10(raw))
        mults = (1, 2, 5, 10) if self.integer else (1, 2, 2.5, 5, 10)
        step = next(m * mag for m in mults if m * mag >= raw)
        if self.integer:
            step = max(1.0, round(step))
        start = math.ceil(self.lo / step) * step
        return [start + i * step for i in range(int((self.hi - start) / step + 1e-9) + 1)]


def size_axis(sizes: list[float], label: str = "sample size (bytes)") -> Axis:
    """A log axis of sample sizes with power-of-two ticks, a little wider than the data."""
    v = [s for s in sizes if s and s > 0] or [16, 1024]
    return Axis(min(v) / 1.6, max(v) * 1.6, True, label, fmt_bytes, bytes_ticks=True)


def nice_range(values: list[float], log: bool, pad: float = 0.08) -> tuple[float, float]:
    """An axis range that includes all values (log: whole powers of ten when sensible)."""
    v = [x for x in values if x is not None and math.isfinite(x) and (x > 0 or not log)]
    if not v:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(v), max(v)
    if log:
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
        if lo == hi:
            hi = lo * 10
        return lo, hi
    if lo == hi:
        return (lo - 1, hi + 1) if lo else (0.0, 1.0)
    span = hi - lo
    return (0.0 if lo >= 0 and lo < span else lo - pad * span), hi + pad * span


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    colour: str
    dash: str | None = None
    markers: bool = True
    whiskers: list[tuple[float, float, float, float]] = field(default_factory=list)  # x, lo, mid, hi


class LineChart:
    """A line chart; ``add`` series, then ``render``."""

    def __init__(self, title: str, x: Axis, y: Axis, width: int = 660, height: int = 380) -> None:
        self.title, self.x, self.y, self.w, self.h = title, x, y, width, height
        self.series: list[Series] = []
        self.m = {"l": 70, "r": 175, "t": 34, "b": 50}

    def add(self, s: Series) -> None:
        self.series.append(s)

    def _px(self, x: float, y: float) -> tuple[float, float]:
        pw, ph = self.w - self.m["l"] - self.m["r"], self.h - self.m["t"] - self.m["b"]
        fx = min(max(self.x.frac(x), -0.02), 1.02)
        fy = min(max(self.y.frac(y), -0.02), 1.02)
        return self.m["l"] + fx * pw, self.m["t"] + (1 - fy) * ph

    def render(self) -> str:
        longest = max((len(s.label) for s in self.series), default=0)
        self.m["r"] = max(self.m["r"], 50 + int(6.3 * longest))
        self.w = max(self.w, 520 + self.m["r"])
        w, h, m = self.w, self.h, self.m
        pw, ph = w - m["l"] - m["r"], h - m["t"] - m["b"]
        o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             f'style="{FONT};font-size:11px;background:#fff">',
             f'<text x="{m["l"]}" y="20" style="font-size:13px;font-weight:bold">{escape(self.title)}</text>',
             f'<rect x="{m["l"]}" y="{m["t"]}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
        for t in self.x.ticks():
            px, _ = self._px(t, self.y.lo)
            o.append(f'<line x1="{px:.1f}" y1="{m["t"]}" x2="{px:.1f}" y2="{m["t"] + ph}" stroke="#eee"/>')
            o.append(f'<text x="{px:.1f}" y="{m["t"] + ph + 15}" text-anchor="middle">{escape(self.x.fmt(t))}</text>')
        for t in self.y.ticks():
            _, py = self._px(self.x.lo, t)
            o.append(f'<line x1="{m["l"]}" y1="{py:.1f}" x2="{m["l"] + pw}" y2="{py:.1f}" stroke="#eee"/>')
            o.append(f'<text x="{m["l"] - 6}" y="{py + 4:.1f}" text-anchor="end">{escape(self.y.fmt(t))}</text>')
        o.append(f'<text x="{m["l"] + pw / 2}" y="{h - 12}" text-anchor="middle">{escape(self.x.label)}</text>')
        o.append(f'<text transform="translate(16,{m["t"] + ph / 2}) rotate(-90)" text-anchor="middle">'
                 f'{escape(self.y.label)}</text>')
        for i, s in enumerate(self.series):
            o.extend(self._series(s))
            ly = m["t"] + 14 + 18 * i
            lx = m["l"] + pw + 12
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            o.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 22}" y2="{ly - 4}" stroke="{s.colour}" stroke-width="2"{dash}/>')
            o.append(f'<text x="{lx + 28}" y="{ly}">{escape(s.label)}</text>')
        o.append("</svg>")
        return "\n".join(o)

    def _series(self, s: Series) -> list[str]:
        o = []
        pts = [(x, y) for x, y in s.points if _ok(x, self.x) and _ok(y, self.y)]
        if len(pts) > 1:
            d = " ".join(f"{'M' if i == 0 else 'L'}{px:.1f},{py:.1f}"
                         for i, (px, py) in enumerate(self._px(x, y) for x, y in pts))
            dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
            o.append(f'<path d="{d}" fill="none" stroke="{s.colour}" stroke-width="2"{dash}/>')
        if s.markers:
            for x, y in pts:
                px, py = self._px(x, y)
                o.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3" fill="{s.colour}"><title>'
                         f'{escape(s.label)}: {fmt_num(x)}, {y:.4g}</title></circle>')
        for x, lo, mid, hi in s.whiskers:
            if not (_ok(x, self.x) and _ok(lo, self.y) and _ok(hi, self.y)):
                continue
            px, plo = self._px(x, lo)
            _, phi = self._px(x, hi)
            o.append(f'<line x1="{px:.1f}" y1="{plo:.1f}" x2="{px:.1f}" y2="{phi:.1f}" stroke="{s.colour}" stroke-width="1"/>')
            o.append(f'<line x1="{px - 4:.1f}" y1="{phi:.1f}" x2="{px + 4:.1f}" y2="{phi:.1f}" stroke="{s.colour}"/>')
            if _ok(mid, self.y):
                _, pm = self._px(x, mid)
                o.append(f'<line x1="{px - 3:.1f}" y1="{pm:.1f}" x2="{px + 3:.1f}" y2="{pm:.1f}" stroke="{s.colour}"/>')
        return o


def _ok(v: float | None, axis: Axis) -> bool:
    return v is not None and math.isfinite(v) and (v > 0 or not axis.log)


class BarChart:
    """Grouped bars: one group per category, one bar per series."""

    def __init__(self, title: str, categories: list[str], ylabel: str, width: int = 660, height: int = 340) -> None:
        self.title, self.cats, self.ylabel, self.w, self.h = title, categories, ylabel, width, height
        self.series: list[tuple[str, list[float | None], str]] = []

    def add(self, label: str, values: list[float | None], colour: str) -> None:
        self.series.append((label, values, colour))

    def render(self) -> str:
        w, h = self.w, self.h
        ml, mr, mt, mb = 70, 175, 34, 50
        pw, ph = w - ml - mr, h - mt - mb
        vals = [v for _, vs, _ in self.series for v in vs if v is not None and math.isfinite(v)]
        y = Axis(0.0, max(vals) * 1.12 if vals and max(vals) > 0 else 1.0, False, self.ylabel)
        o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
             f'style="{FONT};font-size:11px;background:#fff">',
             f'<text x="{ml}" y="20" style="font-size:13px;font-weight:bold">{escape(self.title)}</text>',
             f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>']
        for t in y.ticks():
            py = mt + (1 - y.frac(t)) * ph
            o.append(f'<line x1="{ml}" y1="{py:.1f}" x2="{ml + pw}" y2="{py:.1f}" stroke="#eee"/>')
            o.append(f'<text x="{ml - 6}" y="{py + 4:.1f}" text-anchor="end">{escape(fmt_num(t))}</text>')
        o.append(f'<text transform="translate(16,{mt + ph / 2}) rotate(-90)" text-anchor="middle">{escape(self.ylabel)}</text>')
        ng, ns = max(1, len(self.cats)), max(1, len(self.series))
        gw = pw / ng
        bw = gw * 0.8 / ns
        for gi, cat in enumerate(self.cats):
            gx = ml + gi * gw
            o.append(f'<text x="{gx + gw / 2:.1f}" y="{mt + ph + 15}" text-anchor="middle">{escape(cat)}</text>')
            for si, (label, values, colour) in enumerate(self.series):
                v = values[gi] if gi < len(values) else None
                if v is None or not math.isfinite(v):
                    continue
                bh = y.frac(v) * ph
                bx = gx + gw * 0.1 + si * bw
                o.append(f'<rect x="{bx:.1f}" y="{mt + ph - bh:.1f}" width="{bw * 0.92:.1f}" height="{bh:.1f}" '
                         f'fill="{colour}"><title>{escape(cat)} {escape(label)}: {v:.4g}</title></rect>')
                o.append(f'<text x="{bx + bw * 0.46:.1f}" y="{mt + ph - bh - 3:.1f}" text-anchor="middle" '
                         f'style="font-size:9px">{v:.3g}</text>')
        for si, (label, _, colour) in enumerate(self.series):
            ly = mt + 14 + 18 * si
            o.append(f'<rect x="{ml + pw + 12}" y="{ly - 9}" width="14" height="10" fill="{colour}"/>')
            o.append(f'<text x="{ml + pw + 32}" y="{ly}">{escape(label)}</text>')
        o.append("</svg>")
        return "\n".join(o)
