#!/usr/bin/env python3
"""Cyclone DDS (python binding, 11 or 0.10) writer peer for Halyard interop tests.

Writes --count samples of HalyardKeyed / HalyardUnkeyed and prints JSON lines:
{"written": N, "matched": M} and {"incompatible_qos": C, "last_policy": P}
(the latter from the writer's OFFERED_INCOMPATIBLE_QOS status).
"""
import argparse
import sys
import time

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from peer_common import DURABILITY, Keyed, Unkeyed, incompatible_qos, matched_tracker, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--topic", default="HalyardInterop")
    ap.add_argument("--type", choices=["keyed", "unkeyed"], default="keyed")
    rel = ap.add_mutually_exclusive_group()
    rel.add_argument("--reliable", dest="reliable", action="store_true", default=True)
    rel.add_argument("--best-effort", dest="reliable", action="store_false")
    ap.add_argument("--durability", choices=list(DURABILITY), default="volatile")
    ap.add_argument("--transient-local", dest="durability", action="store_const",
                    const="transient-local", help="--durability transient-local")
    ap.add_argument("--partition", action="append", default=[])
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--wait-match", type=int, default=0)
    ap.add_argument("--rate", type=float, default=0.0, help="samples/s (0 = as fast as possible)")
    ap.add_argument("--linger", type=float, default=0.0, help="seconds to stay alive after writing")
    a = ap.parse_args()

    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=10))
        if a.reliable
        else Policy.Reliability.BestEffort,
        DURABILITY[a.durability],
        Policy.History.KeepLast(depth=max(a.count, 1)) if a.durability != "volatile" else Policy.History.KeepAll,
        # Plain CDR (XCDR1), as Halyard writes for @final types.
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if a.durability != "volatile":
        # Cyclone keeps only DURABILITY_SERVICE.history (default KEEP_LAST 1) per instance
        # for late joiners; keep every written sample.
        policies.append(
            Policy.DurabilityService(
                cleanup_delay=0,
                history=Policy.History.KeepLast(depth=max(a.count, 1)),
                max_samples=-1,
                max_instances=-1,
                max_samples_per_instance=-1,
            )
        )
    dtype = Keyed if a.type == "keyed" else Unkeyed
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, dtype)
    pub = Publisher(dp, qos=Qos(Policy.Partition(partitions=a.partition))) if a.partition else Publisher(dp)
    listener, matched = matched_tracker(
        DataWriter, "get_publication_matched_status", "on_publication_matched"
    )
    wr = DataWriter(pub, topic, qos=Qos(*policies), listener=listener)

    deadline = time.monotonic() + a.timeout
    if a.wait_match > 0:
        while time.monotonic() < deadline:
            if matched(wr)[0] >= a.wait_match:
                break
            time.sleep(0.02)
        # Give the matched reader's side time to discover this writer too.
        time.sleep(0.5)

    written = 0
    payload = bytes((i & 0xFF) for i in range(a.size))
    period = 1.0 / a.rate if a.rate > 0 else 0.0
    matched_enough = matched(wr)[0] >= a.wait_match
    if matched_enough:
        for i in range(a.count):
            if time.monotonic() >= deadline:
                break
            if dtype is Keyed:
                s = Keyed(id=i % 4, seq=i, payload=list(payload))
            else:
                s = Unkeyed(seq=i, payload=list(payload))
            wr.write(s)
            written += 1
            if period:
                time.sleep(period)
        out({"wrote": written})
        if a.reliable:
            try:
                wr.wait_for_acks(duration(seconds=max(deadline - time.monotonic(), 0.1)))
            except Exception as e:  # noqa: BLE001
                print(f"wait_for_acks: {e}", file=sys.stderr)
    if a.linger > 0:
        time.sleep(a.linger)
    else:
        # Without --linger, stay until the timeout only if nothing needed writing
        # (used to observe incompatible-QoS statuses).
        while not matched_enough and time.monotonic() < deadline:
            time.sleep(0.05)

    out({"written": written, "matched": matched(wr)[1]})
    inc = incompatible_qos(wr, "get_offered_incompatible_qos_status")
    out({"incompatible_qos": inc[0], "last_policy": inc[1]})


if __name__ == "__main__":
    main()
