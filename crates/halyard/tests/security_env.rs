//! `HALYARD_SECURITY` names the identity a participant must use: a participant never joins
//! unsecured when it is set but unusable. (Its own test binary: it sets a process-wide
//! environment variable.)

use halyard::{DomainParticipant, Error};

#[test]
fn an_unusable_halyard_security_refuses_to_join() {
    std::env::set_var(halyard::SECURITY_ENV, "/nonexistent/alice");
    match DomainParticipant::new(0) {
        Err(Error::Security(why)) => assert!(why.contains("/nonexistent"), "{why}"),
        Err(e) => panic!("expected a Security error, got {e}"),
        Ok(_) => panic!("a participant joined unsecured while HALYARD_SECURITY was set"),
    }
    std::env::remove_var(halyard::SECURITY_ENV);
    DomainParticipant::new(0).expect("without HALYARD_SECURITY a participant joins");
}
