"""Writes an IDL class and the types it uses as IDL text, for Halyard's IDL compiler.

The mapping is cyclonedds.idl's: ``int`` is ``int64``, ``float`` ``double``, ``str``
``string``, ``bool`` ``boolean``, ``list[T]`` an unbounded sequence, ``dict[K, V]`` a map,
``Optional[T]`` an ``@optional`` member. Named types are emitted in their modules
(``A::B::T`` inside ``module A { module B { ... }; };``), dependencies first.
"""

from __future__ import annotations

import enum
import typing as _t

from . import types as T

_PRIMS = {
    "char": "char", "wchar": "wchar", "int8": "int8", "int16": "short", "int32": "long",
    "int64": "long long", "byte": "octet", "uint8": "uint8", "uint16": "unsigned short",
    "uint32": "unsigned long", "uint64": "unsigned long long", "float32": "float",
    "float64": "double",
}


class IdlWriteError(TypeError):
    """A class annotation the IDL writer cannot express."""


def typename_of(cls: type) -> str:
    """The qualified IDL name of an IDL class (``A::B::T``)."""
    return str(getattr(cls, "__idl_typename__")).replace(".", "::")


def _is_idl_class(x: _t.Any) -> bool:
    return isinstance(x, type) and hasattr(x, "__idl_typename__")


def _hints(cls: type) -> _t.Dict[str, _t.Any]:
    hints = _t.get_type_hints(cls, include_extras=True)
    return {k: v for k, v in hints.items() if not k.startswith("_")}


class _Ctx:
    def __init__(self) -> None:
        self.done: _t.Dict[str, type] = {}
        self.order: _t.List[_t.Tuple[str, str]] = []  # (qualified name, declaration)
        self.busy: _t.Set[str] = set()


def _type(ctx: _Ctx, h: _t.Any, where: str) -> _t.Tuple[str, str]:
    """(IDL type spec, array suffix) of annotation ``h``."""
    origin = _t.get_origin(h)
    if origin is _t.Annotated:
        base, *meta = _t.get_args(h)
        for m in meta:
            if isinstance(m, str) and m in _PRIMS:
                return _PRIMS[m], ""
            if isinstance(m, T.bounded_str):
                return f"string<{m.max_length}>", ""
            if isinstance(m, T.sequence):
                el, suf = _type(ctx, m.subtype, where)
                if suf:
                    raise IdlWriteError(f"{where}: a sequence of arrays needs a typedef, not supported")
                return (f"sequence<{el}, {m.max_length}>" if m.max_length else f"sequence<{el}>"), ""
            if isinstance(m, T.array):
                el, suf = _type(ctx, m.subtype, where)
                return el, f"[{m.length}]" + suf
            if isinstance(m, T.typedef):
                raise IdlWriteError(f"{where}: typedef members are not supported by the IDL writer")
        return _type(ctx, base, where)
    if h is bool:
        return "boolean", ""
    if h is int:
        return "long long", ""
    if h is float:
        return "double", ""
    if h is str:
        return "string", ""
    if origin in (list, _t.List) or origin is _t.Sequence:
        (el_h,) = _t.get_args(h)
        el, suf = _type(ctx, el_h, where)
        if suf:
            raise IdlWriteError(f"{where}: a sequence of arrays needs a typedef, not supported")
        return f"sequence<{el}>", ""
    if origin in (dict, _t.Dict):
        k, v = _t.get_args(h)
        ks, ksuf = _type(ctx, k, where)
        vs, vsuf = _type(ctx, v, where)
        if ksuf or vsuf:
            raise IdlWriteError(f"{where}: a map of arrays needs a typedef, not supported")
        return f"map<{ks}, {vs}>", ""
    if _is_idl_class(h):
        _named(ctx, h)
        return "::" + typename_of(h), ""
    raise IdlWriteError(f"{where}: {h!r} is not an IDL type")


def _optional_arg(h: _t.Any) -> _t.Optional[_t.Any]:
    if _t.get_origin(h) is _t.Union:
        args = [a for a in _t.get_args(h) if a is not type(None)]
        if len(args) == 1 and len(_t.get_args(h)) == 2:
            return args[0]
    return None


def _struct(ctx: _Ctx, cls: type) -> str:
    anns = getattr(cls, "__idl_annotations__", {})
    fanns = getattr(cls, "__idl_field_annotations__", {}) or {}
    keylist = anns.get("keylist") or []
    lines = []
    for name, h in _own_hints(cls).items():
        fa = fanns.get(name, {})
        for bad in ("external", "position", "hashid"):
            if bad in fa:
                raise IdlWriteError(f"{typename_of(cls)}.{name}: @{bad} is not supported")
        prefix = ""
        opt = _optional_arg(h)
        if opt is not None:
            prefix += "@optional "
            h = opt
        if fa.get("key") or name in keylist:
            prefix += "@key "
        if "id" in fa:
            prefix += f"@id({fa['id']}) "
        if fa.get("must_understand"):
            prefix += "@must_understand "
        if "default" in fa:
            prefix += f"@default({_literal(fa['default'])}) "
        ts, suf = _type(ctx, h, f"{typename_of(cls)}.{name}")
        lines.append(f"  {prefix}{ts} {fa.get('member_name', name)}{suf};")
    base = _idl_base(cls)
    inherit = ""
    if base is not None:
        _named(ctx, base)
        inherit = f" : ::{typename_of(base)}"
    if not lines and base is None:
        raise IdlWriteError(f"{typename_of(cls)}: an IDL struct needs at least one member")
    return _header(cls) + f"struct {_short(cls)}{inherit} {{\n" + "\n".join(lines) + "\n};"


def _idl_base(cls: type) -> _t.Optional[type]:
    """The IDL struct ``cls`` derives from, if any."""
    from . import IdlStruct

    for b in cls.__bases__:
        if b is not IdlStruct and isinstance(b, type) and issubclass(b, IdlStruct):
            return b
    return None


def _own_hints(cls: type) -> _t.Dict[str, _t.Any]:
    """The members ``cls`` declares itself (its IDL base's come from the base)."""
    hints = _hints(cls)
    if _idl_base(cls) is None:
        return hints
    own = cls.__dict__.get("__annotations__", {})
    return {k: v for k, v in hints.items() if k in own}


def _literal(v: _t.Any) -> str:
    import json

    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, enum.Enum):
        return _enum_label(v)
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def _header(cls: type) -> str:
    anns = getattr(cls, "__idl_annotations__", {})
    out = ""
    ext = anns.get("extensibility")
    if ext:
        out += f"@{ext} "
    if anns.get("nested"):
        out += "@nested "
    if anns.get("autoid"):
        out += f"@autoid({anns['autoid']}) "
    if anns.get("default_literal") is not None:
        raise IdlWriteError(f"{typename_of(cls)}: @default_literal is not supported")
    return out


def _short(cls: type) -> str:
    return typename_of(cls).split("::")[-1]


def _union(ctx: _Ctx, cls: type) -> str:
    from . import _union_cases

    disc = getattr(cls, "__idl_discriminator__", None)
    if disc is None:
        raise IdlWriteError(f"{typename_of(cls)}: a union needs discriminator=TYPE")
    ds, _ = _type(ctx, disc, f"{typename_of(cls)} discriminator")
    if getattr(cls, "__idl_discriminator_is_key__", False):
        ds = "@key " + ds
    lines = []
    for name, sub, labels, is_default in _union_cases(cls):
        ts, suf = _type(ctx, sub, f"{typename_of(cls)}.{name}")
        if is_default:
            heads = "default: "
        else:
            heads = " ".join(f"case {_label(x)}:" for x in labels)
        lines.append(f"  {heads} {ts} {name}{suf};")
    return _header(cls) + f"union {_short(cls)} switch ({ds}) {{\n" + "\n".join(lines) + "\n};"


def _label(x: _t.Any) -> str:
    if isinstance(x, enum.Enum):
        return _enum_label(x)
    if isinstance(x, bool):
        return "TRUE" if x else "FALSE"
    if isinstance(x, str):
        return repr(x)
    return str(int(x))


def _enum_label(x: enum.Enum) -> str:
    qual = typename_of(type(x)).split("::")
    return "::" + "::".join(qual[:-1] + [x.name]) if len(qual) > 1 else "::" + x.name


def _enum(cls: type) -> str:
    members: _t.List[_t.Any] = list(cls)  # type: ignore[call-overload]
    seq = all(m.value == i for i, m in enumerate(members))
    names = []
    for m in members:
        names.append(f"  {m.name}" if seq else f"  @value({int(m.value)}) {m.name}")
    bb = getattr(cls, "__idl_annotations__", {}).get("bit_bound") if hasattr(cls, "__idl_annotations__") else None
    head = f"@bit_bound({bb}) " if bb else ""
    return head + f"enum {_short(cls)} {{\n" + ",\n".join(names) + "\n};"


def _bitmask(cls: type) -> str:
    fanns = getattr(cls, "__idl_field_annotations__", {}) or {}
    names = []
    for name in _hints(cls):
        pos = fanns.get(name, {}).get("position")
        names.append(f"  @position({int(pos)}) {name}" if pos is not None else f"  {name}")
    bb = getattr(cls, "__idl_annotations__", {}).get("bit_bound")
    head = f"@bit_bound({int(bb)}) " if bb else ""
    return head + f"bitmask {_short(cls)} {{\n" + ",\n".join(names) + "\n};"


def _named(ctx: _Ctx, cls: type) -> None:
    name = typename_of(cls)
    prev = ctx.done.get(name)
    if prev is not None:
        if prev is not cls:
            raise IdlWriteError(f"two classes are named {name}")
        return
    if name in ctx.busy:
        raise IdlWriteError(f"{name} refers to itself: recursive types are not supported")
    ctx.busy.add(name)
    from . import IdlUnion

    from . import IdlBitmask

    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        decl = _enum(cls)
    elif issubclass(cls, IdlBitmask):
        decl = _bitmask(cls)
    elif issubclass(cls, IdlUnion):
        decl = _union(ctx, cls)
    else:
        decl = _struct(ctx, cls)
    ctx.busy.discard(name)
    ctx.done[name] = cls
    ctx.order.append((name, decl))


def _wrap(name: str, decl: str) -> str:
    mods = name.split("::")[:-1]
    out = decl
    for m in reversed(mods):
        out = f"module {m} {{\n{out}\n}};"
    return out


def to_idl(cls: type) -> str:
    """IDL text declaring ``cls`` and every named type it uses (dependencies first)."""
    ctx = _Ctx()
    _named(ctx, cls)
    return "\n".join(_wrap(n, d) for n, d in ctx.order) + "\n"


def classes_of(cls: type) -> _t.Dict[str, type]:
    """Every IDL class ``cls`` uses, by qualified name (``cls`` included)."""
    if cls.__dict__.get("__idl_type_information__") is not None:
        return _classes_walk(cls, {})
    ctx = _Ctx()
    _named(ctx, cls)
    return dict(ctx.done)


def _classes_walk(cls: type, out: _t.Dict[str, type]) -> _t.Dict[str, type]:
    name = typename_of(cls)
    if name in out:
        return out
    out[name] = cls
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        return out
    try:
        hints = _hints(cls)
    except Exception:  # noqa: BLE001 - a class whose hints do not resolve has no nested types we can see
        return out
    disc = getattr(cls, "__idl_discriminator__", None)
    todo = list(hints.values()) + ([disc] if disc is not None else [])
    while todo:
        h = todo.pop()
        if _is_idl_class(h):
            _classes_walk(h, out)
        for m in getattr(h, "__metadata__", ()):
            sub = getattr(m, "subtype", None)
            if sub is not None:
                todo.append(sub)
        todo.extend(a for a in _t.get_args(h) if a is not None)
    return out
