"""One set of IDL class definitions, built with either library (``halyard`` or
``cyclonedds``) so both sides of the interop tests declare exactly the same types, plus the
deterministic samples each side sends and a normal form to compare them across libraries."""

from __future__ import annotations

import dataclasses
import enum
import sys
import types

SOURCE = '''
from dataclasses import dataclass
from typing import Optional
from LIB.idl import IdlStruct, IdlUnion, IdlEnum
from LIB.idl.types import int16, int32, uint32, int64, float32, float64, char, byte, sequence, array, bounded_str, case, default
from LIB.idl.annotations import key, appendable, mutable, final

class Color(IdlEnum, typename="Interop::Color"):
    RED = 0
    GREEN = 1
    BLUE = 2

class Choice(IdlUnion, discriminator=int32, typename="Interop::Choice"):
    number: case[1, int32]
    text: case[[2, 3], str]
    other: default[float64]

@dataclass
class KeyedFinal(IdlStruct, typename="Interop::KeyedFinal"):
    id: int32
    key("id")
    name: str
    value: float64

@dataclass
@appendable
class Inner(IdlStruct, typename="Interop::Inner"):
    x: float32
    y: float32

@dataclass
@appendable
class Nested(IdlStruct, typename="Interop::Nested"):
    id: int32
    key("id")
    inner: Inner
    points: sequence[Inner]
    small: array[int16, 3]

@dataclass
@mutable
class MutableOpt(IdlStruct, typename="Interop::MutableOpt"):
    id: uint32
    key("id")
    label: bounded_str[16]
    opt: Optional[int64]
    flag: bool

@dataclass
class WithUnion(IdlStruct, typename="Interop::WithUnion"):
    id: int32
    key("id")
    color: Color
    choice: Choice

@dataclass
@appendable
class Seqs(IdlStruct, typename="Interop::Seqs"):
    names: sequence[str]
    bounded: sequence[int32, 5]
    octets: sequence[byte]

@dataclass
class Arrays(IdlStruct, typename="Interop::Arrays"):
    doubles: array[float64, 4]
    grid: array[array[int32, 2], 2]
    letter: char
'''

TYPES = ["KeyedFinal", "Nested", "MutableOpt", "WithUnion", "Seqs", "Arrays"]


def load(lib: str) -> types.ModuleType:
    """The type definitions built with ``lib`` ("halyard" or "cyclonedds")."""
    name = f"interop_types_{lib}"
    if name in sys.modules:
        return sys.modules[name]
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    exec(compile(SOURCE.replace("LIB", lib), name, "exec", dont_inherit=True), mod.__dict__)
    return mod


def samples(m: types.ModuleType, type_name: str, n: int = 5) -> list:
    """``n`` deterministic samples of ``type_name`` built with module ``m``."""
    out = []
    for i in range(n):
        if type_name == "KeyedFinal":
            s = m.KeyedFinal(id=i, name=f"name-{i}", value=i * 1.5)
        elif type_name == "Nested":
            s = m.Nested(id=i, inner=m.Inner(x=float(i), y=-0.5), points=[m.Inner(x=1.0, y=float(j)) for j in range(i)],
                         small=[i, -i, 7])
        elif type_name == "MutableOpt":
            s = m.MutableOpt(id=i, label=f"l{i}", opt=(None if i % 2 else i * 1000), flag=bool(i % 2))
        elif type_name == "WithUnion":
            choice = [m.Choice(number=i), m.Choice(text=f"t{i}"), m.Choice(other=i / 4)][i % 3]
            s = m.WithUnion(id=i, color=list(m.Color)[i % 3], choice=choice)
        elif type_name == "Seqs":
            s = m.Seqs(names=[f"n{j}" for j in range(i)], bounded=list(range(i)), octets=bytes(range(i * 3)))
        elif type_name == "Arrays":
            s = m.Arrays(doubles=[i, 0.25, -1.0, 2.0], grid=[[i, 1], [2, 3]], letter="abcde"[i])
        else:
            raise ValueError(type_name)
        out.append(s)
    return out


def _active(u) -> list:
    """The names of the active branch of a Choice (cyclonedds raises on an inactive one,
    Halyard returns None)."""
    out = []
    for n in ("number", "text", "other"):
        try:
            if getattr(u, n) is not None:
                out.append(n)
        except AttributeError:
            pass
    return out


def norm(v):
    """A library-independent normal form (dicts, lists, numbers, str) of a sample."""
    if dataclasses.is_dataclass(v):
        return {f.name: norm(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, enum.Enum):
        return v.value
    if type(v).__name__ == "Choice":
        return ["union", _active(v), norm(v.value)]
    if isinstance(v, (bytes, bytearray)):
        return list(v)
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, float):
        return round(v, 5)
    return v
