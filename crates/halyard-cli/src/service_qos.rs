//! The DURABILITY_SERVICE policy on the command line (DDS 1.4 §2.2.3.5): what a durability
//! service keeps of a TRANSIENT or PERSISTENT writer's samples. `halyard pub` and `halyard
//! shapes` take the same long options, parsed here.

use halyard_wire::qos::{DurabilityService, History};
use halyard_wire::Duration as WireDuration;

/// The long options (without their `--`), each taking a value.
pub const OPTIONS: &[&str] = &[
    "service-history",
    "service-cleanup-delay",
    "service-max-samples",
    "service-max-instances",
    "service-max-samples-per-instance",
];

/// The options' help, as `halyard pub` and `halyard shapes` print it.
pub const HELP: &str =
    "DURABILITY_SERVICE (what a durability service keeps of a TRANSIENT or PERSISTENT writer):
  --service-history keep-all|N       history depth per instance (default 1, the last value;
                                     shapes: the writer's -k); counts data samples: an
                                     instance's dispose or unregistration is kept besides
  --service-cleanup-delay S|inf      how long a disposed instance is kept once no live writer
                                     has it (default 0)
  --service-max-samples N, --service-max-instances N, --service-max-samples-per-instance N
                                     resource limits (default unlimited)";

/// The DURABILITY_SERVICE settings given, each `None` when left at the writer's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceQos {
    history: Option<History>,
    cleanup_delay: Option<WireDuration>,
    max_samples: Option<i32>,
    max_instances: Option<i32>,
    max_samples_per_instance: Option<i32>,
}

impl ServiceQos {
    /// Takes option `name` (one of [`OPTIONS`], without its `--`) with `value`; `Ok(false)`
    /// when `name` is not one of them. The error says what the value should be.
    pub fn set(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let count = |v: &str| {
            v.parse::<i32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("bad --{name} {v:?} (a positive integer)"))
        };
        match name {
            "service-history" => {
                self.history = Some(match value {
                    "keep-all" | "keep_all" | "all" => History::KeepAll,
                    v => History::KeepLast(count(v).map_err(|_| {
                        format!("bad --{name} {v:?} (keep-all or a depth of 1 or more)")
                    })?),
                })
            }
            "service-cleanup-delay" => {
                self.cleanup_delay = Some(match value {
                    "inf" | "infinite" => WireDuration::INFINITE,
                    v => {
                        let s = v
                            .strip_suffix('s')
                            .unwrap_or(v)
                            .parse::<f64>()
                            .ok()
                            .filter(|s| s.is_finite() && *s >= 0.0 && *s < 4e9)
                            .ok_or_else(|| {
                                format!("bad --{name} {v:?} (seconds, 0 or more, or inf)")
                            })?;
                        WireDuration::from_nanos((s * 1e9) as i64)
                    }
                })
            }
            "service-max-samples" => self.max_samples = Some(count(value)?),
            "service-max-instances" => self.max_instances = Some(count(value)?),
            "service-max-samples-per-instance" => {
                self.max_samples_per_instance = Some(count(value)?)
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether any option was given.
    pub fn is_set(&self) -> bool {
        *self != ServiceQos::default()
    }

    /// Applies the options given to `ds`.
    pub fn apply(&self, ds: &mut DurabilityService) {
        if let Some(h) = self.history {
            ds.history = h;
        }
        if let Some(d) = self.cleanup_delay {
            ds.service_cleanup_delay = d;
        }
        if let Some(n) = self.max_samples {
            ds.limits.max_samples = n;
        }
        if let Some(n) = self.max_instances {
            ds.limits.max_instances = n;
        }
        if let Some(n) = self.max_samples_per_instance {
            ds.limits.max_samples_per_instance = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_set_the_policy_and_bad_values_say_why() {
        let mut q = ServiceQos::default();
        assert!(!q.is_set());
        for (name, value) in [
            ("service-history", "5"),
            ("service-cleanup-delay", "2.5"),
            ("service-max-samples", "100"),
            ("service-max-instances", "10"),
            ("service-max-samples-per-instance", "20"),
        ] {
            assert_eq!(q.set(name, value), Ok(true), "{name}");
        }
        assert_eq!(q.set("history", "5"), Ok(false));
        let mut ds = DurabilityService::default();
        q.apply(&mut ds);
        assert_eq!(ds.history, History::KeepLast(5));
        assert_eq!(
            ds.service_cleanup_delay,
            WireDuration::from_nanos(2_500_000_000)
        );
        assert_eq!(
            (
                ds.limits.max_samples,
                ds.limits.max_instances,
                ds.limits.max_samples_per_instance
            ),
            (100, 10, 20)
        );
        q.set("service-history", "keep-all").unwrap();
        q.set("service-cleanup-delay", "inf").unwrap();
        q.apply(&mut ds);
        assert_eq!(ds.history, History::KeepAll);
        assert_eq!(ds.service_cleanup_delay, WireDuration::INFINITE);
        for (name, value) in [
            ("service-history", "0"),
            ("service-history", "last"),
            ("service-cleanup-delay", "-1"),
            ("service-cleanup-delay", "soon"),
            ("service-max-samples", "0"),
            ("service-max-instances", "x"),
        ] {
            let e = q.set(name, value).unwrap_err();
            assert!(e.contains(name) && e.contains(value), "{e}");
        }
    }
}
