"""QoS in the ``cyclonedds.core`` shape: ``Qos(Policy.Reliability.Reliable(duration(seconds=1)),
Policy.History.KeepLast(10))``. Each policy is a small immutable object; a :class:`Qos` holds
at most one of each kind and turns into the plain dict the native module reads. Durations are
integers of nanoseconds (``duration()`` builds them); ``None`` is infinite.
"""

from __future__ import annotations

import typing as _t

__all__ = ["Qos", "Policy", "duration", "INFINITY"]

INFINITY: _t.Optional[int] = None


def duration(*, weeks: float = 0, days: float = 0, hours: float = 0, minutes: float = 0,
             seconds: float = 0, milliseconds: float = 0, microseconds: float = 0,
             nanoseconds: int = 0, infinite: bool = False) -> _t.Optional[int]:
    """A duration in nanoseconds (None when ``infinite``)."""
    if infinite:
        return None
    s = ((weeks * 7 + days) * 24 + hours) * 3600 + minutes * 60 + seconds
    return int(s * 1_000_000_000 + milliseconds * 1_000_000 + microseconds * 1_000) + int(nanoseconds)


class _P(_t.NamedTuple):
    key: str
    value: _t.Any

    def __repr__(self) -> str:
        return f"Policy({self.key}={self.value!r})"


def _dur(policy: str, d: _t.Any) -> _t.Optional[int]:
    if d is None:
        return None
    if isinstance(d, bool) or not isinstance(d, int):
        raise TypeError(f"{policy}: a duration is an int of nanoseconds (see halyard.duration) or None")
    return d


class Policy:
    """The QoS policies Halyard supports."""

    class Reliability:
        """RELIABILITY."""

        @staticmethod
        def Reliable(max_blocking_time: _t.Optional[int] = 100_000_000) -> _P:
            """RELIABLE, writes block at most ``max_blocking_time`` ns when resources are full."""
            return _P("reliability", ("reliable", _dur("Reliability", max_blocking_time)))

        BestEffort = _P("reliability", ("best_effort", 100_000_000))

    class Durability:
        """DURABILITY."""

        Volatile = _P("durability", "volatile")
        TransientLocal = _P("durability", "transient_local")
        Transient = _P("durability", "transient")
        Persistent = _P("durability", "persistent")

    class History:
        """HISTORY."""

        KeepAll = _P("history", ("keep_all", 0))

        @staticmethod
        def KeepLast(depth: int) -> _P:
            """KEEP_LAST ``depth``."""
            return _P("history", ("keep_last", int(depth)))

    @staticmethod
    def ResourceLimits(max_samples: int = -1, max_instances: int = -1, max_samples_per_instance: int = -1) -> _P:
        """RESOURCE_LIMITS (-1 unlimited)."""
        return _P("resource_limits", (int(max_samples), int(max_instances), int(max_samples_per_instance)))

    @staticmethod
    def DurabilityService(cleanup_delay: _t.Optional[int] = 0, history: _t.Optional[_P] = None,
                          max_samples: int = -1, max_instances: int = -1,
                          max_samples_per_instance: int = -1) -> _P:
        """DURABILITY_SERVICE: what a durability service keeps of a TRANSIENT or PERSISTENT
        writer's samples. ``cleanup_delay`` (ns, None infinite): how long a disposed instance is
        kept once no live writer has it; ``history``: ``Policy.History.KeepLast(n)`` (the
        default, n = 1) or ``Policy.History.KeepAll``, whose depth counts data samples (an
        instance's dispose or unregistration is kept besides); the resource limits (-1
        unlimited)."""
        if history is None:
            history = Policy.History.KeepLast(1)
        if not isinstance(history, _P) or history.key != "history":
            raise TypeError("DurabilityService: history is Policy.History.KeepLast(n) or Policy.History.KeepAll")
        return _P("durability_service", (_dur("DurabilityService", cleanup_delay), history.value,
                                         int(max_samples), int(max_instances),
                                         int(max_samples_per_instance)))

    @staticmethod
    def Deadline(deadline: _t.Optional[int]) -> _P:
        """DEADLINE period (ns)."""
        return _P("deadline", _dur("Deadline", deadline))

    @staticmethod
    def Lifespan(lifespan: _t.Optional[int]) -> _P:
        """LIFESPAN (ns)."""
        return _P("lifespan", _dur("Lifespan", lifespan))

    @staticmethod
    def LatencyBudget(budget: _t.Optional[int]) -> _P:
        """LATENCY_BUDGET (ns)."""
        return _P("latency_budget", _dur("LatencyBudget", budget))

    @staticmethod
    def TimeBasedFilter(filter_time: _t.Optional[int]) -> _P:
        """TIME_BASED_FILTER minimum separation (ns)."""
        return _P("time_based_filter", _dur("TimeBasedFilter", filter_time))

    class Liveliness:
        """LIVELINESS."""

        @staticmethod
        def Automatic(lease_duration: _t.Optional[int] = None) -> _P:
            """AUTOMATIC."""
            return _P("liveliness", ("automatic", _dur("Liveliness", lease_duration)))

        @staticmethod
        def ManualByParticipant(lease_duration: _t.Optional[int] = None) -> _P:
            """MANUAL_BY_PARTICIPANT."""
            return _P("liveliness", ("manual_by_participant", _dur("Liveliness", lease_duration)))

        @staticmethod
        def ManualByTopic(lease_duration: _t.Optional[int] = None) -> _P:
            """MANUAL_BY_TOPIC."""
            return _P("liveliness", ("manual_by_topic", _dur("Liveliness", lease_duration)))

    class Ownership:
        """OWNERSHIP."""

        Shared = _P("ownership", "shared")
        Exclusive = _P("ownership", "exclusive")

    @staticmethod
    def OwnershipStrength(strength: int) -> _P:
        """OWNERSHIP_STRENGTH."""
        return _P("ownership_strength", int(strength))

    @staticmethod
    def Partition(partitions: _t.Sequence[str]) -> _P:
        """PARTITION names."""
        if isinstance(partitions, str):
            partitions = [partitions]
        return _P("partition", [str(p) for p in partitions])

    class DestinationOrder:
        """DESTINATION_ORDER."""

        ByReceptionTimestamp = _P("destination_order", "by_reception_timestamp")
        BySourceTimestamp = _P("destination_order", "by_source_timestamp")

    class PresentationAccessScope:
        """PRESENTATION."""

        @staticmethod
        def Instance(coherent_access: bool = False, ordered_access: bool = False) -> _P:
            """Access scope INSTANCE."""
            return _P("presentation", ("instance", bool(coherent_access), bool(ordered_access)))

        @staticmethod
        def Topic(coherent_access: bool = False, ordered_access: bool = False) -> _P:
            """Access scope TOPIC."""
            return _P("presentation", ("topic", bool(coherent_access), bool(ordered_access)))

        @staticmethod
        def Group(coherent_access: bool = False, ordered_access: bool = False) -> _P:
            """Access scope GROUP."""
            return _P("presentation", ("group", bool(coherent_access), bool(ordered_access)))

    @staticmethod
    def TransportPriority(value: int) -> _P:
        """TRANSPORT_PRIORITY."""
        return _P("transport_priority", int(value))

    @staticmethod
    def Userdata(data: bytes) -> _P:
        """USER_DATA."""
        return _P("user_data", bytes(data))

    @staticmethod
    def WriterDataLifecycle(autodispose: bool) -> _P:
        """WRITER_DATA_LIFECYCLE autodispose_unregistered_instances."""
        return _P("writer_data_lifecycle", bool(autodispose))

    class DataRepresentation:
        """DATA_REPRESENTATION."""

        XCDR1 = _P("data_representation", ["xcdr1"])
        XCDR2 = _P("data_representation", ["xcdr2"])


class Qos:
    """A set of QoS policies (one per kind; later ones replace earlier ones)."""

    def __init__(self, *policies: _P, base: _t.Optional["Qos"] = None) -> None:
        self._p: _t.Dict[str, _t.Any] = dict(base._p) if base is not None else {}
        for p in policies:
            if not isinstance(p, _P):
                raise TypeError(f"Qos takes Policy values, not {p!r} (did you forget to call it?)")
            self._p[p.key] = p.value

    def __iter__(self) -> _t.Iterator[_P]:
        return (_P(k, v) for k, v in self._p.items())

    def __contains__(self, key: str) -> bool:
        return key in self._p

    def __add__(self, other: "Qos") -> "Qos":
        return Qos(*other, base=self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Qos) and other._p == self._p

    def __repr__(self) -> str:
        return "Qos(" + ", ".join(repr(p) for p in self) + ")"

    def _native(self) -> _t.Dict[str, _t.Any]:
        return dict(self._p)
