"""Tiny stub: subscriptable markers for the contract's type names."""


class _Marker:
    def __init__(self, name):
        self.name = name

    def __getitem__(self, args):
        return (self.name, args)


int8 = int16 = int32 = int64 = uint8 = uint16 = uint32 = uint64 = int
float32 = float64 = float
char = str
byte = int
bounded_str = _Marker("bounded_str")
sequence = _Marker("sequence")
array = _Marker("array")
typedef = _Marker("typedef")
case = _Marker("case")
default = _Marker("default")
