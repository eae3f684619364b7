//! The API's error type, mirroring DDS `ReturnCode_t` (DDS 1.4 §2.2.1.1).

use halyard_cdr::CdrError;

/// Errors of the DCPS API.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// DDS Security could not be set up (a missing or invalid identity file, an unsigned or
    /// wrongly signed document, an expired certificate ...): what and why, with the security
    /// plugins' error as its [`source`](std::error::Error::source).
    Security(SecurityError),
    /// RETCODE_NOT_ALLOWED_BY_SECURITY: the participant's permissions do not grant this.
    NotAllowedBySecurity(String),
    /// RETCODE_BAD_PARAMETER / INCONSISTENT_POLICY: a QoS value is invalid.
    BadQos {
        /// The policy.
        policy: crate::qos::QosPolicyId,
        /// Why.
        reason: &'static str,
    },
    /// RETCODE_UNSUPPORTED: a valid value Halyard does not implement yet, or something a
    /// cargo feature of this crate provides that this build has off (then `feature` is that
    /// feature's name: `security`, `durability`, `xml` or `typelookup`).
    Unsupported {
        /// The policy or feature.
        feature: &'static str,
        /// What exactly.
        detail: &'static str,
    },
    /// RETCODE_IMMUTABLE_POLICY: `set_qos` tried to change a policy that is fixed once the
    /// entity exists.
    ImmutablePolicy {
        /// The policy.
        policy: crate::qos::QosPolicyId,
    },
    /// RETCODE_PRECONDITION_NOT_MET: the call is not allowed in the entity's state (e.g.
    /// `end_coherent_changes` without `begin_coherent_changes`).
    PreconditionNotMet(&'static str),
    /// RETCODE_NOT_ENABLED: the entity was created disabled (ENTITY_FACTORY
    /// autoenable_created_entities false) and `enable` was not called yet.
    NotEnabled,
    /// RETCODE_TIMEOUT: a blocking operation ran out of time (e.g. a full KEEP_ALL writer).
    Timeout,
    /// RETCODE_OUT_OF_RESOURCES: a configured limit was reached.
    OutOfResources(&'static str),
    /// RETCODE_BAD_PARAMETER: an argument is invalid.
    BadParameter(&'static str),
    /// RETCODE_BAD_PARAMETER: a topic name is empty, too long or holds a character outside
    /// the topic-name character set (`create_topic` and the other topic constructors; see
    /// [`crate::check_topic_name`]): which character, where.
    BadTopicName(crate::TopicNameError),
    /// RETCODE_BAD_PARAMETER: a filter or query expression does not parse or does not fit
    /// the type (the error says where).
    BadFilter(crate::filter::FilterError),
    /// RETCODE_ALREADY_DELETED: the entity was deleted.
    AlreadyDeleted,
    /// A sample could not be serialized or deserialized.
    Serialization(CdrError),
    /// The network could not be set up.
    Transport(halyard_net::TransportError),
    /// No usable network interface.
    Interface(halyard_net::InterfaceError),
    /// A thread could not be started.
    Thread(std::io::Error),
    /// A durability store could not be opened or used (a file that is not a Halyard store,
    /// a damaged one, a directory that does not exist ...): what, why and which file.
    #[cfg(feature = "durability")]
    Store(halyard_store::StoreError),
    /// RETCODE_BAD_PARAMETER: a topic type's XTypes description (`TopicType::type_description`)
    /// does not decode, its hashes do not match its TypeObjects, or another description is
    /// registered under the same type name (`create_topic`).
    BadTypeDescription(halyard_core::TypeRegistrationError),
    /// RETCODE_BAD_PARAMETER: an environment variable Halyard reads holds a value it does not
    /// accept (e.g. `HALYARD_DURABILITY_SYNC=fast`); nothing was started.
    BadEnvironment {
        /// The variable.
        variable: &'static str,
        /// Its value and what values it takes.
        reason: String,
    },
    /// RETCODE_BAD_PARAMETER: an XML QoS profile document is malformed, holds something
    /// unknown or unsupported, or a profile looked up does not exist
    /// ([`crate::QosProvider`]). `line` and `column` are 1-based; both are 0 when the error
    /// has no place in a file (a file that cannot be read, an unknown profile name).
    BadProfile {
        /// The file (or the origin given to `QosProvider::from_str`).
        file: String,
        /// 1-based line, 0 if none.
        line: u32,
        /// 1-based column (in characters), 0 if none.
        column: u32,
        /// What is wrong and why.
        message: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::BadQos { policy, reason } => write!(f, "invalid {policy} QoS: {reason}"),
            Error::Security(why) => write!(f, "DDS Security: {why}"),
            Error::NotAllowedBySecurity(why) => write!(f, "not allowed by security: {why}"),
            Error::Unsupported { feature, detail } => {
                write!(f, "{feature} is not supported yet: {detail}")
            }
            Error::ImmutablePolicy { policy } => write!(
                f,
                "{policy} QoS cannot be changed once the entity exists (DDS 1.4 §2.2.3)"
            ),
            Error::PreconditionNotMet(what) => write!(f, "precondition not met: {what}"),
            Error::NotEnabled => write!(f, "entity not enabled yet (call enable)"),
            Error::Timeout => write!(f, "timed out"),
            Error::OutOfResources(what) => write!(f, "out of resources: {what}"),
            Error::BadParameter(what) => write!(f, "bad parameter: {what}"),
            Error::BadTopicName(e) => write!(f, "bad topic name: {e}"),
            Error::BadFilter(e) => write!(f, "bad filter expression {e}"),
            Error::AlreadyDeleted => write!(f, "entity already deleted"),
            Error::Serialization(e) => write!(f, "serialization failed: {e}"),
            Error::Transport(e) => write!(f, "transport: {e}"),
            Error::Interface(e) => write!(f, "network interface: {e}"),
            Error::Thread(e) => write!(f, "cannot start a thread: {e}"),
            #[cfg(feature = "durability")]
            Error::Store(e) => write!(f, "durability store: {e}"),
            Error::BadEnvironment { variable, reason } => write!(f, "{variable}: {reason}"),
            Error::BadTypeDescription(e) => write!(f, "bad XTypes type description: {e}"),
            Error::BadProfile {
                file,
                line: 0,
                message,
                ..
            } => write!(f, "{file}: {message}"),
            Error::BadProfile {
                file,
                line,
                column,
                message,
            } => {
                write!(f, "{file}:{line}:{column}: {message}")
            }
        }
    }
}

impl std::error::Error for Error {
    /// The wrapped cause, for every variant that has one (so reports print the whole chain).
    /// Exhaustive: a new variant must say whether it wraps a cause.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Security(e) => Some(e),
            Error::Serialization(e) => Some(e),
            Error::Transport(e) => Some(e),
            Error::Interface(e) => Some(e),
            Error::Thread(e) => Some(e),
            #[cfg(feature = "durability")]
            Error::Store(e) => Some(e),
            Error::BadTopicName(e) => Some(e),
            Error::BadFilter(e) => Some(e),
            Error::BadTypeDescription(e) => Some(e),
            Error::NotAllowedBySecurity(_)
            | Error::BadQos { .. }
            | Error::Unsupported { .. }
            | Error::ImmutablePolicy { .. }
            | Error::PreconditionNotMet(_)
            | Error::NotEnabled
            | Error::Timeout
            | Error::OutOfResources(_)
            | Error::BadParameter(_)
            | Error::AlreadyDeleted
            | Error::BadEnvironment { .. }
            | Error::BadProfile { .. } => None,
        }
    }
}

/// DDS Security could not be set up: what, and the security plugins' error as its source.
#[derive(Debug)]
pub struct SecurityError {
    what: String,
    source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
}

impl SecurityError {
    /// What could not be set up (with its cause's text).
    pub fn what(&self) -> &str {
        &self.what
    }

    /// `what`, caused by `source`.
    #[cfg_attr(not(feature = "security"), allow(dead_code))]
    pub(crate) fn caused_by(
        what: String,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> SecurityError {
        SecurityError {
            what,
            source: Some(Box::new(source)),
        }
    }
}

impl std::fmt::Display for SecurityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for SecurityError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<crate::filter::FilterError> for Error {
    fn from(e: crate::filter::FilterError) -> Self {
        Error::BadFilter(e)
    }
}

impl From<CdrError> for Error {
    fn from(e: CdrError) -> Self {
        Error::Serialization(e)
    }
}

/// Result alias of the API.
pub type Result<T> = std::result::Result<T, Error>;

impl From<halyard_core::QosChangeError> for Error {
    fn from(e: halyard_core::QosChangeError) -> Self {
        match e {
            halyard_core::QosChangeError::UnknownEndpoint => Error::AlreadyDeleted,
            halyard_core::QosChangeError::Immutable(policy) => Error::ImmutablePolicy { policy },
            halyard_core::QosChangeError::NotAllowedBySecurity(why) => {
                Error::NotAllowedBySecurity(why)
            }
        }
    }
}
