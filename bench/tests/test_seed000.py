"""Unit tests of the seed000 dimension: its plan (the seed's grid, levels, subscriber counts
and stress points, each with the seed's QoS) and its report, rendered from the committed run
bench/results/seed000-20261208 (every table and figure present, the targets judged on the
published figures)."""

import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ for the package under test
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from halyard_bench import plan, report, results, seed000_report  # noqa: E402

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "seed000-20261208")


class Plan(unittest.TestCase):
    def test_the_seed_grid_levels_subscribers_and_stress(self):
        pts = plan.build_plan(plan.PlanOptions("full", None, ("seed000",)))
        rate = [p for p in pts if p.kind == "rate"]
        stress = [p for p in pts if p.kind == "throughput"]
        plain_one = [p for p in rate if p.receivers == 1 and not p.security]
        self.assertEqual(len(plain_one), len(plan.SEED_RATES) * len(plan.SEED_SIZES_FULL))
        for level in ("sign", "encrypt", "encrypt-origin"):
            at50 = [p for p in rate if p.security == level and p.rate_hz == 50]
            self.assertEqual(sorted(p.size for p in at50), plan.SEED_SIZES_FULL, level)
        full_rates = sorted(p.rate_hz for p in rate if p.security == "encrypt-origin" and p.size == 1024)
        self.assertEqual(full_rates, [50.0, 75.0, 100.0, 125.0])
        self.assertEqual(sorted({p.receivers for p in rate}), plan.SEED_SUBS_FULL)
        self.assertEqual(sorted(p.size for p in stress), plan.SEED_SIZES_FULL)
        for p in rate:
            self.assertEqual(p.durability, "persistent")
            self.assertTrue(p.reliable)
            self.assertAlmostEqual(p.duration, 1000 / p.rate_hz + 1.0, places=2)
        self.assertTrue(all(p.durability is None for p in stress), "raw UDP runs the stress points")
        small = plan.build_plan(plan.PlanOptions("full", None, ("seed000",), rate_grid="small", rate_samples=60))
        self.assertLess(len(small), len(pts))


@unittest.skipUnless(os.path.exists(os.path.join(RUN, "results.json")), "the committed seed-000 run")
class Report(unittest.TestCase):
    def test_every_table_and_figure_and_the_targets(self):
        data = results.load_json(os.path.join(RUN, "results.json"))
        v = report.View(data)
        rows = seed000_report.targets(v)
        names = [r[0] for r in rows]
        self.assertTrue(any("100 % delivery" in n for n in names))
        self.assertTrue(any("TAXII polling" in n for n in names))
        self.assertTrue(any("full protection" in n for n in names))
        self.assertTrue(any("node CPU" in n for n in names))
        for r in rows:
            self.assertIn(r[2], ("PASS", "FAIL", "n/a", "info"), r)
        with tempfile.TemporaryDirectory() as out:
            report.generate(out, data)
            md = open(os.path.join(out, "report.md"), encoding="utf-8").read()
            for title in ("Table 11", "Table 12", "Tables 13 and 14", "TAXII 2.1 polling"):
                self.assertIn(title, md)
            plots = os.listdir(os.path.join(out, "plots"))
            for fig in ("fig11", "fig12", "fig13", "fig14", "fig15", "fig16", "fig19"):
                self.assertTrue(any(fig in p for p in plots), fig)
            self.assertNotIn("## Targets", md, "the campaign's own targets are not about this dimension")


if __name__ == "__main__":
    unittest.main()
