#!/usr/bin/env python3
"""Cyclone DDS (python binding, 11 or 0.10) writer peer for Halyard interop tests.

Writes --count samples of HalyardKeyed / HalyardUnkeyed and prints JSON lines:
{"written": N, "matched": M} and {"incompatible_qos": C, "last_policy": P}
(the latter from the writer's OFFERED_INCOMPATIBLE_QOS status).
"""
import argparse
import json
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final, key
from cyclonedds.idl.types import int32, sequence, uint8, uint32
from cyclonedds.pub import DataWriter, Publisher
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
        Policy.Durability.TransientLocal if a.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepLast(depth=max(a.count, 1)) if a.transient_local else Policy.History.KeepAll,
        # Plain CDR (XCDR1), as Halyard writes for @final types.
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if a.transient_local:
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
