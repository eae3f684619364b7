"""Test stub: the cyclonedds.idl.types names halyard-idlc's Python output uses."""
from cyclonedds.idl.types import (  # noqa: F401
    int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, char, byte,
    bounded_str, sequence, array, typedef, case, default,
)
