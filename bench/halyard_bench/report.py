"""report.md and report.html from results.json.

The report is built once as a list of blocks (headings, paragraphs, tables, plots) and
rendered twice: Markdown (plots as files under plots/) and self-contained HTML (inline CSS,
inline SVG, no external resources).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from html import escape

from . import seed000, svg
from .peers import COLOURS, LABELS
from .results import summary_rows
from .stats import finite, geomean

# --------------------------------------------------------------------------- document model


@dataclass
class Doc:
    blocks: list[tuple] = field(default_factory=list)
    plots: dict[str, str] = field(default_factory=dict)

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def p(self, text: str) -> None:
        self.blocks.append(("p", text))

    def ul(self, items: list[str]) -> None:
        if items:
            self.blocks.append(("ul", items))

    def table(self, headers: list[str], rows: list[list[str]], caption: str = "") -> None:
        if rows:
            self.blocks.append(("table", headers, rows, caption))

    def plot(self, name: str, svg_text: str, caption: str = "") -> None:
        self.plots[name] = svg_text
        self.blocks.append(("plot", name, caption))


def render_md(doc: Doc) -> str:
    out: list[str] = []
    for b in doc.blocks:
        kind = b[0]
        if kind == "h":
            out.append("#" * b[1] + " " + b[2])
        elif kind == "p":
            out.append(b[1])
        elif kind == "ul":
            out.append("\n".join(f"- {x}" for x in b[1]))
        elif kind == "table":
            _, headers, rows, caption = b
            lines = [f"*{caption}*", ""] if caption else []
            lines += ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
            lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
            out.append("\n".join(lines))
        elif kind == "plot":
            _, name, caption = b
            out.append(f"![{caption or name}](plots/{name}.svg)")
    return "\n\n".join(out) + "\n"


CSS = """
body{font-family:Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;line-height:1.4}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;padding-bottom:3px;margin-top:32px}
h3{font-size:15px;margin-top:22px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:12px}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;white-space:nowrap}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
td.pass{background:#d9f2d9;font-weight:bold;text-align:center}td.fail{background:#f8d4d4;font-weight:bold;text-align:center}
td.na{background:#eee;text-align:center}
caption{caption-side:top;text-align:left;font-style:italic;padding:2px 0;color:#555}
figure{margin:10px 0}figcaption{font-size:12px;color:#555}
code{background:#f5f5f5;padding:1px 3px}
""".strip()


def _cell_html(c: str) -> str:
    cls = {"PASS": "pass", "FAIL": "fail", "n/a": "na"}.get(c)
    return f'<td class="{cls}">{escape(c)}</td>' if cls else f"<td>{_inline(c)}</td>"


def _inline(text: str) -> str:
    """Escapes text and turns `code` spans into <code>."""
    parts = escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def render_html(doc: Doc, title: str) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"]
    for b in doc.blocks:
        kind = b[0]
        if kind == "h":
            out.append(f"<h{b[1]}>{_inline(b[2])}</h{b[1]}>")
        elif kind == "p":
            out.append(f"<p>{_inline(b[1])}</p>")
        elif kind == "ul":
            out.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b[1]) + "</ul>")
        elif kind == "table":
            _, headers, rows, caption = b
            out.append("<table>" + (f"<caption>{_inline(caption)}</caption>" if caption else ""))
            out.append("<tr>" + "".join(f"<th>{escape(h)}</th>" for h in headers) + "</tr>")
            for r in rows:
                out.append("<tr>" + "".join(_cell_html(c) for c in r) + "</tr>")
            out.append("</table>")
        elif kind == "plot":
            _, name, caption = b
            out.append(f"<figure>{doc.plots[name]}"
                       + (f"<figcaption>{_inline(caption)}</figcaption>" if caption else "") + "</figure>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- formatting


def f_us(v) -> str:
    if not finite(v):
        return "n/a"
    return f"{v:.0f}" if v >= 1000 else f"{v:.1f}"


def f_num(v, digits: int = 3) -> str:
    if not finite(v):
        return "n/a"
    if abs(v) >= min(1000, 10 ** digits):
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def f_ratio(v) -> str:
    return f"{v:.2f}×" if finite(v) else "n/a"


def f_mb(kb) -> str:
    return f"{kb / 1024:.1f}" if finite(kb) else "n/a"


def f_pct(v) -> str:
    return f"{v:.1f}" if finite(v) else "n/a"


def f_size(n: int) -> str:
    return f"{n} ({svg.fmt_bytes(n)})" if n >= 16384 else str(n)


def label(peer: str) -> str:
    return LABELS.get(peer, peer)


# --------------------------------------------------------------------------- data access


class View:
    """Indexes results.json for the report: rows by (point, peer), points by dimension."""

    def __init__(self, data: dict) -> None:
        self.data = data
        for p in data["points"]:
            p.setdefault("listeners", 0)  # results written before passive subscribers existed
        # Secured points (the security dimension's levels other than "off") appear only in the
        # security section; every other table, target and ratio is about plain points.
        self.all_points = {p["key"]: p for p in data["points"]}
        self.points = {k: p for k, p in self.all_points.items() if not p.get("security")}
        self.rows = summary_rows(data["points"], data["runs"], data["peers"])
        self.by = {(r["point"], r["peer"]): r for r in self.rows}
        self.peers = [p["name"] for p in data["peers"]]
        ran = {r["peer"] for r in data["runs"]}
        self.active = [p for p in self.peers if p in ran]
        if "halyard" in self.active:
            self.active.remove("halyard")
            self.active.insert(0, "halyard")
        self.others = [p for p in self.active if p != "halyard"]
        self.runs = {(r["point"], r["peer"]): r for r in data["runs"]}
        # scripts/loss-bench.sh --json output, when the campaign ran the "loss" dimension.
        self.loss_bench = data.get("loss_bench")

    def row(self, key: str | None, peer: str) -> dict | None:
        if key is None:
            return None
        r = self.by.get((key, peer))
        return r if r and r.get("status") == "ok" else None

    def any_row(self, key: str, peer: str) -> dict | None:
        return self.by.get((key, peer))

    def select(self, dim: str, **crit) -> list[dict]:
        """Points of a dimension matching every criterion, by size then receivers."""
        pts = [p for p in self.points.values() if dim in p["dims"]
               and all(p.get(k) == v for k, v in crit.items())]
        return sorted(pts, key=lambda p: (p["size"], p["receivers"], p["rate_hz"] or 0))

    def find(self, kind: str, size: int, **crit) -> str | None:
        for p in self.points.values():
            if p["kind"] == kind and p["size"] == size and all(p.get(k) == v for k, v in crit.items()):
                return p["key"]
        return None

    def value(self, key: str | None, peer: str, field_: str):
        r = self.row(key, peer)
        v = r.get(field_) if r else None
        return v if finite(v) else None

    def rss_max(self, key: str, peer: str) -> float | None:
        r = self.row(key, peer)
        if not r:
            return None
        vals = [v for v in (r.get("rss_sender_kb"), r.get("rss_receiver_kb")) if finite(v)]
        return max(vals) if vals else None


LAT_BASE = {"kind": "latency", "topic": "KS", "reliable": True, "receivers": 1, "rate_hz": None}
THR_BASE = {"kind": "throughput", "topic": "KS", "receivers": 1, "rate_hz": None}


def _cell_failed(r: dict | None) -> str:
    if r is None:
        return "not run"
    return f"{r.get('status')}: {r.get('reason') or 'no data'}"


# --------------------------------------------------------------------------- targets


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def targets(v: View) -> list[list[str]]:
    """The run's targets: [target, measured, verdict]."""
    out: list[list[str]] = []
    h = "halyard"
    k32 = v.find("latency", 32, **{k: x for k, x in LAT_BASE.items() if k != "kind"})
    k63 = v.find("latency", 63000, **{k: x for k, x in LAT_BASE.items() if k != "kind"})

    def lat_cmp(key, other, factor=1.0, name=""):
        a, b = v.value(key, h, "lat_p50_us"), v.value(key, other, "lat_p50_us")
        if a is None or b is None:
            miss = [label(x) for x, val in ((h, a), (other, b)) if val is None]
            return [name, f"missing: {', '.join(miss)}", "n/a"]
        lim = factor * b
        return [name, f"Halyard {f_us(a)} µs vs {label(other)} {f_us(b)} µs"
                + (f" (limit {f_us(lim)} µs)" if factor != 1.0 else "") + f"; ratio {a / b:.2f}", _verdict(a <= lim)]

    out.append(lat_cmp(k32, "cyclone", name="32 B median latency ≤ Cyclone"))
    out.append(lat_cmp(k32, "udp", 1.25, name="32 B median latency ≤ 1.25 × raw UDP"))
    out.append(lat_cmp(k63, "cyclone", name="63000 B median latency ≤ Cyclone"))

    ratios, worst_ok, missing = [], True, False
    for p in v.select("throughput", **THR_BASE, reliable=True):
        if p["size"] > 65536:
            continue
        a, b = v.value(p["key"], h, "thr_samples_per_s"), v.value(p["key"], "cyclone", "thr_samples_per_s")
        if a is None or b is None:
            missing = True
            ratios.append(f"{p['size']} B: n/a")
            continue
        ratios.append(f"{p['size']} B: {a / b:.2f}×")
        worst_ok &= a >= b
    out.append(["reliable throughput ≥ Cyclone at each size 32 B–64 KB (Halyard ÷ Cyclone samples/s)",
                "; ".join(ratios) or "no points", _verdict(None if missing or not ratios else worst_ok)])

    for size in (1048576, 10485760):
        key = v.find("throughput", size, topic="KS", reliable=True, receivers=1, rate_hz=None)
        mb = v.value(key, h, "thr_mbps")
        out.append([f"{svg.fmt_bytes(size)}B reliable throughput ≥ 3 Gb/s",
                    f"Halyard {f_num(mb, 4)} Mb/s" if mb is not None else "missing",
                    _verdict(None if mb is None else mb >= 3000)])

    out.extend(large_data_targets(v))

    hr, cr = [], []
    for key in v.points:
        a, b = v.rss_max(key, h), v.rss_max(key, "cyclone")
        if a is not None and b is not None:
            hr.append(a)
            cr.append(b)
    if hr:
        out.append(["Halyard perf peak RSS ≤ Cyclone's (max over the points both ran)",
                    f"Halyard {f_mb(max(hr))} MB vs Cyclone {f_mb(max(cr))} MB; per-point geomean ratio "
                    f"{geomean(a / b for a, b in zip(hr, cr)):.2f}", _verdict(max(hr) <= max(cr))])
    else:
        out.append(["Halyard perf peak RSS ≤ Cyclone's", "missing", "n/a"])

    out.append(subscribers_target(v))
    return out


LOSS_BENCH_POINT = ("1M", 30)
LOSS_BENCH_COMMAND = "sudo scripts/loss-bench.sh --reps 5 --json DIR/loss-bench.json 1M:30"


def large_data_targets(v: View) -> list[list[str]]:
    """Issue 14's rows: best-effort 1/10 MiB delivery and loss vs Cyclone, reliable 1/10 MiB
    latency vs the better of Cyclone and Fast DDS, and 1 MiB at 30 % loss (loss-bench)."""
    out: list[list[str]] = []
    h = "halyard"
    for size in (1048576, 10485760):
        name = f"{size >> 20} MiB best-effort: delivered samples/s ≥ Cyclone and loss ratio ≤ Cyclone's"
        key = v.find("throughput", size, topic="KS", reliable=False, receivers=1, rate_hz=None)
        cells, ok = [], True
        for peer in (h, "cyclone"):
            r = v.row(key, peer)
            rate, lost, got = (r or {}).get("thr_samples_per_s"), (r or {}).get("lost"), (r or {}).get("thr_received")
            if not finite(rate) or lost is None or not got:
                cells.append(f"{label(peer)} missing")
                ok = None
                continue
            cells.append(f"{label(peer)} {rate:,.0f}/s, loss {lost / (lost + got):.1%}")
        if ok is not None:
            hr, cr = v.row(key, h), v.row(key, "cyclone")
            ratio = lambda r: r["lost"] / (r["lost"] + r["thr_received"])  # noqa: E731
            ok = hr["thr_samples_per_s"] >= cr["thr_samples_per_s"] and ratio(hr) <= ratio(cr)
        out.append([name, "; ".join(cells), _verdict(ok)])
    for size in (1048576, 10485760):
        name = f"{size >> 20} MiB reliable median latency ≤ the lower of Cyclone's and Fast DDS's"
        key = v.find("latency", size, **{k: x for k, x in LAT_BASE.items() if k != "kind"})
        a = v.value(key, h, "lat_p50_us")
        peers = {p: v.value(key, p, "lat_p50_us") for p in ("cyclone", "fastdds")}
        ran = {p: x for p, x in peers.items() if x is not None}
        if a is None or not ran:
            out.append([name, "missing", "n/a"])
            continue
        best = min(ran.values())
        text = f"Halyard {f_us(a)} µs vs " + ", ".join(f"{label(p)} {f_us(x)} µs" for p, x in ran.items())
        if len(ran) < len(peers):
            text += " (" + ", ".join(label(p) for p in peers if p not in ran) + " missing)"
        out.append([name, text + f"; ratio {a / best:.2f}", _verdict(a <= best)])
    out.append(loss_bench_target(v))
    return out


def loss_bench_target(v: View) -> list[str]:
    """1 MiB at 30 % loss each way: Halyard's worst run ≥ ddsperf's median run."""
    size, pct = LOSS_BENCH_POINT
    name = f"{size[:-1]} MiB reliable at {pct} % loss each way (scripts/loss-bench.sh): Halyard's worst run ≥ ddsperf's median"
    lb = v.loss_bench or {}
    pt = next((p for p in lb.get("points", []) if p["size"] == size and p["loss_pct"] == pct), None)
    if pt is None:
        why = v.data.get("loss_bench_skipped") or "the campaign did not run the loss dimension"
        return [name, f"not run: {why} ({LOSS_BENCH_COMMAND})", "n/a"]
    hs, cs = pt["summary"].get("halyard"), pt["summary"].get("ddsperf")
    if not hs or not cs:
        return [name, "missing: " + ", ".join(x for x, s_ in (("Halyard", hs), ("ddsperf", cs)) if not s_), "n/a"]
    text = (f"Halyard worst {hs['worst']:,.0f} Mb/s (median {hs['median']:,.0f}) vs ddsperf median "
            f"{cs['median']:,.0f} Mb/s (worst {cs['worst']:,.0f}), {hs['runs']} runs each")
    return [name, text, _verdict(hs["worst"] >= cs["median"])]


def subscribers_target(v: View) -> list[str]:
    """10 subscribers vs 1 at `ping 200Hz size 1024`: judged on RTI perftest's set-up (1 ponger
    + 9 passive subscribers) when the campaign ran it, else on 10 pongers; the other set-up and
    the raw UDP floor (what the kernel and the scheduler alone add) are given beside it."""
    name = "10 subscribers raise median latency < 10 % vs 1"
    crit = {"topic": "KS", "reliable": True, "rate_hz": 200.0}
    k1 = v.find("latency", 1024, receivers=1, listeners=0, **crit)
    setups = [("1 ponger + 9 passive", v.find("latency", 1024, receivers=1, listeners=9, **crit)),
              ("10 pongers", v.find("latency", 1024, receivers=10, listeners=0, **crit))]

    def rise(key, peer):
        a, b = v.value(k1, peer, "lat_p50_us"), v.value(key, peer, "lat_p50_us")
        return (a, b, b / a - 1) if a is not None and b is not None else None

    parts, verdict = [], None
    for what, key in setups:
        r = rise(key, "halyard") if key else None
        if r is None:
            continue
        floor = rise(key, "udp")
        floor_txt = f"; raw UDP floor {floor[2] * 100:+.1f} %" if floor else ""
        parts.append(f"{what}: Halyard {f_us(r[0])} → {f_us(r[1])} µs, {r[2] * 100:+.1f} %{floor_txt}")
        if verdict is None:
            verdict = r[2] < 0.10
    return [name, "; ".join(parts) or "missing", _verdict(verdict)]


def ratios(v: View) -> list[list[str]]:
    """Halyard ÷ each peer: geometric means over the points both ran."""
    out = []
    for o in v.others:
        lat, thr_r, thr_b, rss = [], [], [], []
        for key, p in v.points.items():
            a, b = v.value(key, "halyard", "lat_p50_us"), v.value(key, o, "lat_p50_us")
            if a and b and p["kind"] == "latency":
                lat.append(a / b)
            a, b = v.value(key, "halyard", "thr_samples_per_s"), v.value(key, o, "thr_samples_per_s")
            if a and b and p["kind"] == "throughput":
                (thr_r if p["reliable"] else thr_b).append(a / b)
            a, b = v.rss_max(key, "halyard"), v.rss_max(key, o)
            if a and b:
                rss.append(a / b)
        out.append([label(o), f"{f_ratio(geomean(lat))} ({len(lat)})", f"{f_ratio(geomean(thr_r))} ({len(thr_r)})",
                    f"{f_ratio(geomean(thr_b))} ({len(thr_b)})", f"{f_ratio(geomean(rss))} ({len(rss)})"])
    return out


# --------------------------------------------------------------------------- sections


def header(doc: Doc, v: View) -> None:
    d = v.data
    c, m = d["campaign"], d["machine"]
    doc.h(1, f"Halyard benchmark campaign — {c['mode']} — {c['start']}")
    if c.get("interrupted"):
        doc.p("**Interrupted**: partial results.")
    doc.table(["item", "value"], [
        ["CPU", f"{m.get('cpu_model')} ({m.get('cores')} logical cores)"],
        ["memory", f"{m.get('memory_gib')} GiB"],
        ["kernel / distribution", f"{m.get('kernel')} / {m.get('distro')}"],
        ["load average at start", ", ".join(str(x) for x in m.get("loadavg_at_start") or [])],
        *([["free page reporting (freed memory returns to the hypervisor)",
            ", ".join(f"{k} {x}" for k, x in m["free_page_reporting"].items())]]
          if m.get("free_page_reporting") else []),
        *[[k, str(x)] for k, x in d["versions"].items()],
        ["command", f"`{c.get('invoked_as') or c['command_line']}`"],
        ["start / end (UTC)", f"{c['start']} / {c.get('end')}"],
        ["DDS domain, repeats", f"{c['domain']}, {c['repeat']} (median run reported)"],
    ], caption="Machine and versions")
    rows = []
    for p in d["peers"]:
        caps = p["caps"]
        missing = [n for n, k in (("-Qminmatch", "minmatch"), ("--latency-dump", "latency_dump"),
                                  ("pub X%", "pub_ping_pct")) if not caps.get(k)]
        rows.append([p["label"], "yes" if p["available"] else f"skipped: {p['reason']}",
                     ", ".join(missing) or "—", " ".join(p.get("extra_opts") or []) or "—",
                     "; ".join(caps.get("notes") or [])])
    doc.table(["peer", "ran", "without", "extra options", "notes"], rows, caption="Peers")
    if not c.get("rss_clean", True):
        doc.p("Note: peak RSS includes the spawning Python image (no subreaper available).")


def method(doc: Doc) -> None:
    doc.h(2, "How the figures are measured")
    doc.ul([
        "All traffic on loopback; every peer gets the same ddsperf-style command line (bench/PEERS.md); for each "
        "configuration the peers run back to back, in an order that rotates between configurations.",
        "Receivers start first; the sender waits for all of them (`-Qminmatch:N -Qinitwait:15`).",
        "Latency is one-way = round trip / 2, measured by the sender. The first second of traffic is excluded "
        "(warm-up). Statistics come from the sender's `--latency-dump` raw samples when it writes one, else from "
        "its per-second ping lines.",
        "Cyclone's ddsperf keeps no raw samples: its Std and 99.99 % are n/a and its whole-run 50/90/99 % are "
        "count-weighted means of the per-second percentiles (marked ≈); Ave, Min and Max are exact.",
        "Throughput = mean of the per-second rates after warm-up (the final, partial second excluded); Mb/s counts "
        "1e6 bits of sample payload. Lost = sequence gaps seen by the subscriber over the whole run.",
        "Success rate = samples received by the worst subscriber ÷ samples sent (`pub sent`; for ddsperf, which "
        "does not print it, sent is inferred as the largest received+lost of any subscriber).",
        "CPU % = (utime + stime) ÷ wall time of each process (wait4 rusage; receivers live a little longer than the "
        "sender); peak RSS = ru_maxrss of each process.",
        "The raw UDP peer is best effort whatever the row says: it is the floor under both.",
    ])


def latency_section(doc: Doc, v: View) -> None:
    pts = v.select("latency", **LAT_BASE)
    if not pts:
        return
    doc.h(2, "Latency (ping-pong, 1 ponger, reliable, keyed KS) — one-way µs")
    for peer in v.active:
        rows = []
        approx = False
        for p in pts:
            r = v.row(p["key"], peer)
            if r is None:
                rows.append([f_size(p["size"]), _cell_failed(v.any_row(p["key"], peer))] + [""] * 9
                            + ([""] if peer != "halyard" else []))
                continue
            ax = "≈" if r.get("lat_approx") else ""
            approx |= bool(ax)
            row = [f_size(p["size"]), f_us(r.get("lat_ave_us")), f_us(r.get("lat_std_us")), f_us(r.get("lat_min_us")),
                   f_us(r.get("lat_max_us")), ax + f_us(r.get("lat_p50_us")), ax + f_us(r.get("lat_p90_us")),
                   ax + f_us(r.get("lat_p99_us")), f_us(r.get("lat_p9999_us")), f_us(r.get("lat_max_us")),
                   str(r.get("lat_count", ""))]
            if peer != "halyard":
                a, b = v.value(p["key"], "halyard", "lat_p50_us"), r.get("lat_p50_us")
                row.append(f_ratio(a / b) if a and b else "n/a")
            rows.append(row)
        headers = ["Length (Bytes)", "Ave", "Std", "Min", "Max", "50%", "90%", "99%", "99.99%", "100%", "samples"]
        if peer != "halyard":
            headers.append("Halyard ÷ this (50%)")
        cap = label(peer) + (" — ≈: count-weighted mean of per-second percentiles" if approx else "")
        doc.table(headers, rows, caption=cap)
    chart = svg.LineChart("Latency vs size (50 %, whiskers to 90 % / 99 %)",
                          svg.size_axis([p["size"] for p in pts]),
                          svg.Axis(1, 10, True, "one-way latency (µs)"))
    ys = []
    for i, peer in enumerate(v.active):
        pts_xy, whisk = [], []
        for p in pts:
            r = v.row(p["key"], peer)
            if r and finite(r.get("lat_p50_us")):
                x = p["size"] * (1.05 ** (i - len(v.active) / 2))
                pts_xy.append((x, r["lat_p50_us"]))
                whisk.append((x, r["lat_p50_us"], r.get("lat_p90_us"), r.get("lat_p99_us")))
                ys += [r["lat_p50_us"], r.get("lat_p99_us")]
        chart.add(svg.Series(label(peer), pts_xy, COLOURS.get(peer, "#000"), whiskers=whisk))
    chart.y.lo, chart.y.hi = svg.nice_range(ys, True)
    doc.plot("latency_vs_size", chart.render(), "p50 per size; whisker tick at p90, top at p99")
    for size in (32, 63000):
        key = v.find("latency", size, **{k: x for k, x in LAT_BASE.items() if k != "kind"})
        if key:
            cdf_plot(doc, v, key, size)


def cdf_plot(doc: Doc, v: View, key: str, size: int) -> None:
    xs: list[float] = []
    series = []
    for peer in v.active:
        run = v.runs.get((key, peer))
        lat = ((run or {}).get("stats") or {}).get("latency") if run and run["status"] == "ok" else None
        if not lat or not lat.get("cdf"):
            continue
        pts = [(x, f) for x, f in lat["cdf"] if finite(x) and x > 0]
        xs += [x for x, _ in pts]
        series.append(svg.Series(label(peer) + (" (pct points)" if lat["source"] == "lines" else ""),
                                 pts, COLOURS.get(peer, "#000"), dash="5,3" if lat["source"] == "lines" else None,
                                 markers=lat["source"] == "lines"))
    if not series:
        return
    chart = svg.LineChart(f"Latency CDF at {size} B", svg.Axis(*svg.nice_range(xs, True), True, "one-way latency (µs)"),
                          svg.Axis(0, 1, False, "fraction of samples ≤ x"))
    for s in series:
        chart.add(s)
    doc.plot(f"cdf_{size}", chart.render(), "raw samples where the peer dumps them; ddsperf: min, 50/90/99 %, max")


def throughput_section(doc: Doc, v: View) -> None:
    pts_all = v.select("throughput", **THR_BASE)
    if not pts_all:
        return
    doc.h(2, "Throughput (pub at full speed → 1 sub)")
    for reliable in (True, False):
        pts = [p for p in pts_all if p["reliable"] == reliable]
        if not pts:
            continue
        doc.h(3, "reliable" if reliable else "best effort")
        for peer in v.active:
            rows = []
            for p in pts:
                r = v.row(p["key"], peer)
                if r is None:
                    rows.append([f_size(p["size"]), _cell_failed(v.any_row(p["key"], peer))] + [""] * 5
                                + ([""] if peer != "halyard" else []))
                    continue
                row = [f_size(p["size"]), f_num(r.get("thr_samples_per_s"), 4), f_num(r.get("thr_mbps"), 4),
                       str(r.get("lost", "n/a")),
                       f"{f_pct(r.get('cpu_sender_pct'))} / {f_pct(r.get('cpu_receiver_pct'))}",
                       f"{f_mb(r.get('rss_sender_kb'))} / {f_mb(r.get('rss_receiver_kb'))}"]
                if peer != "halyard":
                    a, b = v.value(p["key"], "halyard", "thr_samples_per_s"), r.get("thr_samples_per_s")
                    row.append(f_ratio(a / b) if a and b else "n/a")
                rows.append(row)
            headers = ["Length (Bytes)", "samples/s", "Mb/s", "lost", "CPU % pub / sub", "RSS MB pub / sub"]
            if peer != "halyard":
                headers.append("Halyard ÷ this")
            doc.table(headers, rows, caption=f"{label(peer)} — {'reliable' if reliable else 'best effort'}")
    for unit, field_, scale, name in (("Mb/s", "thr_mbps", 1.0, "throughput_mbps"),
                                      ("kS/s", "thr_samples_per_s", 1e-3, "throughput_ks")):
        chart = svg.LineChart(f"Throughput ({unit}) vs size — solid reliable, dashed best effort",
                              svg.size_axis([p["size"] for p in pts_all]),
                              svg.Axis(1, 10, True, unit))
        ys = []
        for peer in v.active:
            for reliable in (True, False):
                xy = []
                for p in pts_all:
                    val = v.value(p["key"], peer, field_) if p["reliable"] == reliable else None
                    if val:
                        xy.append((p["size"], val * scale))
                        ys.append(val * scale)
                if xy:
                    chart.add(svg.Series(label(peer) + ("" if reliable else " (BE)"), xy, COLOURS.get(peer, "#000"),
                                         dash=None if reliable else "6,4"))
        chart.y.lo, chart.y.hi = svg.nice_range(ys, True)
        doc.plot(name, chart.render())


def keyed_section(doc: Doc, v: View) -> None:
    pts = [p for p in v.points.values() if "keyed" in p["dims"]]
    if not pts:
        return
    doc.h(2, "Keyed (KS) vs unkeyed (UK16, UK1024), reliable")
    rows = []
    for size in sorted({p["size"] for p in pts}):
        uk = f"UK{size}"
        for peer in v.active:
            cells = {}
            for topic in ("KS", uk):
                cells[topic] = (v.find("latency", size, topic=topic, reliable=True, receivers=1, rate_hz=None),
                                v.find("throughput", size, topic=topic, reliable=True, receivers=1, rate_hz=None))
            lk, lu = (v.value(cells[t][0], peer, "lat_p50_us") for t in ("KS", uk))
            tk, tu = (v.value(cells[t][1], peer, "thr_samples_per_s") for t in ("KS", uk))
            rows.append([str(size), label(peer), f_us(lk), f_us(lu), f_ratio(lu / lk) if lk and lu else "n/a",
                         f_num(tk, 4), f_num(tu, 4), f_ratio(tu / tk) if tk and tu else "n/a"])
    doc.table(["size", "peer", "KS 50% µs", "UK 50% µs", "UK ÷ KS latency", "KS samples/s", "UK samples/s",
               "UK ÷ KS throughput"], rows)


def _subscriber_latency(doc: Doc, v: View, pts: list[dict], passive: bool) -> None:
    """Median latency against the number of subscribers: N pongers, or 1 ponger + N−1 passive."""
    count = (lambda p: p["receivers"] + p["listeners"]) if passive else (lambda p: p["receivers"])
    pts = sorted(pts, key=count)
    rows, series = [], []
    for peer in v.active:
        base = v.value(pts[0]["key"], peer, "lat_p50_us") if count(pts[0]) == 1 else None
        xy = []
        for p in pts:
            r = v.row(p["key"], peer)
            if r is None:
                rows.append([label(peer), str(count(p)), _cell_failed(v.any_row(p["key"], peer)), "", "", "", ""])
                continue
            rise = r["lat_p50_us"] / base - 1 if base and finite(r.get("lat_p50_us")) else None
            if passive:
                got, answered = r.get("listener_received_min"), r.get("listener_pings_answered")
                extra = f"{got} / {answered}" if got is not None else "–"
            else:
                per = ((v.runs.get((p["key"], peer)) or {}).get("stats") or {}).get("latency_per_receiver") or {}
                p50s = [s["p50"] for s in per.values() if finite(s.get("p50"))]
                extra = f"{f_us(min(p50s))} – {f_us(max(p50s))} ({len(p50s)})" if p50s else "n/a"
            rows.append([label(peer), str(count(p)), f_us(r.get("lat_p50_us")), f_us(r.get("lat_ave_us")), extra,
                         f"{rise * 100:+.1f} %" if rise is not None else "n/a", f_us(r.get("lat_p99_us"))])
            if finite(r.get("lat_p50_us")):
                xy.append((count(p), r["lat_p50_us"]))
        series.append(svg.Series(label(peer), xy, COLOURS.get(peer, "#000")))
    ping = f"`ping {pts[0]['rate_hz']:g}Hz size {pts[0]['size']}`"
    if passive:
        headers = ["peer", "subscribers", "50% µs", "Ave µs", "pings the worst passive sub received / answered",
                   "50% rise vs 1", "99% µs"]
        caption = (f"Latency at {ping}, RTI perftest's way: 1 ponger answers, the other N−1 subscribers "
                   "receive every ping and answer none")
        title, plot = "Median latency vs subscribers (1 ponger + N−1 passive)", "subscribers_passive_latency"
    else:
        headers = ["peer", "pongers", "50% µs", "Ave µs", "per-ponger 50% (≈) min – max (n)", "50% rise vs 1",
                   "99% µs"]
        caption = f"Latency at {ping} with N pongers, all answering"
        title, plot = "Median latency vs number of pongers", "subscribers_latency"
    doc.table(headers, rows, caption=caption)
    ys = [y for s in series for _, y in s.points]
    chart = svg.LineChart(title, svg.Axis(0, max(count(p) for p in pts) + 1, False,
                                          "subscribers" if passive else "pongers", integer=True),
                          svg.Axis(*svg.nice_range(ys + [0], False), False, "50% one-way latency (µs)"))
    for s in series:
        chart.add(s)
    doc.plot(plot, chart.render())


def subscribers_section(doc: Doc, v: View) -> None:
    lat_pts = [p for p in v.points.values() if "subscribers" in p["dims"] and p["kind"] == "latency"]
    thr_pts = [p for p in v.points.values() if "subscribers" in p["dims"] and p["kind"] == "throughput"]
    if not lat_pts and not thr_pts:
        return
    doc.h(2, "Subscribers")
    answering = [p for p in lat_pts if not p["listeners"]]
    passive = [p for p in lat_pts if p["listeners"] or p["receivers"] == 1]
    if answering:
        _subscriber_latency(doc, v, answering, passive=False)
    if any(p["listeners"] for p in passive):
        _subscriber_latency(doc, v, passive, passive=True)
    if thr_pts:
        thr_pts.sort(key=lambda p: p["receivers"])
        rows = []
        for peer in v.active:
            for p in thr_pts:
                r = v.row(p["key"], peer)
                run = v.runs.get((p["key"], peer)) or {}
                thr = (run.get("stats") or {}).get("throughput") or {}
                if r is None:
                    rows.append([label(peer), str(p["receivers"]), _cell_failed(v.any_row(p["key"], peer)), "", "", "", ""])
                    continue
                rows.append([label(peer), str(p["receivers"]), f_num(r.get("thr_samples_per_s"), 4),
                             f_num(thr.get("min_sub_samples_per_s"), 4), f_num(r.get("thr_aggregate_samples_per_s"), 4),
                             f_num(r.get("thr_mbps"), 4), str(r.get("lost", "n/a"))])
        doc.table(["peer", "subs", "per-sub samples/s", "slowest sub", "aggregate samples/s", "per-sub Mb/s", "lost"],
                  rows, caption=f"Throughput, pub size {thr_pts[0]['size']} at full speed, reliable, N subs")


def seed_section(doc: Doc, v: View) -> None:
    # The seed000 dimension's points have their own section (seed000_report.py).
    pts = [p for p in v.points.values() if p["kind"] == "rate" and p["dims"] != ["seed000"]]
    if not pts:
        return
    pts.sort(key=lambda p: (p["rate_hz"], p["size"], p["receivers"]))
    doc.h(2, "Threat-intelligence workload (seed 000): `pub R Hz size S 100%`, N subs, reliable KEEP_ALL")
    doc.p(f"Published figures: {seed000.SOURCE}. The seed's text gives latency at the ends of its range (50 and "
          "125 msg/s, 32 and 8192 B), 822–1013 µs over all runs, 100 % success, throughput that matched the send "
          "rate, 6.83–7.59 % CPU and 84–89 MB memory (50–125 msg/s); where a cell is not in the text the range is "
          "shown. Their setup is two hosts through a switch; ours is loopback on one host.")
    rows = []
    shown: set[tuple[int, int]] = set()
    for p in pts:
        r_, s_, n_ = int(p["rate_hz"]), p["size"], p["receivers"]
        pub = seed000.published(r_, s_)
        if (r_, s_) not in shown:  # the published figures once per rate and size
            shown.add((r_, s_))
            rows.append([f"{r_}", str(s_), "1–10", "seed 000 (published)", _s(pub["latency_us"]), "—",
                         f"{pub['msgs_per_s']:g}", _s(pub["throughput_mbps"]), f"{pub['success_pct']:g}",
                         _s(pub["cpu_pct"]), "—", _s(pub["memory_mb"]), "—"])
        for peer in v.active:
            r = v.row(p["key"], peer)
            if r is None:
                rows.append([f"{r_}", str(s_), str(n_), label(peer), _cell_failed(v.any_row(p["key"], peer))]
                            + [""] * 8)
                continue
            succ = f_pct(r.get("success_pct")) + (" (sent inferred)" if r.get("sent_inferred") else "")
            ax = "≈" if r.get("lat_approx") else ""
            rows.append([f"{r_}", str(s_), str(n_), label(peer), f_us(r.get("lat_ave_us")), ax + f_us(r.get("lat_p50_us")),
                         f_num(r.get("thr_samples_per_s"), 4), f_num(r.get("thr_mbps"), 3), succ,
                         f_pct(r.get("cpu_sender_pct")), f_pct(r.get("cpu_receiver_pct")),
                         f_mb(r.get("rss_sender_kb")), f_mb(r.get("rss_receiver_kb"))])
    doc.table(["R msg/s", "S B", "N subs", "peer", "Ave µs", "50% µs", "msg/s per sub", "Mb/s per sub", "success %",
               "CPU % pub", "CPU % sub (mean)", "RSS MB pub", "RSS MB sub (max)"], rows,
              caption="Latency = one-way from the pub's pings (every sample is one); memory = peak RSS per process")
    chart = svg.LineChart("Success rate vs send rate (mean over sizes and subscriber counts)",
                          svg.Axis(40, 135, False, "send rate (msg/s)"), svg.Axis(0, 105, False, "success %"))
    for i, peer in enumerate(v.active):
        xy = []
        for rate in sorted({p["rate_hz"] for p in pts}):
            vals = [v.value(p["key"], peer, "success_pct") for p in pts if p["rate_hz"] == rate]
            vals = [x for x in vals if x is not None]
            if vals:  # a small x offset per peer keeps equal values visible
                xy.append((rate + 1.2 * (i - (len(v.active) - 1) / 2), sum(vals) / len(vals)))
        chart.add(svg.Series(label(peer), xy, COLOURS.get(peer, "#000")))
    doc.plot("success_vs_rate", chart.render())


def _s(x) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def resources_section(doc: Doc, v: View) -> None:
    doc.h(2, "CPU and memory")
    ref = v.find("throughput", 1024, topic="KS", reliable=True, receivers=1, rate_hz=None)
    if ref is None:
        tp = v.select("throughput", **THR_BASE, reliable=True)
        ref = tp[0]["key"] if tp else None
    seed_pts = [p["key"] for p in v.points.values() if p["kind"] == "rate"]
    chart = svg.BarChart("CPU % per process", [label(p) for p in v.active], "CPU % (utime+stime)/wall")
    if ref:
        size = v.points[ref]["size"]
        chart.add(f"pub, {size} B full speed", [v.value(ref, p, "cpu_sender_pct") for p in v.active], "#4c72b0")
        chart.add(f"sub, {size} B full speed", [v.value(ref, p, "cpu_receiver_pct") for p in v.active], "#8fb0dd")
    if seed_pts:
        def mean_of(field_: str, peer: str):
            vals = [v.value(k, peer, field_) for k in seed_pts]
            vals = [x for x in vals if x is not None]
            return sum(vals) / len(vals) if vals else None
        chart.add("pub, seed-000 workload", [mean_of("cpu_sender_pct", p) for p in v.active], "#dd8452")
        chart.add("sub, seed-000 workload", [mean_of("cpu_receiver_pct", p) for p in v.active], "#f0b88a")
    doc.plot("cpu_bars", chart.render())
    rows, send_peak, recv_peak = [], [], []
    for peer in v.active:
        s = [v.value(k, peer, "rss_sender_kb") for k in v.points]
        r = [v.value(k, peer, "rss_receiver_kb") for k in v.points]
        s, r = [x for x in s if x], [x for x in r if x]
        send_peak.append(max(s) / 1024 if s else None)
        recv_peak.append(max(r) / 1024 if r else None)
        small = [v.value(k, peer, "rss_sender_kb") for k, p in v.points.items() if p["size"] <= 1024]
        small = [x for x in small if x]
        rows.append([label(peer), f_mb(max(small)) if small else "n/a", f_mb(max(s)) if s else "n/a",
                     f_mb(max(r)) if r else "n/a"])
    doc.table(["peer", "sender peak RSS MB, samples ≤ 1 KiB", "sender peak RSS MB, all", "receiver peak RSS MB, all"],
              rows, caption="Peak RSS (ru_maxrss) over the campaign")
    chart = svg.BarChart("Peak RSS over the campaign (MB)", [label(p) for p in v.active], "MB")
    chart.add("sender (ping/pub)", send_peak, "#55a868")
    chart.add("receiver (pong/sub)", recv_peak, "#a6d8b0")
    doc.plot("rss_bars", chart.render())


def failures_section(doc: Doc, v: View) -> None:
    rows = []
    for r in v.data["runs"]:
        if r["status"] != "ok" or r.get("notes"):
            rows.append([r["point"], label(r["peer"]), str(r["repeat"] + 1), r["status"],
                         r.get("reason") or "", "; ".join(r.get("notes") or [])])
    for p in v.data["peers"]:
        if not p["available"]:
            rows.append(["(all)", p["label"], "", "skipped", p["reason"], ""])
    if rows:
        doc.h(2, "Failed runs, skipped peers and notes")
        doc.table(["point", "peer", "repeat", "status", "reason", "notes"], rows,
                  caption="raw/ holds every process's output (file names start with the point key)")


def build(data: dict) -> Doc:
    from . import durability_report, security_report, seed000_report  # here: they import this module's helpers
    v = View(data)
    doc = Doc()
    header(doc, v)
    # A seed-000 campaign opens with the seed's evaluation and its targets.
    if "seed000" in (data["campaign"].get("dims") or []):
        doc.h(2, "Seed 000 targets")
        doc.table(["target", "measured", "verdict"], seed000_report.targets(v))
        seed000_report.section(doc, v)
    # A campaign of the security dimension alone opens with it (the plain targets below are
    # then judged on its `off` points only, and mostly missing).
    security_first = set(data["campaign"].get("dims") or []) == {"security"}
    if security_first:
        security_report.section(doc, v)
    # The campaign's own targets are about dimensions a seed-000-only campaign does not run.
    if set(data["campaign"].get("dims") or []) != {"seed000"}:
        doc.h(2, "Targets")
        doc.table(["target", "measured", "verdict"], targets(v))
    if v.others and "halyard" in v.active:
        doc.h(2, "Halyard ÷ peer")
        doc.table(["peer", "latency 50% (points)", "reliable throughput (points)", "best-effort throughput (points)",
                   "peak RSS (points)"], ratios(v),
                  caption="Geometric means over the points both ran; latency < 1 and throughput > 1 favour Halyard")
    latency_section(doc, v)
    throughput_section(doc, v)
    keyed_section(doc, v)
    subscribers_section(doc, v)
    seed_section(doc, v)
    if not security_first:
        security_report.section(doc, v)
    durability_report.section(doc, v)
    resources_section(doc, v)
    failures_section(doc, v)
    method(doc)
    return doc


def generate(out_dir: str, data: dict) -> None:
    """Writes report.md, report.html and plots/*.svg into ``out_dir``."""
    lb = os.path.join(out_dir, "loss-bench.json")
    if "loss_bench" not in data and os.path.exists(lb):
        with open(lb, encoding="utf-8") as f:
            data["loss_bench"] = json.load(f)
    doc = build(data)
    plots = os.path.join(out_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    for name, text in doc.plots.items():
        with open(os.path.join(plots, f"{name}.svg"), "w", encoding="utf-8") as f:
            f.write(text)
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as f:
        f.write(render_md(doc))
    title = f"Halyard benchmark {data['campaign']['mode']} {data['campaign']['start']}"
    with open(os.path.join(out_dir, "report.html"), "w", encoding="utf-8") as f:
        f.write(render_html(doc, title))


def console_summary(data: dict) -> str:
    """A short plain-text summary: targets and the latency/throughput rows."""
    from . import durability_report, security_report, seed000_report
    v = View(data)
    lines = ["targets:"]
    for t, measured, verdict in seed000_report.targets(v):
        lines.append(f"  {verdict:4s}  seed 000: {t}: {measured}")
    for t, measured, verdict in targets(v):
        lines.append(f"  {verdict:4s}  {t}: {measured}")
    for t, measured, verdict in security_report.targets(v):
        lines.append(f"  {verdict:4s}  security: {t}: {measured}")
    for t, measured, verdict in durability_report.targets(v):
        lines.append(f"  {verdict:4s}  durability: {t}: {measured}")
    lines.append("latency 50% (µs) / throughput (samples/s) per point:")
    for key, p in v.all_points.items():
        cells = []
        for peer in v.active:
            r = v.row(key, peer)
            if r is None:
                cells.append(f"{peer}=—")
            elif p["kind"] == "throughput":
                cells.append(f"{peer}={f_num(r.get('thr_samples_per_s'), 4)}")
            else:
                cells.append(f"{peer}={f_us(r.get('lat_p50_us'))}"
                             + (f"/{f_pct(r.get('success_pct'))}%" if p["kind"] == "rate" else ""))
        lines.append(f"  {key:34s} " + "  ".join(cells))
    return "\n".join(lines)
