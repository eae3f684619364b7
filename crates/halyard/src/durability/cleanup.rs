//! SERVICE_CLEANUP_DELAY (DDS 1.4 §2.2.3.5): when the service forgets a disposed instance.
//!
//! The specification lets a durability service remove all it holds of an instance once the
//! instance was disposed, no live writer has it registered any more (each one unregistered
//! it or lost its liveliness), and `service_cleanup_delay` passed since both held. The
//! service tracks each disposed instance it stores ([`Disposed`]); every cleanup tick it asks
//! the store which writers still have the instance registered (those with data kept in it
//! that did not unregister it since, `Store::registered_writers`) and whether any of them is
//! alive, and purges the instance (store and relay) once none was for the delay. A write
//! revives the instance and ends its tracking. At start, the disposed instances of a loaded
//! store are tracked again, their writers not yet seen alive.
//!
//! What the store does not know: a writer whose data in the instance were all evicted
//! (KEEP_LAST) by another writer's is not counted among those that have it registered.

use super::channel::ChannelKey;
use super::worker::{Worker, CLEANUP_TICK};
use halyard_store::{ChannelId, SampleKind};
use halyard_wire::Guid;
use std::collections::BTreeSet;
use std::time::Instant;

/// A disposed instance the service stores, waiting for its cleanup.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Disposed {
    /// Since when no live writer has had it registered (`None`: one has, or not looked yet).
    free_since: Option<Instant>,
}

impl Worker {
    /// Tracks the disposed instances of channel `id` of a loaded store.
    pub(super) fn track_disposed(&mut self, key: &ChannelKey, id: ChannelId) {
        let Some(store) = self.store(key.persistent) else {
            return;
        };
        match store.instances(id) {
            Ok(instances) => {
                for (instance, kind, _) in instances {
                    if matches!(
                        kind,
                        SampleKind::Disposed | SampleKind::DisposedUnregistered
                    ) {
                        self.disposed
                            .insert((key.clone(), instance), Disposed::default());
                    }
                }
            }
            Err(e) => self.problem(format!(
                "{}: cannot list its instances ({e}); its disposed instances are not cleaned up",
                key.describe()
            )),
        }
    }

    /// Purges the disposed instances that no live writer has had registered for their
    /// channel's cleanup delay (see the module).
    pub(super) fn cleanup(&mut self, now: Instant) {
        if now < self.next_cleanup {
            return;
        }
        // Ticking on when nothing is disposed: a deadline left behind would have the thread
        // wake every millisecond.
        self.next_cleanup = now + CLEANUP_TICK;
        if self.disposed.is_empty() {
            return;
        }
        let live: BTreeSet<Guid> = self.writers.keys().copied().collect();
        let tracked: Vec<(ChannelKey, [u8; 16])> = self.disposed.keys().cloned().collect();
        for (key, instance) in tracked {
            let Some((store_id, relay, delay)) = self
                .channels
                .get(&key)
                .map(|c| (c.store_id, c.relay, c.cleanup_delay))
            else {
                self.disposed.remove(&(key, instance));
                continue;
            };
            let Some(delay) = delay else {
                // An infinite delay: kept for ever.
                continue;
            };
            let store = match key.persistent {
                true => self.persistent.as_mut(),
                false => Some(&mut self.transient),
            };
            let Some(store) = store else {
                continue;
            };
            let registered = match store.registered_writers(store_id, instance) {
                Ok(w) => w,
                Err(e) => {
                    self.problem(format!(
                        "{}: cannot read an instance's writers: {e}",
                        key.describe()
                    ));
                    continue;
                }
            };
            let held = registered
                .iter()
                .any(|w| live.contains(&Guid::from_bytes(*w)));
            let Some(entry) = self.disposed.get_mut(&(key.clone(), instance)) else {
                continue;
            };
            if held {
                entry.free_since = None;
                continue;
            }
            let since = *entry.free_since.get_or_insert(now);
            if now < since + delay {
                continue;
            }
            self.disposed.remove(&(key.clone(), instance));
            self.purge(&key, store_id, relay, instance);
        }
    }

    /// Removes instance `instance` of channel `key` from its store and its relay.
    fn purge(
        &mut self,
        key: &ChannelKey,
        store_id: ChannelId,
        relay: halyard_wire::EntityId,
        instance: [u8; 16],
    ) {
        // The purge commits: what is pending first goes through the service's own commit
        // (relays, acknowledgments).
        self.commit_if_pending();
        let store = match key.persistent {
            true => self.persistent.as_mut(),
            false => Some(&mut self.transient),
        };
        let Some(store) = store else {
            return;
        };
        let purged = store
            .purge_instance(store_id, instance)
            .and_then(|_| store.commit());
        match purged {
            Ok(_) => {
                self.shared
                    .drive(|st, _| st.core.remove_instance(relay, &instance));
                self.stats().purged_instances += 1;
            }
            Err(e) => self.problem(format!(
                "{}: cleanup of an instance failed: {e}",
                key.describe()
            )),
        }
    }
}
