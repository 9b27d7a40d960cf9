//! The results of a chain's consecutive C handlers, kept as one C array.
//!
//! A C handler is handed the results of the handlers before it as a
//! `pmix_info_t` array it may edit in place (RFC0018: change a value, or
//! clear a key to remove the entry). Building that array afresh for every
//! handler, and converting it back after, made one event through n C
//! handlers cost O(n²) conversions (20,000 handlers: 13 s). Instead, the
//! chain keeps one malloc'd array with spare capacity ([`CMirror`], the
//! engine's [`Mirror`]) for as long as C handlers follow each other:
//! - each handler is handed the array as it stands;
//! - its completion appends only its status entry and the infos it returned,
//!   as Rust values ([`Mirror::append`]), touching nothing the handler was
//!   handed: the completion may run on another thread while the handler
//!   still reads its arrays (they stay valid until the later of its return
//!   and its completion);
//! - before the next C handler is called ([`CMirror::settle`], on the
//!   progress thread, once the previous handler has returned and
//!   completed), entries whose key a handler cleared are dropped (a one-byte
//!   look per entry: an in-place removal cannot be seen any cheaper) and the
//!   appended entries are written in (the array grows geometrically);
//! - a Rust handler next, or the chain's outcome, converts the array back
//!   once ([`Mirror::into_infos`]).
//!
//! Value edits stay in the array; an entry a handler left in a form Rust
//! cannot read (a type fastpmix does not carry) is dropped at that
//! conversion back, as the completion used to drop it.

use super::cmem::{destruct_value, free_infos};
use super::conv::{info_from_c, info_to_c};
use super::ctypes::pmix_info_t;
use crate::event::Mirror;
use crate::types::{Info, Status};
use std::any::Any;
use std::ptr;

/// Smallest array allocated.
const MIN_CAP: usize = 8;

/// One chain's results as a C array: `ptr[..len]` are filled entries that
/// own their values, `ptr[len..cap]` is spare room (malloc'd, `ptr` NULL
/// while `cap` is 0).
pub(super) struct CMirror {
    ptr: *mut pmix_info_t,
    len: usize,
    cap: usize,
    /// Entries completions added since the array was last handed out,
    /// written in by the next [`CMirror::settle`].
    pending: Vec<Info>,
}

// SAFETY: the array is malloc'd memory owned by this value alone, with no
// thread affinity; the engine moves the chain (and this value) between
// threads, and the Mirror contract keeps its mutation and release to
// moments when no handler reads the array.
unsafe impl Send for CMirror {}

impl CMirror {
    /// A mirror of `infos` (the results of the Rust handlers before, if
    /// any): one conversion per entry, once per run of C handlers.
    pub fn from_infos(infos: &[Info]) -> Result<CMirror, Status> {
        let mut m = CMirror {
            ptr: ptr::null_mut(),
            len: 0,
            cap: 0,
            pending: Vec::new(),
        };
        // On an error `m` is dropped, and what was written with it.
        m.write(infos).map_err(|(_, s)| s)?;
        Ok(m)
    }

    /// Makes the array what the next handler is handed: drops the entries
    /// whose key was cleared, writes the pending ones. Returns the array
    /// (NULL when empty) and its length. On an error (out of memory) the
    /// entries not written stay pending: nothing is lost.
    ///
    /// # Safety
    /// No handler of the chain still reads the array: the one it was last
    /// handed to has both returned and completed (the progress thread
    /// calls the chain's next handler only then).
    pub unsafe fn settle(&mut self) -> Result<(*mut pmix_info_t, usize), Status> {
        // SAFETY: no handler reads the array (this function's contract).
        unsafe { self.sweep() };
        if !self.pending.is_empty() {
            let pending = std::mem::take(&mut self.pending);
            if let Err((written, s)) = self.write(&pending) {
                self.pending = pending;
                self.pending.drain(..written);
                return Err(s);
            }
        }
        let p = if self.len == 0 {
            ptr::null_mut()
        } else {
            self.ptr
        };
        Ok((p, self.len))
    }

    /// Drops the entries whose key a handler cleared (RFC0018), keeping the
    /// order of the others.
    ///
    /// # Safety
    /// As [`CMirror::settle`]: entries move.
    unsafe fn sweep(&mut self) {
        let mut kept = 0;
        for k in 0..self.len {
            // SAFETY: k < len: a filled entry of our array.
            let e = unsafe { self.ptr.add(k) };
            // SAFETY: as above; key[0] is read through the raw pointer.
            if unsafe { (*e).key[0] } == 0 {
                // SAFETY: the entry owns its value (ours, or what the
                // handler put in its place, as the Standard's macros do);
                // it is never read again.
                unsafe { destruct_value(&mut (*e).value) };
                continue;
            }
            if kept != k {
                // SAFETY: both in bounds (kept < k < len); the entry moves
                // down bitwise, its value's ownership with it, and the slot
                // it leaves is beyond the new length.
                unsafe { ptr::copy_nonoverlapping(e, self.ptr.add(kept), 1) };
            }
            kept += 1;
        }
        count(|c| c.swept += self.len);
        self.len = kept;
    }

    /// Room for `extra` more entries: the array grows to at least twice its
    /// size, so appending n entries one handler at a time costs O(n).
    fn reserve(&mut self, extra: usize) -> Result<(), Status> {
        let need = self.len.checked_add(extra).ok_or(Status::ERR_NOMEM)?;
        if need <= self.cap {
            return Ok(());
        }
        let cap = need.max(self.cap.saturating_mul(2)).max(MIN_CAP);
        let bytes = cap
            .checked_mul(std::mem::size_of::<pmix_info_t>())
            .ok_or(Status::ERR_NOMEM)?;
        // SAFETY: `ptr` is NULL or our malloc'd array; it is resized only
        // from `from_infos` (not handed out yet) and `settle` (no handler
        // reads it, its contract). On failure the old array is untouched.
        let p = unsafe { libc::realloc(self.ptr.cast(), bytes) } as *mut pmix_info_t;
        if p.is_null() {
            return Err(Status::ERR_NOMEM);
        }
        self.ptr = p;
        self.cap = cap;
        Ok(())
    }

    /// Writes `infos` after the entries. On an error, those written stay
    /// and their count comes with it.
    fn write(&mut self, infos: &[Info]) -> Result<(), (usize, Status)> {
        self.reserve(infos.len()).map_err(|s| (0, s))?;
        for (k, i) in infos.iter().enumerate() {
            // SAFETY: reserve made room: len < cap, a spare slot that holds
            // nothing (beyond the filled entries).
            let slot = unsafe { self.ptr.add(self.len) };
            // SAFETY: as above; zeroed first, so that a failed conversion
            // (which writes no value) leaves nothing to release.
            unsafe { ptr::write_bytes(slot, 0, 1) };
            // SAFETY: as above; the slot is ours and nothing else refers to it.
            info_to_c(i, unsafe { &mut *slot }).map_err(|s| (k, s))?;
            self.len += 1;
        }
        count(|c| c.to_c += infos.len());
        Ok(())
    }
}

impl Mirror for CMirror {
    fn append(&mut self, infos: Vec<Info>) {
        // The array is left alone: the handler that completed may still
        // read it. `settle` writes these in.
        self.pending.extend(infos);
    }

    fn into_infos(mut self: Box<Self>) -> Vec<Info> {
        let mut out = Vec::with_capacity(self.len + self.pending.len());
        for k in 0..self.len {
            // SAFETY: k < len: a filled entry; the engine converts back only
            // between handler calls (the Mirror contract), so nobody writes it.
            let e = unsafe { &*self.ptr.add(k) };
            if e.key[0] == 0 {
                continue;
            }
            // SAFETY: our entry, its value as we or a handler wrote it.
            if let Ok(i) = unsafe { info_from_c(e) } {
                out.push(i);
            }
        }
        count(|c| c.from_c += self.len);
        out.append(&mut self.pending);
        out
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Drop for CMirror {
    fn drop(&mut self) {
        // SAFETY: `ptr[..len]` are our filled entries and `ptr` our malloc'd
        // array (or NULL); the engine drops a chain only between handler
        // calls (the Mirror contract), so nothing reads them any more.
        unsafe { free_infos(self.ptr, self.len) };
    }
}

/// Entries converted and looked at, per direction (the tests check that
/// a chain of n C handlers converts O(n) entries; counted in tests only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(super) struct Counts {
    /// Written into a C array.
    pub to_c: usize,
    /// Read back into Rust.
    pub from_c: usize,
    /// Looked at for a cleared key.
    pub swept: usize,
}

#[cfg(test)]
pub(super) static COUNTS: std::sync::Mutex<Counts> = std::sync::Mutex::new(Counts {
    to_c: 0,
    from_c: 0,
    swept: 0,
});

#[cfg(test)]
fn count(f: impl FnOnce(&mut Counts)) {
    f(&mut COUNTS.lock().unwrap_or_else(|e| e.into_inner()));
}

#[cfg(not(test))]
fn count(_: impl FnOnce(&mut Counts)) {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capi::c_registration;
    use crate::capi::conv::{infos_to_c, slice, value_to_c};
    use crate::capi::ctypes::{pmix_proc_t, EventCompleteFn};
    use crate::event::{ChainOutcome, Engine, Invocation, Notification, Registration};
    use crate::types::attrs::{PMIX_EVENT_HDLR_APPEND, PMIX_EVENT_HDLR_NAME};
    use crate::types::{DataRange, Key, Proc, Value};
    use std::ffi::c_void;
    use std::sync::{mpsc, Mutex};

    const CODE: Status = Status(-8400);

    /// The tests that read [`COUNTS`]: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn key(s: &str) -> Key {
        Key::new(s).expect("test key")
    }

    /// An engine whose handlers are `regs`, each named and appended in order.
    fn engine_with(regs: Vec<(&str, Registration)>) -> Engine {
        let engine = Engine::builder(Proc::new("mirror-test", 0).unwrap())
            .build()
            .expect("engine");
        for (name, r) in regs {
            let r = r
                .info(Info::new(PMIX_EVENT_HDLR_NAME, Value::String(name.into())))
                .info(Info::new(PMIX_EVENT_HDLR_APPEND, Value::Bool(true)));
            engine.register(r).expect("registration");
        }
        engine
    }

    /// One PROC_LOCAL event of [`CODE`] through `engine`; its outcome.
    fn run(engine: &Engine) -> ChainOutcome {
        let (tx, rx) = mpsc::channel();
        let me = Proc::new("mirror-test", 0).unwrap();
        engine
            .notify_observed(
                Notification::new(CODE, me, DataRange::PROC_LOCAL),
                move |o| {
                    let _ = tx.send(o);
                },
            )
            .expect("notify");
        rx.recv().expect("outcome")
    }

    fn show(i: &Info) -> String {
        let v = match &i.value {
            Value::String(s) => s.clone(),
            Value::Uint32(x) => x.to_string(),
            Value::Status(s) => format!("st{}", s.0),
            v => format!("{v:?}"),
        };
        format!("{}={v}", i.key.as_str())
    }

    /// What a C handler sees in `p[..n]`, a cleared key as `<cleared>`.
    ///
    /// # Safety
    /// `p[..n]` are valid infos.
    unsafe fn seen(p: *const pmix_info_t, n: usize) -> Vec<String> {
        // SAFETY: the caller's guarantee.
        let arr = unsafe { slice(p, n) }.expect("results array");
        arr.iter()
            .map(|e| match e.key[0] {
                0 => "<cleared>".to_owned(),
                // SAFETY: a valid info (the caller's guarantee).
                _ => show(&unsafe { info_from_c(e) }.expect("readable result")),
            })
            .collect()
    }

    /// The entry of `p[..n]` under `k`.
    ///
    /// # Safety
    /// `p[..n]` are valid infos, none read or written elsewhere meanwhile.
    unsafe fn entry<'a>(p: *mut pmix_info_t, n: usize, k: &str) -> &'a mut pmix_info_t {
        for i in 0..n {
            // SAFETY: in bounds, valid, and ours alone (the caller's guarantee).
            let e = unsafe { &mut *p.add(i) };
            // SAFETY: a valid info (the caller's guarantee).
            if e.key[0] != 0 && unsafe { info_from_c(e) }.is_ok_and(|i| i.key == *k) {
                return e;
            }
        }
        panic!("no entry {k}");
    }

    /// Frees a returned array: `cbdata` is the box [`complete_with`] made.
    unsafe extern "C" fn release(_: i32, cbdata: *mut c_void) {
        // SAFETY: made by `complete_with` from Box::into_raw; released once.
        let b = unsafe { Box::from_raw(cbdata as *mut (usize, usize)) };
        // SAFETY: the array infos_to_c made for that completion.
        unsafe { free_infos(b.0 as *mut pmix_info_t, b.1) };
    }

    /// Completes with `st`, returning `infos` in a malloc'd array released
    /// through the handler's callback, as C handlers do.
    ///
    /// # Safety
    /// `cbfunc`/`cbdata` as the library handed them, not yet called.
    unsafe fn complete_with(cbfunc: EventCompleteFn, cbdata: usize, st: Status, infos: &[Info]) {
        let (p, n) = infos_to_c(infos).expect("returned array");
        let keep = Box::into_raw(Box::new((p as usize, n)));
        // SAFETY: the caller's guarantee; the array lives until `release`.
        unsafe {
            cbfunc(
                st.0,
                p,
                n,
                Some(release),
                keep.cast(),
                cbdata as *mut c_void,
            )
        };
    }

    /// What each handler of [`counted`]'s chain saw (nresults, last key).
    static COUNTED: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());

    unsafe extern "C" fn counted(
        _id: usize,
        _code: i32,
        _source: *const pmix_proc_t,
        _info: *mut pmix_info_t,
        _ninfo: usize,
        results: *mut pmix_info_t,
        nresults: usize,
        cbfunc: EventCompleteFn,
        cbdata: *mut c_void,
    ) {
        let last = match nresults {
            0 => String::new(),
            // SAFETY: the results the library handed us, n ≥ 1 entries.
            n => unsafe { seen(results.add(n - 1), 1) }.remove(0),
        };
        locked(&COUNTED).push((nresults, last));
        // SAFETY: the completion as handed to us, called once.
        unsafe { complete_with(cbfunc, cbdata as usize, Status::SUCCESS, &[]) };
    }

    #[test]
    fn c_handler_chain_of_20000_handlers_runs_every_handler_once_converting_each_result_once() {
        let _serial = locked(&SERIAL);
        const N: usize = 20_000;
        let names: Vec<String> = (0..N).map(|i| format!("h{i}")).collect();
        let engine = engine_with(
            names
                .iter()
                .map(|n| (n.as_str(), c_registration(&[CODE], counted)))
                .collect(),
        );
        locked(&COUNTED).clear();
        *locked(&COUNTS) = Counts::default();
        let o = run(&engine);
        let counts = *locked(&COUNTS);
        assert_eq!(o.handlers_run, N);
        // Handler i saw the i entries of the handlers before it, the last
        // one h(i-1)'s status.
        let saw = std::mem::take(&mut *locked(&COUNTED));
        assert_eq!(saw.len(), N);
        for (i, (n, last)) in saw.iter().enumerate() {
            assert_eq!(*n, i, "handler h{i}");
            if i > 0 {
                assert_eq!(*last, format!("h{}=st0", i - 1), "handler h{i}");
            }
        }
        let want: Vec<String> = names.iter().map(|n| format!("{n}=st0")).collect();
        assert_eq!(o.results.iter().map(show).collect::<Vec<_>>(), want);
        // Linear: each status entry was written into the C array once and
        // read back once (the last handler's entry never went to C: nobody
        // was handed it). Only the one-byte look for cleared keys touches
        // every earlier entry at every handler: the mirror is made at the
        // second handler with the first's entry (1 look), then handler k
        // looks at the k - 2 entries before the pending one.
        assert_eq!(counts.to_c, N - 1);
        assert_eq!(counts.from_c, N - 1);
        assert_eq!(counts.swept, 1 + (N - 1) * (N - 2) / 2);
        engine.shutdown();
    }

    /// What each handler of the editing chain saw, by name.
    static SAW: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());

    fn saw(name: &str, v: Vec<String>) {
        locked(&SAW).push((name.to_owned(), v));
    }

    fn s(k: &str, v: &str) -> Info {
        Info::new(key(k), Value::String(v.into()))
    }

    /// The C handlers of the editing chain, told apart by the name in their
    /// info array.
    unsafe extern "C" fn editor(
        _id: usize,
        _code: i32,
        _source: *const pmix_proc_t,
        info: *mut pmix_info_t,
        ninfo: usize,
        results: *mut pmix_info_t,
        nresults: usize,
        cbfunc: EventCompleteFn,
        cbdata: *mut c_void,
    ) {
        // SAFETY: the info array the library handed us.
        let info = unsafe { infos_from_c_checked(info, ninfo) };
        let name = crate::types::find_info(&info, &PMIX_EVENT_HDLR_NAME)
            .and_then(|i| i.value.as_str().map(str::to_owned))
            .expect("own name in the info array");
        // SAFETY: the results array the library handed us.
        saw(&name, unsafe { seen(results, nresults) });
        let cb = cbdata as usize;
        // SAFETY: the results array is ours (valid, written by nobody else)
        // until we both return and complete; the completion is called once.
        unsafe {
            match name.as_str() {
                "c1" => complete_with(
                    cbfunc,
                    cb,
                    Status::SUCCESS,
                    &[
                        s("t.a", "alpha"),
                        Info::new(key("t.b"), Value::Uint32(7)),
                        s("t.c", "gamma"),
                    ],
                ),
                "c2" => {
                    // A value changed in place, an entry removed by its key.
                    entry(results, nresults, "t.b").value.data.uint32 = 8;
                    entry(results, nresults, "t.c").key[0] = 0;
                    // Completed from another thread while this one still
                    // runs, with more infos than the array has room for;
                    // then the array is read again, after the completion.
                    let mut ret = vec![s("t.d", "delta")];
                    ret.extend(
                        (0..40).map(|i| Info::new(key(&format!("t.f{i}")), Value::Uint32(i))),
                    );
                    std::thread::scope(|sc| {
                        sc.spawn(|| complete_with(cbfunc, cb, Status::SUCCESS, &ret));
                    });
                    saw("c2 after completing", seen(results, nresults));
                }
                "c3" => {
                    for i in 0..40 {
                        entry(results, nresults, &format!("t.f{i}")).key[0] = 0;
                    }
                    complete_with(cbfunc, cb, Status::SUCCESS, &[])
                }
                "c5" => {
                    // A string replaced as the Standard's macros do: the old
                    // value released, a new one loaded.
                    let d = entry(results, nresults, "t.d");
                    destruct_value(&mut d.value);
                    value_to_c(&Value::String("delta5".into()), &mut d.value).expect("load");
                    entry(results, nresults, "c1").key[0] = 0;
                    complete_with(cbfunc, cb, Status::EVENT_NO_ACTION_TAKEN, &[])
                }
                _ => complete_with(cbfunc, cb, Status::SUCCESS, &[]),
            }
        }
    }

    /// # Safety
    /// `p[..n]` are valid infos.
    unsafe fn infos_from_c_checked(p: *const pmix_info_t, n: usize) -> Vec<Info> {
        // SAFETY: the caller's guarantee.
        unsafe { crate::capi::conv::infos_from_c(p, n) }.expect("info array")
    }

    #[test]
    fn c_handlers_edit_results_in_place_and_a_rust_handler_between_them_sees_and_makes_edits() {
        // c1 → c2 → c3 (C) → r4 (Rust) → c5 → c6 (C).
        let r4 = Registration::new(&[CODE], |mut inv: Invocation| {
            saw("r4", inv.results().iter().map(show).collect());
            for i in inv.results_mut() {
                if i.key == *"t.a" {
                    i.mark_removed();
                } else if i.key == *"t.d" {
                    i.value = Value::String("DELTA".into());
                }
            }
            inv.complete(
                Status::SUCCESS,
                vec![Info::new(key("t.e"), Value::Uint32(5))],
            );
        });
        let engine = engine_with(vec![
            ("c1", c_registration(&[CODE], editor)),
            ("c2", c_registration(&[CODE], editor)),
            ("c3", c_registration(&[CODE], editor)),
            ("r4", r4),
            ("c5", c_registration(&[CODE], editor)),
            ("c6", c_registration(&[CODE], editor)),
        ]);
        locked(&SAW).clear();
        let o = run(&engine);
        let got = std::mem::take(&mut *locked(&SAW));
        let fillers: Vec<String> = (0..40).map(|i| format!("t.f{i}={i}")).collect();
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut c3 = v(&["c1=st0", "t.a=alpha", "t.b=8", "c2=st0", "t.d=delta"]);
        c3.extend(fillers);
        let want: Vec<(String, Vec<String>)> = vec![
            ("c1".into(), vec![]),
            (
                "c2".into(),
                v(&["c1=st0", "t.a=alpha", "t.b=7", "t.c=gamma"]),
            ),
            (
                "c2 after completing".into(),
                v(&["c1=st0", "t.a=alpha", "t.b=8", "<cleared>"]),
            ),
            ("c3".into(), c3),
            (
                "r4".into(),
                v(&[
                    "c1=st0",
                    "t.a=alpha",
                    "t.b=8",
                    "c2=st0",
                    "t.d=delta",
                    "c3=st0",
                ]),
            ),
            (
                "c5".into(),
                v(&[
                    "c1=st0",
                    "t.b=8",
                    "c2=st0",
                    "t.d=DELTA",
                    "c3=st0",
                    "r4=st0",
                    "t.e=5",
                ]),
            ),
            (
                "c6".into(),
                v(&[
                    "t.b=8",
                    "c2=st0",
                    "t.d=delta5",
                    "c3=st0",
                    "r4=st0",
                    "t.e=5",
                    "c5=st-331",
                ]),
            ),
        ];
        assert_eq!(got, want);
        assert_eq!(
            o.results.iter().map(show).collect::<Vec<_>>(),
            v(&[
                "t.b=8",
                "c2=st0",
                "t.d=delta5",
                "c3=st0",
                "r4=st0",
                "t.e=5",
                "c5=st-331",
                "c6=st0"
            ])
        );
        assert_eq!(o.final_status, Some(Status::SUCCESS));
        engine.shutdown();
    }
}
