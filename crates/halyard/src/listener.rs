//! Listeners (DDS 1.4 §2.2.4.4) and status masks. Listener methods run on Halyard's receive or
//! timer thread right after the change, outside Halyard's locks, so they may call any API
//! (take, write ...). They must not block for long: they delay the delivery of later data.

use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus, LivelinessLostStatus,
    MatchedStatus,
};
use std::sync::Arc;

/// A callback run when its reader has new data (on the receiving thread, outside locks).
type Listener = Arc<dyn Fn() + Send + Sync>;

/// A set of communication statuses (DDS 1.4 §2.2.4.1, StatusKind bit values).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct StatusMask(pub u32);

impl StatusMask {
    /// OFFERED_DEADLINE_MISSED
    pub const OFFERED_DEADLINE_MISSED: StatusMask = StatusMask(1 << 1);
    /// REQUESTED_DEADLINE_MISSED
    pub const REQUESTED_DEADLINE_MISSED: StatusMask = StatusMask(1 << 2);
    /// LIVELINESS_LOST
    pub const LIVELINESS_LOST: StatusMask = StatusMask(1 << 11);
    /// OFFERED_INCOMPATIBLE_QOS
    pub const OFFERED_INCOMPATIBLE_QOS: StatusMask = StatusMask(1 << 5);
    /// REQUESTED_INCOMPATIBLE_QOS
    pub const REQUESTED_INCOMPATIBLE_QOS: StatusMask = StatusMask(1 << 6);
    /// SAMPLE_LOST
    pub const SAMPLE_LOST: StatusMask = StatusMask(1 << 7);
    /// SAMPLE_REJECTED
    pub const SAMPLE_REJECTED: StatusMask = StatusMask(1 << 8);
    /// DATA_AVAILABLE
    pub const DATA_AVAILABLE: StatusMask = StatusMask(1 << 10);
    /// LIVELINESS_CHANGED
    pub const LIVELINESS_CHANGED: StatusMask = StatusMask(1 << 12);
    /// PUBLICATION_MATCHED
    pub const PUBLICATION_MATCHED: StatusMask = StatusMask(1 << 13);
    /// SUBSCRIPTION_MATCHED
    pub const SUBSCRIPTION_MATCHED: StatusMask = StatusMask(1 << 14);
    /// Every status.
    pub const ALL: StatusMask = StatusMask(u32::MAX);
    /// No status.
    pub const NONE: StatusMask = StatusMask(0);

    /// True if any bit of `other` is set here.
    pub fn intersects(self, other: StatusMask) -> bool {
        self.0 & other.0 != 0
    }
}

impl core::ops::BitOr for StatusMask {
    type Output = StatusMask;
    fn bitor(self, o: StatusMask) -> StatusMask {
        StatusMask(self.0 | o.0)
    }
}

impl core::ops::BitOrAssign for StatusMask {
    fn bitor_assign(&mut self, o: StatusMask) {
        self.0 |= o.0;
    }
}

/// Callbacks of a DataReader; every method has a no-op default.
pub trait DataReaderListener: Send + Sync {
    /// New samples are in the reader's cache.
    fn on_data_available(&self) {}
    /// A writer matched or unmatched.
    fn on_subscription_matched(&self, _status: MatchedStatus) {}
    /// A discovered writer offers incompatible QoS.
    fn on_requested_incompatible_qos(&self, _status: IncompatibleQosStatus) {}
    /// Samples were lost; the argument is the total count so far.
    fn on_sample_lost(&self, _total_count: u64) {}
    /// Samples were rejected (resource limits); the argument is the total count so far.
    fn on_sample_rejected(&self, _total_count: u64) {}
    /// A matched writer became alive or not alive.
    fn on_liveliness_changed(&self, _status: LivelinessChangedStatus) {}
    /// An instance got no data within the reader's DEADLINE period.
    fn on_requested_deadline_missed(&self, _status: DeadlineMissedStatus) {}
}

/// Callbacks of a DataWriter; every method has a no-op default.
pub trait DataWriterListener: Send + Sync {
    /// A reader matched or unmatched.
    fn on_publication_matched(&self, _status: MatchedStatus) {}
    /// A discovered reader requests QoS this writer does not offer.
    fn on_offered_incompatible_qos(&self, _status: IncompatibleQosStatus) {}
    /// The writer did not write an instance within its DEADLINE period.
    fn on_offered_deadline_missed(&self, _status: DeadlineMissedStatus) {}
    /// The writer did not assert its liveliness within its lease (MANUAL kinds).
    fn on_liveliness_lost(&self, _status: LivelinessLostStatus) {}
}

/// A reader listener that handles DATA_AVAILABLE only, by calling `f` (for
/// [`crate::DataReader::set_listener`] and `create_datareader_with_listener`).
pub fn on_data_available(f: impl Fn() + Send + Sync + 'static) -> Arc<dyn DataReaderListener> {
    Arc::new(DataAvailableFn(Arc::new(f)))
}

/// Adapts a closure to a listener that only handles DATA_AVAILABLE.
struct DataAvailableFn(Listener);

impl DataReaderListener for DataAvailableFn {
    fn on_data_available(&self) {
        (self.0)()
    }
}
