"""The cyclonedds side of the interop tests, run as a subprocess: it reads the samples of
TYPE that Halyard writes on topic "<TYPE>_h2c", checks them against the expected ones and
prints OK or a diff, then writes its own samples on "<TYPE>_c2h" until told to stop (stdin
closed) or 20 s pass.

usage: cyclone_peer.py DOMAIN TYPE
"""

import json
import select
import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import shared_types as st  # noqa: E402
from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402


def main() -> None:
    domain, tname = int(sys.argv[1]), sys.argv[2]
    m = st.load("cyclonedds")
    cls = getattr(m, tname)
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll,
              Policy.Durability.TransientLocal)
    dp = DomainParticipant(domain)
    rd = DataReader(dp, Topic(dp, f"{tname}_h2c", cls), qos=qos)
    wr = DataWriter(dp, Topic(dp, f"{tname}_c2h", cls), qos=qos)
    print("READY", flush=True)
    deadline = time.time() + 10
    while wr.get_publication_matched_status().current_count < 1 and time.time() < deadline:
        time.sleep(0.01)
    for s in st.samples(m, tname):
        wr.write(s)
    expected = [st.norm(s) for s in st.samples(m, tname)]
    got = []
    deadline = time.time() + 20
    while len(got) < len(expected) and time.time() < deadline:
        for s in rd.take(N=10):
            if s.__class__ is cls:
                got.append(st.norm(s))
        time.sleep(0.02)
    if got == expected:
        print("OK", flush=True)
    else:
        print("DIFF " + json.dumps({"got": got, "expected": expected}), flush=True)
    select.select([sys.stdin], [], [], 20)


if __name__ == "__main__":
    main()
