"""The Python cyclonedds 11 side of crates/halyard-idlc/corpus-test/tests/interop_cyclone_dds.rs.

usage: dds_peer.py GENERATED_DIR DOMAIN TYPE...
A DomainParticipant on DOMAIN that, for each corpus TYPE (qualified IDL name), writes the value
of samples.py on topic "idlc_py_<Type>" and reads topic "idlc_<Type>" (reliable, transient-local,
keep-last 1), comparing what Halyard sent with the same value. Prints "ok TYPE" per type, "ready"
once its writers exist; exits 1 on a wrong sample or when something is still missing after 20 s;
otherwise keeps its writers up until killed (at most 30 s more)."""
import os
import sys
import time

gen, domain, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sys.path.insert(0, gen)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from samples import SAMPLES  # noqa: E402

qos = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
)
dp = DomainParticipant(domain)
readers, writers = {}, {}
for n in names:
    cls = type(SAMPLES[n])
    stem = n.replace("::", "_")
    readers[n] = DataReader(dp, Topic(dp, f"idlc_{stem}", cls), qos=qos)
    writers[n] = DataWriter(dp, Topic(dp, f"idlc_py_{stem}", cls), qos=qos)
    writers[n].write(SAMPLES[n])
print("ready", flush=True)

pending = set(names)
deadline = time.time() + 20
while pending and time.time() < deadline:
    for n in sorted(pending):
        for s in readers[n].take(N=10):
            if s != SAMPLES[n]:
                print(f"bad {n}: got {s!r}, expected {SAMPLES[n]!r}", flush=True)
                sys.exit(1)
            print(f"ok {n}", flush=True)
            pending.discard(n)
    time.sleep(0.05)
if pending:
    print(f"missing {sorted(pending)}", flush=True)
    sys.exit(1)
print("all received", flush=True)
time.sleep(30)
