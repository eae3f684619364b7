"""Halyard: an OMG DDS implementation, from Python.

The API follows the ``cyclonedds`` package's shape::

    import halyard
    from halyard.idl import IdlStruct

    class Msg(IdlStruct, typename="Msg"):
        id: int
        text: str

    dp = halyard.DomainParticipant(0)
    topic = halyard.Topic(dp, "Hello", Msg)
    writer = halyard.DataWriter(dp, topic)
    reader = halyard.DataReader(dp, topic)
    writer.write(Msg(1, "hi"))
    for sample in reader.take(10):
        print(sample, sample.sample_info)

Errors are :class:`DDSError` subclasses whose message says what went wrong.
"""

from ._native import (
    AlreadyDeletedError,
    BadParameterError,
    DDSError,
    DDSTimeoutError,
    OutOfResourcesError,
    PreconditionNotMetError,
    QosError,
    SampleInfo,
    SampleTypeError,
    SerializationError,
    TransportError,
    UnsupportedError,
)
from .core import (
    ContentFilteredTopic,
    DataReader,
    DataWriter,
    DomainParticipant,
    GuardCondition,
    InstanceState,
    InvalidSample,
    Listener,
    Publisher,
    QueryCondition,
    ReadCondition,
    SampleState,
    StatusCondition,
    StatusMask,
    Subscriber,
    Topic,
    ViewState,
    WaitSet,
)
from .qos import Policy, Qos, duration

__all__ = [
    "AlreadyDeletedError", "BadParameterError", "DDSError", "DDSTimeoutError",
    "OutOfResourcesError", "PreconditionNotMetError", "QosError", "SampleInfo", "SampleTypeError",
    "SerializationError", "TransportError", "UnsupportedError", "ContentFilteredTopic",
    "DataReader", "DataWriter",
    "DomainParticipant", "GuardCondition", "InstanceState", "InvalidSample", "Listener",
    "Publisher", "QueryCondition", "ReadCondition", "SampleState", "StatusCondition",
    "StatusMask", "Subscriber",
    "Topic", "ViewState", "WaitSet", "Policy", "Qos", "duration",
]
__version__ = "0.1.0"
