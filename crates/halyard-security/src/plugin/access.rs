//! Access control: whether an authenticated peer may join the domain, and whether a local or
//! remote endpoint may publish or subscribe to a topic in its partitions.

use super::*;

impl BuiltinSecurity {
    /// Access control for an authenticated peer: its permissions, signed by our permissions
    /// CA, must grant its certificate's subject the right to join our domain.
    pub(super) fn judge(&self, id: &PeerIdentity) -> (Admission, Option<(Permissions, String)>) {
        match self.judge_inner(id) {
            Ok(p) => (Admission::Admitted, Some(p)),
            Err(why) => (Admission::Refused(why), None),
        }
    }

    pub(super) fn judge_inner(&self, id: &PeerIdentity) -> Result<(Permissions, String), String> {
        let permissions = Permissions::from_smime(&id.permissions, &self.files.permissions_ca)
            .map_err(|e| format!("its permissions document: {e}"))?;
        let cert = openssl::x509::X509::from_pem(&id.certificate_pem)
            .map_err(|_| "its certificate does not parse".to_string())?;
        let subject = identity_subject(&cert);
        let grant = permissions
            .grant_for(&subject)
            .ok_or_else(|| format!("its permissions hold no grant for {subject:?}"))?;
        if self.rule.enable_join_access_control {
            if let Decision::Deny(reason) = grant.may_join(self.domain_id, (self.wall_clock)()) {
                return Err(format!(
                    "{subject:?} may not join domain {}: {reason}",
                    self.domain_id
                ));
            }
        }
        Ok((permissions, subject))
    }

    /// Whether the grant of `subject` in `permissions` lets it publish (`writer`) or subscribe
    /// to `topic` in `partitions`, where the governance asks for that check.
    pub(super) fn topic_access(
        &self,
        (permissions, subject): &(Permissions, String),
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        let Some(rule) = self.rule.topic_rule(topic) else {
            return Ok(());
        };
        let checked = if writer {
            rule.enable_write_access_control
        } else {
            rule.enable_read_access_control
        };
        if !checked {
            return Ok(());
        }
        let Some(grant) = permissions.grant_for(subject) else {
            return Err(format!("no grant for {subject:?}"));
        };
        let parts: Vec<&str> = partitions.iter().map(String::as_str).collect();
        let action = if writer {
            Action::Publish
        } else {
            Action::Subscribe
        };
        match grant.check(self.domain_id, action, topic, &parts, (self.wall_clock)()) {
            Decision::Allow(_) => Ok(()),
            Decision::Deny(reason) => Err(format!(
                "{subject:?} may not {} topic {topic:?} in partitions {parts:?}: {reason}",
                if writer { "publish" } else { "subscribe to" }
            )),
        }
    }

    pub(super) fn local_topic_access(
        &self,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        self.topic_access(&self.own, topic, partitions, writer)
    }

    pub(super) fn remote_topic_access(
        &self,
        source: GuidPrefix,
        topic: &str,
        partitions: &[String],
        writer: bool,
    ) -> Result<(), String> {
        match self.peers.get(&source).and_then(|p| p.permissions.as_ref()) {
            Some(granted) => self.topic_access(granted, topic, partitions, writer),
            // Admitted without authentication (allow_unauthenticated_participants): only
            // topics without access control.
            None => match self.rule.topic_rule(topic) {
                Some(r)
                    if (writer && r.enable_write_access_control)
                        || (!writer && r.enable_read_access_control) =>
                {
                    Err(
                        "an unauthenticated participant may not use an access-controlled topic"
                            .into(),
                    )
                }
                _ => Ok(()),
            },
        }
    }
}
