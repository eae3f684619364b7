//! The DCPS entity of a content filter: [`ContentFilteredTopic`] (DDS 1.4 §2.2.2.3.3).
//!
//! Design. The filter itself ([`Filter`]) is plain data shared behind a lock by the topic
//! and the serialized-sample tests of its readers, so new parameters apply to every reader
//! at once. The topic also remembers its readers, by participant, to announce new parameters
//! to remote writers (SEDP ContentFilterProperty, what they filter with). This is the one
//! filter module that reaches the runtime; the SQL part below it does not.

use super::{Filter, FilterError, SampleDecoder, SharedFilter, Typed};
use crate::runtime::Shared;
use halyard_cdr::{Reflect, TopicType};
use halyard_wire::discovery::{ContentFilterProperty, DDSSQL};
use halyard_wire::EntityId;
use std::sync::Arc;

/// How long `set_expression_parameters` (and `DataReader::set_qos`, for a new
/// TIME_BASED_FILTER) waits at most for the writers of a reader's participant peers to
/// acknowledge the new announcement.
pub(crate) const ANNOUNCEMENT_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Readers created from a content-filtered topic, by participant (to announce its new
/// parameters).
type FilteredReaders = std::sync::Mutex<Vec<(std::sync::Weak<Shared>, EntityId)>>;

/// A topic whose readers see only the samples a filter accepts (DDS 1.4 §2.2.2.3.3): create
/// it with `DomainParticipant::create_contentfilteredtopic` and readers of it with
/// `Subscriber::create_datareader_filtered`. The filter runs on the reader, and its readers
/// announce it (PID_CONTENT_FILTER_PROPERTY) so that writers that can apply it, Halyard's
/// among them, send them only what it accepts.
pub struct ContentFilteredTopic<T> {
    pub(crate) name: String,
    pub(crate) related: crate::Topic<T>,
    pub(crate) filter: SharedFilter,
    /// Decodes its readers' serialized samples for the filter.
    pub(crate) decoder: Arc<dyn SampleDecoder>,
    readers: FilteredReaders,
}

impl<T: TopicType + Reflect> ContentFilteredTopic<T> {
    pub(crate) fn new(
        name: &str,
        related: &crate::Topic<T>,
        expression: &str,
        params: Vec<String>,
    ) -> Result<Self, FilterError> {
        let filter = Filter::new::<T>(expression, &params)?;
        Ok(Self::with_filter(
            name,
            related,
            filter,
            Arc::new(Typed::<T>::new()),
        ))
    }
}

impl<T> ContentFilteredTopic<T> {
    /// The topic of `related` samples that `filter` accepts, read by `decoder`.
    pub(crate) fn with_filter(
        name: &str,
        related: &crate::Topic<T>,
        filter: Filter,
        decoder: Arc<dyn SampleDecoder>,
    ) -> Self {
        ContentFilteredTopic {
            name: name.to_string(),
            related: related.clone(),
            filter: Arc::new(std::sync::RwLock::new(filter)),
            decoder,
            readers: Default::default(),
        }
    }

    /// The serialized-sample test its readers apply.
    pub(crate) fn sample_filter(&self) -> super::SampleFilter {
        super::sample_filter(&self.filter, Arc::clone(&self.decoder))
    }

    /// What its readers announce: names, the DDSSQL class, expression and parameters.
    pub fn content_filter_property(&self) -> ContentFilterProperty {
        let (expression, params) = self
            .filter
            .read()
            .map(|f| (f.expression().to_string(), f.parameters().to_vec()))
            .unwrap_or_default();
        ContentFilterProperty {
            content_filtered_topic_name: self.name.clone(),
            related_topic_name: self.related.name.clone(),
            filter_class_name: DDSSQL.to_string(),
            filter_expression: expression,
            expression_parameters: params,
        }
    }

    /// Creates a reader of this topic with `create` (given what it announces) and records it,
    /// both while no parameter change is announced (`set_expression_parameters` announces to
    /// the readers recorded, with the parameters it set): a reader misses no change.
    pub(crate) fn attach(
        &self,
        shared: &std::sync::Arc<Shared>,
        create: impl FnOnce(ContentFilterProperty) -> EntityId,
    ) -> EntityId {
        let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
        readers.retain(|(s, _)| s.strong_count() > 0);
        let id = create(self.content_filter_property());
        readers.push((std::sync::Arc::downgrade(shared), id));
        id
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The topic it filters.
    pub fn related_topic(&self) -> &crate::Topic<T> {
        &self.related
    }

    /// The filter expression.
    pub fn filter_expression(&self) -> String {
        self.filter
            .read()
            .map(|f| f.expression().to_string())
            .unwrap_or_default()
    }

    /// The current parameters.
    pub fn expression_parameters(&self) -> Vec<String> {
        self.filter
            .read()
            .map(|f| f.parameters().to_vec())
            .unwrap_or_default()
    }

    /// Replaces the parameters; readers of this topic filter with them from now on, and
    /// announce them (SEDP), so that writers filter for them with the new parameters too. It
    /// returns once the participants of the readers' matched writers acknowledged the new
    /// announcement (or after a second), so samples written after it are filtered with them.
    pub fn set_expression_parameters(&self, params: Vec<String>) -> crate::Result<()> {
        // Not held while announcing: receive threads read the filter under the participant's
        // lock.
        self.filter
            .write()
            .map_err(|_| crate::Error::BadParameter("the filter is poisoned"))?
            .set_parameters(&params)?;
        let readers: Vec<(std::sync::Arc<Shared>, EntityId)> = {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            readers.retain(|(s, _)| s.strong_count() > 0);
            readers
                .iter()
                .filter_map(|(s, id)| Some((s.upgrade()?, *id)))
                .collect()
        };
        let mut gone = Vec::new();
        for (shared, id) in &readers {
            let announced = shared.drive(|st, now| {
                // Read under the participant's lock: of two concurrent changes, the last made
                // is the last announced.
                let property = self.content_filter_property();
                st.core.set_reader_content_filter(now, *id, Some(property))
            });
            if announced.is_err() {
                gone.push(*id);
            }
        }
        // Writers that filter for these readers take the new parameters when the announcement
        // reaches them: waiting for its acknowledgment (bounded; not in a listener, whose
        // thread may be the one that would receive it) makes them apply to what is written
        // after this returns.
        for (shared, id) in &readers {
            if !shared.in_listener() {
                let id = *id;
                shared.wait_until(ANNOUNCEMENT_WAIT, |st| {
                    st.core.reader_announcement_acknowledged(id)
                });
            }
        }
        if !gone.is_empty() {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            readers.retain(|(_, id)| !gone.contains(id));
        }
        Ok(())
    }
}
