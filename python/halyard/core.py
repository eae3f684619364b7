"""DCPS entities (DDS 1.4 §2.2.2): participant, topic, publisher, subscriber, writer, reader,
listeners, conditions and WaitSets. Thin wrappers over ``halyard._native``; the shapes follow
the ``cyclonedds`` package (``DataWriter(participant, topic, qos=..., listener=...)``,
``reader.take(N)`` returning samples carrying ``sample_info``).
"""

from __future__ import annotations

import typing as _t
import weakref

from . import _native
from .idl import type_support
from .qos import Qos

__all__ = [
    "DomainParticipant", "Topic", "ContentFilteredTopic", "Publisher", "Subscriber", "DataWriter", "DataReader",
    "Listener", "InvalidSample", "ReadCondition", "QueryCondition", "StatusCondition",
    "GuardCondition", "WaitSet",
    "SampleState", "ViewState", "InstanceState", "StatusMask",
]

T = _t.TypeVar("T")


class SampleState:
    """Sample state bits (DDS 1.4 §2.2.2.5.1.7)."""
    Read = 1
    NotRead = 2
    Any = 3


class ViewState:
    """View state bits."""
    New = 1
    NotNew = 2
    Any = 3


class InstanceState:
    """Instance state bits."""
    Alive = 1
    NotAliveDisposed = 2
    NotAliveNoWriters = 4
    Any = 7


class StatusMask:
    """Communication status bits (DDS 1.4 §2.2.4.1)."""
    OfferedDeadlineMissed = 1 << 1
    RequestedDeadlineMissed = 1 << 2
    OfferedIncompatibleQos = 1 << 5
    RequestedIncompatibleQos = 1 << 6
    SampleLost = 1 << 7
    SampleRejected = 1 << 8
    DataAvailable = 1 << 10
    LivelinessLost = 1 << 11
    LivelinessChanged = 1 << 12
    PublicationMatched = 1 << 13
    SubscriptionMatched = 1 << 14
    All = (1 << 15) - 1


def _qos_dict(*qs: _t.Optional[Qos]) -> _t.Optional[dict]:
    out: dict = {}
    for q in qs:
        if q is None:
            continue
        if not isinstance(q, Qos):
            raise TypeError(f"qos must be a halyard.Qos, not {type(q).__name__}")
        out.update(q._native())
    return out or None


class DomainParticipant:
    """A participant in DDS domain ``domain_id``."""

    def __init__(self, domain_id: int = 0) -> None:
        self._native = _native.Participant(int(domain_id))

    @property
    def domain_id(self) -> int:
        """The domain id."""
        return self._native.domain_id


class Topic(_t.Generic[T]):
    """Topic ``name`` of IDL class ``data_type`` (a :class:`halyard.idl.IdlStruct`)."""

    def __init__(self, participant: DomainParticipant, name: str, data_type: _t.Type[T],
                 qos: _t.Optional[Qos] = None) -> None:
        self.participant = participant
        self.data_type = data_type
        self.qos = qos
        self._ts = type_support(data_type)
        self._native = _native.NativeTopic(participant._native, name, self._ts)

    @property
    def name(self) -> str:
        """The topic name."""
        return self._native.name

    @property
    def typename(self) -> str:
        """The registered type name."""
        return self._native.type_name


class ContentFilteredTopic(Topic[T]):
    """Topic ``name`` of the samples of ``topic`` that ``expression`` accepts: a DDS SQL
    condition on the sample's members (DDS 1.4 Annex B, ``%n`` for ``parameters[n]``),
    evaluated by Halyard's filter language. Its readers see only those samples and announce
    the filter, so writers that apply it do not send them the others. A bad expression raises
    :class:`BadParameterError` naming the offending token."""

    def __init__(self, participant: DomainParticipant, name: str, topic: Topic[T],
                 expression: str, parameters: _t.Sequence[str] = ()) -> None:
        self.participant = participant
        self.data_type = topic.data_type
        self.qos = topic.qos
        self.related_topic = topic
        self._ts = topic._ts
        self._native = _native.NativeTopic.content_filtered(
            participant._native, name, topic._native, expression, [str(p) for p in parameters])

    @property
    def expression(self) -> str:
        """The filter expression."""
        return self._native.filter_expression or ""

    @property
    def parameters(self) -> _t.List[str]:
        """The values of ``%0``, ``%1``, ..."""
        return self._native.expression_parameters

    def set_parameters(self, parameters: _t.Sequence[str]) -> None:
        """Replaces the parameters; its readers filter with them from now on."""
        self._native.set_expression_parameters([str(p) for p in parameters])


class Publisher:
    """A publisher (PARTITION and PRESENTATION of its writers)."""

    def __init__(self, participant: DomainParticipant, qos: _t.Optional[Qos] = None) -> None:
        self.participant = participant
        self._native = _native.NativePublisher(participant._native, _qos_dict(qos))


class Subscriber:
    """A subscriber (PARTITION and PRESENTATION of its readers)."""

    def __init__(self, participant: DomainParticipant, qos: _t.Optional[Qos] = None) -> None:
        self.participant = participant
        self._native = _native.NativeSubscriber(participant._native, _qos_dict(qos))


class Listener:
    """Callbacks of a reader or writer: pass callables by name
    (``Listener(on_data_available=f)``) or subclass and override. Each gets the entity, then
    the status: ``on_data_available(reader)``, ``on_subscription_matched(reader, status)``,
    ``on_publication_matched(writer, status)``, ``on_liveliness_changed(reader, status)``,
    ``on_sample_lost(reader, total)``, ``on_sample_rejected(reader, total)``,
    ``on_requested_incompatible_qos(reader, total)``, ``on_offered_incompatible_qos(writer,
    total)``, ``on_requested_deadline_missed(reader, total)``,
    ``on_offered_deadline_missed(writer, total)``, ``on_liveliness_lost(writer, total)``.
    Statuses are dicts (``total_count``, ``current_count`` ...). They run on Halyard's
    threads; an exception in one goes to ``sys.unraisablehook``."""

    _NAMES = (
        "on_data_available", "on_subscription_matched", "on_publication_matched",
        "on_liveliness_changed", "on_sample_lost", "on_sample_rejected",
        "on_requested_incompatible_qos", "on_offered_incompatible_qos",
        "on_requested_deadline_missed", "on_offered_deadline_missed", "on_liveliness_lost",
    )

    def __init__(self, **callbacks: _t.Callable[..., None]) -> None:
        for k, f in callbacks.items():
            if k not in self._NAMES:
                raise TypeError(f"unknown listener callback {k!r}")
            setattr(self, k, f)


class _Bound:
    """Calls a :class:`Listener`'s methods with the entity (held weakly) first."""

    def __init__(self, listener: Listener) -> None:
        self._l = listener
        self._entity: _t.Optional[weakref.ref] = None
        for name in Listener._NAMES:
            f = getattr(listener, name, None)
            if f is not None:
                setattr(self, name, self._make(f, name == "on_data_available"))

    def _make(self, f: _t.Callable[..., None], no_status: bool) -> _t.Callable[[_t.Any], None]:
        def call(status: _t.Any) -> None:
            e = self._entity() if self._entity is not None else None
            if e is None:
                return
            if no_status:
                f(e)
            else:
                f(e, status)
        return call


class DataWriter(_t.Generic[T]):
    """Writes samples of a topic. ``publisher_or_participant``: a :class:`Publisher`, or a
    participant (a default publisher is made)."""

    def __init__(self, publisher_or_participant: _t.Union[Publisher, DomainParticipant],
                 topic: Topic[T], qos: _t.Optional[Qos] = None,
                 listener: _t.Optional[Listener] = None) -> None:
        pub = publisher_or_participant
        if isinstance(pub, DomainParticipant):
            pub = Publisher(pub)
        self.publisher = pub
        self.topic = topic
        bound = _Bound(listener) if listener is not None else None
        if bound is not None:
            # Set before creation: a local match is reported while the writer is created.
            bound._entity = weakref.ref(self)
        xcdr2 = bool(getattr(topic.data_type, "__idl_annotations__", {}).get("xcdrv2", False))
        self._native = _native.NativeWriter(pub._native, topic._native, _qos_dict(topic.qos, qos),
                                            bound, _extensible(topic) or xcdr2)

    def write(self, sample: T, timestamp: _t.Optional[int] = None) -> None:
        """Writes ``sample`` (``timestamp``: source timestamp, ns since the epoch)."""
        self._native.write(sample, timestamp)

    def write_w_timestamp(self, sample: T, timestamp: int) -> None:
        """Writes with an explicit source timestamp (ns since the epoch)."""
        self._native.write(sample, timestamp)

    def dispose(self, sample: T) -> None:
        """Disposes the instance of ``sample`` (its key members)."""
        self._native.dispose(sample)

    def unregister_instance(self, sample: T) -> None:
        """Unregisters the instance of ``sample``."""
        self._native.unregister_instance(sample)

    def lookup_instance(self, sample: T) -> bytes:
        """The instance handle (16-byte key hash) of ``sample``."""
        return self._native.lookup_instance(sample)

    def wait_for_matched(self, n: int = 1, timeout: _t.Optional[float] = None) -> None:
        """Waits until ``n`` readers matched (raises DDSTimeoutError)."""
        self._native.wait_for_matched(n, timeout)

    def wait_for_acknowledgments(self, timeout: _t.Optional[float] = None) -> None:
        """Waits until reliable readers acknowledged everything (raises DDSTimeoutError)."""
        self._native.wait_for_acknowledgments(timeout)

    def get_publication_matched_status(self) -> dict:
        """PUBLICATION_MATCHED: total_count, current_count, last_handle."""
        return self._native.publication_matched_status()

    def delivery_report(self) -> _t.List[dict]:
        """What the writer knows of each reader's reception: the readers matched now, then the
        last ones that left, as they stood then. Each a dict: ``reader`` (GUID bytes),
        ``matched``, ``durability_service``, ``reception`` ("acknowledged", "unknown" for a
        best-effort reader, "local"), and for "acknowledged" the ``acknowledged`` and ``owed``
        change counts (``None`` otherwise)."""
        return self._native.delivery_report()


def _extensible(topic: Topic) -> bool:
    ext = getattr(topic.data_type, "__idl_annotations__", {}).get("extensibility")
    return ext in ("appendable", "mutable")


#: How many instances a reader remembers the last sample of (for InvalidSample.key).
_LAST_MAX = 4096


class InvalidSample:
    """A dispose/unregister notice from ``take``/``read``: ``sample_info.valid_data`` is
    False; ``key`` is the last valid sample this reader returned for the instance (its key
    members identify it), or None if it returned none (of the last 4096 instances seen)."""

    def __init__(self, key: _t.Any, sample_info: _native.SampleInfo) -> None:
        self.key = key
        self.sample_info = sample_info

    def __repr__(self) -> str:
        return f"InvalidSample({self.key!r}, {self.sample_info!r})"


class DataReader(_t.Generic[T]):
    """Reads samples of a topic. ``subscriber_or_participant``: a :class:`Subscriber`, or a
    participant (a default subscriber is made)."""

    def __init__(self, subscriber_or_participant: _t.Union[Subscriber, DomainParticipant],
                 topic: Topic[T], qos: _t.Optional[Qos] = None,
                 listener: _t.Optional[Listener] = None) -> None:
        sub = subscriber_or_participant
        if isinstance(sub, DomainParticipant):
            sub = Subscriber(sub)
        self.subscriber = sub
        self.topic = topic
        bound = _Bound(listener) if listener is not None else None
        if bound is not None:
            bound._entity = weakref.ref(self)
        self._native = _native.NativeReader(sub._native, topic._native, _qos_dict(topic.qos, qos), bound)
        self._keyed = topic._ts.has_key
        self._last: _t.Dict[bytes, _t.Any] = {}

    def _collect(self, n: int, take: bool, condition: _t.Optional["ReadCondition"]) -> _t.List[_t.Any]:
        nc = condition._native if condition is not None else None
        out = []
        keys = self._last
        for data, info, key in self._native.collect(n, take, nc):
            if data is None:
                if key is None:
                    key = keys.get(info.instance_handle)
                out.append(InvalidSample(key, info))
            else:
                data.sample_info = info
                if self._keyed:
                    if len(keys) >= _LAST_MAX:
                        keys.pop(next(iter(keys)))
                    keys[info.instance_handle] = data
                out.append(data)
        return out

    def take(self, N: int = 1, condition: _t.Optional["ReadCondition"] = None) -> _t.List[T]:
        """Removes and returns up to ``N`` samples, each with ``sample_info`` (dispose and
        unregister notices are :class:`InvalidSample`)."""
        return self._collect(N, True, condition)

    def read(self, N: int = 1, condition: _t.Optional["ReadCondition"] = None) -> _t.List[T]:
        """Returns up to ``N`` samples, leaving them in the cache (marked READ)."""
        return self._collect(N, False, condition)

    def take_with_info(self, N: int = 1) -> _t.List[_t.Tuple[_t.Optional[T], _native.SampleInfo]]:
        """Removes and returns up to ``N`` (sample or None, SampleInfo) pairs (no attribute is
        set on the samples: the fastest way to take)."""
        return [(d, i) for d, i, _ in self._native.collect(N, True, None)]

    def take_iter(self, timeout: _t.Optional[float] = None) -> _t.Iterator[_t.Any]:
        """Yields samples (and :class:`InvalidSample` notices) as they arrive, until
        ``timeout`` seconds pass without any (None: forever)."""
        while self.wait_for_data(timeout):
            got = self.take(256)
            if not got:
                return
            yield from got

    def wait_for_data(self, timeout: _t.Optional[float] = None) -> bool:
        """Waits until data is available; True if it is."""
        return self._native.wait_for_data(timeout)

    def wait_for_matched(self, n: int = 1, timeout: _t.Optional[float] = None) -> None:
        """Waits until ``n`` writers matched (raises DDSTimeoutError)."""
        self._native.wait_for_matched(n, timeout)

    def get_subscription_matched_status(self) -> dict:
        """SUBSCRIPTION_MATCHED: total_count, current_count, last_handle."""
        return self._native.subscription_matched_status()

    def lookup_instance(self, sample: T) -> bytes:
        """The instance handle (16-byte key hash) of ``sample``."""
        return self._native.lookup_instance(sample)


class ReadCondition:
    """Triggers while ``reader`` holds samples in the given states (bit masks of
    :class:`SampleState`, :class:`ViewState`, :class:`InstanceState`; 0 = any)."""

    def __init__(self, reader: DataReader, sample_states: int = 0, view_states: int = 0,
                 instance_states: int = 0) -> None:
        self.reader = reader
        self._native = reader._native.read_condition(sample_states, view_states, instance_states)

    @property
    def triggered(self) -> bool:
        """The trigger value."""
        return self._native.trigger_value()


class QueryCondition(ReadCondition):
    """A :class:`ReadCondition` whose data samples must also pass ``expression``: a DDS SQL
    condition on the sample's members (DDS 1.4 Annex B: ``"x > %0 AND name LIKE 'a%'"``,
    ``%n`` for ``parameters[n]``), which may end with (or be only) ``ORDER BY`` members, to
    read and take through it sorted by them. The same filter language as Halyard's Rust API;
    a bad expression raises :class:`BadParameterError` naming the offending token."""

    def __init__(self, reader: DataReader, expression: str,
                 parameters: _t.Sequence[str] = (), sample_states: int = 0,
                 view_states: int = 0, instance_states: int = 0) -> None:
        self.reader = reader
        self._native = reader._native.query_condition(
            expression, [str(p) for p in parameters], sample_states, view_states,
            instance_states)

    @property
    def expression(self) -> str:
        """The query expression, as given."""
        return self._native.query_expression() or ""

    def set_parameters(self, parameters: _t.Sequence[str]) -> None:
        """Replaces the values of ``%0``, ``%1``, ..."""
        self._native.set_query_parameters([str(p) for p in parameters])


class StatusCondition:
    """Triggers when an enabled status of ``entity`` (a DataReader or DataWriter) changes."""

    def __init__(self, entity: _t.Union[DataReader, DataWriter], mask: int = StatusMask.All) -> None:
        self.entity = entity
        self._native = entity._native.status_condition()
        self._native.set_enabled_statuses(mask)

    def set_enabled_statuses(self, mask: int) -> None:
        """Sets the statuses (:class:`StatusMask` bits) that trigger it."""
        self._native.set_enabled_statuses(mask)

    @property
    def triggered(self) -> bool:
        """The trigger value."""
        return self._native.trigger_value()


class GuardCondition:
    """A condition the application triggers."""

    def __init__(self) -> None:
        self._native = _native.NativeGuardCondition()

    def set(self, value: bool = True) -> None:
        """Triggers (or resets) it."""
        self._native.set_trigger_value(value)

    @property
    def triggered(self) -> bool:
        """The trigger value."""
        return self._native.trigger_value()


_Cond = _t.Union[ReadCondition, StatusCondition, GuardCondition]


class WaitSet:
    """Waits for conditions (``participant`` is accepted for cyclonedds compatibility)."""

    def __init__(self, participant: _t.Optional[DomainParticipant] = None) -> None:
        self._native = _native.NativeWaitSet()
        self._conds: _t.List[_Cond] = []

    def attach(self, condition: _Cond) -> None:
        """Attaches a condition."""
        self._native.attach(condition._native)
        self._conds.append(condition)

    def detach(self, condition: _Cond) -> None:
        """Detaches a condition."""
        self._native.detach(condition._native)
        self._conds = [c for c in self._conds if c is not condition]

    def wait(self, timeout: _t.Optional[float] = None) -> _t.List[_Cond]:
        """Waits up to ``timeout`` seconds (None: forever); returns the triggered conditions
        (empty on timeout)."""
        return [self._conds[i] for i in self._native.wait(timeout) if i < len(self._conds)]
