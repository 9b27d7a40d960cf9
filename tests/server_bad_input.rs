//! Bad input: hostile or broken peers of the server. The test
//! process embeds the server (with a recording host) and speaks the control
//! protocol itself where a real client could not misbehave; well-behaved
//! clients are this test binary re-executed (`tests/procs`). After every
//! bad input the server must go on serving them.
//!
//! "Must not arrive" checks are ordered, not timed: the same source sends a
//! LOCAL sentinel through the same path afterwards, and a receiver that saw
//! the sentinel would have seen the event before it.

mod common;
mod procs;

use common::host::{Answers, RecordingHost};
use fastpmix::event::EventClass;
use fastpmix::internals::ring::{Segment, SubmitError, Submitter};
use fastpmix::internals::wire::control::{
    self, ArchivedReply, FrameError, Request, PROTOCOL_VERSION,
};
use fastpmix::internals::wire::{event_to_record, WireEvent};
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Nspace, Proc, Status, Value};
use procs::{ClientProc, HANG, ROLE_ENV};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

const CHILD: &str = "child_client";
const SENTINEL: i32 = -5000;
const EVENTS_LOST: i32 = -3001;
/// Events of a flooding client (not recorded by the host).
const FLOOD: i32 = -7000;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

/// A server with namespace `a`: client processes a:0 and a:1, and ranks
/// from 10 up registered for manual connections from this process.
struct Node {
    server: Server,
    host: Arc<RecordingHost>,
    clients: Vec<ClientProc>,
    next_spare: u32,
    /// Codes for the liveness checks.
    next_code: i32,
}

fn own_ids() -> (u32, u32) {
    // SAFETY: getuid/getgid cannot fail.
    unsafe { (libc::getuid(), libc::getgid()) }
}

fn node() -> Node {
    // FLOOD events are counted, not kept.
    let host = RecordingHost::with(Answers {
        count_only: Some(FLOOD),
        ..Answers::default()
    });
    let server = Server::builder().host(host.clone()).start().unwrap();
    let (uid, gid) = own_ids();
    server
        .register_nspace(&Nspace::new("a").unwrap(), vec![])
        .unwrap();
    let mut clients = Vec::new();
    for r in 0..2 {
        let q = p("a", r);
        server.register_client(&q, uid, gid).unwrap();
        clients.push(ClientProc::spawn(CHILD, q, &server.setup_fork(&q).unwrap()));
    }
    Node {
        server,
        host,
        clients,
        next_spare: 10,
        next_code: -5900,
    }
}

impl Node {
    fn client(&mut self, rank: u32) -> &mut ClientProc {
        let q = p("a", rank);
        self.clients.iter_mut().find(|c| c.proc == q).unwrap()
    }

    /// A newly registered rank of `a` for a manual connection.
    fn spare(&mut self) -> Proc {
        let q = p("a", self.next_spare);
        self.next_spare += 1;
        let (uid, gid) = own_ids();
        self.server.register_client(&q, uid, gid).unwrap();
        q
    }

    /// The server still serves: a:0 → a:1 and a:1 → a:0 events flow, and a
    /// new connection is accepted, welcomed and finalized.
    fn still_serves(&mut self) {
        for (from, to) in [(0, 1), (1, 0)] {
            let code = self.next_code;
            self.next_code -= 1;
            let c = self.client(from);
            c.send(&format!("NOTIFY {code} {}", DataRange::LOCAL.0));
            assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
            self.client(to)
                .expect(&format!("EVENT code={code} source=a:{from} "));
        }
        let q = self.spare();
        let mut m = Manual::connect(&self.server);
        assert!(
            matches!(m.hello(&q), Answer::Welcome { .. }),
            "a new client is welcomed"
        );
        m.send(&Request::Finalize);
        assert_eq!(m.answer(), Answer::Done(0));
        for c in &mut self.clients {
            let evs = c.sync();
            assert!(
                !evs.iter()
                    .any(|l| l.starts_with(&format!("EVENT code={EVENTS_LOST} "))),
                "{}: no events lost: {evs:?}",
                c.proc
            );
        }
    }

    /// a:`from` notifies `code` with `range` (and custom targets), then a
    /// LOCAL sentinel: the `NOTIFIED` status of the first, and, per client
    /// (a:0, a:1), the EVENT lines it saw up to the sentinel.
    fn notify_then_sentinel(&mut self, from: u32, cmd: &str) -> (i32, Vec<Vec<String>>) {
        let c = self.client(from);
        c.send(cmd);
        let st: i32 = c.expect("NOTIFIED ")["NOTIFIED ".len()..].parse().unwrap();
        c.send(&format!("NOTIFY {SENTINEL} {}", DataRange::LOCAL.0));
        assert_eq!(c.expect("NOTIFIED"), "NOTIFIED 0");
        let mut seen = Vec::new();
        for c in &mut self.clients {
            c.expect(&format!("EVENT code={SENTINEL} "));
            seen.push(c.take_events());
        }
        // The host hears of the events once the server routed them.
        common::wait_routed(&self.server);
        (st, seen)
    }
}

fn has(lines: &[String], code: i32) -> bool {
    lines
        .iter()
        .any(|l| l.starts_with(&format!("EVENT code={code} ")))
}

/// What the server answered on a manual connection.
#[derive(Debug, PartialEq)]
enum Answer {
    Welcome {
        segment: String,
        client: u32,
    },
    Done(i32),
    Refused(i32),
    /// Another reply (e.g. a tool's).
    Other,
    /// The server closed the connection.
    Closed,
}

/// This process speaking the control protocol.
struct Manual {
    s: UnixStream,
}

impl Manual {
    fn connect(server: &Server) -> Manual {
        let s = UnixStream::connect(server.address()).unwrap();
        s.set_read_timeout(Some(HANG)).unwrap();
        Manual { s }
    }

    fn send(&mut self, r: &Request) {
        control::send(&mut self.s, r).unwrap();
    }

    /// Sends bytes; a server that already closed is fine.
    fn raw(&mut self, bytes: &[u8]) {
        let _ = self.s.write_all(bytes);
    }

    fn hello_as(&mut self, version: u32, nspace: &str, rank: u32) -> Answer {
        self.send(&Request::Hello {
            version,
            nspace: nspace.into(),
            rank,
        });
        self.answer()
    }

    fn hello(&mut self, q: &Proc) -> Answer {
        self.hello_as(PROTOCOL_VERSION, q.nspace.as_str(), q.rank.0)
    }

    /// The next reply, or `Closed`. Panics after [`HANG`].
    fn answer(&mut self) -> Answer {
        match control::read_body(&mut self.s) {
            Ok(body) => {
                let r = control::reply(&body).expect("the server sends valid replies");
                if let ArchivedReply::Welcome {
                    segment, client, ..
                } = r
                {
                    Answer::Welcome {
                        segment: segment.as_str().to_owned(),
                        client: client.to_native(),
                    }
                } else if let ArchivedReply::Refused { status, .. } = r {
                    Answer::Refused(status.to_native())
                } else if let ArchivedReply::Done { status } = r {
                    Answer::Done(status.to_native())
                } else {
                    Answer::Other
                }
            }
            Err(FrameError::Closed) => Answer::Closed,
            Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                Answer::Closed
            }
            Err(e) => panic!("no answer from the server: {e}"),
        }
    }

    /// Refused with `status`, then disconnected.
    fn assert_refused_and_closed(&mut self, status: Status, what: &str) {
        assert_eq!(self.answer(), Answer::Refused(status.0), "{what}");
        assert_eq!(self.answer(), Answer::Closed, "{what}: then disconnected");
    }
}

// ------------------------------------------------------------- Hello

#[test]
fn hello_naming_an_unregistered_namespace_is_refused_with_not_found() {
    let mut n = node();
    let mut m = Manual::connect(&n.server);
    assert_eq!(
        m.hello_as(PROTOCOL_VERSION, "no-such-namespace", 0),
        Answer::Refused(Status::ERR_NOT_FOUND.0)
    );
    assert_eq!(m.answer(), Answer::Closed);
    n.still_serves();
}

#[test]
fn hello_naming_an_unregistered_rank_is_refused_with_not_found() {
    let mut n = node();
    let mut m = Manual::connect(&n.server);
    m.send(&Request::Hello {
        version: PROTOCOL_VERSION,
        nspace: "a".into(),
        rank: 7,
    });
    m.assert_refused_and_closed(Status::ERR_NOT_FOUND, "unregistered rank");
    let mut m = Manual::connect(&n.server);
    m.send(&Request::Hello {
        version: PROTOCOL_VERSION,
        nspace: "a".into(),
        rank: fastpmix::Rank::WILDCARD.0,
    });
    assert!(
        matches!(m.answer(), Answer::Refused(_)),
        "the wildcard rank is no client"
    );
    n.still_serves();
}

#[test]
fn hello_with_another_protocol_version_is_refused_with_not_supported() {
    let mut n = node();
    for v in [0, PROTOCOL_VERSION + 1, u32::MAX] {
        let q = n.spare();
        let mut m = Manual::connect(&n.server);
        m.send(&Request::Hello {
            version: v,
            nspace: "a".into(),
            rank: q.rank.0,
        });
        m.assert_refused_and_closed(Status::ERR_NOT_SUPPORTED, &format!("version {v}"));
    }
    n.still_serves();
}

#[test]
fn hello_with_an_invalid_namespace_is_refused() {
    let mut n = node();
    for ns in ["x".repeat(300), "a\0b".to_string(), String::new()] {
        let mut m = Manual::connect(&n.server);
        m.send(&Request::Hello {
            version: PROTOCOL_VERSION,
            nspace: ns.clone(),
            rank: 0,
        });
        assert!(
            matches!(m.answer(), Answer::Refused(_)),
            "namespace {:?}",
            &ns[..ns.len().min(8)]
        );
        assert_eq!(m.answer(), Answer::Closed);
    }
    n.still_serves();
}

#[test]
fn hello_claiming_an_already_connected_proc_is_refused_and_the_connected_one_keeps_working() {
    let mut n = node();
    // a:0 is a connected client process.
    let mut m = Manual::connect(&n.server);
    m.send(&Request::Hello {
        version: PROTOCOL_VERSION,
        nspace: "a".into(),
        rank: 0,
    });
    assert!(
        matches!(m.answer(), Answer::Refused(_)),
        "a second connection as a:0"
    );
    assert_eq!(m.answer(), Answer::Closed);
    // And a manual client claimed twice.
    let q = n.spare();
    let mut first = Manual::connect(&n.server);
    assert!(matches!(first.hello(&q), Answer::Welcome { .. }));
    let mut second = Manual::connect(&n.server);
    assert!(matches!(second.hello(&q), Answer::Refused(_)));
    assert_eq!(second.answer(), Answer::Closed);
    first.send(&Request::Finalize);
    assert_eq!(
        first.answer(),
        Answer::Done(0),
        "the first connection stays"
    );
    n.still_serves();
}

#[test]
fn a_second_hello_on_an_authenticated_connection_is_refused_and_disconnected() {
    let mut n = node();
    let q = n.spare();
    let mut m = Manual::connect(&n.server);
    assert!(matches!(m.hello(&q), Answer::Welcome { .. }));
    let other = n.spare();
    m.send(&Request::Hello {
        version: PROTOCOL_VERSION,
        nspace: "a".into(),
        rank: other.rank.0,
    });
    assert!(matches!(m.answer(), Answer::Refused(_)));
    assert_eq!(m.answer(), Answer::Closed);
    n.still_serves();
}

// ------------------------------------------------------------- identity

#[test]
fn hello_from_a_peer_whose_uid_or_gid_differs_from_the_registered_one_is_refused_with_no_permissions(
) {
    let mut n = node();
    let (uid, gid) = own_ids();
    let other_uid = uid.wrapping_add(12345);
    // Another namespace: a namespace's clients all share one uid.
    let u = Nspace::new("u").unwrap();
    n.server.register_nspace(&u, vec![]).unwrap();
    let q = p("u", 0);
    if n.server.register_client(&q, other_uid, gid).is_err() {
        eprintln!("cannot give a ring to uid {other_uid} (not root): uid case skipped");
    } else {
        let mut m = Manual::connect(&n.server);
        m.send(&Request::Hello {
            version: PROTOCOL_VERSION,
            nspace: "u".into(),
            rank: 0,
        });
        m.assert_refused_and_closed(Status::ERR_NO_PERMISSIONS, "uid differs");
    }
    // Same uid, another gid.
    let g = p("a", 99);
    n.server
        .register_client(&g, uid, gid.wrapping_add(54321))
        .unwrap();
    let mut m = Manual::connect(&n.server);
    m.send(&Request::Hello {
        version: PROTOCOL_VERSION,
        nspace: "a".into(),
        rank: 99,
    });
    m.assert_refused_and_closed(Status::ERR_NO_PERMISSIONS, "gid differs");
    n.still_serves();
}

#[test]
fn a_namespace_ring_belongs_to_the_uid_its_clients_are_registered_with() {
    use std::os::unix::fs::MetadataExt;
    let n = node();
    let (uid, _) = own_ids();
    let seg_of = |ns: &str| {
        n.server
            .namespaces()
            .into_iter()
            .find(|x| x.nspace.as_str() == ns)
            .unwrap()
            .segment
    };
    let meta = std::fs::metadata(format!("/dev/shm/{}", seg_of("a"))).unwrap();
    assert_eq!(meta.uid(), uid, "clients of the server's own uid");
    assert_eq!(meta.mode() & 0o777, 0o600, "owner-only");
    if uid != 0 {
        eprintln!("not root: the chown case is skipped");
        return;
    }
    let u = Nspace::new("u").unwrap();
    n.server.register_nspace(&u, vec![]).unwrap();
    n.server.register_client(&p("u", 0), 12345, 23456).unwrap();
    let meta = std::fs::metadata(format!("/dev/shm/{}", seg_of("u"))).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (12345, 23456), "chowned");
    assert_eq!(meta.mode() & 0o777, 0o600, "still owner-only");
    assert_eq!(
        n.server.register_client(&p("u", 1), 0, 0),
        Err(Status::ERR_BAD_PARAM),
        "a namespace's clients share its uid"
    );
}

// ------------------------------------------------------- control garbage

/// Deterministic pseudo-random bytes (xorshift64*).
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

#[test]
fn random_bytes_on_the_control_socket_are_refused_or_disconnected() {
    let mut n = node();
    for seed in 1..=24u64 {
        let len = [1, 3, 4, 7, 64, 4096, 70_000][seed as usize % 7];
        let mut m = Manual::connect(&n.server);
        m.raw(&noise(seed, len));
        // Whatever the bytes said, the connection ends once we stop writing;
        // every answer before is a valid reply (never a Welcome).
        let _ = m.s.shutdown(std::net::Shutdown::Write);
        loop {
            match m.answer() {
                Answer::Closed => break,
                Answer::Welcome { .. } => panic!("seed {seed}: welcomed by noise"),
                _ => {}
            }
        }
    }
    // A frame of noise with a plausible length, the connection left open.
    for seed in 100..108u64 {
        let body = noise(seed, 40);
        let mut frame = (body.len() as u32).to_le_bytes().to_vec();
        frame.extend_from_slice(&body);
        let mut m = Manual::connect(&n.server);
        m.raw(&frame);
        match m.answer() {
            Answer::Refused(_) => assert_eq!(m.answer(), Answer::Closed, "seed {seed}"),
            Answer::Closed => {}
            // Noise that decodes as a request a root tool may send.
            Answer::Done(_) | Answer::Other => {}
            a @ Answer::Welcome { .. } => panic!("seed {seed}: {a:?} to a frame of noise"),
        }
    }
    n.still_serves();
}

#[test]
fn a_frame_longer_than_1_mib_is_refused_and_disconnected() {
    let mut n = node();
    for len in [control::MAX_FRAME as u32 + 1, 2 << 20, u32::MAX] {
        let mut m = Manual::connect(&n.server);
        m.raw(&len.to_le_bytes());
        m.raw(&[0u8; 64]);
        m.assert_refused_and_closed(Status::ERR_BAD_PARAM, &format!("length {len}"));
    }
    // The oversized frame actually sent, after a valid Hello.
    let q = n.spare();
    let mut m = Manual::connect(&n.server);
    assert!(matches!(m.hello(&q), Answer::Welcome { .. }));
    let mut big = (control::MAX_FRAME as u32 + 16).to_le_bytes().to_vec();
    big.resize(4 + control::MAX_FRAME + 16, 0xAB);
    let writer = {
        let mut s = m.s.try_clone().unwrap();
        std::thread::spawn(move || {
            let _ = s.write_all(&big);
        })
    };
    let mut got = Vec::new();
    loop {
        match m.answer() {
            Answer::Closed => break,
            a => got.push(a),
        }
    }
    writer.join().unwrap();
    assert!(
        got.iter()
            .all(|a| *a == Answer::Refused(Status::ERR_BAD_PARAM.0)),
        "{got:?}"
    );
    n.still_serves();
}

#[test]
fn a_frame_that_is_not_a_valid_request_is_refused_and_disconnected() {
    let mut n = node();
    let bodies: Vec<Vec<u8>> = vec![
        vec![],
        vec![0xFF; 1],
        vec![0xFF; 32],
        // A valid Hello cut short.
        control::frame(&Request::Hello {
            version: PROTOCOL_VERSION,
            nspace: "a-namespace-longer-than-inline".into(),
            rank: 0,
        })[4..20]
            .to_vec(),
    ];
    for (i, body) in bodies.iter().enumerate() {
        let mut frame = (body.len() as u32).to_le_bytes().to_vec();
        frame.extend_from_slice(body);
        let mut m = Manual::connect(&n.server);
        m.raw(&frame);
        m.assert_refused_and_closed(Status::ERR_BAD_PARAM, &format!("body {i}"));
    }
    // A reply sent as a request may even validate as some request (the
    // archived enums overlap); it is refused all the same.
    let mut m = Manual::connect(&n.server);
    m.raw(&control::frame(&control::Reply::Done { status: 0 }));
    assert!(matches!(m.answer(), Answer::Refused(_)));
    assert_eq!(m.answer(), Answer::Closed);
    n.still_serves();
}

#[test]
fn a_client_request_before_hello_is_refused_and_disconnected() {
    let mut n = node();
    for r in [
        Request::Finalize,
        Request::RegisterEvents {
            codes: vec![Status::EVENT_NODE_DOWN.0],
        },
        Request::DeregisterEvents { codes: vec![-1] },
    ] {
        let mut m = Manual::connect(&n.server);
        m.send(&r);
        m.assert_refused_and_closed(Status::ERR_NO_PERMISSIONS, &format!("{r:?}"));
    }
    n.still_serves();
}

// ------------------------------------------------------ submission garbage

#[test]
fn garbage_in_a_submission_queue_is_dropped_and_routing_goes_on() {
    let mut n = node();
    let q = n.spare();
    let mut m = Manual::connect(&n.server);
    let (segment, entry) = match m.hello(&q) {
        Answer::Welcome { segment, client } => (segment, client),
        a => panic!("{a:?}"),
    };
    let seg = Segment::open(&segment, HANG).unwrap();
    let mut sub = Submitter::new(seg.region().clone(), entry);
    let record = procs::encoded;
    // The record schema allows any string; a namespace does not.
    let overlong = {
        let rec = event_to_record(&WireEvent {
            code: Status(-5202),
            source: q,
            range: DataRange::LOCAL,
            info: vec![],
            class: EventClass::Job,
            source_seq: 0,
            timestamp_ns: 0,
        });
        let mut rec = rec;
        rec.source.nspace = "n".repeat(300);
        rkyv::to_bytes::<rkyv::rancor::Error>(&rec)
            .unwrap()
            .to_vec()
    };
    let garbage: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("one byte", vec![0x42]),
        ("noise", noise(7, 200)),
        ("ones", vec![0xFF; 512]),
        ("range 200", record(-5203, q, DataRange(200), vec![])),
        (
            "proc-local from a client",
            record(-5204, q, DataRange::PROC_LOCAL, vec![]),
        ),
        (
            "custom range without targets",
            record(-5205, q, DataRange::CUSTOM, vec![]),
        ),
        (
            "wrongly typed attribute",
            record(
                -5206,
                q,
                DataRange::LOCAL,
                vec![Info::new(
                    attrs::PMIX_EVENT_CUSTOM_RANGE,
                    Value::String("not procs".into()),
                )],
            ),
        ),
        ("overlong source namespace", overlong),
    ];
    for (what, bytes) in &garbage {
        match sub.submit_bytes(bytes, Some(HANG)) {
            Ok(_) => {}
            Err(SubmitError::TooLarge { .. }) => panic!("{what}: too large for the test"),
            Err(e) => panic!("{what}: {e}"),
        }
    }
    // Then a valid record that claims to come from a:0.
    let good = record(-5210, p("a", 0), DataRange::LOCAL, vec![]);
    sub.submit_bytes(&good, Some(HANG)).unwrap();
    for c in &mut n.clients {
        let l = c.expect("EVENT code=-5210 ");
        assert!(
            l.starts_with(&format!("EVENT code=-5210 source={q} ")),
            "{}: the server stamps the authenticated source: {l}",
            c.proc
        );
        let before = c.take_events();
        assert!(
            before.is_empty(),
            "{}: nothing of the garbage came through: {before:?}",
            c.proc
        );
    }
    assert!(
        (-5206..=-5201).all(|c| n.host.upcalls(c).is_empty()),
        "nothing of the garbage reached the host"
    );
    m.send(&Request::Finalize);
    assert_eq!(
        m.answer(),
        Answer::Done(0),
        "the garbage submitter itself stays"
    );
    n.still_serves();
}

/// Hostile input: the fuzz corpus's records (tests/corpus/record), mutated,
/// through a live submission queue. Whatever a same-uid process writes
/// there, the server drops or routes it, never crashes, and everything it
/// routes carries the submitter's authenticated source.
#[test]
fn mutated_records_in_a_live_submission_queue_are_dropped_or_routed_with_the_real_source() {
    let mut n = node();
    let q = n.spare();
    let mut m = Manual::connect(&n.server);
    let (segment, entry) = match m.hello(&q) {
        Answer::Welcome { segment, client } => (segment, client),
        a => panic!("{a:?}"),
    };
    let seg = Segment::open(&segment, HANG).unwrap();
    let mut sub = Submitter::new(seg.region().clone(), entry);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/record");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty());
    let mut sent = 0;
    for seed in 1..=400u64 {
        let r = noise(seed, 16);
        let mut b = seeds[r[0] as usize % seeds.len()].clone();
        // 1–4 byte changes at random places, sometimes a truncation.
        for k in 0..=(r[1] % 4) as usize {
            let at = u16::from_le_bytes([r[2 + 2 * k], r[3 + 2 * k]]) as usize % b.len();
            b[at] = r[10 + k];
        }
        if r[15] % 8 == 0 {
            b.truncate(r[14] as usize % b.len());
        }
        if sub.submit_bytes(&b, Some(HANG)).is_ok() {
            sent += 1;
        }
    }
    assert!(sent > 300, "the queue took the records ({sent})");
    // A good record after them: a client that saw it has seen every mutated
    // record the server routed.
    let good = procs::encoded(-5219, p("a", 0), DataRange::LOCAL, vec![]);
    sub.submit_bytes(&good, Some(HANG)).unwrap();
    let me = format!("source={q} ");
    for c in &mut n.clients {
        let l = c.expect("EVENT code=-5219 ");
        assert!(l.contains(&me), "{}: {l}", c.proc);
        let routed = c.take_events();
        eprintln!("{}: {} mutated records routed here", c.proc, routed.len());
        for l in routed {
            assert!(
                l.contains(&me),
                "{}: another source came through: {l}",
                c.proc
            );
        }
    }
    let host = n.host.events.lock().unwrap().clone();
    assert!(
        host.iter().all(|e| e.source == q),
        "the host got a forged source: {host:?}"
    );
    n.still_serves();
    m.send(&Request::Finalize);
    assert_eq!(m.answer(), Answer::Done(0));
}

// ------------------------------------------------------- notify arguments

#[test]
fn a_custom_range_naming_unknown_procs_is_accepted_and_passed_up_to_the_host() {
    let mut n = node();
    let custom = DataRange::CUSTOM.0;
    for (code, targets, reaches_a1) in [
        (-5301, "nowhere:0", false),
        (-5302, "a:77", false),
        (-5303, "nowhere:*,a:1", true),
    ] {
        let (st, seen) = n.notify_then_sentinel(0, &format!("NOTIFY {code} {custom} {targets}"));
        assert_eq!(st, 0, "{targets}: accepted");
        assert_eq!(has(&seen[1], code), reaches_a1, "{targets}: a:1");
        let up = n.host.upcalls(code);
        assert_eq!(up.len(), 1, "{targets}: passed up (a remote target)");
        assert_eq!(up[0].source, p("a", 0));
    }
    n.still_serves();
}

#[test]
fn a_notify_with_an_oversized_info_returns_bad_param_and_reaches_no_other_process() {
    let mut n = node();
    let (st, seen) = n.notify_then_sentinel(0, "NOTIFY_BIG 102400 -5310 3");
    assert_eq!(Status(st), Status::ERR_BAD_PARAM);
    assert!(
        !has(&seen[1], -5310),
        "not delivered to a peer: {:?}",
        seen[1]
    );
    assert!(n.host.upcalls(-5310).is_empty(), "not passed up");
    n.still_serves();
}

#[test]

fn a_notify_with_an_oversized_info_is_not_delivered_to_the_generators_own_handlers() {
    let mut n = node();
    let (st, seen) = n.notify_then_sentinel(0, "NOTIFY_BIG 102400 -5311 3");
    assert_eq!(Status(st), Status::ERR_BAD_PARAM);
    assert!(
        !has(&seen[0], -5311),
        "a refused notify leaves no trace, not even locally: {:?}",
        seen[0]
    );
}

#[test]
fn a_notify_with_an_invalid_range_returns_bad_param_and_is_delivered_nowhere() {
    let mut n = node();
    for range in [8u8, 100, 200, 254] {
        let code = -5320 - range as i32;
        let (st, seen) = n.notify_then_sentinel(0, &format!("NOTIFY {code} {range}"));
        assert_eq!(Status(st), Status::ERR_BAD_PARAM, "range {range}");
        assert!(!has(&seen[0], code), "range {range}: not even locally");
        assert!(!has(&seen[1], code), "range {range}: not to a peer");
        assert!(
            n.host.upcalls(code).is_empty(),
            "range {range}: not passed up"
        );
    }
    n.still_serves();
}

#[test]
fn a_client_flooding_its_submission_queue_does_not_starve_other_clients() {
    let mut n = node();
    let s = Nspace::new("s").unwrap();
    n.server.register_nspace(&s, vec![]).unwrap();
    let (uid, gid) = own_ids();
    let s0 = p("s", 0);
    n.server.register_client(&s0, uid, gid).unwrap();
    let mut flood = ClientProc::spawn(CHILD, s0, &n.server.setup_fork(&s0).unwrap());
    // RM range: no local handlers, no ring, only the host (which counts).
    flood.send(&format!("NOTIFY_N 1000000000 {FLOOD} {}", DataRange::RM.0));
    let head = |n: &Node| *n.host.counted.lock().unwrap();
    let deadline = std::time::Instant::now() + HANG;
    while head(&n) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the flood never started"
        );
        std::thread::yield_now();
    }
    let before = head(&n);
    let t0 = std::time::Instant::now();
    n.still_serves();
    eprintln!(
        "flood: the liveness checks took {:?} while {} flood events were passed up",
        t0.elapsed(),
        head(&n) - before
    );
    assert!(head(&n) > before, "the flood went on meanwhile");
    let _ = flood.events_within(std::time::Duration::ZERO);
    assert!(
        !flood.seen.iter().any(|l| l.starts_with("NOTIFIED")),
        "the flood was still running"
    );
    flood.kill();
    n.still_serves();
}
