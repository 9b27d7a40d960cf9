//! One io_uring that waits on everything at once: shared futex words, readable
//! file descriptors (sockets, pidfds, eventfds) and timers.
//!
//! The server's progress thread owns one [`Reactor`]. It arms one-shot
//! *watches*, each tagged with a caller-chosen [`Token`], and [`Reactor::wait`]
//! reports `(token, result)` once per watch that completed.
//!
//! # user_data
//!
//! Each watch occupies one slot of a slab; the submission's `user_data` is the
//! slot index (bit 63 clear). Internal submissions (the cancels) carry
//! [`INTERNAL`] (bit 63 set) and are never reported. A slot is freed only
//! when the kernel posted the watch's single completion, so a `user_data`
//! never names two live watches, and the token space is the full `u64`.
//!
//! # Cancellation
//!
//! [`Reactor::cancel`] marks the token's slots cancelled and submits one
//! `ASYNC_CANCEL` per slot at once. Whatever the kernel later posts for a
//! cancelled slot (`-ECANCELED`, or a real result that raced the cancel) is
//! dropped, so after `cancel` returns no completion of the watches it
//! cancelled is ever reported, even when the caller re-arms the same token
//! right away.
//!
//! # Sleeping on futex words directly
//!
//! [`Reactor::wait_with`] sleeps in one `futex_waitv` on the caller's words
//! (the server's doorbells) *and* on the tail of the ring's completion
//! queue, which the reactor maps a second time. A completion is
//! posted by io_uring task work, which interrupts the sleep
//! (`TIF_NOTIFY_SIGNAL`); the kernel runs the task work, which moves the
//! tail, and restarts the call, which then sees the tail changed and
//! returns. A doorbell so costs one plain `futex_waitv` wake-up instead of
//! an io_uring futex watch's (about 0.6 µs less per wake-up here, bench
//! `wake_paths`), and needs no re-arming. This is why the ring is set up
//! without `IORING_SETUP_DEFER_TASKRUN`: deferred task work runs only
//! inside `io_uring_enter` and would never interrupt the futex sleep.
//!
//! # Futex watches are shared
//!
//! `FUTEX_WAIT` is armed with `FUTEX2_SIZE_U32` and without `FUTEX2_PRIVATE`:
//! the words live in shared memory and are woken from other processes, and a
//! private wait armed by io_uring is not woken reliably (a private wait armed
//! while the process is single-threaded is never woken once a second thread
//! exists, on the 6.16+ kernels this project runs on).

use super::futex::{Scope, WaitList};
use super::shared::Cell32;
use io_uring::{opcode, squeue, types, IoUring, Parameters, Probe};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// `user_data` of internal submissions (cancels): bit 63 set. Watch slots are
/// `u32` indices, so they never have it.
const INTERNAL: u64 = 1 << 63;
/// futex2 flag: the word is 32 bits. `FUTEX2_PRIVATE` (128) is never set.
const FUTEX2_SIZE_U32: u32 = 0x02;
/// Match any waker's bitset (`FUTEX_BITSET_MATCH_ANY`, truncated to 32 bits).
const FUTEX_BITSET_MATCH_ANY: u64 = u32::MAX as u64;

/// `mmap` offset of an io_uring's completion ring (`IORING_OFF_CQ_RING`).
const IORING_OFF_CQ_RING: u64 = 0x800_0000;

/// The kernel's `struct io_uring_params`, of which the crate's
/// [`Parameters`] is a `repr(transparent)` wrapper; read for the offset of
/// the completion queue's tail, which the crate does not expose.
#[repr(C)]
struct KernelParams {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    /// `struct io_sqring_offsets`: seven offsets, `resv1`, `user_addr`.
    sq_off: [u32; 10],
    cq_off: CqOffsets,
}

/// `struct io_cqring_offsets`.
#[repr(C)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

const _: () = assert!(std::mem::size_of::<KernelParams>() == 120);
const _: () = assert!(std::mem::size_of::<Parameters>() == std::mem::size_of::<KernelParams>());
const _: () = assert!(std::mem::offset_of!(KernelParams, cq_off) == 80);

/// The completion queue's tail, mapped a second time so that it can be a
/// futex word (see the module documentation).
struct CqTail {
    map: memmap2::MmapMut,
    offset: usize,
}

impl CqTail {
    fn map(ring: &IoUring) -> io::Result<CqTail> {
        let params: *const Parameters = ring.params();
        // `Parameters` is `repr(transparent)` over the kernel's
        // `io_uring_params` (the crate documents building one from that
        // layout), which `KernelParams` mirrors field for field; the sizes
        // are asserted equal above.
        // SAFETY: same layout (above); the borrow of `ring` keeps it alive.
        let kp = unsafe { &*params.cast::<KernelParams>() };
        let offset = kp.cq_off.tail as usize;
        if offset % 4 != 0 {
            return Err(io::Error::other("reactor: unaligned completion-queue tail"));
        }
        // The ring's own completion-queue region, read and write as the
        // crate's own mapping of it is (so that the tail is a valid
        // `AtomicU32`); the kernel keeps those pages while any mapping of
        // them exists.
        // This process only ever loads the tail through this mapping
        // (atomically), never writes it.
        // SAFETY: a mapping of the ring's own pages, only loaded (above).
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(IORING_OFF_CQ_RING)
                .len(offset + 4)
                .map_mut(ring.as_raw_fd())
        }?;
        Ok(CqTail { map, offset })
    }

    fn word(&self) -> &Cell32 {
        // `offset + 4` bytes are mapped readable and writable (see `map`)
        // and `offset` is 4-byte aligned in a page-aligned mapping; the
        // kernel writes the word only with atomic stores.
        // SAFETY: aligned, mapped as long as `self`, only loaded (above).
        unsafe { Cell32::at(self.map.as_ptr().add(self.offset).cast::<u32>().cast_mut()) }
    }
}

/// A caller-chosen tag: every completion of a watch is reported with the
/// token it was armed with. Several watches may share a token (one
/// [`Reactor::cancel`] then cancels them all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub u64);

/// One armed watch.
struct Slot {
    token: u64,
    /// Set by `cancel`: whatever completion arrives is dropped.
    cancelled: bool,
    /// The timer's duration for `IORING_OP_TIMEOUT`, which the SQE points
    /// to. Boxed so the address survives the slab growing; kept until the
    /// completion (the kernel copies it when it takes the SQE, so this is
    /// longer than needed, never shorter).
    _timespec: Option<Box<types::Timespec>>,
}

/// The slab of armed watches and the token index, apart from the ring so a
/// completion-queue borrow and the bookkeeping can coexist.
#[derive(Default)]
struct Watches {
    slots: Vec<Option<Slot>>,
    free: Vec<u32>,
    /// Live (armed, not cancelled, not reaped) slots of each token.
    by_token: HashMap<u64, Vec<u32>>,
}

impl Watches {
    fn insert(&mut self, token: Token, timespec: Option<Box<types::Timespec>>) -> io::Result<u32> {
        let slot = Slot {
            token: token.0,
            cancelled: false,
            _timespec: timespec,
        };
        let idx = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                i
            }
            None => {
                let i = u32::try_from(self.slots.len()).map_err(|_| {
                    io::Error::new(io::ErrorKind::OutOfMemory, "reactor: 2^32 watches armed")
                })?;
                self.slots.push(Some(slot));
                i
            }
        };
        self.by_token.entry(token.0).or_default().push(idx);
        Ok(idx)
    }

    fn unindex(&mut self, token: u64, idx: u32) {
        if let Some(list) = self.by_token.get_mut(&token) {
            if let Some(pos) = list.iter().position(|&i| i == idx) {
                list.swap_remove(pos);
            }
            if list.is_empty() {
                self.by_token.remove(&token);
            }
        }
    }

    /// Frees a slot whose submission never reached the queue.
    fn abandon(&mut self, idx: u32) {
        if let Some(slot) = self.slots[idx as usize].take() {
            if !slot.cancelled {
                self.unindex(slot.token, idx);
            }
            self.free.push(idx);
        }
    }

    /// The kernel posted `result` for `user_data`: frees the slot and reports
    /// it unless it was cancelled or internal.
    fn complete(&mut self, user_data: u64, result: i32, out: &mut Vec<(Token, i32)>) {
        if user_data & INTERNAL != 0 {
            return;
        }
        let idx = user_data as u32;
        let Some(slot) = self.slots.get_mut(idx as usize).and_then(Option::take) else {
            debug_assert!(false, "reactor: completion for free slot {idx}");
            return;
        };
        self.free.push(idx);
        if !slot.cancelled {
            self.unindex(slot.token, idx);
            out.push((Token(slot.token), result));
        }
    }

    fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// An io_uring owned by one thread, waiting on futex words, readable file
/// descriptors and timers together. See the module documentation. It is
/// neither `Send` nor `Sync`: create it on the thread that uses it.
///
/// Every watch is one-shot: it completes once and must be re-armed. Dropping
/// the reactor closes the ring, which makes the kernel cancel every watch
/// still armed.
pub struct Reactor {
    ring: IoUring,
    /// `None` when the completion queue could not be mapped a second time:
    /// then [`wait_with`](Self::wait_with) is unsupported.
    tail: Option<CqTail>,
    /// The words of the last `wait_with`, reused.
    list: WaitList,
    watches: Watches,
    /// Completions reaped while flushing a full submission queue, reported
    /// by the next `wait`.
    stash: Vec<(Token, i32)>,
    /// Not `Send`: the ring is set up for its creating thread alone
    /// (`IORING_SETUP_SINGLE_ISSUER`).
    _one_thread: std::marker::PhantomData<*const ()>,
}

impl Reactor {
    /// A reactor whose submission queue holds `entries` entries (rounded up
    /// to a power of two by the kernel; the completion queue is twice that).
    /// More watches than `entries` may be armed: a full queue is submitted and
    /// reused.
    ///
    /// # Errors
    /// The `io_uring_setup` error unchanged (for instance `EPERM` when
    /// `kernel.io_uring_disabled` forbids it, `EINVAL` for 0 entries), the
    /// `io_uring_register(PROBE)` error, or [`io::ErrorKind::Unsupported`]
    /// when the kernel lacks `IORING_OP_FUTEX_WAIT` (Linux 6.7) or another
    /// operation or feature the reactor needs.
    pub fn new(entries: u32) -> io::Result<Reactor> {
        // SUBMIT_ALL: an entry the kernel refuses (for instance a bad fd)
        // gets its error completion and does not hold back the ones after it.
        // SINGLE_ISSUER: the thread that creates the reactor is the only one
        // that uses it. COOP_TASKRUN: a completion does not interrupt that
        // thread while it runs (its task work waits for its next system
        // call), but does wake it from any sleep, `futex_waitv` included,
        // which `wait_with` needs. Not DEFER_TASKRUN: its task work would
        // wait for an `io_uring_enter` (see the module documentation).
        // Kernels without them (before 5.19) get the plain ring.
        let ring = IoUring::builder()
            .setup_submit_all()
            .setup_single_issuer()
            .setup_coop_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_submit_all().build(entries))?;
        let mut probe = Probe::new();
        ring.submitter().register_probe(&mut probe)?;
        for (code, name) in [
            (opcode::FutexWait::CODE, "IORING_OP_FUTEX_WAIT (Linux 6.7)"),
            (opcode::PollAdd::CODE, "IORING_OP_POLL_ADD"),
            (opcode::Timeout::CODE, "IORING_OP_TIMEOUT"),
            (opcode::AsyncCancel::CODE, "IORING_OP_ASYNC_CANCEL"),
        ] {
            if !probe.is_supported(code) {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("reactor: this kernel's io_uring lacks {name}"),
                ));
            }
        }
        if !ring.params().is_feature_ext_arg() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "reactor: this kernel's io_uring lacks IORING_FEAT_EXT_ARG (Linux 5.11)",
            ));
        }
        // Not fatal: `wait` works without it, and the server then watches
        // every doorbell through io_uring. Nor is a `futex_waitv` that does
        // not exist (an emulator such as valgrind; every kernel with
        // io_uring futex waits has it): asked with a value the tail does
        // not have, a working one fails at once with EAGAIN.
        let tail = CqTail::map(&ring).ok().filter(|t| {
            let mut probe = WaitList::default();
            let now = t.word().load_acquire();
            probe.push((t.word().atomic(), now.wrapping_add(1), Scope::Private));
            probe.wait(Some(Duration::ZERO)) == Err(libc::EAGAIN)
        });
        Ok(Reactor {
            ring,
            tail,
            list: WaitList::default(),
            watches: Watches::default(),
            stash: Vec::new(),
            _one_thread: std::marker::PhantomData,
        })
    }

    /// One-shot: completes when `fd` is readable, hung up or in error
    /// (`POLLIN`; `POLLHUP`/`POLLERR` are always reported). For sockets,
    /// pidfds (readable = the process exited), eventfds, pipes.
    ///
    /// The result is the `revents` mask (> 0), or `-errno` (`-EBADF` for a
    /// bad fd). The watch holds its own reference to the open file: closing
    /// `fd` does not end it, [`cancel`](Self::cancel) does.
    pub fn watch_readable(&mut self, fd: RawFd, token: Token) -> io::Result<()> {
        let idx = self.watches.insert(token, None)?;
        let entry = opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32)
            .build()
            .user_data(u64::from(idx));
        self.arm(idx, &entry)
    }

    /// One-shot: completes when `fd` can take more bytes, hung up or in
    /// error (`POLLOUT`); otherwise as [`watch_readable`](Self::watch_readable).
    pub fn watch_writable(&mut self, fd: RawFd, token: Token) -> io::Result<()> {
        let idx = self.watches.insert(token, None)?;
        let entry = opcode::PollAdd::new(types::Fd(fd), libc::POLLOUT as u32)
            .build()
            .user_data(u64::from(idx));
        self.arm(idx, &entry)
    }

    /// One-shot: completes when `*word != expected` at the time the watch
    /// reaches the kernel (result `-EAGAIN`, which counts as fired), or on
    /// any `FUTEX_WAKE` of the word afterwards (result 0), from this process
    /// or another one mapping the same memory (the wait is shared).
    /// Other results are `-errno` (`-EFAULT`: the word is not mapped).
    ///
    /// The watch reaches the kernel at the next [`wait`](Self::wait),
    /// [`submit`](Self::submit) or [`cancel`](Self::cancel) (or earlier when
    /// the submission queue is full): "expected" is compared then, not now.
    ///
    /// # Safety
    /// The memory of `word` stays mapped (and keeps being that word) until
    /// this watch's completion was returned by `wait`, or until a
    /// [`cancel`](Self::cancel) of its token returned `Ok`. The kernel reads
    /// the word when it takes the submission, which may be after this call
    /// returns, so the borrow alone does not cover it. (An unmapped word is
    /// an `-EFAULT` completion, not a fault in this process; the contract is
    /// the one io_uring states for every pointer in a submission, and it
    /// keeps the watch about the word the caller meant.)
    pub unsafe fn watch_futex(
        &mut self,
        word: &Cell32,
        expected: u32,
        token: Token,
    ) -> io::Result<()> {
        // `Cell32` is `repr(transparent)` over `AtomicU32`, which has the
        // layout of `u32`: this is the address of the 4-byte aligned word.
        let addr = std::ptr::from_ref(word).cast::<u32>();
        let idx = self.watches.insert(token, None)?;
        let entry = opcode::FutexWait::new(
            addr,
            u64::from(expected),
            FUTEX_BITSET_MATCH_ANY,
            FUTEX2_SIZE_U32,
        )
        .build()
        .user_data(u64::from(idx));
        self.arm(idx, &entry)
    }

    /// One-shot timer: completes once `after` has elapsed, with result
    /// `-ETIME` (io_uring's report for a timer that expired).
    pub fn watch_timeout(&mut self, after: Duration, token: Token) -> io::Result<()> {
        let ts = Box::new(timespec(after));
        let ptr: *const types::Timespec = &*ts;
        let idx = self.watches.insert(token, Some(ts))?;
        let entry = opcode::Timeout::new(ptr).build().user_data(u64::from(idx));
        self.arm(idx, &entry)
    }

    /// Cancels every watch armed with `token` and not yet reported. None of
    /// their completions will be reported by [`wait`](Self::wait), whether
    /// the kernel posts them as cancelled or they raced the cancel; the token
    /// may be reused at once. The cancels are submitted before this returns.
    /// An unknown token is not an error.
    ///
    /// # Errors
    /// `io_uring_enter` failing. The watches stay cancelled for `wait`
    /// (nothing of theirs is reported), but the kernel may keep them armed
    /// until they fire.
    pub fn cancel(&mut self, token: Token) -> io::Result<()> {
        let Some(slots) = self.watches.by_token.remove(&token.0) else {
            return Ok(());
        };
        for &idx in &slots {
            if let Some(slot) = self.watches.slots[idx as usize].as_mut() {
                slot.cancelled = true;
            }
        }
        for idx in slots {
            let entry = opcode::AsyncCancel::new(u64::from(idx))
                .build()
                .user_data(INTERNAL);
            self.push(&entry)?;
        }
        self.flush()
    }

    /// Hands every armed but not yet submitted watch to the kernel without
    /// waiting. [`wait`](Self::wait) does this itself; call it when the
    /// watches must be live before something else happens (for instance
    /// before telling another process to wake a word).
    pub fn submit(&mut self) -> io::Result<()> {
        self.flush()
    }

    /// Submits pending entries and waits until at least one watch completed,
    /// or `timeout` elapsed (`None`: no limit). Appends `(token, result)` for
    /// each completed watch to `out`, once per watch; the result is what
    /// io_uring reported (see each `watch_*`). Returns `Ok(())` with nothing
    /// appended only when `timeout` elapsed. Completions of cancelled watches
    /// and of internal entries are never appended (and do not end the wait).
    /// Interrupted waits (`EINTR`) are resumed.
    pub fn wait(
        &mut self,
        timeout: Option<Duration>,
        out: &mut Vec<(Token, i32)>,
    ) -> io::Result<()> {
        let start = out.len();
        out.append(&mut self.stash);
        // An unrepresentable deadline is no deadline.
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        loop {
            let ready = out.len() > start || !self.ring.completion().is_empty();
            let res = if ready {
                self.ring.submit()
            } else if let Some(deadline) = deadline {
                let ts = timespec(deadline.saturating_duration_since(Instant::now()));
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(1, &args)
            } else {
                self.ring.submit_and_wait(1)
            };
            match res {
                Ok(_) => {}
                Err(e) => match e.raw_os_error() {
                    // Timed out, interrupted, or the completion queue must be
                    // drained before more can be submitted: reap, then decide.
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY) => {}
                    _ => return Err(e),
                },
            }
            for cqe in self.ring.completion() {
                self.watches.complete(cqe.user_data(), cqe.result(), out);
            }
            if out.len() > start {
                return Ok(());
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(());
            }
        }
    }

    /// Whether [`wait_with`](Self::wait_with) works here (the completion
    /// queue's tail could be mapped as a futex word).
    pub fn can_wait_with(&self) -> bool {
        self.tail.is_some()
    }

    /// The most words [`wait_with`](Self::wait_with) takes (one
    /// `futex_waitv` holds 128, one of them the completion queue's tail).
    pub const MAX_WORDS: usize = super::futex::WAITV_MAX - 1;

    /// Waits as [`wait`](Self::wait) does, and also until any of `words`
    /// (shared futex words, with the value each is expected to still have)
    /// is woken or differs, in one `futex_waitv` (see the module
    /// documentation). Returns when completions were appended to `out`,
    /// when a word may have fired, or when `timeout` elapsed; also, rarely,
    /// for nothing: callers re-check their words either way.
    ///
    /// # Errors
    /// [`io::ErrorKind::Unsupported`] when [`can_wait_with`](Self::can_wait_with)
    /// is false; [`io::ErrorKind::InvalidInput`] for more than
    /// [`MAX_WORDS`](Self::MAX_WORDS) words; `io_uring_enter` failing;
    /// `futex_waitv` failing other than by a changed word, a timeout or an
    /// interruption (`EFAULT`: a word is not mapped).
    pub fn wait_with<'w>(
        &mut self,
        timeout: Option<Duration>,
        words: impl IntoIterator<Item = (&'w Cell32, u32)>,
        out: &mut Vec<(Token, i32)>,
    ) -> io::Result<()> {
        if self.tail.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "reactor: the completion queue's tail is not mapped",
            ));
        }
        self.list.clear();
        let mut fired = false;
        for (w, v) in words {
            if self.list.len() == Self::MAX_WORDS || !self.list.push((w.atomic(), v, Scope::Shared))
            {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("reactor: more than {} words", Self::MAX_WORDS),
                ));
            }
            fired |= w.load_acquire() != v;
        }
        let start = out.len();
        out.append(&mut self.stash);
        // The watches armed since the last wait reach the kernel first
        // (their completions, and task work already due, are then posted).
        if !self.ring.submission().is_empty() || self.ring.submission().cq_overflow() {
            self.flush()?;
        }
        // Read the tail before the queue: a completion posted after this
        // load moves the tail, and the futex_waitv below then returns.
        let tail = self.tail.as_ref().map_or(0, |t| t.word().load_acquire());
        self.reap(out);
        if out.len() > start || fired {
            return Ok(());
        }
        // The tail's pages belong to the ring, not to a file or anonymous
        // memory: only a private futex key can name them.
        if let Some(t) = &self.tail {
            self.list.push((t.word().atomic(), tail, Scope::Private));
        }
        match self.list.wait(timeout) {
            Ok(()) => {}
            Err(libc::EAGAIN | libc::ETIMEDOUT | libc::EINTR) => {}
            Err(e) => return Err(io::Error::from_raw_os_error(e)),
        }
        self.reap(out);
        Ok(())
    }

    /// Moves every posted completion into `out`.
    fn reap(&mut self, out: &mut Vec<(Token, i32)>) {
        for cqe in self.ring.completion() {
            self.watches.complete(cqe.user_data(), cqe.result(), out);
        }
    }

    /// Watches armed and not yet completed in the kernel, cancelled ones
    /// included until their completion was reaped (diagnostics, tests).
    pub fn in_flight(&self) -> usize {
        self.watches.in_flight()
    }

    /// Queues `entry` for slot `idx`, freeing the slot if it cannot be queued.
    fn arm(&mut self, idx: u32, entry: &squeue::Entry) -> io::Result<()> {
        let res = self.push(entry);
        if res.is_err() {
            self.watches.abandon(idx);
        }
        res
    }

    /// Queues `entry`; a full submission queue is submitted and the push
    /// retried, never dropped.
    fn push(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: the only pointers our entries carry are (1) a futex
            // word, valid until the watch completes or is cancelled by the
            // contract of `watch_futex`, and (2) a boxed timespec owned by the
            // watch's slot, which is freed only when the kernel posted the
            // watch's completion. Polls and cancels carry no pointer.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            self.flush()?;
            if self.ring.submission().is_full() {
                return Err(io::Error::other(
                    "reactor: io_uring_enter left the submission queue full",
                ));
            }
        }
    }

    /// Submits everything queued. When the kernel refuses because the
    /// completion queue overflowed (`EBUSY`) or is short of memory
    /// (`EAGAIN`), completions are reaped into the stash and the submit
    /// retried, as long as reaping makes progress.
    fn flush(&mut self) -> io::Result<()> {
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) => match e.raw_os_error() {
                    Some(libc::EINTR) => {}
                    Some(libc::EBUSY | libc::EAGAIN) => {
                        let mut reaped = 0usize;
                        for cqe in self.ring.completion() {
                            reaped += 1;
                            self.watches
                                .complete(cqe.user_data(), cqe.result(), &mut self.stash);
                        }
                        if reaped == 0 {
                            return Err(e);
                        }
                    }
                    _ => return Err(e),
                },
            }
        }
    }
}

/// A `Duration` as the kernel's timespec, saturating at `i64::MAX` seconds.
fn timespec(d: Duration) -> types::Timespec {
    types::Timespec::new()
        .sec(d.as_secs().min(i64::MAX as u64))
        .nsec(d.subsec_nanos())
}

/// Opens a pidfd for process `pid` (`pidfd_open(2)`, Linux 5.3; close-on-exec).
/// It becomes readable when the process exits: arm it with
/// [`Reactor::watch_readable`] to wait for a process's death among other
/// events.
///
/// # Errors
/// The `pidfd_open` error (`ESRCH`: no such process).
pub fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open takes two integers and touches no memory of ours.
    let ret = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = RawFd::try_from(ret).map_err(|_| io::Error::other("pidfd_open: fd out of range"))?;
    // SAFETY: the kernel just returned this descriptor; it is open and
    // nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends `sig` to the process behind a pidfd (`pidfd_send_signal`): unlike
/// `kill(pid)`, it cannot hit a process that reused the pid.
///
/// # Errors
/// The syscall's error (`ESRCH`: the process has exited).
pub fn pidfd_send_signal(pidfd: &OwnedFd, sig: i32) -> io::Result<()> {
    // SAFETY: a live fd we borrow, a signal number, a NULL siginfo (the
    // kernel fills in a SI_USER one) and no flags: no memory of ours is read.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            sig,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Has the process behind a pidfd exited? (A pidfd becomes readable then.)
pub fn pidfd_exited(pidfd: &OwnedFd) -> bool {
    let mut p = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, zero timeout.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & libc::POLLIN != 0
}
