"""IDL types as Python classes (``cyclonedds.idl`` style) and their XTypes description.

A struct is a dataclass deriving :class:`IdlStruct`::

    from halyard.idl import IdlStruct
    from halyard.idl.types import int32, sequence
    from halyard.idl.annotations import key

    class Point(IdlStruct, typename="M::Point"):
        id: int32
        key("id")
        xs: sequence[float]

The class's XTypes TypeObjects come either from the IDL compiler (generated modules call
:func:`register` with its bytes) or are built on first use from the annotations: the class
and the types it uses are written as IDL (:func:`to_idl`) and compiled natively by Halyard's
IDL compiler, whose TypeObjects are byte-identical to the ``cyclonedds`` package's.
"""

from __future__ import annotations

import dataclasses
import enum
import typing as _t

from . import _scope
from ._writer import to_idl, typename_of

try:  # Python 3.11+
    from typing import dataclass_transform
except ImportError:  # pragma: no cover - older Pythons: no static dataclass semantics
    def dataclass_transform(**_kw: _t.Any) -> _t.Callable[[_t.Any], _t.Any]:  # type: ignore[no-redef,misc]
        return lambda x: x

__all__ = ["IdlStruct", "IdlUnion", "IdlEnum", "IdlBitmask", "IdlMeta", "register", "to_idl", "type_support"]


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
class IdlMeta(type):
    """Metaclass of IDL structs and unions: records the class body for annotations and makes
    the class a dataclass."""

    @classmethod
    def __prepare__(mcs, name: str, bases: _t.Tuple[type, ...], **kwargs: _t.Any) -> dict:  # type: ignore[override]
        ns: _t.Dict[str, _t.Any] = {"__annotations__": {}, "__idl_field_annotations__": {}}
        _scope.push(ns)
        return ns

    def __new__(mcs, name: str, bases: _t.Tuple[type, ...], ns: dict, **kwargs: _t.Any) -> type:
        _scope.pop()
        typename = kwargs.pop("typename", None)
        ext = kwargs.pop("extensibility", None)
        keys = kwargs.pop("keylist", None)
        disc = kwargs.pop("discriminator", None)
        disc_key = kwargs.pop("discriminator_is_key", False)
        cls = super().__new__(mcs, name, bases, ns, **kwargs)
        anns = dict(ns.get("__idl_annotations__", {}))
        if ext is not None:
            anns["extensibility"] = ext
        if keys is not None:
            anns["keylist"] = list(keys)
        cls.__idl_annotations__ = anns  # type: ignore[attr-defined]
        cls.__idl_typename__ = typename or f"{cls.__module__}.{cls.__qualname__}".replace(".", "::")  # type: ignore[attr-defined]
        if disc is not None:
            cls.__idl_discriminator__ = disc  # type: ignore[attr-defined]
            cls.__idl_discriminator_is_key__ = bool(disc_key)  # type: ignore[attr-defined]
        if bases and not ns.get("_idl_abstract", False):
            if issubclass(cls, (IdlStructBase, IdlBitmask)):
                cls = dataclasses.dataclass(cls)  # type: ignore[assignment]
                # A `@dataclass` written above the class (cyclonedds style) runs again: put
                # back the Field objects of default_factory members, which the first pass
                # removed from the class, so that the second pass keeps their defaults.
                for f in dataclasses.fields(cls):  # type: ignore[arg-type]
                    if f.default_factory is not dataclasses.MISSING:
                        setattr(cls, f.name, f)
        return cls

    def __init__(cls, name: str, bases: _t.Tuple[type, ...], ns: dict, **kwargs: _t.Any) -> None:
        super().__init__(name, bases, ns)


class IdlStructBase:
    """Marker of struct classes."""


class IdlStruct(IdlStructBase, metaclass=IdlMeta):
    """Base of IDL structs: a dataclass with IDL annotations (``typename=``,
    ``extensibility=``, ``keylist=`` class keywords)."""

    _idl_abstract = True
    __idl_typename__: _t.ClassVar[str]
    __idl_annotations__: _t.ClassVar[_t.Dict[str, _t.Any]]

    def serialize(self) -> bytes:
        """The sample serialized (encapsulation header included)."""
        return type_support(type(self)).serialize(self)

    @classmethod
    def deserialize(cls, data: bytes) -> _t.Any:
        """A sample from its serialization."""
        return type_support(cls).deserialize(data)


class IdlBitmask(metaclass=IdlMeta):
    """Base of IDL bitmasks: a dataclass of ``bool`` flags, ``annotate.position("F", p)``
    giving a flag's bit (default: declaration order), ``@annotate.bit_bound(n)``."""

    _idl_abstract = True
    __idl_typename__: _t.ClassVar[str]


class IdlUnion(metaclass=IdlMeta):
    """Base of IDL unions: ``class U(IdlUnion, discriminator=int32, typename="U")`` with
    ``case[labels, T]`` / ``default[T]`` members. An instance holds ``discriminator`` and
    ``value``; build it with ``U(name=value)`` or ``U(discriminator=d, value=v)``, read the
    active branch with ``u.name``."""

    _idl_abstract = True
    __idl_typename__: _t.ClassVar[str]
    __idl_discriminator__: _t.ClassVar[_t.Any]

    def __init__(self, discriminator: _t.Any = None, value: _t.Any = None, **branch: _t.Any) -> None:
        cases = _union_cases(type(self))
        if branch:
            if len(branch) != 1 or discriminator is not None:
                raise TypeError("give one branch as name=value, or discriminator= and value=")
            (name, v), = branch.items()
            idx = [c[0] for c in cases].index(name) if name in [c[0] for c in cases] else -1
            if idx < 0:
                raise TypeError(f"{type(self).__name__} has no branch {name!r}")
            labels = cases[idx][2]
            if labels:
                discriminator = labels[0]
            else:
                discriminator = _default_label(type(self), cases)
            value = v
        self.__dict__["discriminator"] = discriminator
        self.__dict__["value"] = value

    def _case_index(self) -> _t.Optional[int]:
        """The index of the active branch (declaration order), None if none."""
        cases = _union_cases(type(self))
        d = self.__dict__.get("discriminator")
        dflt = None
        for i, (_, _, labels, is_default) in enumerate(cases):
            if is_default:
                dflt = i
            elif d in labels or (isinstance(d, enum.Enum) and d.value in [getattr(x, "value", x) for x in labels]):
                return i
        return dflt

    def __getattr__(self, name: str) -> _t.Any:
        cases = _union_cases(type(self))
        for i, (n, _, _, _) in enumerate(cases):
            if n == name:
                if self._case_index() == i:
                    return self.__dict__.get("value")
                return None
        raise AttributeError(name)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.__dict__ == other.__dict__

    def __repr__(self) -> str:
        i = self._case_index()
        if i is None:
            return f"{type(self).__name__}(discriminator={self.discriminator!r})"
        return f"{type(self).__name__}({_union_cases(type(self))[i][0]}={self.value!r})"

    def serialize(self) -> bytes:
        raise TypeError("only topic types (structs) serialize on their own")


def _union_cases(cls: type) -> _t.List[_t.Tuple[str, _t.Any, list, bool]]:
    cached = cls.__dict__.get("__idl_cases__")
    if cached is not None:
        return cached
    from . import types as T

    hints = _t.get_type_hints(cls, include_extras=True)
    out = []
    for name, h in hints.items():
        if name.startswith("_"):
            continue
        meta = getattr(h, "__metadata__", ())
        for m in meta:
            if isinstance(m, T.case):
                out.append((name, m.subtype, list(m.labels), False))
            elif isinstance(m, T.default):
                out.append((name, m.subtype, [], True))
    setattr(cls, "__idl_cases__", out)
    return out


def _default_label(cls: type, cases: list) -> _t.Any:
    used: _t.Set[_t.Any] = set()
    for _, _, labels, _ in cases:
        used.update(getattr(x, "value", x) for x in labels)
    d = 0
    while d in used:
        d += 1
    disc = getattr(cls, "__idl_discriminator__", None)
    if isinstance(disc, type) and issubclass(disc, enum.Enum):
        for m in disc:
            if m.value not in used:
                return m
    return d


class IdlEnumMeta(enum.EnumMeta):
    """Takes the ``typename=`` class keyword (Python < 3.11's EnumMeta takes no keywords)."""

    @classmethod
    def __prepare__(mcs, name: str, bases: _t.Tuple[type, ...], **kwargs: _t.Any) -> _t.Any:  # type: ignore[override]
        kwargs.pop("typename", None)
        return super().__prepare__(name, bases, **kwargs)

    def __new__(mcs, name: str, bases: _t.Tuple[type, ...], ns: _t.Any, typename: _t.Optional[str] = None,
                **kwargs: _t.Any) -> _t.Any:
        cls = super().__new__(mcs, name, bases, ns, **kwargs)
        cls.__idl_typename__ = typename or f"{cls.__module__}.{cls.__qualname__}".replace(".", "::")  # type: ignore[attr-defined]
        return cls


class IdlEnum(enum.Enum, metaclass=IdlEnumMeta):
    """Base of IDL enums: ``class Color(IdlEnum, typename="Color"): RED = 0; GREEN = 1``."""


def register(cls: type, type_information: bytes, type_objects: _t.Sequence[bytes], *, xcdr2: bool = False) -> None:
    """Registers the IDL compiler's XTypes description of ``cls`` (a topic struct): its
    TypeInformation and TypeObjects (XCDR2 little-endian bytes). Used by generated modules;
    a class without it gets them built from its annotations."""
    setattr(cls, "__idl_type_information__", bytes(type_information))
    setattr(cls, "__idl_type_objects__", tuple(bytes(o) for o in type_objects))
    setattr(cls, "__idl_xcdr2__", xcdr2)


def type_support(cls: type) -> _t.Any:
    """The native type support of a topic class (cached on the class)."""
    ts = cls.__dict__.get("__idl_type_support__")
    if ts is not None:
        return ts
    from .. import _native
    from ._writer import classes_of

    classes = classes_of(cls)
    renames = {name: _renames(c) for name, c in classes.items() if isinstance(c, type) and not issubclass(c, enum.Enum)}
    info = cls.__dict__.get("__idl_type_information__")
    objs = cls.__dict__.get("__idl_type_objects__")
    if info is None:
        info, objs = _native.idl_type_objects(to_idl(cls), typename_of(cls))
    xcdr2 = bool(getattr(cls, "__idl_annotations__", {}).get("xcdrv2", False)) or bool(
        cls.__dict__.get("__idl_xcdr2__", False)
    )
    ts = _native.TypeSupport(info, list(objs or ()), classes, xcdr2, renames)
    setattr(cls, "__idl_type_support__", ts)
    return ts


def _renames(cls: type) -> _t.Dict[str, str]:
    """IDL member name -> Python attribute, for members renamed with ``member_name`` (an IDL
    name that is a Python keyword), over the class and its IDL bases."""
    out: _t.Dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        for attr, anns in (klass.__dict__.get("__idl_field_annotations__") or {}).items():
            if "member_name" in anns:
                out[str(anns["member_name"])] = attr
    return out
