//! Helpers shared by the wire-capture tests (Cyclone DDS and Fast DDS captures).

/// The first submessage of one kind among `subs`, e.g.
/// `first_of!(submessages(&bytes), Heartbeat, "HEARTBEAT")`; panics with the message if
/// there is none.
#[macro_export]
macro_rules! first_of {
    ($subs:expr, $variant:ident, $what:expr) => {
        $subs
            .into_iter()
            .find_map(|s| match s {
                halyard_wire::Submessage::$variant(x) => Some(x),
                _ => None,
            })
            .expect($what)
    };
}
