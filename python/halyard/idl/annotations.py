"""Annotations for IDL classes, mirroring ``cyclonedds.idl.annotations``.

Member annotations are called in the class body, after the member::

    class Point(IdlStruct, typename="Point"):
        id: int32
        key("id")
        member_id("id", 5)

Type annotations are decorators (``@final``, ``@appendable``, ``@mutable``, ``@nested``,
``@autoid("HASH")``) or class keywords (``extensibility="mutable"``, ``keylist=[...]``).
"""

from __future__ import annotations

import typing as _t

from ._scope import current_scope

__all__ = [
    "key", "member_id", "final", "appendable", "mutable", "nested", "autoid", "extensibility",
    "keylist", "default", "default_literal", "must_understand", "external", "position", "member_hash_id",
    "member_name", "bit_bound", "xcdrv2", "cdrv0",
]

T = _t.TypeVar("T")


def _field(name: str, what: str, value: _t.Any) -> None:
    scope = current_scope()
    if scope is None:
        raise TypeError(f"{what}({name!r}) is called in the body of an IDL class")
    if name not in scope.get("__annotations__", {}):
        raise TypeError(f"{what}({name!r}): no member {name!r} declared above it")
    scope.setdefault("__idl_field_annotations__", {}).setdefault(name, {})[what] = value


def key(name: str) -> None:
    """Marks member ``name`` as ``@key``."""
    _field(name, "key", True)


def member_id(name: str, value: int) -> None:
    """Gives member ``name`` the ``@id(value)``."""
    _field(name, "id", int(value))


def must_understand(name: str) -> None:
    """Marks member ``name`` ``@must_understand``."""
    _field(name, "must_understand", True)


def external(name: str) -> None:
    """Not supported by the IDL writer: raises when the type is built."""
    _field(name, "external", True)


def position(name: str, value: int) -> None:
    """Not supported (bitmasks): raises when the type is built."""
    _field(name, "position", value)


def member_hash_id(name: str, value: _t.Optional[str] = None) -> None:
    """``@hashid``: not supported by the IDL writer, raises when the type is built."""
    _field(name, "hashid", value)


def member_name(name: str, value: str) -> None:
    """Member ``name`` (a Python attribute) has IDL name ``value`` (e.g. ``class_`` for
    ``class``)."""
    _field(name, "member_name", str(value))


def default(name: str, value: _t.Any) -> None:
    """``@default(value)`` on member ``name``."""
    _field(name, "default", value)


def _type_annotate(cls: T, what: str, value: _t.Any) -> T:
    anns = dict(getattr(cls, "__idl_annotations__", {}))
    anns[what] = value
    setattr(cls, "__idl_annotations__", anns)
    return cls


def extensibility(kind: str) -> _t.Callable[[T], T]:
    """``@extensibility("final" | "appendable" | "mutable")``."""
    if kind not in ("final", "appendable", "mutable"):
        raise ValueError(f"extensibility is final, appendable or mutable, not {kind!r}")
    return lambda cls: _type_annotate(cls, "extensibility", kind)


def final(cls: T) -> T:
    """``@final`` (the default)."""
    return _type_annotate(cls, "extensibility", "final")


def appendable(cls: T) -> T:
    """``@appendable``."""
    return _type_annotate(cls, "extensibility", "appendable")


def mutable(cls: T) -> T:
    """``@mutable``."""
    return _type_annotate(cls, "extensibility", "mutable")


def nested(cls: T) -> T:
    """``@nested``: not a topic type itself."""
    return _type_annotate(cls, "nested", True)


def autoid(kind: str) -> _t.Callable[[T], T]:
    """``@autoid(SEQUENTIAL | HASH)``."""
    if kind.upper() not in ("SEQUENTIAL", "HASH"):
        raise ValueError("autoid is SEQUENTIAL or HASH")
    return lambda cls: _type_annotate(cls, "autoid", kind.upper())


def keylist(names: _t.List[str]) -> _t.Callable[[T], T]:
    """``@keylist([...])``: the key members."""
    return lambda cls: _type_annotate(cls, "keylist", list(names))


def default_literal(value: _t.Any) -> _t.Callable[[T], T]:
    """Not supported: raises when the type is built."""
    return lambda cls: _type_annotate(cls, "default_literal", value)


def bit_bound(n: int) -> _t.Callable[[T], T]:
    """``@bit_bound(n)`` of an enum."""
    return lambda cls: _type_annotate(cls, "bit_bound", int(n))


def xcdrv2(cls: T) -> T:
    """Write this type in XCDR2 even when it is final."""
    return _type_annotate(cls, "xcdrv2", True)


def cdrv0(cls: T) -> T:
    """Accepted for cyclonedds compatibility (XCDR1 is already the default for final types)."""
    return cls
