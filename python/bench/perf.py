"""Halyard Python vs cyclonedds Python, side by side in one run, on the same IDL type (a keyed
struct with a sequence<octet> payload of 16 B and 1 KiB):

* throughput: one process, a reliable KEEP_ALL writer and reader; the writer writes in
  batches of 100 and the reader takes what arrived, for DURATION seconds; samples taken/s.
* latency: ping/pong in two processes (this script re-run with ``pong LIB SIZE``); round-trip
  median and p99 in microseconds over ROUNDS exchanges after a warm-up.

usage: python3 python/bench/perf.py [--duration S] [--rounds N]
Traffic stays on loopback (HALYARD_INTERFACE=lo, CYCLONEDDS_URI on lo), DDS domain 89.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import types

os.environ.setdefault("HALYARD_INTERFACE", "lo")
os.environ.setdefault("CYCLONEDDS_URI", '<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>')
DOMAIN = 89

SOURCE = '''
from dataclasses import dataclass
from LIB.idl import IdlStruct
from LIB.idl.types import int32, uint32, sequence, byte
from LIB.idl.annotations import key

@dataclass
class Perf(IdlStruct, typename="Bench::Perf"):
    id: int32
    key("id")
    seq: uint32
    payload: sequence[byte]
'''


def load(lib: str) -> types.ModuleType:
    mod = types.ModuleType(f"bench_{lib}")
    sys.modules[mod.__name__] = mod
    exec(compile(SOURCE.replace("LIB", lib), mod.__name__, "exec", dont_inherit=True), mod.__dict__)
    return mod


class Api:
    """The few calls the benchmark needs, for either library."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        self.m = load(lib)
        if lib == "halyard":
            import halyard as h
            P = h.Policy
            self.qos = h.Qos(P.Reliability.Reliable(h.duration(seconds=10)), P.History.KeepAll)
            self.dp = h.DomainParticipant(DOMAIN)
            self.h = h
        else:
            from cyclonedds.core import Policy as P, Qos
            from cyclonedds.domain import DomainParticipant
            from cyclonedds.util import duration
            self.qos = Qos(P.Reliability.Reliable(duration(seconds=10)), P.History.KeepAll)
            self.dp = DomainParticipant(DOMAIN)

    def endpoints(self, wname: str, rname: str):
        if self.lib == "halyard":
            h = self.h
            w = h.DataWriter(self.dp, h.Topic(self.dp, wname, self.m.Perf), qos=self.qos)
            r = h.DataReader(self.dp, h.Topic(self.dp, rname, self.m.Perf), qos=self.qos)
            take = lambda: r.take(1000)  # noqa: E731
            wait = lambda t: r.wait_for_data(t)  # noqa: E731
            matched = lambda: w.get_publication_matched_status()["current_count"]  # noqa: E731
        else:
            from cyclonedds.pub import DataWriter
            from cyclonedds.sub import DataReader
            from cyclonedds.topic import Topic
            from cyclonedds.core import ReadCondition, ViewState, InstanceState, SampleState, WaitSet
            from cyclonedds.util import duration
            w = DataWriter(self.dp, Topic(self.dp, wname, self.m.Perf), qos=self.qos)
            r = DataReader(self.dp, Topic(self.dp, rname, self.m.Perf), qos=self.qos)
            rc = ReadCondition(r, ViewState.Any | InstanceState.Any | SampleState.NotRead)
            ws = WaitSet(self.dp)
            ws.attach(rc)
            take = lambda: r.take(N=1000)  # noqa: E731
            wait = lambda t: ws.wait(duration(seconds=t)) > 0  # noqa: E731
            matched = lambda: w.get_publication_matched_status().current_count  # noqa: E731
        return w, take, wait, matched


def wait_matched(matched, what: str) -> None:
    end = time.time() + 10
    while matched() < 1:
        if time.time() > end:
            raise SystemExit(f"{what}: no match within 10 s")
        time.sleep(0.01)


def throughput(lib: str, size: int, seconds: float) -> float:
    api = Api(lib)
    topic = f"tp_{lib}_{size}"
    w, take, _, matched = api.endpoints(topic, topic)
    wait_matched(matched, "throughput")
    payload = bytes(size)
    Perf = api.m.Perf
    got = 0
    seq = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            w.write(Perf(id=seq % 16, seq=seq, payload=payload))
            seq += 1
        got += len(take())
    while got < seq and time.perf_counter() < end + 5:
        n = len(take())
        got += n
        if n == 0:
            time.sleep(0.001)
    return got / (time.perf_counter() - t0)


def pong(lib: str, size: int) -> None:
    api = Api(lib)
    w, take, wait, matched = api.endpoints(f"pong_{lib}_{size}", f"ping_{lib}_{size}")
    print("READY", flush=True)
    idle_until = time.time() + 60
    while time.time() < idle_until:
        if wait(1.0):
            for s in take():
                if s.seq == 0xFFFFFFFF:
                    return
                w.write(s)
                idle_until = time.time() + 60


def latency(lib: str, size: int, rounds: int):
    peer = subprocess.Popen([sys.executable, __file__, "pong", lib, str(size)], stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout.readline().strip() == "READY"
        api = Api(lib)
        w, take, wait, matched = api.endpoints(f"ping_{lib}_{size}", f"pong_{lib}_{size}")
        wait_matched(matched, "latency")
        time.sleep(0.5)
        Perf = api.m.Perf
        payload = bytes(size)
        rtts = []
        for i in range(rounds + 50):
            t0 = time.perf_counter()
            w.write(Perf(id=0, seq=i, payload=payload))
            got = False
            while not got:
                if not wait(5.0):
                    raise SystemExit(f"{lib} latency: no pong for round {i}")
                got = any(s.seq == i for s in take())
            if i >= 50:
                rtts.append((time.perf_counter() - t0) * 1e6)
        w.write(Perf(id=0, seq=0xFFFFFFFF, payload=b""))
        rtts.sort()
        return statistics.median(rtts), rtts[int(len(rtts) * 0.99) - 1]
    finally:
        peer.wait(timeout=30)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "pong":
        pong(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=1000)
    a = ap.parse_args()
    print(f"{'payload':>8} {'metric':<22} {'halyard':>12} {'cyclonedds':>12} {'ratio':>8}")
    for size in (16, 1024):
        tp = {lib: throughput(lib, size, a.duration) for lib in ("halyard", "cyclonedds")}
        print(f"{size:>7}B {'write+take samples/s':<22} {tp['halyard']:>12.0f} {tp['cyclonedds']:>12.0f} "
              f"{tp['halyard'] / tp['cyclonedds']:>7.2f}x", flush=True)
        lat = {lib: latency(lib, size, a.rounds) for lib in ("halyard", "cyclonedds")}
        for k, name in ((0, "RTT median us"), (1, "RTT p99 us")):
            print(f"{size:>7}B {name:<22} {lat['halyard'][k]:>12.1f} {lat['cyclonedds'][k]:>12.1f} "
                  f"{lat['halyard'][k] / lat['cyclonedds'][k]:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
