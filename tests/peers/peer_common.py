"""What the Cyclone DDS Python peers of the interop tests share: the interop types, the JSON
line they print, and status helpers that work with both bindings (Cyclone 11 from PyPI, and
0.10 built against Debian's libddsc, the one with DDS Security)."""
import json
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final, key
from cyclonedds.idl.types import int32, sequence, uint8, uint32


@dataclass
@final
class Keyed(IdlStruct, typename="HalyardKeyed"):
    id: int32
    key("id")
    seq: uint32
    payload: sequence[uint8]


@dataclass
@final
class Unkeyed(IdlStruct, typename="HalyardUnkeyed"):
    seq: uint32
    payload: sequence[uint8]


# The DURABILITY kinds the peers' --durability option names.
DURABILITY = {
    "volatile": Policy.Durability.Volatile,
    "transient-local": Policy.Durability.TransientLocal,
    "transient": Policy.Durability.Transient,
    "persistent": Policy.Durability.Persistent,
}


def matched_tracker(entity_cls, getter, callback):
    """Current and total matched counts of a reader or writer: from the status getter where
    the binding has one (Cyclone 11), else from a listener (the 0.10 binding built against
    Debian's libddsc, the one with DDS Security). Returns (listener or None, counts())."""
    if hasattr(entity_cls, getter):
        return None, lambda ent: (lambda s: (s.current_count, s.total_count))(getattr(ent, getter)())
    seen = {"current": 0, "total": 0}

    def on_matched(_entity, status):
        seen["current"], seen["total"] = status.current_count, status.total_count

    return Listener(**{callback: on_matched}), lambda _ent: (seen["current"], seen["total"])


def incompatible_qos(ent, getter):
    """(total_count, last_policy_id) of an incompatible-QoS status; (None, None) where the
    binding has no getter for it (0.10)."""
    if not hasattr(ent, getter):
        return None, None
    s = getattr(ent, getter)()
    return s.total_count, s.last_policy_id


def out(obj):
    print(json.dumps(obj), flush=True)
