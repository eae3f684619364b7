"""Published figures of the threat-intelligence (CTI) sharing DDS framework (seed 000).

Its evaluation: 1000 samples per run at 50/75/100/125 msg/s, payloads 32…8192 B, 1–10
subscribers, RELIABLE + KEEP_ALL, two machines through a 1 Gb/s switch (RTI Connext). The
seed's text carries these figures (its Tables 11–13 and Figures 11–18 are described in prose,
the tables' cells themselves are not in the text), without security unless noted:

- latency at 50 msg/s: 779 µs (32 B) … 824 µs (8192 B); at 125 msg/s: 844 µs … 995 µs;
  over all sizes and rates 822 … 1013 µs (Table 13);
- success rate 100 % in every scenario (Table 11);
- throughput at 50 msg/s: 0.013 Mb/s (32 B) … 3.4 Mb/s (8192 B); at 8192 B: 4.9 Mb/s
  (75 msg/s), 6.6 Mb/s (100), 8.2 Mb/s (125); messages/s matched the send rate (Table 11);
- CPU 6.83 % at 50 msg/s … 7.59 % at 125 msg/s; memory 84 MB … 89 MB (Table 12);
- 1 → 10 subscribers: average latency rises < 10 % (Figure 13).
"""

from __future__ import annotations

SOURCE = "seed 000: threat-intelligence DDS framework evaluation (RTI Connext, 2 hosts, 1 Gb/s)"

# Latency (µs, average) at (rate msg/s, size B) where the text gives it.
LATENCY_US: dict[tuple[int, int], float] = {
    (50, 32): 779.0,
    (50, 8192): 824.0,
    (125, 32): 844.0,
    (125, 8192): 995.0,
}
LATENCY_RANGE_US = (822.0, 1013.0)  # all sizes and rates (Table 13)

# Throughput (Mb/s) at (rate, size).
THROUGHPUT_MBPS: dict[tuple[int, int], float] = {
    (50, 32): 0.013,
    (50, 8192): 3.4,
    (75, 8192): 4.9,
    (100, 8192): 6.6,
    (125, 8192): 8.2,
}

# CPU % and memory (MB) per rate; only the 50 and 125 msg/s ends are in the text.
CPU_PCT: dict[int, float] = {50: 6.83, 125: 7.59}
MEMORY_MB: dict[int, float] = {50: 84.0, 125: 89.0}
CPU_RANGE_PCT = (6.83, 7.59)
MEMORY_RANGE_MB = (84.0, 89.0)
SUCCESS_PCT = 100.0
SUBSCRIBER_RISE_MAX = 0.10  # 1 → 10 subscribers: < 10 % average-latency rise


def published(rate: int, size: int) -> dict:
    """The published figures closest to (rate, size): exact where the text has them, else
    the published range (as a string)."""
    lat = LATENCY_US.get((rate, size))
    thr = THROUGHPUT_MBPS.get((rate, size))
    return {
        "latency_us": lat if lat is not None else f"{LATENCY_RANGE_US[0]:g}–{LATENCY_RANGE_US[1]:g}",
        "throughput_mbps": thr,
        "msgs_per_s": float(rate),  # "consistently matched the targeted send rates"
        "success_pct": SUCCESS_PCT,
        "cpu_pct": CPU_PCT.get(rate, f"{CPU_RANGE_PCT[0]:g}–{CPU_RANGE_PCT[1]:g}"),
        "memory_mb": MEMORY_MB.get(rate, f"{MEMORY_RANGE_MB[0]:g}–{MEMORY_RANGE_MB[1]:g}"),
    }


# With security (its Figures 12, 15, 16 and Table 12).
# Latency of the fully protected level (integrity + confidentiality + origin authentication).
FULL_LATENCY_US: dict[int, float] = {32: 822.0, 8192: 986.0}
# Overhead over no protection, per level, at 32 B and 8192 B (Figure 16).
OVERHEAD_PCT: dict[str, tuple[float, float]] = {
    "sign": (0.13, 1.7),
    "encrypt": (2.2, 6.9),
    "encrypt-origin": (5.5, 20.0),
}
# CPU % and memory (MB) with security, at 50 and 125 msg/s (Table 12).
SECURE_CPU_PCT: dict[int, float] = {50: 6.88, 125: 7.64}
SECURE_MEMORY_MB: dict[int, float] = {50: 86.0, 125: 94.0}

# The comparators of its Tables 13 and 14, as published there.
COMPARATORS = [
    {"system": "blockchain CTI sharing (Pahlevan & Ionita, its [18])",
     "success": "96–99 %", "latency": "seconds", "cpu": "≈34–37 %", "memory": "≈1697 MB",
     "throughput": "below the send rate"},
    {"system": "blockchain CTI sharing (Hajizadeh et al., its [17])",
     "success": "—", "latency": "10 s average, 36 s max at 100 msg/s", "cpu": "—", "memory": "—",
     "throughput": "49.7 msg/s at 50, 59.7 msg/s at 100"},
    {"system": "TAXII-based sharing (its [22])",
     "success": "—", "latency": "48–72 ms", "cpu": "—", "memory": "—", "throughput": "—"},
]
TAXII_LATENCY_MS = (48.0, 72.0)
