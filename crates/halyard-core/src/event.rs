//! What the core reports to the layer above: discovery, matching, QoS and reliability events,
//! and received samples.

use halyard_wire::discovery::{EndpointData, ParticipantData};
use halyard_wire::{EntityId, Guid, GuidPrefix, SequenceNumber, Time};

/// DDS QosPolicyId_t values (DDS 1.4 §2.3.3, DDS-XTypes 1.3 §7.6.3): which policy an
/// incompatible-QoS event or a refused QoS value is about.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[non_exhaustive]
pub enum QosPolicyId {
    /// USER_DATA (1)
    UserData = 1,
    /// DURABILITY (2)
    Durability = 2,
    /// PRESENTATION (3)
    Presentation = 3,
    /// DEADLINE (4)
    Deadline = 4,
    /// LATENCY_BUDGET (5)
    LatencyBudget = 5,
    /// OWNERSHIP (6)
    Ownership = 6,
    /// OWNERSHIP_STRENGTH (7)
    OwnershipStrength = 7,
    /// LIVELINESS (8)
    Liveliness = 8,
    /// TIME_BASED_FILTER (9)
    TimeBasedFilter = 9,
    /// PARTITION (10)
    Partition = 10,
    /// RELIABILITY (11)
    Reliability = 11,
    /// DESTINATION_ORDER (12)
    DestinationOrder = 12,
    /// HISTORY (13)
    History = 13,
    /// RESOURCE_LIMITS (14)
    ResourceLimits = 14,
    /// ENTITY_FACTORY (15)
    EntityFactory = 15,
    /// WRITER_DATA_LIFECYCLE (16)
    WriterDataLifecycle = 16,
    /// READER_DATA_LIFECYCLE (17)
    ReaderDataLifecycle = 17,
    /// TOPIC_DATA (18)
    TopicData = 18,
    /// GROUP_DATA (19)
    GroupData = 19,
    /// TRANSPORT_PRIORITY (20)
    TransportPriority = 20,
    /// LIFESPAN (21)
    Lifespan = 21,
    /// DURABILITY_SERVICE (22)
    DurabilityService = 22,
    /// DATA_REPRESENTATION (23)
    DataRepresentation = 23,
    /// TYPE_CONSISTENCY_ENFORCEMENT (24, DDS-XTypes 1.3 §7.6.3.4): the reader's type is not
    /// assignable from the writer's (Cyclone DDS reports a type mismatch under this id too).
    TypeConsistencyEnforcement = 24,
}

impl QosPolicyId {
    /// The policy's name as DDS writes it (`RELIABILITY`, `DATA_REPRESENTATION`, ...).
    pub fn name(self) -> &'static str {
        match self {
            QosPolicyId::UserData => "USER_DATA",
            QosPolicyId::Durability => "DURABILITY",
            QosPolicyId::Presentation => "PRESENTATION",
            QosPolicyId::Deadline => "DEADLINE",
            QosPolicyId::LatencyBudget => "LATENCY_BUDGET",
            QosPolicyId::Ownership => "OWNERSHIP",
            QosPolicyId::OwnershipStrength => "OWNERSHIP_STRENGTH",
            QosPolicyId::Liveliness => "LIVELINESS",
            QosPolicyId::TimeBasedFilter => "TIME_BASED_FILTER",
            QosPolicyId::Partition => "PARTITION",
            QosPolicyId::Reliability => "RELIABILITY",
            QosPolicyId::DestinationOrder => "DESTINATION_ORDER",
            QosPolicyId::History => "HISTORY",
            QosPolicyId::ResourceLimits => "RESOURCE_LIMITS",
            QosPolicyId::EntityFactory => "ENTITY_FACTORY",
            QosPolicyId::WriterDataLifecycle => "WRITER_DATA_LIFECYCLE",
            QosPolicyId::ReaderDataLifecycle => "READER_DATA_LIFECYCLE",
            QosPolicyId::TopicData => "TOPIC_DATA",
            QosPolicyId::GroupData => "GROUP_DATA",
            QosPolicyId::TransportPriority => "TRANSPORT_PRIORITY",
            QosPolicyId::Lifespan => "LIFESPAN",
            QosPolicyId::DurabilityService => "DURABILITY_SERVICE",
            QosPolicyId::DataRepresentation => "DATA_REPRESENTATION",
            QosPolicyId::TypeConsistencyEnforcement => "TYPE_CONSISTENCY_ENFORCEMENT",
        }
    }
}

impl std::fmt::Display for QosPolicyId {
    /// The policy's DDS name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of a change (RTPS 2.5 §8.2.1.2 ChangeKind_t).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ChangeKind {
    /// A new value for the instance.
    Alive,
    /// The instance was disposed.
    Disposed,
    /// The writer unregistered the instance.
    Unregistered,
    /// Disposed and unregistered at once.
    DisposedUnregistered,
}

impl ChangeKind {
    /// From PID_STATUS_INFO flags.
    pub fn from_status_info(flags: u32) -> ChangeKind {
        match flags & 3 {
            0 => ChangeKind::Alive,
            1 => ChangeKind::Disposed,
            2 => ChangeKind::Unregistered,
            _ => ChangeKind::DisposedUnregistered,
        }
    }
    /// To PID_STATUS_INFO flags.
    pub fn status_info(self) -> u32 {
        match self {
            ChangeKind::Alive => 0,
            ChangeKind::Disposed => 1,
            ChangeKind::Unregistered => 2,
            ChangeKind::DisposedUnregistered => 3,
        }
    }
}

/// A sample delivered to a local reader, in order per writer for reliable readers.
#[derive(Clone, Debug)]
pub struct ReceivedSample {
    /// The local reader.
    pub reader: EntityId,
    /// The remote (or local) writer.
    pub writer: Guid,
    /// Its sequence number.
    pub sn: SequenceNumber,
    /// Alive, disposed or unregistered.
    pub kind: ChangeKind,
    /// PID_KEY_HASH if the writer sent one.
    pub key_hash: Option<[u8; 16]>,
    /// Serialized data (Alive) or serialized key (otherwise; may be empty), with the
    /// encapsulation header. Shared, not copied, when a local writer delivers to local
    /// readers.
    pub payload: std::sync::Arc<Vec<u8>>,
    /// INFO_TS in force when the sample arrived.
    pub source_timestamp: Option<Time>,
    /// When the sample expires (its source timestamp plus its writer's LIFESPAN), if the
    /// writer's lifespan is finite. The application's cache drops it then.
    pub lifespan_expiry: Option<Time>,
    /// Its place in a GROUP coherent set while the core holds it (always `None` once
    /// polled).
    pub group: Option<crate::group_coherent::GroupMark>,
    /// Its publisher and group sequence number (PID_GROUP_SEQ_NUM), when the reader's
    /// subscriber and the writer's publisher have GROUP ordered access: the order the
    /// publisher made its changes in, across its writers.
    pub group_seq: Option<(Guid, SequenceNumber)>,
    /// The original writer and sequence number of a relayed sample (a durability service's:
    /// PID_ORIGINAL_WRITER_INFO); `None` for a sample from its own writer.
    pub original: Option<(Guid, SequenceNumber)>,
}

/// An event for the API layer.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Event {
    /// A remote participant was discovered (or its data changed).
    ParticipantDiscovered(Box<ParticipantData>),
    /// A remote participant's lease expired or it said goodbye.
    ParticipantLost(GuidPrefix),
    /// The security plugin authenticated a remote participant (its endpoints are now
    /// discovered and matched).
    ParticipantAuthenticated(GuidPrefix),
    /// The security plugin's access control refused a remote endpoint (its participant's
    /// permissions do not grant its topic or partitions): it is not matched.
    EndpointRefused {
        /// The endpoint.
        guid: Guid,
        /// Why.
        reason: String,
    },
    /// The security plugin refused a remote participant: nothing is exchanged with it.
    ParticipantRefused {
        /// The participant.
        prefix: GuidPrefix,
        /// Why (an invalid identity, a failed handshake, no permission).
        reason: String,
    },
    /// The security plugin refused something a remote participant sent (a handshake message
    /// that failed validation, say); the exchange may still complete with a later message.
    SecurityNotice {
        /// The participant.
        prefix: GuidPrefix,
        /// What was refused, and why.
        what: String,
    },
    /// Something about a remote participant the user must be told even without a security
    /// log: it does not accept our identity (our handshake stays unanswered while it lives),
    /// or its identity does not verify against ours. At most one per remote participant.
    SecurityWarning {
        /// The participant.
        prefix: GuidPrefix,
        /// What happened, who the participant is, and the likely cause.
        what: String,
    },
    /// A remote DataWriter was discovered.
    PublicationDiscovered(Box<EndpointData>),
    /// A remote DataWriter is gone.
    PublicationLost(Guid),
    /// A remote DataReader was discovered.
    SubscriptionDiscovered(Box<EndpointData>),
    /// A remote DataReader is gone.
    SubscriptionLost(Guid),
    /// A local writer matched (`matched = true`) or unmatched a reader.
    PublicationMatched {
        /// Local writer.
        writer: EntityId,
        /// The reader.
        reader: Guid,
        /// Matched or unmatched.
        matched: bool,
    },
    /// A local reader matched or unmatched a writer.
    SubscriptionMatched {
        /// Local reader.
        reader: EntityId,
        /// The writer.
        writer: Guid,
        /// Matched or unmatched.
        matched: bool,
    },
    /// A local writer offers QoS a discovered reader on its topic cannot accept.
    OfferedIncompatibleQos {
        /// Local writer.
        writer: EntityId,
        /// Remote reader.
        reader: Guid,
        /// First incompatible policy.
        policy: QosPolicyId,
    },
    /// A local reader requests QoS a discovered writer on its topic does not offer.
    RequestedIncompatibleQos {
        /// Local reader.
        reader: EntityId,
        /// Remote writer.
        writer: Guid,
        /// First incompatible policy.
        policy: QosPolicyId,
    },
    /// Samples of a writer that a reader will never receive.
    SampleLost {
        /// Local reader.
        reader: EntityId,
        /// The writer.
        writer: Guid,
        /// How many.
        count: u64,
    },
    /// A matched writer of a local reader became alive or not alive (its participant's lease).
    LivelinessChanged {
        /// Local reader.
        reader: EntityId,
        /// The writer.
        writer: Guid,
        /// Alive now?
        alive: bool,
    },
    /// An instance a local reader reads got no data within the reader's DEADLINE period
    /// (reported once per missed period).
    RequestedDeadlineMissed {
        /// Local reader.
        reader: EntityId,
        /// The instance's key hash.
        instance: [u8; 16],
    },
    /// A local writer did not write an instance within its DEADLINE period (once per missed
    /// period).
    OfferedDeadlineMissed {
        /// Local writer.
        writer: EntityId,
        /// The instance's key hash.
        instance: [u8; 16],
    },
    /// A local writer with a MANUAL liveliness kind did not assert its liveliness within its
    /// lease (reported once per loss).
    LivelinessLost {
        /// Local writer.
        writer: EntityId,
    },
    /// Acknowledgments advanced for a local writer (blocked writes may proceed).
    WriterAcknowledged {
        /// Local writer.
        writer: EntityId,
    },
    /// A local reader's matched durability-service relay is gone or lost its liveliness:
    /// the instances it delivered are no longer written by it. For the reader's cache only:
    /// a relay is no peer of the application, and no status reports it (see the `relay`
    /// module's "Out of sight").
    RelayGone {
        /// Local reader.
        reader: EntityId,
        /// The relay.
        writer: Guid,
    },
    /// A relay that releases its payloads has readers waiting for some of them: take them
    /// with [`crate::Participant::take_wanted_payloads`] and hand them back with
    /// [`crate::Participant::restore_payloads`] (reported once until they are all taken).
    PayloadsWanted {
        /// Local relay writer.
        writer: EntityId,
    },
    /// A reader matches a relay whose history the driver holds back
    /// ([`crate::Participant::defer_relay_history`]): write that history to the relay, then
    /// call [`crate::Participant::complete_relay_history`], which matches the readers waiting
    /// (reported when the first reader waits, and again each second while readers still
    /// wait).
    RelayHistoryWanted {
        /// Local relay writer.
        writer: EntityId,
    },
}
