"""Test stub: the cyclonedds.idl.annotations names halyard-idlc's Python output uses, plus
default() (an IDL @default, which cyclonedds keeps as the field annotation "default")."""
from cyclonedds.idl.annotations import (  # noqa: F401
    key, position, member_id, member_name, external, nested, must_understand, autoid, final,
    appendable, mutable, bit_bound,
)
from cyclonedds.idl._main import IDLNamespaceScope


def default(apply_to, value):
    scope = IDLNamespaceScope.current
    if not scope or apply_to not in scope["__annotations__"]:
        raise TypeError(f"default(): no member {apply_to} in class scope")
    scope["__idl_field_annotations__"].setdefault(apply_to, {})["default"] = value
