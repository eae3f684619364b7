"""A module written by ``halyard idl FILE --lang python`` imports against this runtime (the
names of crates/halyard-idlc/PYTHON_CONTRACT.md), and its types (enum with explicit values,
bitmask, typedef, union on an enum, inheritance, mutable struct with an optional member, a
two-dimensional array, a renamed keyword member, a map) round-trip through serialization and
through DDS; the TypeObjects it registers are used as given."""

import glob
import importlib
import os
import subprocess
import sys
import time

import pytest

import halyard

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _halyard_bin():
    cands = [os.environ.get("HALYARD_BIN", "")]
    for tdir in (os.environ.get("CARGO_TARGET_DIR", ""), os.path.join(ROOT, "target")):
        if tdir:
            cands += [os.path.join(tdir, "release", "halyard"), os.path.join(tdir, "debug", "halyard")]
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    return None


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    exe = _halyard_bin()
    if exe is None:
        if os.environ.get("HALYARD_REQUIRE_BIN"):
            pytest.fail("HALYARD_REQUIRE_BIN is set but no halyard binary was found")
        pytest.skip("no halyard binary (cargo build -p halyard-cli, or set HALYARD_BIN)")
    out = tmp_path_factory.mktemp("gen")
    r = subprocess.run([exe, "idl", os.path.join(HERE, "data", "generated.idl"), "--lang", "python", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("Gen")
    finally:
        sys.path.remove(str(out))


def sample(Gen):
    return Gen.Msg(id=7, name="abc", small=[1, 2], flags=Gen.Flags(A=True, C=True), pick=Gen.Pick(s="on"),
                   maybe=None, grid=[[1, 2, 3], [4, 5, 6]], class_=9, m={"k": 1})


def test_generated_module_round_trips(gen):
    ts = halyard.idl.type_support(gen.Msg)
    assert ts.type_name == "Gen::Msg"
    assert ts.type_information == gen.Msg.__idl_type_information__
    s = sample(gen)
    back = ts.deserialize(ts.serialize(s))
    assert back == s
    assert back.flags.C and not back.flags.B
    assert back.pick.discriminator == gen.Mode.ON and back.pick.s == "on"
    s.maybe = 2.5
    assert ts.deserialize(ts.serialize(s)).maybe == 2.5


def test_generated_types_over_dds(gen):
    dp = halyard.DomainParticipant(90)
    topic = halyard.Topic(dp, "generated_msg", gen.Msg)
    P = halyard.Policy
    q = halyard.Qos(P.Reliability.Reliable(), P.History.KeepAll)
    rd = halyard.DataReader(dp, topic, qos=q)
    wr = halyard.DataWriter(dp, topic, qos=q)
    wr.wait_for_matched(1, 5)
    wr.write(sample(gen))
    assert rd.wait_for_data(5)
    got = rd.take(10)
    assert len(got) == 1 and got[0] == sample(gen)
    assert got[0].sample_info.instance_handle == wr.lookup_instance(gen.Msg(id=7))
