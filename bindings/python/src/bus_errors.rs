//! The exceptions of `pqkit.bus` and the mapping from the bus's errors to them. Its own module because both
//! the bus classes ([`crate::bus`]) and the runtime bridge ([`crate::runtime`]) raise them, and the bus builds
//! on the runtime.

use crate::PqkitError;
use pqkit_bus::Error;
use pyo3::create_exception;
use pyo3::prelude::*;

create_exception!(_pqkit, BusError, PqkitError, "A pqkit.bus operation failed (transport, handshake, envelope).");
create_exception!(_pqkit, Unauthorised, BusError, "The key server's policy does not allow this publish or subscribe.");
create_exception!(_pqkit, NoResponders, BusError, "A request reached no subscriber.");
create_exception!(_pqkit, BusTimeout, BusError, "A request or receive timed out.");
create_exception!(_pqkit, BusClosed, BusError, "The subscription or agent is closed.");
create_exception!(_pqkit, InvalidSubject, BusError, "A subject or pattern is not a valid NATS subject.");

/// The Python exception for a bus error: its kind picks the class, its message is the error's text.
pub(crate) fn bus_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Unauthorised { .. } => Unauthorised::new_err(msg),
        Error::NoResponders { .. } => NoResponders::new_err(msg),
        Error::Timeout => BusTimeout::new_err(msg),
        Error::Closed => BusClosed::new_err(msg),
        Error::InvalidSubject { .. } | Error::InvalidName => InvalidSubject::new_err(msg),
        _ => BusError::new_err(msg),
    }
}
