"""Unit tests of the statistics (percentiles, warm-up trimming, throughput series, summaries)
and of the report and plot generation from a synthetic results.json (no processes)."""

import math
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ for the package under test
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from halyard_bench import plan, report, results, stats, svg  # noqa: E402
from halyard_bench.parsers import PingLine, SubLine  # noqa: E402


def ping(t, peer="h:1", mean=10.0, lo=5.0, p50=9.0, p90=12.0, p99=20.0, hi=50.0, cnt=100):
    return PingLine(1, t, peer, 32, mean, lo, p50, p90, p99, hi, cnt)


def sub(t, total, delta, lost=0, size=1000):
    return SubLine(2, t, size, total, lost, delta, 0, 0.0, 0.0)


class Percentiles(unittest.TestCase):
    def test_nearest_rank(self):
        v = list(range(1, 101))
        self.assertEqual(stats.percentile(v, 0.5), 50)
        self.assertEqual(stats.percentile(v, 0.9), 90)
        self.assertEqual(stats.percentile(v, 0.99), 99)
        self.assertEqual(stats.percentile(v, 0.9999), 100)
        self.assertEqual(stats.percentile(v, 1.0), 100)
        self.assertEqual(stats.percentile(v, 0.0), 1)
        self.assertEqual(stats.percentile([7], 0.5), 7)
        self.assertTrue(math.isnan(stats.percentile([], 0.5)))

    def test_median_geomean(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 2, 3]), 2.5)
        self.assertTrue(math.isnan(stats.median([])))
        self.assertAlmostEqual(stats.geomean([1, 4]), 2.0)
        self.assertAlmostEqual(stats.geomean([2, None, float("nan"), 0, 8]), 4.0)


class LatencySummaries(unittest.TestCase):
    def test_from_samples(self):
        s = stats.latency_from_samples([float(x) for x in range(1, 11)])
        self.assertEqual((s.min, s.max, s.p50, s.p90, s.count), (1, 10, 5, 9, 10))
        self.assertAlmostEqual(s.ave, 5.5)
        self.assertAlmostEqual(s.std, math.sqrt(sum((x - 5.5) ** 2 for x in range(1, 11)) / 9))
        self.assertFalse(s.approx)
        self.assertEqual(s.cdf[0], (1, 0.0))
        self.assertEqual(s.cdf[-1], (10, 1.0))
        self.assertIsNone(stats.latency_from_samples([]))

    def test_trim_dump_drops_first_second_of_traffic(self):
        dump = [(2.0, 100_000), (2.5, 90_000), (3.0, 10_000), (3.5, 20_000)]
        us, warm = stats.trim_dump(dump)
        self.assertEqual(us, [10.0, 20.0])
        self.assertFalse(warm)
        us, warm = stats.trim_dump([(0.1, 1000), (0.2, 2000)])
        self.assertEqual((us, warm), ([1.0, 2.0], True))

    def test_lines_are_count_weighted_and_approximate(self):
        lines = [ping(1.0, mean=1000, hi=5000),  # warm-up line: dropped
                 ping(2.0, mean=10, p50=8, lo=4, hi=40, cnt=100),
                 ping(3.0, mean=20, p50=16, lo=6, hi=60, cnt=300)]
        s = stats.latency_all_lines(lines)
        self.assertAlmostEqual(s.ave, (10 * 100 + 20 * 300) / 400)
        self.assertAlmostEqual(s.p50, (8 * 100 + 16 * 300) / 400)
        self.assertEqual((s.min, s.max, s.count), (4, 60, 400))
        self.assertIsNone(s.std)
        self.assertIsNone(s.p9999)
        self.assertTrue(s.approx)
        self.assertEqual(s.source, "lines")

    def test_first_line_is_warmup_even_when_late(self):
        # A sender that waited for matching starts late: its first data line is still warm-up.
        lines = [ping(4.0, mean=900), ping(5.0, mean=10), ping(6.0, mean=10)]
        self.assertAlmostEqual(stats.latency_all_lines(lines).ave, 10)

    def test_short_run_keeps_everything_flagged(self):
        s = stats.latency_all_lines([ping(2.0, mean=33)])
        self.assertAlmostEqual(s.ave, 33)
        self.assertTrue(s.warmup_included)

    def test_per_peer(self):
        lines = [ping(1.0, "a:1"), ping(2.0, "a:1", p50=5), ping(1.0, "b:2"), ping(2.0, "b:2", p50=7)]
        per, warm = stats.latency_per_peer(lines)
        self.assertEqual(sorted(per), ["a:1", "b:2"])
        self.assertEqual((per["a:1"].p50, per["b:2"].p50), (5, 7))
        self.assertFalse(warm)


class Throughput(unittest.TestCase):
    def test_drops_first_and_last_data_lines(self):
        lines = [sub(1.0, 50, 50), sub(2.0, 1050, 1000), sub(3.0, 2250, 1200), sub(4.0, 2300, 50)]
        s = stats.sub_stats(lines)
        self.assertEqual(s.per_second, [1000.0, 1200.0])
        self.assertAlmostEqual(s.samples_per_s, 1100.0)
        self.assertAlmostEqual(s.mbps, 1100 * 1000 * 8 / 1e6)
        self.assertEqual((s.total, s.lost), (2300, 0))

    def test_gap_counts_as_zero(self):
        lines = [sub(1.0, 10, 10), sub(2.0, 110, 100), sub(4.0, 210, 100), sub(5.0, 220, 10)]
        self.assertEqual(stats.sub_stats(lines).per_second, [100.0, 0.0, 100.0])

    def test_two_and_one_line(self):
        self.assertEqual(stats.sub_stats([sub(1.0, 10, 10), sub(2.0, 110, 100)]).per_second, [100.0])
        one = stats.sub_stats([sub(1.0, 10, 10, lost=3)])
        self.assertTrue(one.warmup_included)
        self.assertEqual((one.per_second, one.lost), ([10.0], 3))
        self.assertIsNone(stats.sub_stats([]))


class Plan(unittest.TestCase):
    def test_quick_plan_shares_points(self):
        pts = plan.build_plan(plan.PlanOptions("quick"))
        keys = [p.key for p in pts]
        self.assertEqual(len(keys), len(set(keys)))
        ks1024 = next(p for p in pts if p.key == "latency-KS-1024-rel-n1")
        self.assertEqual(ks1024.dims, ["latency", "keyed"])
        rate = [p for p in pts if p.kind == "rate"]
        self.assertEqual([(p.rate_hz, p.size, p.receivers) for p in rate], [(100.0, 1024, 10)])
        self.assertAlmostEqual(rate[0].duration, 4.0)  # 300 samples at 100 Hz + 1 s warm-up

    def test_passive_subscriber_points(self):
        quick = {p.key: p for p in plan.build_plan(plan.PlanOptions("quick"))}
        passive = quick["latency-KS-1024-rel-200hz-n1-l9"]
        self.assertEqual((passive.receivers, passive.listeners, passive.dims), (1, 9, ["subscribers"]))
        self.assertIn("latency-KS-1024-rel-200hz-n10", quick)  # the all-answering set-up stays
        self.assertIn("+9 passive", passive.describe())
        full = plan.build_plan(plan.PlanOptions("full", rate_grid="one"))
        self.assertEqual(sorted(p.listeners for p in full if p.listeners), [1, 3, 7, 9])
        self.assertEqual(plan.Point.from_dict(passive.to_dict()), passive)

    def test_tiny_and_full(self):
        tiny = plan.build_plan(plan.PlanOptions("tiny"))
        self.assertEqual(sorted((p.kind, p.size, p.listeners) for p in tiny),
                         [("latency", 32, 0), ("latency", 1024, 0), ("latency", 1024, 1), ("throughput", 32, 0),
                          ("throughput", 1024, 0)])
        full = plan.build_plan(plan.PlanOptions("full", rate_grid="small"))
        self.assertEqual(len([p for p in full if p.kind == "rate"]), 48)
        self.assertIn("latency-UK16-16-rel-n1", {p.key for p in full})


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def synthetic_results() -> dict:
    """A small results.json as the campaign would write it (2 peers, 3 points)."""
    pts = [plan.Point("latency", 32, dims=["latency"]), plan.Point("throughput", 1024, dims=["throughput"]),
           plan.Point("rate", 1024, rate_hz=100.0, receivers=2, duration=4.0, ping_pct=100, dims=["rate"])]
    runs = []
    for peer, f in (("halyard", 1.0), ("cyclone", 2.0)):
        lat = stats.latency_from_samples([10.0 * f, 11.0 * f, 12.0 * f]).to_dict()
        common = {"sender": {"cpu_pct_mean": 10.0 * f, "rss_kb_max": int(4000 * f)},
                  "receivers": {"cpu_pct_mean": 5.0, "rss_kb_max": 3000}}
        runs.append({"point": pts[0].key, "peer": peer, "repeat": 0, "status": "ok", "reason": "", "seconds": 3,
                     "processes": [], "notes": [], "stats": {"latency": lat, **common}})
        runs.append({"point": pts[1].key, "peer": peer, "repeat": 0, "status": "ok", "reason": "", "seconds": 3,
                     "processes": [], "notes": [], "stats": {
                         "throughput": {"samples_per_s": 1e5 / f, "mbps": 819.2 / f, "aggregate_samples_per_s": 1e5 / f,
                                        "min_sub_samples_per_s": 1e5 / f, "lost": 0, "received": [1], "warmup_included": False},
                         **common}})
        runs.append({"point": pts[2].key, "peer": peer, "repeat": 0, "status": "failed" if peer == "cyclone" else "ok",
                     "reason": "sender exit 1: too few matching participants (1)" if peer == "cyclone" else "",
                     "seconds": 5, "processes": [], "notes": [], "stats": {
                         "latency": lat, "sent": 300, "sent_inferred": False, "success_pct": 100.0, **common,
                         "throughput": {"samples_per_s": 100.0, "mbps": 0.8, "aggregate_samples_per_s": 200.0,
                                        "min_sub_samples_per_s": 99.0, "lost": 0, "received": [300, 300],
                                        "warmup_included": False}}})
    peers = [{"name": n, "label": report.label(n), "available": True, "reason": "", "extra_opts": [],
              "caps": {"minmatch": True, "latency_dump": n == "halyard", "pub_ping_pct": True, "notes": []}}
             for n in ("halyard", "cyclone")]
    peers.append({"name": "fastdds", "label": "Fast DDS", "available": False, "reason": "not built", "extra_opts": [],
                  "caps": {"minmatch": True, "latency_dump": True, "pub_ping_pct": True, "notes": []}})
    return {"schema": results.SCHEMA,
            "campaign": {"mode": "tiny", "argv": [], "command_line": "bench/campaign.py --tiny", "start": "t0",
                         "end": "t1", "domain": 7, "repeat": 1, "rss_clean": True},
            "machine": {"cpu_model": "test cpu", "cores": 2}, "versions": {"rustc": "x"},
            "peers": peers, "points": [p.to_dict() for p in pts], "runs": runs, "rows": []}


class Reports(unittest.TestCase):
    def test_rows_and_reports_from_results(self):
        data = synthetic_results()
        rows = results.summary_rows(data["points"], data["runs"], data["peers"])
        self.assertEqual(len(rows), 9)
        skipped = [r for r in rows if r["peer"] == "fastdds"]
        self.assertTrue(all(r["status"] == "skipped" and r["reason"] == "not built" for r in skipped))
        lat_h = next(r for r in rows if r["peer"] == "halyard" and r["kind"] == "latency")
        self.assertEqual(lat_h["lat_p50_us"], 11.0)
        with tempfile.TemporaryDirectory() as d:
            results.write_json(os.path.join(d, "results.json"), data)
            results.write_csv(os.path.join(d, "results.csv"), rows)
            report.generate(d, results.load_json(os.path.join(d, "results.json")))
            md = read(os.path.join(d, "report.md"))
            html = read(os.path.join(d, "report.html"))
            self.assertIn("| 32 | 11.0 |", md)
            self.assertIn("0.50×", md)  # Halyard ÷ Cyclone median latency
            self.assertIn("too few matching participants", md)
            self.assertIn("<svg", html)
            self.assertNotIn("src=", html)  # self-contained
            for name in ("Halyard", "Cyclone DDS", "Fast DDS"):
                self.assertIn(name, md)
                self.assertIn(name, html)
            self.assertTrue(os.path.exists(os.path.join(d, "plots", "latency_vs_size.svg")))
        tgt = {t[0]: t[2] for t in report.targets(report.View(data))}
        self.assertEqual(tgt["32 B median latency ≤ Cyclone"], "PASS")
        self.assertEqual(tgt["32 B median latency ≤ 1.25 × raw UDP"], "n/a")

    def test_subscribers_target_uses_passive_setup_and_floor(self):
        data = synthetic_results()
        pts = [plan.Point("latency", 1024, rate_hz=200.0, receivers=1, dims=["subscribers"]),
               plan.Point("latency", 1024, rate_hz=200.0, receivers=1, listeners=9, dims=["subscribers"]),
               plan.Point("latency", 1024, rate_hz=200.0, receivers=10, dims=["subscribers"])]
        data["points"] += [p.to_dict() for p in pts]
        data["peers"].append({"name": "udp", "label": "raw UDP", "available": True, "reason": "", "extra_opts": [],
                              "caps": {"minmatch": True, "latency_dump": True, "pub_ping_pct": True, "notes": []}})
        for peer, base in (("halyard", 30.0), ("udp", 20.0)):
            for p, f in zip(pts, (1.0, 1.05 if peer == "halyard" else 1.5, 4.0)):
                lat = stats.latency_from_samples([base * f] * 3).to_dict()
                st = {"latency": lat, "sender": {}, "receivers": {}}
                if p.listeners:
                    st["listeners"] = {"received": [995] * 9, "lost": [0] * 9, "pings_answered": 1000}
                data["runs"].append({"point": p.key, "peer": peer, "repeat": 0, "status": "ok", "reason": "",
                                     "seconds": 3, "processes": [], "notes": [], "stats": st})
        name, measured, verdict = report.subscribers_target(report.View(data))
        self.assertEqual(verdict, "PASS")  # judged on 1 ponger + 9 passive: +5 %
        self.assertIn("+5.0 %", measured)
        self.assertIn("raw UDP floor +50.0 %", measured)
        self.assertIn("10 pongers", measured)
        with tempfile.TemporaryDirectory() as d:
            report.generate(d, data)
            md = read(os.path.join(d, "report.md"))
            self.assertIn("995 / 1000", md)
            self.assertTrue(os.path.exists(os.path.join(d, "plots", "subscribers_passive_latency.svg")))

    def test_large_data_targets(self):
        data = synthetic_results()
        data["peers"][2]["available"] = True  # Fast DDS ran
        pts = [plan.Point("throughput", s, reliable=False, dims=["throughput"]) for s in (1048576, 10485760)]
        pts += [plan.Point("latency", s, dims=["latency"]) for s in (1048576, 10485760)]
        data["points"] += [p.to_dict() for p in pts]
        # best effort: (samples/s, lost, received) per peer
        be = {("halyard", 1048576): (4000.0, 40, 16000), ("cyclone", 1048576): (700.0, 3500, 2500),
              ("halyard", 10485760): (190.0, 400, 300), ("cyclone", 10485760): (70.0, 300, 280)}
        lat = {("halyard", 1048576): 400.0, ("cyclone", 1048576): 1300.0, ("fastdds", 1048576): 650.0,
               ("halyard", 10485760): 7000.0, ("cyclone", 10485760): 11000.0, ("fastdds", 10485760): 6500.0}
        for peer in ("halyard", "cyclone", "fastdds"):
            for p in pts:
                if p.kind == "throughput":
                    if (peer, p.size) not in be:
                        continue
                    rate, lost, got = be[(peer, p.size)]
                    st = {"throughput": {"samples_per_s": rate, "mbps": rate * p.size * 8e-6,
                                         "aggregate_samples_per_s": rate, "min_sub_samples_per_s": rate,
                                         "lost": lost, "received": [got], "warmup_included": False}}
                else:
                    st = {"latency": stats.latency_from_samples([lat[(peer, p.size)]] * 3).to_dict()}
                data["runs"].append({"point": p.key, "peer": peer, "repeat": 0, "status": "ok", "reason": "",
                                     "seconds": 3, "processes": [], "notes": [], "stats": st})
        data["loss_bench"] = {"points": [{"size": "1M", "loss_pct": 30, "runs": [], "summary": {
            "halyard": {"worst": 1141.0, "median": 1236.0, "mean": 1263.0, "runs": 5},
            "ddsperf": {"worst": 403.0, "median": 452.0, "mean": 439.0, "runs": 5}}}]}
        rows = {t[0]: (t[1], t[2]) for t in report.large_data_targets(report.View(data))}
        be1 = rows["1 MiB best-effort: delivered samples/s ≥ Cyclone and loss ratio ≤ Cyclone's"]
        self.assertEqual(be1[1], "PASS")
        self.assertIn("loss 0.2%", be1[0])
        self.assertEqual(rows["10 MiB best-effort: delivered samples/s ≥ Cyclone and loss ratio ≤ Cyclone's"][1],
                         "FAIL")  # more delivered, but 400 / 700 = 57 % lost against Cyclone's 52 %
        lat1 = rows["1 MiB reliable median latency ≤ the lower of Cyclone's and Fast DDS's"]
        self.assertEqual(lat1[1], "PASS")
        self.assertIn("ratio 0.62", lat1[0])
        self.assertEqual(rows["10 MiB reliable median latency ≤ the lower of Cyclone's and Fast DDS's"][1], "FAIL")
        loss = next(v for k, v in rows.items() if "30 % loss" in k)
        self.assertEqual(loss[1], "PASS")
        self.assertIn("worst 1,141 Mb/s", loss[0])
        del data["loss_bench"]
        data["loss_bench_skipped"] = "needs root (network namespaces and nftables)"
        loss = report.loss_bench_target(report.View(data))
        self.assertEqual(loss[2], "n/a")
        self.assertIn("needs root", loss[1])

    def test_nan_is_written_as_null(self):
        with tempfile.TemporaryDirectory() as d:
            results.write_json(os.path.join(d, "r.json"), {"schema": 1, "x": float("nan"), "y": [float("inf")]})
            self.assertIn('"x": null', read(os.path.join(d, "r.json")))


class Svg(unittest.TestCase):
    def test_axes_and_charts(self):
        ax = svg.size_axis([32, 10485760])
        ticks = ax.ticks()
        self.assertTrue(all(ax.lo <= t <= ax.hi for t in ticks))
        self.assertIn("1M", [svg.fmt_bytes(t) for t in ticks])
        self.assertEqual(svg.nice_range([3, 700], True), (1, 1000))
        c = svg.LineChart("t", ax, svg.Axis(1, 100, True, "µs"))
        c.add(svg.Series("a<b", [(32, 10), (1024, float("nan")), (2048, 20)], "#f00", whiskers=[(32, 10, 12, 15)]))
        out = c.render()
        self.assertTrue(out.startswith("<svg") and out.endswith("</svg>"))
        self.assertIn("a&lt;b", out)
        b = svg.BarChart("bars", ["x", "y"], "MB")
        b.add("s", [1.0, None], "#00f")
        self.assertIn("<rect", b.render())


if __name__ == "__main__":
    unittest.main()
