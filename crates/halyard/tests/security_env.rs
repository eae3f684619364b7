//! `HALYARD_SECURITY` names the identity a participant must use when the options come from
//! the environment (`ParticipantOptions::from_env`): such a participant never joins unsecured
//! when it is set but unusable. (Its own test binary: it sets a process-wide environment
//! variable.)
#![cfg(feature = "security")]

use halyard::{DomainParticipant, Error, ParticipantOptions};

#[test]
fn an_unusable_halyard_security_refuses_to_join() {
    std::env::set_var(halyard::SECURITY_ENV, "/nonexistent/alice");
    let from_env = ParticipantOptions::from_env().expect("options from the environment");
    match DomainParticipant::with_options(0, from_env) {
        Err(Error::Security(why)) => {
            assert!(why.what().contains("/nonexistent"), "{why}");
            // The security plugins' error is the cause.
            assert!(std::error::Error::source(&why).is_some(), "{why:?}");
        }
        Err(e) => panic!("expected a Security error, got {e}"),
        Ok(_) => panic!("a participant joined unsecured while HALYARD_SECURITY was set"),
    }
    std::env::remove_var(halyard::SECURITY_ENV);
    let from_env = ParticipantOptions::from_env().expect("options from the environment");
    DomainParticipant::with_options(0, from_env)
        .expect("without HALYARD_SECURITY a participant joins");
}
