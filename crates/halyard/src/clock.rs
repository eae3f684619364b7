//! The OS clocks, read here and nowhere else in the DCPS crate: the protocol core reads none
//! (every core call takes `now`), so these two functions are the driver's only exceptions to
//! the workspace's clock ban (clippy `disallowed-methods`).

use halyard_wire::Time;

/// Wall-clock time now, as an RTPS timestamp: source timestamps of written samples and
/// reception timestamps of received ones.
#[allow(clippy::disallowed_methods)] // the driver stamps samples with the wall clock
pub fn wall_clock() -> Time {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Time::from_nanos(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// The OS monotonic clock now: the origin of the core's `now` and the deadlines of blocking
/// calls (write, wait_for_*, WaitSet).
#[allow(clippy::disallowed_methods)] // the driver is where monotonic time enters the core
pub(crate) fn monotonic() -> std::time::Instant {
    std::time::Instant::now()
}
