"""Unit tests of the security dimension: level parsing, its plan points, the per-process
identities and environment, and its report table and targets (met / not met / not measured,
failed points shown with the peer's error) from a synthetic results.json (no processes)."""

import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ for the package under test
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from halyard_bench import plan, report, results, security, security_report, stats  # noqa: E402

REFUSAL = ("error: DDS Security protection of discovery, liveliness, metadata or data is not supported yet: "
           "the governance protects discovery")


class Levels(unittest.TestCase):
    def test_parse_levels(self):
        self.assertEqual(security.parse_levels(None), security.LEVELS)
        self.assertEqual(security.parse_levels(" "), security.LEVELS)
        self.assertEqual(security.parse_levels("encrypt,none,encrypt"), ("none", "encrypt"))
        with self.assertRaisesRegex(ValueError, "bogus"):
            security.parse_levels("none,bogus")

    def test_every_level_has_init_options(self):
        self.assertEqual(set(security.INIT_OPTIONS), set(security.LEVELS))
        self.assertIsNone(security.INIT_OPTIONS["off"])
        self.assertEqual(security.INIT_OPTIONS["encrypt-origin"], ["--protect", "encrypt", "--origin-auth"])

    def test_identities(self):
        self.assertEqual(security.participants(2, 1), ["sender", "recv0", "recv1", "listen0"])
        self.assertEqual(security.identity("receiver", 3), "recv3")
        self.assertEqual(security.identity("sender", 0), "sender")


class SecurityPlan(unittest.TestCase):
    def test_not_in_default_dimensions(self):
        for mode in ("quick", "full"):
            self.assertFalse(any(p.security or "security" in p.dims
                                 for p in plan.build_plan(plan.PlanOptions(mode, rate_grid="one"))))

    def test_points_per_level(self):
        pts = plan.build_plan(plan.PlanOptions("quick", 4.0, ("security",), ("off", "none", "encrypt")))
        self.assertEqual(len(pts), 3 * 6)
        self.assertTrue(all(p.dims == ["security"] for p in pts))
        off = [p for p in pts if p.security is None]
        self.assertIn("throughput-KS-63000-rel-n1", {p.key for p in off})  # off = the plain points
        enc = {p.key: p for p in pts if p.security == "encrypt"}
        self.assertIn("latency-KS-32-rel-n1-sec-encrypt", enc)
        seed = enc["rate-KS-1024-rel-100hz-n10-sec-encrypt"]
        self.assertEqual((seed.rate_hz, seed.receivers, seed.ping_pct, seed.duration), (100.0, 10, 100, 4.0))
        self.assertIn("[security encrypt]", seed.describe())
        self.assertEqual(plan.Point.from_dict(seed.to_dict()), seed)
        self.assertEqual(plan.Point.from_dict({k: v for k, v in off[0].to_dict().items() if k != "security"}),
                         off[0])  # results.json written before the security dimension

    def test_off_level_shares_the_plain_points(self):
        pts = plan.build_plan(plan.PlanOptions("quick", dims=("latency", "security"), security_levels=("off",)))
        lat32 = next(p for p in pts if p.key == "latency-KS-32-rel-n1")
        self.assertEqual(lat32.dims, ["latency", "security"])


class Environment(unittest.TestCase):
    def setUp(self):
        self.setup = security.Setup("encrypt", "/d/encrypt", ok=True,
                                    cyclone_xml={"recv0": "<Security>r0</Security>"})

    def test_process_env(self):
        env = security.process_env("halyard", {"A": "1"}, self.setup, "recv0")
        self.assertEqual(env, {"A": "1", "HALYARD_SECURITY": "/d/encrypt/recv0"})
        env = security.process_env("cyclone", {"CYCLONEDDS_URI": "<General/>"}, self.setup, "recv0")
        self.assertEqual(env["CYCLONEDDS_URI"], "<General/><Security>r0</Security>")
        env = security.process_env("fastdds", {}, self.setup, "recv0")
        self.assertEqual(env, {"FASTPERF_SECURITY": "/d/encrypt/recv0"})

    def test_unsupported_reason(self):
        self.assertIsNone(security.unsupported_reason("cyclone", self.setup, "encrypt"))
        self.assertIsNone(security.unsupported_reason("fastdds", self.setup, "encrypt"))
        self.assertIn("Halyard, Cyclone and Fast DDS only", security.unsupported_reason("udp", self.setup, "encrypt"))
        bad = security.Setup("sign", error="`halyard security init` exit 2: boom")
        self.assertIn("set-up failed: `halyard security init` exit 2: boom",
                      security.unsupported_reason("halyard", bad, "sign"))

    def test_prepare_without_binary_fails_with_reason(self):
        with tempfile.TemporaryDirectory() as d:
            s = security.prepare(os.path.join(d, "no-halyard"), d, "none", ["sender"])
        self.assertFalse(s.ok)
        self.assertIn("not built", s.error)
        self.assertIn("--protect", s.init_argv)


def _lat_stats(us: float) -> dict:
    return {"latency": stats.latency_from_samples([us, us, us]).to_dict()}


def _thr_stats(sps: float, size: int) -> dict:
    return {"throughput": {"samples_per_s": sps, "mbps": sps * size * 8e-6, "aggregate_samples_per_s": sps,
                           "min_sub_samples_per_s": sps, "lost": 0, "received": [int(sps)],
                           "warmup_included": False}}


def synthetic_security_results() -> dict:
    """Levels none and encrypt; Halyard faster than Cyclone at none and refusing encrypt."""
    pts = plan.build_plan(plan.PlanOptions("quick", 3.0, ("security",), ("none", "encrypt")))
    runs = []
    for p in pts:
        for peer, f in (("halyard", 1.0), ("cyclone", 2.0)):
            run = {"point": p.key, "peer": peer, "repeat": 0, "status": "ok", "reason": "", "seconds": 3,
                   "processes": [], "notes": []}
            if peer == "halyard" and p.security == "encrypt":
                run.update(status="failed", reason=f"sender exit 2: {REFUSAL}", stats={})
            elif p.kind == "latency":
                run["stats"] = _lat_stats(10.0 * f)
            elif p.kind == "throughput":
                run["stats"] = _thr_stats(1e5 / f, p.size)
            else:
                run["stats"] = {**_lat_stats(300.0 * f), **_thr_stats(100.0, p.size), "sent": 300,
                                "sent_inferred": peer == "cyclone", "success_pct": 100.0 if peer == "halyard" else 99.0}
            runs.append(run)
    peers = [{"name": n, "label": report.label(n), "available": True, "reason": "", "extra_opts": [],
              "caps": {"minmatch": True, "latency_dump": n == "halyard", "pub_ping_pct": True, "notes": []}}
             for n in ("halyard", "cyclone")]
    setups = {lv: {"level": lv, "dir": f"/x/{lv}", "ok": True, "error": "", "init_argv": []} for lv in ("none", "encrypt")}
    return {"schema": results.SCHEMA,
            "campaign": {"mode": "quick", "argv": [], "command_line": "bench/campaign.py --dims security",
                         "start": "t0", "end": "t1", "domain": 7, "repeat": 1, "rss_clean": True},
            "machine": {"cpu_model": "test cpu", "cores": 2}, "versions": {"rustc": "x"},
            "peers": peers, "points": [p.to_dict() for p in pts], "runs": runs, "rows": [], "security": setups}


class SecurityReport(unittest.TestCase):
    def test_targets(self):
        v = report.View(synthetic_security_results())
        self.assertEqual(security_report.levels(v), ["none", "encrypt"])
        tgt = {t[0].split(" (")[0]: (t[1], t[2]) for t in security_report.targets(v)}
        self.assertEqual(tgt["none: median latency ≤ Cyclone"], ("32 B: 0.50×; 1024 B: 0.50×", "met"))
        self.assertEqual(tgt["none: reliable throughput ≥ Cyclone"][1], "met")
        self.assertEqual(tgt["none: seed-000 workload success 100 %"],
                         ("Halyard 100.0 %; Cyclone 99.0 %", "met"))
        measured, verdict = tgt["encrypt: median latency ≤ Cyclone"]
        self.assertEqual(verdict, "not met")
        self.assertIn("not supported yet", measured)  # Halyard's own error text
        self.assertEqual(tgt["encrypt: seed-000 workload success 100 %"][1], "not met")
        share = next(t for t in security_report.targets(v) if t[0].startswith("encrypt 63000 B"))
        self.assertEqual(share[2], "not met")
        self.assertIn("not supported yet", share[1])

    def test_encrypt_share_and_not_measured(self):
        data = synthetic_security_results()
        for r in data["runs"]:  # Halyard at encrypt does half its none figure; Cyclone fails at 1 KB
            if r["peer"] == "halyard" and "-sec-encrypt" in r["point"] and r["point"].startswith("throughput"):
                r.update(status="ok", reason="", stats=_thr_stats(0.5e5, 63000))
            if r["peer"] == "cyclone" and r["point"] == "throughput-KS-1024-rel-n1-sec-encrypt":
                r.update(status="failed", reason="sub 0 received nothing", stats={})
        v = report.View(data)
        self.assertEqual(security_report.encrypt_share(v, "encrypt"), ("50,000/s ÷ 100,000/s = 50%", "not met"))
        tgt = {t[0].split(" (")[0]: (t[1], t[2]) for t in security_report.targets(v)}
        measured, verdict = tgt["encrypt: reliable throughput ≥ Cyclone"]
        self.assertEqual(verdict, "not measured")
        self.assertIn("1024 B: Cyclone failed: sub 0 received nothing", measured)

    def test_cipher_bench_line_is_parsed(self):
        line = ("noise\ncipher-bench kind=AES256_GCM size=63000 passes=1600 us_per_pass_min=3.660 "
                "us_per_pass_median=3.700 gbytes_per_s=17.21\n")
        f = security.parse_cipher_bench(line)
        self.assertEqual((f["kind"], f["size"], f["us_per_pass_min"], f["gbytes_per_s"]),
                         ("AES256_GCM", 63000.0, 3.66, 17.21))
        self.assertIsNone(security.parse_cipher_bench("cipher-bench kind=AES256_GCM\n"))
        self.assertFalse(security.cipher_floor("/nonexistent/halyard")["ok"])

    def test_cipher_ceiling(self):
        data = synthetic_security_results()
        self.assertIsNone(security_report.cipher_ceiling(report.View(data)))  # no floor measured
        key = "throughput-KS-63000-rel-n1-sec-none"
        for r in data["runs"]:
            if r["peer"] == "halyard" and r["point"] == key:  # 100,000 samples, 2.5 s of CPU: 25 µs each
                r["processes"] = [{"role": "sender", "utime_s": 1.0, "stime_s": 0.5, "maxrss_kb": 1},
                                  {"role": "receiver", "utime_s": 0.8, "stime_s": 0.2, "maxrss_kb": 1}]
        data["security_cipher"] = {"ok": True, "size": 63000.0, "us_per_pass_min": 3.5, "gbytes_per_s": 18.0}
        v = report.View(data)
        self.assertAlmostEqual(security_report.cpu_us_per_sample(v, key), 25.0)
        text, verdict = security_report.cipher_ceiling(v)
        self.assertIn("ceiling 2 cores ÷ (25.0 + 6 × 3.50 µs) = 43,478/s = 43% of none", text)
        self.assertEqual(verdict, "(for information)")
        tgt = {t[0]: t[2] for t in security_report.targets(v)}
        self.assertEqual(tgt["encrypt 63000 B: the ceiling the cipher floor implies on this machine"],
                         "(for information)")
        data["security_cipher"] = {"ok": False, "error": "not built"}
        self.assertEqual(security_report.cipher_ceiling(report.View(data)),
                         ("cipher floor not measured: not built", "(not measured)"))

    def test_reports_show_the_security_section(self):
        data = synthetic_security_results()
        with tempfile.TemporaryDirectory() as d:
            results.write_json(os.path.join(d, "results.json"), data)
            report.generate(d, results.load_json(os.path.join(d, "results.json")))
            with open(os.path.join(d, "report.md"), encoding="utf-8") as f:
                md = f.read()
        self.assertIn("## Security (issue 11)", md)
        self.assertIn("| none | latency 50 % 32 B | 10.0 µs | 20.0 µs | 0.50× |", md)
        self.assertIn("failed: sender exit 2: error: DDS Security protection", md)
        # Secured points stay out of the plain tables and targets.
        self.assertNotIn("sec-encrypt", md.split("## Security")[0])
        self.assertIn("security: encrypt", report.console_summary(data))
        self.assertLess(md.index("## Targets"), md.index("## Security"))

    def test_security_only_campaign_opens_with_the_security_section(self):
        data = synthetic_security_results()
        data["campaign"]["dims"] = ["security"]
        md = report.render_md(report.build(data))
        self.assertLess(md.index("## Security"), md.index("## Targets"))


if __name__ == "__main__":
    unittest.main()
