"""IDL types for member annotations, mirroring ``cyclonedds.idl.types``.

Primitive names are ``typing.Annotated`` aliases of the Python type a value has
(``int32 = Annotated[int, "int32"]``); templates (``sequence[T]``, ``sequence[T, N]``,
``array[T, N]``, ``bounded_str[N]``, ``case[labels, T]``, ``default[T]``, ``typedef[name, T]``)
return ``Annotated`` types carrying a descriptor object that the IDL writer reads.
``optional[T]`` (or ``typing.Optional[T]``) marks an ``@optional`` member, ``map[K, V]`` (or
``dict[K, V]``) a map, ``list[T]`` an unbounded sequence.
"""

from __future__ import annotations

import typing as _t
from typing import Annotated as _A

char = _A[str, "char"]
wchar = _A[str, "wchar"]
int8 = _A[int, "int8"]
int16 = _A[int, "int16"]
int32 = _A[int, "int32"]
int64 = _A[int, "int64"]
byte = _A[int, "byte"]
octet = byte
uint8 = _A[int, "uint8"]
uint16 = _A[int, "uint16"]
uint32 = _A[int, "uint32"]
uint64 = _A[int, "uint64"]
float32 = _A[float, "float32"]
float64 = _A[float, "float64"]
boolean = bool
string = str

__all__ = [
    "char", "wchar", "int8", "int16", "int32", "int64", "byte", "octet", "uint8", "uint16",
    "uint32", "uint64", "float32", "float64", "boolean", "string", "array", "sequence",
    "bounded_str", "typedef", "case", "default", "optional", "map",
]


class array:
    """``array[T, N]``: a fixed-length array (nest for more dimensions)."""

    def __class_getitem__(cls, tup: _t.Any) -> _t.Any:
        if not isinstance(tup, tuple) or len(tup) != 2 or type(tup[1]) is not int or tup[1] <= 0:
            raise TypeError("array takes an element type and a positive constant length: array[T, N]")
        return _A[_t.Sequence[tup[0]], cls(tup[0], tup[1])]

    def __init__(self, subtype: _t.Any, length: int) -> None:
        self.subtype = subtype
        self.length = length

    def __repr__(self) -> str:
        return f"array[{self.subtype!r}, {self.length}]"


class sequence:
    """``sequence[T]`` (unbounded) or ``sequence[T, N]`` (bounded)."""

    def __class_getitem__(cls, tup: _t.Any) -> _t.Any:
        if not isinstance(tup, tuple):
            tup = (tup,)
        if len(tup) not in (1, 2) or (len(tup) == 2 and (type(tup[1]) is not int or tup[1] <= 0)):
            raise TypeError("sequence takes an element type and an optional positive bound")
        return _A[_t.Sequence[tup[0]], cls(*tup)]

    def __init__(self, subtype: _t.Any, max_length: _t.Optional[int] = None) -> None:
        self.subtype = subtype
        self.max_length = max_length

    def __repr__(self) -> str:
        return f"sequence[{self.subtype!r}, {self.max_length}]"


class bounded_str:
    """``bounded_str[N]``: ``string<N>``."""

    def __class_getitem__(cls, n: _t.Any) -> _t.Any:
        if type(n) is not int or n <= 0:
            raise TypeError("bounded_str takes a positive bound: bounded_str[N]")
        return _A[str, cls(n)]

    def __init__(self, max_length: int) -> None:
        self.max_length = max_length

    def __repr__(self) -> str:
        return f"bounded_str[{self.max_length}]"


class typedef:
    """``typedef[name, T]``: an alias (not supported by the IDL writer yet: raises there)."""

    def __class_getitem__(cls, tup: _t.Any) -> _t.Any:
        if not isinstance(tup, tuple) or len(tup) != 2:
            raise TypeError("typedef takes a name and a type: typedef[name, T]")
        return _A[_t.Any, cls(*tup)]

    def __init__(self, name: str, subtype: _t.Any) -> None:
        self.name = name
        self.subtype = subtype


class case:
    """``case[label_or_labels, T]``: a union branch."""

    def __class_getitem__(cls, tup: _t.Any) -> _t.Any:
        if not isinstance(tup, tuple) or len(tup) != 2:
            raise TypeError("case takes the label(s) and a type: case[1, int32] or case[[1, 2], T]")
        return _A[_t.Optional[tup[1]], cls(*tup)]

    def __init__(self, labels: _t.Any, subtype: _t.Any) -> None:
        self.labels = list(labels) if isinstance(labels, (list, tuple)) else [labels]
        self.subtype = subtype


class default:
    """``default[T]``: the union's default branch."""

    def __class_getitem__(cls, sub: _t.Any) -> _t.Any:
        return _A[_t.Optional[sub], cls(sub)]

    def __init__(self, subtype: _t.Any) -> None:
        self.subtype = subtype
        self.labels: list = []


class optional:
    """``optional[T]``: an ``@optional`` member (``None`` when absent)."""

    def __class_getitem__(cls, sub: _t.Any) -> _t.Any:
        return _t.Optional[sub]


class map:  # noqa: A001 - the IDL name
    """``map[K, V]``: an unbounded IDL map (a Python dict)."""

    def __class_getitem__(cls, tup: _t.Any) -> _t.Any:
        if not isinstance(tup, tuple) or len(tup) != 2:
            raise TypeError("map takes a key and a value type: map[K, V]")
        return _t.Dict[tup[0], tup[1]]
