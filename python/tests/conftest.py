"""Test setup: loopback only, and a DDS domain of our own (87-90 are reserved for these tests)."""

import os

os.environ.setdefault("HALYARD_INTERFACE", "lo")
os.environ.setdefault(
    "CYCLONEDDS_URI",
    '<General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General>',
)
