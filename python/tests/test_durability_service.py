"""The DURABILITY_SERVICE policy from Python: ``Policy.DurabilityService`` reaches a durability
service (a ``halyard durability`` process), which keeps as many of an instance's samples as its
history says for a reader that starts after the writer is gone; bad values raise QosError
naming the policy. Domain 163."""

import gc
import os
import queue
import subprocess
import threading
import time

import pytest

import halyard
from halyard.idl import IdlStruct
from halyard.idl.annotations import key
from halyard.idl.types import int32

DOMAIN = 163
P = halyard.Policy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


class Level(IdlStruct, typename="Py::Level"):
    tank: int32
    key("tank")
    value: int32


def _halyard_bin():
    cands = [os.environ.get("HALYARD_BIN", "")]
    for tdir in (os.environ.get("CARGO_TARGET_DIR", ""), os.path.join(ROOT, "target")):
        if tdir:
            cands += [os.path.join(tdir, "release", "halyard"), os.path.join(tdir, "debug", "halyard")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


class Service:
    """A ``halyard durability`` process on DOMAIN whose status lines arrive on a queue."""

    def __init__(self, store):
        exe = _halyard_bin()
        if exe is None:
            if os.environ.get("HALYARD_REQUIRE_BIN"):
                pytest.fail("HALYARD_REQUIRE_BIN is set but no halyard binary was found")
            pytest.skip("no halyard binary (cargo build -p halyard-cli, or set HALYARD_BIN)")
        self.proc = subprocess.Popen(
            [exe, "durability", "--store", str(store), "--domain", str(DOMAIN), "--status", "1"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())

    def wait_for(self, text, timeout=20):
        deadline = time.time() + timeout
        seen = []
        while time.time() < deadline:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.time()))
            except queue.Empty:
                break
            seen.append(line)
            if text in line:
                return
        pytest.fail(f"the service never printed {text!r}: {seen}")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def late_values(topic_name, want, timeout=15):
    """What a TRANSIENT reader started now gets: the values of its data samples."""
    dp = halyard.DomainParticipant(DOMAIN)
    topic = halyard.Topic(dp, topic_name, Level)
    rd = halyard.DataReader(dp, topic, qos=halyard.Qos(P.Reliability.Reliable(), P.History.KeepAll,
                                                       P.Durability.Transient))
    got = []
    deadline = time.time() + timeout
    while len(got) < want and time.time() < deadline:
        got += [s.value for s in rd.take(100) if not isinstance(s, halyard.InvalidSample)]
        time.sleep(0.02)
    time.sleep(0.5)
    got += [s.value for s in rd.take(100) if not isinstance(s, halyard.InvalidSample)]
    return got


@pytest.mark.parametrize("history,kept", [
    (None, [4]),
    (P.History.KeepLast(2), [3, 4]),
    (P.History.KeepAll, [0, 1, 2, 3, 4]),
])
def test_the_service_keeps_what_the_writers_durability_service_history_says(tmp_path, monkeypatch, history, kept):
    # Only the standalone service keeps the samples: no embedded one in this process.
    monkeypatch.setenv("HALYARD_DURABILITY", "off")
    svc = Service(tmp_path / "store.sqlite")
    try:
        svc.wait_for("durability service ready")
        topic_name = f"levels_{len(kept)}"
        dp = halyard.DomainParticipant(DOMAIN)
        topic = halyard.Topic(dp, topic_name, Level)
        policies = [P.Reliability.Reliable(), P.History.KeepAll, P.Durability.Transient,
                    P.WriterDataLifecycle(False)]
        if history is not None:
            policies.append(P.DurabilityService(cleanup_delay=0, history=history))
        wr = halyard.DataWriter(dp, topic, qos=halyard.Qos(*policies))
        for v in range(5):
            wr.write(Level(1, v))
        # Each insert counts as stored, the evicted ones too.
        svc.wait_for("stored 5")
        del wr
        gc.collect()
        assert late_values(topic_name, len(kept)) == kept
    finally:
        svc.stop()


def test_durability_service_values_are_checked():
    dp = halyard.DomainParticipant(DOMAIN)
    topic = halyard.Topic(dp, "levels_bad", Level)
    with pytest.raises(halyard.QosError, match="DURABILITY_SERVICE"):
        halyard.DataWriter(dp, topic, qos=halyard.Qos(
            P.Durability.Transient, P.DurabilityService(history=P.History.KeepLast(0))))
    with pytest.raises(halyard.QosError, match="DURABILITY_SERVICE"):
        halyard.DataWriter(dp, topic, qos=halyard.Qos(
            P.Durability.Transient, P.DurabilityService(max_samples=0)))
    with pytest.raises(TypeError):
        P.DurabilityService(history=2)
