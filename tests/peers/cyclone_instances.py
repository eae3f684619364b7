#!/usr/bin/env python3
"""Cyclone DDS (python binding 11) peer for the instance life-cycle tests of Halyard's untyped
endpoints, on HalyardKeyed (reliable, KEEP_ALL, XCDR1).

--write: once a reader matched, writes id 1..=3 (seq = id), disposes id 2 and unregisters id 3,
  then prints {"done": true} and lingers.
--read: prints each sample as {"id": .., "valid": .., "state": "alive"|"disposed"|"no_writers"}
  until --count samples or --timeout.
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

STATES = {
    InstanceState.Alive: "alive",
    InstanceState.NotAliveDisposed: "disposed",
    InstanceState.NotAliveNoWriters: "no_writers",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--topic", default="HalyardInstances")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--read", action="store_true")
    ap.add_argument("--count", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()
    qos = Qos(
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=10)),
        Policy.History.KeepAll,
        Policy.DataRepresentation(use_cdrv0_representation=True),
        # Unregistering must not dispose: the reader then sees NOT_ALIVE_NO_WRITERS.
        Policy.WriterDataLifecycle(autodispose=False),
    )
    dp = DomainParticipant(a.domain)
    topic = Topic(dp, a.topic, Keyed)
    deadline = time.monotonic() + a.timeout
    if a.write:
        wr = DataWriter(dp, topic, qos=qos)
        while wr.get_publication_matched_status().current_count < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        for i in (1, 2, 3):
            wr.write(Keyed(id=i, seq=i, payload=[]))
        wr.dispose(Keyed(id=2, seq=0, payload=[]))
        wr.unregister_instance(Keyed(id=3, seq=0, payload=[]))
        wr.wait_for_acks(duration(seconds=5))
        out({"done": True})
        time.sleep(max(deadline - time.monotonic(), 0))
        return
    rd = DataReader(dp, topic, qos=qos)
    out({"ready": True})
    n = 0
    while n < a.count and time.monotonic() < deadline:
        got = rd.take(N=100)
        if not got:
            time.sleep(0.01)
            continue
        for s in got:
            info = s.sample_info
            out({"id": getattr(s, "id", None), "valid": bool(info.valid_data),
                 "handle": info.instance_handle, "state": STATES.get(info.instance_state, "?")})
            n += 1


if __name__ == "__main__":
    main()
