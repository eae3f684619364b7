#!/usr/bin/env python3
"""Cyclone DDS (python binding) peer for Halyard's QoS interop tests: DEADLINE, OWNERSHIP and
LIFESPAN, as a writer or a reader of HalyardKeyed (reliable, XCDR1).

Writer: writes instance --id at --rate for --duration seconds (payload[0] = --tag), then stays
silent for --idle seconds (with --new-strength S, its OWNERSHIP_STRENGTH becomes S by set_qos
--change-after seconds into writing); with --batches N writes N bursts of --count samples --gap seconds
apart. Prints {"wrote": N} and {"offered_deadline_missed": total}.

With --liveliness KIND --lease-ms N both roles use that LIVELINESS; the writer also prints
{"liveliness_lost": total}, the reader {"alive": a, "not_alive": n} whenever its
LIVELINESS_CHANGED counts change.

Writer options for TIME_BASED_FILTER, DESTINATION_ORDER and the lifecycles: --out-of-order writes
seq 0, 1, 2 stamped now, now - 1 s and now + 1 ms; --finish unregister|dispose ends with that on
instance --id (with --autodispose 0|1 as WRITER_DATA_LIFECYCLE). Readers take --time-filter-ms
and --by-source, and print {"state": "disposed"|"no_writers"} for samples of a not-alive instance.

Reader: prints every sample as {"seq": .., "id": .., "len": .., "tag": ..} until --timeout;
with --late S it takes the first --count samples as they come, then waits S seconds and
prints {"late": n}, the samples still in its cache (LIFESPAN removes expired ones). Prints
{"requested_deadline_missed": total} at the end.
"""
import argparse
import time

from cyclonedds.core import InstanceState, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from peer_common import Keyed, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("role", choices=["writer", "reader"])
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--topic", default="HalyardQos")
    ap.add_argument("--deadline-ms", type=int, default=0)
    ap.add_argument("--lifespan-ms", type=int, default=0)
    ap.add_argument("--strength", type=int, default=None, help="EXCLUSIVE ownership, this strength")
    ap.add_argument("--new-strength", type=int, default=None,
                    help="writer: set OWNERSHIP_STRENGTH to this at run time (set_qos)")
    ap.add_argument("--change-after", type=float, default=0.0,
                    help="seconds into writing at which --new-strength is set")
    ap.add_argument("--time-filter-ms", type=int, default=0, help="reader: TIME_BASED_FILTER")
    ap.add_argument("--by-source", action="store_true", help="DESTINATION_ORDER BY_SOURCE_TIMESTAMP")
    ap.add_argument("--out-of-order", action="store_true",
                    help="writer: write seq 0, 1, 2 stamped now, now - 1 s, now + 1 ms")
    ap.add_argument("--finish", choices=["unregister", "dispose"], default=None,
                    help="writer: then unregister or dispose instance --id")
    ap.add_argument("--autodispose", type=int, choices=[0, 1], default=1,
                    help="writer: WRITER_DATA_LIFECYCLE autodispose_unregistered_instances")
    ap.add_argument("--presentation", choices=["instance", "topic", "group"], default=None,
                    help="PRESENTATION access scope (with --coherent / --ordered)")
    ap.add_argument("--coherent", action="store_true")
    ap.add_argument("--ordered", action="store_true")
    ap.add_argument("--id", type=int, default=1)
    ap.add_argument("--tag", type=int, default=0)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--idle", type=float, default=0.0)
    ap.add_argument("--batches", type=int, default=0)
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--gap", type=float, default=1.0)
    ap.add_argument("--late", type=float, default=None)
    ap.add_argument("--liveliness", choices=["automatic", "participant", "topic"], default=None)
    ap.add_argument("--lease-ms", type=int, default=0)
    ap.add_argument("--wait-match", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()

    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=10)),
        Policy.History.KeepAll,
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if a.deadline_ms:
        policies.append(Policy.Deadline(duration(milliseconds=a.deadline_ms)))
    if a.lifespan_ms:
        policies.append(Policy.Lifespan(duration(milliseconds=a.lifespan_ms)))
    if a.liveliness:
        kind = {
            "automatic": Policy.Liveliness.Automatic,
            "participant": Policy.Liveliness.ManualByParticipant,
            "topic": Policy.Liveliness.ManualByTopic,
        }[a.liveliness]
        policies.append(kind(lease_duration=duration(milliseconds=a.lease_ms)))
    if a.presentation:
        scope = {
            "instance": Policy.PresentationAccessScope.Instance,
            "topic": Policy.PresentationAccessScope.Topic,
            "group": Policy.PresentationAccessScope.Group,
        }[a.presentation]
        policies.append(scope(coherent_access=a.coherent, ordered_access=a.ordered))
    if a.time_filter_ms and a.role == "reader":
        policies.append(Policy.TimeBasedFilter(duration(milliseconds=a.time_filter_ms)))
    if a.by_source:
        policies.append(Policy.DestinationOrder.BySourceTimestamp)
    if a.role == "writer":
        policies.append(Policy.WriterDataLifecycle(autodispose=bool(a.autodispose)))
    if a.strength is not None:
        policies.append(Policy.Ownership.Exclusive)
        if a.role == "writer":
            policies.append(Policy.OwnershipStrength(a.strength))
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, Keyed)
    end = time.monotonic() + a.timeout

    if a.role == "writer":
        wr = DataWriter(dp, topic, qos=Qos(*policies))
        while time.monotonic() < end and wr.get_publication_matched_status().current_count < a.wait_match:
            time.sleep(0.02)
        time.sleep(0.5)
        wrote = 0
        if a.out_of_order:
            now = time.time_ns()
            for seq, stamp in enumerate([now, now - 1_000_000_000, now + 1_000_000]):
                wr.write(Keyed(id=a.id, seq=seq, payload=[a.tag]), timestamp=stamp)
                wrote += 1
        elif a.batches:
            for b in range(a.batches):
                for _ in range(a.count):
                    wr.write(Keyed(id=a.id, seq=wrote, payload=[a.tag]))
                    wrote += 1
                if b + 1 < a.batches:
                    time.sleep(a.gap)
        else:
            start = time.monotonic()
            stop = start + a.duration
            while time.monotonic() < stop:
                if a.new_strength is not None and time.monotonic() - start >= a.change_after:
                    wr.set_qos(Qos(Policy.OwnershipStrength(a.new_strength)))
                    out({"strength": a.new_strength})
                    a.new_strength = None
                wr.write(Keyed(id=a.id, seq=wrote, payload=[a.tag]))
                wrote += 1
                time.sleep(1.0 / a.rate)
        out({"wrote": wrote})
        if a.finish == "unregister":
            wr.unregister_instance(Keyed(id=a.id, seq=0, payload=[]))
        elif a.finish == "dispose":
            wr.dispose(Keyed(id=a.id, seq=0, payload=[]))
        if a.finish:
            out({"finished": a.finish})
        time.sleep(a.idle)
        out({"offered_deadline_missed": wr.get_offered_deadline_missed_status().total_count})
        out({"liveliness_lost": wr.get_liveliness_lost_status().total_count})
        return

    rd = DataReader(dp, topic, qos=Qos(*policies))
    while time.monotonic() < end and rd.get_subscription_matched_status().current_count < a.wait_match:
        time.sleep(0.02)
    out({"matched": rd.get_subscription_matched_status().current_count})
    got = 0
    seen = None
    ids = {}
    while time.monotonic() < end and (a.late is None or got < a.count):
        lc = rd.get_liveliness_changed_status()
        if (lc.alive_count, lc.not_alive_count) != seen:
            seen = (lc.alive_count, lc.not_alive_count)
            out({"alive": lc.alive_count, "not_alive": lc.not_alive_count})
        for s in rd.take(N=1000):
            info = s.sample_info
            if info.valid_data:
                ids[info.instance_handle] = s.id
            if info.instance_state != InstanceState.Alive:
                name = "disposed" if info.instance_state == InstanceState.NotAliveDisposed else "no_writers"
                # An invalid sample (a disposal or unregistration notice) has no fields: its
                # instance is named by the id its valid samples had.
                out({"state": name, "id": ids.get(info.instance_handle), "valid": bool(info.valid_data)})
            if not info.valid_data:
                continue
            got += 1
            tag = s.payload[0] if len(s.payload) else None
            out({"seq": s.seq, "id": s.id, "len": len(s.payload), "tag": tag})
        time.sleep(0.01)
    if a.late is not None:
        time.sleep(a.late)
        late = [s for s in rd.take(N=1000) if s.sample_info.valid_data]
        out({"late": len(late)})
    out({"requested_deadline_missed": rd.get_requested_deadline_missed_status().total_count})


if __name__ == "__main__":
    main()
