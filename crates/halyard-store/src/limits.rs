//! The limit check of one insert, decided before anything is written (DDS 1.4 §2.2.3.19
//! RESOURCE_LIMITS, §2.2.3.18 HISTORY, applied per channel as DURABILITY_SERVICE says).

use crate::error::FullLimit;
use crate::types::Limits;

/// What one insert does to its channel, when the limits let it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Oldest samples of the instance to remove first (KEEP_LAST).
    pub evict: u64,
    /// The sample starts a new instance.
    pub new_instance: bool,
}

/// Decides an insert into a channel holding `samples` samples in `instances` instances, of
/// which the sample's instance holds `in_instance` (`None`: the instance is new).
/// A refusal names the limit and its value.
pub(crate) fn plan(
    limits: &Limits,
    samples: u64,
    instances: u64,
    in_instance: Option<u64>,
) -> Result<Plan, (FullLimit, u64)> {
    let new_instance = in_instance.is_none();
    let held = in_instance.unwrap_or(0);
    if new_instance {
        if let Some(max) = limits.max_instances {
            if instances >= max {
                return Err((FullLimit::Instances, max));
            }
        }
    }
    let evict = match limits.history_depth {
        Some(depth) => {
            let depth = limits
                .max_samples_per_instance
                .map_or(u64::from(depth), |m| m.min(u64::from(depth)))
                .max(1);
            (held + 1).saturating_sub(depth)
        }
        None => {
            if let Some(max) = limits.max_samples_per_instance {
                if held >= max {
                    return Err((FullLimit::PerInstance, max));
                }
            }
            0
        }
    };
    if let Some(max) = limits.max_samples {
        if (samples + 1).saturating_sub(evict) > max {
            return Err((FullLimit::Samples, max));
        }
    }
    Ok(Plan {
        evict,
        new_instance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep_last(n: u32) -> Limits {
        Limits {
            history_depth: Some(n),
            ..Limits::default()
        }
    }

    #[test]
    fn keep_last_evicts_down_to_depth() {
        let l = keep_last(2);
        assert_eq!(
            plan(&l, 0, 0, None),
            Ok(Plan {
                evict: 0,
                new_instance: true
            })
        );
        assert_eq!(
            plan(&l, 1, 1, Some(1)),
            Ok(Plan {
                evict: 0,
                new_instance: false
            })
        );
        assert_eq!(
            plan(&l, 2, 1, Some(2)),
            Ok(Plan {
                evict: 1,
                new_instance: false
            })
        );
        // An instance above the depth (limits lowered since) is trimmed in one insert.
        assert_eq!(
            plan(&l, 5, 1, Some(5)),
            Ok(Plan {
                evict: 4,
                new_instance: false
            })
        );
    }

    #[test]
    fn smaller_max_samples_per_instance_is_the_depth() {
        let l = Limits {
            history_depth: Some(5),
            max_samples_per_instance: Some(2),
            ..Limits::default()
        };
        assert_eq!(plan(&l, 2, 1, Some(2)).map(|p| p.evict), Ok(1));
    }

    #[test]
    fn keep_all_refuses_at_each_limit() {
        let l = Limits {
            max_samples: Some(3),
            max_instances: Some(2),
            max_samples_per_instance: Some(2),
            ..Limits::default()
        };
        assert_eq!(plan(&l, 2, 1, Some(2)), Err((FullLimit::PerInstance, 2)));
        assert_eq!(plan(&l, 2, 2, None), Err((FullLimit::Instances, 2)));
        assert_eq!(plan(&l, 3, 2, Some(1)), Err((FullLimit::Samples, 3)));
        assert!(plan(&l, 2, 2, Some(1)).is_ok());
    }

    #[test]
    fn eviction_makes_room_under_max_samples() {
        let l = Limits {
            history_depth: Some(1),
            max_samples: Some(1),
            ..Limits::default()
        };
        assert_eq!(plan(&l, 1, 1, Some(1)).map(|p| p.evict), Ok(1));
        assert_eq!(plan(&l, 1, 1, None), Err((FullLimit::Samples, 1)));
    }
}
