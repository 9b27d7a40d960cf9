//! Issue 4 §4: the cache and "nothing lost silently", between real
//! processes. The clients here register their handlers on command (so a
//! test decides what is cached before a handler exists) and can hold their
//! progress thread (so their ring lags deterministically).
//!
//! Child commands: `REGISTER <code|*>` → `REGISTERED <ref>` (prints every
//! event that handler sees as `EVENT code=.. source=.. seq=.. lost=..`);
//! `HOLD` → a handler blocks the progress thread until `RELEASE`
//! (`HELD` once it is blocked); `PING` → `PONG`.

mod procs;

use fastpmix::client::{Client, EVENTS_LOST, EVENTS_LOST_COUNT};
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Key, Nspace, Proc, Status, Value};
use procs::{ClientProc, ROLE_ENV};
use std::io::{BufRead, Write};
use std::sync::mpsc;

const CHILD: &str = "child_cache_client";
const SEQ: Key = Key::from_static("test.seq");
const HOLD_CODE: i32 = -5900;
const TRIGGER_CODE: i32 = -5901;

#[test]
fn child_cache_client() {
    if std::env::var(ROLE_ENV).is_err() {
        return;
    }
    println!(); // end libtest's "test child_cache_client ... " line
    let c = Client::init().unwrap_or_else(|s| {
        println!("\nINITFAILED {}", s.0);
        std::process::exit(3)
    });
    println!("\nREADY");
    let _ = std::io::stdout().flush();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = std::sync::Mutex::new(release_rx);
    let release_rx = std::sync::Arc::new(release_rx);
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["REGISTER", code] => {
                let r = c.register(printer(code)).unwrap();
                println!("REGISTERED {}", r.0);
            }
            // The printer is registered by a handler, from the progress
            // thread (a PROC_LOCAL trigger event).
            ["REGISTER_IN_HANDLER", code] => {
                let (inner, code) = (c.clone(), code.to_string());
                let (tx, rx) = mpsc::channel();
                let trigger = in_handler(&c, TRIGGER_CODE, move || {
                    let _ = tx.send(inner.register(printer(&code)));
                });
                let r = rx.recv().unwrap().unwrap();
                c.deregister(trigger).unwrap();
                println!("REGISTERED {}", r.0);
            }
            ["HOLD"] => {
                let rx = release_rx.clone();
                in_handler(&c, HOLD_CODE, move || {
                    println!("HELD");
                    let _ = std::io::stdout().flush();
                    let _ = rx.lock().unwrap().recv();
                });
            }
            ["RELEASE"] => release_tx.send(()).unwrap(),
            ["PING"] => {
                let (tx, rx) = mpsc::channel();
                c.engine().notify_nb(
                    Notification::new(Status(-9999), c.me(), DataRange::PROC_LOCAL),
                    move |_| {
                        let _ = tx.send(());
                    },
                );
                let _ = rx.recv();
                println!("PONG");
            }
            _ => println!("UNKNOWN {line}"),
        }
        let _ = std::io::stdout().flush();
    }
    std::process::exit(0);
}

/// Runs `f` once in a handler, on the progress thread: a handler for
/// `code`, then a PROC_LOCAL event of that code. Returns the handler.
fn in_handler(
    c: &Client,
    code: i32,
    f: impl Fn() + Send + Sync + 'static,
) -> fastpmix::event::HandlerRef {
    let r = c
        .register(Registration::new(
            &[Status(code)],
            move |inv: Invocation| {
                f();
                inv.complete(Status::SUCCESS, vec![]);
            },
        ))
        .unwrap();
    c.engine()
        .notify(Notification::new(
            Status(code),
            c.me(),
            DataRange::PROC_LOCAL,
        ))
        .unwrap();
    r
}

/// A handler for `code` (`*`: a default handler) that prints every event
/// as `EVENT code=… source=… seq=… lost=…`.
fn printer(code: &str) -> Registration {
    let codes: Vec<Status> = match code {
        "*" => vec![],
        c => vec![Status(c.parse().unwrap())],
    };
    Registration::new(&codes, |inv: Invocation| {
        let field = |k: &Key| {
            inv.info()
                .iter()
                .find(|i| i.key == *k)
                .map(|i| format!("{:?}", i.value))
                .unwrap_or_else(|| "-".into())
        };
        println!(
            "EVENT code={} source={} seq={} lost={}",
            inv.status().0,
            inv.source(),
            field(&SEQ),
            field(&EVENTS_LOST_COUNT)
        );
        let _ = std::io::stdout().flush();
        inv.complete(Status::SUCCESS, vec![]);
    })
}

fn server(cache: Option<usize>) -> Server {
    let mut b = Server::builder();
    if let Some(n) = cache {
        b = b.cache_size(n);
    }
    let s = b.start().unwrap();
    s.register_nspace(&Nspace::new("a").unwrap(), vec![])
        .unwrap();
    s
}

fn connect(s: &Server, rank: u32) -> ClientProc {
    let p = Proc::new("a", rank).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let _ = s.register_client(&p, uid, gid);
    let env = s.setup_fork(&p).unwrap();
    ClientProc::spawn(CHILD, p, &env)
}

fn host_event(s: &Server, code: Status, range: DataRange, seq: u64) {
    let src = Proc::new("rm", 7).unwrap();
    s.notify(Notification::new(code, src, range).info(Info::new(SEQ, Value::Uint64(seq))))
        .unwrap();
}

/// Waits until client `rank` of namespace `a` has read everything in its
/// ring. Its progress thread dispatches what it read before it looks at its
/// queue again, so a `PING` after this comes back after that dispatch.
fn wait_drained(s: &Server, rank: u32) {
    let deadline = std::time::Instant::now() + procs::HANG;
    loop {
        let st = s
            .namespaces()
            .into_iter()
            .find(|n| n.nspace.as_str() == "a")
            .unwrap();
        let c = st.clients.iter().find(|c| c.rank.0 == rank).unwrap();
        if c.cursor == Some(st.head) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "client {rank} never read its ring"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Registers a handler and returns the events it saw once a PING round
/// trip proves the replay (queued right at activation) has run.
fn register_and_collect(c: &mut ClientProc, code: &str) -> Vec<String> {
    c.send(&format!("REGISTER {code}"));
    c.expect("REGISTERED");
    c.sync()
}

#[test]
fn environment_events_are_replayed_to_a_new_handler_once_in_arrival_order_with_their_real_source() {
    let s = server(None);
    let down = Status::EVENT_NODE_DOWN;
    for i in 0..3 {
        host_event(&s, down, DataRange::LOCAL, i);
    }
    host_event(&s, Status::EVENT_NODE_OFFLINE, DataRange::LOCAL, 99);
    // Connected after the events: they come from the server's cache.
    let mut late = connect(&s, 0);
    let got = register_and_collect(&mut late, &down.0.to_string());
    assert_eq!(
        got,
        (0..3)
            .map(|i| format!("EVENT code={} source=rm:7 seq=Uint64({i}) lost=-", down.0))
            .collect::<Vec<_>>(),
        "oldest first, once, the real source, only matching codes"
    );
    // A second handler gets them too (each new registration), the first
    // does not get them again.
    let got = register_and_collect(&mut late, &down.0.to_string());
    assert_eq!(got.len(), 3, "{got:?}");
    // Events after the registration arrive once, through the ring.
    host_event(&s, down, DataRange::LOCAL, 3);
    let a = late.expect("EVENT ");
    let b = late.expect("EVENT ");
    assert!(
        a.contains("seq=Uint64(3)") && b.contains("seq=Uint64(3)"),
        "{a} {b}"
    );
    assert!(late.sync().is_empty(), "exactly once per handler");
}

/// I4 §4 (cached environment events are replayed to a newly registered
/// matching handler): also to one registered by another handler, on the
/// progress thread, which cannot wait for its own queue. Until the
/// registration was deferred it got no replay there.
#[test]
fn a_handler_registered_from_a_handler_gets_the_cached_events_replayed() {
    let s = server(None);
    let down = Status::EVENT_NODE_DOWN;
    for i in 0..3 {
        host_event(&s, down, DataRange::LOCAL, i);
    }
    let mut late = connect(&s, 0);
    late.send(&format!("REGISTER_IN_HANDLER {}", down.0));
    late.expect("REGISTERED");
    assert_eq!(
        late.sync(),
        (0..3)
            .map(|i| format!("EVENT code={} source=rm:7 seq=Uint64({i}) lost=-", down.0))
            .collect::<Vec<_>>(),
        "oldest first, once"
    );
    host_event(&s, down, DataRange::LOCAL, 3);
    assert!(late.expect("EVENT ").contains("seq=Uint64(3)"));
    assert!(late.sync().is_empty(), "exactly once");
}

#[test]
fn a_connected_client_replays_environment_events_it_saw_before_registering() {
    let s = server(None);
    let mut c = connect(&s, 0);
    host_event(&s, Status::EVENT_NODE_DOWN, DataRange::LOCAL, 1);
    // The event went through c's ring before any handler existed: let the
    // client read and dispatch it (its engine caches it), then register.
    wait_drained(&s, 0);
    c.sync();
    let got = register_and_collect(&mut c, "*");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].starts_with(&format!("EVENT code={} ", Status::EVENT_NODE_DOWN.0)),
        "{got:?}"
    );
}

#[test]
fn do_not_cache_events_are_not_replayed() {
    let s = server(None);
    let src = Proc::new("rm", 7).unwrap();
    s.notify(
        Notification::new(Status::EVENT_NODE_DOWN, src, DataRange::LOCAL)
            .info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true)),
    )
    .unwrap();
    host_event(&s, Status::EVENT_NODE_OFFLINE, DataRange::LOCAL, 1);
    let mut c = connect(&s, 0);
    let got = register_and_collect(&mut c, "*");
    assert_eq!(got.len(), 1, "only the cacheable one: {got:?}");
    assert!(
        got[0].contains(&format!("code={} ", Status::EVENT_NODE_OFFLINE.0)),
        "{got:?}"
    );
}

#[test]
fn job_events_wait_for_clients_that_have_not_connected_yet() {
    let s = server(None);
    let mut early = connect(&s, 0);
    register_and_collect(&mut early, "-5100");
    // Rank 1 is registered but not connected when the job event is sent.
    let p1 = Proc::new("a", 1).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    s.register_client(&p1, uid, gid).unwrap();
    let job = Proc::new("a", 0).unwrap();
    s.notify(
        Notification::new(Status(-5100), job, DataRange::NAMESPACE)
            .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    let mut late = connect(&s, 1);
    let got = register_and_collect(&mut late, "-5100");
    assert_eq!(
        got,
        vec!["EVENT code=-5100 source=a:0 seq=Uint64(1) lost=-".to_string()]
    );
    // The connected client's handler took it through the ring: a job event
    // that was received is not offered to a later registration.
    early.expect("EVENT code=-5100 ");
    assert!(register_and_collect(&mut early, "-5100").is_empty());
    // Released once every owed client got it.
    let report = s.namespaces();
    assert_eq!(report.len(), 1);
}

#[test]
fn a_job_event_evicted_before_its_client_connected_is_reported_as_lost() {
    let s = server(Some(2));
    let p = Proc::new("a", 0).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    s.register_client(&p, uid, gid).unwrap();
    for i in 0..3 {
        s.notify(
            Notification::new(Status(-5200), p, DataRange::NAMESPACE)
                .info(Info::new(SEQ, Value::Uint64(i))),
        )
        .unwrap();
    }
    let mut c = connect(&s, 0);
    let got = register_and_collect(&mut c, "*");
    assert_eq!(
        got,
        vec![
            "EVENT code=-5200 source=a:0 seq=Uint64(1) lost=-".to_string(),
            "EVENT code=-5200 source=a:0 seq=Uint64(2) lost=-".to_string(),
            format!(
                "EVENT code={} source={} seq=- lost=Uint64(1)",
                EVENTS_LOST.0,
                s.me()
            ),
        ]
    );
}

#[test]
fn a_client_that_lags_a_ring_behind_is_told_exactly_how_many_events_it_lost() {
    let s = server(None);
    let mut c = connect(&s, 0);
    register_and_collect(&mut c, "-5300");
    register_and_collect(&mut c, &EVENTS_LOST.0.to_string());
    c.send("HOLD");
    c.expect("HELD");
    let total = 2000u64; // the ring holds 512
    for i in 0..total {
        host_event(&s, Status(-5300), DataRange::LOCAL, i);
    }
    c.send("RELEASE");
    let mut seen = 0u64;
    let mut lost = 0u64;
    let mut last = None;
    while seen + lost < total {
        let l = c.expect("EVENT ");
        if l.starts_with("EVENT code=-5300 ") {
            let seq: u64 = l
                .split("seq=Uint64(")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            assert!(last.is_none_or(|p| seq > p), "in order: {l}");
            last = Some(seq);
            seen += 1;
        } else {
            let n: u64 = l
                .split("lost=Uint64(")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            lost += n;
        }
    }
    assert_eq!(
        seen + lost,
        total,
        "every event delivered or counted as lost"
    );
    assert!(lost > 0, "the ring holds 512: a held client must lag");
    assert_eq!(last, Some(total - 1), "the newest arrives");
}

#[test]
fn a_job_event_no_handler_took_is_offered_to_the_next_matching_registration() {
    let s = server(None);
    let mut c = connect(&s, 0);
    let job = Proc::new("a", 5).unwrap();
    s.notify(
        Notification::new(Status(-5400), job, DataRange::NAMESPACE)
            .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    // Read and dispatched while no handler matched: kept, not dropped.
    wait_drained(&s, 0);
    c.sync();
    let got = register_and_collect(&mut c, "-5400");
    assert_eq!(
        got,
        vec!["EVENT code=-5400 source=a:5 seq=Uint64(1) lost=-".to_string()]
    );
}
