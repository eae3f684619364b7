//! Content filters in discovery: local readers announce theirs in SEDP
//! (PID_CONTENT_FILTER_PROPERTY), and local writers compile the filters of the readers they
//! match, remote or local, to apply them on their side (see `crate::writer`'s `filter` module
//! for how a writer sends what a filter rejects).

use crate::participant::Participant;
use crate::reader::ReaderSpec;
use crate::time::Instant;
use crate::writer::{FilterCompiler, WriteError};
use crate::QosChangeError;
use halyard_wire::discovery::ContentFilterProperty;
use halyard_wire::{EntityId, Guid};

impl Participant {
    /// Creates a local DataReader that announces `filter` (a reader of a content-filtered
    /// topic), announces it by SEDP and matches it. Writers that can apply the filter send it
    /// only the samples the filter accepts.
    pub fn create_reader_filtered(
        &mut self,
        now: Instant,
        spec: ReaderSpec,
        filter: Option<ContentFilterProperty>,
    ) -> EntityId {
        let id = self.create_reader_disabled(now, spec, filter);
        self.enable_reader(now, id);
        id
    }

    /// Changes the content filter local reader `id` announces (new expression parameters,
    /// say): it is announced again by SEDP, so remote writers filter with it, and local
    /// writers filter with it at once.
    pub fn set_reader_content_filter(
        &mut self,
        now: Instant,
        id: EntityId,
        filter: Option<ContentFilterProperty>,
    ) -> Result<(), QosChangeError> {
        let r = self
            .readers
            .get_mut(&id)
            .filter(|_| !id.is_builtin())
            .ok_or(QosChangeError::UnknownEndpoint)?;
        if r.content_filter == filter {
            return Ok(());
        }
        r.content_filter = filter;
        self.announce_reader(now, id);
        let writers: Vec<EntityId> = self
            .local_matches
            .iter()
            .filter(|(_, rs)| rs.contains(&id))
            .map(|(w, _)| *w)
            .collect();
        for w in writers {
            self.refresh_local_filter(w, id);
        }
        Ok(())
    }

    /// Gives local writer `writer` the compiler of its readers' content filters (`None`: it
    /// applies none), and compiles the filters of the readers it is matched with.
    pub fn set_writer_filter_compiler(
        &mut self,
        writer: EntityId,
        compiler: Option<FilterCompiler>,
    ) -> Result<(), WriteError> {
        let w = self
            .writers
            .get_mut(&writer)
            .filter(|_| !writer.is_builtin())
            .ok_or(WriteError::UnknownWriter)?;
        w.set_filter_compiler(compiler);
        let remote: Vec<Guid> = w.proxies.keys().copied().collect();
        for r in remote {
            self.refresh_remote_filter(writer, r);
        }
        for r in self.local_matches.get(&writer).cloned().unwrap_or_default() {
            self.refresh_local_filter(writer, r);
        }
        Ok(())
    }

    /// True once every participant with a writer matched to local reader `reader` has
    /// acknowledged the reader's latest SEDP announcement. A Halyard participant takes in an
    /// announcement before it acknowledges it, so from then on its writers filter with what
    /// the reader announced (after [`Participant::set_reader_content_filter`], say).
    pub fn reader_announcement_acknowledged(&self, reader: EntityId) -> bool {
        let Some(r) = self.readers.get(&reader) else {
            return true;
        };
        let sedp_writer = self.sedp_writer_for(reader, false);
        let detector_id = if sedp_writer == EntityId::SEDP_SUBSCRIPTIONS_WRITER {
            EntityId::SEDP_SUBSCRIPTIONS_READER
        } else {
            EntityId::SEDP_SUBSCRIPTIONS_SECURE_READER
        };
        let (Some(sn), Some(sedp)) = (r.announced_sn, self.writers.get(&sedp_writer)) else {
            return true;
        };
        r.proxies.keys().all(|w| {
            let detector = Guid::new(w.prefix, detector_id);
            sedp.proxies
                .get(&detector)
                .is_none_or(|p| p.acked_below > sn)
        })
    }

    /// Samples `writer` did not send to a reader because that reader's filter rejected them
    /// (counted once per sample and reader, repairs and local readers included).
    pub fn writer_filtered_out(&self, writer: EntityId) -> u64 {
        self.writers.get(&writer).map_or(0, |w| w.filtered_out())
    }

    /// Brings the filters `writer` applies for remote reader `reader`, content and time, in
    /// line with the reader's latest announcement.
    pub(crate) fn refresh_remote_filter(&mut self, writer: EntityId, reader: Guid) {
        let Some(ed) = self.remote_readers.get(&reader) else {
            return;
        };
        let separation = self.time_filter_of(ed);
        let announced = ed.content_filter.as_ref();
        if let Some(w) = self.writers.get_mut(&writer) {
            w.refresh_proxy_filter(&reader, announced);
            w.refresh_proxy_time_filter(&reader, separation);
        }
    }

    /// Samples `writer` did not send to a remote Halyard reader because that reader's
    /// TIME_BASED_FILTER would have dropped them (counted once per sample and reader; see
    /// `crate::writer`'s `time_filter` module).
    pub fn writer_time_filtered_out(&self, writer: EntityId) -> u64 {
        self.writers
            .get(&writer)
            .map_or(0, |w| w.time_filtered_out())
    }

    /// Brings the filter `writer` applies for local reader `reader` in line with the reader's.
    pub(crate) fn refresh_local_filter(&mut self, writer: EntityId, reader: EntityId) {
        let announced = self
            .readers
            .get(&reader)
            .and_then(|r| r.content_filter.as_ref());
        if let Some(w) = self.writers.get_mut(&writer) {
            w.refresh_local_filter(reader, announced);
        }
    }
}
