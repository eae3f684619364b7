//! A process asked to run secured (`HALYARD_SECURITY`) never joins a domain unprotected: until
//! the security plugins are wired into the core, participant creation fails and says why.
//! (Its own test binary: it sets a process-wide environment variable.)

use halyard::{DomainParticipant, Error};

#[test]
fn halyard_security_set_refuses_to_join_unprotected() {
    std::env::set_var(halyard::SECURITY_ENV, "/nonexistent/alice");
    match DomainParticipant::new(0) {
        Err(Error::Unsupported { feature, detail }) => {
            assert!(feature.contains("HALYARD_SECURITY"), "{feature}");
            assert!(detail.contains("unprotected"), "{detail}");
        }
        Err(e) => panic!("expected Unsupported, got {e}"),
        Ok(_) => panic!("a participant joined unprotected while HALYARD_SECURITY was set"),
    }
    std::env::remove_var(halyard::SECURITY_ENV);
    DomainParticipant::new(0).expect("without HALYARD_SECURITY a participant joins");
}
