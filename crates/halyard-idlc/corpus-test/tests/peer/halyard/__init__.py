"""Test stub of the `halyard` Python package: only `halyard.idl`, mapped onto cyclonedds.idl."""
