//! One control connection as the progress thread keeps it, and a Hello
//! that waits for its process's registration.

use crate::types::{Proc, Status};
use crate::wire::control::{FrameReader, PeerCred};
use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

/// A control connection: its socket, who it is once it said hello, and
/// what it registered.
pub(super) struct Conn {
    pub stream: UnixStream,
    pub frames: FrameReader,
    pub cred: PeerCred,
    /// Set once `Hello` was accepted: who, and the client-table entry.
    pub who: Option<(Proc, u32)>,
    pub pidfd: Option<OwnedFd>,
    /// Codes this client registered (for the host's reference counts).
    pub codes: Vec<Status>,
    pub finalized: bool,
    /// The host heard `client_finalized` for it already (at its
    /// `PMIx_Finalize`, before the reply).
    pub host_told: bool,
    /// Reply bytes the socket could not take yet (a `Welcome` with the job
    /// information of a large namespace exceeds a socket buffer).
    pub out: Vec<u8>,
    /// No request of it was accepted yet (`gate`: deadline and cap).
    pub pending: bool,
}

impl Conn {
    /// A connection just accepted: pending.
    pub(super) fn new(stream: UnixStream, cred: PeerCred) -> Conn {
        Conn {
            stream,
            frames: FrameReader::default(),
            cred,
            who: None,
            pidfd: None,
            codes: Vec::new(),
            finalized: false,
            host_told: false,
            out: Vec::new(),
            pending: true,
        }
    }
}

/// A Hello waiting for its process's registration.
pub(super) struct Parked {
    pub version: u32,
    pub nspace: String,
    pub rank: u32,
}

/// A duplicate of the pidfd of a connected process.
pub(super) fn pidfd_of(conns: &HashMap<u64, Conn>, p: &Proc) -> Option<OwnedFd> {
    conns
        .values()
        .find(|c| c.who.is_some_and(|(q, _)| q == *p))
        .and_then(|c| c.pidfd.as_ref())
        .and_then(|fd| fd.try_clone().ok())
}
