//! The cache and "nothing lost silently", between real
//! processes. The clients here register their handlers on command (so a
//! test decides what is cached before a handler exists) and can hold their
//! progress thread (so their ring lags deterministically).
//!
//! Child commands: `REGISTER <code|*>` → `REGISTERED <ref>` (prints every
//! event that handler sees as `EVENT code=.. source=.. seq=.. lost=..`);
//! `HOLD` → a handler blocks the progress thread until `RELEASE`
//! (`HELD` once it is blocked); `NOTIFY_LOCAL <code> <seq> [nocache]` → a
//! PROC_LOCAL event, then `NOTIFIED`; `PING` → `PONG`. Each child also
//! registers, at start, a silent handler for [`NUDGE_CODE`] alone: a
//! client is woken only for codes it has handlers for, and the nudge is
//! what sends it to read its ring while it has no other (`wait_drained`).

mod procs;

use fastpmix::client::{Client, Params, EVENTS_LOST, EVENTS_LOST_COUNT};
use fastpmix::event::{Invocation, Notification, Registration};
use fastpmix::server::Server;
use fastpmix::types::attrs;
use fastpmix::{DataRange, Info, Key, Nspace, Proc, Status, Value};
use procs::{ClientProc, ROLE_ENV};
use std::io::{BufRead, Write};
use std::sync::mpsc;

const CHILD: &str = "child_cache_client";
const PARAMS_ENV: &str = "TEST_CLIENT_PARAMS";
const SEQ: Key = Key::from_static("test.seq");
const HOLD_CODE: i32 = -5900;
const TRIGGER_CODE: i32 = -5901;
/// The code of the events `wait_drained` sends (never cached, no output).
const NUDGE_CODE: i32 = -5902;

#[test]
fn child_cache_client() {
    if std::env::var(ROLE_ENV).is_err() {
        return;
    }
    println!(); // end libtest's "test child_cache_client ... " line
                // `PARAMS_ENV` = "<socket> <nspace> <rank>": explicit parameters
                // instead of the environment `setup_fork` gives.
    let c = match std::env::var(PARAMS_ENV) {
        Ok(v) => {
            let w: Vec<&str> = v.split(' ').collect();
            let me = Proc::new(w[1], w[2].parse().unwrap()).unwrap();
            Client::init_with(&Params::new(w[0], me))
        }
        Err(_) => Client::init(),
    }
    .unwrap_or_else(|s| {
        println!("\nINITFAILED {}", s.0);
        std::process::exit(3)
    });
    c.register(Registration::new(
        &[Status(NUDGE_CODE)],
        |inv: Invocation| inv.complete(Status::SUCCESS, vec![]),
    ))
    .unwrap();
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
            // A PROC_LOCAL event from this process's main thread.
            ["NOTIFY_LOCAL", code, seq, rest @ ..] => {
                let mut n =
                    Notification::new(Status(code.parse().unwrap()), c.me(), DataRange::PROC_LOCAL)
                        .info(Info::new(SEQ, Value::Uint64(seq.parse().unwrap())));
                if rest == ["nocache"] {
                    n = n.info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true));
                }
                c.notify(n).unwrap();
                println!("NOTIFIED");
            }
            ["PING"] => {
                let (tx, rx) = mpsc::channel();
                c.engine().notify_nb(
                    Notification::new(Status(-9999), c.me(), DataRange::PROC_LOCAL)
                        .info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true)),
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
    connect_in(s, "a", rank)
}

fn connect_in(s: &Server, ns: &str, rank: u32) -> ClientProc {
    let p = Proc::new(ns, rank).unwrap();
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
/// A client is woken only for the codes it has handlers for: a nudge (a
/// LOCAL event of [`NUDGE_CODE`], never cached) wakes it to read the
/// events before it that it has no handler for yet.
fn wait_drained(s: &Server, rank: u32) {
    s.notify(
        Notification::new(Status(NUDGE_CODE), s.me(), DataRange::LOCAL)
            .info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true)),
    )
    .unwrap();
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
    // The registration made in a handler completes after that handler
    // (deferred): its replay comes when it comes, so wait for three events,
    // then check that nothing else came.
    let got: Vec<String> = (0..3).map(|_| late.expect("EVENT ")).collect();
    assert_eq!(
        got,
        (0..3)
            .map(|i| format!("EVENT code={} source=rm:7 seq=Uint64({i}) lost=-", down.0))
            .collect::<Vec<_>>(),
        "oldest first, once"
    );
    assert!(late.sync().is_empty(), "nothing more");
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
    assert_eq!(s.cache_occupancy(), (0, 0));
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

/// I4 §4 ("a client that misses events (… cache eviction) is told"): an
/// environment event evicted from the server's full cache is one a client
/// connecting later is never offered; it is told how many.
#[test]
fn an_environment_event_evicted_before_a_client_connected_is_reported_as_lost() {
    let s = server(Some(2));
    for i in 0..3 {
        host_event(&s, Status::EVENT_NODE_DOWN, DataRange::LOCAL, i);
    }
    let mut c = connect(&s, 0);
    let got = register_and_collect(&mut c, "*");
    let down = Status::EVENT_NODE_DOWN.0;
    assert_eq!(
        got,
        vec![
            format!("EVENT code={down} source=rm:7 seq=Uint64(1) lost=-"),
            format!("EVENT code={down} source=rm:7 seq=Uint64(2) lost=-"),
            format!(
                "EVENT code={} source={} seq=- lost=Uint64(1)",
                EVENTS_LOST.0,
                s.me()
            ),
        ]
    );
}

/// I4 §1 (security: "a client can read only the events it is entitled
/// to"): a NAMESPACE-range environment event is cached for its namespace's
/// clients only; one of another namespace connecting later is not handed
/// it (it was handed the whole cache before).
#[test]
fn a_cached_environment_event_is_handed_only_to_the_namespaces_its_range_names() {
    let s = server(None);
    s.register_nspace(&Nspace::new("b").unwrap(), vec![])
        .unwrap();
    let a0 = Proc::new("a", 0).unwrap();
    s.notify(
        Notification::new(Status::EVENT_NODE_DOWN, a0, DataRange::NAMESPACE)
            .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    host_event(&s, Status::EVENT_NODE_OFFLINE, DataRange::LOCAL, 2);
    let mut b = connect_in(&s, "b", 0);
    let got = register_and_collect(&mut b, "*");
    assert_eq!(
        got,
        vec![format!(
            "EVENT code={} source=rm:7 seq=Uint64(2) lost=-",
            Status::EVENT_NODE_OFFLINE.0
        )],
        "only the node-wide one"
    );
    let mut a = connect(&s, 1);
    let got = register_and_collect(&mut a, "*");
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].contains("source=a:0 seq=Uint64(1)"), "{got:?}");
}

/// I4 §4: the client's own list of events for later registrations holds
/// what the server keeps for it (2 × its cache size + 1 notice); what it
/// drops, a later handler is told first (`EVENTS_LOST` with the count),
/// then offered the rest.
#[test]
fn a_client_whose_replay_list_overflows_tells_later_handlers_how_many_it_dropped() {
    let s = server(Some(2));
    let mut c = connect(&s, 0);
    for i in 0..8 {
        host_event(&s, Status::EVENT_NODE_DOWN, DataRange::LOCAL, i);
    }
    wait_drained(&s, 0);
    c.sync();
    let got = register_and_collect(&mut c, "*");
    let down = Status::EVENT_NODE_DOWN.0;
    assert_eq!(
        got,
        vec![
            format!(
                "EVENT code={} source={} seq=- lost=Uint64(3)",
                EVENTS_LOST.0,
                s.me()
            ),
            format!("EVENT code={down} source=rm:7 seq=Uint64(3) lost=-"),
            format!("EVENT code={down} source=rm:7 seq=Uint64(4) lost=-"),
            format!("EVENT code={down} source=rm:7 seq=Uint64(5) lost=-"),
            format!("EVENT code={down} source=rm:7 seq=Uint64(6) lost=-"),
            format!("EVENT code={down} source=rm:7 seq=Uint64(7) lost=-"),
        ]
    );
    // A handler for another code is not offered the notice.
    assert!(register_and_collect(&mut c, "-5600").is_empty());
}

/// OpenPMIx after 4.2.2 (PR #2887): a client keeps its PROC_LOCAL events
/// for handlers registered later in the process, by the same rule as the
/// events its ring brings: environment events always, job events that no
/// handler took, never `PMIX_EVENT_DO_NOT_CACHE` ones; offered once, with
/// their real source. Nothing reaches another process.
#[test]
fn proc_local_events_are_kept_for_handlers_registered_later_in_the_process() {
    let s = server(None);
    let mut c = connect(&s, 0);
    let mut other = connect(&s, 1);
    register_and_collect(&mut other, "*");
    register_and_collect(&mut c, "-5501");
    let down = Status::EVENT_NODE_DOWN.0;
    for cmd in [
        format!("NOTIFY_LOCAL {down} 1"),
        "NOTIFY_LOCAL -5500 2".to_string(),
        "NOTIFY_LOCAL -5500 3 nocache".to_string(),
        "NOTIFY_LOCAL -5501 4".to_string(),
    ] {
        c.send(&cmd);
        c.expect("NOTIFIED");
    }
    assert_eq!(
        c.sync(),
        vec!["EVENT code=-5501 source=a:0 seq=Uint64(4) lost=-".to_string()],
        "taken live"
    );
    assert_eq!(
        register_and_collect(&mut c, "*"),
        vec![
            format!("EVENT code={down} source=a:0 seq=Uint64(1) lost=-"),
            "EVENT code=-5500 source=a:0 seq=Uint64(2) lost=-".to_string(),
        ],
        "the environment event and the job event nobody took, oldest first"
    );
    assert_eq!(
        register_and_collect(&mut c, "-5500"),
        vec!["EVENT code=-5500 source=a:0 seq=Uint64(2) lost=-".to_string()],
        "each new registration is offered them"
    );
    assert!(c.sync().is_empty(), "once per handler");
    assert!(other.sync().is_empty(), "never left the process");
}

/// SRV-17: `Client::init_with` connects with explicit parameters, in a
/// process whose environment names no server (`Client::init` would fail).
#[test]
fn init_with_connects_with_explicit_parameters_without_the_environment() {
    let s = server(None);
    let p = Proc::new("a", 3).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    s.register_client(&p, uid, gid).unwrap();
    assert!(std::env::var(fastpmix::server::SERVER_ADDR_ENV).is_err());
    let params = format!("{} a 3", s.address().display());
    let mut c = ClientProc::spawn(CHILD, p, &[(PARAMS_ENV.to_string(), params)]);
    register_and_collect(&mut c, "-5700");
    s.notify(
        Notification::new(
            Status(-5700),
            Proc::new("a", 0).unwrap(),
            DataRange::NAMESPACE,
        )
        .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    assert_eq!(
        c.expect("EVENT "),
        "EVENT code=-5700 source=a:0 seq=Uint64(1) lost=-",
        "connected as a:3, through its namespace's ring"
    );
}

/// SRV-43 with a CUSTOM range naming one rank: the job event is retained
/// for that rank alone among the namespace's clients that have not
/// connected yet, and released once it has it.
#[test]
fn a_custom_job_event_is_retained_only_for_the_ranks_it_names() {
    let s = server(None);
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    for r in [1, 2] {
        s.register_client(&Proc::new("a", r).unwrap(), uid, gid)
            .unwrap();
    }
    let target = Proc::new("a", 1).unwrap();
    s.notify(
        Notification::new(Status(-5800), Proc::new("a", 0).unwrap(), DataRange::CUSTOM)
            .info(Info::new(
                attrs::PMIX_EVENT_CUSTOM_RANGE,
                Value::from(target),
            ))
            .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    let retained = |s: &Server| s.cache_occupancy().1;
    assert_eq!(retained(&s), 1);
    let mut two = connect(&s, 2);
    assert!(
        register_and_collect(&mut two, "-5800").is_empty(),
        "not named"
    );
    assert_eq!(retained(&s), 1, "still owed to a:1");
    let mut one = connect(&s, 1);
    assert_eq!(
        register_and_collect(&mut one, "-5800"),
        vec!["EVENT code=-5800 source=a:0 seq=Uint64(1) lost=-".to_string()]
    );
    assert_eq!(retained(&s), 0, "released once a:1 has it");
}

/// SRV-40: by default the cache holds 512 environment events (OpenPMIx's
/// size): of 513, a client connecting later is offered the newest 512 and
/// told of one lost.
#[test]
fn the_default_cache_holds_512_environment_events() {
    let s = server(None);
    for i in 0..513 {
        host_event(&s, Status::EVENT_NODE_DOWN, DataRange::LOCAL, i);
    }
    assert_eq!(s.cache_occupancy(), (512, 0));
    let mut c = connect(&s, 0);
    let got = register_and_collect(&mut c, "*");
    assert_eq!(got.len(), 513, "512 events and the notice");
    assert!(got[0].contains("seq=Uint64(1) "), "{}", got[0]);
    assert!(got[511].contains("seq=Uint64(512) "), "{}", got[511]);
    assert!(got[512].ends_with("seq=- lost=Uint64(1)"), "{}", got[512]);
}

/// SRV-42 for the other two keepers: a `PMIX_EVENT_DO_NOT_CACHE` job event
/// is not retained for a client that has not connected yet, and one that
/// reaches a connected client while no handler takes it is not kept for a
/// later registration. A cacheable twin of each is, so the test can fail.
#[test]
fn do_not_cache_is_honoured_by_job_retention_and_by_a_connected_clients_list() {
    let s = server(None);
    let mut c = connect(&s, 0);
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    s.register_client(&Proc::new("a", 1).unwrap(), uid, gid)
        .unwrap();
    let job = Proc::new("a", 5).unwrap();
    for (seq, keep) in [(1, false), (2, true)] {
        let mut n = Notification::new(Status(-5810), job, DataRange::NAMESPACE)
            .info(Info::new(SEQ, Value::Uint64(seq)));
        if !keep {
            n = n.info(Info::new(attrs::PMIX_EVENT_DO_NOT_CACHE, true));
        }
        s.notify(n).unwrap();
    }
    assert_eq!(
        s.cache_occupancy(),
        (0, 1),
        "only the cacheable one retained"
    );
    let mut late = connect(&s, 1);
    assert_eq!(
        register_and_collect(&mut late, "-5810"),
        vec!["EVENT code=-5810 source=a:5 seq=Uint64(2) lost=-".to_string()]
    );
    // Client 0 read both while no handler took them.
    wait_drained(&s, 0);
    c.sync();
    assert_eq!(
        register_and_collect(&mut c, "-5810"),
        vec!["EVENT code=-5810 source=a:5 seq=Uint64(2) lost=-".to_string()]
    );
}

/// SRV-46: a record that fails validation when the client reads it is an
/// event lost, and the client is told. The client's progress thread is
/// held while the server publishes two events; the first one's bytes are
/// then overwritten in the ring (through the segment's file, as another
/// process could), and the client reads a corrupt record and a good one.
#[test]
fn a_corrupt_record_in_the_ring_is_reported_as_one_event_lost() {
    use std::os::unix::fs::FileExt;
    let s = server(None);
    let mut c = connect(&s, 0);
    register_and_collect(&mut c, "-5960");
    register_and_collect(&mut c, &EVENTS_LOST.0.to_string());
    c.send("HOLD");
    c.expect("HELD");
    let job = Proc::new("a", 5).unwrap();
    for seq in [1, 2] {
        s.notify(
            Notification::new(Status(-5960), job, DataRange::NAMESPACE)
                .info(Info::new(SEQ, Value::Uint64(seq))),
        )
        .unwrap();
    }
    // Where the first of the two lies: the index names its slot.
    let st = s
        .namespaces()
        .into_iter()
        .find(|n| n.nspace.as_str() == "a")
        .unwrap();
    let seg = fastpmix::internals::ring::Segment::open_read_only(&st.segment, procs::HANG).unwrap();
    let (o, g) = (seg.region().offsets(), seg.region().geometry());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("/dev/shm/{}", st.segment.trim_start_matches('/')))
        .unwrap();
    let first = st.head - 2;
    let mut entry = [0u8; 8];
    file.read_exact_at(&mut entry, o.index + (first % u64::from(g.slot_count)) * 8)
        .unwrap();
    let (seq, slot) = shm_layout::index_parts(u64::from_le_bytes(entry));
    assert_eq!(seq, first);
    let bytes = o.slots
        + u64::from(slot) * u64::from(g.slot_size)
        + std::mem::size_of::<shm_layout::SlotHeader>() as u64;
    let mut len = [0u8; 4];
    let len_at = o.slots
        + u64::from(slot) * u64::from(g.slot_size)
        + std::mem::offset_of!(shm_layout::SlotHeader, len) as u64;
    file.read_exact_at(&mut len, len_at).unwrap();
    let len = u32::from_le_bytes(len) as usize;
    assert!(len > 0);
    file.write_all_at(&vec![0xA5; len], bytes).unwrap();
    c.send("RELEASE");
    let mut got = vec![c.expect("EVENT "), c.expect("EVENT ")];
    got.sort();
    assert_eq!(
        got,
        vec![
            format!(
                "EVENT code={} source={} seq=- lost=Uint64(1)",
                EVENTS_LOST.0,
                s.me()
            ),
            "EVENT code=-5960 source=a:5 seq=Uint64(2) lost=-".to_string(),
        ]
    );
    assert!(c.sync().is_empty(), "nothing else");
}

/// A job event kept for a registered rank that never connected is released
/// when that rank is deregistered, and a rank registered again under the
/// same name later is not handed it.
#[test]
fn a_deregistered_rank_is_owed_nothing_and_a_rank_registered_again_gets_nothing_old() {
    let s = server(None);
    let p1 = Proc::new("a", 1).unwrap();
    // SAFETY: getuid/getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    s.register_client(&p1, uid, gid).unwrap();
    let job = Proc::new("a", 0).unwrap();
    s.notify(
        Notification::new(Status(-5300), job, DataRange::NAMESPACE)
            .info(Info::new(SEQ, Value::Uint64(1))),
    )
    .unwrap();
    assert_eq!(s.cache_occupancy(), (0, 1), "kept for a:1");
    s.deregister_client(&p1).unwrap();
    assert_eq!(s.cache_occupancy(), (0, 0), "released with a:1");
    s.register_client(&p1, uid, gid).unwrap();
    let mut again = connect(&s, 1);
    assert!(register_and_collect(&mut again, "-5300").is_empty());
}
