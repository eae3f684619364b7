//! What a Publisher and a Subscriber share: their QoS (partitions, group data, presentation,
//! entity factory), the id their endpoints refer to them by, and the nesting of
//! `begin_coherent_changes` / `begin_access`.

use crate::error::{Error, Result};
use crate::participant::DomainParticipant;
use crate::qos::{GroupQos, QosPolicyId};
use halyard_core::wire::EntityId;
use halyard_wire::qos::{EndpointQos, PresentationAccessScope};
use std::sync::{Mutex, PoisonError};

/// A publisher's or subscriber's state.
pub(crate) struct Group {
    pub(crate) participant: DomainParticipant,
    qos: Mutex<GroupQos>,
    /// Its entity in the protocol core: its endpoints refer to it by it, and it is announced
    /// with them as PID_GROUP_ENTITYID (GROUP coherent sets are the core's).
    pub(crate) id: EntityId,
    /// Open begin calls (they nest).
    nesting: Mutex<u32>,
}

impl Group {
    /// A publisher's (`publisher`) or subscriber's state.
    pub(crate) fn new(participant: DomainParticipant, qos: GroupQos, publisher: bool) -> Self {
        let id = participant
            .shared
            .drive(|st, _| st.core.create_group(publisher));
        Group {
            participant,
            qos: Mutex::new(qos),
            id,
            nesting: Mutex::new(0),
        }
    }

    /// True if its PRESENTATION asks for coherent access at GROUP scope.
    pub(crate) fn group_coherent(&self) -> bool {
        let p = self.qos().presentation;
        p.coherent_access && p.access_scope == PresentationAccessScope::Group
    }

    pub(crate) fn qos(&self) -> GroupQos {
        self.qos
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Changes PARTITION and GROUP_DATA (PRESENTATION is immutable) of the group and of every
    /// endpoint it created, which are announced and matched again.
    pub(crate) fn set_qos(&self, qos: GroupQos) -> Result<()> {
        if qos.presentation != self.qos().presentation {
            return Err(Error::ImmutablePolicy {
                policy: QosPolicyId::Presentation,
            });
        }
        self.participant.shared.drive(|st, now| {
            let writers: Vec<_> = st
                .writers
                .iter()
                .filter(|(_, w)| w.group == self.id)
                .map(|(id, w)| (*id, w.qos.clone()))
                .collect();
            let readers: Vec<_> = st
                .readers
                .iter()
                .filter(|(_, r)| r.group == self.id)
                .map(|(id, r)| (*id, r.cache.qos().clone()))
                .collect();
            // Access control first: a partition the permissions do not grant to one of the
            // group's endpoints changes none of them.
            for id in writers
                .iter()
                .map(|(id, _)| id)
                .chain(readers.iter().map(|(id, _)| id))
            {
                st.core
                    .check_local_partitions(*id, &qos.partition)
                    .map_err(Error::NotAllowedBySecurity)?;
            }
            for (id, mut q) in writers {
                q.partition = qos.partition.clone();
                q.group_data = qos.group_data.clone();
                crate::writer::apply_qos(st, now, id, q)?;
            }
            for (id, mut q) in readers {
                q.partition = qos.partition.clone();
                q.group_data = qos.group_data.clone();
                crate::reader::apply_qos(st, now, id, q)?;
            }
            Ok::<_, Error>(())
        })?;
        *self.qos.lock().unwrap_or_else(PoisonError::into_inner) = qos;
        Ok(())
    }

    /// A begin call: returns the nesting depth it opened.
    pub(crate) fn open(&self) -> u32 {
        let mut depth = self.nesting.lock().unwrap_or_else(PoisonError::into_inner);
        *depth += 1;
        *depth
    }

    /// An end call: returns the depth left, or `PreconditionNotMet` (saying `what`) if
    /// nothing was open.
    pub(crate) fn close(&self, what: &'static str) -> Result<u32> {
        let mut depth = self.nesting.lock().unwrap_or_else(PoisonError::into_inner);
        if *depth == 0 {
            return Err(Error::PreconditionNotMet(what));
        }
        *depth -= 1;
        Ok(*depth)
    }

    /// True while a begin call is open.
    pub(crate) fn is_open(&self) -> bool {
        *self.nesting.lock().unwrap_or_else(PoisonError::into_inner) > 0
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let id = self.id;
        self.participant
            .shared
            .drive(|st, _| st.core.delete_group(id));
    }
}

/// Fills what an endpoint QoS leaves empty or default from its publisher's or subscriber's
/// QoS (or, for a QoS change, from the endpoint's current QoS): partitions, group data,
/// presentation, representations.
pub(crate) fn inherit(qos: &mut EndpointQos, from: &GroupQos, representations: &[i16]) {
    if qos.presentation == Default::default() {
        qos.presentation = from.presentation;
    }
    if qos.partition.is_empty() {
        qos.partition = from.partition.clone();
    }
    if qos.group_data.is_empty() {
        qos.group_data = from.group_data.clone();
    }
    if qos.data_representation.is_empty() {
        qos.data_representation = representations.to_vec();
    }
}

/// For a QoS change: fills what `qos` leaves empty or default from the endpoint's `current`
/// QoS, as [`inherit`] does from a publisher's or subscriber's at creation.
pub(crate) fn keep_current(qos: &mut EndpointQos, current: &EndpointQos) {
    let group = GroupQos {
        partition: current.partition.clone(),
        group_data: current.group_data.clone(),
        presentation: current.presentation,
        ..GroupQos::default()
    };
    inherit(qos, &group, &current.data_representation);
}

/// The writers of publisher `group`.
pub(crate) fn group_writers(
    st: &crate::runtime::State,
    group: EntityId,
) -> Vec<halyard_wire::EntityId> {
    st.writers
        .iter()
        .filter(|(_, w)| w.group == group)
        .map(|(id, _)| *id)
        .collect()
}
