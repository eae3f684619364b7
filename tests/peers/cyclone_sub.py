#!/usr/bin/env python3
"""Cyclone DDS (python binding, 11 or 0.10) reader peer for Halyard interop tests.

Prints one JSON line per received sample {"seq":..,"id":..,"len":..} then
{"received": N, "matched": M} and {"incompatible_qos": C, "last_policy": P}
(the latter from the reader's REQUESTED_INCOMPATIBLE_QOS status).
"""
import argparse
import time

from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader, Subscriber
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
    ap.add_argument("--count", type=int, default=10, help="stop after this many samples")
    ap.add_argument("--size", type=int, default=0, help="expected payload length (informational)")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument(
        "--linger",
        type=float,
        default=0.0,
        help="seconds to stay after the last sample (so the writer hears the final ACKNACK)",
    )
    ap.add_argument("--wait-match", type=int, default=0)
    ap.add_argument("--discovery", action="store_true", help="print the topics of discovered writers")
    a = ap.parse_args()

    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=10))
        if a.reliable
        else Policy.Reliability.BestEffort,
        DURABILITY[a.durability],
        Policy.History.KeepAll,
    ]
    dtype = Keyed if a.type == "keyed" else Unkeyed
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, dtype)
    sub = Subscriber(dp, qos=Qos(Policy.Partition(partitions=a.partition))) if a.partition else Subscriber(dp)
    listener, matched = matched_tracker(
        DataReader, "get_subscription_matched_status", "on_subscription_matched"
    )
    rd = DataReader(sub, topic, qos=Qos(*policies), listener=listener)
    out({"ready": True})

    deadline = time.monotonic() + a.timeout
    if a.wait_match > 0:
        while time.monotonic() < deadline:
            if matched(rd)[0] >= a.wait_match:
                out({"reader_matched": True})
                break
            time.sleep(0.02)

    received = 0
    while received < a.count and time.monotonic() < deadline:
        got = rd.take(N=100)
        if not got:
            time.sleep(0.005)
            continue
        for s in got:
            if not s.sample_info.valid_data:
                continue
            received += 1
            out({"seq": s.seq, "id": getattr(s, "id", None), "len": len(s.payload)})

    # Leaving at once can take the final ACKNACK with it: under loss the writer then waits
    # for the reader's lease to expire before it counts everything acknowledged.
    if received >= a.count and a.linger > 0:
        time.sleep(a.linger)
    out({"received": received, "matched": matched(rd)[1]})
    inc = incompatible_qos(rd, "get_requested_incompatible_qos_status")
    out({"incompatible_qos": inc[0], "last_policy": inc[1]})
    if a.discovery:
        # Every topic this participant learnt of a remote writer on.
        brd = BuiltinDataReader(dp, BuiltinTopicDcpsPublication)
        topics = sorted({p.topic_name for p in brd.take(N=1000)})
        out({"discovered_publication_topics": topics})


if __name__ == "__main__":
    main()
