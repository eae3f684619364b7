#!/usr/bin/env python3
"""Cyclone DDS (python binding, 11 or 0.10) reader peer for Halyard interop tests.

Prints one JSON line per received sample {"seq":..,"id":..,"len":..} then
{"received": N, "matched": M} and {"incompatible_qos": C, "last_policy": P}
(the latter from the reader's REQUESTED_INCOMPATIBLE_QOS status).
"""
import argparse
import json
import time
from dataclasses import dataclass

from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication
from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final, key
from cyclonedds.idl.types import int32, sequence, uint8, uint32
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
@final
class Keyed(IdlStruct, typename="HalyardKeyed"):
    id: int32
    key("id")
    seq: uint32
    payload: sequence[uint8]


@dataclass
@final
class Unkeyed(IdlStruct, typename="HalyardUnkeyed"):
    seq: uint32
    payload: sequence[uint8]


def matched_tracker(entity_cls, getter, callback):
    """Current and total matched counts of a reader or writer: from the status getter where
    the binding has one (Cyclone 11), else from a listener (the 0.10 binding built against
    Debian's libddsc, the one with DDS Security). Returns (listener or None, counts())."""
    if hasattr(entity_cls, getter):
        return None, lambda ent: (lambda s: (s.current_count, s.total_count))(getattr(ent, getter)())
    seen = {"current": 0, "total": 0}

    def on_matched(_entity, status):
        seen["current"], seen["total"] = status.current_count, status.total_count

    return Listener(**{callback: on_matched}), lambda _ent: (seen["current"], seen["total"])


def incompatible_qos(ent, getter):
    """(total_count, last_policy_id) of an incompatible-QoS status; (None, None) where the
    binding has no getter for it (0.10)."""
    if not hasattr(ent, getter):
        return None, None
    s = getattr(ent, getter)()
    return s.total_count, s.last_policy_id


def out(obj):
    print(json.dumps(obj), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--topic", default="HalyardInterop")
    ap.add_argument("--type", choices=["keyed", "unkeyed"], default="keyed")
    rel = ap.add_mutually_exclusive_group()
    rel.add_argument("--reliable", dest="reliable", action="store_true", default=True)
    rel.add_argument("--best-effort", dest="reliable", action="store_false")
    ap.add_argument("--transient-local", action="store_true")
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
        Policy.Durability.TransientLocal if a.transient_local else Policy.Durability.Volatile,
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
