//! Publish/lookup/unpublish, spawn and connect/disconnect from Rust
//! (`Client::publish` and the rest, `server::pubsub`, `server::dpm`): real
//! client processes of a server embedded in the test, whose host is a
//! small data server ([`Data`]) that completes inside its upcalls, as Open
//! MPI's runtime does (a waiting lookup completes inside the publish that
//! satisfies it; spawn completes later, from another thread).

mod procs;

use fastpmix::server::{Done, Host, NoHost, Server};
use fastpmix::types::{attrs, App, PData};
use fastpmix::{Info, Key, Nspace, Proc, Status, Value};
use procs::{parse_proc, ClientProc, ROLE_ENV};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

const CHILD: &str = "pubsub_child";
const WAIT: &str = "pmix.wait";

/// The child: one command per stdin line, one answer line each.
#[test]
fn pubsub_child() {
    if std::env::var(ROLE_ENV).as_deref() != Ok("client") {
        return;
    }
    let c = fastpmix::client::Client::init().expect("init");
    println!("\nREADY");
    let _ = std::io::stdout().flush();
    let procs = |s: &str| -> Vec<Proc> { s.split(',').map(parse_proc).collect() };
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["PUBLISH", key, val] => {
                let i = [
                    Info::new(Key::new(key).unwrap(), val.to_string()),
                    Info::new(attrs::PMIX_RANGE, fastpmix::DataRange::SESSION),
                ];
                println!("PUBLISHED {}", c.publish(&i).status.0);
            }
            ["LOOKUP", keys, rest @ ..] => {
                let keys: Vec<&str> = keys.split(',').collect();
                let info: Vec<Info> = match rest {
                    ["wait"] => vec![Info::new(Key::new(WAIT).unwrap(), Value::Int(0))],
                    _ => vec![],
                };
                let f = c.lookup(&keys, &info);
                println!("FOUND {} {}", f.status.0, items(&f.data));
            }
            ["LOOKUP_NB", key] => {
                let info = [Info::new(Key::new(WAIT).unwrap(), Value::Int(0))];
                let s = c.lookup_nb(&[*key], &info, |f| {
                    println!("FOUND_NB {} {}", f.status.0, items(&f.data));
                    let _ = std::io::stdout().flush();
                });
                println!("LOOKUP_NB_CALLED {}", s.0);
            }
            ["UNPUBLISH", keys] => {
                let keys: Vec<&str> = keys.split(',').filter(|k| *k != "-").collect();
                println!("UNPUBLISHED {}", c.unpublish(&keys, &[]).status.0);
            }
            ["SPAWN", cmd, n] => {
                let s = c.spawn(&[], &[App::new(*cmd, n.parse().unwrap())]);
                let ns = s.nspace.map_or("-".to_owned(), |n| n.to_string());
                println!("SPAWNED {} {ns}", s.status.0);
            }
            ["SPAWN_NB", cmd] => {
                let s = c.spawn_nb(&[], &[App::new(*cmd, 1)], |s| {
                    let ns = s.nspace.map_or("-".to_owned(), |n| n.to_string());
                    println!("SPAWNED_NB {} {ns}", s.status.0);
                    let _ = std::io::stdout().flush();
                });
                println!("SPAWN_NB_CALLED {}", s.0);
            }
            ["CONNECT", list] => println!("CONNECTED {}", c.connect(&procs(list), &[]).status.0),
            ["DISCONNECT", list] => {
                println!("DISCONNECTED {}", c.disconnect(&procs(list), &[]).status.0)
            }
            ["CONNECT_NB", list] => {
                let s = c.connect_nb(&procs(list), &[], |o| {
                    println!("CONNECTED_NB {}", o.status.0);
                    let _ = std::io::stdout().flush();
                });
                println!("CONNECT_NB_CALLED {}", s.0);
            }
            ["BAD"] => {
                let none: [&str; 0] = [];
                let long = "k".repeat(600);
                let s = [
                    c.publish(&[]).status,
                    c.lookup(&none, &[]).status,
                    c.lookup(&[""], &[]).status,
                    c.lookup(&[long.as_str()], &[]).status,
                    c.unpublish(&[""], &[]).status,
                    c.spawn(&[], &[]).spawn_status(),
                    c.spawn(&[], &[App::new("", 1)]).spawn_status(),
                    c.connect(&[], &[]).status,
                    c.disconnect(&[], &[]).status,
                    c.publish_nb(&[], |_| println!("EVENT CALLED_BACK")),
                    c.lookup_nb(&none, &[], |_| println!("EVENT CALLED_BACK")),
                    c.connect_nb(&[], &[], |_| println!("EVENT CALLED_BACK")),
                ];
                let s: Vec<String> = s.iter().map(|s| s.0.to_string()).collect();
                println!("BAD {}", s.join(" "));
            }
            ["PING"] => println!("PONG"),
            _ => println!("UNKNOWN {line}"),
        }
        let _ = std::io::stdout().flush();
    }
    std::process::exit(0);
}

trait SpawnStatus {
    fn spawn_status(&self) -> Status;
}
impl SpawnStatus for fastpmix::client::Spawned {
    fn spawn_status(&self) -> Status {
        self.status
    }
}

fn items(v: &[PData]) -> String {
    let mut s: Vec<String> = v
        .iter()
        .map(|p| {
            format!(
                "{}={}@{}",
                p.key.as_str(),
                p.value.as_str().unwrap_or("?"),
                p.proc
            )
        })
        .collect();
    s.sort();
    s.join(",")
}

/// What the data server saw.
#[derive(Default)]
struct Seen {
    publish: Vec<(Proc, Vec<Info>)>,
    lookup: Vec<(Proc, Vec<String>, Vec<Info>)>,
    unpublish: Vec<(Proc, Vec<String>)>,
    spawn: Vec<(Proc, Vec<App>)>,
    connect: Vec<(bool, Vec<Proc>)>,
}

/// A lookup waiting for its keys: the keys and its completion.
type Waiting = (Vec<String>, Done<Vec<PData>>);

/// A host with a data server: published items by key; a lookup with
/// `PMIX_WAIT` waits until every key is there.
#[derive(Default)]
struct Data {
    store: Mutex<HashMap<String, PData>>,
    waiting: Mutex<Vec<Waiting>>,
    seen: Mutex<Seen>,
}

const DIRECTIVES: [&str; 5] = [
    "pmix.range",
    "pmix.persist",
    "pmix.timeout",
    "pmix.euid",
    "pmix.egid",
];

impl Data {
    /// The items of `keys` stored now.
    fn found(&self, keys: &[String]) -> Vec<PData> {
        let m = self.store.lock().unwrap();
        keys.iter().filter_map(|k| m.get(k).cloned()).collect()
    }
}

impl Host for Data {
    fn publish(&self, proc: &Proc, info: &[Info], done: Done) {
        self.seen
            .lock()
            .unwrap()
            .publish
            .push((*proc, info.to_vec()));
        {
            let mut m = self.store.lock().unwrap();
            for i in info
                .iter()
                .filter(|i| !DIRECTIVES.contains(&i.key.as_str()))
            {
                m.insert(
                    i.key.as_str().to_owned(),
                    PData::new(*proc, i.key.clone(), i.value.clone()),
                );
            }
        }
        // Completes inside the upcall, and so do the lookups it satisfies.
        done.status(Status::SUCCESS);
        let ready: Vec<_> = {
            let mut w = self.waiting.lock().unwrap();
            let (ready, rest) = std::mem::take(&mut *w)
                .into_iter()
                .partition(|(keys, _)| self.found(keys).len() == keys.len());
            *w = rest;
            ready
        };
        for (keys, d) in ready {
            d.complete(Status::SUCCESS, self.found(&keys));
        }
    }

    fn lookup(&self, proc: &Proc, keys: &[String], info: &[Info], done: Done<Vec<PData>>) {
        let seen = (*proc, keys.to_vec(), info.to_vec());
        self.seen.lock().unwrap().lookup.push(seen);
        let found = self.found(keys);
        let wait = info.iter().any(|i| i.key.as_str() == WAIT);
        if found.len() == keys.len() {
            done.complete(Status::SUCCESS, found)
        } else if wait {
            self.waiting.lock().unwrap().push((keys.to_vec(), done));
        } else if found.is_empty() {
            done.status(Status::ERR_NOT_FOUND)
        } else {
            done.complete(Status::ERR_PARTIAL_SUCCESS, found)
        }
    }

    fn unpublish(&self, proc: &Proc, keys: &[String], _info: &[Info], done: Done) {
        self.seen
            .lock()
            .unwrap()
            .unpublish
            .push((*proc, keys.to_vec()));
        let mut m = self.store.lock().unwrap();
        m.retain(|k, p| p.proc != *proc || !(keys.is_empty() || keys.contains(k)));
        done.status(Status::SUCCESS)
    }

    fn spawn(&self, proc: &Proc, _ji: &[Info], apps: &[App], done: Done<Option<Nspace>>) {
        let mut s = self.seen.lock().unwrap();
        s.spawn.push((*proc, apps.to_vec()));
        let n = Nspace::new(&format!("child-{}", s.spawn.len())).unwrap();
        // Later, from another thread.
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            done.complete(Status::SUCCESS, Some(n))
        });
    }

    fn connect(&self, procs: &[Proc], _info: &[Info], done: Done) {
        self.seen
            .lock()
            .unwrap()
            .connect
            .push((false, procs.to_vec()));
        done.status(Status::SUCCESS)
    }

    fn disconnect(&self, procs: &[Proc], _info: &[Info], done: Done) {
        self.seen
            .lock()
            .unwrap()
            .connect
            .push((true, procs.to_vec()));
        done.status(Status::SUCCESS)
    }
}

/// A server whose host is `host`, and `n` ranks of namespace `ps` as
/// connected client processes.
fn node(host: Arc<dyn Host>, n: u32) -> (Server, Vec<ClientProc>) {
    let server = Server::builder().host(host).start().unwrap();
    let c = procs::spawn_clients(&server, CHILD, &[("ps", n)]);
    (server, c)
}

fn ask(c: &mut ClientProc, cmd: &str, answer: &str) -> String {
    c.send(cmd);
    c.expect(answer)
}

#[test]
fn publish_then_lookup_from_another_client_gets_the_value_and_the_publisher() {
    let data = Arc::new(Data::default());
    let (_s, mut c) = node(data.clone(), 2);
    assert_eq!(
        ask(&mut c[0], "PUBLISH svc port-7", "PUBLISHED"),
        "PUBLISHED 0"
    );
    let got = ask(&mut c[1], "LOOKUP svc", "FOUND");
    assert_eq!(got, "FOUND 0 svc=port-7@ps:0");
    let seen = data.seen.lock().unwrap();
    let (who, info) = &seen.publish[0];
    assert_eq!(who, &Proc::new("ps", 0).unwrap(), "the client's identity");
    let keys: Vec<&str> = info.iter().map(|i| i.key.as_str()).collect();
    for k in ["svc", "pmix.range", "pmix.euid", "pmix.egid"] {
        assert!(keys.contains(&k), "{k} in {keys:?}");
    }
    assert_eq!(seen.lookup[0].0, Proc::new("ps", 1).unwrap());
}

#[test]
fn lookup_of_an_unknown_key_is_not_found_as_the_host_answers() {
    let (_s, mut c) = node(Arc::new(Data::default()), 1);
    let got = ask(&mut c[0], "LOOKUP nobody", "FOUND");
    assert_eq!(got, format!("FOUND {} ", Status::ERR_NOT_FOUND.0));
}

#[test]
fn lookup_with_wait_completes_when_the_key_is_published_later() {
    let data = Arc::new(Data::default());
    let (_s, mut c) = node(data.clone(), 2);
    assert_eq!(
        ask(&mut c[1], "LOOKUP_NB late", "LOOKUP_NB_CALLED"),
        "LOOKUP_NB_CALLED 0"
    );
    c[1].send("LOOKUP late wait");
    // Both wait in the host until rank 0 publishes.
    let t = std::time::Instant::now();
    while data.waiting.lock().unwrap().len() < 2 {
        assert!(
            t.elapsed() < procs::HANG,
            "the lookups never reached the host"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(ask(&mut c[0], "PUBLISH late v", "PUBLISHED"), "PUBLISHED 0");
    assert_eq!(c[1].expect("FOUND_NB"), "FOUND_NB 0 late=v@ps:0");
    assert_eq!(c[1].expect("FOUND "), "FOUND 0 late=v@ps:0");
}

#[test]
fn unpublish_removes_what_the_caller_published() {
    let data = Arc::new(Data::default());
    let (_s, mut c) = node(data.clone(), 2);
    ask(&mut c[0], "PUBLISH a 1", "PUBLISHED");
    ask(&mut c[0], "PUBLISH b 2", "PUBLISHED");
    assert_eq!(
        ask(&mut c[0], "UNPUBLISH a", "UNPUBLISHED"),
        "UNPUBLISHED 0"
    );
    let got = ask(&mut c[1], "LOOKUP a,b", "FOUND");
    assert_eq!(
        got,
        format!("FOUND {} b=2@ps:0", Status::ERR_PARTIAL_SUCCESS.0)
    );
    assert_eq!(
        ask(&mut c[0], "UNPUBLISH -", "UNPUBLISHED"),
        "UNPUBLISHED 0"
    );
    let got = ask(&mut c[1], "LOOKUP b", "FOUND");
    assert_eq!(got, format!("FOUND {} ", Status::ERR_NOT_FOUND.0));
    let seen = data.seen.lock().unwrap();
    assert_eq!(seen.unpublish[0].1, vec!["a".to_owned()]);
    assert!(seen.unpublish[1].1.is_empty(), "no keys: everything");
}

#[test]
fn spawn_returns_the_namespace_the_host_names() {
    let data = Arc::new(Data::default());
    let (_s, mut c) = node(data.clone(), 1);
    assert_eq!(
        ask(&mut c[0], "SPAWN /bin/true 3", "SPAWNED"),
        "SPAWNED 0 child-1"
    );
    assert_eq!(
        ask(&mut c[0], "SPAWN_NB /bin/false", "SPAWN_NB_CALLED"),
        "SPAWN_NB_CALLED 0"
    );
    assert_eq!(c[0].expect("SPAWNED_NB"), "SPAWNED_NB 0 child-2");
    let seen = data.seen.lock().unwrap();
    let (who, apps) = &seen.spawn[0];
    assert_eq!(who, &Proc::new("ps", 0).unwrap());
    assert_eq!((apps[0].cmd.as_str(), apps[0].maxprocs), ("/bin/true", 3));
    assert_eq!(apps[0].argv, vec!["/bin/true".to_owned()]);
}

#[test]
fn connect_and_disconnect_reach_the_host_once_with_the_proc_list_and_complete() {
    let data = Arc::new(Data::default());
    let (_s, mut c) = node(data.clone(), 2);
    let both = "ps:0,ps:1";
    let called = ask(
        &mut c[0],
        &format!("CONNECT_NB {both}"),
        "CONNECT_NB_CALLED",
    );
    assert_eq!(called, "CONNECT_NB_CALLED 0");
    // Rank 0 waits for rank 1: the host has not been called yet.
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(data.seen.lock().unwrap().connect.is_empty());
    assert_eq!(
        ask(&mut c[1], &format!("CONNECT {both}"), "CONNECTED "),
        "CONNECTED 0"
    );
    assert_eq!(c[0].expect("CONNECTED_NB"), "CONNECTED_NB 0");
    c[1].send(&format!("DISCONNECT {both}"));
    assert_eq!(
        ask(&mut c[0], &format!("DISCONNECT {both}"), "DISCONNECTED"),
        "DISCONNECTED 0"
    );
    assert_eq!(c[1].expect("DISCONNECTED"), "DISCONNECTED 0");
    let procs = vec![Proc::new("ps", 0).unwrap(), Proc::new("ps", 1).unwrap()];
    let seen = data.seen.lock().unwrap();
    assert_eq!(seen.connect, vec![(false, procs.clone()), (true, procs)]);
}

#[test]
fn a_connect_whose_participant_left_fails_with_lost_connection() {
    let (_s, mut c) = node(Arc::new(Data::default()), 2);
    ask(&mut c[0], "CONNECT_NB ps:0,ps:1", "CONNECT_NB_CALLED");
    c[1].kill();
    let got = c[0].expect("CONNECTED_NB");
    assert_eq!(
        got,
        format!("CONNECTED_NB {}", Status::ERR_LOST_CONNECTION.0)
    );
}

#[test]
fn a_host_without_the_upcalls_answers_not_supported() {
    let (_s, mut c) = node(Arc::new(NoHost), 1);
    let ns = Status::ERR_NOT_SUPPORTED.0;
    assert_eq!(
        ask(&mut c[0], "PUBLISH a 1", "PUBLISHED"),
        format!("PUBLISHED {ns}")
    );
    assert_eq!(ask(&mut c[0], "LOOKUP a", "FOUND"), format!("FOUND {ns} "));
    assert_eq!(
        ask(&mut c[0], "UNPUBLISH a", "UNPUBLISHED"),
        format!("UNPUBLISHED {ns}")
    );
    assert_eq!(
        ask(&mut c[0], "SPAWN x 1", "SPAWNED"),
        format!("SPAWNED {ns} -")
    );
    assert_eq!(
        ask(&mut c[0], "CONNECT ps:0", "CONNECTED"),
        format!("CONNECTED {ns}")
    );
    assert_eq!(
        ask(&mut c[0], "DISCONNECT ps:0", "DISCONNECTED"),
        format!("DISCONNECTED {ns}")
    );
}

#[test]
fn bad_arguments_are_bad_param_at_once_and_no_callback_runs() {
    let (_s, mut c) = node(Arc::new(Data::default()), 1);
    let got = ask(&mut c[0], "BAD", "BAD ");
    let bad = Status::ERR_BAD_PARAM.0.to_string();
    let s: Vec<&str> = got.split(' ').skip(1).collect();
    assert_eq!(s, vec![bad.as_str(); 12], "{got}");
    let late = c[0].events_within(std::time::Duration::from_millis(200));
    assert!(late.is_empty(), "no callback of a refused call: {late:?}");
    // The server still serves.
    assert_eq!(ask(&mut c[0], "PUBLISH ok 1", "PUBLISHED"), "PUBLISHED 0");
}
