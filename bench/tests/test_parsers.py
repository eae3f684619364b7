"""Unit tests of the output parsers (no processes): ddsperf-format lines and latency dumps."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # no __pycache__ for the package under test
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from halyard_bench import parsers  # noqa: E402

# Lines as printed by Cyclone's ddsperf 0.10.2 and halyard perf (see docs/ddsperf-conventions.md §7).
DDSPERF_PING = """\
[7106] participant vm:7106: new (self)
[7106] participant vm:7073: new
[7106] 2.000  vm:7073 size 1024 mean 51.374us min 12.423us 50% 55.128us 90% 76.172us 99% 94.931us max 1198.605us cnt 9706
[7106] 2.000  rss:7.5MB vcsw:8556 ivcsw:1188 recvUC:16%+27%
[7106] 3.000  vm:7073 size 1024 mean 53.685us min 21.785us 50% 53.218us 90% 57.296us 99% 73.221us max 1019.316us cnt 9299
[7106] 3.000  rss:7.6MB vcsw:9308 ivcsw:24 recvUC:16%+29%
"""

DDSPERF_PUB = """\
[7242] 1.000   101/s  47u |                              | 100% 300u
[7242] 1.000  vm:7222 size 1024 mean 125.709us min 61.975us 50% 105.885us 90% 165.766us 99% 738.299us max 784.097us cnt 101
[7242] 1.000  vm:7220 size 1024 mean 113.752us min 49.608us 50% 93.156us 90% 140.277us 99% 779.370us max 780.400us cnt 101
[7242] 4.000  rss:812kB vcsw:1197 ivcsw:60 pub:1%+1%
"""

SUB = """\
[7220] participant vm:7220: new (self)
[7220] 1.000  size 1024 total 51 lost 0 delta 51 lost 0 rate 0.05 kS/s 0.42 Mb/s (0.01 kS/s 0.04 Mb/s)
[7220] 2.000  size 1024 total 151 lost 2 delta 100 lost 2 rate 0.10 kS/s 0.82 Mb/s (0.02 kS/s 0.12 Mb/s)
something unexpected here
[7220] participant vm:7242: gone
"""


class PingLines(unittest.TestCase):
    def test_ddsperf_ping_lines(self):
        out = parsers.parse_output(DDSPERF_PING)
        self.assertEqual(len(out.ping), 2)
        p = out.ping[0]
        self.assertEqual((p.pid, p.t, p.peer, p.size, p.cnt), (7106, 2.0, "vm:7073", 1024, 9706))
        self.assertAlmostEqual(p.mean, 51.374)
        self.assertAlmostEqual(p.p99, 94.931)
        self.assertAlmostEqual(p.max, 1198.605)
        self.assertAlmostEqual(out.rss_mb, 7.6)
        self.assertEqual(out.sub, [])
        self.assertIsNone(out.pub_sent)

    def test_pub_with_pings_per_sub_and_histogram(self):
        out = parsers.parse_output(DDSPERF_PUB)
        self.assertEqual([p.peer for p in out.ping], ["vm:7222", "vm:7220"])
        self.assertEqual(out.unknown, 1)  # the write-latency histogram line
        self.assertAlmostEqual(out.rss_mb, 812 / 1024)

    def test_sublat_variant_and_nan(self):
        line = "[1] 3.000  sublat h:2 size 12 mean nan min 1.0us 50% 2.0us 90% 3.0us 99% 4.0us max 5.0us cnt 0"
        self.assertIsNone(parsers.parse_ping_line(line))  # "mean nan" has no unit: not a ping line
        line = "[1] 3.000  h:2 sublat size 12 mean 1.5us min 1.0us 50% 2.0us 90% 3.0us 99% 4.0us max 5.0us cnt 7"
        p = parsers.parse_ping_line(line)
        self.assertIsNotNone(p)
        self.assertEqual(p.cnt, 7)


class SubLines(unittest.TestCase):
    def test_sub_lines_and_unknown(self):
        out = parsers.parse_output(SUB)
        self.assertEqual(len(out.sub), 2)
        s = out.sub[1]
        self.assertEqual((s.t, s.size, s.total, s.lost, s.delta, s.dlost), (2.0, 1024, 151, 2, 100, 2))
        self.assertAlmostEqual(s.rate_mbps, 0.82)
        self.assertEqual(out.unknown, 3)  # two discovery lines and the garbage

    def test_pub_sent_and_errors(self):
        out = parsers.parse_output("[5] 3.301  pub sent 1234\n[5] error: too few matching participants (0)\n")
        self.assertEqual(out.pub_sent, 1234)
        self.assertEqual(out.errors, ["too few matching participants (0)"])
        self.assertEqual(parsers.first_error(out), "too few matching participants (0)")
        self.assertEqual(parsers.first_error(parsers.PeerOutput(), stderr_tail="x\nlast words\n"), "last words")

    def test_garbage_is_tolerated(self):
        out = parsers.parse_output("\x00\x01 binary\n[abc] 1.0 size x\n[1] 1.000  size 12 total -1\n")
        self.assertFalse(out.has_stats)
        self.assertEqual(out.unknown, 3)


class Dumps(unittest.TestCase):
    def test_dump(self):
        text = ["# comment\n", "0.5 12000\n", "\n", "1.75 9000\n", "bad line\n", "2.0 -5\n", "2.5 1.2e4\n", "nan 3\n"]
        self.assertEqual(parsers.parse_dump(text), [(0.5, 12000), (1.75, 9000), (2.5, 12000)])

    def test_gzipped_dump(self):
        import gzip
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.dump.gz")
            with gzip.open(path, "wt") as f:
                f.write("1.0 5000\n2.0 6000\n")
            self.assertEqual(parsers.read_dump(path), [(1.0, 5000), (2.0, 6000)])

    def test_missing_dump(self):
        self.assertIsNone(parsers.read_dump("/nonexistent/halyard-bench/dump"))


if __name__ == "__main__":
    unittest.main()
