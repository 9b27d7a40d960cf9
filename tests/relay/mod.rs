//! Two nodes on one machine: two fastpmix servers in two processes (the
//! test binary re-executed as [`node_main`]), each with its own shared
//! memory and its own client processes, joined by [`Relay`], a test host
//! that carries `fence_nb` and `direct_modex` traffic between them over a
//! Unix socket, as a resource manager's daemons would over the network.
//!
//! The job is one namespace of [`JOB_SIZE`] ranks on two nodes, `nodeA`
//! (ranks 0, 1) and `nodeB` (ranks 2, 3); each server registers it with
//! the same node and proc maps, its own `PMIX_LOCAL_PEERS` and hostname,
//! and only its local clients.
//!
//! The relay:
//! - `fence_nb`: sends this node's contribution to the peer, tagged with
//!   the participant set and how many fences over that set this node has
//!   started (the same count on both nodes: fences over one set complete
//!   in order); once the peer's contribution for the same tag is here,
//!   completes `Done` with both concatenated (the peer's first);
//! - `direct_modex`: sends a request to the peer, whose relay calls its
//!   `Server::dmodex_request` and sends the bytes (or the error) back;
//! - when the peer's socket closes (its process died), completes every
//!   pending `Done` with `PMIX_ERR_UNREACH`, and every later one at once.
//!
//! Environment of a node process (`procs::ROLE_ENV` = `server`):
//! [`SERVER_PROCS_ENV`] lists its local clients; [`NODE_ENV`] is its index
//! (0 listens on [`SOCK_ENV`], 1 connects to it); [`MODE_ENV`] is `relay`
//! or `nohost` (no host at all: the server's default, `NoHost`);
//! [`GARBLE_ENV`] (`cut`, `lie`, `-`, comma-separated) spoils the blob of
//! this node's 1st, 2nd, ... completed fence: `cut` ends it in the middle
//! of this node's own frames, `lie` makes the peer's first frame claim
//! more bytes than there are, `-` leaves it alone; `modex-cut` (in the same
//! list, counted apart) ends the 1st, 2nd, ... direct-modex answer this
//! node gets in its middle.
//!
//! A node process prints what [`ServerProc`] reads, then answers stdin
//! lines: `STATS` → `STATS fence_nb=<n> direct_modex=<n> served=<n>
//! items=<n>` (upcalls this relay got, `dmodex_request` answers it sent
//! for the peer, and the items the namespace's data holds); stdin closed:
//! the server stops. It prints `PEER_LOST` when the peer's socket closes.

#![allow(dead_code)]

use super::procs::{self, ClientProc, ServerProc, HANG, SERVER_PROCS_ENV};
use fastpmix::server::{Done, Host, Server};
use fastpmix::types::attrs;
use fastpmix::{Info, Nspace, Proc, Status, Value};
use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

/// Ranks in the job.
pub const JOB_SIZE: u32 = 4;
/// The node names, in node-map order.
pub const NODES: [&str; 2] = ["nodeA", "nodeB"];
/// This node's index (0 or 1).
pub const NODE_ENV: &str = "FASTPMIX_TEST_RELAY_NODE";
/// The Unix socket between the two node processes.
pub const SOCK_ENV: &str = "FASTPMIX_TEST_RELAY_SOCK";
/// `relay` or `nohost`.
pub const MODE_ENV: &str = "FASTPMIX_TEST_RELAY_MODE";
/// How to spoil each completed fence's blob, and each direct-modex answer
/// (see the module docs).
pub const GARBLE_ENV: &str = "FASTPMIX_TEST_RELAY_GARBLE";
/// `0`: the namespace is registered with its size only (no maps, no
/// local peers), as a minimal host does.
pub const MAPS_ENV: &str = "FASTPMIX_TEST_RELAY_MAPS";
/// The namespace.
pub const NS_ENV: &str = "FASTPMIX_TEST_RELAY_NS";

/// The ranks of node `i`.
pub fn ranks_of(node: usize) -> [u32; 2] {
    let first = 2 * node as u32;
    [first, first + 1]
}

/// One message between the relays.
#[derive(Debug, Default)]
struct Msg {
    /// [`FENCE`], [`MODEX_REQ`] or [`MODEX_RESP`].
    tag: u8,
    /// The fence's count over its set, or the request's id.
    id: u64,
    status: i32,
    /// The fence's participant set, or the requested process.
    text: String,
    data: Vec<u8>,
}

const FENCE: u8 = 1;
const MODEX_REQ: u8 = 2;
const MODEX_RESP: u8 = 3;

fn write_msg(w: &mut impl Write, m: &Msg) -> std::io::Result<()> {
    let mut b = Vec::with_capacity(25 + m.text.len() + m.data.len());
    b.push(m.tag);
    b.extend_from_slice(&m.id.to_le_bytes());
    b.extend_from_slice(&m.status.to_le_bytes());
    b.extend_from_slice(&(m.text.len() as u32).to_le_bytes());
    b.extend_from_slice(m.text.as_bytes());
    b.extend_from_slice(&(m.data.len() as u32).to_le_bytes());
    b.extend_from_slice(&m.data);
    w.write_all(&b)?;
    w.flush()
}

fn read_msg(r: &mut impl Read) -> std::io::Result<Msg> {
    let mut head = [0u8; 13];
    r.read_exact(&mut head)?;
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let mut text = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut text)?;
    r.read_exact(&mut len)?;
    let mut data = vec![0u8; u32::from_le_bytes(len) as usize];
    r.read_exact(&mut data)?;
    Ok(Msg {
        tag: head[0],
        id: u64::from_le_bytes(head[1..9].try_into().unwrap()),
        status: i32::from_le_bytes(head[9..13].try_into().unwrap()),
        text: String::from_utf8(text).expect("a relay's text is UTF-8"),
        data,
    })
}

/// A fence: its participant set, and how many fences over that set this
/// node has started.
type FenceKey = (String, u64);

/// What the relay holds between the two servers.
#[derive(Default)]
struct State {
    /// The peer's socket closed.
    closed: bool,
    /// Fences started here, per participant set.
    started: HashMap<String, u64>,
    /// This node's fences waiting for the peer's contribution.
    mine: HashMap<FenceKey, (Vec<u8>, Done<Vec<u8>>)>,
    /// The peer's contributions that came first.
    theirs: HashMap<FenceKey, Vec<u8>>,
    /// This node's direct-modex requests at the peer.
    asked: HashMap<u64, Done<Vec<u8>>>,
    next_ask: u64,
    fence_calls: u64,
    modex_calls: u64,
    served: u64,
    /// How to spoil the next completed fences' blobs.
    garble: VecDeque<String>,
    /// How to spoil the next direct-modex answers.
    garble_modex: VecDeque<String>,
}

/// The test host of one node (see the module docs).
pub struct Relay {
    st: Mutex<State>,
    out: Mutex<mpsc::Sender<Msg>>,
    server: OnceLock<Weak<Server>>,
}

impl Relay {
    fn send(&self, m: Msg) {
        // The writer ends only with the process: a send cannot fail before.
        let _ = self.out.lock().unwrap().send(m);
    }

    /// Both contributions of a fence, the peer's first, spoiled as this
    /// node was told to.
    fn joined(&self, theirs: Vec<u8>, mine: Vec<u8>) -> Vec<u8> {
        let how = self.st.lock().unwrap().garble.pop_front();
        let (tl, ml) = (theirs.len(), mine.len());
        let mut all = theirs;
        all.extend_from_slice(&mine);
        match how.as_deref() {
            Some("cut") => {
                // In the middle of this node's frames (or of the peer's,
                // when this node gave nothing): the peer's frames before
                // the cut are whole, and must not be stored either.
                let at = if ml > 0 { tl + ml / 2 } else { tl / 2 };
                all.truncate(at);
            }
            Some("lie") => {
                assert!(tl >= 16, "the peer gave a frame to lie about");
                let lie = (all.len() as u64) * 2;
                all[8..16].copy_from_slice(&lie.to_le_bytes());
            }
            _ => {}
        }
        all
    }

    /// The peer's socket closed: every pending and later upcall fails.
    fn lost(&self) {
        let (fences, asks) = {
            let mut st = self.st.lock().unwrap();
            st.closed = true;
            let f: Vec<_> = st.mine.drain().map(|(_, (_, d))| d).collect();
            let a: Vec<_> = st.asked.drain().map(|(_, d)| d).collect();
            (f, a)
        };
        println!("PEER_LOST");
        let _ = std::io::stdout().flush();
        for d in fences.into_iter().chain(asks) {
            d.status(Status::ERR_UNREACH);
        }
    }

    /// A message from the peer.
    fn handle(self: &Arc<Self>, m: Msg) {
        match m.tag {
            FENCE => {
                let key = (m.text, m.id);
                let mine = {
                    let mut st = self.st.lock().unwrap();
                    match st.mine.remove(&key) {
                        Some(x) => Some(x),
                        None => {
                            st.theirs.insert(key, m.data.clone());
                            None
                        }
                    }
                };
                if let Some((data, done)) = mine {
                    done.complete(Status::SUCCESS, self.joined(m.data, data));
                }
            }
            MODEX_REQ => {
                let (id, proc) = (m.id, procs::parse_proc(&m.text));
                let me = self.clone();
                let answer = move |status: Status, data: Vec<u8>| {
                    me.st.lock().unwrap().served += 1;
                    me.send(Msg {
                        tag: MODEX_RESP,
                        id,
                        status: status.0,
                        data,
                        ..Msg::default()
                    });
                };
                let done = Done::new(answer, Vec::new);
                match self.server.get().and_then(Weak::upgrade) {
                    Some(s) => {
                        if let Err(e) = s.dmodex_request(&proc, done) {
                            self.send(Msg {
                                tag: MODEX_RESP,
                                id,
                                status: e.0,
                                ..Msg::default()
                            });
                        }
                    }
                    None => done.status(Status::ERR_UNREACH),
                }
            }
            MODEX_RESP => {
                let (done, how) = {
                    let mut st = self.st.lock().unwrap();
                    (st.asked.remove(&m.id), st.garble_modex.pop_front())
                };
                let mut data = m.data;
                if how.as_deref() == Some("modex-cut") {
                    data.truncate(data.len() / 2);
                }
                if let Some(d) = done {
                    d.complete(Status(m.status), data);
                }
            }
            other => panic!("unknown relay message {other}"),
        }
    }

    /// Runs the connection to the peer: a writer thread drains `out`, this
    /// thread reads until the socket closes.
    fn run(self: Arc<Self>, stream: UnixStream, out: mpsc::Receiver<Msg>) {
        let mut w = stream.try_clone().expect("clone the relay socket");
        std::thread::spawn(move || {
            for m in out {
                if write_msg(&mut w, &m).is_err() {
                    break;
                }
            }
        });
        let mut r = BufReader::new(stream);
        while let Ok(m) = read_msg(&mut r) {
            self.handle(m);
        }
        self.lost();
    }
}

impl Host for Relay {
    fn fence_nb(&self, procs: &[Proc], _info: &[Info], data: &[u8], done: Done<Vec<u8>>) {
        let set = procs
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let (key, theirs) = {
            let mut st = self.st.lock().unwrap();
            st.fence_calls += 1;
            if st.closed {
                drop(st);
                return done.status(Status::ERR_UNREACH);
            }
            let n = st.started.entry(set.clone()).or_insert(0);
            *n += 1;
            let key = (set, *n);
            let theirs = st.theirs.remove(&key);
            if theirs.is_none() {
                st.mine.insert(key.clone(), (data.to_vec(), done));
                (key, None)
            } else {
                (key, theirs.map(|t| (t, done)))
            }
        };
        self.send(Msg {
            tag: FENCE,
            id: key.1,
            text: key.0,
            data: data.to_vec(),
            ..Msg::default()
        });
        // The peer was first: completed inside the upcall, as a host may.
        if let Some((t, done)) = theirs {
            done.complete(Status::SUCCESS, self.joined(t, data.to_vec()));
        }
    }

    fn direct_modex(&self, proc: &Proc, _info: &[Info], done: Done<Vec<u8>>) {
        let id = {
            let mut st = self.st.lock().unwrap();
            st.modex_calls += 1;
            if st.closed {
                drop(st);
                return done.status(Status::ERR_UNREACH);
            }
            st.next_ask += 1;
            let id = st.next_ask;
            st.asked.insert(id, done);
            id
        };
        self.send(Msg {
            tag: MODEX_REQ,
            id,
            text: proc.to_string(),
            ..Msg::default()
        });
    }
}

/// The job information both servers register, with this node's part.
fn job_info(node: usize, maps: bool) -> Vec<Info> {
    let size = vec![
        Info::new(attrs::PMIX_JOB_SIZE, Value::Uint32(JOB_SIZE)),
        Info::new(attrs::PMIX_LOCAL_SIZE, Value::Uint32(2)),
    ];
    if !maps {
        return size;
    }
    let peers = ranks_of(node).map(|r| r.to_string()).join(",");
    let maps = vec![
        Info::new(attrs::PMIX_NODE_MAP, NODES.join(",")),
        Info::new(attrs::PMIX_PROC_MAP, "0,1;2,3"),
        Info::new(attrs::PMIX_LOCAL_PEERS, peers),
        Info::new(attrs::PMIX_HOSTNAME, NODES[node]),
    ];
    size.into_iter().chain(maps).collect()
}

/// The body of a node process. Call it from a `#[test]` that returns at
/// once unless `procs::ROLE_ENV` is `server`.
pub fn node_main() {
    // libtest printed "test child_node ... " without a newline.
    println!();
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let node: usize = var(NODE_ENV).parse().expect("a node index");
    let ns = Nspace::new(&var(NS_ENV)).expect("a namespace");
    let (tx, rx) = mpsc::channel();
    let relay = (var(MODE_ENV) != "nohost").then(|| {
        let (modex, fence): (VecDeque<String>, VecDeque<String>) = var(GARBLE_ENV)
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .partition(|g| g.starts_with("modex-"));
        Arc::new(Relay {
            st: Mutex::new(State {
                garble: fence,
                garble_modex: modex,
                ..State::default()
            }),
            out: Mutex::new(tx),
            server: OnceLock::new(),
        })
    });
    let mut b = Server::builder();
    if let Some(r) = &relay {
        b = b.host(r.clone() as Arc<dyn Host>);
    }
    let server = Arc::new(b.start().expect("start the server"));
    if let Some(r) = &relay {
        let _ = r.server.set(Arc::downgrade(&server));
        let path = var(SOCK_ENV);
        let r = r.clone();
        if node == 0 {
            // Bound before SERVER_READY: the parent starts node 1 after.
            let l = UnixListener::bind(&path).expect("bind the relay socket");
            std::thread::spawn(move || {
                let (s, _) = l.accept().expect("the peer node connects");
                r.run(s, rx);
            });
        } else {
            let s = UnixStream::connect(&path).expect("connect to node 0");
            std::thread::spawn(move || r.run(s, rx));
        }
    }
    server
        .register_nspace(&ns, job_info(node, var(MAPS_ENV) != "0"))
        .unwrap();
    let (uid, gid) = procs::ids();
    let locals: Vec<Proc> = var(SERVER_PROCS_ENV)
        .split(',')
        .filter(|s| !s.is_empty())
        .map(procs::parse_proc)
        .collect();
    for p in &locals {
        server.register_client(p, uid, gid).unwrap();
    }
    for n in server.namespaces() {
        println!("SEGMENT {}", n.segment);
    }
    for p in &locals {
        for (k, v) in server.setup_fork(p).unwrap() {
            println!("ENV {p} {k}={v}");
        }
    }
    println!("SERVER_READY {}", std::process::id());
    let _ = std::io::stdout().flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line == "STATS" {
            let (f, m, s) = relay.as_ref().map_or((0, 0, 0), |r| {
                let st = r.st.lock().unwrap();
                (st.fence_calls, st.modex_calls, st.served)
            });
            let items = server.data_footprint(&ns).map_or(0, |x| x.1);
            println!("STATS fence_nb={f} direct_modex={m} served={s} items={items}");
            let _ = std::io::stdout().flush();
        }
    }
    server.stop();
    std::process::exit(0);
}

/// What a node's `STATS` said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub fence_nb: u64,
    pub direct_modex: u64,
    pub served: u64,
    pub items: u64,
}

/// The parent's view: both node processes and their clients (ranks in
/// order). Dropping it kills them all and removes what they left.
pub struct TwoNodes {
    pub clients: Vec<ClientProc>,
    pub nodes: Vec<ServerProc>,
    dir: PathBuf,
}

/// Settings of one node process.
pub struct NodeSpec<'a> {
    pub mode: &'a str,
    pub garble: &'a str,
    /// Register the node and proc maps and the local peers.
    pub maps: bool,
}

/// An ordinary relay node.
pub const RELAY: NodeSpec<'static> = NodeSpec {
    mode: "relay",
    garble: "",
    maps: true,
};

impl TwoNodes {
    /// Starts node processes for `specs` (one or two; `entry` is the test
    /// that runs [`node_main`]) and their clients (`client_entry`).
    pub fn start(entry: &str, client_entry: &str, ns: &str, specs: &[NodeSpec]) -> TwoNodes {
        static N: Mutex<u32> = Mutex::new(0);
        let n = {
            let mut g = N.lock().unwrap();
            *g += 1;
            *g
        };
        let dir = std::env::temp_dir().join(format!("fpmx-relay-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("sock").to_string_lossy().into_owned();
        let mut t = TwoNodes {
            clients: Vec::new(),
            nodes: Vec::new(),
            dir,
        };
        for (i, spec) in specs.iter().enumerate() {
            let locals: Vec<Proc> = ranks_of(i)
                .iter()
                .map(|r| Proc::new(ns, *r).unwrap())
                .collect();
            let env = [
                (NODE_ENV, i.to_string()),
                (SOCK_ENV, sock.clone()),
                (MODE_ENV, spec.mode.to_owned()),
                (GARBLE_ENV, spec.garble.to_owned()),
                (NS_ENV, ns.to_owned()),
                (MAPS_ENV, if spec.maps { "1" } else { "0" }.to_owned()),
            ];
            t.nodes
                .push(ServerProc::spawn_with_env(entry, &locals, &env));
        }
        for i in 0..specs.len() {
            for r in ranks_of(i) {
                let p = Proc::new(ns, r).unwrap();
                let env = t.nodes[i].env_of(&p);
                t.clients.push(ClientProc::spawn(client_entry, p, &env));
            }
        }
        t
    }

    /// Node `i`'s counters.
    pub fn stats(&mut self, i: usize) -> Stats {
        self.nodes[i].send("STATS");
        let l = self.expect(i, "STATS ");
        let v: Vec<u64> = l
            .split(' ')
            .skip(1)
            .map(|kv| kv.split_once('=').unwrap().1.parse().unwrap())
            .collect();
        Stats {
            fence_nb: v[0],
            direct_modex: v[1],
            served: v[2],
            items: v[3],
        }
    }

    /// Waits for a line of node `i` starting with `prefix` (others are
    /// skipped). Panics after [`HANG`].
    pub fn expect(&self, i: usize, prefix: &str) -> String {
        let deadline = Instant::now() + HANG;
        let rx = self.nodes[i].lines.lock().unwrap();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(l) if l.starts_with(prefix) => return l,
                Ok(_) => {}
                Err(_) => panic!("node {i}: no line starting with {prefix:?}"),
            }
        }
    }
}

impl Drop for TwoNodes {
    fn drop(&mut self) {
        self.clients.clear();
        for n in &mut self.nodes {
            n.kill();
        }
        // A killed server leaves its data store's chunks.
        let prefixes: Vec<String> = self
            .nodes
            .iter()
            .flat_map(|n| &n.segments)
            .map(|s| format!("{}-kv", s.trim_start_matches('/')))
            .collect();
        if let Ok(d) = std::fs::read_dir("/dev/shm") {
            for e in d.filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().into_owned();
                if prefixes.iter().any(|p| name.starts_with(p)) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
