//! XTypes type discovery (XTypes 1.3 §7.6.3): the types this participant registered, their
//! TypeInformation in SEDP, and the TypeLookup service over its four builtin endpoints.
//!
//! Design. A topic type with an XTypes description is registered once by type name
//! ([`Participant::register_type`]): its TypeInformation and every TypeObject it names are
//! decoded and their hashes checked then, so what we announce and serve is known good. SEDP
//! announcements of endpoints of that type name carry the TypeInformation; the TypeLookup
//! server answers `getTypes` from the registered objects and `getTypeDependencies` from the
//! registered TypeInformation's dependency lists.
//!
//! The client side ([`Participant::request_types`]) sends `getTypes` for identifiers not yet
//! known and keeps what replies bring in a bounded cache ([`MAX_CACHED_OBJECTS`]), each
//! object checked against its hash before it is kept; at most [`MAX_OUTSTANDING_REQUESTS`]
//! requests are remembered (the oldest is forgotten first). There are no timers here: the
//! request writer is reliable, and a caller that waits long without an answer (no peer had
//! matched yet, so the volatile request reached nobody) asks again.
//!
//! The builtin TypeLookup endpoints are reliable, VOLATILE and keyless, as Cyclone DDS makes
//! them (`builtin_volatile_xqos_*` in its ddsi_init.c). Replies go to every matched reply
//! reader; a client keeps only those that answer its own request writer. Like Cyclone, the
//! server ignores a request's `instanceName` and answers whatever it holds, and stays silent
//! when it holds none of the types asked for.

pub mod assign;
pub mod msg;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::event::ChangeKind;
use crate::participant::Participant;
use crate::time::Instant;
use crate::writer::NewChange;
use halyard_wire::{EntityId, Guid};
use halyard_xtypes::{
    EquivalenceKind, TypeIdentifier, TypeIdentifierWithSize, TypeInformation, TypeObject,
    XTypesError,
};
use msg::{Call, DependenciesOut, Reply, Request, Return, SampleIdentity, TypesOut};

/// Most TypeObjects the lookup cache keeps (the oldest are forgotten first).
pub const MAX_CACHED_OBJECTS: usize = 1024;
/// Most TypeLookup requests awaiting a reply that are remembered.
pub const MAX_OUTSTANDING_REQUESTS: usize = 32;
/// Most identifiers one request asks for.
pub const MAX_IDS_PER_REQUEST: usize = 256;
/// Most distinct type names a participant registers.
pub const MAX_REGISTERED_TYPES: usize = 4096;
/// Most TypeObjects one type description may hold.
pub const MAX_OBJECTS_PER_TYPE: usize = 4096;

/// A hashed TypeIdentifier as a map key: the kind octet and the 14-byte hash.
type HashKey = [u8; 15];

fn hash_key(ti: &TypeIdentifier) -> Option<HashKey> {
    match ti {
        TypeIdentifier::Hash { kind, hash } => {
            let mut k = [0u8; 15];
            k[0] = kind.octet();
            k[1..].copy_from_slice(hash);
            Some(k)
        }
        _ => None,
    }
}

fn key_identifier(k: &HashKey) -> Option<TypeIdentifier> {
    let kind = EquivalenceKind::from_octet(k[0])?;
    let mut hash = [0u8; 14];
    hash.copy_from_slice(&k[1..]);
    Some(TypeIdentifier::Hash { kind, hash })
}

/// Why a type description cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypeRegistrationError {
    /// The TypeInformation bytes do not decode.
    BadTypeInformation(XTypesError),
    /// TypeObject number `index` does not decode or cannot be hashed.
    BadTypeObject {
        /// Its position in the description.
        index: usize,
        /// The decoding error.
        error: XTypesError,
    },
    /// The TypeInformation names a hashed type (minimal or complete) no object has.
    MissingObject {
        /// The identifier without an object.
        identifier: TypeIdentifier,
    },
    /// TypeObject number `index` is named by nothing in the TypeInformation (its hash
    /// matches no identifier there): the description is inconsistent.
    UnnamedObject {
        /// Its position in the description.
        index: usize,
    },
    /// Another description is registered already under this type name.
    Conflict,
    /// [`MAX_REGISTERED_TYPES`] or [`MAX_OBJECTS_PER_TYPE`] would be exceeded.
    TooMany,
}

impl std::fmt::Display for TypeRegistrationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadTypeInformation(e) => write!(f, "the TypeInformation does not decode: {e}"),
            Self::BadTypeObject { index, error } => {
                write!(f, "TypeObject {index} does not decode: {error}")
            }
            Self::MissingObject { identifier } => write!(
                f,
                "the TypeInformation names {identifier:?} but no TypeObject has that hash"
            ),
            Self::UnnamedObject { index } => write!(
                f,
                "TypeObject {index} has a hash the TypeInformation does not name"
            ),
            Self::Conflict => write!(
                f,
                "another type description is registered under this type name"
            ),
            Self::TooMany => write!(f, "too many registered types or TypeObjects"),
        }
    }
}

impl std::error::Error for TypeRegistrationError {}

/// Why a type lookup cannot be started.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TypeLookupError {
    /// Only hashed identifiers (`EK_MINIMAL`, `EK_COMPLETE`) can be looked up.
    NotAHash,
    /// More than [`MAX_IDS_PER_REQUEST`] identifiers at once.
    TooManyIdentifiers,
}

impl std::fmt::Display for TypeLookupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAHash => write!(f, "only hashed TypeIdentifiers can be looked up"),
            Self::TooManyIdentifiers => {
                write!(
                    f,
                    "more than {MAX_IDS_PER_REQUEST} identifiers in one lookup"
                )
            }
        }
    }
}

impl std::error::Error for TypeLookupError {}

/// A registered topic type.
#[derive(Debug)]
struct LocalType {
    info: TypeInformation,
    /// The TypeInformation as announced (XCDR2 little-endian).
    info_bytes: Arc<Vec<u8>>,
}

/// The type-discovery state of a participant.
#[derive(Debug, Default)]
pub(crate) struct TypeService {
    /// Registered types by type name.
    local: BTreeMap<String, LocalType>,
    /// Objects of the registered types, by hash.
    local_objects: BTreeMap<HashKey, Arc<Vec<u8>>>,
    /// Objects learnt through TypeLookup, by hash, with their arrival order for eviction.
    cache: BTreeMap<HashKey, Arc<Vec<u8>>>,
    cache_order: VecDeque<HashKey>,
    /// Requests sent and not yet answered: sequence number and identifiers.
    outstanding: VecDeque<(i64, Vec<HashKey>)>,
    /// The last request sequence number used.
    request_sn: i64,
    /// Pending assignability decisions, verdicts and policies (see [`assign`]).
    pub(crate) assign: assign::AssignState,
}

/// The builtin TypeLookup pairs (writer, reader, announcer bit, detector bit).
pub(crate) const TL_PAIRS: [(EntityId, EntityId, u32, u32); 2] = {
    use halyard_wire::discovery::builtin_endpoint as be;
    [
        (
            EntityId::TL_SVC_REQUEST_WRITER,
            EntityId::TL_SVC_REQUEST_READER,
            be::TL_SVC_REQUEST_DATA_WRITER,
            be::TL_SVC_REQUEST_DATA_READER,
        ),
        (
            EntityId::TL_SVC_REPLY_WRITER,
            EntityId::TL_SVC_REPLY_READER,
            be::TL_SVC_REPLY_DATA_WRITER,
            be::TL_SVC_REPLY_DATA_READER,
        ),
    ]
};

/// The builtin endpoint set bits of the TypeLookup endpoints.
pub(crate) const TL_ENDPOINT_BITS: u32 = {
    use halyard_wire::discovery::builtin_endpoint as be;
    be::TL_SVC_REQUEST_DATA_WRITER
        | be::TL_SVC_REQUEST_DATA_READER
        | be::TL_SVC_REPLY_DATA_WRITER
        | be::TL_SVC_REPLY_DATA_READER
};

/// Decodes a registration's objects; checks every hashed identifier the information names
/// has an object and every object is named.
fn check_description(
    info: &TypeInformation,
    objects: &[&[u8]],
) -> Result<BTreeMap<HashKey, Arc<Vec<u8>>>, TypeRegistrationError> {
    if objects.len() > MAX_OBJECTS_PER_TYPE {
        return Err(TypeRegistrationError::TooMany);
    }
    let named: Vec<&TypeIdentifierWithSize> = [&info.minimal, &info.complete]
        .into_iter()
        .flat_map(|d| std::iter::once(&d.typeid_with_size).chain(d.dependent_typeids.iter()))
        .collect();
    let mut out = BTreeMap::new();
    for (index, bytes) in objects.iter().enumerate() {
        let bad = |error| TypeRegistrationError::BadTypeObject { index, error };
        let obj = TypeObject::from_xcdr2(bytes).map_err(bad)?;
        let id = obj.type_identifier().map_err(bad)?;
        if !named.iter().any(|n| n.type_id == id) {
            return Err(TypeRegistrationError::UnnamedObject { index });
        }
        // Kept as re-encoded (without any trailing padding the input had).
        let exact = obj.to_xcdr2_le().map_err(bad)?;
        if let Some(k) = hash_key(&id) {
            out.insert(k, Arc::new(exact));
        }
    }
    for n in named {
        if let Some(k) = hash_key(&n.type_id) {
            if !out.contains_key(&k) {
                return Err(TypeRegistrationError::MissingObject {
                    identifier: n.type_id.clone(),
                });
            }
        }
    }
    Ok(out)
}

impl Participant {
    pub(crate) fn create_typelookup_endpoints(&mut self) {
        for (w, r, _, _) in TL_PAIRS {
            self.create_volatile_builtin_pair(w, r);
        }
    }

    /// Registers the XTypes description of topic type `type_name` (XCDR2 little-endian
    /// bytes, as `halyard_cdr::TypeDescription` holds them): SEDP announcements of endpoints
    /// of this type name carry its TypeInformation from now on, and the TypeLookup server
    /// serves its objects. Registering the same description again is a no-op; returns the
    /// decoded TypeInformation.
    pub fn register_type(
        &mut self,
        type_name: &str,
        type_information: &[u8],
        type_objects: &[&[u8]],
    ) -> Result<TypeInformation, TypeRegistrationError> {
        let info = TypeInformation::from_xcdr2(type_information)
            .map_err(TypeRegistrationError::BadTypeInformation)?;
        if let Some(known) = self.types.local.get(type_name) {
            return if known.info == info {
                Ok(info)
            } else {
                Err(TypeRegistrationError::Conflict)
            };
        }
        if self.types.local.len() >= MAX_REGISTERED_TYPES {
            return Err(TypeRegistrationError::TooMany);
        }
        let objects = check_description(&info, type_objects)?;
        let info_bytes = info
            .to_xcdr2_le()
            .map_err(TypeRegistrationError::BadTypeInformation)?;
        self.types.local_objects.extend(objects);
        self.types.local.insert(
            type_name.to_string(),
            LocalType {
                info: info.clone(),
                info_bytes: Arc::new(info_bytes),
            },
        );
        Ok(info)
    }

    /// Announces local writer `id` again in SEDP: after the type of its name was registered,
    /// so that peers that discovered it without a TypeInformation learn it (a durability
    /// service's relay, whose type arrives by TypeLookup after the relay was announced).
    pub fn announce_writer_again(&mut self, now: Instant, id: EntityId) {
        self.announce_writer(now, id);
    }

    /// Announces `bytes` as the TypeInformation of registered type `type_name` from now on,
    /// whatever they hold: for tests of how peers take a malformed PID_TYPE_INFORMATION.
    /// Returns false if the type is not registered.
    #[doc(hidden)]
    pub fn danger_announce_type_information_bytes(
        &mut self,
        type_name: &str,
        bytes: Vec<u8>,
    ) -> bool {
        match self.types.local.get_mut(type_name) {
            Some(t) => {
                t.info_bytes = Arc::new(bytes);
                true
            }
            None => false,
        }
    }

    /// The TypeInformation registered for `type_name`, if any.
    pub fn registered_type(&self, type_name: &str) -> Option<&TypeInformation> {
        self.types.local.get(type_name).map(|t| &t.info)
    }

    /// The TypeInformation bytes SEDP announces for endpoints of `type_name`.
    pub(crate) fn announced_type_information(
        &self,
        type_name: &str,
    ) -> Option<halyard_wire::discovery::TypeInformationBytes> {
        self.types
            .local
            .get(type_name)
            .map(|t| halyard_wire::discovery::TypeInformationBytes {
                little_endian: true,
                xcdr2: t.info_bytes.as_ref().clone(),
            })
    }

    /// The TypeObject with identifier `id`, registered here or learnt by TypeLookup.
    pub fn type_object(&self, id: &TypeIdentifier) -> Option<TypeObject> {
        let k = hash_key(id)?;
        let bytes = self
            .types
            .local_objects
            .get(&k)
            .or_else(|| self.types.cache.get(&k))?;
        TypeObject::from_xcdr2(bytes).ok()
    }

    /// Asks the TypeLookup servers of the matched remote participants for the TypeObjects of
    /// `ids` not known yet (getTypes); returns how many were asked for (0: all known). The
    /// answers land in the cache [`Participant::type_object`] reads.
    pub fn request_types(
        &mut self,
        now: Instant,
        ids: &[TypeIdentifier],
    ) -> Result<usize, TypeLookupError> {
        if ids.len() > MAX_IDS_PER_REQUEST {
            return Err(TypeLookupError::TooManyIdentifiers);
        }
        let mut wanted = Vec::new();
        for id in ids {
            let k = hash_key(id).ok_or(TypeLookupError::NotAHash)?;
            let known =
                self.types.local_objects.contains_key(&k) || self.types.cache.contains_key(&k);
            if !known && !wanted.contains(&k) {
                wanted.push(k);
            }
        }
        if wanted.is_empty() {
            return Ok(0);
        }
        self.types.request_sn += 1;
        let sn = self.types.request_sn;
        let request = Request {
            id: SampleIdentity {
                writer: Guid::new(self.prefix, EntityId::TL_SVC_REQUEST_WRITER),
                sn,
            },
            // Addressed to no participant in particular (servers ignore the name; Cyclone
            // DDS writes the null GUID in that case too).
            instance_name: msg::instance_name(Guid::default()),
            call: Call::GetTypes(wanted.iter().filter_map(key_identifier).collect()),
        };
        if self.types.outstanding.len() >= MAX_OUTSTANDING_REQUESTS {
            self.types.outstanding.pop_front();
        }
        let n = wanted.len();
        self.types.outstanding.push_back((sn, wanted));
        self.write_builtin(now, EntityId::TL_SVC_REQUEST_WRITER, request.encode());
        Ok(n)
    }

    /// Requests sent and not answered yet.
    pub fn outstanding_type_requests(&self) -> usize {
        self.types.outstanding.len()
    }

    fn write_builtin(&mut self, now: Instant, writer: EntityId, payload: Vec<u8>) {
        let change = NewChange {
            kind: ChangeKind::Alive,
            key_hash: [0; 16],
            payload: Arc::new(payload),
            timestamp: None,
            original: None,
        };
        if let Some(w) = self.writers.get_mut(&writer) {
            if w.write(now, &mut self.out, &self.cfg, change, None)
                .is_err()
            {
                self.stats.typelookup_dropped += 1;
            }
        }
    }

    /// A sample of the TypeLookup request reader: answers it from the registered types.
    pub(crate) fn on_typelookup_request(&mut self, now: Instant, payload: &[u8]) {
        let req = match Request::decode(payload) {
            Ok(r) => r,
            Err(_) => {
                self.stats.typelookup_malformed += 1;
                return;
            }
        };
        let ret = match &req.call {
            Call::GetTypes(ids) => match self.serve_get_types(ids) {
                Some(out) => Return::GetTypes(Ok(out)),
                None => return,
            },
            Call::GetTypeDependencies { type_ids, .. } => match self.serve_dependencies(type_ids) {
                Some(out) => Return::GetTypeDependencies(Ok(out)),
                None => return,
            },
            Call::Unknown(_) => return,
        };
        let reply = Reply {
            related: req.id,
            remote_ex: 0,
            ret,
        };
        self.write_builtin(now, EntityId::TL_SVC_REPLY_WRITER, reply.encode());
    }

    fn serve_get_types(&self, ids: &[TypeIdentifier]) -> Option<TypesOut> {
        let mut out = TypesOut::default();
        for id in ids {
            let Some(bytes) = hash_key(id).and_then(|k| self.types.local_objects.get(&k)) else {
                continue;
            };
            if out.types.iter().any(|(t, _)| t == id) {
                continue;
            }
            out.types.push((id.clone(), bytes.as_ref().clone()));
            let top = self
                .types
                .local
                .values()
                .find(|t| t.info.complete.typeid_with_size.type_id == *id);
            if let Some(t) = top {
                let pair = (id.clone(), t.info.minimal.typeid_with_size.type_id.clone());
                out.complete_to_minimal.push(pair);
            }
        }
        (!out.types.is_empty()).then_some(out)
    }

    fn serve_dependencies(&self, ids: &[TypeIdentifier]) -> Option<DependenciesOut> {
        let mut out = DependenciesOut::default();
        for id in ids {
            for t in self.types.local.values() {
                for d in [&t.info.minimal, &t.info.complete] {
                    if d.typeid_with_size.type_id != *id {
                        continue;
                    }
                    for dep in &d.dependent_typeids {
                        if !out.dependent_typeids.contains(dep) {
                            out.dependent_typeids.push(dep.clone());
                        }
                    }
                }
            }
        }
        (!out.dependent_typeids.is_empty()).then_some(out)
    }

    /// A sample of the TypeLookup reply reader: keeps the objects that answer one of our
    /// requests and whose hashes check.
    pub(crate) fn on_typelookup_reply(&mut self, now: Instant, payload: &[u8]) {
        let reply = match Reply::decode(payload) {
            Ok(r) => r,
            Err(_) => {
                self.stats.typelookup_malformed += 1;
                return;
            }
        };
        // Cyclone DDS 0.10 answers with its own reply writer's GUID (byte-swapped) as the
        // relatedRequestId: the objects of such a reply are kept when one of our outstanding
        // requests asked for them (each is checked against its hash anyway).
        let ours = reply.related.writer == Guid::new(self.prefix, EntityId::TL_SVC_REQUEST_WRITER);
        let Return::GetTypes(Ok(out)) = reply.ret else {
            return;
        };
        for (id, bytes) in out.types {
            let asked = hash_key(&id).is_some_and(|k| {
                self.types
                    .outstanding
                    .iter()
                    .any(|(_, keys)| keys.contains(&k))
            });
            if ours || asked {
                self.accept_type_object(&id, bytes);
            }
        }
        let t = &mut self.types;
        t.outstanding.retain(|(sn, keys)| {
            (!ours || *sn != reply.related.sn)
                && !keys
                    .iter()
                    .all(|k| t.cache.contains_key(k) || t.local_objects.contains_key(k))
        });
        // Pairings waiting for these objects may be decided now.
        if !self.types.assign.pending.is_empty() {
            self.type_decision_timeouts(now, true);
        }
    }

    fn accept_type_object(&mut self, id: &TypeIdentifier, bytes: Vec<u8>) {
        let Some(k) = hash_key(id) else {
            return;
        };
        if self.types.cache.contains_key(&k) || self.types.local_objects.contains_key(&k) {
            return;
        }
        let checked = TypeObject::from_xcdr2(&bytes).and_then(|o| o.type_identifier());
        if checked.as_ref() != Ok(id) {
            self.stats.typelookup_bad_objects += 1;
            return;
        }
        let t = &mut self.types;
        if t.cache.len() >= MAX_CACHED_OBJECTS {
            if let Some(old) = t.cache_order.pop_front() {
                t.cache.remove(&old);
            }
        }
        t.cache.insert(k, Arc::new(bytes));
        t.cache_order.push_back(k);
    }
}

/// The hashed identifiers a TypeIdentifier refers to (itself, or those inside a plain
/// collection's element and key types).
fn hashes_in(ti: &TypeIdentifier, out: &mut Vec<TypeIdentifier>) {
    match ti {
        TypeIdentifier::Hash { .. } => out.push(ti.clone()),
        TypeIdentifier::PlainSequenceSmall { element, .. }
        | TypeIdentifier::PlainSequenceLarge { element, .. }
        | TypeIdentifier::PlainArraySmall { element, .. }
        | TypeIdentifier::PlainArrayLarge { element, .. } => hashes_in(element, out),
        TypeIdentifier::PlainMapSmall { element, key, .. }
        | TypeIdentifier::PlainMapLarge { element, key, .. } => {
            hashes_in(element, out);
            hashes_in(key, out);
        }
        _ => {}
    }
}

/// The hashed identifiers a TypeObject refers to (member, base, discriminator, aliased,
/// element and key types).
fn references<F: halyard_xtypes::Form>(
    body: &halyard_xtypes::TypeObjectBody<F>,
    out: &mut Vec<TypeIdentifier>,
) {
    use halyard_xtypes::TypeObjectBody as B;
    match body {
        B::Alias(a) => hashes_in(&a.related_type, out),
        B::Struct(s) => {
            hashes_in(&s.base_type, out);
            s.members
                .iter()
                .for_each(|m| hashes_in(&m.member_type_id, out));
        }
        B::Union(u) => {
            hashes_in(&u.discriminator_type, out);
            u.members.iter().for_each(|m| hashes_in(&m.type_id, out));
        }
        B::Sequence(s) => hashes_in(&s.element.type_id, out),
        B::Array(a) => hashes_in(&a.element.type_id, out),
        B::Map(m) => {
            hashes_in(&m.key.type_id, out);
            hashes_in(&m.element.type_id, out);
        }
        B::Enum(_) | B::Bitmask(_) => {}
    }
}

/// What [`Participant::type_closure`] found.
#[derive(Debug, Clone, Default)]
pub struct TypeClosure {
    /// The objects known, each with its identifier, roots first.
    pub found: Vec<(TypeIdentifier, TypeObject)>,
    /// The hashed identifiers reached but not known (ask for them with
    /// [`Participant::request_types`]).
    pub missing: Vec<TypeIdentifier>,
}

impl Participant {
    /// The TypeObjects of `roots` and of every type they refer to, transitively, as far as
    /// they are known here (registered or learnt); the identifiers reached but not known are
    /// listed as missing. Visits at most [`MAX_CACHED_OBJECTS`] types.
    pub fn type_closure(&self, roots: &[TypeIdentifier]) -> TypeClosure {
        let mut closure = TypeClosure::default();
        let mut seen: Vec<TypeIdentifier> = Vec::new();
        let mut queue: VecDeque<TypeIdentifier> = roots.iter().cloned().collect();
        while let Some(ti) = queue.pop_front() {
            if seen.contains(&ti) || seen.len() >= MAX_CACHED_OBJECTS {
                continue;
            }
            seen.push(ti.clone());
            let Some(obj) = self.type_object(&ti) else {
                if hash_key(&ti).is_some() {
                    closure.missing.push(ti);
                }
                continue;
            };
            let mut refs = Vec::new();
            match &obj {
                TypeObject::Minimal(b) => references(b, &mut refs),
                TypeObject::Complete(b) => references(b, &mut refs),
            }
            queue.extend(refs);
            closure.found.push((ti, obj));
        }
        closure
    }
}
