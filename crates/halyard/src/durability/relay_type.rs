//! The type a channel's relay announces: the TypeInformation its original writers announced,
//! served through the service participant's TypeLookup, and kept with the stored channel.
//!
//! Design. A relay is a writer of the service's own participant; like any writer it announces
//! the TypeInformation registered for its type name (`halyard_core`'s `register_type`), and the
//! participant's TypeLookup server answers for the registered objects. So the service
//! registers, per type name, what the first durable writer that announced a TypeInformation
//! announced, once it holds every object it names:
//!
//! 1. A durable writer with a TypeInformation whose type is not registered yet: its objects
//!    are asked for through TypeLookup (`request_types`, again every [`ASK_AGAIN`]), up to
//!    [`ASK_FOR`]; a writer seen later starts over. Replies land in the participant's cache.
//! 2. [`RelayTypes::poll`] finds every object there (`type_closure`): the type is registered,
//!    the relays of its channels announced again (now with the TypeInformation), and the
//!    description written to each channel's store row (`Store::set_channel_type`).
//! 3. A store opened at start registers the descriptions it holds before the relays are
//!    created, so a restarted service announces and serves the type although no original
//!    writer is alive.
//!
//! A type name registered with another TypeInformation (two writers of the same name but
//! different types) keeps the first; the core refuses the second, which is said once.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use halyard_core::xtypes::{TypeIdentifier, TypeInformation};
use halyard_core::TypeRegistrationError;
use halyard_store::{ChannelId, ChannelType, Store};
use halyard_wire::discovery::EndpointData;
use halyard_wire::EntityId;

use crate::builtin::EndpointTypeInformation;
use crate::runtime::Shared;

/// How often a type's objects are asked for again while some are missing.
pub(super) const ASK_AGAIN: Duration = Duration::from_millis(500);
/// How long a type's objects are asked for before the service gives up (until a writer of
/// that type is seen again).
pub(super) const ASK_FOR: Duration = Duration::from_secs(30);
/// How often [`RelayTypes::poll`] looks for replies while a type is awaited.
const LOOK_AGAIN: Duration = Duration::from_millis(50);

/// A type awaited from TypeLookup.
struct Awaited {
    info: TypeInformation,
    info_bytes: Vec<u8>,
    next_ask: Instant,
    give_up: Instant,
}

/// A channel whose relay announces the type of its name.
struct Served {
    type_name: String,
    relay: EntityId,
    persistent: bool,
    store_id: ChannelId,
    /// Its store row holds the description.
    stored: bool,
}

/// The types of the service's channels (see the module).
pub(super) struct RelayTypes {
    awaited: BTreeMap<String, Awaited>,
    /// Descriptions registered, by type name.
    registered: BTreeMap<String, ChannelType>,
    channels: Vec<Served>,
    /// Type names whose conflict or failure was said.
    said: BTreeSet<String>,
    /// Store rows (PERSISTENT, channel) found holding a type at start.
    rows_with_type: BTreeSet<(bool, ChannelId)>,
    next_look: Option<Instant>,
}

impl RelayTypes {
    pub(super) fn new() -> Self {
        RelayTypes {
            awaited: BTreeMap::new(),
            registered: BTreeMap::new(),
            channels: Vec::new(),
            said: BTreeSet::new(),
            rows_with_type: BTreeSet::new(),
            next_look: None,
        }
    }

    /// A stored channel is loaded: registers the description its row holds (before its relay
    /// is created, so that the relay's first announcement carries it). Returns a problem to
    /// report, if any.
    pub(super) fn load(
        &mut self,
        shared: &Shared,
        store: &Store,
        (persistent, id): (bool, ChannelId),
        type_name: &str,
        now: Instant,
    ) -> Option<String> {
        match store.channel_type(id) {
            Ok(Some(_)) if self.registered.contains_key(type_name) => {
                self.rows_with_type.insert((persistent, id));
                None
            }
            Ok(Some(t)) => {
                self.rows_with_type.insert((persistent, id));
                self.register(shared, type_name, t, now)
            }
            Ok(None) => None,
            Err(e) => Some(format!(
                "cannot read the type of {id} from the store: {e}; its relay announces none \
                 until a writer of it is seen"
            )),
        }
    }

    /// A durable writer was seen: its type is awaited if it announced one that is not
    /// registered yet.
    pub(super) fn on_writer(&mut self, ed: &EndpointData, now: Instant) {
        if self.registered.contains_key(&ed.type_name) || self.said.contains(&ed.type_name) {
            return;
        }
        let Some(info) = ed.decoded_type_information() else {
            return;
        };
        let Ok(info_bytes) = info.to_xcdr2_le() else {
            return;
        };
        match self.awaited.get(&ed.type_name) {
            Some(a) if a.info == info && now < a.give_up => return,
            _ => {}
        }
        self.awaited.insert(
            ed.type_name.clone(),
            Awaited {
                info,
                info_bytes,
                next_ask: now,
                give_up: now + ASK_FOR,
            },
        );
        self.next_look = Some(now);
    }

    /// A channel is served by `relay`: it announces its type once registered, and its store
    /// row keeps it.
    pub(super) fn on_channel(
        &mut self,
        type_name: &str,
        relay: EntityId,
        persistent: bool,
        store_id: ChannelId,
        now: Instant,
    ) {
        self.channels.push(Served {
            type_name: type_name.to_string(),
            relay,
            persistent,
            store_id,
            stored: self.rows_with_type.contains(&(persistent, store_id)),
        });
        if self.registered.contains_key(type_name) {
            self.next_look = Some(now);
        }
    }

    /// When [`RelayTypes::poll`] has something to do.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        self.next_look
    }

    /// Registers the awaited types whose objects all arrived, asks again for the others,
    /// and writes registered descriptions to the channels' store rows. Returns the problems
    /// to report.
    pub(super) fn poll(
        &mut self,
        shared: &Shared,
        now: Instant,
        persistent: Option<&mut Store>,
        transient: &mut Store,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if self.next_look.is_none_or(|t| now < t) {
            return problems;
        }
        self.next_look = None;
        let names: Vec<String> = self.awaited.keys().cloned().collect();
        for name in names {
            if let Some(p) = self.look(shared, &name, now) {
                problems.push(p);
            }
        }
        problems.extend(self.store_rows(persistent, transient));
        if !self.awaited.is_empty() {
            self.next_look = Some(now + LOOK_AGAIN);
        }
        problems
    }

    /// One awaited type: registered when complete, else asked for again when due.
    fn look(&mut self, shared: &Shared, name: &str, now: Instant) -> Option<String> {
        let a = self.awaited.get_mut(name)?;
        let roots = [
            a.info.complete.typeid_with_size.type_id.clone(),
            a.info.minimal.typeid_with_size.type_id.clone(),
        ];
        let closure = shared.lock().core.type_closure(&roots);
        if closure.missing.is_empty() {
            let mut objects = Vec::with_capacity(closure.found.len());
            for (_, o) in &closure.found {
                match o.to_xcdr2_le() {
                    Ok(b) => objects.push(b),
                    Err(e) => {
                        self.awaited.remove(name);
                        return self.say(name, format!("its objects do not encode: {e}"));
                    }
                }
            }
            let t = ChannelType {
                type_information: a.info_bytes.clone(),
                type_objects: objects,
            };
            self.awaited.remove(name);
            return self.register(shared, name, t, now);
        }
        if now >= a.give_up {
            self.awaited.remove(name);
            return Some(format!(
                "type {name:?}: no participant answered TypeLookup for {} of its objects in \
                 {} s; its relays announce no TypeInformation until a writer of it is seen \
                 again",
                closure.missing.len(),
                ASK_FOR.as_secs()
            ));
        }
        if now >= a.next_ask {
            a.next_ask = now + ASK_AGAIN;
            let missing: Vec<TypeIdentifier> = closure.missing;
            let asked = shared.drive(|st, core_now| st.core.request_types(core_now, &missing));
            if let Err(e) = asked {
                self.awaited.remove(name);
                return self.say(name, format!("its objects cannot be asked for: {e:?}"));
            }
        }
        None
    }

    /// Registers `t` for `name` and announces the relays of its channels again; returns the
    /// problem to report, if any.
    fn register(
        &mut self,
        shared: &Shared,
        name: &str,
        t: ChannelType,
        now: Instant,
    ) -> Option<String> {
        let relays: Vec<EntityId> = self
            .channels
            .iter()
            .filter(|c| c.type_name == name)
            .map(|c| c.relay)
            .collect();
        let registered = shared.drive(|st, core_now| {
            let objects: Vec<&[u8]> = t.type_objects.iter().map(Vec::as_slice).collect();
            let r = st
                .core
                .register_type(name, &t.type_information, &objects)
                .map(|_| ());
            if r.is_ok() {
                for relay in &relays {
                    st.core.announce_writer_again(core_now, *relay);
                }
            }
            r
        });
        match registered {
            Ok(()) => {
                self.registered.insert(name.to_string(), t);
                self.next_look = Some(now);
                None
            }
            Err(TypeRegistrationError::Conflict) => self.say(
                name,
                "writers of this type name announce different TypeInformation; the relays \
                 keep announcing the first"
                    .to_string(),
            ),
            Err(e) => self.say(name, format!("its description is refused: {e:?}")),
        }
    }

    /// Writes the registered descriptions to the store rows of the channels that lack them.
    fn store_rows(
        &mut self,
        mut persistent: Option<&mut Store>,
        transient: &mut Store,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        for c in self.channels.iter_mut().filter(|c| !c.stored) {
            let Some(t) = self.registered.get(&c.type_name) else {
                continue;
            };
            let store = match c.persistent {
                true => persistent.as_deref_mut(),
                false => Some(&mut *transient),
            };
            let Some(store) = store else {
                c.stored = true;
                continue;
            };
            // Written once: a failure is said and not retried (a store that refuses it, full
            // or failing, would refuse it again).
            c.stored = true;
            if let Err(e) = store.set_channel_type(c.store_id, t) {
                problems.push(format!(
                    "cannot keep the type of {} in the store: {e}; a restarted service will \
                     not announce it until a writer of it is seen",
                    c.store_id
                ));
            }
        }
        problems
    }

    /// The problem `what` about type `name`, the first time only.
    fn say(&mut self, name: &str, what: String) -> Option<String> {
        self.said
            .insert(name.to_string())
            .then(|| format!("type {name:?}: {what}"))
    }
}
