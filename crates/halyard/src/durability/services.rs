//! What a writer knows of the durability services that store its samples.
//!
//! A service's reader is no peer of the application (its matched status does not count it,
//! see `halyard_core`'s relay module, "Out of sight"), but a TRANSIENT or PERSISTENT writer
//! may need to know that its samples are stored before it goes: `halyard pub` waits for it,
//! and so may any short-lived writer. [`DataWriter::durability_services`] lists the services'
//! readers a writer matched, and [`DataWriter::wait_for_stored`] waits until some service
//! outside the writer's own process stored everything written so far.

use crate::error::{Error, Result};
use crate::status::InstanceHandle;
use crate::writer::DataWriter;
use std::time::Duration;

/// A durability service's reader that a writer matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServiceMatch {
    /// The service's reader.
    pub reader: InstanceHandle,
    /// It is the writer's participant's embedded service's: it lives as long as this process
    /// (a TRANSIENT sample it holds is gone when the process is; a PERSISTENT one stays in
    /// its store file, served by the next service that opens the file).
    pub embedded: bool,
    /// It showed it matched the writer too (an acknowledgment; samples written from now on
    /// reach it).
    pub synced: bool,
    /// It stored every sample written so far (it acknowledged them: a service acknowledges
    /// only what it committed).
    pub stored_all: bool,
}

impl<T> DataWriter<T> {
    /// The durability services' readers this writer matched: one per service and durability
    /// kind that keeps the writer's topic. They are not counted in the writer's
    /// PUBLICATION_MATCHED status, nor by [`DataWriter::wait_for_matched`];
    /// [`DataWriter::wait_for_acknowledgments`] waits for them as for every reliable reader,
    /// and returns once they stored the samples.
    pub fn durability_services(&self) -> Vec<ServiceMatch> {
        let (participant, id) = self.participant_and_id();
        let st = participant.shared.lock();
        st.core
            .writer_service_readers(id)
            .into_iter()
            .map(|s| ServiceMatch {
                reader: s.reader.into(),
                embedded: s.fed,
                synced: s.synced,
                stored_all: s.stored_all,
            })
            .collect()
    }

    /// Blocks until at least `n` durability services' readers matched this writer (and
    /// showed it: samples written from now on reach them), the embedded service's included,
    /// or `timeout` ([`Error::Timeout`]).
    pub fn wait_for_durability_services(&self, n: u32, timeout: Duration) -> Result<()> {
        let (participant, id) = self.participant_and_id();
        let enough = participant.shared.wait_until(timeout, |st| {
            let synced = st
                .core
                .writer_service_readers(id)
                .iter()
                .filter(|s| s.synced)
                .count();
            synced >= n as usize
        });
        if enough {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }

    /// Blocks until at least `n` durability services' readers that are not this
    /// participant's embedded service's stored every sample written so far, or `timeout`
    /// ([`Error::Timeout`]). Samples such a service stored outlive this process. (A service
    /// whose reader is not matched yet, say one that discovers the writer's topic only now,
    /// is waited for within the timeout.)
    pub fn wait_for_stored(&self, n: u32, timeout: Duration) -> Result<()> {
        let (participant, id) = self.participant_and_id();
        let stored = participant.shared.wait_until(timeout, |st| {
            let stored = st
                .core
                .writer_service_readers(id)
                .iter()
                .filter(|s| !s.fed && s.stored_all)
                .count();
            stored >= n as usize
        });
        if stored {
            Ok(())
        } else {
            Err(Error::Timeout)
        }
    }
}
