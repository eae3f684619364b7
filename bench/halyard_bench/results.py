"""results.json / results.csv: the campaign's complete record and its one-row-per-peer-per-point
summary. Reports are generated from results.json alone (``campaign.py --report-only DIR``).
"""

from __future__ import annotations

import csv
import json
import math
import os

from .runner import principal

SCHEMA = 1

CSV_COLUMNS = [
    "point", "dims", "kind", "peer", "status", "reason", "reliable", "topic", "size", "rate_hz",
    "receivers", "listeners", "duration_s", "runs", "lat_source", "lat_approx", "lat_ave_us", "lat_std_us",
    "lat_min_us", "lat_max_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p9999_us",
    "lat_count", "thr_samples_per_s", "thr_mbps", "thr_aggregate_samples_per_s", "lost", "thr_received", "sent",
    "sent_inferred", "success_pct", "cpu_sender_pct", "cpu_receiver_pct", "rss_sender_kb",
    "rss_receiver_kb", "listener_received_min", "listener_pings_answered", "cpu_listener_pct",
    "rss_listener_kb", "repeat_min", "repeat_max", "durability", "store_bytes", "notes",
]


def _median_run(runs: list[dict], kind: str) -> dict:
    ok = [r for r in runs if r["status"] == "ok" and math.isfinite(principal(r, kind))]
    if not ok:
        return runs[0]
    ok.sort(key=lambda r: principal(r, kind))
    return ok[(len(ok) - 1) // 2]


def summary_rows(points: list[dict], runs: list[dict], peers: list[dict]) -> list[dict]:
    """One row per peer per point: the figures of the median run (or why there are none)."""
    by_key: dict[tuple[str, str], list[dict]] = {}
    for r in runs:
        by_key.setdefault((r["point"], r["peer"]), []).append(r)
    rows = []
    for pt in points:
        for peer in peers:
            runs_here = by_key.get((pt["key"], peer["name"]), [])
            row = {
                "point": pt["key"], "dims": "+".join(pt["dims"]), "kind": pt["kind"],
                "peer": peer["name"], "reliable": pt["reliable"], "topic": pt["topic"],
                "size": pt["size"], "rate_hz": pt["rate_hz"], "receivers": pt["receivers"],
                "listeners": pt.get("listeners", 0), "durability": pt.get("durability"),
                "duration_s": pt["duration"], "runs": len(runs_here),
            }
            if not runs_here:
                row["status"] = "skipped"
                row["reason"] = peer.get("reason") or "not run"
                rows.append(row)
                continue
            run = _median_run(runs_here, pt["kind"])
            row.update(_flatten(run))
            figures = [principal(r, pt["kind"]) for r in runs_here if r["status"] == "ok"]
            figures = [f for f in figures if math.isfinite(f)]
            if len(runs_here) > 1 and figures:  # spread of the figure the median run is chosen by
                row["repeat_min"], row["repeat_max"] = min(figures), max(figures)
            rows.append(row)
    return rows


def _flatten(run: dict) -> dict:
    st = run.get("stats") or {}
    row: dict = {"status": run["status"], "reason": run.get("reason", ""),
                 "notes": "; ".join(run.get("notes") or []), "repeat_chosen": run["repeat"]}
    if run.get("store_bytes") is not None:
        row["store_bytes"] = run["store_bytes"]
    lat = st.get("latency")
    if lat:
        row.update({
            "lat_source": lat["source"], "lat_approx": lat["approx"], "lat_ave_us": lat["ave"],
            "lat_std_us": lat["std"], "lat_min_us": lat["min"], "lat_max_us": lat["max"],
            "lat_p50_us": lat["p50"], "lat_p90_us": lat["p90"], "lat_p99_us": lat["p99"],
            "lat_p9999_us": lat["p9999"], "lat_count": lat["count"],
        })
    thr = st.get("throughput")
    if thr:
        row.update({
            "thr_samples_per_s": thr["samples_per_s"], "thr_mbps": thr["mbps"],
            "thr_aggregate_samples_per_s": thr["aggregate_samples_per_s"], "lost": thr["lost"],
            "thr_received": sum(thr.get("received") or []),
        })
    if "sent" in st:
        row["sent"] = st["sent"]
        row["sent_inferred"] = st.get("sent_inferred")
    if "success_pct" in st:
        row["success_pct"] = st["success_pct"]
    snd, rcv = st.get("sender") or {}, st.get("receivers") or {}
    row["cpu_sender_pct"] = snd.get("cpu_pct_mean")
    row["cpu_receiver_pct"] = rcv.get("cpu_pct_mean")
    row["rss_sender_kb"] = snd.get("rss_kb_max")
    row["rss_receiver_kb"] = rcv.get("rss_kb_max")
    lis = st.get("listeners")
    if lis:
        row["listener_received_min"] = min(lis["received"], default=None)
        row["listener_pings_answered"] = lis["pings_answered"]
        row["cpu_listener_pct"] = lis.get("cpu_pct_mean")
        row["rss_listener_kb"] = lis.get("rss_kb_max")
    if not st.get("sender") and run.get("processes"):
        procs = run["processes"]
        row["rss_sender_kb"] = max((p["maxrss_kb"] for p in procs if p["role"] == "sender"), default=None)
    return row


def sanitize(v):
    """Replaces NaN/infinity (not valid JSON) by None, recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: sanitize(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [sanitize(x) for x in v]
    return v


def write_json(path: str, data: dict) -> None:
    """Writes ``data`` atomically (NaN becomes null)."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(sanitize(data), f, indent=1, allow_nan=False, default=str)
        f.write("\n")
    os.replace(tmp, path)


def load_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: unsupported results schema {data.get('schema')!r}")
    return data


def _csv_value(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if not math.isfinite(v) else f"{v:.6g}"
    return str(v)


def write_csv(path: str, rows: list[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for row in rows:
            w.writerow([_csv_value(row.get(c)) for c in CSV_COLUMNS])
