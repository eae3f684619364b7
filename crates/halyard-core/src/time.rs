//! Monotonic time as seen by the core. The core never reads a clock: every entry point takes
//! `now`, which the driver reads from the OS and the simulator advances virtually.

use core::ops::{Add, Sub};
use core::time::Duration;

/// A monotonic instant in nanoseconds since an arbitrary origin chosen by the driver.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Instant(pub u64);

impl Instant {
    /// From nanoseconds since the driver's origin.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }
    /// Nanoseconds since the driver's origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// The earlier of two optional deadlines (`None`: no deadline).
pub(crate) fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(
            self.0
                .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
        )
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

/// Converts a wire duration to a std duration (INFINITE saturates to u64::MAX ns).
pub fn wire_to_std(d: halyard_wire::Duration) -> Duration {
    let n = d.to_nanos();
    if n <= 0 {
        Duration::ZERO
    } else {
        Duration::from_nanos(n as u64)
    }
}
