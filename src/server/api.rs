//! The server's API for its host: registering namespaces and clients,
//! `setup_fork`, notifying, stopping.

use super::builder::job_info_size;
use super::builder::MAX_JOB_INFO;
use super::jobkeys;
use super::lock;
use super::routing::Via;
use super::ClientSlot;
use super::Cmd;
use super::Done;
use super::FastMap;
use super::Ns;
use super::Server;
use super::NAMESPACE_ENV;
use super::RANK_ENV;
use super::SERVER_ADDR_ENV;
use crate::event::Engine;
use crate::event::EventClass;
use crate::event::Notification;
use crate::ring::RingWriter;
use crate::ring::Segment;
use crate::types::attrs;
use crate::types::find_info;
use crate::types::Info;
use crate::types::Nspace;
use crate::types::Proc;
use crate::types::Rank;
use crate::types::Status;
use shm_layout::Geometry;
use std::path::Path;
use std::sync::Mutex;

/// Whether an event with this code tells that a process ended (the host's
/// way to report the death of a process that never connected).
pub fn reports_an_end(code: Status) -> bool {
    [
        Status::EVENT_PROC_TERMINATED,
        Status::PROC_TERMINATED,
        Status::ERR_PROC_ABORTED,
        Status::ERR_PROC_TERM_WO_SYNC,
        Status::ERR_PROC_KILLED_BY_CMD,
        Status::ERR_PROC_FAILED_TO_START,
        Status::ERR_PROC_ABORTED_BY_SIG,
        Status::ERR_EXIT_NONZERO_TERM,
    ]
    .contains(&code)
}

/// Most clients one namespace's ring can hold with geometry `g`: each
/// client may pin one data slot, and an index entry names a data slot in
/// 16 bits (`slot_count + client_capacity + 1` ≤ 65 535).
pub fn max_local_clients(g: &Geometry) -> u32 {
    shm_layout::MAX_DATA_SLOTS.saturating_sub(g.slot_count + 1)
}

/// The ring geometry of a namespace registered with `info`: `g` with room
/// for `PMIX_LOCAL_SIZE` clients when that is more than
/// `g.client_capacity`. Errors carry the reason.
pub fn client_capacity(g: &Geometry, info: &[Info]) -> Result<Geometry, (Status, String)> {
    let mut out = *g;
    let Some(i) = find_info(info, &attrs::PMIX_LOCAL_SIZE) else {
        return Ok(out);
    };
    let n = i
        .value
        .as_integer()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            (
                Status::ERR_BAD_PARAM,
                format!(
                    "PMIX_LOCAL_SIZE must be an unsigned integer, not {:?}",
                    i.value
                ),
            )
        })?;
    let max = max_local_clients(g);
    if n > max {
        return Err((
            Status::ERR_OUT_OF_RESOURCE,
            format!(
                "PMIX_LOCAL_SIZE {n}: a namespace's ring holds at most {max} local clients with {} ring slots (slot_count + clients + 1 must fit in 16 bits); split the node's processes over several namespaces",
                g.slot_count
            ),
        ));
    }
    out.client_capacity = out.client_capacity.max(n);
    Ok(out)
}

impl Server {
    /// The server's identity.
    pub fn me(&self) -> Proc {
        self.shared.me
    }

    /// The control socket's path.
    pub fn address(&self) -> &Path {
        &self.shared.sock_path
    }

    /// The server process's own event engine (register handlers for
    /// `PMIX_ERR_LOST_CONNECTION` and friends here).
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    /// Registers a namespace and its job information (what its clients may
    /// query: job size, local peers, maps...; see [`jobinfo`]). Creates its
    /// ring, whose client table holds `PMIX_LOCAL_SIZE` clients (from
    /// `info`) or the builder's geometry's `client_capacity` (default 64),
    /// whichever is larger: [`client_capacity`]. Refused, with the limit
    /// and how to raise it on stderr: job information larger than
    /// [`MAX_JOB_INFO`] (`PMIX_ERR_BAD_PARAM`), a `PMIX_LOCAL_SIZE` that is
    /// not an unsigned integer (`PMIX_ERR_BAD_PARAM`) or larger than
    /// [`max_local_clients`] (`PMIX_ERR_OUT_OF_RESOURCE`).
    pub fn register_nspace(&self, ns: &Nspace, info: Vec<Info>) -> Result<(), Status> {
        self.live()?;
        if ns.is_empty() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let info = jobkeys::normalize(info);
        let size = job_info_size(&info)?;
        if size > MAX_JOB_INFO {
            self.shared.say(&format!(
                "register_nspace {ns} refused: its job information is {size} bytes encoded, more than the {MAX_JOB_INFO} a client's Welcome can carry (MAX_JOB_INFO, a build-time limit of the control protocol: about 1 450 ranks of per-process data on one node); register less per-process data"
            ));
            return Err(Status::ERR_BAD_PARAM);
        }
        let g = client_capacity(&self.shared.geometry, &info).inspect_err(|(_, why)| {
            self.shared
                .say(&format!("register_nspace {ns} refused: {why}"));
        });
        let g = g.map_err(|(s, _)| s)?;
        let mut m = self.shared.nspaces();
        if m.contains_key(ns) {
            return Err(Status::ERR_BAD_PARAM);
        }
        let seg = Segment::create(g).map_err(|e| {
            self.shared.say(&format!(
                "cannot create the ring of namespace {ns} ({} clients): {e}",
                g.client_capacity
            ));
            Status::ERR_OUT_OF_RESOURCE
        })?;
        let data = super::data::NsData::create(seg.name()).map_err(|e| {
            self.shared.say(&format!(
                "cannot create the data store of namespace {ns}: {e}"
            ));
            Status::ERR_OUT_OF_RESOURCE
        })?;
        let job_map = jobkeys::JobMap::from_info(&info);
        let mut local_peers = job_map.local_peers.clone();
        local_peers.sort_unstable();
        local_peers.dedup();
        let job_size = crate::types::find_info(&info, &crate::types::attrs::PMIX_JOB_SIZE)
            .and_then(|i| i.value.as_integer())
            .and_then(|s| u32::try_from(s).ok());
        let barrier = super::barrier::create(&self.shared, seg.name(), job_size, &local_peers);
        let writer = Mutex::new(RingWriter::new(seg.region().clone()));
        m.insert(
            *ns,
            Ns {
                seg,
                data,
                barrier,
                writer,
                info,
                clients: FastMap::default(),
                owner: None,
                pending: 0,
                job_map,
                local_peers,
                deregistered: Vec::new(),
                claim_from: 0,
            },
        );
        drop(m);
        self.shared.command(Cmd::Watch(*ns));
        self.admit_early_clients(ns);
        Ok(())
    }

    /// Removes a namespace, its clients and its ring.
    pub fn deregister_nspace(&self, ns: &Nspace) -> Result<(), Status> {
        self.live()?;
        // Clients that came early for it are forgotten with it.
        lock(&self.shared.early.0).remove(ns);
        if self.shared.nspaces().remove(ns).is_none() {
            return Err(Status::ERR_NOT_FOUND);
        }
        self.shared.command(Cmd::Forget(*ns));
        Ok(())
    }

    /// Registers a local client: it may connect as `proc` when its socket
    /// peer credentials carry `uid`/`gid`. The namespace's ring belongs to
    /// its first client's uid; all its clients must share it. Refused with
    /// `PMIX_ERR_OUT_OF_RESOURCE` (and the limit on stderr) when the other
    /// registered clients that hold or may still claim an entry of the
    /// ring's client table already fill it, so that every registered
    /// client can connect at once (a fence over them all completes); ones
    /// that finalized, left, or were reported ended do not count.
    pub fn register_client(&self, proc: &Proc, uid: u32, gid: u32) -> Result<(), Status> {
        self.live()?;
        if !proc.rank.is_real() {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut m = self.shared.nspaces();
        let ns = m.get_mut(&proc.nspace).ok_or(Status::ERR_NOT_FOUND)?;
        let cap = ns.seg.region().geometry().client_capacity;
        let others = ns
            .clients
            .iter()
            .filter(|(r, c)| **r != proc.rank && c.may_hold_an_entry())
            .count();
        if others >= cap as usize {
            self.shared.say(&format!(
                "register_client {proc} refused: namespace {} has {others} registered clients that hold or may claim an entry of its ring's client table, which has {cap} (sized at register_nspace from PMIX_LOCAL_SIZE, or the server geometry's client_capacity when larger); register the namespace with PMIX_LOCAL_SIZE of at least {}, or deregister clients that will not come",
                proc.nspace,
                others + 1
            ));
            return Err(Status::ERR_OUT_OF_RESOURCE);
        }
        match ns.owner {
            Some((u, _)) if u != uid => return Err(Status::ERR_BAD_PARAM),
            Some(_) => {}
            None => {
                if uid != self.shared.euid {
                    ns.seg
                        .set_owner(uid, gid)
                        .map_err(|_| Status::ERR_NOT_SUPPORTED)?;
                    ns.data
                        .set_owner(uid, gid)
                        .map_err(|_| Status::ERR_NOT_SUPPORTED)?;
                    if let Some(b) = &ns.barrier {
                        b.set_owner(uid, gid)
                            .map_err(|_| Status::ERR_NOT_SUPPORTED)?;
                    }
                }
                ns.owner = Some((uid, gid));
            }
        }
        if uid != self.shared.euid {
            self.shared.open_dir()?;
        }
        if let Some(b) = &ns.barrier {
            super::barrier::registered(b, proc.rank);
        }
        ns.deregistered.retain(|r| *r != proc.rank.0);
        let old = ns.clients.insert(
            proc.rank,
            ClientSlot {
                uid,
                gid,
                ..ClientSlot::default()
            },
        );
        if old.is_none_or(|o| o.ever_connected) {
            ns.pending += 1;
        }
        drop(m);
        // A host may fork and exec before it registers: the process's
        // Hello may be waiting for this.
        self.shared.command(Cmd::Registered);
        Ok(())
    }

    /// `PMIx_server_dmodex_request`: the host asks, on behalf of another
    /// node, for the data local process `proc` committed (its
    /// `PMIX_REMOTE` and `PMIX_GLOBAL` items, as blob bytes for that node's
    /// server). `done` runs once `proc` has committed — at once when it
    /// has — or with `PMIX_ERR_NOT_FOUND` when `proc` is not a registered
    /// client here or leaves without committing. Called from any thread;
    /// `done` runs on the progress thread.
    pub fn dmodex_request(&self, proc: &Proc, done: Done<Vec<u8>>) -> Result<(), Status> {
        self.live()?;
        if !proc.rank.is_real() {
            return Err(Status::ERR_BAD_PARAM);
        }
        self.shared.command(Cmd::Serve { proc: *proc, done });
        Ok(())
    }

    /// Shared-memory bytes and items of namespace `ns`'s data store.
    pub fn data_footprint(&self, ns: &Nspace) -> Option<(u64, usize)> {
        self.shared.nspaces().get(ns).map(|n| n.data.footprint())
    }

    /// What `fastpmix inspect` prints about this server: its namespaces,
    /// rings, data stores, fence barriers and clients.
    pub fn inspect(&self) -> String {
        super::inspect_text(&self.shared)
    }

    /// Forgets a client. A connected one is disconnected (its socket is
    /// closed and its entry released; the host hears `client_finalized`
    /// with `lost = false`: the server asked for it).
    pub fn deregister_client(&self, proc: &Proc) -> Result<(), Status> {
        self.live()?;
        let mut m = self.shared.nspaces();
        let ns = m.get_mut(&proc.nspace).ok_or(Status::ERR_NOT_FOUND)?;
        let slot = ns.clients.remove(&proc.rank).ok_or(Status::ERR_NOT_FOUND)?;
        if ns.local_peers.binary_search(&proc.rank.0).is_ok() {
            ns.deregistered.push(proc.rank.0);
        }
        if !slot.ever_connected && !slot.ended {
            ns.pending = ns.pending.saturating_sub(1);
        }
        drop(m);
        // What was kept for it is for nobody now (not for a client
        // registered later under the same name).
        lock(&self.shared.cache).forget_client(proc);
        // Even when not connected: a fence waiting for it must fail.
        self.shared.command(Cmd::Disconnect(*proc));
        Ok(())
    }

    /// The environment a child needs to find this server as `proc`, whether
    /// or not `proc` is registered yet.
    pub fn setup_fork(&self, proc: &Proc) -> Result<Vec<(String, String)>, Status> {
        self.live()?;
        // Any order the Standard allows: resource managers call this before
        // registering the client (and in the child they forked, where a lock
        // another thread held at the fork stays held, so nothing here
        // locks). The process must be registered by the time it connects.
        let mut env = vec![
            (NAMESPACE_ENV.into(), proc.nspace.as_str().into()),
            (RANK_ENV.into(), proc.rank.0.to_string()),
            (
                SERVER_ADDR_ENV.into(),
                self.shared.sock_path.display().to_string(),
            ),
        ];
        // Made when the server started (no hwloc call here).
        if let Some(m) = crate::place::machine_text_if_made() {
            env.push((super::MACHINE_ENV.into(), m.into()));
        }
        Ok(env)
    }

    /// An event handed to the server by its host (never echoed back to the
    /// host). The source is the notification's. An event saying that a
    /// process ended ([`reports_an_end`]) about a registered client that is
    /// not connected marks it ended: fences stop waiting for it (they fail
    /// with `PMIX_ERR_LOST_CONNECTION`), as for a deregistered one.
    pub fn notify(&self, n: Notification) -> Result<(), Status> {
        self.live()?;
        if self.is_own_echo(&n) {
            return Ok(());
        }
        if reports_an_end(n.code) {
            self.mark_ended(&n.info);
        }
        let class = EventClass::of(n.code);
        self.shared.dispatch(Via::Host, n, class).map(|_| ())
    }

    /// An event this server brought onto the node (its `PMIX_EVENT_PROXY`
    /// names this server) coming back from the host: the host relays a
    /// client's event to every daemon of the job, this one included (Open
    /// MPI's runtime does, and turns its range into SESSION). This server
    /// delivered it to its own clients and handlers when the client sent
    /// it, so delivering the echo would hand them the event twice. An
    /// event the server raised itself (its source is this server) is
    /// never an echo.
    fn is_own_echo(&self, n: &Notification) -> bool {
        let me = self.shared.me;
        // The infos first: nearly every event names no proxy.
        n.info.iter().any(|i| {
            i.key == attrs::PMIX_EVENT_PROXY
                && i.value.as_procs().is_some_and(|p| p.as_slice() == [me])
        }) && n.source != me
    }

    /// Marks the not-connected registered clients `info` names as affected
    /// ended.
    fn mark_ended(&self, info: &[Info]) {
        let mut ended = Vec::new();
        {
            let mut m = self.shared.nspaces();
            let named = info
                .iter()
                .filter(|i| {
                    i.key == attrs::PMIX_EVENT_AFFECTED_PROC
                        || i.key == attrs::PMIX_EVENT_AFFECTED_PROCS
                })
                .filter_map(|i| i.value.as_procs())
                .flatten();
            for p in named {
                let Some(ns) = m.get_mut(&p.nspace) else {
                    continue;
                };
                let ranks: Vec<Rank> = if p.rank == Rank::WILDCARD {
                    ns.clients.keys().copied().collect()
                } else {
                    vec![p.rank]
                };
                for r in ranks {
                    let Some(c) = ns.clients.get_mut(&r) else {
                        continue;
                    };
                    if c.entry.is_some() || c.ended || c.finalized {
                        continue;
                    }
                    c.ended = true;
                    if !c.ever_connected {
                        ns.pending = ns.pending.saturating_sub(1);
                    }
                    ended.push(Proc {
                        nspace: p.nspace,
                        rank: r,
                    });
                }
            }
        }
        if ended.is_empty() {
            return;
        }
        {
            let mut c = lock(&self.shared.cache);
            for p in &ended {
                c.forget_client(p);
            }
        }
        self.shared.command(Cmd::Settle);
    }

    /// An event the server generates itself, with the server as source
    /// (passed up to the host as its range says).
    pub fn notify_as_server(&self, mut n: Notification) -> Result<(), Status> {
        self.live()?;
        n.source = self.shared.me;
        let class = EventClass::of(n.code);
        self.shared.dispatch(Via::Server, n, class).map(|_| ())
    }

    /// `PMIX_JCTRL_PREEMPT_ALERT` (from the host) to the processes among
    /// `targets` (empty: all) that declared `PMIX_JOB_CTRL_PREEMPTIBLE`,
    /// with `info` attached. Returns how many it reached.
    pub fn preempt_alert(&self, targets: &[Proc], info: Vec<Info>) -> Result<usize, Status> {
        self.live()?;
        self.shared.preempt_alert(targets, info)
    }

    /// The cache's occupancy: environment events cached, and job events
    /// retained for clients that have not connected yet.
    pub fn cache_occupancy(&self) -> (usize, usize) {
        lock(&self.shared.cache).occupancy()
    }

    /// Snapshot of namespaces and their clients (for `fastpmix inspect`).
    pub fn namespaces(&self) -> Vec<NspaceState> {
        let m = self.shared.nspaces();
        let mut v: Vec<NspaceState> = m
            .iter()
            .map(|(n, ns)| {
                let st = ns.seg.region().state();
                let mut clients: Vec<ClientState> = ns
                    .clients
                    .iter()
                    .map(|(r, c)| ClientState {
                        rank: *r,
                        pid: c.pid,
                        connected: c.entry.is_some(),
                        ever_connected: c.ever_connected,
                        finalized: c.finalized,
                        cursor: c.entry.map(|e| ns.seg.region().cursor_of(e)),
                        requests: c.requests,
                    })
                    .collect();
                clients.sort_by_key(|c| c.rank.0);
                NspaceState {
                    nspace: *n,
                    segment: ns.seg.name().to_owned(),
                    head: st.head,
                    clients,
                }
            })
            .collect();
        v.sort_by(|a, b| a.nspace.as_str().cmp(b.nspace.as_str()));
        v
    }

    fn live(&self) -> Result<(), Status> {
        if self.shared.stopping.is_set() {
            Err(Status::ERR_INIT)
        } else {
            Ok(())
        }
    }

    /// Stops the progress thread, disconnects every client and removes the
    /// rings and the socket. Idempotent.
    pub fn stop(&self) {
        let t = lock(&self.thread).take();
        let Some(t) = t else { return };
        self.shared.stopping.set();
        self.shared.command(Cmd::Stop);
        let _ = t.join();
        self.shared.engine.shutdown();
        self.shared.nspaces().clear();
        let _ = std::fs::remove_file(&self.shared.sock_path);
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One namespace as [`Server::namespaces`] reports it.
#[derive(Debug, Clone)]
pub struct NspaceState {
    /// The namespace.
    pub nspace: Nspace,
    /// Its ring segment.
    pub segment: String,
    /// Records published into it so far.
    pub head: u64,
    /// Its registered clients.
    pub clients: Vec<ClientState>,
}

/// One registered client.
#[derive(Debug, Clone)]
pub struct ClientState {
    /// Its rank.
    pub rank: Rank,
    /// Its pid once connected.
    pub pid: Option<i32>,
    /// Connected now.
    pub connected: bool,
    /// Connected at least once (a PMIx client, not a plain program).
    pub ever_connected: bool,
    /// Called finalize.
    pub finalized: bool,
    /// Its ring cursor while connected.
    pub cursor: Option<u64>,
    /// Requests it sent on its control socket after `Hello` (the slow
    /// path: events never travel there).
    pub requests: u64,
}
