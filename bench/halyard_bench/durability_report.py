"""The report's durability section (issue 12): PERSISTENT beside VOLATILE for Halyard and
Fast DDS (its SQLite persistence plugin), the whole-service figures of
``halyard durability-bench``, and the issue's targets, each met / not met / not measured."""

from __future__ import annotations

from .plan import DURABILITY_DEFAULT_SYNC_LEVEL
from .report import Doc, View, f_num, f_us, label

H, F = "halyard", "fastdds"
PEERS = (H, F)
MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"
THROUGHPUT_SHARE_MIN = 0.50  # PERSISTENT reliable 1 KB throughput ≥ 50 % of VOLATILE
CATCHUP_MAX_S = 5.0  # a late reader catches up 1 M samples of 1 KB in < 5 s
CATCHUP_SAMPLES = 1_000_000


def point_key(v: View, kind: str, size: int, durability: str | None,
              sync: str | None = None) -> str | None:
    """The durability dimension's point of that kind, size, durability (None = volatile) and
    Halyard store sync level (None = the default level)."""
    for p in v.all_points.values():
        if ("durability" in p["dims"] and p["kind"] == kind and p["size"] == size
                and p.get("durability") == durability and p.get("sync") == sync):
            return p["key"]
    return None


def _field(kind: str) -> str:
    return "thr_samples_per_s" if kind == "throughput" else "lat_p50_us"


def _figure(v: View, kind: str, size: int, durability: str | None, peer: str,
            sync: str | None = None) -> float | None:
    return v.value(point_key(v, kind, size, durability, sync), peer, _field(kind))


def _cell(v: View, kind: str, size: int, durability: str | None, peer: str) -> str:
    key = point_key(v, kind, size, durability)
    r = v.row(key, peer)
    if r is None:
        any_ = v.any_row(key, peer) if key else None
        why = (any_ or {}).get("reason") or "not run"
        return f"{(any_ or {}).get('status', 'not run')}: {why[:160]}"
    if kind == "throughput":
        text = f"{f_num(r.get('thr_samples_per_s'), 4)}/s (lost {r.get('lost')})"
    else:
        text = f"{f_us(r.get('lat_p50_us'))} µs"
    if r.get("store_bytes"):
        text += f", store {r['store_bytes'] / 1e6:.1f} MB"
    return text


def _share(a: float | None, b: float | None, kind: str) -> str:
    """PERSISTENT ÷ VOLATILE (throughput) or VOLATILE ÷ PERSISTENT (latency): 1 = free."""
    if not a or not b:
        return "n/a"
    return f"{a / b:.0%}" if kind == "throughput" else f"{b / a:.0%}"


def table_rows(v: View) -> list[list[str]]:
    rows = []
    sizes = sorted({(p["kind"], p["size"]) for p in v.all_points.values()
                    if "durability" in p["dims"] and not p.get("sync")},
                   key=lambda ks: (ks[0] != "throughput", ks[1]))
    for kind, size in sizes:
        row = [f"{'reliable throughput' if kind == 'throughput' else 'latency 50 %'} {size} B"]
        for peer in PEERS:
            vol = _figure(v, kind, size, None, peer)
            per = _figure(v, kind, size, "persistent", peer)
            row += [_cell(v, kind, size, None, peer), _cell(v, kind, size, "persistent", peer),
                    _share(per, vol, kind)]
        rows.append(row)
    return rows


def targets(v: View) -> list[list[str]]:
    """[target, measured, verdict] rows of issue 12's benchmark targets (empty without the
    durability dimension)."""
    if not any("durability" in p["dims"] for p in v.all_points.values()):
        return []
    out = []
    vol, per = (_figure(v, "throughput", 1024, d, H) for d in (None, "persistent"))
    if vol and per:
        out.append(["Halyard PERSISTENT reliable throughput 1 KB ≥ 50 % of VOLATILE",
                    f"{f_num(per, 4)}/s ÷ {f_num(vol, 4)}/s = {per / vol:.0%}",
                    MET if per >= THROUGHPUT_SHARE_MIN * vol else NOT_MET])
    else:
        out.append(["Halyard PERSISTENT reliable throughput 1 KB ≥ 50 % of VOLATILE", "missing", NOT_MEASURED])
    b = v.data.get("durability_bench") or {}
    n, secs = b.get("catchup_samples"), b.get("catchup_s")
    if n and secs is not None:
        measured = f"{n} samples in {secs:.2f} s ({b.get('catchup_kps', 0):.0f} kS/s)"
        if n >= CATCHUP_SAMPLES:
            verdict = MET if secs < CATCHUP_MAX_S else NOT_MET
        else:
            measured += f"; at that rate 1 M would take {secs * CATCHUP_SAMPLES / n:.1f} s"
            verdict = NOT_MEASURED
        out.append(["late-joiner catch-up of 1 M × 1 KB < 5 s", measured, verdict])
    else:
        out.append(["late-joiner catch-up of 1 M × 1 KB < 5 s",
                    v.data.get("durability_bench_failed") or "not run", NOT_MEASURED])
    for kind, name, better in (("throughput", "reliable throughput", max), ("latency", "latency 50 %", min)):
        cmp = []
        verdicts = []
        for size in sorted({p["size"] for p in v.all_points.values()
                            if "durability" in p["dims"] and p["kind"] == kind}):
            a, f = _figure(v, kind, size, "persistent", H), _figure(v, kind, size, "persistent", F)
            if a is None or f is None:
                cmp.append(f"{size} B: " + ("Halyard" if a is None else "Fast DDS") + " missing")
                verdicts.append(NOT_MEASURED)
                continue
            cmp.append(f"{size} B: {a / f:.2f}×")
            verdicts.append(MET if better(a, f) == a else NOT_MET)
        verdict = NOT_MET if NOT_MET in verdicts else NOT_MEASURED if NOT_MEASURED in verdicts or not verdicts else MET
        out.append([f"Halyard PERSISTENT {name} better than Fast DDS PERSISTENT (Halyard ÷ Fast DDS)",
                    "; ".join(cmp) or "missing", verdict])
    return out


def section(doc: Doc, v: View) -> None:
    """The durability section: the targets, PERSISTENT vs VOLATILE, the service figures."""
    if not any("durability" in p["dims"] for p in v.all_points.values()):
        return
    doc.h(2, "Durability (issue 12): PERSISTENT beside VOLATILE")
    doc.table(["target", "measured", "verdict"], targets(v), caption="Issue 12's targets")
    headers = ["measure"]
    for peer in PEERS:
        headers += [f"{label(peer)} VOLATILE", f"{label(peer)} PERSISTENT", f"{label(peer)} share"]
    doc.table(headers, table_rows(v),
              caption="Halyard: `halyard perf --durability persistent`, each process's embedded "
                      "durability service on its own SQLite store (HALYARD_DURABILITY_STORE), commits "
                      "batched by the service's default (4096 samples or 10 ms since 2026-11-29, 1024 or "
                      "5 ms before); Fast DDS: `--durability persistent "
                      "--persistence-db FILE` (its SQLite persistence plugin). share: the PERSISTENT "
                      "figure as a fraction of the VOLATILE one (latency: VOLATILE ÷ PERSISTENT); store: "
                      "the run's store files, all processes")
    levels = sync_levels(v)
    if levels:
        doc.table(["size", "Halyard VOLATILE", f"PERSISTENT default level ({DURABILITY_DEFAULT_SYNC_LEVEL})"]
                  + [f"PERSISTENT {x}" for x in levels],
                  sync_rows(v),
                  caption="Halyard reliable throughput by store sync level (HALYARD_DURABILITY_SYNC): "
                          "process = rollback journal, no fsync; normal = write-ahead log fsynced at "
                          "checkpoints; full = rollback journal fsynced at each commit. In brackets: the "
                          "share of VOLATILE")
    floor = floor_rows(v)
    if floor:
        doc.table(["append floor", "figure"], floor,
                  caption="What a store pays at least per 1 KB sample on this machine's file system: one "
                          "thread appending to a fresh file (bench/halyard_bench/durability.py), measured "
                          "after the points, median of the rounds")
    elif v.data.get("durability_floor_failed"):
        doc.p(f"append floor failed: {v.data['durability_floor_failed']}")
    b = v.data.get("durability_bench") or {}
    if b:
        rows = [
            ["written and stored (acknowledged by the service)",
             f"{b.get('samples')} × {b.get('size')} B in {b.get('store_s')} s = {b.get('store_kps')} kS/s "
             f"({b.get('commits')} commits)"],
            ["disk", f"{b.get('disk_bytes_per_sample')} B per sample ({b.get('disk_bytes')} B)"],
            ["service restart (load from disk)", f"{b.get('reload_samples')} samples in {b.get('reload_s')} s"],
            ["late reader catch-up", f"{b.get('catchup_samples')} samples in {b.get('catchup_s')} s = "
             f"{b.get('catchup_kps')} kS/s ({b.get('catchup_mbps')} Mb/s)"],
        ]
        doc.table(["Halyard durability service", "figure"], rows, caption=f"`{b.get('command', '')}`")
    elif v.data.get("durability_bench_failed"):
        doc.p(f"`halyard durability-bench` failed: {v.data['durability_bench_failed']}")


def sync_levels(v: View) -> list[str]:
    """Halyard's store sync levels measured besides the default, in plan order."""
    seen: list[str] = []
    for p in v.all_points.values():
        if "durability" in p["dims"] and p.get("sync") and p["sync"] not in seen:
            seen.append(p["sync"])
    return seen


def sync_rows(v: View) -> list[list[str]]:
    """Per throughput size: VOLATILE, then PERSISTENT at the default level and each other level,
    each with its share of VOLATILE."""
    rows = []
    levels = [None] + sync_levels(v)
    for size in sorted({p["size"] for p in v.all_points.values()
                        if "durability" in p["dims"] and p.get("sync")}):
        vol = _figure(v, "throughput", size, None, H)
        row = [f"{size} B", f"{f_num(vol, 4)}/s" if vol else "missing"]
        for level in levels:
            per = _figure(v, "throughput", size, "persistent", H, level)
            row.append(f"{f_num(per, 4)}/s ({_share(per, vol, 'throughput')})" if per else "missing")
        rows.append(row)
    return rows


def _floor_figure(fl: dict) -> str:
    rounds = ", ".join(f_num(r["records_per_s"], 3) for r in fl.get("rounds", []))
    return (f"{f_num(fl['records_per_s'], 4)} records/s (rounds {rounds}), "
            f"{fl.get('cpu_us_per_record', 0):.2f} µs CPU per record")


def floor_rows(v: View) -> list[list[str]]:
    """The append floor beside VOLATILE and PERSISTENT 1 KB (each level)."""
    fl = v.data.get("durability_floor") or {}
    rate = fl.get("records_per_s")
    if not rate:
        return []
    rows = [["append floor (one thread, fresh file, 16 × 1 KB per write, no fsync)", _floor_figure(fl)]]
    dfl = v.data.get("durability_floor_direct") or {}
    if dfl.get("records_per_s"):
        rows.append(["direct floor (the same, 1024 × 1 KB per write with O_DIRECT, fdatasync at the end)",
                     _floor_figure(dfl)])
    elif v.data.get("durability_floor_direct_failed"):
        rows.append(["direct floor", f"failed: {v.data['durability_floor_direct_failed']}"])
    vol = _figure(v, "throughput", fl.get("size", 1024), None, H)
    if vol:
        rows.append(["Halyard VOLATILE 1 KB ÷ floor", f"{vol / rate:.0%}"])
    for level in [None] + sync_levels(v):
        per = _figure(v, "throughput", fl.get("size", 1024), "persistent", H, level)
        if per:
            name = level or f"default level, {DURABILITY_DEFAULT_SYNC_LEVEL}"
            rows.append([f"Halyard PERSISTENT 1 KB ({name}) ÷ floor", f"{per / rate:.0%}"])
    return rows
