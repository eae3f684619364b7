"""Tiny test stub of the halyard package (no cyclonedds needed)."""
