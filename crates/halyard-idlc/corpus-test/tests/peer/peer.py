"""The Python cyclonedds 11 side of crates/halyard-idlc/corpus-test/tests/interop_cyclone.rs.

usage: peer.py GENERATED_DIR DATA_DIR
For every corpus type: decodes the XCDR1 and XCDR2 samples Halyard wrote (DATA_DIR/T.rust.xcdrN),
compares them field by field (dataclass equality) with the value in samples.py, encodes that
value with cyclonedds' own encoder (DATA_DIR/T.py.xcdrN), and writes cyclonedds' own
TypeInformation of the type (DATA_DIR/T.py.typeinfo). Exits 1 listing every mismatch."""
import os
import sys

gen, data = sys.argv[1], sys.argv[2]
sys.path.insert(0, gen)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import halyard.idl as hidl  # noqa: E402
from samples import SAMPLES  # noqa: E402

failures = []
for name, expected in SAMPLES.items():
    cls = type(expected)
    if name not in hidl.REGISTERED or hidl.REGISTERED[name][0] is not cls:
        failures.append(f"{name}: not registered by the generated module")
    stem = os.path.join(data, name.replace("::", "_"))
    for rep in (1, 2):
        try:
            with open(f"{stem}.rust.xcdr{rep}", "rb") as f:
                got = cls.deserialize(f.read())
            if got != expected:
                failures.append(f"{name} XCDR{rep}: decoded {got!r}, expected {expected!r}")
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failures.append(f"{name} XCDR{rep}: cannot decode Halyard's bytes: {e!r}")
        with open(f"{stem}.py.xcdr{rep}", "wb") as f:
            f.write(expected.serialize(use_version_2=(rep == 2)))
    try:
        cls.__idl__.fill_type_data()
        with open(f"{stem}.py.typeinfo", "wb") as f:
            f.write(cls.__idl__._xt_bytedata[0])
    except Exception as e:  # noqa: BLE001 - cyclonedds 11 has no TypeObjects for maps
        print(f"peer: {name}: cyclonedds cannot build its TypeInformation: {e}")
    print(f"peer: {name}: checked")

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
