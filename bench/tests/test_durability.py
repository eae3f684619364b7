"""Unit tests of the durability dimension: its plan points (PERSISTENT beside VOLATILE, only for
peers with a durability option), the per-process store in the command line and environment,
the parsing of `halyard durability-bench`, and the report's targets (met / not met / not
measured) from a synthetic results.json (no processes)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ for the package under test
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from halyard_bench import durability, durability_report, peers, plan, report, results, stats  # noqa: E402

BENCH_OUTPUT = """durability-bench stored 200000 samples of 1024 B in 4.10 s (48.8 kS/s 399.6 Mb/s) commits 301
durability-bench disk 1180.5 B/sample (236100000 B) for 200000 samples
durability-bench reload 200000 samples in 0.52 s
durability-bench catch-up 200000 samples of 1024 B in 1.25 s (160.0 kS/s 1310.7 Mb/s)
"""


# A sync level's PERSISTENT throughput in the synthetic results, as a multiple of the default's.
SYNC_FACTOR = {"process": 1.5, "full": 1.25}


def _thr(sps: float, size: int) -> dict:
    return {"throughput": {"samples_per_s": sps, "mbps": sps * size * 8e-6, "aggregate_samples_per_s": sps,
                           "min_sub_samples_per_s": sps, "lost": 0, "received": [int(sps)],
                           "warmup_included": False}}


def _lat(us: float) -> dict:
    return {"latency": stats.latency_from_samples([us, us, us]).to_dict()}


def synthetic(halyard_share: float, bench: dict | None) -> dict:
    """Halyard and Fast DDS; PERSISTENT throughput is ``halyard_share`` of VOLATILE for
    Halyard, a quarter for Fast DDS; Halyard's persistent latency twice its volatile."""
    pts = plan.build_plan(plan.PlanOptions("quick", 3.0, ("durability",)))
    runs = []
    for p in pts:
        for peer in ("halyard", "fastdds"):
            if p.sync and peer != "halyard":
                continue  # the campaign runs a sync level's points for Halyard alone
            share = halyard_share if peer == "halyard" else 0.25
            if p.sync:
                share *= SYNC_FACTOR[p.sync]
            run = {"point": p.key, "peer": peer, "repeat": 0, "status": "ok", "reason": "", "seconds": 3,
                   "processes": [], "notes": [], "store_bytes": 5_000_000 if p.durability else None}
            if p.kind == "throughput":
                run["stats"] = _thr(1e5 * (share if p.durability else 1.0), p.size)
            else:
                run["stats"] = _lat(20.0 if p.durability else 10.0)
            runs.append(run)
    peer_list = [{"name": n, "label": report.label(n), "available": True, "reason": "", "extra_opts": [],
                  "caps": {"minmatch": True, "latency_dump": True, "pub_ping_pct": True, "notes": []}}
                 for n in ("halyard", "fastdds")]
    data = {"schema": results.SCHEMA,
            "campaign": {"mode": "quick", "argv": [], "command_line": "bench/campaign.py --dims durability",
                         "start": "t0", "end": "t1", "domain": 7, "repeat": 1, "rss_clean": True,
                         "dims": ["durability"]},
            "machine": {"cpu_model": "test cpu", "cores": 2}, "versions": {"rustc": "x"},
            "peers": peer_list, "points": [p.to_dict() for p in pts], "runs": runs, "rows": []}
    if bench is not None:
        data["durability_bench"] = bench
    data["rows"] = results.summary_rows(data["points"], data["runs"], data["peers"])
    return data


class Plan(unittest.TestCase):
    def test_points_pair_persistent_with_volatile_and_stay_out_of_the_defaults(self):
        self.assertNotIn("durability", plan.DEFAULT_DIMENSIONS)
        pts = plan.build_plan(plan.PlanOptions("quick", 3.0, ("durability",)))
        persistent = {(p.kind, p.size) for p in pts if p.durability == "persistent"}
        volatile = {(p.kind, p.size) for p in pts if p.durability is None}
        self.assertEqual(persistent, volatile)
        self.assertIn(("throughput", 1024), persistent)
        self.assertEqual(len({p.key for p in pts}), len(pts))

    def test_other_sync_levels_are_persistent_throughput_points_of_their_own(self):
        pts = plan.build_plan(plan.PlanOptions("quick", 3.0, ("durability",)))
        default = [p for p in pts if p.durability == "persistent" and not p.sync]
        for level in plan.DURABILITY_OTHER_SYNC_LEVELS:
            at = [p for p in pts if p.sync == level]
            self.assertEqual({(p.kind, p.durability) for p in at}, {("throughput", "persistent")})
            self.assertEqual({p.size for p in at}, set(plan.DURABILITY_THROUGHPUT_SIZES))
            self.assertTrue(all(p.key.endswith(f"-sync-{level}") for p in at))
            self.assertIn(f"[sync {level}]", at[0].describe())
        self.assertTrue(default and not any("sync" in p.key for p in default))

    def test_the_store_goes_on_the_command_line_of_fastdds_only(self):
        inv = peers.Invocation(["pub", "size", "1024"], 3.0, durability="persistent", store_path="/x/s.db")
        fast = peers.Peer("fastdds", ["fastdds-perf"], {})
        hal = peers.Peer("halyard", ["halyard", "perf"], {})
        self.assertEqual(peers.build_argv(fast, inv)[-5:], ["--persistence-db", "/x/s.db", "pub", "size", "1024"])
        argv = peers.build_argv(hal, inv)
        self.assertIn("--durability", argv)
        self.assertNotIn("--persistence-db", argv)


class Bench(unittest.TestCase):
    def test_parse(self):
        b = durability.parse(BENCH_OUTPUT)
        self.assertEqual(b["samples"], 200000)
        self.assertEqual(b["store_kps"], 48.8)
        self.assertEqual(b["disk_bytes_per_sample"], 1180.5)
        self.assertEqual(b["reload_s"], 0.52)
        self.assertEqual(b["catchup_s"], 1.25)
        self.assertEqual(durability.parse("nothing"), {})


class Floor(unittest.TestCase):
    def test_the_append_floor_measures_a_fresh_file_and_removes_it(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "raw"))
            data: dict = {}
            durability.FLOOR_PAUSE_S, pause = 0.0, durability.FLOOR_PAUSE_S
            try:
                durability.run_append_floor(d, 2, 0.2, data)
            finally:
                durability.FLOOR_PAUSE_S = pause
            fl = data["durability_floor"]
            self.assertEqual(len(fl["rounds"]), 2)
            self.assertGreater(fl["records_per_s"], 0)
            self.assertGreater(fl["cpu_us_per_record"], 0)
            self.assertEqual(fl["records_per_write"], 16)
            # O_DIRECT may be refused (tmpfs): then the direct floor says so, never a figure.
            if "durability_floor_direct_failed" in data:
                self.assertNotIn("durability_floor_direct", data)
            else:
                self.assertEqual(data["durability_floor_direct"]["records_per_write"], 1024)
                self.assertEqual(len(data["durability_floor_direct"]["rounds"]), 2)
            self.assertEqual(os.listdir(os.path.join(d, "raw")), [])


class Report(unittest.TestCase):
    def targets(self, data):
        return {t[0]: (t[1], t[2]) for t in durability_report.targets(report.View(data))}

    def test_targets_met_and_not(self):
        t = self.targets(synthetic(0.6, {**durability.parse(BENCH_OUTPUT.replace("200000", "1000000"))}))
        share = t["Halyard PERSISTENT reliable throughput 1 KB ≥ 50 % of VOLATILE"]
        self.assertEqual(share, ("60,000/s ÷ 100,000/s = 60%", "met"))
        self.assertEqual(t["late-joiner catch-up of 1 M × 1 KB < 5 s"][1], "met")
        thr = t["Halyard PERSISTENT reliable throughput better than Fast DDS PERSISTENT (Halyard ÷ Fast DDS)"]
        self.assertEqual(thr[1], "met")
        self.assertIn("1024 B: 2.40×", thr[0])
        lat = t["Halyard PERSISTENT latency 50 % better than Fast DDS PERSISTENT (Halyard ÷ Fast DDS)"]
        self.assertEqual(lat[1], "met")  # equal latency counts as no worse
        t = self.targets(synthetic(0.3, None))
        self.assertEqual(t["Halyard PERSISTENT reliable throughput 1 KB ≥ 50 % of VOLATILE"][1], "not met")
        self.assertEqual(t["late-joiner catch-up of 1 M × 1 KB < 5 s"][1], "not measured")

    def test_a_smaller_catch_up_is_not_judged_but_extrapolated(self):
        t = self.targets(synthetic(0.6, durability.parse(BENCH_OUTPUT)))
        measured, verdict = t["late-joiner catch-up of 1 M × 1 KB < 5 s"]
        self.assertEqual(verdict, "not measured")
        self.assertIn("1 M would take 6.2 s", measured)

    def test_the_section_is_in_the_reports(self):
        doc = report.build(synthetic(0.6, durability.parse(BENCH_OUTPUT)))
        md = report.render_md(doc)
        self.assertIn("Durability (issue 12)", md)
        self.assertIn("store 5.0 MB", md)
        self.assertIn("PERSISTENT process", md)

    def test_a_sync_level_does_not_stand_for_the_default_level(self):
        v = report.View(synthetic(0.4, None))
        self.assertEqual(durability_report.sync_levels(v), list(plan.DURABILITY_OTHER_SYNC_LEVELS))
        share = self.targets(synthetic(0.4, None))["Halyard PERSISTENT reliable throughput 1 KB ≥ 50 % of VOLATILE"]
        self.assertEqual(share[1], "not met")  # 40 %, though the process level reaches 60 %
        row = next(r for r in durability_report.sync_rows(v) if r[0] == "1024 B")
        self.assertEqual(row[1:], ["100,000/s", "40,000/s (40%)", "60,000/s (60%)", "50,000/s (50%)"])

    def test_the_floor_is_set_beside_volatile_and_each_level(self):
        data = synthetic(0.4, None)
        data["durability_floor"] = {"size": 1024, "records_per_s": 200_000.0, "cpu_us_per_record": 1.5,
                                    "rounds": [{"records_per_s": 200_000.0, "cpu_us_per_record": 1.5}]}
        rows = dict(durability_report.floor_rows(report.View(data)))
        self.assertEqual(rows["Halyard VOLATILE 1 KB ÷ floor"], "50%")
        self.assertEqual(rows["Halyard PERSISTENT 1 KB (default level, normal) ÷ floor"], "20%")
        self.assertEqual(rows["Halyard PERSISTENT 1 KB (process) ÷ floor"], "30%")
        self.assertNotIn("direct floor", " ".join(rows))
        data["durability_floor_direct"] = {"records_per_s": 1_500_000.0, "cpu_us_per_record": 0.07,
                                           "rounds": [{"records_per_s": 1_500_000.0, "cpu_us_per_record": 0.07}]}
        rows = dict(durability_report.floor_rows(report.View(data)))
        direct = next(v for k, v in rows.items() if k.startswith("direct floor"))
        self.assertIn("1,500,000 records/s", direct)
        self.assertIn("0.07 µs CPU per record", direct)
        self.assertIn("append floor", report.render_md(report.build(data)))


if __name__ == "__main__":
    unittest.main()
