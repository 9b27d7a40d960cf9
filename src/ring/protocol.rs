//! The broadcast ring protocol, over any [`RingMemory`]: one writer, many
//! readers, overwrite-oldest with exact lag, pinned zero-copy reads, and the
//! sleep/wake handshake. docs/shm-format.md states it with its pairings.
//!
//! Data slots outnumber index entries by `client_capacity + 1`: each reader
//! pins at most one slot at a time, so the writer always finds an unpinned
//! slot outside the index window and never waits for a reader.

use super::submit::SubmitMemory;
use crate::sync::{fence_seqcst, spin_until, Cell32, Cell64, WakeBatch};
use shm_layout::{index_entry, index_parts, sleeper_bit, sleeper_word, INDEX_EMPTY, INTEREST_ALL};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// What the protocol needs from a memory backend.
pub(crate) trait RingMemory {
    /// Index entries (N).
    fn slot_count(&self) -> u32;
    /// Data slots (N + clients + 1).
    fn data_slots(&self) -> u32;
    /// Record bytes one slot holds.
    fn slot_capacity(&self) -> u32;
    /// Client table entries.
    fn client_capacity(&self) -> u32;
    fn head(&self) -> &Cell64;
    fn doorbell(&self) -> &Cell32;
    /// Sleeper words: entry `c`'s bit is [`sleeper_bit`] of word
    /// [`sleeper_word`].
    fn sleeper_words(&self) -> u32;
    fn sleepers(&self, w: u32) -> &Cell64;
    fn wakes(&self) -> &Cell64;
    fn refused(&self) -> &Cell64;
    /// Bumped after any reader's interest changed (see [`want`]).
    fn interest_gen(&self) -> &Cell64;
    fn index(&self, i: u32) -> &Cell64;
    fn slot_seq(&self, s: u32) -> &Cell64;
    fn slot_len(&self, s: u32) -> &Cell32;
    fn slot_pins(&self, s: u32) -> &Cell32;
    fn client_cursor(&self, c: u32) -> &Cell64;
    fn client_lost(&self, c: u32) -> &Cell64;
    fn client_waiting(&self, c: u32) -> &Cell32;
    fn client_wake(&self, c: u32) -> &Cell32;
    fn client_held(&self, c: u32) -> &Cell32;
    /// The event codes reader `c` wants ([`shm_layout::interest_bit`]).
    fn client_interest(&self, c: u32) -> &Cell64;
    /// Entry `c`'s client's rank (`u32::MAX`: no client), server-written
    /// at claim.
    fn client_rank(&self, c: u32) -> u32;
    /// Whether entry `c` is held by an attached reader (its `state` is
    /// `ACTIVE`).
    fn client_active(&self, c: u32) -> bool;
    /// The ring's mark `[last, prev]` ([`shm_layout::Mark`]): the records
    /// for every reader.
    fn mark(&self) -> [&Cell64; 2];
    /// Entry `c`'s mark `[last, prev]`: the records for it alone.
    fn client_mark(&self, c: u32) -> [&Cell64; 2];
    /// A hint that the caller is about to pin and read data slot `s` (no
    /// effect on correctness).
    fn prefetch_slot(&self, _s: u32) {}
    /// Copies `bytes` into data slot `s`.
    ///
    /// # Safety
    /// Only the ring's single writer calls this, for a slot outside the index
    /// window whose pin count it observed at zero after retiring it (the
    /// "unpinned slot" invariant of docs/shm-format.md): no reader reads it.
    unsafe fn write_slot(&self, s: u32, bytes: &[u8]);
}

/// Why a publish was refused (the record is not in the ring; nobody can have
/// seen it, so the publisher must report the loss itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishError {
    /// The record is larger than a slot.
    TooLarge {
        /// Record bytes.
        len: usize,
        /// Slot capacity.
        max: usize,
    },
    /// Every free slot is pinned (only possible when readers break the
    /// one-pin rule, i.e. corrupted or hostile memory).
    NoFreeSlot,
}

impl std::fmt::Display for PublishError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PublishError::TooLarge { len, max } => {
                write!(
                    f,
                    "record of {len} bytes exceeds the slot capacity of {max} bytes"
                )
            }
            PublishError::NoFreeSlot => write!(f, "no unpinned slot (client table corrupted?)"),
        }
    }
}

impl std::error::Error for PublishError {}

/// Which sleeping readers a record is for: those are woken at once. A
/// sleeper it is not for stays asleep; once records it has not read fill
/// half the ring it is woken to read them only if one of them may be for
/// it (one for every reader, whatever its code, or one for it alone): a
/// reader lapped by records for others only passes over them
/// ([`ReaderCore::poll`]), so neither way reports a loss it would not
/// have had awake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake<'a> {
    /// Every reader.
    All,
    /// Every reader but this client-table entry (the source of a relayed
    /// record, which drops its own record anyway).
    AllBut(u32),
    /// Only these client-table entries.
    Only(&'a [u32]),
}

impl Wake<'_> {
    fn includes(&self, c: u32) -> bool {
        match self {
            Wake::All => true,
            Wake::AllBut(x) => *x != c,
            Wake::Only(v) => v.contains(&c),
        }
    }
}

/// Takes sleeper word `w`'s bits (a swap only when one is set). SeqCst
/// (includes Acquire): a reader's `waiting = 1`, stored before its bit, is
/// visible after it, also when the bit was set before the writer's last
/// put-back (the put-back continues that release sequence).
fn take_sleepers(m: &impl RingMemory, w: u32) -> u64 {
    let word = m.sleepers(w);
    if word.load_relaxed() == 0 {
        return 0;
    }
    word.swap_seqcst(0)
}

/// Wakes entry `c`, whose sleeper bit the writer took, if `due(c)`;
/// `false`: it is left asleep (the caller puts the bit back). `true` also
/// when it is awake (the bit was stale).
fn visit<'m>(
    m: &'m impl RingMemory,
    c: u32,
    due: &dyn Fn(u32) -> bool,
    batch: &mut WakeBatch<'m>,
) -> bool {
    if m.client_waiting(c).load_relaxed() != 1 {
        return true; // awake: its bit was stale
    }
    if !due(c) {
        return false;
    }
    if m.client_waiting(c).swap_seqcst(0) == 1 {
        let w = m.client_wake(c);
        w.fetch_add_seqcst(1);
        batch.add(w);
        m.wakes().fetch_add_relaxed(1);
    }
    true
}

/// Visits the sleepers of word `w` whose bits this writer took
/// (`bits`), waking those `due`; puts the others' bits back.
fn wake_word<'m>(
    m: &'m impl RingMemory,
    w: u32,
    mut bits: u64,
    batch: &mut WakeBatch<'m>,
    due: &dyn Fn(u32) -> bool,
) {
    let cap = m.client_capacity();
    let mut keep = 0u64;
    while bits != 0 {
        let b = bits.trailing_zeros();
        bits &= bits - 1;
        let c = w * 64 + b;
        if c < cap && !visit(m, c, due, batch) {
            keep |= 1 << b;
        }
    }
    if keep != 0 {
        m.sleepers(w).fetch_or_seqcst(keep);
    }
}

/// Adds `bits` to reader `c`'s interest. `true` when that made it want a
/// code it did not and records it has not read were published before: the
/// writer may have left it asleep for those, so its thread must look now.
/// The other half of the handshake in `WriterCore::wake`: SeqCst RMWs on
/// the interest and `interest_gen`, SeqCst fence, load of `head`, against
/// the writer's head store, SeqCst fence, `interest_gen` load. Either the
/// writer saw the new generation (and reloads the interests), or this sees
/// its record.
///
/// Lane records count too: one the server has not released yet may get
/// its ring copy without a wake-up, so a queue holding one makes this
/// `true` (the sender's fence after its `lane_epoch` RMW, then its load of
/// this interest, pairs with this fence and the loads of the queues).
pub(crate) fn want<M: RingMemory + SubmitMemory>(m: &M, c: u32, bits: u64) -> bool {
    let interest = m.client_interest(c);
    // Bits already there were added by an earlier call, whose own check
    // covered every record published before it.
    if interest.load_relaxed() & bits == bits || interest.fetch_or_seqcst(bits) & bits == bits {
        return false;
    }
    // The writer reloads its copy of every interest when this moved.
    m.interest_gen().fetch_add_seqcst(1);
    // The fence pairs with the writer's after its head store, as in
    // `ReaderCore::prepare_sleep` (a SeqCst load alone would do in C++;
    // loom proves the fence-to-fence form). A cursor read stale is older:
    // it only makes the thread look sooner.
    fence_seqcst();
    super::lane::unreleased(m) || m.head().load_acquire() > m.client_cursor(c).load_relaxed()
}

/// Sets reader `c`'s interest outright (the server claiming an entry: every
/// code; a client library with no handler yet: none), then bumps the
/// generation so that the writer's copy follows.
pub(crate) fn set_interest(m: &impl RingMemory, c: u32, bits: u64) {
    m.client_interest(c).store_relaxed(bits);
    m.interest_gen().fetch_add_seqcst(1);
}

/// Whether no record of a mark's kind is in `[cursor, oldest)` (see
/// [`shm_layout::Mark`]).
fn is_clear(mark: [&Cell64; 2], cursor: u64, oldest: u64) -> bool {
    // Acquire: pairs with the writer's Release store of `last`, so `prev`
    // is the one stored with it or a later one (later only makes this
    // say "not clear").
    let last = mark[0].load_acquire();
    last <= cursor || (last > oldest && mark[1].load_relaxed() <= cursor)
}

/// The writer's private state: which slots are free, which the index names.
pub(crate) struct WriterCore {
    free: VecDeque<u32>,
    window: VecDeque<u32>,
    next: u64,
    /// The publish count at which a record for a few readers next sweeps
    /// every sleeper word (see `wake`).
    next_sweep: u64,
    /// Every entry's interest as of `interest_gen` = `interests_at`: a
    /// publish reads one shared word, not a line of every sleeper's.
    interests: Vec<u64>,
    interests_at: u64,
    /// What this writer last stored in every mark's `last` (the ring's,
    /// then the entries'): whether a sleeper falling behind has a record
    /// for it unread is asked here, not of shared memory.
    marks: Vec<u64>,
}

impl WriterCore {
    /// Takes over a freshly initialised ring (head 0, empty index).
    pub fn new(m: &impl RingMemory) -> WriterCore {
        WriterCore {
            free: (0..m.data_slots()).collect(),
            window: VecDeque::with_capacity(m.slot_count() as usize),
            next: m.head().load_relaxed(),
            next_sweep: 0,
            // Loaded at the first wake-up (the generation never is
            // `u64::MAX` before that).
            interests: vec![INTEREST_ALL; m.client_capacity() as usize],
            interests_at: u64::MAX,
            marks: std::iter::once(m.mark()[0].load_relaxed())
                .chain((0..m.client_capacity()).map(|c| m.client_mark(c)[0].load_relaxed()))
                .collect(),
        }
    }

    /// Publishes one record for every reader; returns its sequence.
    pub fn publish(&mut self, m: &impl RingMemory, bytes: &[u8]) -> Result<u64, PublishError> {
        self.publish_to(m, bytes, Wake::All, INTEREST_ALL)
    }

    /// Publishes one record, waking the sleepers `wake` names that want
    /// `topic` (the [`shm_layout::interest_bit`] of the record's code, or
    /// [`INTEREST_ALL`] for a record of no particular code); returns its
    /// sequence. Every reader still sees the record.
    pub fn publish_to(
        &mut self,
        m: &impl RingMemory,
        bytes: &[u8],
        wake: Wake<'_>,
        topic: u64,
    ) -> Result<u64, PublishError> {
        let max = m.slot_capacity() as usize;
        if bytes.len() > max {
            m.refused().fetch_add_relaxed(1);
            return Err(PublishError::TooLarge {
                len: bytes.len(),
                max,
            });
        }
        let slot = self.take_unpinned(m).ok_or_else(|| {
            m.refused().fetch_add_relaxed(1);
            PublishError::NoFreeSlot
        })?;
        let seq = self.next;
        // SAFETY: `slot` came from `take_unpinned`: outside the index window
        // and observed unpinned after its retirement (invariant above).
        unsafe { m.write_slot(slot, bytes) };
        m.slot_len(slot).store_relaxed(bytes.len() as u32);
        // Commit word. Release: pairs with the reader's Acquire load of
        // slot_seq (and the index store below publishes it too).
        m.slot_seq(slot).store_release(seq);
        // Before the index entry: a reader that sees the record overwritten
        // (an Acquire load of a later entry or head) sees its mark.
        self.mark(m, wake, seq + 1);
        let n = m.slot_count();
        // SeqCst: (1) Release for the bytes, paired with the reader's index
        // loads; (2) the Dekker side "retire, then check pins" against the
        // reader's "pin, then re-check index" (see take_unpinned).
        m.index((seq % n as u64) as u32)
            .store_seqcst(index_entry(seq, slot));
        if self.window.len() == n as usize {
            // The entry just overwritten named the oldest window slot.
            if let Some(old) = self.window.pop_front() {
                self.free.push_back(old);
            }
        }
        self.window.push_back(slot);
        self.next = seq + 1;
        // Release: pairs with the reader's Acquire load of head.
        m.head().store_release(self.next);
        // Pairs with the fence in `ReaderCore::prepare_sleep`: either that
        // reader sees the new head, or we see its bit in `sleepers`.
        fence_seqcst();
        if (0..m.sleeper_words()).any(|w| m.sleepers(w).load_relaxed() != 0) {
            self.wake(m, wake, topic);
        }
        Ok(seq)
    }

    /// Marks record `seq + 1 = now` as for the readers `wake` names: in
    /// each target's own mark, or in the ring's (every reader, whatever
    /// the code: interest grows, so whether a reader lapped later wanted
    /// the code when the record was published cannot be told then).
    fn mark(&mut self, m: &impl RingMemory, wake: Wake<'_>, now: u64) {
        let mut note = |i: usize, words: [&Cell64; 2]| {
            let old = &mut self.marks[i];
            if *old != now {
                words[1].store_relaxed(*old);
                // Release: see `is_clear`.
                words[0].store_release(now);
                *old = now;
            }
        };
        match wake {
            Wake::Only(targets) => {
                for &c in targets.iter().filter(|&&c| c < m.client_capacity()) {
                    note(1 + c as usize, m.client_mark(c));
                }
            }
            Wake::All | Wake::AllBut(_) => note(0, m.mark()),
        }
    }

    /// Wakes the sleepers `wake` names that want `topic`, and those that
    /// have half a ring unread; leaves the others asleep with their bits set.
    ///
    /// A record every sleeper wants rings the doorbell. A record for a few
    /// (`Wake::Only`) takes only their bits, so it costs what it wakes, not
    /// the number of readers attached; every `lap / 4` publishes it sweeps
    /// every word instead, so a sleeper no record is for is woken with at
    /// most `lap + lap / 4` records unread, well inside the ring.
    /// `Wake::AllBut`, and `Wake::All` when a sleeper does not want the
    /// code, wake each sleeper on its own word and keep the others' bits.
    ///
    /// The readers' interests come from this writer's copy, reloaded when
    /// `interest_gen`, loaded here after the publish's SeqCst fence, moved:
    /// a reader's process that adds a bit, bumps the generation (SeqCst
    /// RMWs), then fences and loads `head` either is seen wanting this
    /// record or sees it published (`want` says so, and its client wakes
    /// its own thread).
    fn wake(&mut self, m: &impl RingMemory, wake: Wake<'_>, topic: u64) {
        let words = m.sleeper_words();
        let lap = (m.slot_count() as u64 / 2).max(1);
        let cap = m.client_capacity();
        let next = self.next;
        // Acquire: pairs with the RMW a reader's process makes after
        // changing its interest, so the loads below see that change.
        let at = m.interest_gen().load_acquire();
        if at != self.interests_at {
            for (c, i) in self.interests.iter_mut().enumerate() {
                *i = m.client_interest(c as u32).load_relaxed();
            }
            self.interests_at = at;
        }
        let interests = &self.interests;
        let marks = &self.marks;
        let wants = |c: u32| interests[c as usize] & topic != 0;
        // Half a ring unread, one of them maybe for it: a reader lapped by
        // records for others only passes over them (`ReaderCore::poll`).
        // A cursor read stale is older: it only wakes the reader sooner.
        let behind = |c: u32| {
            let cursor = m.client_cursor(c).load_relaxed();
            next.saturating_sub(cursor) >= lap
                && (marks[0] > cursor || marks[1 + c as usize] > cursor)
        };
        if wake == Wake::All {
            // The bits taken, kept until it is known whether the doorbell
            // does (no allocation up to 256 entries).
            let (mut small, mut big) = ([0u64; 4], Vec::new());
            let taken: &mut [u64] = match small.get_mut(..words as usize) {
                Some(t) => t,
                None => {
                    big.resize(words as usize, 0);
                    &mut big
                }
            };
            let mut every = true;
            for (w, t) in (0..words).zip(taken.iter_mut()) {
                *t = take_sleepers(m, w);
                let mut b = *t;
                while every && b != 0 {
                    let c = w * 64 + b.trailing_zeros();
                    b &= b - 1;
                    every = c >= cap || wants(c) || behind(c);
                }
            }
            if every {
                // Every sleeper: the doorbell they all wait on, one
                // FUTEX_WAKE (a wake per reader lets the first one woken
                // preempt the writer before it has woken the rest).
                m.doorbell().fetch_add_seqcst(1);
                m.doorbell().wake_all();
                m.wakes().fetch_add_relaxed(1);
                return;
            }
            let mut batch = WakeBatch::new();
            for (w, &bits) in (0..words).zip(taken.iter()) {
                wake_word(m, w, bits, &mut batch, &|c| wants(c) || behind(c));
            }
            batch.flush();
            return;
        }
        // One syscall for every sleeper woken (see `WakeBatch`).
        let mut batch = WakeBatch::new();
        let due = |c: u32| (wake.includes(c) && wants(c)) || behind(c);
        let mut sweep_at = None;
        match wake {
            Wake::Only(targets) if next < self.next_sweep => {
                for &c in targets.iter().filter(|&&c| c < cap) {
                    let word = m.sleepers(sleeper_word(c));
                    let bit = sleeper_bit(c);
                    // SeqCst (includes Acquire): as the sweep's swap below.
                    // A target left asleep (it does not want the code) gets
                    // its bit back, as a sweep would put it.
                    if word.load_relaxed() & bit != 0
                        && word.fetch_and_seqcst(!bit) & bit != 0
                        && !visit(m, c, &due, &mut batch)
                    {
                        word.fetch_or_seqcst(bit);
                    }
                }
            }
            _ => {
                if matches!(wake, Wake::Only(_)) {
                    sweep_at = Some(next + (lap / 4).max(1));
                }
                for w in 0..words {
                    let bits = take_sleepers(m, w);
                    wake_word(m, w, bits, &mut batch, &due);
                }
            }
        }
        batch.flush();
        if let Some(at) = sweep_at {
            self.next_sweep = at;
        }
    }

    fn take_unpinned(&mut self, m: &impl RingMemory) -> Option<u32> {
        self.take_free(m).or_else(|| self.repair_pins(m))
    }

    /// Every free slot looks pinned: impossible while readers keep the
    /// one-pin rule (there are client_capacity + 1 more slots than index
    /// entries), so some pin counts were scribbled. Reset those that no
    /// active reader's `held_slot` accounts for. Under such corruption the
    /// ring guarantees only that nobody crashes or hangs.
    fn repair_pins(&mut self, m: &impl RingMemory) -> Option<u32> {
        let holders = |s: u32| {
            (0..m.client_capacity())
                .filter(|&c| m.client_held(c).load_acquire() == s)
                .count() as u32
        };
        let found = self.free.iter().position(|&s| {
            let pins = m.slot_pins(s).load_seqcst();
            let held = holders(s);
            pins > held && m.slot_pins(s).cas_acqrel(pins, held).is_ok() && held == 0
        })?;
        self.free.remove(found)
    }

    fn take_free(&mut self, m: &impl RingMemory) -> Option<u32> {
        for _ in 0..self.free.len() {
            let s = self.free.pop_front()?;
            // A read-modify-write (CAS 0 -> 0), not a load: an RMW reads the
            // latest pin count (a load may see a stale non-zero one and make
            // the writer believe every slot pinned). AcqRel: on success, a
            // reader's later pin (fetch_add) reads from this RMW, so the
            // retirement of `s` from the index, stored before, is visible to
            // that reader's re-check: it unpins without reading. On failure
            // the slot really is pinned now.
            if m.slot_pins(s).cas_acqrel(0, 0).is_ok() {
                return Some(s);
            }
            self.free.push_back(s);
        }
        None
    }
}

/// A record pinned for reading: its slot will not be rewritten until
/// [`ReaderCore::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pinned {
    pub slot: u32,
    pub seq: u64,
    pub len: u32,
}

/// The outcome of one read attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Poll {
    /// Nothing new.
    Empty,
    /// The reader fell more than a ring behind: `missed` records are gone,
    /// some of which may have been for it; the cursor moved to the oldest
    /// available one. (A gap of records for others only is passed over:
    /// `poll` reads on.)
    Lagged { missed: u64 },
    /// The record at `seq` is unreadable (corrupted memory); skipped.
    Corrupt { seq: u64, why: &'static str },
    /// A record, pinned.
    Ready(Pinned),
}

/// A reader's state: its client-table entry and its cursor.
pub(crate) struct ReaderCore {
    pub client: u32,
    pub cursor: u64,
}

impl ReaderCore {
    /// Tries to pin the record at the cursor.
    pub fn poll(&mut self, m: &impl RingMemory) -> Poll {
        let n = m.slot_count() as u64;
        loop {
            let i = (self.cursor % n) as u32;
            // Fast path: the index entry at our position already names our
            // record. The writer stores it (Release) before head, so head is
            // not needed: one shared line less to pull across cores.
            // Acquire: pairs with the writer's SeqCst store of the entry.
            let mut e = m.index(i).load_acquire();
            if e == INDEX_EMPTY || index_parts(e).0 != self.cursor {
                match self.poll_slow(m, i) {
                    Ok(entry) => e = entry,
                    // Lapped by records for others only: passed over.
                    Err(Poll::Lagged { missed: 0 }) => continue,
                    Err(p) => return p,
                }
            }
            let (seq, slot) = index_parts(e);
            if slot >= m.data_slots() {
                return self.skip("index entry names no slot");
            }
            // The slot's lines come from the writer's cache: start fetching
            // them before the pin (a locked RMW) serialises this core.
            m.prefetch_slot(slot);
            // Pin, then re-check that the index still names (seq, slot). If
            // the writer's pin check (an RMW) came first, our RMW reads from
            // it and the re-check sees the slot retired; if ours came first,
            // the writer's CAS fails and it leaves the slot alone.
            m.slot_pins(slot).fetch_add_seqcst(1);
            m.client_held(self.client).store_relaxed(slot);
            if m.index(i).load_seqcst() != e {
                self.unpin(m, slot);
                continue; // overwritten meanwhile: the next round reports the lag
            }
            // Acquire: pairs with the writer's Release commit of slot_seq.
            if m.slot_seq(slot).load_acquire() != seq {
                self.unpin(m, slot);
                return self.skip("slot commit word disagrees with the index");
            }
            let len = m.slot_len(slot).load_relaxed();
            if len > m.slot_capacity() {
                self.unpin(m, slot);
                return self.skip("record length exceeds the slot");
            }
            return Poll::Ready(Pinned { slot, seq, len });
        }
    }

    /// The index entry at our position did not name our record: decide from
    /// head whether the ring is empty, we lagged, or the memory is corrupt.
    /// `Ok(entry)`: the entry (re-read) names our record after all.
    fn poll_slow(&mut self, m: &impl RingMemory, i: u32) -> Result<u64, Poll> {
        let n = m.slot_count() as u64;
        // Acquire: pairs with the writer's Release store of head.
        let head = m.head().load_acquire();
        // head + 1: the fast path may have taken record `head` between the
        // writer's index store and its head store.
        if self.cursor == head || self.cursor == head.wrapping_add(1) {
            return Err(Poll::Empty);
        }
        // Our cursor only passes published records: a head further behind
        // was scribbled. Report it and keep the cursor; the writer's next
        // publish restores the word. (A compare, no extra load.)
        if self.cursor > head {
            return Err(Poll::Corrupt {
                seq: self.cursor,
                why: "head word behind the cursor",
            });
        }
        if head - self.cursor > n {
            // Before acting on a lag, check the head is genuine: it comes
            // after the index entry of head - 1 (sequence >= head - 1 at
            // that position).
            if !self.head_is_plausible(m, head) {
                return Err(Poll::Corrupt {
                    seq: self.cursor,
                    why: "head word inconsistent with the ring",
                });
            }
            return Err(self.lagged_to(m, head - n));
        }
        // Re-read: the entry may have been stored since the fast path read it
        // (the writer stores it before head).
        let e = m.index(i).load_acquire();
        if e == INDEX_EMPTY {
            return Err(self.skip("index entry empty below head"));
        }
        let seq = index_parts(e).0;
        if seq == self.cursor {
            return Ok(e);
        }
        // An entry is trusted only where it can legitimately be: at its own
        // position, and not beyond head re-read now (the writer stores head =
        // s before the index entry of s).
        if seq % n != i as u64 || seq > m.head().load_acquire() {
            return Err(self.skip("index entry inconsistent with its position or the head"));
        }
        if seq > self.cursor {
            // Lapped since we read head: the entry already holds `seq`, so
            // the oldest record still there is `seq - n + 1`. Report that
            // exact lag now rather than spin until the writer's head store
            // becomes visible.
            return Err(self.lagged_to(m, seq + 1 - n));
        }
        Err(self.skip("index entry older than head says"))
    }

    fn head_is_plausible(&self, m: &impl RingMemory, head: u64) -> bool {
        let n = m.slot_count() as u64;
        let last = head - 1;
        let e = m.index((last % n) as u32).load_acquire();
        let (seq, _) = index_parts(e);
        e != INDEX_EMPTY && seq >= last && seq % n == last % n
    }

    /// Moves the cursor to `oldest` past the records a lap took. `missed`
    /// 0 when none of them was marked for this reader (passed over, not
    /// lost): the caller reads on.
    fn lagged_to(&mut self, m: &impl RingMemory, oldest: u64) -> Poll {
        let mut missed = oldest - self.cursor;
        if self.none_for_me(m, oldest) {
            missed = 0;
        } else {
            m.client_lost(self.client).fetch_add_relaxed(missed);
        }
        self.cursor = oldest;
        m.client_cursor(self.client).store_release(self.cursor);
        Poll::Lagged { missed }
    }

    /// Whether no record in `[cursor, oldest)` was marked for this reader
    /// (for it alone, or for every reader). The caller loaded `oldest` from
    /// an index entry or head (Acquire), after which the mark of every
    /// record below it is visible.
    fn none_for_me(&self, m: &impl RingMemory, oldest: u64) -> bool {
        is_clear(m.client_mark(self.client), self.cursor, oldest)
            && is_clear(m.mark(), self.cursor, oldest)
    }

    fn skip(&mut self, why: &'static str) -> Poll {
        let seq = self.cursor;
        self.cursor += 1;
        Poll::Corrupt { seq, why }
    }

    fn unpin(&self, m: &impl RingMemory, slot: u32) {
        m.client_held(self.client).store_relaxed(u32::MAX);
        // Release: our reads of the slot happen before the writer reuses it
        // (it loads pins with SeqCst, which includes Acquire).
        m.slot_pins(slot).fetch_sub_release(1);
    }

    /// Releases a pinned record and moves past it.
    pub fn finish(&mut self, m: &impl RingMemory, p: Pinned) {
        self.unpin(m, p.slot);
        self.cursor = p.seq + 1;
        // Release: tools and the server read cursors to show lag.
        m.client_cursor(self.client).store_release(self.cursor);
    }

    /// Whether a poll may return something other than `Empty` (a record, a
    /// lag, or a corrupt head). One load of head; see `poll_slow` for why a
    /// head one behind the cursor is not news.
    pub fn has_news(&self, m: &impl RingMemory) -> bool {
        let head = m.head().load_acquire();
        head > self.cursor || head.wrapping_add(1) < self.cursor
    }

    /// Sleep/wake handshake, reader side: announce the sleep, then re-check.
    /// Returns the values of this reader's wake word and of the ring's
    /// doorbell to sleep on, or `None` if data arrived.
    pub fn prepare_sleep(&self, m: &impl RingMemory) -> Option<(u32, u32)> {
        let own = m.client_wake(self.client).load_acquire();
        let door = m.doorbell().load_acquire();
        m.client_waiting(self.client).store_relaxed(1);
        // SeqCst RMW (a Release for `waiting`), then the fence that pairs
        // with the writer's fence after publishing head.
        m.sleepers(sleeper_word(self.client))
            .fetch_or_seqcst(sleeper_bit(self.client));
        fence_seqcst();
        if m.head().load_acquire() > self.cursor {
            m.client_waiting(self.client).store_relaxed(0);
            return None;
        }
        Some((own, door))
    }

    /// Waits until a record may be available: spins for `spin` (only when it
    /// pays, see [`SpinPolicy`]), then sleeps on its wake word and the
    /// doorbell at most `timeout`.
    pub fn wait(&self, m: &impl RingMemory, spin: Duration, timeout: Option<Duration>) {
        if spin_until(spin, || m.head().load_acquire() > self.cursor) {
            return;
        }
        if let Some((own, door)) = self.prepare_sleep(m) {
            m.client_wake(self.client)
                .wait_while_both(own, m.doorbell(), door, timeout);
            m.client_waiting(self.client).store_relaxed(0);
        }
    }
}

/// Decides whether a waiting reader may spin: only while the machine is not
/// oversubscribed (runnable threads ≤ cores, read from /proc/loadavg at most
/// every 50 ms), since spinning on a shared core costs milliseconds.
///
/// The runnable count is one instant's: a kernel worker or a shell that
/// happens to run beside the reader and its notifier is a third thread on
/// two cores. So after the first reading, spinning stops only when
/// [`READINGS`](Self::READINGS) readings in a row say the machine is
/// oversubscribed, and one reading that says otherwise allows it again.
/// Not the same rule both ways: a policy that also waited for two good
/// readings stayed off for whole runs (sysown with a shell forking every
/// 10 ms: 16 009 and 22 018 syscalls over 22 000 events in 2 runs of 12),
/// we think because a reader that does not spin is woken for every event
/// and its waker is then runnable around more of its readings.
pub struct SpinPolicy {
    budget: Duration,
    cores: u32,
    checked: Option<Instant>,
    allowed: bool,
    /// Oversubscribed readings in a row.
    against: u8,
}

impl SpinPolicy {
    /// A policy spinning at most `budget` per wait.
    pub fn new(budget: Duration) -> SpinPolicy {
        let cores = online_cpus();
        SpinPolicy {
            budget,
            cores,
            checked: None,
            allowed: cores > 1,
            against: 0,
        }
    }

    /// The machine's online CPUs, as read when the policy was made.
    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Never spin.
    pub fn never() -> SpinPolicy {
        SpinPolicy {
            budget: Duration::ZERO,
            cores: 1,
            checked: None,
            allowed: false,
            against: 0,
        }
    }

    /// The budget for this wait (zero when spinning would not pay).
    pub fn budget(&mut self) -> Duration {
        if self.budget.is_zero() || self.cores < 2 {
            return Duration::ZERO;
        }
        let stale = self
            .checked
            .is_none_or(|t| t.elapsed() > Duration::from_millis(50));
        if stale {
            self.reading(runnable_threads());
        }
        if self.allowed {
            self.budget
        } else {
            Duration::ZERO
        }
    }

    /// Takes one load reading into the decision.
    fn reading(&mut self, runnable: Option<u32>) {
        let first = self.checked.is_none();
        self.checked = Some(Instant::now());
        let fits = Self::decide(self.budget, self.cores, runnable) > Duration::ZERO;
        (self.allowed, self.against) = if first {
            (fits, u8::from(!fits))
        } else {
            Self::step(self.allowed, self.against, fits)
        };
    }

    /// Oversubscribed readings in a row that stop the spinning.
    pub const READINGS: u8 = 2;

    /// One load reading after the first: `fits` is [`decide`](Self::decide)'s
    /// verdict on it, `allowed` the decision so far and `against` the
    /// oversubscribed readings in a row before this one. Returns the new
    /// decision and count.
    pub fn step(allowed: bool, against: u8, fits: bool) -> (bool, u8) {
        if fits {
            return (true, 0);
        }
        let n = against.saturating_add(1);
        (allowed && n < Self::READINGS, n)
    }

    /// The rule for one reading: spin `budget` only with two or more cores
    /// and no more runnable threads than cores (`None`: unknown load,
    /// assume it pays).
    pub fn decide(budget: Duration, cores: u32, runnable: Option<u32>) -> Duration {
        if cores >= 2 && runnable.is_none_or(|r| r <= cores) {
            budget
        } else {
            Duration::ZERO
        }
    }
}

/// The machine's online CPUs: what /proc/loadavg's runnable count is to be
/// set against (it counts the whole machine). Not this process's affinity
/// (`available_parallelism`): a rank bound to one CPU, whose progress
/// thread was placed on a core of its own, would then never spin.
pub fn online_cpus() -> u32 {
    // SAFETY: sysconf reads a system value; no pointer, no precondition.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

/// Runnable threads now (4th field of /proc/loadavg, "R/T").
fn runnable_threads() -> Option<u32> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    s.split_whitespace().nth(3)?.split('/').next()?.parse().ok()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use nix::sched::{sched_setaffinity, CpuSet};
    use nix::unistd::Pid;

    /// The first load reading decides; after it one oversubscribed reading
    /// (a third thread that ran for an instant on 2 CPUs) does not stop
    /// the spinning, two in a row do, and one reading that fits allows it
    /// again.
    #[test]
    fn spin_policy_stops_spinning_after_two_oversubscribed_readings_in_a_row() {
        let b = Duration::from_micros(20);
        let mut p = SpinPolicy {
            budget: b,
            cores: 2,
            checked: None,
            allowed: true,
            against: 0,
        };
        let mut seen = Vec::new();
        for r in [3, 2, 2, 3, 2, 3, 3, 2, 3, 2, 2] {
            p.reading(Some(r));
            seen.push(p.allowed);
        }
        assert_eq!(
            seen,
            [false, true, true, true, true, true, false, true, true, true, true],
            "readings 3 2 2 3 2 3 3 2 3 2 2 on two cores"
        );
        p.reading(None);
        assert!(p.allowed, "an unknown load counts as a reading that fits");
    }

    /// A rank bound to one CPU sets the machine's runnable threads against
    /// the machine's CPUs: its affinity says nothing about whether its
    /// progress thread, placed on another core, may spin.
    #[test]
    fn spin_policy_counts_the_machines_cpus_not_the_threads_affinity() {
        if online_cpus() < 2 {
            eprintln!("skipped: one CPU online");
            return;
        }
        std::thread::spawn(|| {
            let mut one = CpuSet::new();
            one.set(0).unwrap();
            sched_setaffinity(Pid::from_raw(0), &one).unwrap();
            assert_eq!(
                std::thread::available_parallelism().unwrap().get(),
                1,
                "the thread is bound to one CPU"
            );
            let p = SpinPolicy::new(Duration::from_micros(20));
            assert_eq!(p.cores, online_cpus());
            assert!(p.allowed, "a machine of two CPUs or more may spin");
            assert_eq!(
                SpinPolicy::decide(p.budget, p.cores, Some(p.cores)),
                p.budget
            );
        })
        .join()
        .unwrap();
    }
}
