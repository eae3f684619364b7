//! Listeners and conditions. A Python listener is any object with some of the DDS callback
//! methods (`on_data_available(reader)`, `on_subscription_matched(reader, status)` ...); the
//! native adapters call them on Halyard's threads holding the GIL. The Python wrappers
//! (`halyard/core.py`) pass the entity as first argument. A callback that raises is reported
//! with `sys.unraisablehook` (Python's convention for errors with no caller to return to).
//!
//! WaitSet waits release the GIL; conditions are the native ones, so a WaitSet may mix
//! ReadConditions, StatusConditions and GuardConditions.

use halyard::{
    Condition, GuardCondition, LivelinessChangedStatus, MatchedStatus, ReadCondition,
    StatusCondition, StatusMask, WaitSet,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::entities::{matched_dict, timeout};
use crate::errors::to_py;

fn call(obj: &PyObject, method: &str, args: impl FnOnce(Python<'_>) -> PyResult<PyObject>) {
    Python::with_gil(|py| {
        let o = obj.bind(py);
        if !o.hasattr(method).unwrap_or(false) {
            return;
        }
        let r = args(py).and_then(|a| o.call_method1(method, (a,)));
        if let Err(e) = r {
            e.write_unraisable_bound(py, Some(o));
        }
    });
}

fn liveliness_dict(py: Python<'_>, s: &LivelinessChangedStatus) -> PyResult<PyObject> {
    let d = PyDict::new_bound(py);
    d.set_item("alive_count", s.alive_count)?;
    d.set_item("not_alive_count", s.not_alive_count)?;
    d.set_item("alive_count_change", s.alive_count_change)?;
    d.set_item("not_alive_count_change", s.not_alive_count_change)?;
    Ok(d.into_any().unbind())
}

/// A DataReader listener calling a Python object (the wrapper `halyard.core._ReaderListener`
/// binds the reader, so the methods here get the status only).
pub struct PyReaderListener {
    /// The Python object.
    pub obj: PyObject,
}

impl halyard::DataReaderListener for PyReaderListener {
    fn on_data_available(&self) {
        call(&self.obj, "on_data_available", |py| Ok(py.None()));
    }
    fn on_subscription_matched(&self, status: MatchedStatus) {
        call(&self.obj, "on_subscription_matched", |py| {
            Ok(matched_dict(py, &status)?.into_any().unbind())
        });
    }
    fn on_liveliness_changed(&self, status: LivelinessChangedStatus) {
        call(&self.obj, "on_liveliness_changed", |py| {
            liveliness_dict(py, &status)
        });
    }
    fn on_sample_lost(&self, total_count: u64) {
        call(
            &self.obj,
            "on_sample_lost",
            |py| Ok(total_count.into_py(py)),
        );
    }
    fn on_sample_rejected(&self, total_count: u64) {
        call(&self.obj, "on_sample_rejected", |py| {
            Ok(total_count.into_py(py))
        });
    }
    fn on_requested_incompatible_qos(&self, status: halyard::IncompatibleQosStatus) {
        call(&self.obj, "on_requested_incompatible_qos", |py| {
            Ok(status.total_count.into_py(py))
        });
    }
    fn on_requested_deadline_missed(&self, status: halyard::DeadlineMissedStatus) {
        call(&self.obj, "on_requested_deadline_missed", |py| {
            Ok(status.total_count.into_py(py))
        });
    }
}

/// A DataWriter listener calling a Python object.
pub struct PyWriterListener {
    /// The Python object.
    pub obj: PyObject,
}

impl halyard::DataWriterListener for PyWriterListener {
    fn on_publication_matched(&self, status: MatchedStatus) {
        call(&self.obj, "on_publication_matched", |py| {
            Ok(matched_dict(py, &status)?.into_any().unbind())
        });
    }
    fn on_offered_incompatible_qos(&self, status: halyard::IncompatibleQosStatus) {
        call(&self.obj, "on_offered_incompatible_qos", |py| {
            Ok(status.total_count.into_py(py))
        });
    }
    fn on_offered_deadline_missed(&self, status: halyard::DeadlineMissedStatus) {
        call(&self.obj, "on_offered_deadline_missed", |py| {
            Ok(status.total_count.into_py(py))
        });
    }
    fn on_liveliness_lost(&self, status: halyard::LivelinessLostStatus) {
        call(&self.obj, "on_liveliness_lost", |py| {
            Ok(status.total_count.into_py(py))
        });
    }
}

/// A ReadCondition, or a QueryCondition's (then `query` is set).
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeReadCondition {
    pub(crate) inner: ReadCondition,
    /// The QueryCondition it belongs to, for its expression and parameters.
    pub(crate) query: Option<halyard::QueryCondition>,
}

#[pymethods]
impl NativeReadCondition {
    /// True while the reader holds samples the condition selects.
    fn trigger_value(&self) -> bool {
        self.inner.trigger_value()
    }

    /// A QueryCondition's expression (None for a plain ReadCondition).
    fn query_expression(&self) -> Option<String> {
        self.query.as_ref().map(|q| q.query_expression())
    }

    /// Replaces a QueryCondition's parameters.
    fn set_query_parameters(&self, params: Vec<String>) -> PyResult<()> {
        match &self.query {
            Some(q) => q.set_query_parameters(params).map_err(crate::errors::to_py),
            None => Err(pyo3::exceptions::PyTypeError::new_err(
                "a ReadCondition has no query parameters",
            )),
        }
    }
}

/// A StatusCondition.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeStatusCondition {
    pub(crate) inner: StatusCondition,
}

#[pymethods]
impl NativeStatusCondition {
    /// Sets the statuses (DDS StatusKind bits) that trigger it.
    fn set_enabled_statuses(&self, mask: u32) {
        self.inner.set_enabled_statuses(StatusMask(mask));
    }
    /// The enabled statuses.
    fn enabled_statuses(&self) -> u32 {
        self.inner.enabled_statuses().0
    }
    /// True while an enabled status changed and was not read.
    fn trigger_value(&self) -> bool {
        self.inner.trigger_value()
    }
}

/// A GuardCondition.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeGuardCondition {
    pub(crate) inner: GuardCondition,
}

#[pymethods]
impl NativeGuardCondition {
    /// A new untriggered guard condition.
    #[new]
    fn py_new() -> Self {
        NativeGuardCondition {
            inner: GuardCondition::new(),
        }
    }
    /// Triggers (true) or resets it.
    fn set_trigger_value(&self, value: bool) {
        self.inner.set_trigger_value(value);
    }
    /// Its trigger value.
    fn trigger_value(&self) -> bool {
        self.inner.trigger_value()
    }
}

/// A WaitSet. Conditions are attached by index: `wait` returns the indices (in attach order)
/// of the triggered ones, and the Python wrapper maps them back to its objects.
#[pyclass(module = "halyard._native", frozen)]
pub struct NativeWaitSet {
    inner: WaitSet,
    attached: std::sync::Mutex<Vec<Condition>>,
}

fn condition_of(c: &Bound<'_, PyAny>) -> PyResult<Condition> {
    if let Ok(r) = c.downcast::<NativeReadCondition>() {
        return Ok(Condition::Read(r.get().inner.clone()));
    }
    if let Ok(s) = c.downcast::<NativeStatusCondition>() {
        return Ok(Condition::Status(s.get().inner.clone()));
    }
    if let Ok(g) = c.downcast::<NativeGuardCondition>() {
        return Ok(Condition::Guard(g.get().inner.clone()));
    }
    Err(crate::errors::BadParameterError::new_err(
        "a WaitSet holds ReadConditions, StatusConditions and GuardConditions",
    ))
}

#[pymethods]
impl NativeWaitSet {
    /// An empty WaitSet.
    #[new]
    fn py_new() -> Self {
        NativeWaitSet {
            inner: WaitSet::new(),
            attached: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Attaches a native condition.
    fn attach(&self, c: &Bound<'_, PyAny>) -> PyResult<()> {
        let cond = condition_of(c)?;
        self.inner.attach_condition(cond.clone()).map_err(to_py)?;
        if let Ok(mut a) = self.attached.lock() {
            a.push(cond);
        }
        Ok(())
    }

    /// Detaches a native condition.
    fn detach(&self, c: &Bound<'_, PyAny>) -> PyResult<()> {
        let cond = condition_of(c)?;
        self.inner.detach_condition(&cond).map_err(to_py)?;
        if let Ok(mut a) = self.attached.lock() {
            a.retain(|x| !x.same_as(&cond));
        }
        Ok(())
    }

    /// Waits up to `timeout_s` seconds (None: forever) for a condition to trigger; returns
    /// the indices of the triggered conditions in attach order (empty on timeout).
    #[pyo3(signature = (timeout_s=None))]
    fn wait(&self, py: Python<'_>, timeout_s: Option<f64>) -> PyResult<Vec<usize>> {
        let ws = &self.inner;
        let r = py.allow_threads(|| ws.wait(timeout(timeout_s)));
        let triggered = match r {
            Ok(t) => t,
            Err(halyard::Error::Timeout) => return Ok(Vec::new()),
            Err(e) => return Err(to_py(e)),
        };
        let a = self
            .attached
            .lock()
            .map_err(|_| crate::errors::DDSError::new_err("WaitSet lock poisoned"))?;
        Ok(a.iter()
            .enumerate()
            .filter(|(_, c)| triggered.iter().any(|t| t.same_as(c)))
            .map(|(i, _)| i)
            .collect())
    }
}
