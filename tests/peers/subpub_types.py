"""A Cyclone DDS 11 peer for `halyard sub` / `halyard pub` / `halyard typeof` tests
(crates/halyard-cli/tests/sub_pub_typeof.rs), with a type Halyard is never compiled with:
keyed, nested, a sequence, an enum and an optional member.

  write DOMAIN TOPIC SECONDS [dispose]
                              writes SAMPLES (transient-local, keep-all) once, prints
                              "written", then stays SECONDS; with "dispose", 3 s after
                              "written" disposes sensor 2 and unregisters sensor 3 (no
                              autodispose), printing "disposed"
  read DOMAIN TOPIC N SECONDS reads until N samples arrived (or SECONDS passed), prints each
                              as one JSON line (the shape `halyard sub --json` uses), then
                              "done"
"""
import json
import sys
import time
from dataclasses import dataclass
from typing import Optional

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlEnum, IdlStruct
from cyclonedds.idl.annotations import key
from cyclonedds.idl.types import float64, int16, int32, sequence
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


class Color(IdlEnum, typename="SubPub::Color"):
    RED = 0
    GREEN = 1
    BLUE = 2


@dataclass
class Point(IdlStruct, typename="SubPub::Point"):
    x: int32
    y: float64


@dataclass
class Reading(IdlStruct, typename="SubPub::Reading"):
    sensor: int32
    key("sensor")
    name: str
    color: Color
    where: Point
    history: sequence[int16]
    note: Optional[str] = None


SAMPLES = [
    Reading(sensor=1, name="first", color=Color.GREEN, where=Point(x=-3, y=0.5),
            history=[1, -2, 300], note="hello"),
    Reading(sensor=2, name="second", color=Color.BLUE, where=Point(x=7, y=-1.25),
            history=[], note=None),
    Reading(sensor=3, name="third, with \"quotes\"", color=Color.RED, where=Point(x=0, y=1e10),
            history=[32767], note=""),
]


def to_json(r):
    return {
        "sensor": r.sensor,
        "name": r.name,
        "color": r.color.name,
        "where": {"x": r.where.x, "y": r.where.y},
        "history": list(r.history),
        "note": r.note,
    }


def main():
    mode, domain, topic = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    dp = DomainParticipant(domain)
    tp = Topic(dp, topic, Reading)
    if mode == "write":
        qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)),
                  Policy.Durability.TransientLocal, Policy.History.KeepAll,
                  Policy.WriterDataLifecycle(autodispose=False))
        wr = DataWriter(dp, tp, qos=qos)
        for s in SAMPLES:
            wr.write(s)
        print("written", flush=True)
        secs = float(sys.argv[4])
        if sys.argv[5:] == ["dispose"]:
            time.sleep(3)
            wr.dispose(SAMPLES[1])
            wr.unregister_instance(SAMPLES[2])
            print("disposed", flush=True)
            secs -= 3
        time.sleep(max(secs, 0))
    elif mode == "read":
        want, secs = int(sys.argv[4]), float(sys.argv[5])
        qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll)
        rd = DataReader(dp, tp, qos=qos)
        print("ready", flush=True)
        got, end = 0, time.time() + secs
        while got < want and time.time() < end:
            for s in rd.take(N=16):
                if s.sample_info.valid_data:
                    print(json.dumps(to_json(s)), flush=True)
                    got += 1
            time.sleep(0.02)
        print("done", flush=True)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
