//! Builtin topics (DDS 1.4 §2.2.5): DCPSParticipant, DCPSPublication and DCPSSubscription as
//! readers. Each cache starts when the application first asks for its reader, seeded with what
//! discovery already knows; discoveries then arrive as ALIVE samples and departures as
//! NOT_ALIVE_DISPOSED notices (valid_data = false). Each cache holds at most
//! [`MAX_BUILTIN_SAMPLES`] samples; the oldest are dropped beyond that.

use crate::clock::wall_clock;
use crate::participant::DomainParticipant;
use crate::reader::Sample;
use crate::status::{InstanceHandle, InstanceState, SampleInfo, SampleState, ViewState};
use halyard_core::Event;
use halyard_wire::discovery::{EndpointData, ParticipantData};
use halyard_wire::{EntityId, Guid, Time};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::time::Duration;

/// DCPSParticipant sample data.
pub type ParticipantBuiltinTopicData = ParticipantData;
/// DCPSPublication sample data.
pub type PublicationBuiltinTopicData = EndpointData;
/// DCPSSubscription sample data.
pub type SubscriptionBuiltinTopicData = EndpointData;

/// The decoded XTypes TypeInformation of a discovered endpoint (DCPSPublication or
/// DCPSSubscription data), which carries it as PID_TYPE_INFORMATION bytes.
pub trait EndpointTypeInformation {
    /// The endpoint's TypeInformation; `None` when it sent none (peers without XTypes type
    /// discovery: Cyclone DDS 0.10, Fast DDS 2.9 by configuration). Discovery drops one that
    /// does not decode (counted in `Stats::malformed_type_information`).
    fn decoded_type_information(&self) -> Option<halyard_core::xtypes::TypeInformation>;
}

impl EndpointTypeInformation for EndpointData {
    fn decoded_type_information(&self) -> Option<halyard_core::xtypes::TypeInformation> {
        let t = self.type_information.as_ref()?;
        let order = if t.little_endian {
            halyard_cdr::Endianness::Little
        } else {
            halyard_cdr::Endianness::Big
        };
        halyard_core::xtypes::TypeInformation::from_xcdr2_endian(&t.xcdr2, order).ok()
    }
}

/// Most samples a builtin cache holds.
pub const MAX_BUILTIN_SAMPLES: usize = 4096;

struct Entry<T> {
    data: Option<T>,
    key: Guid,
    reception: Time,
    read: bool,
}

/// A builtin topic's sample cache (internal; no public operations).
#[doc(hidden)]
pub struct Cache<T> {
    enabled: bool,
    samples: VecDeque<Entry<T>>,
}

impl<T> Default for Cache<T> {
    fn default() -> Self {
        Cache {
            enabled: false,
            samples: VecDeque::new(),
        }
    }
}

impl<T> Cache<T> {
    fn push(&mut self, key: Guid, data: Option<T>) {
        if !self.enabled {
            return;
        }
        if self.samples.len() >= MAX_BUILTIN_SAMPLES {
            self.samples.pop_front();
        }
        self.samples.push_back(Entry {
            data,
            key,
            reception: wall_clock(),
            read: false,
        });
    }
}

/// The three builtin caches of a participant (internal; no public operations).
#[doc(hidden)]
#[derive(Default)]
pub struct BuiltinCaches {
    participants: Cache<ParticipantData>,
    publications: Cache<EndpointData>,
    subscriptions: Cache<EndpointData>,
}

impl BuiltinCaches {
    pub(crate) fn on_event(&mut self, e: &Event) {
        match e {
            Event::ParticipantDiscovered(p) => self.participants.push(p.guid, Some((**p).clone())),
            Event::ParticipantLost(prefix) => self
                .participants
                .push(Guid::new(*prefix, EntityId::PARTICIPANT), None),
            Event::PublicationDiscovered(d) => self.publications.push(d.guid, Some((**d).clone())),
            Event::PublicationLost(g) => self.publications.push(*g, None),
            Event::SubscriptionDiscovered(d) => {
                self.subscriptions.push(d.guid, Some((**d).clone()))
            }
            Event::SubscriptionLost(g) => self.subscriptions.push(*g, None),
            _ => {}
        }
    }
}

/// Which builtin topic a reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinTopic {
    /// DCPSParticipant
    Participant,
    /// DCPSPublication
    Publication,
    /// DCPSSubscription
    Subscription,
}

/// Data types of builtin topics (sealed: ParticipantData and EndpointData).
pub trait BuiltinData: Clone + Send + 'static + sealed::Access {}

mod sealed {
    use super::*;

    /// Access to the cache of a builtin topic's type.
    #[doc(hidden)]
    pub trait Access: Sized {
        fn cache(c: &mut BuiltinCaches, topic: BuiltinTopic) -> Option<&mut Cache<Self>>;
        fn known(dp: &DomainParticipant, topic: BuiltinTopic) -> Vec<(Guid, Self)>;
    }

    impl Access for ParticipantData {
        fn cache(c: &mut BuiltinCaches, topic: BuiltinTopic) -> Option<&mut Cache<Self>> {
            (topic == BuiltinTopic::Participant).then_some(&mut c.participants)
        }
        fn known(dp: &DomainParticipant, _: BuiltinTopic) -> Vec<(Guid, Self)> {
            dp.discovered_participants()
                .into_iter()
                .map(|p| (p.guid, p))
                .collect()
        }
    }

    impl Access for EndpointData {
        fn cache(c: &mut BuiltinCaches, topic: BuiltinTopic) -> Option<&mut Cache<Self>> {
            match topic {
                BuiltinTopic::Publication => Some(&mut c.publications),
                BuiltinTopic::Subscription => Some(&mut c.subscriptions),
                BuiltinTopic::Participant => None,
            }
        }
        fn known(dp: &DomainParticipant, topic: BuiltinTopic) -> Vec<(Guid, Self)> {
            let v = if topic == BuiltinTopic::Publication {
                dp.discovered_publications()
            } else {
                dp.discovered_subscriptions()
            };
            v.into_iter().map(|e| (e.guid, e)).collect()
        }
    }
}

impl BuiltinData for ParticipantData {}
impl BuiltinData for EndpointData {}

/// A reader of a builtin topic.
pub struct BuiltinReader<T: BuiltinData> {
    participant: DomainParticipant,
    topic: BuiltinTopic,
    _t: PhantomData<fn() -> T>,
}

impl<T: BuiltinData> BuiltinReader<T> {
    pub(crate) fn new(participant: DomainParticipant, topic: BuiltinTopic) -> Self {
        let known = T::known(&participant, topic);
        {
            let mut st = participant.shared.lock();
            if let Some(c) = T::cache(&mut st.builtin, topic) {
                if !c.enabled {
                    c.enabled = true;
                    for (g, d) in known {
                        c.push(g, Some(d));
                    }
                }
            }
        }
        BuiltinReader {
            participant,
            topic,
            _t: PhantomData,
        }
    }

    fn collect(&self, max: usize, take: bool) -> Vec<Sample<T>> {
        let mut st = self.participant.shared.lock();
        let Some(c) = T::cache(&mut st.builtin, self.topic) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut i = 0;
        while i < c.samples.len() && out.len() < max {
            let e = &mut c.samples[i];
            let info = SampleInfo {
                sample_state: if e.read {
                    SampleState::Read
                } else {
                    SampleState::NotRead
                },
                view_state: ViewState::New,
                instance_state: if e.data.is_some() {
                    InstanceState::Alive
                } else {
                    InstanceState::NotAliveDisposed
                },
                source_timestamp: None,
                reception_timestamp: e.reception,
                instance_handle: InstanceHandle(e.key.to_bytes()),
                publication_handle: InstanceHandle::default(),
                disposed_generation_count: 0,
                no_writers_generation_count: 0,
                sample_rank: 0,
                generation_rank: 0,
                absolute_generation_rank: 0,
                valid_data: e.data.is_some(),
                sequence_number: halyard_wire::SequenceNumber(0),
            };
            if take {
                let e = c.samples.remove(i);
                out.push(Sample {
                    data: e.and_then(|e| e.data),
                    info,
                });
            } else {
                e.read = true;
                out.push(Sample {
                    data: e.data.clone(),
                    info,
                });
                i += 1;
            }
        }
        out
    }

    /// Removes and returns up to `max` samples.
    pub fn take(&self, max: usize) -> Vec<Sample<T>> {
        self.collect(max, true)
    }

    /// Returns up to `max` samples, marking them read.
    pub fn read(&self, max: usize) -> Vec<Sample<T>> {
        self.collect(max, false)
    }

    /// Blocks until an unread sample is present or `timeout`; returns whether one is.
    pub fn wait_for_data(&self, timeout: Duration) -> bool {
        let topic = self.topic;
        self.participant.shared.wait_until(timeout, |st| {
            T::cache(&mut st.builtin, topic).is_some_and(|c| c.samples.iter().any(|e| !e.read))
        })
    }
}
