//! `halyard pub`'s TRANSIENT and PERSISTENT writers: samples that outlive the command.
//!
//! Design. A durable sample outlives its writer only in a durability service, and `halyard
//! pub` is short-lived: so it (1) leaves its instances alive when it exits (its writer
//! unregisters them, it does not dispose them: a service purges a disposed instance after
//! its SERVICE_CLEANUP_DELAY), unless `--dispose` asks for that; (2) takes the
//! DURABILITY_SERVICE options ([`crate::service_qos`]); and (3) after writing, waits within
//! `--timeout` until a durability service outside its own process has stored every sample
//! (the service's reader acknowledged them: a service acknowledges only what it committed,
//! `DataWriter::wait_for_stored`). That wait covers a service that has not seen the topic
//! yet: it creates its reader for the topic once it discovers the writer, and only then can
//! it store anything. When no service did within the timeout, `pub` warns on standard error
//! and exits 0: the samples were published, and readers that were there got them; what the
//! warning says is that nothing will serve them once `pub` is gone (its own embedded
//! service dies with it; a PERSISTENT one leaves them in its store file). A warning rather
//! than a failure, because a durable writer without a service is valid DDS, as it is for
//! any other application, and `pub`'s exit status says whether it published.

use crate::discovery::BadArgs;
use crate::service_qos::ServiceQos;
use halyard::UntypedDataWriter;
use halyard_wire::qos::{DurabilityKind, EndpointQos};
use std::time::{Duration, Instant};

/// The help of these options, as `halyard pub --help` prints it.
pub const HELP: &str =
    "TRANSIENT and PERSISTENT (--durability transient|persistent): the samples outlive pub in a
durability service (`halyard durability --store PATH`, or another process's embedded one). pub
leaves its instances alive when it exits (it unregisters them, it does not dispose them), and
waits, within --timeout, until a service outside its own process has stored every sample;
without one it says so on standard error (exit status 0).
  --dispose    dispose the instances as pub exits: services then remove them after the
               service cleanup delay";

/// The help of the durable writers' options and of DURABILITY_SERVICE's.
pub fn help() -> String {
    format!("{HELP}\n{}", crate::service_qos::HELP)
}

/// The durable-writer options of `halyard pub`.
#[derive(Clone, Debug, Default)]
pub struct DurableArgs {
    /// `--dispose`: dispose the instances at exit.
    dispose: bool,
    /// The DURABILITY_SERVICE options.
    service: ServiceQos,
}

impl DurableArgs {
    /// Consumes `arg` (and its value from `it`) when it is one of these options; `Ok(false)`
    /// when it is not.
    pub fn take(
        &mut self,
        arg: &str,
        it: &mut std::slice::Iter<'_, String>,
    ) -> Result<bool, BadArgs> {
        if arg == "--dispose" {
            self.dispose = true;
            return Ok(true);
        }
        let Some(name) = arg
            .strip_prefix("--")
            .filter(|n| crate::service_qos::OPTIONS.contains(n))
        else {
            return Ok(false);
        };
        let value = crate::discovery::option_value(it, arg)?;
        self.service.set(name, &value).map_err(BadArgs)
    }

    /// The writer's QoS for a durable writer: its DURABILITY_SERVICE, and its instances left
    /// alive at exit unless `--dispose`. A writer that is not TRANSIENT or PERSISTENT is left
    /// as it is.
    pub fn apply(&self, q: &mut EndpointQos) {
        if q.durability < DurabilityKind::Transient {
            return;
        }
        self.service.apply(&mut q.durability_service);
        q.writer_data_lifecycle.autodispose_unregistered_instances = self.dispose;
    }

    /// The options that have no effect on a writer of `q`, as a note for standard error.
    pub fn unused_note(&self, q: &EndpointQos) -> Option<String> {
        let given = self.dispose || self.service.is_set();
        (given && q.durability < DurabilityKind::Transient).then(|| {
            "--dispose and --service-* apply to TRANSIENT and PERSISTENT writers only (see --durability)"
                .to_string()
        })
    }
}

/// After `w` wrote its samples: for a TRANSIENT or PERSISTENT writer, waits within `timeout`
/// until a durability service outside this process stored them all, and says on standard
/// error when none did. Returns whether one did (`true` for a writer that is not durable).
pub fn wait_for_a_service(w: &UntypedDataWriter, q: &EndpointQos, timeout: Duration) -> bool {
    if q.durability < DurabilityKind::Transient {
        return true;
    }
    let start = Instant::now();
    if w.wait_for_stored(1, timeout).is_ok() {
        return true;
    }
    let embedded = w.durability_services().iter().any(|s| s.embedded);
    let kind = match q.durability {
        DurabilityKind::Persistent => "PERSISTENT",
        _ => "TRANSIENT",
    };
    let fate = match (embedded, q.durability) {
        (true, DurabilityKind::Persistent) => {
            "they stay in this process's embedded store file only, served by the next service that opens it"
        }
        (true, _) => "this process's embedded service keeps them only until pub exits",
        (false, _) => "nothing keeps them once pub exits",
    };
    eprintln!(
        "halyard pub: warning: no durability service outside this process stored the {kind} samples within {:.1} s; {fate} (start one: halyard durability --store PATH)",
        start.elapsed().as_secs_f64()
    );
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<DurableArgs, BadArgs> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let mut d = DurableArgs::default();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if !d.take(a, &mut it)? {
                return Err(BadArgs(format!("not ours: {a}")));
            }
        }
        Ok(d)
    }

    #[test]
    fn a_durable_writer_leaves_its_instances_alive_unless_asked() {
        let mut q = EndpointQos::writer_default();
        q.durability = DurabilityKind::Persistent;
        let d = parse(&["--service-history", "3"]).unwrap();
        d.apply(&mut q);
        assert!(!q.writer_data_lifecycle.autodispose_unregistered_instances);
        assert_eq!(
            q.durability_service.history,
            halyard_wire::qos::History::KeepLast(3)
        );
        assert_eq!(d.unused_note(&q), None);
        let d = parse(&["--dispose"]).unwrap();
        d.apply(&mut q);
        assert!(q.writer_data_lifecycle.autodispose_unregistered_instances);
        // A VOLATILE writer is left alone, and told so.
        let mut v = EndpointQos::writer_default();
        d.apply(&mut v);
        assert!(v.writer_data_lifecycle.autodispose_unregistered_instances);
        assert!(d.unused_note(&v).is_some());
        assert!(parse(&["--service-max-samples", "0"])
            .unwrap_err()
            .0
            .contains("service-max-samples"));
        assert!(parse(&["--service-history"]).is_err());
    }
}
