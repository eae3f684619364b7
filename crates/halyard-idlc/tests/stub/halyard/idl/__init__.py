"""Tiny stub of the halyard.idl contract (PYTHON_CONTRACT.md): accepts exactly the class
keywords and calls the contract names, records register() calls."""
import enum

REGISTERED = {}


class IdlStruct:
    def __init_subclass__(cls, typename=None, **kw):
        super().__init_subclass__(**kw)
        cls.__idl_typename__ = typename or cls.__name__


class IdlUnion:
    def __init_subclass__(cls, discriminator=None, discriminator_is_key=False, typename=None, **kw):
        super().__init_subclass__(**kw)
        if discriminator is None:
            raise TypeError("union without discriminator")
        cls.__idl_typename__ = typename or cls.__name__


class IdlBitmask(IdlStruct):
    pass


class IdlEnum(enum.Enum):
    def __init_subclass__(cls, typename=None, **kw):
        super().__init_subclass__(**kw)
        cls.__idl_typename__ = typename


def register(cls, *, type_information, type_objects):
    assert isinstance(type_information, bytes) and len(type_information) > 0
    assert len(type_objects) >= 2 and all(isinstance(o, bytes) for o in type_objects)
    REGISTERED[cls.__idl_typename__] = cls
