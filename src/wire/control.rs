//! The control channel between a client and its node server: a Unix-domain
//! stream socket carrying length-prefixed rkyv messages. It is the slow path
//! (connect, finalize, registrations the server must know about, job
//! management); events never travel here.
//!
//! Frame: `u32` little-endian length, then that many bytes of one archived
//! [`Request`] or [`Reply`], validated on receipt (the peer is untrusted).
//! Who the peer is comes from the kernel (`SO_PEERCRED`), never from a
//! message.
//!
//! A received frame is copied once, from the socket's bytes into its own
//! aligned buffer, and validated once: [`FrameReader::next_request`] (the
//! server's non-blocking sockets) and [`read_reply`] (the client's blocking
//! one) hand out a [`Frame`], which owns that buffer and reads as the
//! archived message without checking it again.

use rkyv::api::high::HighValidator;
use rkyv::bytecheck::CheckBytes;
use rkyv::util::AlignedVec;
use rkyv::{Archive, Deserialize, Portable, Serialize};
use shm_layout::record::{EventRecord, InfoRecord, ProcRecord};
use shm_layout::store::KvItem;
use std::io::{self, Read, Write};
use std::marker::PhantomData;
use std::os::fd::AsRawFd;

/// Version of this protocol; a `Hello` with another is refused.
pub const PROTOCOL_VERSION: u32 = 5;

/// Largest frame either side accepts (a peer announcing more is cut off).
pub const MAX_FRAME: usize = 1 << 20;

pub use messages::*;

// rkyv generates archived twins of these enums whose variant fields carry
// no docs; the documented originals are right here.
#[allow(missing_docs)]
mod messages {
    use super::*;

    /// Client → server.
    #[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[rkyv(derive(Debug))]
    #[rkyv(attr(allow(missing_docs)))]
    pub enum Request {
        /// First message: who the client says it is (checked against the
        /// registered client and the socket's peer credentials).
        Hello {
            /// Protocol version ([`PROTOCOL_VERSION`]).
            version: u32,
            /// Claimed namespace.
            nspace: String,
            /// Claimed rank.
            rank: u32,
        },
        /// The client registered handlers for these codes (the server tells its
        /// host about environment codes, reference-counted).
        RegisterEvents {
            /// Event codes (`pmix_status_t`).
            codes: Vec<i32>,
        },
        /// The client's last handler for these codes went away.
        DeregisterEvents {
            /// Event codes.
            codes: Vec<i32>,
        },
        /// `PMIx_Finalize`: the client is leaving on purpose.
        Finalize,
        /// A tool (same uid as the server, or root) injects an event, as
        /// OpenPMIx's `pevent` does. No `Hello` needed.
        ToolNotify {
            /// Event code.
            code: i32,
            /// `pmix_data_range_t`.
            range: u8,
            /// The source to stamp (a tool may speak for a namespace).
            source: ProcRecord,
            /// Attributes.
            info: Vec<InfoRecord>,
        },
        /// A tool asks for a readable state report (`fastpmix inspect`).
        Inspect,
        /// `PMIx_Allocation_request`. Answered by [`Reply::Result`] with the
        /// same `id`, possibly after other replies (the host decides when).
        Allocate {
            /// Caller-chosen request number, echoed in the result.
            id: u64,
            /// `pmix_alloc_directive_t`.
            directive: u8,
            /// Attributes.
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Job_control`.
        JobControl {
            /// Request number.
            id: u64,
            /// Targets; empty = the caller's namespace.
            targets: Vec<ProcRecord>,
            /// Directives.
            directives: Vec<InfoRecord>,
        },
        /// `PMIx_Process_monitor` (heartbeats never travel here: they are
        /// a counter in shared memory).
        Monitor {
            /// Request number.
            id: u64,
            /// The monitoring action.
            monitor: InfoRecord,
            /// Event code for alerts and updates.
            error: i32,
            /// Directives.
            directives: Vec<InfoRecord>,
        },
        /// `PMIx_Abort`: the host is asked to abort `targets` (empty: the
        /// caller's namespace). Answered by [`Reply::Result`].
        Abort {
            /// Request number.
            id: u64,
            /// The status the job should end with.
            status: i32,
            /// The message for the host to print.
            msg: String,
            /// Targets; empty = the caller's namespace.
            targets: Vec<ProcRecord>,
        },
        /// `PMIx_Log`.
        Log {
            /// Request number.
            id: u64,
            /// One message per item, keyed by channel.
            data: Vec<InfoRecord>,
            /// Directives.
            directives: Vec<InfoRecord>,
        },
        /// `PMIx_Fence`: answered by [`Reply::Result`] once every
        /// participant entered the same fence (or it failed).
        Fence {
            /// Request number.
            id: u64,
            /// Participants; empty = the caller's namespace (a wildcard
            /// rank = every registered rank of that namespace).
            procs: Vec<ProcRecord>,
            /// Attributes (`PMIX_TIMEOUT`, `PMIX_COLLECT_DATA`).
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Commit`: the items `PMIx_Put` since the last commit (not
        /// answered: a later request on the same socket sees them stored).
        Commit {
            /// (scope, key, value) in put order.
            items: Vec<KvItem>,
        },
        /// `PMIx_Get` the client could not answer from its own data:
        /// answered by [`Reply::Result`] with the value as the one info
        /// (`key` → value), once the data is there (or it failed).
        Get {
            /// Request number.
            id: u64,
            /// Whose data.
            proc: ProcRecord,
            /// The key.
            key: String,
            /// Directives (`PMIX_TIMEOUT`, `PMIX_IMMEDIATE`,
            /// `PMIX_DATA_SCOPE`, `PMIX_GET_REFRESH_CACHE`).
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Query_info`: answered by [`Reply::Result`] with one info
        /// per answered key (see `server::query`).
        Query {
            /// Request number.
            id: u64,
            /// The keys of each query.
            keys: Vec<Vec<String>>,
            /// The qualifiers of each query (as many lists as `keys`).
            qualifiers: Vec<Vec<InfoRecord>>,
        },
        /// `PMIx_Publish` (protocol 5): items and directives together,
        /// as the Standard passes them. Answered by [`Reply::Result`] once
        /// the host stored them.
        Publish {
            /// Request number.
            id: u64,
            /// Items and directives.
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Lookup`: answered by [`Reply::Result`] with one info per
        /// item found (`server::pubsub::pdata_to_info`).
        Lookup {
            /// Request number.
            id: u64,
            /// The keys.
            keys: Vec<String>,
            /// Directives (`PMIX_RANGE`, `PMIX_WAIT`, `PMIX_TIMEOUT`).
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Unpublish`.
        Unpublish {
            /// Request number.
            id: u64,
            /// The keys; empty = everything the caller published.
            keys: Vec<String>,
            /// Directives.
            info: Vec<InfoRecord>,
        },
        /// `PMIx_Spawn`: answered by [`Reply::Result`] with the new
        /// namespace as `PMIX_NSPACE`.
        Spawn {
            /// Request number.
            id: u64,
            /// Job-level directives.
            job_info: Vec<InfoRecord>,
            /// The applications.
            apps: Vec<AppRecord>,
        },
        /// `PMIx_Connect` (`disconnect` false) or `PMIx_Disconnect`:
        /// answered once the host completed the collective.
        Connect {
            /// Request number.
            id: u64,
            /// Disconnect rather than connect.
            disconnect: bool,
            /// The participants.
            procs: Vec<ProcRecord>,
            /// Directives.
            info: Vec<InfoRecord>,
        },
    }

    /// One application of a [`Request::Spawn`] (`pmix_app_t`).
    #[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[rkyv(derive(Debug))]
    #[rkyv(attr(allow(missing_docs)))]
    pub struct AppRecord {
        /// The executable.
        pub cmd: String,
        /// Its arguments.
        pub argv: Vec<String>,
        /// `NAME=value` environment entries.
        pub env: Vec<String>,
        /// Working directory (empty: the host decides).
        pub cwd: String,
        /// How many processes.
        pub maxprocs: i32,
        /// Its attributes.
        pub info: Vec<InfoRecord>,
    }

    /// Server → client.
    #[derive(Archive, Serialize, Deserialize, Debug, Clone, PartialEq)]
    #[rkyv(derive(Debug))]
    #[rkyv(attr(allow(missing_docs)))]
    pub enum Reply {
        /// Answer to `Hello`: where the client's ring is and what it may know.
        Welcome {
            /// Name of the namespace's ring segment (`shm_open`).
            segment: String,
            /// The client-table entry reserved for this client.
            client: u32,
            /// The server's own identity (source of the events it generates).
            server: ProcRecord,
            /// Job information registered for the client's namespace.
            job_info: Vec<InfoRecord>,
            /// Cached environment events and the job events published for
            /// this client before it connected, oldest first.
            replay: Vec<EventRecord>,
            /// Job events meant for this client that were evicted from the
            /// server's retention area before it connected, and environment
            /// events for it evicted from the cache.
            lost: u64,
            /// The server's cache capacity: the client keeps as many events
            /// for its own later registrations.
            cache_size: u32,
        },
        /// Answer to `Inspect`.
        Text {
            /// The report.
            text: String,
        },
        /// Answer to a request other than `Hello`.
        Done {
            /// `pmix_status_t`.
            status: i32,
        },
        /// Answer to a job-management request: status and results.
        Result {
            /// The request's `id`.
            id: u64,
            /// `pmix_status_t`.
            status: i32,
            /// Results (on a refusal, the reason).
            info: Vec<InfoRecord>,
        },
        /// The request (or the connection) is refused; the server closes the
        /// socket after a refused `Hello`.
        Refused {
            /// `pmix_status_t`.
            status: i32,
            /// Why, for the client's error message.
            why: String,
        },
    }
}

/// Serialises a message into one frame (length prefix included).
pub fn frame<T>(msg: &T) -> Vec<u8>
where
    T: for<'a> Serialize<
        rkyv::api::high::HighSerializer<
            AlignedVec,
            rkyv::ser::allocator::ArenaHandle<'a>,
            rkyv::rancor::Error,
        >,
    >,
{
    let body = rkyv::to_bytes::<rkyv::rancor::Error>(msg)
        .expect("encoding into a growable buffer cannot fail");
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The peer closed the connection (cleanly, between frames).
    Closed,
    /// A socket error.
    Io(io::Error),
    /// The peer announced a frame larger than [`MAX_FRAME`].
    TooLarge(usize),
    /// The bytes are not a valid message.
    Invalid(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Closed => write!(f, "connection closed by the peer"),
            FrameError::Io(e) => write!(f, "control socket: {e}"),
            FrameError::TooLarge(n) => write!(f, "frame of {n} bytes exceeds {MAX_FRAME}"),
            FrameError::Invalid(why) => write!(f, "invalid message: {why}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// One received message: its frame body in an aligned buffer of its own,
/// validated as `T` (an [`ArchivedRequest`] or [`ArchivedReply`]) when the
/// frame was made. It reads as `T` (`Deref`) without another check, and
/// owns its bytes, so it can be kept or sent to another thread while the
/// reader goes on.
pub struct Frame<T> {
    body: AlignedVec,
    _as: PhantomData<fn() -> T>,
}

/// A received request (the server side).
pub type RequestFrame = Frame<ArchivedRequest>;
/// A received reply (the client side).
pub type ReplyFrame = Frame<ArchivedReply>;

impl<T> Frame<T>
where
    T: Portable + for<'a> CheckBytes<HighValidator<'a, rkyv::rancor::Error>>,
{
    /// Validates `body` as a `T`: the one check this message gets.
    pub fn new(body: AlignedVec) -> Result<Frame<T>, FrameError> {
        rkyv::access::<T, rkyv::rancor::Error>(&body)
            .map_err(|e| FrameError::Invalid(e.to_string()))?;
        Ok(Frame {
            body,
            _as: PhantomData,
        })
    }
}

impl<T> Frame<T> {
    /// The frame body (without its length prefix).
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }
}

impl<T: Portable> std::ops::Deref for Frame<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: `Frame::new` (the only constructor) validated these bytes
        // as a `T` with `rkyv::access`, which reads the root at the same
        // position `access_unchecked` does; the buffer is owned here and
        // never handed out mutably, so the bytes are unchanged, and moving
        // the `Frame` does not move the heap buffer they live in (nor
        // change its 16-byte alignment).
        unsafe { rkyv::access_unchecked::<T>(&self.body) }
    }
}

impl<T: Portable + std::fmt::Debug> std::fmt::Debug for Frame<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

/// Accumulates bytes from a non-blocking socket and yields whole frames.
#[derive(Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// Reads what the socket has (non-blocking: stops at `WouldBlock`).
    /// `Err(Closed)` once the peer has closed and every byte was consumed.
    pub fn fill(&mut self, mut r: impl Read) -> Result<(), FrameError> {
        let mut chunk = [0u8; 4096];
        loop {
            match r.read(&mut chunk) {
                Ok(0) => return Err(FrameError::Closed),
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    if self.buf.len() > MAX_FRAME + 4 {
                        return Ok(()); // `next_*` reports the oversized frame
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
    }

    /// The next complete frame, if one is buffered, as a validated request.
    /// A frame that is not one is consumed and reported (`Invalid`); the
    /// frames after it can still be read.
    pub fn next_request(&mut self) -> Result<Option<RequestFrame>, FrameError> {
        self.next_frame()
    }

    /// The next complete frame, if one is buffered, as a validated reply
    /// (as [`FrameReader::next_request`]).
    pub fn next_reply(&mut self) -> Result<Option<ReplyFrame>, FrameError> {
        self.next_frame()
    }

    fn next_frame<T>(&mut self) -> Result<Option<Frame<T>>, FrameError>
    where
        T: Portable + for<'a> CheckBytes<HighValidator<'a, rkyv::rancor::Error>>,
    {
        let Some(prefix) = self.buf.first_chunk::<4>() else {
            return Ok(None);
        };
        let len = u32::from_le_bytes(*prefix) as usize;
        if len > MAX_FRAME {
            return Err(FrameError::TooLarge(len));
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        // The one copy: out of the byte stream into the frame's own
        // aligned buffer.
        let mut body = AlignedVec::with_capacity(len);
        body.extend_from_slice(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        Frame::new(body).map(Some)
    }
}

/// Validates a request body (tools and tests; a server reads
/// [`RequestFrame`]s from its [`FrameReader`]).
pub fn request(body: &[u8]) -> Result<&ArchivedRequest, FrameError> {
    rkyv::access::<ArchivedRequest, rkyv::rancor::Error>(body)
        .map_err(|e| FrameError::Invalid(e.to_string()))
}

/// Reads one frame body from a blocking socket, unchecked (tools and tests
/// check it with [`reply`]; a client reads with [`read_reply`]).
pub fn read_body(mut s: impl Read) -> Result<AlignedVec, FrameError> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::Closed,
        _ => FrameError::Io(e),
    })?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    let mut body = AlignedVec::with_capacity(len);
    body.resize(len, 0);
    s.read_exact(&mut body).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => FrameError::Closed,
        _ => FrameError::Io(e),
    })?;
    Ok(body)
}

/// Reads one reply from a blocking socket, straight into its aligned
/// buffer, and validates it once. `Err(Invalid)`: the frame was read whole
/// (the connection is still in step) but is not a reply.
pub fn read_reply(s: impl Read) -> Result<ReplyFrame, FrameError> {
    Frame::new(read_body(s)?)
}

/// Validates a reply body (tools and tests; a client reads
/// [`ReplyFrame`]s with [`read_reply`]).
pub fn reply(body: &[u8]) -> Result<&ArchivedReply, FrameError> {
    rkyv::access::<ArchivedReply, rkyv::rancor::Error>(body)
        .map_err(|e| FrameError::Invalid(e.to_string()))
}

/// Sends one frame on a blocking socket.
pub fn send<T>(mut s: impl Write, msg: &T) -> io::Result<()>
where
    T: for<'a> Serialize<
        rkyv::api::high::HighSerializer<
            AlignedVec,
            rkyv::ser::allocator::ArenaHandle<'a>,
            rkyv::rancor::Error,
        >,
    >,
{
    let f = frame(msg);
    if f.len() - 4 > MAX_FRAME {
        // Refused before a byte is written: the connection stays in step.
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a message of {} bytes exceeds the control channel's {MAX_FRAME}",
                f.len() - 4
            ),
        ));
    }
    s.write_all(&f)
}

/// What a failed [`send`] means for the caller: a message too large for a
/// frame is the caller's argument (`PMIX_ERR_BAD_PARAM`: nothing was sent,
/// the connection is intact); anything else is the connection
/// (`PMIX_ERR_UNREACH`).
pub fn send_status(e: &io::Error) -> crate::types::Status {
    if e.kind() == io::ErrorKind::InvalidInput {
        crate::types::Status::ERR_BAD_PARAM
    } else {
        crate::types::Status::ERR_UNREACH
    }
}

/// The kernel's account of a socket peer (`SO_PEERCRED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerCred {
    /// Process id at connect time.
    pub pid: i32,
    /// Effective user id.
    pub uid: u32,
    /// Effective group id.
    pub gid: u32,
}

/// Reads `SO_PEERCRED` of a connected Unix socket.
pub fn peer_cred(s: &impl AsRawFd) -> io::Result<PeerCred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes passed; the
    // kernel writes at most `len` bytes; the fd is borrowed for the call.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::other(format!(
            "getsockopt(SO_PEERCRED): {}",
            io::Error::last_os_error()
        )));
    }
    Ok(PeerCred {
        pid: cred.pid,
        uid: cred.uid,
        gid: cred.gid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_validated_once_and_an_invalid_one_is_consumed_without_stopping_the_stream() {
        let mut bytes = frame(&Request::Inspect);
        // Four bytes that are no request: an out-of-range variant tag.
        bytes.extend_from_slice(&4u32.to_le_bytes());
        bytes.extend_from_slice(&[0xff; 4]);
        bytes.extend_from_slice(&frame(&Request::Finalize));
        let mut r = FrameReader::default();
        // Split mid-frame, as a socket may deliver it.
        let (a, b) = bytes.split_at(3);
        r.buf.extend_from_slice(a);
        assert!(r.next_request().unwrap().is_none());
        r.buf.extend_from_slice(b);
        let first = r.next_request().unwrap().unwrap();
        assert!(matches!(&*first, ArchivedRequest::Inspect));
        assert!(matches!(r.next_request(), Err(FrameError::Invalid(_))));
        let last = r.next_request().unwrap().unwrap();
        assert!(matches!(&*last, ArchivedRequest::Finalize));
        assert!(r.next_request().unwrap().is_none());
        // The first frame is still readable after the reader moved on.
        assert!(matches!(&*first, ArchivedRequest::Inspect));
    }

    #[test]
    fn an_oversized_frame_is_refused_before_it_is_buffered() {
        let mut r = FrameReader::default();
        r.buf
            .extend_from_slice(&((MAX_FRAME + 1) as u32).to_le_bytes());
        assert!(matches!(r.next_reply(), Err(FrameError::TooLarge(_))));
    }

    #[test]
    fn a_reply_read_from_a_blocking_socket_is_one_validated_frame() {
        let bytes = frame(&Reply::Done { status: 7 });
        let f = read_reply(&bytes[..]).unwrap();
        assert!(matches!(&*f, ArchivedReply::Done { status } if status.to_native() == 7));
        assert_eq!(f.bytes().len(), bytes.len() - 4);
        let mut bad = 4u32.to_le_bytes().to_vec();
        bad.extend_from_slice(&[0xff; 4]);
        assert!(matches!(read_reply(&bad[..]), Err(FrameError::Invalid(_))));
    }
}
