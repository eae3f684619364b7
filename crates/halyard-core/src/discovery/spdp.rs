//! SPDP (RTPS 2.5 §8.5.3): announcing this participant (periodically, faster at start, and by
//! unicast to each new peer until it shows it knows us) and taking in remote participants'
//! announcements and goodbyes.

use crate::event::Event;
use crate::participant::{Participant, RemoteParticipant};
use crate::security::PeerSecurity;
use crate::time::{wire_to_std, Instant};
use halyard_wire::discovery::{builtin_endpoint as be, parse_key_guid, ParticipantData};
use halyard_wire::param::{
    pid, ParameterList, ParameterListWriter, STATUS_INFO_DISPOSED, STATUS_INFO_UNREGISTERED,
};
use halyard_wire::{Data, EntityId, Guid, GuidPrefix, Locator, ProtocolVersion, VendorId};
use std::time::Duration;

impl Participant {
    fn own_participant_data(&self) -> ParticipantData {
        let mut data = ParticipantData {
            guid: Guid::new(self.prefix, EntityId::PARTICIPANT),
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId::HALYARD,
            domain_id: Some(self.cfg.domain_id),
            domain_tag: String::new(),
            expects_inline_qos: false,
            metatraffic_unicast: self.cfg.metatraffic_unicast.clone(),
            metatraffic_multicast: self.cfg.metatraffic_multicast.clone(),
            default_unicast: self.cfg.default_unicast.clone(),
            default_multicast: self.cfg.default_multicast.clone(),
            builtin_endpoints: be::PARTICIPANT_ANNOUNCER
                | be::PARTICIPANT_DETECTOR
                | be::PUBLICATIONS_ANNOUNCER
                | be::PUBLICATIONS_DETECTOR
                | be::SUBSCRIPTIONS_ANNOUNCER
                | be::SUBSCRIPTIONS_DETECTOR
                | be::PARTICIPANT_MESSAGE_DATA_WRITER
                | be::PARTICIPANT_MESSAGE_DATA_READER
                | super::typelookup::TL_ENDPOINT_BITS,
            lease_duration: halyard_wire::Duration::from_nanos(
                self.cfg.lease_duration.as_nanos() as i64
            ),
            manual_liveliness_count: 0,
            user_data: self.cfg.user_data.clone(),
            entity_name: self.cfg.entity_name.clone(),
            identity_token: None,
            permissions_token: None,
            security_info: None,
            properties: self.cfg.properties.clone(),
        };
        self.announce_security(&mut data);
        data
    }

    /// Sends our SPDP sample to the SPDP destinations, or only to `to` (a new peer).
    pub(crate) fn announce_participant(&mut self, to: Option<Vec<Locator>>) {
        let mut payload = Vec::with_capacity(256);
        self.own_participant_data().emit(&mut payload);
        self.send_spdp(&payload, 0, to);
    }

    /// Disposes our SPDP announcement: peers forget us at once rather than at lease expiry.
    pub(crate) fn announce_departure(&mut self) {
        let mut key = vec![0, 3, 0, 0];
        let mut pl = ParameterListWriter::new(&mut key);
        pl.guid(
            pid::PARTICIPANT_GUID,
            Guid::new(self.prefix, EntityId::PARTICIPANT),
        );
        pl.finish();
        self.send_spdp(&key, STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED, None);
    }

    fn send_spdp(&mut self, payload: &[u8], status: u32, to: Option<Vec<Locator>>) {
        self.spdp_sn += 1;
        let mut qos = Vec::with_capacity(48);
        let mut pl = ParameterListWriter::new(&mut qos);
        pl.raw(
            pid::KEY_HASH,
            &Guid::new(self.prefix, EntityId::PARTICIPANT).to_bytes(),
        );
        if status != 0 {
            pl.raw(pid::STATUS_INFO, &status.to_be_bytes());
        }
        pl.finish();
        let dests = to.unwrap_or_else(|| {
            let mut d = self.cfg.spdp_destinations.clone();
            for r in self.remote.values() {
                for l in self.select_unicast(&r.data.metatraffic_unicast) {
                    if !d.contains(&l) {
                        d.push(l);
                    }
                }
            }
            d
        });
        let mut mb = self.out.start(None);
        mb.data(&Data {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: self.spdp_sn,
            inline_qos: Some(ParameterList::new(&qos, true)),
            payload: Some(payload),
            key_flag: status != 0,
            non_standard_flag: false,
        });
        self.out.push(mb, 0, &dests);
    }

    pub(crate) fn on_spdp(&mut self, now: Instant, d: &Data<'_>) {
        let Some(payload) = d.payload else { return };
        let status = d.inline_qos.and_then(|q| q.status_info().ok()).unwrap_or(0);
        if status & (STATUS_INFO_DISPOSED | STATUS_INFO_UNREGISTERED) != 0 || d.key_flag {
            if let Ok(Some(g)) = parse_key_guid(payload) {
                self.remove_participant(now, g.prefix, true);
            }
            return;
        }
        let data = match ParticipantData::parse(payload) {
            Ok(p) => p,
            Err(_) => {
                self.stats.malformed_discovery += 1;
                return;
            }
        };
        let prefix = data.guid.prefix;
        if prefix == self.prefix
            || data.domain_id.is_some_and(|id| id != self.cfg.domain_id)
            || !data.domain_tag.is_empty()
        {
            return;
        }
        if let Some(r) = self.remote.get_mut(&prefix) {
            r.prev_lease = wire_to_std(r.data.lease_duration);
            if r.data != data {
                // Locators or the builtin endpoint set changed (a real change, or a damaged
                // announcement that the next one undoes): every proxy follows the latest.
                r.data = data.clone();
                self.push_event(Event::ParticipantDiscovered(Box::new(data.clone())));
                self.admit_participant(now, &data);
                self.refresh_user_locators(prefix);
            }
            if let Some(r) = self.remote.get_mut(&prefix) {
                r.lease_deadline = now + r.lease();
            }
            return;
        }
        if self.remote.len() >= self.cfg.max_remote_participants {
            self.stats.discovery_refused += 1;
            return;
        }
        let reply_to = self.select_unicast(&data.metatraffic_unicast);
        let retry = self.cfg.spdp_reply_retry;
        self.remote.insert(
            prefix,
            RemoteParticipant {
                data: data.clone(),
                lease_deadline: now + wire_to_std(data.lease_duration),
                prev_lease: wire_to_std(data.lease_duration),
                reannounce: (!retry.is_zero()).then_some((now + retry, retry)),
                last_heard: now,
                manual_asserted: now,
                security: PeerSecurity::NotSecured,
            },
        );
        self.push_event(Event::ParticipantDiscovered(Box::new(data.clone())));
        self.admit_participant(now, &data);
        if !reply_to.is_empty() {
            self.announce_participant(Some(reply_to));
        }
    }

    /// SPDP duties at `now`: our periodic announcement (every `initial_announcement_period`
    /// for the first `initial_announcements`, then every `spdp_interval`), and the unicast
    /// re-announcements to new peers that have not yet shown they know us.
    pub(crate) fn spdp_timeouts(&mut self, now: Instant) {
        if now >= self.spdp_next {
            self.announce_participant(None);
            self.spdp_sent = self.spdp_sent.saturating_add(1);
            let period = if self.spdp_sent < self.cfg.initial_announcements {
                self.cfg.initial_announcement_period
            } else {
                self.cfg.spdp_interval
            };
            self.spdp_next = now + period;
        }
        let due: Vec<GuidPrefix> = self
            .remote
            .iter()
            .filter(|(_, r)| r.reannounce.is_some_and(|(t, _)| t <= now))
            .map(|(p, _)| *p)
            .collect();
        for p in due {
            let Some(r) = self.remote.get_mut(&p) else {
                continue;
            };
            // The delay doubles; once it would reach the interval, the periodic announcement
            // (which goes to every known peer by unicast too) takes over.
            let next = r.reannounce.map_or(Duration::ZERO, |(_, d)| d * 2);
            r.reannounce = (next < self.cfg.spdp_interval).then_some((now + next, next));
            let candidates = r.data.metatraffic_unicast.clone();
            let to = self.select_unicast(&candidates);
            if !to.is_empty() {
                self.announce_participant(Some(to));
            }
        }
    }

    /// When SPDP next needs [`Participant::handle_timeout`].
    pub(crate) fn spdp_deadline(&self) -> Instant {
        self.remote
            .values()
            .filter_map(|r| r.reannounce.map(|(t, _)| t))
            .fold(self.spdp_next, Instant::min)
    }

    /// `prefix` sent us a submessage addressed to us (INFO_DST with our prefix): it knows us,
    /// so it needs no more re-announcements.
    pub(crate) fn known_by(&mut self, prefix: GuidPrefix) {
        if let Some(r) = self.remote.get_mut(&prefix) {
            r.reannounce = None;
        }
    }
}
