"""Halyard Python and cyclonedds Python exchange samples of the same IDL classes both ways
(final/appendable/mutable, keyed, nested, sequences, arrays, union, enum, optional, bounded
string), and build byte-identical XTypes TypeInformation for them."""

import importlib.util
import os
import re
import subprocess
import sys
import time

import pytest

import halyard
import shared_types as st

HERE = os.path.dirname(os.path.abspath(__file__))
DOMAIN = 88

if importlib.util.find_spec("cyclonedds") is None:
    pytest.skip("the cyclonedds Python package is not installed (pip install cyclonedds)", allow_module_level=True)


def qos():
    P = halyard.Policy
    return halyard.Qos(P.Reliability.Reliable(halyard.duration(seconds=1)), P.History.KeepAll,
                       P.Durability.TransientLocal)


@pytest.mark.parametrize("tname", st.TYPES)
def test_pubsub_both_ways(tname):
    m = st.load("halyard")
    cls = getattr(m, tname)
    peer = subprocess.Popen([sys.executable, os.path.join(HERE, "cyclone_peer.py"), str(DOMAIN), tname],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert peer.stdout.readline().strip() == "READY"
        dp = halyard.DomainParticipant(DOMAIN)
        wr = halyard.DataWriter(dp, halyard.Topic(dp, f"{tname}_h2c", cls), qos=qos())
        rd = halyard.DataReader(dp, halyard.Topic(dp, f"{tname}_c2h", cls), qos=qos())
        wr.wait_for_matched(1, 10)
        for s in st.samples(m, tname):
            wr.write(s)
        expected = [st.norm(s) for s in st.samples(m, tname)]
        got = []
        deadline = time.time() + 15
        while len(got) < len(expected) and time.time() < deadline:
            rd.wait_for_data(0.5)
            got.extend(st.norm(s) for s in rd.take(10) if not isinstance(s, halyard.InvalidSample))
        diff = [(g, e) for g, e in zip(got, expected) if g != e]
        assert len(got) == len(expected) and not diff, f"cyclonedds -> halyard: {len(got)} samples, first diff {diff[:1]}"
        verdict = peer.stdout.readline().strip()
        assert verdict == "OK", f"halyard -> cyclonedds: {verdict}"
    finally:
        peer.stdin.close()
        peer.wait(timeout=30)


def _canonical(info: bytes):
    """TypeInformation hex with each TypeIdentifierWithSize (DHEADER 20, EK_MINIMAL/EK_COMPLETE
    hash, padding, serialized size) cut out and sorted: equal up to the order of the
    dependency lists, which the XTypes spec leaves open."""
    pat = re.compile(r"14000000f[12][0-9a-f]{28}00[0-9a-f]{8}")
    h = info.hex()
    return pat.sub("ID", h), sorted(pat.findall(h))


@pytest.mark.parametrize("tname", st.TYPES)
def test_type_information_matches_cyclonedds(tname):
    from cyclonedds.idl._support import Endianness

    hm, cm = st.load("halyard"), st.load("cyclonedds")
    ts = halyard.idl.type_support(getattr(hm, tname))
    idl = getattr(cm, tname).__idl__
    idl.fill_type_data()
    mapping = idl._xt_data[1]
    theirs_objects = {
        p.type_object.serialize(endianness=Endianness.Little, use_version_2=True)[4:]
        for p in list(mapping.identifier_object_pair_minimal) + list(mapping.identifier_object_pair_complete)
    }
    assert set(ts.type_objects) == theirs_objects
    assert _canonical(ts.type_information) == _canonical(idl._xt_bytedata[0])
    # The top-level identifiers come first in both.
    assert ts.type_information[:40] == idl._xt_bytedata[0][:40]
