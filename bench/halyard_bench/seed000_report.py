"""Seed 000's evaluation in its own layout: the report of the ``seed000`` dimension.

Tables 11 (latency, throughput and success per rate and size), 12 (CPU and memory per rate,
without and with security) and 13/14 (beside the blockchain and TAXII comparators, and the
TAXII-polling baseline measured in the same run), and Figures 11 (latency by size per rate),
12 (latency by size per protection level), 13 (by subscriber count), 14 (throughput by size
per rate), 15 (min/average/max per level), 16 (overhead over no protection) and 19 (the stress
test's messages per second by size, against raw UDP sockets). The seed's published figures
sit in the same tables, marked "seed 000"; ``targets`` judges issue 39's targets on them.

Points are read from every point whose dimensions include ``seed000`` (secured ones too).
"""
from __future__ import annotations

from . import seed000, svg
from .plan import SEED_FIGURE_RATE, SEED_LEVELS, SEED_RATES, SEED_SUBS_FULL
from .stats import finite

LEVEL_COLOURS = {"off": "#4c72b0", "sign": "#55a868", "encrypt": "#dd8452", "encrypt-origin": "#c44e52"}
RATE_COLOURS = {50: "#4c72b0", 75: "#55a868", 100: "#dd8452", 125: "#c44e52"}
SUB_COLOURS = {1: "#4c72b0", 2: "#55a868", 4: "#8172b3", 8: "#dd8452", 10: "#c44e52"}
# Issue 39's targets.
LATENCY_SHARE_MAX = 0.25  # of the seed's average, where it published one
TAXII_RATIO_MIN = 50.0  # the TAXII-polling baseline's latency ÷ ours
FULL_OVER_OFF_MAX = 1.20  # fully protected ÷ no protection at 8 KB
NODE_CPU_MAX_PCT = 2.0
NODE_RSS_MAX_MB = 32.0


def _points(v) -> list[dict]:
    return [p for p in v.all_points.values() if "seed000" in p.get("dims", [])]


def _rate_point(v, rate: int, size: int, subs: int = 1, level: str | None = None) -> str | None:
    for p in _points(v):
        if (p["kind"] == "rate" and p["rate_hz"] == rate and p["size"] == size and p["receivers"] == subs
                and p.get("security") == level):
            return p["key"]
    return None


def _val(v, key: str | None, field_: str):
    return v.value(key, "halyard", field_)


def _f(x, digits: int = 0, unit: str = "") -> str:
    if x is None or not finite(x):
        return "—"
    return f"{x:,.{digits}f}{unit}"


def _pub(x) -> str:
    if x is None:
        return "—"
    return f"{x:g}" if isinstance(x, (int, float)) else str(x)


def _sizes(v) -> list[int]:
    return sorted({p["size"] for p in _points(v) if p["kind"] == "rate"})


def _node(v) -> dict | None:
    return v.data.get("seed000_node")


def _polling_best_ms(v) -> float | None:
    """The TAXII-polling baseline's lowest mean latency over its runs (the fairest to it)."""
    node = _node(v) or {}
    vals = [p.get("mean_ms") for p in node.get("polling") or [] if finite(p.get("mean_ms"))]
    return min(vals) if vals else None


def section(doc, v) -> None:
    pts = _points(v)
    if not pts:
        return
    sizes = _sizes(v)
    doc.h(2, "Seed 000's evaluation, reproduced")
    doc.p(f"Published figures: {seed000.SOURCE}; the seed's tables and figures are described in its text, "
          "which gives the cells below marked *seed 000* (elsewhere its published range). Ours: Halyard "
          "(`halyard perf`) with the seed's QoS — RELIABLE, KEEP_ALL, PERSISTENT through the embedded durability "
          "service — 1000 samples per run, every sample a ping (one-way latency = round trip ÷ 2, measured by "
          "the publisher), on one host's loopback where the seed used two hosts through a 1 Gb/s switch. "
          "Protection levels: " + "; ".join(f"*{name}* = `{lv}`" for lv, name in SEED_LEVELS.items()) + ".")
    _table11(doc, v, sizes)
    _table12(doc, v, sizes)
    _table13(doc, v)
    _figures(doc, v, sizes)


def _table11(doc, v, sizes: list[int]) -> None:
    rows = []
    for r in SEED_RATES:
        for s in sizes:
            pub = seed000.published(r, s)
            if isinstance(pub["latency_us"], float) or pub["throughput_mbps"] is not None:
                rows.append([str(r), str(s), "seed 000", _pub(pub["latency_us"]), "—", "—", "—", "—",
                             f"{r}", _pub(pub["throughput_mbps"]), "100"])
            k = _rate_point(v, r, s)
            row = v.row(k, "halyard")
            if row is None:
                rows.append([str(r), str(s), "Halyard", "not run" if k is None else "failed"] + [""] * 7)
                continue
            rows.append([str(r), str(s), "Halyard", _f(row.get("lat_ave_us")), _f(row.get("lat_min_us")),
                         _f(row.get("lat_max_us")), _f(row.get("lat_p50_us")), _f(row.get("lat_p99_us")),
                         _f(row.get("thr_samples_per_s"), 1), _f(row.get("thr_mbps"), 3),
                         _f(row.get("success_pct"), 1)])
    doc.h(3, "Table 11: latency, throughput and success rate (1000 samples, 1 subscriber, no protection)")
    doc.table(["msg/s", "size B", "who", "average µs", "min µs", "max µs", "50 % µs", "99 % µs", "msg/s received",
               "Mb/s", "success %"], rows)


def _table12(doc, v, sizes: list[int]) -> None:
    rows = []
    for r in SEED_RATES:
        plain = [_rate_point(v, r, s) for s in sizes]

        def mean(keys, field_):
            vals = [_val(v, k, field_) for k in keys]
            vals = [x for x in vals if x is not None]
            return sum(vals) / len(vals) if vals else None

        def peak(keys, field_):
            vals = [_val(v, k, field_) for k in keys]
            vals = [x for x in vals if x is not None]
            return max(vals) / 1024 if vals else None

        full = [_rate_point(v, r, 1024, level="encrypt-origin")]
        rows.append([str(r), "seed 000", _pub(seed000.CPU_PCT.get(r, "6.83–7.59")),
                     _pub(seed000.MEMORY_MB.get(r, "84–89")), _pub(seed000.SECURE_CPU_PCT.get(r, "6.88–7.64")),
                     _pub(seed000.SECURE_MEMORY_MB.get(r, "86–94"))])
        rows.append([str(r), "Halyard publisher",
                     _f(mean(plain, "cpu_sender_pct"), 2), _f(peak(plain, "rss_sender_kb"), 1),
                     _f(mean(full, "cpu_sender_pct"), 2), _f(peak(full, "rss_sender_kb"), 1)])
        rows.append([str(r), "Halyard subscriber",
                     _f(mean(plain, "cpu_receiver_pct"), 2), _f(peak(plain, "rss_receiver_kb"), 1),
                     _f(mean(full, "cpu_receiver_pct"), 2), _f(peak(full, "rss_receiver_kb"), 1)])
    doc.h(3, "Table 12: CPU and memory per process")
    doc.table(["msg/s", "who", "CPU % (no protection)", "memory MB (no protection)", "CPU % (full protection)",
               "memory MB (full protection)"], rows,
              caption="Halyard: CPU = (utime+stime) ÷ wall per process, mean over sizes (full protection: 1024 B); "
                      "memory = peak RSS, max over sizes")


def _table13(doc, v) -> None:
    keys = [p["key"] for p in _points(v) if p["kind"] == "rate"]
    lat = [_val(v, k, "lat_ave_us") for k in keys]
    lat = [x for x in lat if x is not None]
    succ = [_val(v, k, "success_pct") for k in keys]
    succ = [x for x in succ if x is not None]
    cpu = [_val(v, k, "cpu_sender_pct") for k in keys if not v.all_points[k].get("security")]
    cpu = [x for x in cpu if x is not None]
    rss = [_val(v, k, "rss_sender_kb") for k in keys]
    rss = [x / 1024 for x in rss if x is not None]
    rows = [["seed 000 (DDS, RTI Connext)", "100 %", "779–1013 µs", "6.83–7.64 %", "84–94 MB", "= send rate"]]
    if lat:
        rows.append(["Halyard (this run, every seed-000 point)",
                     f"{min(succ):.1f}–{max(succ):.1f} %" if succ else "—",
                     f"{min(lat):,.0f}–{max(lat):,.0f} µs", f"{min(cpu):.2f}–{max(cpu):.2f} %" if cpu else "—",
                     f"{min(rss):.1f}–{max(rss):.1f} MB" if rss else "—", "= send rate (Table 11)"])
    node = _node(v)
    if node and node.get("polling"):
        pol = [p for p in node["polling"] if finite(p.get("mean_ms"))]
        if pol:
            rows.append(["TAXII 2.1 polling (medallion + taxii2-client, this run)",
                         f"{min(100.0 * p['delivered'] / p['sent'] for p in pol if p.get('sent')):.0f} %",
                         f"{min(p['mean_ms'] for p in pol):,.1f}–{max(p['mean_ms'] for p in pol):,.1f} ms mean",
                         "—", "—", "—"])
    for c in seed000.COMPARATORS:
        rows.append([c["system"] + " (published)", c["success"], c["latency"], c["cpu"], c["memory"],
                     c["throughput"]])
    doc.h(3, "Tables 13 and 14: beside blockchain and TAXII sharing")
    doc.table(["system", "success", "latency", "CPU", "memory", "throughput"], rows,
              caption="Halyard's CPU is the publisher's without protection; memory the publisher's peak RSS")
    if node and node.get("load_125"):
        ld = node["load_125"]
        doc.p("The whole node (`halyard-cti serve`: validation, sanitisation, SQLite store, durability service, "
              f"TAXII and REST) at 125 objects/s for its load run: publisher node CPU "
              f"{_f(ld['publisher'].get('cpu_percent'), 1)} %, peak RSS {_f(ld['publisher'].get('rss_mib_max'), 1)} MiB; "
              f"receiver node CPU {_f(ld['receiver'].get('cpu_percent'), 1)} %, peak RSS "
              f"{_f(ld['receiver'].get('rss_mib_max'), 1)} MiB; publish → served over TAXII p50 "
              f"{_f(ld['latency'].get('p50_ms'), 2)} ms (bench/cti/e2e.py, same run).")


def _line(title: str, x: svg.Axis, ylabel: str, series: list[tuple[str, list[tuple[float, float]], str, str | None]],
          log_y: bool = False, whiskers: dict | None = None) -> str:
    ys = [y for _, pts, _, _ in series for _, y in pts]
    if whiskers:
        ys += [w for ws in whiskers.values() for _, lo, _, hi in ws for w in (lo, hi)]
    lo, hi = svg.nice_range(ys, log_y)
    chart = svg.LineChart(title, x, svg.Axis(lo, hi, log_y, ylabel))
    for label, pts, colour, dash in series:
        chart.add(svg.Series(label, pts, colour, dash, whiskers=(whiskers or {}).get(label, [])))
    return chart.render()


def _figures(doc, v, sizes: list[int]) -> None:
    xs = svg.size_axis(sizes, "message size (bytes)")

    def lat_series(rate: int, subs: int = 1, level: str | None = None, field_: str = "lat_ave_us"):
        return [(s, _val(v, _rate_point(v, rate, s, subs, level), field_)) for s in sizes
                if _val(v, _rate_point(v, rate, s, subs, level), field_) is not None]

    fig11 = [(f"{r} msg/s", lat_series(r), RATE_COLOURS[r], None) for r in SEED_RATES]
    fig11 += [(f"seed 000, {r} msg/s", [(s, seed000.LATENCY_US[(r, s)]) for s in (32, 8192)], RATE_COLOURS[r], "5,4")
              for r in (50, 125)]
    doc.plot("seed000_fig11_latency_by_rate",
             _line("Figure 11: average latency by size, per send rate (no protection)", xs, "latency (µs)", fig11,
                   log_y=True), "Dashed: the seed's published ends of the range")
    levels = list(SEED_LEVELS)

    def level_key(lv: str) -> str | None:
        return None if lv == "off" else lv

    fig12 = [(SEED_LEVELS[lv], lat_series(SEED_FIGURE_RATE, level=level_key(lv)), LEVEL_COLOURS[lv], None)
             for lv in levels]
    doc.plot("seed000_fig12_latency_by_level",
             _line(f"Figure 12: average latency by size, per protection level ({SEED_FIGURE_RATE} msg/s)", xs,
                   "latency (µs)", fig12, log_y=True))
    fig13 = [(f"{n} subscriber{'s' if n > 1 else ''}", lat_series(SEED_FIGURE_RATE, n), SUB_COLOURS[n], None)
             for n in SEED_SUBS_FULL]
    doc.plot("seed000_fig13_latency_by_subscribers",
             _line(f"Figure 13: average latency by size, per subscriber count ({SEED_FIGURE_RATE} msg/s)", xs,
                   "latency (µs)", fig13, log_y=True))
    fig14 = [(f"{r} msg/s", [(s, _val(v, _rate_point(v, r, s), "thr_mbps")) for s in sizes
                             if _val(v, _rate_point(v, r, s), "thr_mbps") is not None], RATE_COLOURS[r], None)
             for r in SEED_RATES]
    fig14 += [("seed 000", [(s, m) for (r, s), m in seed000.THROUGHPUT_MBPS.items() if r == 50] , "#888888", "5,4")]
    doc.plot("seed000_fig14_throughput",
             _line("Figure 14: throughput by size, per send rate", xs, "Mb/s", fig14, log_y=True))
    whiskers = {}
    fig15 = []
    for lv in levels:
        mids = lat_series(SEED_FIGURE_RATE, level=level_key(lv))
        lows = dict(lat_series(SEED_FIGURE_RATE, level=level_key(lv), field_="lat_min_us"))
        highs = dict(lat_series(SEED_FIGURE_RATE, level=level_key(lv), field_="lat_max_us"))
        label = SEED_LEVELS[lv]
        whiskers[label] = [(s, lows[s], m, highs[s]) for s, m in mids if s in lows and s in highs]
        fig15.append((label, mids, LEVEL_COLOURS[lv], None))
    doc.plot("seed000_fig15_min_avg_max",
             _line(f"Figure 15: minimum, average and maximum latency by size, per level ({SEED_FIGURE_RATE} msg/s)",
                   xs, "latency (µs)", fig15, log_y=True, whiskers=whiskers),
             "Whiskers: minimum and maximum of each run")
    base = dict(lat_series(SEED_FIGURE_RATE))
    fig16 = []
    for lv in levels[1:]:
        pts = [(s, 100.0 * (m / base[s] - 1.0)) for s, m in lat_series(SEED_FIGURE_RATE, level=lv) if base.get(s)]
        fig16.append((SEED_LEVELS[lv], pts, LEVEL_COLOURS[lv], None))
        lo, hi = seed000.OVERHEAD_PCT[lv]
        fig16.append((f"seed 000, {lv}", [(32, lo), (8192, hi)], LEVEL_COLOURS[lv], "5,4"))
    doc.plot("seed000_fig16_overhead",
             _line("Figure 16: latency overhead over no protection, by size", xs, "overhead (%)", fig16),
             "Dashed: the seed's published overheads at 32 B and 8192 B")
    stress = sorted((p for p in _points(v) if p["kind"] == "throughput"), key=lambda p: p["size"])
    if stress:
        peers = [p for p in v.active if any(v.row(q["key"], p) for q in stress)]
        fig19 = []
        rows = []
        for peer in peers:
            pts = [(q["size"], v.value(q["key"], peer, "thr_samples_per_s")) for q in stress]
            fig19.append((peer if peer != "udp" else "raw UDP sockets", [(x, y) for x, y in pts if y is not None],
                          {"halyard": "#4c72b0", "udp": "#c44e52"}.get(peer, "#8172b3"), None))
        for q in stress:
            cells = [str(q["size"])]
            for peer in peers:
                r = v.row(q["key"], peer)
                cells.append(f"{_f(r.get('thr_samples_per_s'))} msg/s, {_f(r.get('thr_mbps'))} Mb/s, lost "
                             f"{r.get('lost') if r.get('lost') is not None else '—'}" if r else "—")
            rows.append(cells)
        doc.plot("seed000_fig19_stress",
                 _line("Figure 19: messages per second at full speed, by size", xs, "messages/s", fig19, log_y=True))
        doc.table(["size B"] + [("Halyard (reliable)" if p == "halyard" else "raw UDP (best effort)"
                                 if p == "udp" else p) for p in peers], rows,
                  caption=f"The stress test: {stress[0]['duration']:g} s of writing without a rate limit per size "
                          "(the seed ran 20 s); lost = sequence gaps at the subscriber")


def targets(v) -> list[list[str]]:
    """Issue 39's targets on the seed000 points: [target, measured, verdict]."""
    pts = [p for p in _points(v) if p["kind"] == "rate"]
    if not pts:
        return []
    out = []
    succ = [(p["key"], _val(v, p["key"], "success_pct")) for p in pts]
    missing = [k for k, s in succ if s is None]
    worst = min((s for _, s in succ if s is not None), default=None)
    ok = not missing and worst is not None and worst >= 100.0
    out.append(["100 % delivery at every seed-000 point",
                f"worst {_f(worst, 1)} % over {len(pts) - len(missing)} points"
                + (f"; {len(missing)} without a result" if missing else ""), "PASS" if ok else "FAIL"])
    cells, ok = [], True
    for (r, s), published in seed000.LATENCY_US.items():
        ours = _val(v, _rate_point(v, r, s), "lat_ave_us")
        if ours is None:
            ok = False
            cells.append(f"{r}/s {s} B: —")
            continue
        share = ours / published
        ok = ok and share <= LATENCY_SHARE_MAX
        cells.append(f"{r}/s {s} B: {ours:,.0f} µs = {share:.0%} of {published:g}")
    out.append([f"average latency ≤ {LATENCY_SHARE_MAX:.0%} of the seed's where it published one", "; ".join(cells),
                "PASS" if ok else "FAIL"])
    polling = _polling_best_ms(v)
    lat = [_val(v, p["key"], "lat_ave_us") for p in pts if not p.get("security") and p["receivers"] == 1]
    lat = [x for x in lat if x is not None]
    if polling is None or not lat:
        out.append([f"≥ {TAXII_RATIO_MIN:g}× lower latency than TAXII polling (same run)", "no polling baseline", "n/a"])
    else:
        ratio = polling * 1000.0 / max(lat)
        out.append([f"≥ {TAXII_RATIO_MIN:g}× lower latency than TAXII polling (same run)",
                    f"polling best mean {polling:,.1f} ms ÷ our worst average {max(lat):,.0f} µs = {ratio:,.0f}×",
                    "PASS" if ratio >= TAXII_RATIO_MIN else "FAIL"])
    off = _val(v, _rate_point(v, SEED_FIGURE_RATE, 8192), "lat_ave_us")
    full = _val(v, _rate_point(v, SEED_FIGURE_RATE, 8192, level="encrypt-origin"), "lat_ave_us")
    if off is None or full is None:
        out.append(["full protection within 20 % of none at 8 KB", "not measured", "n/a"])
    else:
        out.append(["full protection within 20 % of none at 8 KB",
                    f"{full:,.0f} µs ÷ {off:,.0f} µs = {full / off:.2f}",
                    "PASS" if full / off <= FULL_OVER_OFF_MAX else "FAIL"])
    node = _node(v)
    ld = (node or {}).get("load_125")
    if not ld:
        out.append([f"node CPU < {NODE_CPU_MAX_PCT:g} % and RSS < {NODE_RSS_MAX_MB:g} MB at 125 msg/s",
                    "the node's load run did not run", "n/a"])
    else:
        cpu = max(ld["publisher"].get("cpu_percent") or 0, ld["receiver"].get("cpu_percent") or 0)
        rss = max(ld["publisher"].get("rss_mib_max") or 0, ld["receiver"].get("rss_mib_max") or 0) * 1.048576
        out.append([f"node CPU < {NODE_CPU_MAX_PCT:g} % and RSS < {NODE_RSS_MAX_MB:g} MB at 125 msg/s",
                    f"CPU {cpu:.1f} %, RSS {rss:.1f} MB (the busier node)",
                    "PASS" if cpu < NODE_CPU_MAX_PCT and rss < NODE_RSS_MAX_MB else "FAIL"])
    pub125 = [_val(v, _rate_point(v, 125, s), "cpu_sender_pct") for s in _sizes(v)]
    pub125 = [x for x in pub125 if x is not None]
    if pub125:
        out.append(["(for comparison) DDS publisher process CPU at 125 msg/s, mean over sizes",
                    f"{sum(pub125) / len(pub125):.2f} %", "info"])
    return out
