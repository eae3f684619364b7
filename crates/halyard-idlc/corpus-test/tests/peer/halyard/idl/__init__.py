"""Test stub of the halyard.idl runtime (see crates/halyard-idlc/PYTHON_CONTRACT.md), mapped
onto the Python cyclonedds 11 package so that the peer's own encoder and XTypes builder run on
the classes halyard-idlc generates. register() only records what it receives."""
from cyclonedds.idl import IdlStruct, IdlUnion, IdlEnum, IdlBitmask  # noqa: F401
from . import types, annotations  # noqa: F401

REGISTERED = {}


def register(cls, *, type_information, type_objects):
    if not isinstance(type_information, bytes) or not all(isinstance(o, bytes) for o in type_objects):
        raise TypeError("register() takes bytes")
    REGISTERED[cls.__idl_typename__] = (cls, type_information, tuple(type_objects))
