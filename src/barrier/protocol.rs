//! The barrier's protocol (`shm_layout::barrier` has the layout and the
//! orderings in prose), on a memory trait so that the loom model
//! (`model.rs`) checks the code the mapped object runs.

use crate::sync::{fence_seqcst, spin_until, Cell32, Cell64};
use shm_layout::barrier::{outcome, outcome_word, pack, unpack, CLOSED, OUTCOMES};
use std::time::{Duration, Instant};

/// One barrier's shared words.
pub(crate) trait BarrierMemory {
    /// Participants (ranks `0..slots`).
    fn slots(&self) -> u32;
    fn state(&self) -> &Cell64;
    fn done(&self) -> &Cell32;
    fn applied_seq(&self) -> &Cell32;
    fn appliers(&self) -> &Cell32;
    /// Outcome word `i` (`< OUTCOMES`).
    fn outcome(&self, i: usize) -> &Cell32;
    fn sent(&self, rank: u32) -> &Cell64;
    fn applied(&self, rank: u32) -> &Cell64;
    fn entered(&self, rank: u32) -> &Cell32;
}

/// Where an entering process stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    /// In instance `gen`, which others have still to enter.
    Waiting(u32),
    /// It was the last: instance `gen` is closed to entries; the caller
    /// waits for the participants' commits, then ends it ([`complete`]),
    /// so that the others are woken once, when everything is ready.
    Last(u32),
    /// No new instance starts here: take the server's fence.
    Closed,
}

/// Enters the open instance as `rank`, which had sent `sent` commits.
pub(crate) fn enter(m: &impl BarrierMemory, rank: u32, sent: u64) -> Entry {
    // Published to the others by the entering CAS (AcqRel).
    m.sent(rank).store_release(sent);
    let mut s = m.state().load_acquire();
    loop {
        let (closed, gen, count) = unpack(s);
        if closed && count == 0 {
            return Entry::Closed;
        }
        let last = count + 1 >= m.slots();
        let new = if last {
            pack(closed, gen.wrapping_add(1), 0)
        } else {
            pack(closed, gen, count + 1)
        };
        match m.state().cas_acqrel(s, new) {
            Ok(_) => {
                // After the CAS: a process that dies in between counts as
                // not entered (a spurious failure, never a hang).
                m.entered(rank).store_release(gen.wrapping_add(1));
                if last {
                    return Entry::Last(gen);
                }
                return Entry::Waiting(gen);
            }
            Err(now) => s = now,
        }
    }
}

/// The last entrant ends instance `gen` with `code` (after
/// [`wait_applied`] for a success). Returns the outcome recorded: `code`,
/// or the one the server recorded first (LOST, had it taken the last
/// entrant for dead meanwhile), which everyone in the instance sees.
pub(crate) fn complete(m: &impl BarrierMemory, gen: u32, code: u32) -> u32 {
    finish(m, gen, code);
    outcome_of(m, gen).unwrap_or(code)
}

/// Ends instance `gen` (whose `state` already moved on) with `code`,
/// unless it has an outcome already (the server filled in LOST for a last
/// entrant it took for dead): one outcome per instance, the first.
fn finish(m: &impl BarrierMemory, gen: u32, code: u32) {
    let word = m.outcome(gen as usize % OUTCOMES);
    let mut w = word.load_acquire();
    loop {
        if w & 0xFF != 0 && w >> 8 == outcome_word(gen, 0) >> 8 {
            return;
        }
        match word.cas_acqrel(w, outcome_word(gen, code)) {
            Ok(_) => break,
            Err(now) => w = now,
        }
    }
    // The waiters load `done` before their outcome word: a bump after that
    // load fails their futex wait, so the wake below is never lost.
    m.done().fetch_add_seqcst(1);
    m.done().wake_all();
}

/// Instance `gen`'s outcome code, once it ended.
pub(crate) fn outcome_of(m: &impl BarrierMemory, gen: u32) -> Option<u32> {
    let w = m.outcome(gen as usize % OUTCOMES).load_acquire();
    let code = w & 0xFF;
    (code != 0 && w >> 8 == outcome_word(gen, 0) >> 8).then_some(code)
}

/// Waits for instance `gen` to end, at most until `deadline` (then ends
/// it with [`outcome::TIMEOUT`] if it is still open), or until `give_up`
/// (the server is gone: `None`). Polls for `spin` before the first sleep
/// (zero: sleeps at once). Returns the outcome code.
pub(crate) fn wait(
    m: &impl BarrierMemory,
    gen: u32,
    mut deadline: Option<Instant>,
    give_up: &dyn Fn() -> bool,
    spin: Duration,
) -> Option<u32> {
    // The loop below takes the outcome the spin saw, if it saw one.
    spin_until(spin, || outcome_of(m, gen).is_some());
    loop {
        let d = m.done().load_acquire();
        if let Some(c) = outcome_of(m, gen) {
            return Some(c);
        }
        if give_up() {
            return None;
        }
        let left = match deadline {
            Some(t) => match t.checked_duration_since(Instant::now()) {
                Some(l) if !l.is_zero() => Some(l),
                _ => {
                    if expire(m, gen) {
                        return Some(outcome::TIMEOUT);
                    }
                    // It ended meanwhile; its outcome is on its way.
                    deadline = None;
                    continue;
                }
            },
            None => None,
        };
        // Wake at least every second: `give_up` is polled, not signalled.
        let slice = left.map_or(Duration::from_secs(1), |l| l.min(Duration::from_secs(1)));
        m.done().wait_while(d, Some(slice));
    }
}

/// Ends instance `gen` with [`outcome::TIMEOUT`] if it is still the open
/// one; `false` when it had ended.
pub(crate) fn expire(m: &impl BarrierMemory, gen: u32) -> bool {
    let mut s = m.state().load_acquire();
    loop {
        let (closed, g, _) = unpack(s);
        if g != gen {
            return false;
        }
        match m
            .state()
            .cas_acqrel(s, pack(closed, gen.wrapping_add(1), 0))
        {
            Ok(_) => {
                finish(m, gen, outcome::TIMEOUT);
                return true;
            }
            Err(now) => s = now,
        }
    }
}

/// The server's end when participant `left` left for good (`None`: the
/// namespace goes away, or gained a rank beyond the barrier's). No new
/// instance starts; the open one fails with [`outcome::LOST`] unless
/// `left` had entered it (its remaining participants complete it).
pub(crate) fn close(m: &impl BarrierMemory, left: Option<u32>) {
    let mut s = m.state().load_acquire();
    loop {
        let (_, gen, count) = unpack(s);
        let entered = left.is_some_and(|r| m.entered(r).load_acquire() == gen.wrapping_add(1));
        let fail = count > 0 && (!entered || left.is_none());
        let new = if fail {
            pack(true, gen.wrapping_add(1), 0)
        } else {
            s | CLOSED
        };
        match m.state().cas_acqrel(s, new) {
            Ok(_) => {
                if fail {
                    finish(m, gen, outcome::LOST);
                } else {
                    // A last entrant that died between its CAS and its
                    // outcome word would leave the others asleep.
                    let prev = gen.wrapping_sub(1);
                    if gen != 0 && outcome_of(m, prev).is_none() {
                        finish(m, prev, outcome::LOST);
                    }
                }
                return;
            }
            Err(now) => s = now,
        }
    }
}

/// Wakes every process sleeping on the barrier (they re-check, and see
/// why they should stop waiting: their server is gone).
pub(crate) fn wake_sleepers(m: &impl BarrierMemory) {
    m.done().wake_all();
    m.applied_seq().wake_all();
}

/// No new instance starts here any more.
pub(crate) fn is_closed(m: &impl BarrierMemory) -> bool {
    m.state().load_acquire() & CLOSED != 0
}

/// The server applied `rank`'s `count`-th commit (its data is in the store).
pub(crate) fn applied(m: &impl BarrierMemory, rank: u32, count: u64) {
    // Dekker with `wait_applied`: this store, a full fence, then the load
    // of `appliers`; there, the increment of `appliers`, a full fence, then
    // the loads of `applied`. One of the two sees the other's write.
    m.applied(rank).store_seqcst(count);
    fence_seqcst();
    if m.appliers().load_seqcst() > 0 {
        m.applied_seq().fetch_add_seqcst(1);
        m.applied_seq().wake_all();
    }
}

/// Waits until every participant's commits sent before it entered are
/// applied; `false` if `deadline` passed or `give_up` first. Polls for
/// `spin` before it asks the server for a wake-up (zero: asks at once).
pub(crate) fn wait_applied(
    m: &impl BarrierMemory,
    deadline: Option<Instant>,
    give_up: &dyn Fn() -> bool,
    spin: Duration,
) -> bool {
    let all = || (0..m.slots()).all(|r| m.applied(r).load_seqcst() >= m.sent(r).load_acquire());
    if all() || spin_until(spin, all) {
        return true;
    }
    m.appliers().fetch_add_seqcst(1);
    fence_seqcst();
    let ok = loop {
        let seq = m.applied_seq().load_acquire();
        if all() {
            break true;
        }
        if give_up() {
            break false;
        }
        let slice = match deadline {
            Some(t) => match t.checked_duration_since(Instant::now()) {
                Some(l) if !l.is_zero() => l.min(Duration::from_secs(1)),
                _ => break false,
            },
            None => Duration::from_secs(1),
        };
        m.applied_seq().wait_while(seq, Some(slice));
    };
    m.appliers().fetch_sub_release(1);
    ok
}
