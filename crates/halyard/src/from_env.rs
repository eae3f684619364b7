//! The opt-in to configuration by environment variables: [`ParticipantOptions::from_env`].
//!
//! The library takes its configuration in code; nothing else in it reads a `HALYARD_*`
//! variable. The `halyard` tools, the Python package and the tests call `from_env` so that the
//! variables documented there keep working from a shell.

use crate::durability::{EmbeddedDurability, DURABILITY_ENV, DURABILITY_STORE_ENV};
#[cfg(feature = "durability")]
use crate::durability::{DURABILITY_COMMIT_ENV, DURABILITY_SYNC_ENV};
#[cfg(feature = "durability")]
use crate::error::Error;
use crate::error::Result;
use crate::participant::{ParticipantOptions, SECURITY_ENV};
use crate::runtime::SECURITY_LOG_ENV;
use std::path::PathBuf;

/// The environment variable naming the network interface, read by
/// [`ParticipantOptions::from_env`].
pub const INTERFACE_ENV: &str = "HALYARD_INTERFACE";

impl ParticipantOptions {
    /// The default options with what the environment variables below say: the configuration
    /// the `halyard` tools and the Python package use. [`ParticipantOptions::default`] (and so
    /// [`crate::DomainParticipant::new`]) reads none of them.
    ///
    /// | Variable | Sets | Value |
    /// |---|---|---|
    /// | `HALYARD_INTERFACE` | [`interface`](Self::interface) | an interface name (`lo`) or IPv4 address; unset or empty: the first up, multicast-capable, non-loopback interface |
    /// | `HALYARD_SECURITY` | [`security`](Self::security) | the identity directory `DIR/NAME` made by `halyard security init` (cargo feature `security`) |
    /// | `HALYARD_SECURITY_LOG` | [`security_log`](Self::security_log) | set and not `0`: write every DDS Security decision to standard error |
    /// | `HALYARD_DURABILITY` | [`durability`](Self::durability) | `off` (any case): no embedded durability service; otherwise one starts with the participant's first TRANSIENT or PERSISTENT writer |
    /// | `HALYARD_DURABILITY_STORE` | [`durability`](Self::durability) | the embedded service's store file; unset: [`EmbeddedDurability::StateDirectory`] (`$XDG_STATE_HOME/halyard/durability-domain<D>.sqlite`) |
    /// | `HALYARD_DURABILITY_SYNC` | `durability_sync` | `process`, `normal` (the default) or `full` |
    /// | `HALYARD_DURABILITY_COMMIT` | `durability_commit` | `sample`, `batch` (the default), `batch:N[:MS]` or `interval:MS`, as `halyard durability --commit` takes it |
    ///
    /// XML QoS profiles have their own opt-in, `HALYARD_QOS_PROFILES`, read by
    /// [`crate::QosProvider::from_env`].
    ///
    /// A value a variable does not take is [`Error::BadEnvironment`] naming it (the sync level
    /// and commit policy are read only when the embedded service is on, and only with the
    /// cargo feature `durability`, which the embedded service needs).
    pub fn from_env() -> Result<ParticipantOptions> {
        #[cfg_attr(not(feature = "durability"), allow(unused_mut))]
        let mut options = ParticipantOptions {
            interface: std::env::var(INTERFACE_ENV).ok().filter(|s| !s.is_empty()),
            security: std::env::var_os(SECURITY_ENV).map(PathBuf::from),
            security_log: std::env::var_os(SECURITY_LOG_ENV).is_some_and(|v| v != "0"),
            durability: embedded_durability(),
            ..ParticipantOptions::default()
        };
        #[cfg(feature = "durability")]
        if options.durability != EmbeddedDurability::Off {
            options.durability_sync = parsed(DURABILITY_SYNC_ENV)?;
            options.durability_commit = parsed(DURABILITY_COMMIT_ENV)?;
        }
        Ok(options)
    }
}

/// `HALYARD_DURABILITY` and `HALYARD_DURABILITY_STORE`.
fn embedded_durability() -> EmbeddedDurability {
    if std::env::var(DURABILITY_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("off")) {
        return EmbeddedDurability::Off;
    }
    match std::env::var_os(DURABILITY_STORE_ENV) {
        Some(store) => EmbeddedDurability::On {
            store: Some(PathBuf::from(store)),
        },
        None => EmbeddedDurability::StateDirectory,
    }
}

/// Variable `variable` parsed, or the default when it is not set.
#[cfg(feature = "durability")]
fn parsed<T>(variable: &'static str) -> Result<T>
where
    T: std::str::FromStr<Err = String> + Default,
{
    match std::env::var(variable) {
        Err(std::env::VarError::NotPresent) => Ok(T::default()),
        Err(std::env::VarError::NotUnicode(v)) => Err(Error::BadEnvironment {
            variable,
            reason: format!("{v:?} is not UTF-8"),
        }),
        Ok(v) => v
            .parse()
            .map_err(|reason| Error::BadEnvironment { variable, reason }),
    }
}
