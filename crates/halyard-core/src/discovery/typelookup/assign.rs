//! Assignability between type versions when matching (XTypes 1.3 §7.6.3.4, §7.2.4).
//!
//! Design. When a local and a remote endpoint of one topic and type name both announce
//! TypeInformation and the types differ, the pairing is not matched at once: it becomes a
//! *pending decision* while the remote type's TypeObjects (complete ones when both sides
//! announce complete identifiers, which carry member names; minimal ones otherwise) are
//! fetched through the TypeLookup client ([`Participant::request_types`]), asked again every
//! [`TYPE_LOOKUP_RETRY`] for what is still missing. Once every object is known, the writer's
//! and the reader's types are built ([`halyard_xtypes::TypeRegistry::build`]) and judged with
//! [`halyard_xtypes::assignable`] under the reader's TypeConsistencyEnforcement: assignable
//! pairings match; the others are refused, reported as incompatible QoS with policy
//! TYPE_CONSISTENCY_ENFORCEMENT (as Cyclone DDS does; the DCPS API has no INCONSISTENT_TOPIC
//! here), counted in `Stats::type_not_assignable` and listed with their reason
//! ([`Participant::type_refusals`]). DISALLOW_TYPE_COERCION refuses any two different types
//! without looking them up.
//!
//! Falling back. When the types cannot be judged, the pairing is matched by type name as
//! before type discovery, and counted in `Stats::type_name_fallback_matches`: the peer
//! announces no TypeLookup service (its SPDP builtin endpoint set), its objects did not arrive
//! within [`TYPE_LOOKUP_TIMEOUT`], [`MAX_PENDING_TYPE_DECISIONS`] decisions are pending
//! already, or a type uses what the dynamic type model does not support. Matching by name
//! keeps peers without TypeLookup (Cyclone DDS built without it, older Halyard) working, and
//! a sample that does not decode is then dropped by the reader, as before.
//!
//! With `force_type_validation`, a local reader with a type description refuses a writer that
//! announces none (XTypes 1.3 §7.6.3.4.1); otherwise such pairings match by name, as before.
//!
//! The reader's policy is the local reader's ([`Participant::set_reader_type_consistency`],
//! default XTypes' defaults); for a remote reader the defaults are assumed (its announced
//! PID_TYPE_CONSISTENCY_ENFORCEMENT is not parsed), and that reader judges the pairing itself
//! too. Verdicts are cached by (writer type, reader type, policy), at most
//! [`MAX_CACHED_VERDICTS`]. There are no clocks here: `now` is passed in, and the participant
//! runs [`Participant::type_decision_timeouts`] when [`Participant::type_decisions_due`] says.

use std::collections::VecDeque;
use std::time::Duration;

use super::{hash_key, HashKey, MAX_IDS_PER_REQUEST};
use crate::matching::{type_verdict, TypeVerdict};
use crate::participant::Participant;
use crate::time::Instant;
use halyard_wire::discovery::builtin_endpoint as be;
use halyard_wire::{EntityId, Guid};
use halyard_xtypes::{
    assignable, DynamicError, TypeConsistency, TypeConsistencyKind, TypeIdentifier,
    TypeInformation, TypeRegistry,
};

/// Most pairings waiting for TypeLookup at once (more are matched by name).
pub const MAX_PENDING_TYPE_DECISIONS: usize = 256;
/// Most pairings one remote endpoint may have waiting for TypeLookup.
pub const MAX_PENDING_PER_REMOTE: usize = 32;
/// Most assignability verdicts remembered (the oldest are forgotten first).
pub const MAX_CACHED_VERDICTS: usize = 256;
/// Most refusals [`Participant::type_refusals`] keeps (the oldest are forgotten first).
pub const MAX_TYPE_REFUSALS: usize = 64;
/// How long after asking TypeLookup for missing objects they are asked for again.
pub const TYPE_LOOKUP_RETRY: Duration = Duration::from_millis(500);
/// How long a pairing waits for the remote type before it is matched by name.
pub const TYPE_LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// What the type check says about a pairing whose other checks passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Match it.
    Match,
    /// Do not match it, for this reason.
    Refuse(String),
    /// Not decided yet: TypeLookup is under way.
    Wait,
}

/// A pairing waiting for the remote type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pending {
    remote_is_writer: bool,
    since: Instant,
    next_request: Instant,
}

/// A pairing refused because the types are not assignable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeRefusal {
    /// The local endpoint.
    pub local: EntityId,
    /// The remote endpoint.
    pub remote: Guid,
    /// Why (the failing rule and member path, or DISALLOW_TYPE_COERCION).
    pub reason: String,
}

/// Verdict cache key: writer type, reader type, policy bits.
pub(crate) type VerdictKey = (HashKey, HashKey, u8);

/// The assignability state of the type service.
#[derive(Debug, Default)]
pub(crate) struct AssignState {
    /// Pending decisions by (remote endpoint, local endpoint).
    pub(super) pending: std::collections::BTreeMap<(Guid, EntityId), Pending>,
    verdicts: std::collections::BTreeMap<VerdictKey, Result<(), String>>,
    verdict_order: VecDeque<VerdictKey>,
    /// TypeConsistencyEnforcement of local readers that set one.
    consistency: std::collections::BTreeMap<EntityId, TypeConsistency>,
    refusals: VecDeque<TypeRefusal>,
}

fn policy_bits(tc: &TypeConsistency) -> u8 {
    (tc.kind == TypeConsistencyKind::DisallowTypeCoercion) as u8
        | (tc.ignore_sequence_bounds as u8) << 1
        | (tc.ignore_string_bounds as u8) << 2
        | (tc.ignore_member_names as u8) << 3
        | (tc.prevent_type_widening as u8) << 4
        | (tc.force_type_validation as u8) << 5
}

/// The identifiers to judge (writer's, reader's): complete ones when both are hashes,
/// else minimal ones when both are, else none.
fn roots(w: &TypeInformation, r: &TypeInformation) -> Option<(TypeIdentifier, TypeIdentifier)> {
    for (a, b) in [
        (
            &w.complete.typeid_with_size.type_id,
            &r.complete.typeid_with_size.type_id,
        ),
        (
            &w.minimal.typeid_with_size.type_id,
            &r.minimal.typeid_with_size.type_id,
        ),
    ] {
        if hash_key(a).is_some() && hash_key(b).is_some() {
            return Some((a.clone(), b.clone()));
        }
    }
    None
}

/// What judging two built types gave: a verdict, or "cannot judge" (fall back to names).
enum Judged {
    Verdict(Result<(), String>),
    CannotJudge,
}

impl Participant {
    /// Sets the TypeConsistencyEnforcement QoS (XTypes 1.3 §7.6.3.4) local reader `reader`
    /// applies to the writers it matches; without it the XTypes defaults apply.
    pub fn set_reader_type_consistency(&mut self, reader: EntityId, tc: TypeConsistency) {
        if self.readers.contains_key(&reader) {
            self.types.assign.consistency.insert(reader, tc);
        }
    }

    /// The pairings refused because their types are not assignable, with why (the latest
    /// [`MAX_TYPE_REFUSALS`]).
    pub fn type_refusals(&self) -> impl Iterator<Item = &TypeRefusal> {
        self.types.assign.refusals.iter()
    }

    /// Pairings waiting for the remote type's objects.
    pub fn pending_type_decisions(&self) -> usize {
        self.types.assign.pending.len()
    }

    /// True while the pairing of remote endpoint `remote` with local endpoint `local` waits
    /// for the remote type's objects.
    pub(crate) fn type_decision_pending(&self, remote: Guid, local: EntityId) -> bool {
        !self.types.assign.pending.is_empty()
            && self.types.assign.pending.contains_key(&(remote, local))
    }

    /// Forgets what is kept about local reader `reader` (it was deleted).
    pub(crate) fn forget_type_consistency(&mut self, reader: EntityId) {
        self.types.assign.consistency.remove(&reader);
    }

    /// The type check of matching: local endpoint `local` (of type name `local_type`) and
    /// remote endpoint `remote` (`remote_is_writer`: a writer). See the module.
    pub(crate) fn type_gate(
        &mut self,
        now: Instant,
        local: EntityId,
        local_type: &str,
        remote: Guid,
        remote_is_writer: bool,
    ) -> Gate {
        let ed = if remote_is_writer {
            self.remote_writers.get(&remote)
        } else {
            self.remote_readers.get(&remote)
        };
        let theirs = ed
            .and_then(|e| e.type_information.as_ref())
            .and_then(crate::discovery::sedp::decode_type_information);
        let ours = self.types.local.get(local_type).map(|t| t.info.clone());
        let (w, r) = match remote_is_writer {
            true => (theirs.as_ref(), ours.as_ref()),
            false => (ours.as_ref(), theirs.as_ref()),
        };
        let tc = match remote_is_writer {
            true => self
                .types
                .assign
                .consistency
                .get(&local)
                .copied()
                .unwrap_or_default(),
            false => TypeConsistency::default(),
        };
        if remote_is_writer && tc.force_type_validation && theirs.is_none() && ours.is_some() {
            let why = "FORCE_TYPE_VALIDATION and the writer announced no type information";
            return self.refuse(local, remote, why.to_string());
        }
        let (Some(w), Some(r), TypeVerdict::NameFallback) = (w, r, type_verdict(w, r)) else {
            self.types.assign.pending.remove(&(remote, local));
            return Gate::Match;
        };
        if tc.kind == TypeConsistencyKind::DisallowTypeCoercion {
            let why = "DISALLOW_TYPE_COERCION and the writer's and reader's types differ";
            return self.refuse(local, remote, why.to_string());
        }
        let Some((wroot, rroot)) = roots(w, r) else {
            return self.fall_back(local, remote);
        };
        let key = match (hash_key(&wroot), hash_key(&rroot)) {
            (Some(a), Some(b)) => (a, b, policy_bits(&tc)),
            _ => return self.fall_back(local, remote),
        };
        if let Some(v) = self.types.assign.verdicts.get(&key).cloned() {
            return self.decided(local, remote, v);
        }
        let closure = self.type_closure(&[wroot.clone(), rroot.clone()]);
        if closure.missing.is_empty() {
            return match judge(&closure.found, &wroot, &rroot, &tc) {
                Judged::Verdict(v) => {
                    self.remember_verdict(key, v.clone());
                    self.decided(local, remote, v)
                }
                Judged::CannotJudge => self.fall_back(local, remote),
            };
        }
        self.await_types(now, local, remote, remote_is_writer, &closure.missing)
    }

    /// Asks for `missing` (at most every [`TYPE_LOOKUP_RETRY`]) and waits, or falls back when
    /// the peer cannot answer or waited long enough.
    fn await_types(
        &mut self,
        now: Instant,
        local: EntityId,
        remote: Guid,
        remote_is_writer: bool,
        missing: &[TypeIdentifier],
    ) -> Gate {
        let serves = be::TL_SVC_REQUEST_DATA_READER | be::TL_SVC_REPLY_DATA_WRITER;
        let peer_serves = self
            .remote
            .get(&remote.prefix)
            .is_some_and(|p| p.data.builtin_endpoints & serves == serves);
        if !peer_serves {
            return self.fall_back(local, remote);
        }
        let a = &mut self.types.assign;
        let entry = match a.pending.get(&(remote, local)) {
            Some(p) => *p,
            None => {
                let of_remote = a.pending.keys().filter(|(g, _)| *g == remote).count();
                if a.pending.len() >= MAX_PENDING_TYPE_DECISIONS
                    || of_remote >= MAX_PENDING_PER_REMOTE
                {
                    return self.fall_back(local, remote);
                }
                Pending {
                    remote_is_writer,
                    since: now,
                    next_request: now,
                }
            }
        };
        if now >= entry.since + TYPE_LOOKUP_TIMEOUT {
            return self.fall_back(local, remote);
        }
        let mut entry = entry;
        if now >= entry.next_request {
            let ask = &missing[..missing.len().min(MAX_IDS_PER_REQUEST)];
            // Only hashed identifiers are listed missing, and there are few enough of them.
            let _ = self.request_types(now, ask);
            entry.next_request = now + TYPE_LOOKUP_RETRY;
        }
        self.types.assign.pending.insert((remote, local), entry);
        Gate::Wait
    }

    fn fall_back(&mut self, local: EntityId, remote: Guid) -> Gate {
        self.types.assign.pending.remove(&(remote, local));
        self.stats.type_name_fallback_matches += 1;
        Gate::Match
    }

    fn decided(&mut self, local: EntityId, remote: Guid, v: Result<(), String>) -> Gate {
        match v {
            Ok(()) => {
                self.types.assign.pending.remove(&(remote, local));
                self.stats.type_assignable_matches += 1;
                Gate::Match
            }
            Err(why) => self.refuse(local, remote, why),
        }
    }

    fn refuse(&mut self, local: EntityId, remote: Guid, reason: String) -> Gate {
        let a = &mut self.types.assign;
        a.pending.remove(&(remote, local));
        self.stats.type_not_assignable += 1;
        let refusal = TypeRefusal {
            local,
            remote,
            reason: reason.clone(),
        };
        if !a.refusals.contains(&refusal) {
            if a.refusals.len() >= MAX_TYPE_REFUSALS {
                a.refusals.pop_front();
            }
            a.refusals.push_back(refusal);
        }
        Gate::Refuse(reason)
    }

    fn remember_verdict(&mut self, key: VerdictKey, v: Result<(), String>) {
        let a = &mut self.types.assign;
        if a.verdicts.len() >= MAX_CACHED_VERDICTS {
            if let Some(old) = a.verdict_order.pop_front() {
                a.verdicts.remove(&old);
            }
        }
        if a.verdicts.insert(key, v).is_none() {
            a.verdict_order.push_back(key);
        }
    }

    /// When a pending decision next needs attention (a retry or its timeout).
    pub(crate) fn type_decisions_due(&self) -> Option<Instant> {
        self.types
            .assign
            .pending
            .values()
            .map(|p| p.next_request.min(p.since + TYPE_LOOKUP_TIMEOUT))
            .min()
    }

    /// Takes up the pending decisions that are due (all of them with `all`, when a TypeLookup
    /// reply brought objects): matching is tried again, which asks again, decides or falls
    /// back. A decision whose endpoints are gone or no longer pair is dropped.
    pub(crate) fn type_decision_timeouts(&mut self, now: Instant, all: bool) {
        let due: Vec<((Guid, EntityId), bool)> = self
            .types
            .assign
            .pending
            .iter()
            .filter(|(_, p)| all || p.next_request <= now || p.since + TYPE_LOOKUP_TIMEOUT <= now)
            .map(|(k, p)| (*k, p.remote_is_writer))
            .collect();
        for ((remote, local), remote_is_writer) in due {
            if remote_is_writer {
                self.match_remote_writer(now, local, remote);
            } else {
                self.match_remote_reader(now, local, remote);
            }
            // Still pending without having been looked at (the pairing no longer reaches the
            // type check): forget it.
            let a = &mut self.types.assign;
            if a.pending
                .get(&(remote, local))
                .is_some_and(|p| p.next_request <= now)
            {
                a.pending.remove(&(remote, local));
            }
        }
    }
}

/// Builds both types from `found` and judges them.
fn judge(
    found: &[(TypeIdentifier, halyard_xtypes::TypeObject)],
    wroot: &TypeIdentifier,
    rroot: &TypeIdentifier,
    tc: &TypeConsistency,
) -> Judged {
    let mut reg = TypeRegistry::with_limit(found.len().max(1));
    for (id, obj) in found {
        if let Err(e) = reg.insert(id, obj.clone()) {
            return cannot_build(e);
        }
    }
    let (wt, rt) = match (reg.build(wroot), reg.build(rroot)) {
        (Ok(w), Ok(r)) => (w, r),
        (Err(e), _) | (_, Err(e)) => return cannot_build(e),
    };
    Judged::Verdict(assignable(&wt, &rt, tc).map_err(|e| e.to_string()))
}

/// A type that does not build: inconsistent objects are a verdict (refused); what the model
/// does not support, or a limit, leaves the pairing to name matching.
fn cannot_build(e: DynamicError) -> Judged {
    match e {
        DynamicError::Inconsistent { .. } | DynamicError::HashMismatch { .. } => {
            Judged::Verdict(Err(format!("the types do not resolve: {e}")))
        }
        _ => Judged::CannotJudge,
    }
}
