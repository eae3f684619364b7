//! The DCPS entities as Python classes, over Halyard's untyped endpoints: a writer converts
//! the Python sample to bytes with the topic's [`TypeSupport`] and writes them; a reader takes
//! bytes and builds instances of the class.
//!
//! The GIL is released around every call into Halyard that may block or take its locks
//! (write, take, wait, create, close), because listener callbacks run on Halyard's threads
//! and take the GIL: holding it while waiting for Halyard would deadlock against them.

use std::sync::Arc;
use std::time::Duration;

use halyard::{
    DomainParticipant, InstanceHandle, InstanceState, MatchedStatus, ParticipantOptions, Publisher,
    SampleInfo, SampleState, Subscriber, UntypedContentFilteredTopic, UntypedDataReader,
    UntypedDataWriter, UntypedTopic, ViewState,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::to_py;
use crate::listeners::{PyReaderListener, PyWriterListener};
use crate::qos;
use crate::types::TypeSupport;

/// Holds a Halyard entity and drops it with the GIL released: deleting an entity may wait for
/// Halyard's threads, and one of them may be waiting for the GIL to run a Python listener.
pub(crate) struct GilFree<T: Send>(Option<T>);

impl<T: Send> GilFree<T> {
    fn new(v: T) -> Self {
        GilFree(Some(v))
    }
}

impl<T: Send> std::ops::Deref for GilFree<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Invariant: the value is only taken in `drop`.
        #[allow(clippy::unwrap_used, clippy::expect_used)]
        self.0.as_ref().expect("GilFree value present until drop")
    }
}

impl<T: Send> Drop for GilFree<T> {
    fn drop(&mut self) {
        if let Some(v) = self.0.take() {
            Python::with_gil(|py| py.allow_threads(move || drop(v)));
        }
    }
}

/// Seconds (float, None = forever) to a Duration.
pub(crate) fn timeout(t: Option<f64>) -> Duration {
    match t {
        Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s.min(1e9)),
        Some(_) => Duration::ZERO,
        None => Duration::from_secs(1_000_000_000),
    }
}

/// A domain participant.
#[pyclass(module = "halyard._native", frozen)]
pub struct Participant {
    pub(crate) inner: GilFree<Arc<DomainParticipant>>,
}

#[pymethods]
impl Participant {
    /// `Participant(domain_id)`, configured by the `HALYARD_*` environment variables
    /// (`ParticipantOptions::from_env`).
    #[new]
    fn py_new(py: Python<'_>, domain_id: u32) -> PyResult<Self> {
        let p = py
            .allow_threads(|| {
                DomainParticipant::with_options(domain_id, ParticipantOptions::from_env()?)
            })
            .map_err(to_py)?;
        Ok(Participant {
            inner: GilFree::new(Arc::new(p)),
        })
    }

    /// The domain id.
    #[getter]
    fn domain_id(&self) -> u32 {
        self.inner.domain_id()
    }

    /// The participant's GUID prefix (12 bytes).
    #[getter]
    fn guid_prefix<'p>(&self, py: Python<'p>) -> Bound<'p, PyBytes> {
        PyBytes::new_bound(py, &self.inner.guid_prefix().0)
    }
}

/// A topic of a Python IDL class, or a content-filtered topic of one (`filtered`).
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeTopic {
    pub(crate) inner: UntypedTopic,
    pub(crate) ts: Py<TypeSupport>,
    /// Set for a content-filtered topic: its readers read only what its filter accepts.
    pub(crate) filtered: Option<UntypedContentFilteredTopic>,
}

#[pymethods]
impl NativeTopic {
    /// `NativeTopic(participant, name, type_support)`.
    #[new]
    fn py_new(p: &Participant, name: &str, ts: Py<TypeSupport>) -> PyResult<Self> {
        let ty = ts.get().untyped.clone();
        let inner = p.inner.create_untyped_topic(name, ty).map_err(to_py)?;
        Ok(NativeTopic {
            inner,
            ts,
            filtered: None,
        })
    }

    /// A content-filtered topic `name` of `topic`: its readers see only the samples
    /// `expression` (DDS SQL, `%n` for `params[n]`) accepts, evaluated by Halyard's filter
    /// language on the topic's type, and announce it so writers filter for them.
    #[staticmethod]
    #[pyo3(signature = (participant, name, topic, expression, params=Vec::new()))]
    fn content_filtered(
        py: Python<'_>,
        participant: &Participant,
        name: &str,
        topic: &NativeTopic,
        expression: &str,
        params: Vec<String>,
    ) -> PyResult<Self> {
        let cft = participant
            .inner
            .create_untyped_contentfilteredtopic(
                name,
                &topic.inner,
                expression,
                params,
                &topic.ts.get().ty,
            )
            .map_err(to_py)?;
        Ok(NativeTopic {
            inner: topic.inner.clone(),
            ts: topic.ts.clone_ref(py),
            filtered: Some(cft),
        })
    }

    /// The topic name (a content-filtered topic's own name).
    #[getter]
    fn name(&self) -> &str {
        match &self.filtered {
            Some(f) => f.name(),
            None => self.inner.name(),
        }
    }

    /// A content-filtered topic's expression (None for a topic).
    #[getter]
    fn filter_expression(&self) -> Option<String> {
        self.filtered.as_ref().map(|f| f.filter_expression())
    }

    /// A content-filtered topic's parameters (empty for a topic).
    #[getter]
    fn expression_parameters(&self) -> Vec<String> {
        self.filtered
            .as_ref()
            .map(|f| f.expression_parameters())
            .unwrap_or_default()
    }

    /// Replaces a content-filtered topic's parameters (its readers filter with them from
    /// now on, and announce them).
    fn set_expression_parameters(&self, py: Python<'_>, params: Vec<String>) -> PyResult<()> {
        let Some(f) = &self.filtered else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "a topic that is not content-filtered has no expression parameters",
            ));
        };
        py.allow_threads(|| f.set_expression_parameters(params))
            .map_err(to_py)
    }

    /// The registered type name.
    #[getter]
    fn type_name(&self) -> &str {
        &self.inner.untyped_type().type_name
    }
}

/// A publisher.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativePublisher {
    pub(crate) inner: Publisher,
}

#[pymethods]
impl NativePublisher {
    /// `NativePublisher(participant, qos_dict)`.
    #[new]
    #[pyo3(signature = (participant, qos=None))]
    fn py_new(participant: &Participant, qos: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let g = qos::publisher(qos)?;
        Ok(NativePublisher {
            inner: participant.inner.create_publisher(g),
        })
    }
}

/// A subscriber.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeSubscriber {
    pub(crate) inner: Subscriber,
}

#[pymethods]
impl NativeSubscriber {
    /// `NativeSubscriber(participant, qos_dict)`.
    #[new]
    #[pyo3(signature = (participant, qos=None))]
    fn py_new(participant: &Participant, qos: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let g = qos::subscriber(qos)?;
        Ok(NativeSubscriber {
            inner: participant.inner.create_subscriber(g),
        })
    }
}

/// A matched status as a dict.
pub(crate) fn matched_dict<'p>(py: Python<'p>, s: &MatchedStatus) -> PyResult<Bound<'p, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("total_count", s.total_count)?;
    d.set_item("current_count", s.current_count)?;
    d.set_item("last_handle", PyBytes::new_bound(py, &s.last_handle.0))?;
    Ok(d)
}

/// The writer's DATA_REPRESENTATION: XCDR2 for appendable and mutable types (and when asked),
/// else XCDR1, as the `cyclonedds` package writes them.
fn representation_ids(xcdr2: bool) -> Vec<i16> {
    if xcdr2 {
        vec![2]
    } else {
        vec![0]
    }
}

/// A data writer.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeWriter {
    inner: GilFree<UntypedDataWriter>,
    ts: Py<TypeSupport>,
}

impl NativeWriter {
    fn w(&self) -> PyResult<&UntypedDataWriter> {
        Ok(&self.inner)
    }
}

#[pymethods]
impl NativeWriter {
    /// `NativeWriter(publisher, topic, qos_dict, listener)`.
    #[new]
    #[pyo3(signature = (publisher, topic, qos=None, listener=None, xcdr2=false))]
    fn py_new(
        py: Python<'_>,
        publisher: &NativePublisher,
        topic: &NativeTopic,
        qos: Option<&Bound<'_, PyDict>>,
        listener: Option<PyObject>,
        xcdr2: bool,
    ) -> PyResult<Self> {
        let mut q = halyard::qos::wire::EndpointQos::writer_default();
        q.data_representation = representation_ids(xcdr2);
        if let Some(d) = qos {
            qos::apply_endpoint(&mut q, d)?;
        }
        let l = listener
            .map(|l| Arc::new(PyWriterListener { obj: l }) as Arc<dyn halyard::DataWriterListener>);
        let w = py
            .allow_threads(|| {
                publisher
                    .inner
                    .create_untyped_datawriter(&topic.inner, (&q).into(), l)
            })
            .map_err(to_py)?;
        Ok(NativeWriter {
            inner: GilFree::new(w),
            ts: topic.ts.clone_ref(py),
        })
    }

    /// Writes a sample (optionally with a source timestamp in ns since the epoch).
    #[pyo3(signature = (sample, timestamp=None))]
    fn write(&self, sample: &Bound<'_, PyAny>, timestamp: Option<i64>) -> PyResult<()> {
        let bytes = self.ts.get().encode(sample)?;
        let w = self.w()?;
        sample
            .py()
            .allow_threads(|| match timestamp {
                Some(t) => w.write_w_timestamp(&bytes, halyard::Time::from_nanos(t)),
                None => w.write(&bytes),
            })
            .map_err(to_py)
    }

    /// Disposes the sample's instance.
    fn dispose(&self, sample: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = self.ts.get().encode_key_sample(sample)?;
        let w = self.w()?;
        sample
            .py()
            .allow_threads(|| w.dispose(&bytes))
            .map_err(to_py)
    }

    /// Unregisters the sample's instance.
    fn unregister_instance(&self, sample: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = self.ts.get().encode_key_sample(sample)?;
        let w = self.w()?;
        sample
            .py()
            .allow_threads(|| w.unregister_instance(&bytes))
            .map_err(to_py)
    }

    /// The instance handle (key hash) of a sample.
    fn lookup_instance<'p>(&self, sample: &Bound<'p, PyAny>) -> PyResult<Bound<'p, PyBytes>> {
        let bytes = self.ts.get().encode_key_sample(sample)?;
        let h = self.w()?.lookup_instance(&bytes).map_err(to_py)?;
        Ok(PyBytes::new_bound(sample.py(), &h.0))
    }

    /// The PUBLICATION_MATCHED status.
    fn publication_matched_status<'p>(&self, py: Python<'p>) -> PyResult<Bound<'p, PyDict>> {
        let status = self.w()?.publication_matched_status().map_err(to_py)?;
        matched_dict(py, &status)
    }

    /// Waits until `n` readers matched.
    #[pyo3(signature = (n, timeout_s=None))]
    fn wait_for_matched(&self, py: Python<'_>, n: u32, timeout_s: Option<f64>) -> PyResult<()> {
        let w = self.w()?;
        py.allow_threads(|| w.wait_for_matched(n, timeout(timeout_s)))
            .map_err(to_py)
    }

    /// Waits until every matched reliable reader acknowledged everything written.
    #[pyo3(signature = (timeout_s=None))]
    fn wait_for_acknowledgments(&self, py: Python<'_>, timeout_s: Option<f64>) -> PyResult<()> {
        let w = self.w()?;
        py.allow_threads(|| w.wait_for_acknowledgments(timeout(timeout_s)))
            .map_err(to_py)
    }

    /// What the writer knows of each reader's reception (`DataWriter::delivery_report`): a
    /// list of dicts with `reader` (the GUID's 16 bytes), `matched`, `durability_service`,
    /// `reception` ("acknowledged", "unknown" for best effort, "local"), and for
    /// "acknowledged" `acknowledged` and `owed` (changes).
    fn delivery_report<'p>(&self, py: Python<'p>) -> PyResult<Vec<Bound<'p, PyDict>>> {
        let report = self.w()?.delivery_report().map_err(to_py)?;
        report
            .iter()
            .map(|d| {
                let o = PyDict::new_bound(py);
                o.set_item("reader", PyBytes::new_bound(py, &d.reader.to_bytes()))?;
                o.set_item("matched", d.matched)?;
                o.set_item("durability_service", d.durability_service)?;
                let (kind, counts) = match d.reception {
                    halyard::Reception::Acknowledged { acknowledged, owed } => {
                        ("acknowledged", Some((acknowledged, owed)))
                    }
                    halyard::Reception::Unknown => ("unknown", None),
                    halyard::Reception::Local => ("local", None),
                };
                o.set_item("reception", kind)?;
                o.set_item("acknowledged", counts.map(|c| c.0))?;
                o.set_item("owed", counts.map(|c| c.1))?;
                Ok(o)
            })
            .collect()
    }

    /// The status condition.
    fn status_condition(&self) -> PyResult<crate::listeners::NativeStatusCondition> {
        Ok(crate::listeners::NativeStatusCondition {
            inner: self.w()?.status_condition(),
        })
    }
}

/// SampleInfo as a Python object.
#[pyclass(module = "halyard._native", frozen, name = "SampleInfo")]
pub struct PySampleInfo {
    /// "READ" or "NOT_READ".
    #[pyo3(get)]
    sample_state: &'static str,
    /// "NEW" or "NOT_NEW".
    #[pyo3(get)]
    view_state: &'static str,
    /// "ALIVE", "NOT_ALIVE_DISPOSED" or "NOT_ALIVE_NO_WRITERS".
    #[pyo3(get)]
    instance_state: &'static str,
    /// Source timestamp, ns since the epoch (None if the writer sent none).
    #[pyo3(get)]
    source_timestamp: Option<i64>,
    /// Reception timestamp, ns since the epoch.
    #[pyo3(get)]
    reception_timestamp: i64,
    instance: [u8; 16],
    publication: [u8; 16],
    /// False for dispose/unregister notices.
    #[pyo3(get)]
    valid_data: bool,
    /// Disposed generation count.
    #[pyo3(get)]
    disposed_generation_count: u32,
    /// No-writers generation count.
    #[pyo3(get)]
    no_writers_generation_count: u32,
    /// Sample rank.
    #[pyo3(get)]
    sample_rank: u32,
}

#[pymethods]
impl PySampleInfo {
    /// The instance handle (16-byte key hash).
    #[getter]
    fn instance_handle<'p>(&self, py: Python<'p>) -> Bound<'p, PyBytes> {
        PyBytes::new_bound(py, &self.instance)
    }

    /// The publication handle (writer GUID).
    #[getter]
    fn publication_handle<'p>(&self, py: Python<'p>) -> Bound<'p, PyBytes> {
        PyBytes::new_bound(py, &self.publication)
    }

    fn __repr__(&self) -> String {
        format!(
            "SampleInfo(sample_state={}, view_state={}, instance_state={}, valid_data={}, source_timestamp={:?})",
            self.sample_state, self.view_state, self.instance_state, self.valid_data, self.source_timestamp
        )
    }
}

fn info(i: &SampleInfo) -> PySampleInfo {
    PySampleInfo {
        sample_state: match i.sample_state {
            SampleState::Read => "READ",
            SampleState::NotRead => "NOT_READ",
        },
        view_state: match i.view_state {
            ViewState::New => "NEW",
            ViewState::NotNew => "NOT_NEW",
        },
        instance_state: match i.instance_state {
            InstanceState::Alive => "ALIVE",
            InstanceState::NotAliveDisposed => "NOT_ALIVE_DISPOSED",
            InstanceState::NotAliveNoWriters => "NOT_ALIVE_NO_WRITERS",
        },
        source_timestamp: i.source_timestamp.map(|t| t.to_nanos()),
        reception_timestamp: i.reception_timestamp.to_nanos(),
        instance: i.instance_handle.0,
        publication: i.publication_handle.0,
        valid_data: i.valid_data,
        disposed_generation_count: i.disposed_generation_count,
        no_writers_generation_count: i.no_writers_generation_count,
        sample_rank: i.sample_rank,
    }
}

/// A data reader.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeReader {
    inner: GilFree<UntypedDataReader>,
    ts: Py<TypeSupport>,
}

#[pymethods]
impl NativeReader {
    /// `NativeReader(subscriber, topic, qos_dict, listener)`.
    #[new]
    #[pyo3(signature = (subscriber, topic, qos=None, listener=None))]
    fn py_new(
        py: Python<'_>,
        subscriber: &NativeSubscriber,
        topic: &NativeTopic,
        qos: Option<&Bound<'_, PyDict>>,
        listener: Option<PyObject>,
    ) -> PyResult<Self> {
        let mut q = halyard::qos::wire::EndpointQos::reader_default();
        q.data_representation = vec![0, 2];
        if let Some(d) = qos {
            qos::apply_endpoint(&mut q, d)?;
        }
        let l = listener
            .map(|l| Arc::new(PyReaderListener { obj: l }) as Arc<dyn halyard::DataReaderListener>);
        let r = py
            .allow_threads(|| match &topic.filtered {
                Some(f) => subscriber
                    .inner
                    .create_untyped_datareader_filtered(f, (&q).into(), l),
                None => subscriber
                    .inner
                    .create_untyped_datareader(&topic.inner, (&q).into(), l),
            })
            .map_err(to_py)?;
        Ok(NativeReader {
            inner: GilFree::new(r),
            ts: topic.ts.clone_ref(py),
        })
    }

    /// Takes (or reads) up to `n` samples; returns a list of (sample or None, SampleInfo,
    /// key sample or None) tuples: the key sample is set for invalid-data samples.
    #[pyo3(signature = (n, take=true, condition=None))]
    fn collect<'p>(
        &self,
        py: Python<'p>,
        n: usize,
        take: bool,
        condition: Option<&crate::listeners::NativeReadCondition>,
    ) -> PyResult<Bound<'p, PyList>> {
        let r = &self.inner;
        let n = n.min(1 << 20);
        let samples = py
            .allow_threads(|| match (condition, take) {
                (Some(c), true) => r.take_w_condition(n, &c.inner),
                (Some(c), false) => r.read_w_condition(n, &c.inner),
                (None, true) => r.take(n),
                (None, false) => r.read(n),
            })
            .map_err(to_py)?;
        let ts = self.ts.get();
        let out = PyList::empty_bound(py);
        for s in samples {
            let i = Py::new(py, info(&s.info))?;
            let item = match (&s.data, s.info.valid_data) {
                (Some(d), true) => (ts.decode(py, d)?, i, py.None()),
                (Some(d), false) => {
                    let k = ts.decode_key(py, d).unwrap_or_else(|_| py.None());
                    (py.None(), i, k)
                }
                (None, _) => (py.None(), i, py.None()),
            };
            out.append(item)?;
        }
        Ok(out)
    }

    /// The SUBSCRIPTION_MATCHED status.
    fn subscription_matched_status<'p>(&self, py: Python<'p>) -> PyResult<Bound<'p, PyDict>> {
        let status = self.inner.subscription_matched_status().map_err(to_py)?;
        matched_dict(py, &status)
    }

    /// Waits until `n` writers matched.
    #[pyo3(signature = (n, timeout_s=None))]
    fn wait_for_matched(&self, py: Python<'_>, n: u32, timeout_s: Option<f64>) -> PyResult<()> {
        let r = &self.inner;
        py.allow_threads(|| r.wait_for_matched(n, timeout(timeout_s)))
            .map_err(to_py)
    }

    /// Waits until data is available; true if it is.
    #[pyo3(signature = (timeout_s=None))]
    fn wait_for_data(&self, py: Python<'_>, timeout_s: Option<f64>) -> bool {
        let r = &self.inner;
        py.allow_threads(|| r.wait_for_data(timeout(timeout_s)))
    }

    /// A ReadCondition on sample/view/instance state bit masks (DDS values; 0 = any).
    #[pyo3(signature = (sample_states=0, view_states=0, instance_states=0))]
    fn read_condition(
        &self,
        sample_states: u32,
        view_states: u32,
        instance_states: u32,
    ) -> crate::listeners::NativeReadCondition {
        let any = halyard::StateMask::ANY;
        let or_any = |v: u32, a: u32| if v == 0 { a } else { v };
        let mask = halyard::StateMask {
            sample_states: or_any(sample_states, any.sample_states),
            view_states: or_any(view_states, any.view_states),
            instance_states: or_any(instance_states, any.instance_states),
        };
        crate::listeners::NativeReadCondition {
            inner: self.inner.create_readcondition_with_mask(mask),
            query: None,
        }
    }

    /// A QueryCondition: a ReadCondition on the state masks (as `read_condition`) whose data
    /// samples must also pass `expression` (DDS SQL, `%n` for `params[n]`, optionally ending
    /// with `ORDER BY`), evaluated by Halyard's filter language on the reader's type.
    #[pyo3(signature = (expression, params=Vec::new(), sample_states=0, view_states=0, instance_states=0))]
    fn query_condition(
        &self,
        expression: &str,
        params: Vec<String>,
        sample_states: u32,
        view_states: u32,
        instance_states: u32,
    ) -> PyResult<crate::listeners::NativeReadCondition> {
        let any = halyard::StateMask::ANY;
        let or_any = |v: u32, a: u32| if v == 0 { a } else { v };
        let mask = halyard::StateMask {
            sample_states: or_any(sample_states, any.sample_states),
            view_states: or_any(view_states, any.view_states),
            instance_states: or_any(instance_states, any.instance_states),
        };
        let q = self
            .inner
            .create_querycondition(mask, expression, params, &self.ts.get().ty)
            .map_err(to_py)?;
        Ok(crate::listeners::NativeReadCondition {
            inner: q.read_condition().clone(),
            query: Some(q),
        })
    }

    /// The status condition.
    fn status_condition(&self) -> crate::listeners::NativeStatusCondition {
        crate::listeners::NativeStatusCondition {
            inner: self.inner.status_condition(),
        }
    }

    /// The instance handle (key hash) of a sample.
    fn lookup_instance<'p>(&self, sample: &Bound<'p, PyAny>) -> PyResult<Bound<'p, PyBytes>> {
        let bytes = self.ts.get().encode_key_sample(sample)?;
        let h: InstanceHandle = self.inner.lookup_instance(&bytes).map_err(to_py)?;
        Ok(PyBytes::new_bound(sample.py(), &h.0))
    }
}
