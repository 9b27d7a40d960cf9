//! `PMIx_Put`, `PMIx_Commit`, `PMIx_Store_internal` and `PMIx_Get` of any
//! process's key.
//!
//! A Put stays in this process until `PMIx_Commit` sends what was put since
//! the last commit to the server in one message, which does not wait: the
//! server stores it before it reads this client's next request (a fence
//! after the commit finds it there). The server publishes it into the
//! namespace's shared-memory store, where every local peer reads it.
//!
//! `PMIx_Get` looks, in order, and stops at the first answer:
//! 1. what this process stored for that process and key with
//!    `PMIx_Store_internal`;
//! 2. for itself (and for `PMIX_RANK_UNDEF` of its namespace): what it
//!    put (committed or not, any scope);
//! 3. the job information of its namespace (`get.rs`);
//! 4. a reserved key (`pmix` prefix) of its namespace not found so far:
//!    `PMIX_ERR_NOT_FOUND` (the host gives those at start);
//! 5. for a peer of its namespace: the shared-memory store, read in this
//!    thread. A peer whose data is there but without the key is
//!    `PMIX_ERR_NOT_FOUND` at once (what it committed is what it gives);
//!    one there in a scope that excludes the caller is
//!    `PMIX_ERR_EXISTS_OUTSIDE_SCOPE`; `PMIX_RANK_UNDEF` looks through
//!    every rank's data. What a peer's item shows depends on whether it
//!    runs on this node; when the job information does not say and a
//!    `PMIX_REMOTE` item decides, the server answers instead (see
//!    [`look`]);
//! 6. with `PMIX_OPTIONAL` (or `PMIX_GET_REFRESH_CACHE` of a local peer,
//!    whose data is always fresh here): `PMIX_ERR_NOT_FOUND`, never a
//!    round trip;
//! 7. the server, which waits for the peer's commit (or any rank's, for
//!    `PMIX_RANK_UNDEF`) or asks the host for a process of another node
//!    (`server/exchange.rs` has its rules; `PMIX_TIMEOUT`,
//!    `PMIX_IMMEDIATE` and `PMIX_GET_REFRESH_CACHE` are the server's to
//!    apply). Another namespace always goes there.
//!
//! These are the Standard's retrieval rules (Chap_API_Sharing_Basics.tex
//! for non-reserved keys, Chap_API_Reserved_Keys.tex for reserved ones).
//!
//! `PMIX_DATA_SCOPE` narrows every step to items put in that scope.

use super::Client;
use crate::server::{reserved_key, GetOptions};
use crate::store::{scope, visible, Found, StoreReader};
use crate::sync::lock;
use crate::types::{Info, Key, Proc, Rank, Status, Value};
use crate::wire::control::Request;
use crate::wire::{info_to_record, proc_to_record};
use shm_layout::store::KvItem;
use std::collections::HashMap;

/// What this process put, and its view of the store.
#[derive(Debug)]
pub(super) struct Kv {
    /// Put since the last commit, in order.
    staged: Vec<(u8, Info)>,
    /// Everything it put: per key, the latest value of each scope with
    /// the number of its Put (a key put again replaces, memory stays
    /// bounded by the distinct keys).
    mine: HashMap<Key, [Option<(u64, Value)>; 5]>,
    /// Puts so far (orders `mine`'s values across scopes).
    puts: u64,
    /// Commits sent (a fence through the barrier waits until the server
    /// handled as many).
    commits: u64,
    /// `PMIx_Store_internal`.
    internal: HashMap<(Proc, Key), Value>,
    store: StoreReader,
    /// Told the user that the store cannot be read (its Gets then go to
    /// the server, which has the same data).
    told: bool,
}

impl Kv {
    /// Commits sent so far.
    pub(super) fn commits(&self) -> u64 {
        self.commits
    }

    /// The state of a process whose namespace's ring is `segment` (its
    /// store mapped already, if the server made it).
    pub(super) fn new(segment: &str) -> Kv {
        let mut store = StoreReader::new(segment);
        store.open_first();
        Kv {
            staged: Vec::new(),
            mine: HashMap::new(),
            puts: 0,
            commits: 0,
            internal: HashMap::new(),
            store,
            told: false,
        }
    }
}

/// A key as `PMIx_Put`/`PMIx_Get` take it: not empty, at most
/// `PMIX_MAX_KEYLEN`, no NUL.
fn key_of(key: &str) -> Result<Key, Status> {
    if key.is_empty() {
        return Err(Status::ERR_BAD_PARAM);
    }
    Key::new(key)
}

impl Client {
    /// `PMIx_Put`: `value` under `key`, for the processes `scope` names
    /// (`PMIX_LOCAL`, `PMIX_REMOTE`, `PMIX_GLOBAL`; `PMIX_INTERNAL` keeps it
    /// in this process; `PMIX_SCOPE_UNDEF` counts as global, as in
    /// OpenPMIx). Visible to this process's own `get` at once, to others
    /// after [`Client::commit`]. A later Put of the same key replaces it.
    pub fn put(&self, scope: u8, key: &str, value: Value) -> Result<(), Status> {
        self.live_locally()?;
        let key = key_of(key)?;
        if scope > scope::INTERNAL {
            return Err(Status::ERR_BAD_PARAM);
        }
        let mut kv = lock(&self.inner.kv);
        let item = Info::new(key, value);
        if scope == scope::INTERNAL {
            kv.internal
                .insert((self.me(), item.key.clone()), item.value.clone());
        } else {
            kv.staged.push((scope, item.clone()));
        }
        kv.puts += 1;
        let n = kv.puts;
        kv.mine.entry(item.key).or_default()[usize::from(scope)] = Some((n, item.value));
        Ok(())
    }

    /// `PMIx_Commit`: sends what was put since the last commit (nothing
    /// put: nothing sent). Returns once it is on its way; the server
    /// stores it before it handles this process's next request.
    pub fn commit(&self) -> Result<(), Status> {
        self.live()?;
        let staged = std::mem::take(&mut lock(&self.inner.kv).staged);
        if staged.is_empty() {
            return Ok(());
        }
        let items = staged
            .iter()
            .map(|(s, i)| KvItem {
                scope: *s,
                info: info_to_record(i),
            })
            .collect();
        let sent = self.send(&Request::Commit { items });
        if sent.is_ok() {
            lock(&self.inner.kv).commits += 1;
        }
        if sent.is_err() {
            // Not sent: put back, so a retry after a transient error sends it.
            let mut kv = lock(&self.inner.kv);
            let later = std::mem::replace(&mut kv.staged, staged);
            kv.staged.extend(later);
        }
        sent
    }

    /// `PMIx_Store_internal`: `value` under `key` for `proc`, in this
    /// process only; this process's `get` of that process and key returns
    /// it before anything else.
    pub fn store_internal(&self, proc: &Proc, key: &str, value: Value) -> Result<(), Status> {
        self.live_locally()?;
        let key = key_of(key)?;
        lock(&self.inner.kv).internal.insert((*proc, key), value);
        Ok(())
    }

    /// `PMIx_Get` of `key` of `proc` with the caller's directives (see the
    /// module's order). Blocks while the server waits for the data.
    pub fn get_with(&self, proc: &Proc, key: &str, info: &[Info]) -> Result<Value, Status> {
        let (key, opts) = self.get_args(key, info)?;
        match self.get_here(proc, &key, &opts)? {
            Some(v) => Ok(v),
            None => {
                let o = self.blocking(get_request(proc, &key, info));
                answer(o.status, o.results)
            }
        }
    }

    /// `PMIx_Get` without directives.
    pub fn get(&self, proc: &Proc, key: &str) -> Result<Value, Status> {
        self.get_with(proc, key, &[])
    }

    /// `PMIx_Get_nb`: `SUCCESS` means `cb` runs with the outcome on the
    /// callback thread (after this returns); any other status is the
    /// outcome, and `cb` never runs.
    pub fn get_nb(
        &self,
        proc: &Proc,
        key: &str,
        info: &[Info],
        cb: impl FnOnce(Result<Value, Status>) + Send + 'static,
    ) -> Status {
        let (key, opts) = match self.get_args(key, info) {
            Ok(x) => x,
            Err(s) => return s,
        };
        match self.get_here(proc, &key, &opts) {
            Ok(None) => self.non_blocking(get_request(proc, &key, info), move |o| {
                cb(answer(o.status, o.results))
            }),
            here => {
                let r = here.map(|v| v.expect("answered here"));
                drop(super::callbacks::defer(move || cb(r)));
                Status::SUCCESS
            }
        }
    }

    fn get_args(&self, key: &str, info: &[Info]) -> Result<(Key, GetOptions), Status> {
        self.live_locally()?;
        Ok((key_of(key)?, GetOptions::of(info)?))
    }

    /// Steps 1 to 5: `Ok(None)` means ask the server.
    fn get_here(&self, proc: &Proc, key: &Key, o: &GetOptions) -> Result<Option<Value>, Status> {
        let me = self.me();
        let mut kv = lock(&self.inner.kv);
        // Checked for emptiness first: the lookup's key is a copy of the
        // proc and the key, which most processes never need.
        if !kv.internal.is_empty() {
            if let Some(v) = kv.internal.get(&(*proc, key.clone())) {
                return Ok(Some(v.clone()));
            }
        }
        // `PMIX_RANK_UNDEF` of this namespace (what a C `PMIx_Get` of a NULL
        // proc asks, "in place of the caller's ID") includes this process.
        let undef_here = proc.rank == Rank::UNDEF && proc.nspace == me.nspace;
        if *proc == me || undef_here {
            let latest = kv.mine.get(key).and_then(|by_scope| {
                (0u8..5)
                    .filter(|s| visible(*s, true, true, o.scope))
                    .filter_map(|s| by_scope[usize::from(s)].as_ref())
                    .max_by_key(|(n, _)| *n)
            });
            if let Some((_, v)) = latest {
                return Ok(Some(v.clone()));
            }
        }
        if proc.nspace != me.nspace {
            return if o.optional {
                Err(Status::ERR_NOT_FOUND)
            } else {
                Ok(None)
            };
        }
        if let Ok(v) = self.job_get(proc, key) {
            return Ok(Some(v));
        }
        // A reserved key of this namespace is the host's, given at start:
        // not found here is not found (the Standard's retrieval rules for
        // reserved keys), never a wait.
        if reserved_key(key.as_str()) {
            return Err(Status::ERR_NOT_FOUND);
        }
        kv.store.catch_up();
        if let Some(why) = kv.store.broken().filter(|_| !kv.told).map(str::to_owned) {
            kv.told = true;
            super::say(
                &me,
                format!("reads its peers' data through the server: {why}"),
            );
        }
        let map = &self.inner.job_map;
        if proc.rank == Rank::UNDEF {
            for r in kv.store.ranks() {
                match look(&mut kv.store, r, key, o, map.is_local(r))? {
                    Some(Found::Value(v)) => return Ok(Some(v)),
                    Some(_) => {}
                    // The server tells (at once: the data is there).
                    None => return Ok(None),
                }
            }
            return if o.optional {
                Err(Status::ERR_NOT_FOUND)
            } else {
                Ok(None)
            };
        }
        if !proc.rank.is_real() || *proc == me {
            return Err(Status::ERR_NOT_FOUND);
        }
        let here = map.is_local(proc.rank.0);
        // A refresh asks again for another node's data.
        if here == Some(true) || !o.refresh {
            match look(&mut kv.store, proc.rank.0, key, o, here)? {
                Some(Found::Value(v)) => return Ok(Some(v)),
                Some(Found::Absent) => return Err(Status::ERR_NOT_FOUND),
                Some(Found::OutsideScope) => return Err(Status::ERR_EXISTS_OUTSIDE_SCOPE),
                // Nothing of it here, or the server tells (at once: the
                // data is there).
                None => return Ok(None),
                Some(Found::Unknown) => {}
            }
        }
        // A local peer's refresh has nothing to ask anyone: not found.
        if o.optional || (o.refresh && here == Some(true)) {
            return Err(Status::ERR_NOT_FOUND);
        }
        Ok(None)
    }

    /// Calls that need no server (Put, Get of local data) work while it
    /// is unreachable; after finalize, or in a forked child, they do not.
    fn live_locally(&self) -> Result<(), Status> {
        match self.live() {
            Err(s) if s == Status::ERR_UNREACH => Ok(()),
            r => r,
        }
    }
}

/// `key` of `rank` in the store as this process may see it: `here` says
/// whether `rank` runs on this node. When the job information does not say
/// (a host that registered no maps and no local peers), both readings are
/// tried: where they agree, that is the answer; where they do not (a
/// `PMIX_REMOTE` item decides), a `PMIX_LOCAL` item of the key settles it
/// (another node's data never holds one: the rank is here), else `None`:
/// the server, which knows which ranks it registered, answers.
fn look(
    store: &mut StoreReader,
    rank: u32,
    key: &Key,
    o: &GetOptions,
    here: Option<bool>,
) -> Result<Option<Found>, Status> {
    let mut read = |near: bool| store.find(rank, key.as_str(), near, o.scope);
    if let Some(near) = here {
        return read(near).map(Some);
    }
    let (near, far) = (read(true)?, read(false)?);
    if near == far {
        return Ok(Some(near));
    }
    let local = store.find(rank, key.as_str(), true, Some(scope::LOCAL))?;
    Ok(matches!(local, Found::Value(_)).then_some(near))
}

fn get_request<'a>(proc: &Proc, key: &Key, info: &'a [Info]) -> impl FnOnce(u64) -> Request + 'a {
    let (proc, key) = (proc_to_record(proc), key.as_str().to_owned());
    move |id| Request::Get {
        id,
        proc,
        key,
        info: info.iter().map(info_to_record).collect(),
    }
}

/// The value of a Get's `Result`.
fn answer(status: Status, results: Vec<Info>) -> Result<Value, Status> {
    if !status.is_success() {
        return Err(status);
    }
    results
        .into_iter()
        .next()
        .map(|i| i.value)
        .ok_or(Status::ERR_NOT_FOUND)
}
