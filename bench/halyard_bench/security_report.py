"""The report's security section (issue 11): Halyard vs Cyclone at every protection level of
the security dimension, and the issue's targets, each marked met / not met / not measured.

The cipher floor (``results.json``'s ``security_cipher``, from ``halyard security cipher-bench``
in the same campaign) gives the ``encrypt`` level's ceiling on the machine: the CPU time a
sample costs at ``none`` (sender + receiver process CPU seconds ÷ samples received, at 63000 B)
plus six AES-256-GCM passes (payload, submessage and message, encrypted by the writer and
decrypted by the reader), spread over every core: ceiling = cores ÷ that time. It is shown
beside the measured encrypt ÷ none ratio, for information.

A target is *not met* when Halyard's figure misses it or Halyard failed at that level (the
reason, normally Halyard's own error text, is given); *not measured* when the reference figure
is missing (Cyclone failed, or the point did not run).
"""

from __future__ import annotations

from . import security as sec
from .report import Doc, View, f_num, f_pct, f_ratio, f_us, label

H, C = "halyard", "cyclone"
MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"
# (kind, size) of each measure, in table order; 63000 B is the campaign's "64 KB" point.
LATENCY = [("latency", 32), ("latency", 1024)]
THROUGHPUT = [("throughput", 32), ("throughput", 1024), ("throughput", 63000)]
SEED = ("rate", 1024)
ENCRYPT_SHARE_MIN = 0.70  # ENCRYPT 64 KB throughput ≥ 70 % of the unprotected figure
REASON_MAX = 240


def levels(v: View) -> list[str]:
    """The security dimension's levels present in the results, in security.LEVELS order."""
    present = {p.get("security") or "off" for p in v.all_points.values() if "security" in p["dims"]}
    return [lv for lv in sec.LEVELS if lv in present]


def point_key(v: View, level: str, kind: str, size: int) -> str | None:
    """The security dimension's point of that level, kind and size."""
    want = None if level == "off" else level
    for p in v.all_points.values():
        if ("security" in p["dims"] and p.get("security") == want and p["kind"] == kind
                and p["size"] == size):
            return p["key"]
    return None


def _why(v: View, key: str | None, peer: str) -> str:
    """Why there is no figure: the failed run's reason (shortened), or "not run"."""
    r = v.any_row(key, peer) if key else None
    if r is None or r.get("status") == "skipped":
        return "not run" + (f" ({r['reason']})" if r and r.get("reason") else "")
    reason = r.get("reason") or "no data"
    return f"{r.get('status')}: " + (reason if len(reason) <= REASON_MAX else reason[:REASON_MAX] + "…")


def _failed(v: View, key: str | None, peer: str) -> bool:
    r = v.any_row(key, peer) if key else None
    return r is not None and r.get("status") == "failed"


def _figure(v: View, key: str | None, peer: str, kind: str) -> float | None:
    field_ = "thr_samples_per_s" if kind == "throughput" else "lat_p50_us"
    return v.value(key, peer, field_)


def _cell(v: View, key: str | None, peer: str, kind: str) -> str:
    r = v.row(key, peer)
    if r is None:
        return _why(v, key, peer)
    ax = "≈" if r.get("lat_approx") else ""
    if kind == "throughput":
        fmt = lambda x: f_num(x, 4)  # noqa: E731
        text = f"{fmt(r.get('thr_samples_per_s'))}/s ({f_num(r.get('thr_mbps'), 4)} Mb/s, lost {r.get('lost')})"
    else:
        fmt = f_us
        text = f"{ax}{f_us(r.get('lat_p50_us'))} µs"
    if kind == "rate":
        text += f", success {f_pct(r.get('success_pct'))} %" + (" (sent inferred)" if r.get("sent_inferred") else "")
    if r.get("repeat_min") is not None:  # the spread of the headline figure over the repeats
        text += f" [{fmt(r['repeat_min'])}–{fmt(r['repeat_max'])}]"
    return text


def _measure_name(kind: str, size: int) -> str:
    return {"latency": f"latency 50 % {size} B", "throughput": f"reliable throughput {size} B",
            "rate": f"seed-000 100 Hz {size} B ×10 subs"}[kind]


def table_rows(v: View) -> list[list[str]]:
    """[level, measure, Halyard, Cyclone, Halyard ÷ Cyclone] for every level and measure."""
    rows = []
    for level in levels(v):
        for kind, size in LATENCY + THROUGHPUT + [SEED]:
            key = point_key(v, level, kind, size)
            if key is None:
                continue
            a, b = _figure(v, key, H, kind), _figure(v, key, C, kind)
            rows.append([level, _measure_name(kind, size), _cell(v, key, H, kind), _cell(v, key, C, kind),
                         f_ratio(a / b) if a and b else "n/a"])
    return rows


def _compare(v: View, level: str, measures: list[tuple[str, int]], higher_is_better: bool) -> tuple[str, str]:
    """(measured text, verdict) of "Halyard at least as good as Cyclone at every measure"; the
    sizes that failed for the same reason share one mention of it."""
    ratios, missing, verdicts = [], {}, []
    for kind, size in measures:
        key = point_key(v, level, kind, size)
        a, b = _figure(v, key, H, kind), _figure(v, key, C, kind)
        if a is None:
            missing.setdefault(f"Halyard {_why(v, key, H)}", []).append(f"{size} B")
            verdicts.append(NOT_MET if _failed(v, key, H) else NOT_MEASURED)
        elif b is None:
            missing.setdefault(f"Cyclone {_why(v, key, C)}", []).append(f"{size} B")
            verdicts.append(NOT_MEASURED)
        else:
            ratios.append(f"{size} B: {f_ratio(a / b)}")
            verdicts.append(MET if (a >= b if higher_is_better else a <= b) else NOT_MET)
    parts = ratios + [f"{', '.join(sizes)}: {why}" for why, sizes in missing.items()]
    return "; ".join(parts), _overall(verdicts)


def _overall(verdicts: list[str]) -> str:
    if not verdicts:
        return NOT_MEASURED
    if NOT_MET in verdicts:
        return NOT_MET
    return NOT_MEASURED if NOT_MEASURED in verdicts else MET


def _seed_success(v: View, level: str) -> tuple[str, str]:
    key = point_key(v, level, *SEED)
    a = v.value(key, H, "success_pct")
    b = v.value(key, C, "success_pct")
    other = f"Cyclone {f_pct(b)} %" if b is not None else f"Cyclone {_why(v, key, C)}"
    if a is None:
        verdict = NOT_MET if _failed(v, key, H) else NOT_MEASURED
        return f"Halyard {_why(v, key, H)}; {other}", verdict
    return f"Halyard {f_pct(a)} %; {other}", MET if a >= 100.0 else NOT_MET


def encrypt_share(v: View, level: str, base: str = "none") -> tuple[str, str]:
    """Halyard's 63000 B reliable throughput at ``level`` ÷ its figure at ``base``."""
    ka, kb = point_key(v, level, "throughput", 63000), point_key(v, base, "throughput", 63000)
    a, b = _figure(v, ka, H, "throughput"), _figure(v, kb, H, "throughput")
    if b is None:
        return f"{base}: Halyard {_why(v, kb, H)}", NOT_MEASURED
    if a is None:
        return f"{level}: Halyard {_why(v, ka, H)}", NOT_MET if _failed(v, ka, H) else NOT_MEASURED
    text = f"{f_num(a, 4)}/s ÷ {f_num(b, 4)}/s = {a / b:.0%}"
    return text, MET if a >= ENCRYPT_SHARE_MIN * b else NOT_MET


PASSES_PER_SAMPLE = 6  # encrypt: payload, submessage and message; writer and reader


def cpu_us_per_sample(v: View, key: str | None) -> float | None:
    """Halyard's CPU µs per sample at point ``key``: the sender's and the receivers' CPU
    seconds (utime + stime) over the samples they received, in the median run."""
    r = v.row(key, H)
    if r is None or not r.get("thr_received"):
        return None
    run = next((x for x in v.data["runs"] if x["point"] == key and x["peer"] == H
                and x["repeat"] == r.get("repeat_chosen")), None)
    procs = [p for p in (run or {}).get("processes") or [] if p.get("role") in ("sender", "receiver")]
    if not procs:
        return None
    cpu_s = sum((p.get("utime_s") or 0.0) + (p.get("stime_s") or 0.0) for p in procs)
    return cpu_s * 1e6 / r["thr_received"]


def cipher_ceiling(v: View) -> tuple[str, str] | None:
    """(measured text, "(for information)") of the encrypt level's ceiling on this machine,
    or None when the campaign measured no cipher floor."""
    c = v.data.get("security_cipher")
    if not c:
        return None
    if not c.get("ok"):
        return f"cipher floor not measured: {c.get('error')}", "(not measured)"
    pass_us = float(c["us_per_pass_min"])
    floor = (f"AES-256-GCM {int(c.get('size', 0))} B: {pass_us:.2f} µs a pass "
             f"({c.get('gbytes_per_s')} GB/s, `halyard security cipher-bench`, fastest batch)")
    kn = point_key(v, "none", "throughput", 63000)
    none_sps = _figure(v, kn, H, "throughput")
    cpu = cpu_us_per_sample(v, kn)
    cores = (v.data.get("machine") or {}).get("cores")
    if none_sps is None or cpu is None or not cores:
        return floor + "; no ceiling: Halyard's none figure or its CPU time is missing", "(not measured)"
    ceiling = cores * 1e6 / (cpu + PASSES_PER_SAMPLE * pass_us)
    text = (f"{floor}; none: {cpu:.1f} µs CPU a sample; ceiling {cores} cores ÷ ({cpu:.1f} + "
            f"{PASSES_PER_SAMPLE} × {pass_us:.2f} µs) = {f_num(ceiling, 4)}/s = {ceiling / none_sps:.0%} of none")
    ka = point_key(v, "encrypt", "throughput", 63000)
    enc = _figure(v, ka, H, "throughput")
    if enc is not None:
        text += f"; measured encrypt ÷ none = {enc / none_sps:.0%}"
    return text, "(for information)"


def targets(v: View) -> list[list[str]]:
    """[target, measured, verdict] rows of issue 11's benchmark targets (empty without the
    security dimension)."""
    out: list[list[str]] = []
    lv = levels(v)
    for level in lv:
        out.append([f"{level}: median latency ≤ Cyclone (32 B, 1 KB; Halyard ÷ Cyclone)",
                    *_compare(v, level, LATENCY, higher_is_better=False)])
        out.append([f"{level}: reliable throughput ≥ Cyclone (32 B, 1 KB, 63000 B; Halyard ÷ Cyclone)",
                    *_compare(v, level, THROUGHPUT, higher_is_better=True)])
        out.append([f"{level}: seed-000 workload success 100 %", *_seed_success(v, level)])
    if "none" in lv:
        for level in ("rtps-encrypt", "encrypt", "encrypt-origin"):
            if level not in lv:
                continue
            target = level == "encrypt"
            name = (f"{level} 63000 B reliable throughput ≥ {ENCRYPT_SHARE_MIN:.0%} of Halyard's at none"
                    + ("" if target else " (for information; the target is encrypt's)"))
            text, verdict = encrypt_share(v, level)
            measured = _figure(v, point_key(v, level, "throughput", 63000), H, "throughput") is not None
            if "off" in lv and measured:  # the share against no DDS Security at all, too
                text += f"; vs off (no DDS Security): {encrypt_share(v, level, 'off')[0]}"
            out.append([name, text, verdict if target else f"({verdict})"])
        ceiling = cipher_ceiling(v) if "encrypt" in lv else None
        if ceiling:
            out.append(["encrypt 63000 B: the ceiling the cipher floor implies on this machine", *ceiling])
    return out


def section(doc: Doc, v: View) -> None:
    """The security section: levels, the Halyard vs Cyclone table and the targets."""
    lv = levels(v)
    if not lv:
        return
    doc.h(2, "Security (issue 11): Halyard vs Cyclone at each DDS Security protection level")
    setups = v.data.get("security") or {}
    rows = []
    for level in lv:
        s = setups.get(level) or {}
        opts = sec.INIT_OPTIONS.get(level)
        how = "no DDS Security" if opts is None else "`halyard security init DIR --participant … " + " ".join(opts) + "`"
        state = "" if opts is None or s.get("ok") else f"; set-up failed: {s.get('error') or 'not made'}"
        rows.append([level, sec.DESCRIPTIONS.get(level, ""), how + state])
    doc.table(["level", "protection", "set-up"], rows,
              caption="Halyard (HALYARD_SECURITY=DIR/NAME) and Cyclone (CYCLONEDDS_URI with `halyard security "
                      "cyclone-config DIR/NAME`) use the same set-up directory, one identity per process")
    doc.table(["target", "measured", "verdict"], targets(v), caption="Issue 11's targets")
    doc.table(["level", "measure", label(H), label(C), "Halyard ÷ Cyclone"], table_rows(v),
              caption="Median run of the repeats, [min–max] of its figure over the repeats; latency one-way µs (≈: Cyclone's from per-second percentiles); "
                      "throughput samples/s per subscriber; a failed cell gives the run's reason (the peer's "
                      "error text); the ratio favours Halyard below 1 for latency, above 1 for throughput")
