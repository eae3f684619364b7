"""The fast codec (Python objects straight to XCDR) writes the same bytes as the general
DynamicValue codec and round-trips, for every interop type; cyclonedds' own serialization of
the same samples decodes to equal values; bad member values raise SampleTypeError naming the
member."""

import importlib.util

import pytest

import halyard
import shared_types as st
from halyard.idl import IdlStruct
from halyard.idl.types import array, bounded_str, int32, sequence, uint8


@pytest.mark.parametrize("tname", st.TYPES)
def test_fast_equals_dynamic_and_round_trips(tname):
    m = st.load("halyard")
    ts = halyard.idl.type_support(getattr(m, tname))
    for s in st.samples(m, tname):
        fast = ts.serialize(s)
        assert fast == ts.serialize_dynamic(s)
        back = ts.deserialize(fast)
        assert st.norm(back) == st.norm(s)
        assert st.norm(ts.deserialize_dynamic(fast)) == st.norm(s)


def test_fast_codec_covers_final_and_appendable_types():
    m = st.load("halyard")
    uses = {t: halyard.idl.type_support(getattr(m, t)).uses_fast_codec for t in st.TYPES}
    assert uses == {"KeyedFinal": True, "Nested": True, "MutableOpt": False, "WithUnion": False,
                    "Seqs": True, "Arrays": True}


@pytest.mark.skipif(importlib.util.find_spec("cyclonedds") is None, reason="cyclonedds not installed")
@pytest.mark.parametrize("tname", st.TYPES)
def test_decodes_cyclonedds_serialization(tname):
    hm, cm = st.load("halyard"), st.load("cyclonedds")
    ts = halyard.idl.type_support(getattr(hm, tname))
    for ours, theirs in zip(st.samples(hm, tname), st.samples(cm, tname)):
        assert st.norm(ts.deserialize(theirs.serialize())) == st.norm(ours)


class Bounded(IdlStruct, typename="Codec::Bounded"):
    name: bounded_str[4]
    small: sequence[int32, 2]
    raw: array[uint8, 3]


@pytest.mark.parametrize("sample, member", [
    (Bounded("toolong", [], b"abc"), "name"),
    (Bounded("ok", [1, 2, 3], b"abc"), "small"),
    (Bounded("ok", [], b"ab"), "raw"),
    (Bounded("ok", ["x"], b"abc"), r"small\.\[0\]"),
    (Bounded(None, [], b"abc"), "name"),
])
def test_bad_values_name_the_member(sample, member):
    with pytest.raises(halyard.SampleTypeError, match=f"member '{member}"):
        halyard.idl.type_support(Bounded).serialize(sample)


@pytest.mark.parametrize("tname", ["KeyedFinal", "Nested", "MutableOpt", "WithUnion"])
def test_key_scan_equals_full_decode(tname):
    m = st.load("halyard")
    ts = halyard.idl.type_support(getattr(m, tname))
    assert ts.uses_key_scan == (tname in ("KeyedFinal", "Nested"))
    others = []
    if importlib.util.find_spec("cyclonedds") is not None:
        others = [s.serialize() for s in st.samples(st.load("cyclonedds"), tname)]
    for s, data in zip(st.samples(m, tname) * 2, [ts.serialize(x) for x in st.samples(m, tname)] + others):
        full = ts.serialized_key_hash(data, False)
        assert full == ts.key_hash(s)
        if ts.uses_key_scan:
            assert ts.serialized_key_hash(data, True) == full
