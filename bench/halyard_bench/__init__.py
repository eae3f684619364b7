"""Halyard's benchmark campaign: Halyard vs Cyclone ddsperf, Fast DDS and raw UDP.

Modules:

- ``parsers``  reads the ddsperf-format lines every peer prints (bench/PEERS.md) and
  ``--latency-dump`` files; tolerant of lines it does not know.
- ``stats``    percentiles, warm-up trimming, per-second throughput series.
- ``peers``    the four peers: how to find, probe and invoke them.
- ``procs``    spawning and reaping processes (process groups, rusage, cleanup).
- ``plan``     the campaign's configuration points (quick / full / tiny).
- ``runner``   runs one configuration point for one peer and analyses its output.
- ``machine``  machine facts and tool versions.
- ``results``  results.json / results.csv.
- ``seed000``  the published figures of the threat-intelligence DDS framework (seed 000).
- ``svg``      hand-made SVG plots.
- ``report``   report.md / report.html, ratios and targets.

Standard library only (Python 3.11).
"""

__version__ = "1.0"
