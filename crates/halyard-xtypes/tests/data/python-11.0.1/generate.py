import sys, os
from dataclasses import dataclass, field
from typing import Optional
from enum import auto
from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum, IdlBitmask
from cyclonedds.idl.annotations import key, mutable, appendable, final, bit_bound, position
from cyclonedds.idl.types import int32, int16, float64, sequence, array, typedef, bounded_str, case, default, uint8
import cyclonedds.idl.types as types

@dataclass
class Msg(IdlStruct, typename="HelloWorldData::Msg"):
    userID: int32
    key("userID")
    message: str

class Color(IdlEnum, typename="Rich::Color"):
    RED = auto(); GREEN = auto(); BLUE = auto()

LongSeq = typedef["Rich::LongSeq", sequence[int32, 10]]

class U(IdlUnion, discriminator=int16, typename="Rich::U"):
    a: case[1, int32]
    b: case[[2, 3], bounded_str[8]]
    c: default[float64]

@mutable
@dataclass
class Base(IdlStruct, typename="Rich::Base"):
    id: int32
    key("id")

@mutable
@dataclass
class Derived(Base, typename="Rich::Derived"):
    maybe: Optional[float64]
    color: Color
    ls: LongSeq
    names: sequence[str]
    matrix: array[array[int32, 3], 2]
    big: bounded_str[300]
    u: U

out = sys.argv[1]
for T in (Msg, U, Base, Derived):
    T.__idl__.fill_type_data()
    ti, tm = T.__idl__._xt_bytedata
    name = T.__idl_typename__.replace("::", "_")
    open(os.path.join(out, name + ".typeinfo.hex"), "w").write(ti.hex() + "\n")
    open(os.path.join(out, name + ".typemap.hex"), "w").write(tm.hex() + "\n")
    print(name, len(ti), len(tm))
