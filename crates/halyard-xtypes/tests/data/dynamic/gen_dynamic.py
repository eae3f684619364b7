"""Defines topic types with the cyclonedds 11 Python package and prints, as one JSON document,
for each type: its TypeInformation and TypeMapping (XCDR2 LE hex, as Cyclone announces them),
samples serialized as XCDR1 and XCDR2 (with encapsulation header, hex), the key-only payload,
the IDL `cyclonedds typeof` would print for each type, and each sample converted to JSON by this script (enums by name, bitmasks as lists of flag
names, unions as {"discriminator": d, case_name: value}, absent optionals as null)."""
import enum
import json
import sys
from dataclasses import dataclass, fields, is_dataclass
from enum import auto
from typing import Optional

from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum, IdlBitmask
from cyclonedds.idl.annotations import key, mutable, appendable, final, bit_bound, member_id
from cyclonedds.idl.types import (int8, uint8, int16, uint16, int32, uint32, int64, uint64,
                                  float32, float64, byte, char, sequence, array, typedef,
                                  bounded_str, case, default)
from cyclonedds.idl._support import Endianness
from cyclonedds.tools.cli.idl import IdlType


@dataclass
class Prims(IdlStruct, typename="Dyn::Prims"):
    id: int32
    key("id")
    b: bool
    o: byte
    i8: int8
    u8: uint8
    i16: int16
    u16: uint16
    u32: uint32
    i64: int64
    u64: uint64
    f32: float32
    f64: float64
    c: char
    s: str


class Color(IdlEnum, typename="Dyn::Color"):
    RED = auto()
    GREEN = auto()
    BLUE = auto()


@bit_bound(8)
@dataclass
class Perm(IdlBitmask, typename="Dyn::Perm"):
    READ: bool
    WRITE: bool
    EXEC: bool


@appendable
@dataclass
class Point(IdlStruct, typename="Dyn::Geo::Point"):
    x: float64
    y: float64


@appendable
@dataclass
class Shape(IdlStruct, typename="Dyn::Geo::Shape"):
    name: bounded_str[16]
    key("name")
    color: Color
    points: sequence[Point, 8]
    corner: array[Point, 2]
    tags: sequence[str]
    perm: Perm


LongSeq = typedef["Dyn::LongSeq", sequence[int32, 10]]


class U(IdlUnion, discriminator=int16, typename="Dyn::U"):
    a: case[1, int32]
    b: case[[2, 3], bounded_str[8]]
    c: default[float64]


class EU(IdlUnion, discriminator=Color, typename="Dyn::EU"):
    r: case[Color.RED, uint8]
    g: case[Color.GREEN, Point]


@mutable
@dataclass
class Base(IdlStruct, typename="Dyn::Base"):
    id: uint32
    key("id")


@mutable
@dataclass
class Rec(Base, typename="Dyn::Rec"):
    maybe: Optional[float64]
    nothing: Optional[int32]
    color: Color
    ls: LongSeq
    names: sequence[str]
    matrix: array[array[int16, 3], 2]
    u: U
    eu: EU
    flag: bool
    big: bounded_str[300]


@final
@dataclass
class Opt(IdlStruct, typename="Dyn::Opt"):
    a: Optional[int32]
    b: Optional[str]
    c: int8


@mutable
@dataclass
class Ids(IdlStruct, typename="Dyn::Ids"):
    k: int64
    key("k")
    member_id("k", 10)
    v: sequence[uint8]
    member_id("v", 20)
    w: Optional[Point]
    member_id("w", 5)


@appendable
@dataclass
class Nest(IdlStruct, typename="Dyn::Nest"):
    inner: Shape
    key("inner")
    more: sequence[sequence[int16]]
    arr: array[str, 3]
    eus: sequence[EU]


@appendable
class AU(IdlUnion, discriminator=uint8, typename="Dyn::AU"):
    x: case[0, int16]
    y: default[str]


@appendable
@dataclass
class Unions(IdlStruct, typename="Dyn::Unions"):
    a: AU
    us: sequence[AU]
    u: U
    tail: int16


SAMPLES = [
    Prims(id=-7, b=True, o=255, i8=-128, u8=200, i16=-30000, u16=65000, u32=4000000000,
          i64=-(2**62), u64=2**63 + 5, f32=1.5, f64=-2.25e10, c="z", s="héllo"),
    Shape(name="tri", color=Color.BLUE, points=[Point(0.0, 1.0), Point(2.5, -3.0)],
          corner=[Point(1.0, 1.0), Point(-1.0, -1.0)], tags=["a", "", "long tag"],
          perm=Perm(READ=True, WRITE=False, EXEC=True)),
    Rec(id=42, maybe=3.75, nothing=None, color=Color.GREEN, ls=[1, -2, 3],
        names=["x", "yy"], matrix=[[1, 2, 3], [-4, -5, -6]], u=U(b="bee"),
        eu=EU(g=Point(9.0, 8.0)), flag=True, big="B" * 20),
    Rec(id=7, maybe=None, nothing=-1, color=Color.RED, ls=[], names=[],
        matrix=[[0, 0, 0], [0, 0, 0]], u=U(c=0.5), eu=EU(r=3), flag=False, big=""),
    Opt(a=None, b="set", c=-3),
    Opt(a=17, b=None, c=4),
    Opt(a=None, b="ab", c=1),
    Unions(a=AU(x=3), us=[AU(y="hey"), AU(x=-2)], u=U(a=1), tail=-1),
    Unions(a=AU(y="dflt"), us=[], u=U(c=2.5), tail=9),
    Ids(k=-99, v=[1, 2, 3, 250], w=Point(0.25, 0.5)),
    Ids(k=1, v=[], w=None),
    Nest(inner=Shape(name="sq", color=Color.RED, points=[], corner=[Point(0, 0), Point(1, 1)],
                     tags=[], perm=Perm(READ=False, WRITE=True, EXEC=False)),
         more=[[1, 2], [], [3]], arr=["p", "q", "r"], eus=[EU(r=1), EU(g=Point(1.0, 2.0))]),
]


def to_json2(v):
    if isinstance(v, IdlUnion):
        return {"discriminator": to_json2(v.discriminator), getattr(v, "_IdlUnion__active", None) or _active(v): to_json2(v.value)}
    if isinstance(v, IdlBitmask):
        return [f.name for f in fields(v) if getattr(v, f.name)]
    if is_dataclass(v):
        return {f.name: to_json2(getattr(v, f.name)) for f in fields(v)}
    if isinstance(v, enum.Enum):
        return v.name
    if isinstance(v, (list, tuple)):
        return [to_json2(x) for x in v]
    if isinstance(v, bytes):
        return list(v)
    return v


def _active(u):
    # the case whose label matches the discriminator, else the default case
    d = u.discriminator
    dflt = None
    for name, c in u.__idl_cases__.items():
        if c.labels is None:
            dflt = name
            continue
        if d in c.labels or any(getattr(l, "value", l) == getattr(d, "value", d) for l in c.labels):
            return name
    return dflt


out = {"types": {}, "samples": []}
for T in (Prims, Shape, U, EU, Rec, Opt, Ids, Nest, AU, Unions):
    T.__idl__.fill_type_data()
    ti, tm = T.__idl__._xt_bytedata
    # `cyclonedds typeof` prints a type with this printer (cyclonedds/tools/cli/idl.py)
    out["types"][T.__idl_typename__] = {"typeinfo": ti.hex(), "typemap": tm.hex(),
                                       "idl": IdlType.idl([T])}
for s in SAMPLES:
    T = type(s)
    rec = {
        "type": T.__idl_typename__,
        # JSON of the sample as Python decodes it back (so default-case discriminators are concrete)
        "json": to_json2(T.deserialize(s.serialize(use_version_2=True))),
        "xcdr1": s.serialize(use_version_2=False).hex(),
        "xcdr1_be": s.serialize(use_version_2=False, endianness=Endianness.Big).hex(),
        "xcdr2": s.serialize(use_version_2=True).hex(),
        "xcdr2_be": s.serialize(use_version_2=True, endianness=Endianness.Big).hex(),
        "key_xcdr2_be": T.__idl__.serialize_key_normalized(s, use_version_2=True, endianness=Endianness.Big).hex(),
    }
    out["samples"].append(rec)
json.dump(out, sys.stdout, indent=1)
