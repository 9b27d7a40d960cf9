//! Loom models of the ring protocol, the sleep/wake handshake and the
//! submission queue, over in-memory loom cells. Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib ring::model`.

use super::protocol::RingMemory;
use super::submit::SubmitMemory;
use crate::sync::{Cell32, Cell64, ModelBytes};
use shm_layout::{INDEX_EMPTY, INTEREST_ALL};

/// A ring in loom memory.
pub struct ModelRing {
    slot_count: u32,
    data: Vec<ModelBytes>,
    head: Cell64,
    doorbell: Cell32,
    sleepers: Vec<Cell64>,
    wakes: Cell64,
    refused: Cell64,
    interest_gen: Cell64,
    index: Vec<Cell64>,
    seq: Vec<Cell64>,
    len: Vec<Cell32>,
    pins: Vec<Cell32>,
    cursor: Vec<Cell64>,
    lost: Vec<Cell64>,
    waiting: Vec<Cell32>,
    wake: Vec<Cell32>,
    held: Vec<Cell32>,
    interest: Vec<Cell64>,
    /// Each entry's `state` and `rank` (entry `c` starts active, as rank
    /// `c`).
    state: Vec<Cell32>,
    rank: Vec<Cell32>,
    /// The ring's mark `[last, prev]`, then every entry's.
    marks: Vec<Cell64>,
    // a submission queue per client
    depth: u32,
    produced: Vec<Cell64>,
    consumed: Vec<Cell64>,
    space_waiting: Vec<Cell32>,
    space_bell: Vec<Cell32>,
    submit_bell: Cell32,
    submit_sleepy: Cell32,
    /// Queue `c`'s slot `i` at `c * depth + i`.
    entries: Vec<ModelBytes>,
    entry_len: Vec<Cell32>,
    entry_seq: Vec<Cell64>,
    /// A lane reader's view of each queue slot: the record's first eight
    /// bytes as an atomic word (a seqlock reader's copy races the rewrite by
    /// design; loom's tracked cells would call that a data race).
    entry_word: Vec<Cell64>,
    lane_epoch: Cell64,
    lane_senders: Cell64,
}

fn cells64(n: u32, v: u64) -> Vec<Cell64> {
    (0..n).map(|_| Cell64::new(v)).collect()
}

fn cells32(n: u32, v: u32) -> Vec<Cell32> {
    (0..n).map(|_| Cell32::new(v)).collect()
}

impl ModelRing {
    /// A ring of `slot_count` index entries for `clients` readers, each
    /// with a submission queue of `depth`.
    pub fn new(slot_count: u32, clients: u32, depth: u32) -> ModelRing {
        let data_slots = slot_count + clients + 1;
        ModelRing {
            slot_count,
            data: (0..data_slots).map(|_| ModelBytes::new()).collect(),
            head: Cell64::new(0),
            doorbell: Cell32::new(0),
            sleepers: cells64(clients.div_ceil(64), 0),
            wakes: Cell64::new(0),
            refused: Cell64::new(0),
            interest_gen: Cell64::new(0),
            index: cells64(slot_count, INDEX_EMPTY),
            seq: cells64(data_slots, u64::MAX),
            len: cells32(data_slots, 0),
            pins: cells32(data_slots, 0),
            cursor: cells64(clients, 0),
            lost: cells64(clients, 0),
            waiting: cells32(clients, 0),
            wake: cells32(clients, 0),
            held: cells32(clients, u32::MAX),
            interest: cells64(clients, INTEREST_ALL),
            state: cells32(clients, shm_layout::client_state::ACTIVE),
            rank: (0..clients).map(Cell32::new).collect(),
            marks: cells64(2 * (1 + clients), 0),
            depth,
            produced: cells64(clients, 0),
            consumed: cells64(clients, 0),
            space_waiting: cells32(clients, 0),
            space_bell: cells32(clients, 0),
            submit_bell: Cell32::new(0),
            submit_sleepy: Cell32::new(0),
            entries: (0..clients * depth).map(|_| ModelBytes::new()).collect(),
            entry_len: cells32(clients * depth, 0),
            entry_seq: cells64(clients * depth, 0),
            entry_word: cells64(clients * depth, 0),
            lane_epoch: Cell64::new(0),
            lane_senders: Cell64::new(0),
        }
    }

    /// Reads a pinned slot's bytes (a tracked read access).
    pub fn read_slot(&self, s: u32) -> Vec<u8> {
        self.data[s as usize].read()
    }
}

impl RingMemory for ModelRing {
    fn slot_count(&self) -> u32 {
        self.slot_count
    }
    fn data_slots(&self) -> u32 {
        self.data.len() as u32
    }
    fn slot_capacity(&self) -> u32 {
        64
    }
    fn client_capacity(&self) -> u32 {
        self.cursor.len() as u32
    }
    fn head(&self) -> &Cell64 {
        &self.head
    }
    fn doorbell(&self) -> &Cell32 {
        &self.doorbell
    }
    fn sleeper_words(&self) -> u32 {
        self.sleepers.len() as u32
    }
    fn sleepers(&self, w: u32) -> &Cell64 {
        &self.sleepers[w as usize]
    }
    fn wakes(&self) -> &Cell64 {
        &self.wakes
    }
    fn refused(&self) -> &Cell64 {
        &self.refused
    }
    fn interest_gen(&self) -> &Cell64 {
        &self.interest_gen
    }
    fn index(&self, i: u32) -> &Cell64 {
        &self.index[i as usize]
    }
    fn slot_seq(&self, s: u32) -> &Cell64 {
        &self.seq[s as usize]
    }
    fn slot_len(&self, s: u32) -> &Cell32 {
        &self.len[s as usize]
    }
    fn slot_pins(&self, s: u32) -> &Cell32 {
        &self.pins[s as usize]
    }
    fn client_cursor(&self, c: u32) -> &Cell64 {
        &self.cursor[c as usize]
    }
    fn client_lost(&self, c: u32) -> &Cell64 {
        &self.lost[c as usize]
    }
    fn client_waiting(&self, c: u32) -> &Cell32 {
        &self.waiting[c as usize]
    }
    fn client_held(&self, c: u32) -> &Cell32 {
        &self.held[c as usize]
    }
    fn client_wake(&self, c: u32) -> &Cell32 {
        &self.wake[c as usize]
    }
    fn client_rank(&self, c: u32) -> u32 {
        self.rank[c as usize].load_relaxed()
    }
    fn client_active(&self, c: u32) -> bool {
        self.state[c as usize].load_relaxed() == shm_layout::client_state::ACTIVE
    }
    fn client_interest(&self, c: u32) -> &Cell64 {
        &self.interest[c as usize]
    }
    fn mark(&self) -> [&Cell64; 2] {
        [&self.marks[0], &self.marks[1]]
    }
    fn client_mark(&self, c: u32) -> [&Cell64; 2] {
        let i = 2 * (1 + c as usize);
        [&self.marks[i], &self.marks[i + 1]]
    }
    unsafe fn write_slot(&self, s: u32, bytes: &[u8]) {
        self.data[s as usize].write(bytes);
    }
}

impl SubmitMemory for ModelRing {
    fn depth(&self) -> u32 {
        self.depth
    }
    fn capacity(&self) -> u32 {
        64
    }
    fn produced(&self, c: u32) -> &Cell64 {
        &self.produced[c as usize]
    }
    fn consumed(&self, c: u32) -> &Cell64 {
        &self.consumed[c as usize]
    }
    fn space_waiting(&self, c: u32) -> &Cell32 {
        &self.space_waiting[c as usize]
    }
    fn space_bell(&self, c: u32) -> &Cell32 {
        &self.space_bell[c as usize]
    }
    fn submit_bell(&self) -> &Cell32 {
        &self.submit_bell
    }
    fn submit_sleepy(&self) -> &Cell32 {
        &self.submit_sleepy
    }
    fn entry_len(&self, c: u32, i: u32) -> &Cell32 {
        &self.entry_len[(c * self.depth + i) as usize]
    }
    fn entry_seq(&self, c: u32, i: u32) -> &Cell64 {
        &self.entry_seq[(c * self.depth + i) as usize]
    }
    fn lane_epoch(&self) -> &Cell64 {
        &self.lane_epoch
    }
    fn lane_senders(&self) -> &Cell64 {
        &self.lane_senders
    }
    unsafe fn write_entry(&self, c: u32, i: u32, bytes: &[u8]) {
        let k = (c * self.depth + i) as usize;
        self.entries[k].write(bytes);
        let mut w = [0u8; 8];
        let n = bytes.len().min(8);
        w[..n].copy_from_slice(&bytes[..n]);
        self.entry_word[k].store_relaxed(u64::from_le_bytes(w));
    }
    fn read_entry_shared(&self, c: u32, i: u32, len: u32, out: &mut rkyv::util::AlignedVec) {
        let w = self.entry_word[(c * self.depth + i) as usize].load_relaxed();
        out.clear();
        out.extend_from_slice(&w.to_le_bytes()[..(len as usize).min(8)]);
    }
    fn read_entry(&self, c: u32, i: u32, len: u32, out: &mut rkyv::util::AlignedVec) {
        let b = self.entries[(c * self.depth + i) as usize].read();
        out.clear();
        out.extend_from_slice(&b[..(len as usize).min(b.len())]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::lane::{Lane, LaneCore, LanePoll, PeerIndex};
    use crate::ring::protocol::{want, Poll, ReaderCore, Wake, WriterCore};
    use crate::ring::submit::{self, Popped};
    use loom::sync::Arc;
    use std::time::Duration;

    fn bounded(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        // Readers that find nothing sleep in a modelled futex (a yield loop),
        // so executions are long; a true lost wake-up still shows up as an
        // unbounded loop and fails the model.
        b.max_branches = 20_000;
        b.check(f);
    }

    /// Queue 0 pushes the record `n` (its bytes) with `lane` and `topic`,
    /// waiting for space, with a sender's fresh `PeerIndex`.
    fn push_fresh(m: &ModelRing, n: u64, lane: Lane<'_>, topic: u64) {
        let mut peers = PeerIndex::default();
        submit::push(m, 0, &n.to_le_bytes(), None, lane, topic, &mut peers).unwrap();
    }

    /// Reader `client`, at the ring's start, goes to sleep as a client's
    /// `RingReader::prepare_sleep` does: the ring's handshake, then the
    /// lanes. `Some(wake word)`: it sleeps.
    fn sleep_as_a_client(m: &ModelRing, client: u32, lanes: &LaneCore) -> Option<u32> {
        let r = ReaderCore { client, cursor: 0 };
        r.prepare_sleep(m)
            .filter(|_| !lanes.has_news(m))
            .map(|(own, _)| own)
    }

    /// Reads until `total` records are accounted for (read or reported
    /// lost); every record read must carry its own sequence (no torn read:
    /// loom also fails on a write racing the read).
    fn drain(m: &ModelRing, client: u32, total: u64, sleep: bool) -> (u64, u64) {
        let mut r = ReaderCore { client, cursor: 0 };
        let (mut read, mut lost) = (0u64, 0u64);
        while read + lost < total {
            match r.poll(m) {
                Poll::Ready(p) => {
                    let bytes = m.read_slot(p.slot);
                    assert_eq!(bytes, p.seq.to_le_bytes(), "torn or misplaced record");
                    r.finish(m, p);
                    read += 1;
                }
                Poll::Lagged { missed } => lost += missed,
                Poll::Corrupt { seq, why } => panic!("record {seq} corrupt: {why}"),
                // The sleep handshake has its own model; elsewhere a reader
                // that finds nothing yields, which keeps the state space small.
                Poll::Empty if sleep => r.wait(m, Duration::ZERO, None),
                Poll::Empty => loom::thread::yield_now(),
            }
        }
        (read, lost)
    }

    /// Two readers polling a fixed number of times while the writer recycles
    /// slots, at one preemption. Opt-in (`FASTPMIX_LOOM_FULL=1` in
    /// tools/test): with three threads loom has not finished it within ten
    /// minutes here; the one-reader model covers slot reuse at two
    /// preemptions in seconds. Bounded polls instead of drain loops keep the
    /// state space down: a reader that finds nothing does not spin. Checks
    /// no torn read (loom UnsafeCell) and exact accounting: every position
    /// the cursor passed was either read or reported lost.
    #[test]
    fn one_writer_two_readers_through_wraparound_and_lag() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(1);
        b.check(|| {
            // 1 index entry + 2 clients + 1 = 4 data slots: the 5th record
            // reuses a slot while readers may hold or be about to take pins.
            let m = Arc::new(ModelRing::new(1, 2, 1));
            let total = 5u64;
            let readers: Vec<_> = (0..2)
                .map(|c| {
                    let m = m.clone();
                    loom::thread::spawn(move || {
                        let mut r = ReaderCore {
                            client: c,
                            cursor: 0,
                        };
                        let (mut read, mut lost) = (0u64, 0u64);
                        for _ in 0..3 {
                            match r.poll(&*m) {
                                Poll::Ready(p) => {
                                    assert_eq!(
                                        m.read_slot(p.slot),
                                        p.seq.to_le_bytes(),
                                        "torn read"
                                    );
                                    r.finish(&*m, p);
                                    read += 1;
                                }
                                Poll::Lagged { missed } => lost += missed,
                                Poll::Corrupt { seq, why } => panic!("record {seq} corrupt: {why}"),
                                Poll::Empty => {}
                            }
                        }
                        assert_eq!(
                            r.cursor,
                            read + lost,
                            "every position read or reported lost"
                        );
                    })
                })
                .collect();
            let mut w = WriterCore::new(&*m);
            for s in 0..total {
                w.publish(&*m, &s.to_le_bytes()).unwrap();
            }
            for r in readers {
                r.join().unwrap();
            }
        });
    }

    #[test]
    fn one_writer_one_reader_through_wraparound_and_lag_with_two_preemptions() {
        bounded(|| {
            // 4 data slots: the 5th record reuses slot 0 while a slow reader
            // may still be about to pin it.
            let m = Arc::new(ModelRing::new(2, 1, 1));
            let total = 5u64;
            let m2 = m.clone();
            let r = loom::thread::spawn(move || drain(&m2, 0, total, false));
            let mut w = WriterCore::new(&*m);
            for s in 0..total {
                w.publish(&*m, &s.to_le_bytes()).unwrap();
            }
            let (read, lost) = r.join().unwrap();
            assert_eq!(read + lost, total);
        });
    }

    /// A client's own records (`own_relayed`, docs/shm-format.md "A
    /// client's own records"): the server stores an own record's number
    /// (Release) after publishing it; a reader that loads the number
    /// (Acquire) and then polls until it finds nothing has passed that
    /// record, so the own records up to it that it did not read were in a
    /// gap. Records 0 and 2 are the reader's own (numbers 1 and 2).
    #[test]
    fn an_own_record_whose_number_the_reader_saw_is_behind_it_once_caught_up() {
        loom::model(|| {
            let m = Arc::new(ModelRing::new(4, 1, 1));
            let own = Arc::new(Cell64::new(0));
            let (m2, own2) = (m.clone(), own.clone());
            let reader = loom::thread::spawn(move || {
                let seen = own2.load_acquire();
                let mut r = ReaderCore {
                    client: 0,
                    cursor: 0,
                };
                loop {
                    match r.poll(&*m2) {
                        Poll::Ready(p) => r.finish(&*m2, p),
                        Poll::Empty => break,
                        other => panic!("no gap or corruption here: {other:?}"),
                    }
                }
                (seen, r.cursor)
            });
            let mut w = WriterCore::new(&*m);
            w.publish(&*m, &0u64.to_le_bytes()).unwrap();
            own.store_release(1);
            w.publish(&*m, &1u64.to_le_bytes()).unwrap();
            w.publish(&*m, &2u64.to_le_bytes()).unwrap();
            own.store_release(2);
            let (seen, cursor) = reader.join().unwrap();
            // Own record `n` is at sequence 0 or 2.
            let at = [None, Some(0u64), Some(2)][seen as usize];
            assert!(
                at.is_none_or(|s| cursor > s),
                "own record {seen} not behind a caught-up reader (cursor {cursor})"
            );
        });
    }

    #[test]
    fn sleeping_reader_is_always_woken_by_a_publish() {
        loom::model(|| {
            let m = Arc::new(ModelRing::new(2, 1, 1));
            let m2 = m.clone();
            let reader = loom::thread::spawn(move || drain(&m2, 0, 1, true));
            let mut w = WriterCore::new(&*m);
            w.publish(&*m, &0u64.to_le_bytes()).unwrap();
            assert_eq!(reader.join().unwrap(), (1, 0));
        });
    }

    /// Targeted wakes with one reader: record 0 is for nobody, so a reader
    /// asleep then stays asleep with its bit put back; record 1 is for it
    /// and must find it through that bit. Preemption bound as RM-3.
    #[test]
    fn a_sleeper_a_record_is_not_for_is_found_again_through_its_kept_bit() {
        loom::model(|| {
            let m = Arc::new(ModelRing::new(4, 1, 1));
            let m2 = m.clone();
            let reader = loom::thread::spawn(move || drain(&m2, 0, 2, true));
            let mut w = WriterCore::new(&*m);
            w.publish_to(&*m, &0u64.to_le_bytes(), Wake::Only(&[]), INTEREST_ALL)
                .unwrap();
            // Only: the reader's own wake word, not the doorbell.
            w.publish_to(&*m, &1u64.to_le_bytes(), Wake::Only(&[0]), INTEREST_ALL)
                .unwrap();
            assert_eq!(reader.join().unwrap(), (2, 0));
        });
    }

    /// A model with two readers in modelled futex loops, at preemption
    /// bound 1: at bound 2 loom had not finished after 25 minutes here;
    /// the one-reader model above runs the put-back path at RM-3's bound.
    fn two_readers_bound_one(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(1);
        b.max_branches = 200_000;
        b.check(f);
    }

    /// Targeted wakes: record 0 is for reader 0 only, so reader 1 may be
    /// left asleep with its bit put back in the mask; the last record is for
    /// both (the doorbell). Neither reader may miss a wake meant for it.
    #[test]
    fn a_sleeper_left_asleep_is_still_woken_by_a_later_record_for_it() {
        two_readers_bound_one(|| {
            let m = Arc::new(ModelRing::new(4, 2, 1));
            let readers: Vec<_> = (0..2)
                .map(|c| {
                    let m = m.clone();
                    loom::thread::spawn(move || drain(&m, c, 2, true))
                })
                .collect();
            let mut w = WriterCore::new(&*m);
            w.publish_to(&*m, &0u64.to_le_bytes(), Wake::Only(&[0]), INTEREST_ALL)
                .unwrap();
            w.publish_to(&*m, &1u64.to_le_bytes(), Wake::All, INTEREST_ALL)
                .unwrap();
            for r in readers {
                assert_eq!(r.join().unwrap(), (2, 0));
            }
        });
    }

    /// RM-10: with a ring of 16 a record for reader 0 takes only its bit
    /// between the writer's sweeps (one every 2 publishes here): the second
    /// record, published between sweeps, must wake reader 0 itself (it
    /// reads only those two), and reader 1, asleep with its bit untouched,
    /// is woken by the last record, for it alone (a sweep). Neither misses
    /// a wake meant for it. Bound 1, as RM-7.
    #[test]
    fn a_record_between_sweeps_takes_only_its_readers_bits() {
        two_readers_bound_one(|| {
            let m = Arc::new(ModelRing::new(16, 2, 1));
            let readers: Vec<_> = (0..2)
                .map(|c| {
                    let m = m.clone();
                    loom::thread::spawn(move || drain(&m, c, 2 + c as u64, true))
                })
                .collect();
            let mut w = WriterCore::new(&*m);
            for s in 0..2u64 {
                w.publish_to(&*m, &s.to_le_bytes(), Wake::Only(&[0]), INTEREST_ALL)
                    .unwrap();
            }
            w.publish_to(&*m, &2u64.to_le_bytes(), Wake::Only(&[1]), INTEREST_ALL)
                .unwrap();
            for (c, r) in readers.into_iter().enumerate() {
                assert_eq!(r.join().unwrap(), (2 + c as u64, 0));
            }
        });
    }

    /// RM-11: a reader that wants no code is asleep (its bit set, its
    /// waiting flag up, nothing unread), and the writer already keeps a
    /// copy of the readers' interests (a first record, of a code the reader
    /// does not want, left it asleep; the reader then read it). The writer
    /// publishes a record of that code while another thread of the
    /// reader's process registers for it (`want`, then a poke of the
    /// reader's wake word when it says so). Either the writer sees the new
    /// generation, reloads and wakes the reader, or `want` sees the record
    /// and the poke does: the reader is never left asleep with a record of
    /// a code it wants unread.
    #[test]
    fn a_registration_racing_a_publish_never_leaves_the_reader_asleep() {
        bounded(|| {
            const BIT: u64 = 1 << 5;
            let m = Arc::new(ModelRing::new(4, 1, 1));
            m.client_interest(0).store_relaxed(0);
            let mut w = WriterCore::new(&*m);
            let mut r = ReaderCore {
                client: 0,
                cursor: 0,
            };
            let (own, _) = r.prepare_sleep(&*m).expect("nothing unread");
            w.publish_to(&*m, &0u64.to_le_bytes(), Wake::All, BIT)
                .unwrap();
            assert_eq!(m.client_wake(0).load_relaxed(), own, "left asleep");
            // The reader, woken some other way, reads it and sleeps again.
            m.client_waiting(0).store_relaxed(0);
            r.cursor = 1;
            m.client_cursor(0).store_relaxed(1);
            let (own, door) = r.prepare_sleep(&*m).expect("nothing unread");
            let m2 = m.clone();
            let registrant = loom::thread::spawn(move || {
                if want(&*m2, 0, BIT) {
                    // The client's poke of its progress thread.
                    m2.client_wake(0).fetch_add_seqcst(1);
                }
            });
            w.publish_to(&*m, &1u64.to_le_bytes(), Wake::All, BIT)
                .unwrap();
            registrant.join().unwrap();
            assert!(
                m.client_wake(0).load_relaxed() != own || m.doorbell().load_relaxed() != door,
                "the reader sleeps on with a record it wants unread"
            );
        });
    }

    #[test]
    fn submission_queue_delivers_in_order_with_backpressure_and_no_lost_wakeup() {
        bounded(|| {
            let m = Arc::new(ModelRing::new(2, 1, 1));
            let m2 = m.clone();
            let producer = loom::thread::spawn(move || {
                for s in 0..2u64 {
                    push_fresh(&m2, s, Lane::No, 0);
                }
            });
            let mut buf = rkyv::util::AlignedVec::new();
            let mut next = 0u64;
            while next < 2 {
                match submit::pop(&*m, 0, &mut buf) {
                    Popped::Record { seq } => {
                        assert_eq!(seq, next);
                        assert_eq!(&buf[..], &next.to_le_bytes());
                        submit::release(&*m, 0, seq + 1);
                        next += 1;
                    }
                    Popped::Empty => submit::wait(&*m, std::iter::once(0), None),
                    Popped::Corrupt { why } => panic!("{why}"),
                }
            }
            producer.join().unwrap();
        });
    }

    /// A lane record against a reader going to sleep: the sender bumps
    /// `lane_epoch`, fences and looks at `waiting`; the reader stores
    /// `waiting`, fences and looks at `lane_epoch`. Either the reader sees
    /// the record and stays up, or the sender wakes it.
    #[test]
    fn a_lane_record_never_leaves_a_sleeping_peer_asleep() {
        bounded(|| {
            const BIT: u64 = 1 << 9;
            let m = Arc::new(ModelRing::new(2, 2, 1));
            let mut lanes = LaneCore::new(&*m, 1);
            let m2 = m.clone();
            let sender = loom::thread::spawn(move || {
                push_fresh(&m2, 0u64, Lane::All, BIT);
            });
            let slept = sleep_as_a_client(&m, 1, &lanes);
            if slept.is_none() && lanes.begin(&*m) {
                // Stayed up for the record: the scan it starts must look at
                // the sender's lane (its `lane_senders` bit came first).
                let mut peers = Vec::new();
                lanes.peers(&*m, &mut peers);
                assert_eq!(peers, [0], "the sender's lane is not scanned");
            }
            sender.join().unwrap();
            if let Some(own) = slept {
                assert_ne!(
                    m.client_wake(1).load_relaxed(),
                    own,
                    "the peer sleeps on with a lane record unread"
                );
            }
        });
    }

    /// RM-17: a sender's cached entry of a custom range's target that has
    /// moved. The sender found rank 1 at entry 1 (its first record, a
    /// full scan); then the server releases entry 1 and claims entry 2 for
    /// rank 1, whose new reader attaches and goes to sleep, while the
    /// sender pushes a second record for rank 1. Either the sender sees
    /// entry 1 freed (and scans every entry), or the reader sees the
    /// record's `lane_epoch`, or the record came before its attach: it
    /// never sleeps on with a lane record it would read unread. Dropping
    /// the index's check of the entry's state fails it.
    #[test]
    fn a_moved_target_of_a_custom_range_is_never_left_asleep() {
        bounded(|| {
            const BIT: u64 = 1 << 9;
            let m = Arc::new(ModelRing::new(2, 3, 2));
            let mut index = PeerIndex::default();
            let first = 0u64.to_le_bytes();
            submit::push(&*m, 0, &first, None, Lane::Ranks(&[1]), BIT, &mut index).unwrap();
            let m2 = m.clone();
            let rank1 = loom::thread::spawn(move || {
                // The server: entry 1 freed (its reader gone), entry 2
                // claimed for rank 1 (`Region::claim_client_from`).
                m2.client_waiting(1).store_relaxed(0);
                m2.state[1].store_release(shm_layout::client_state::FREE);
                m2.rank[2].store_relaxed(1);
                m2.state[2].store_release(shm_layout::client_state::ACTIVE);
                // The new reader attaches and sleeps (as RingReader).
                let lanes = LaneCore::new(&*m2, 2);
                (sleep_as_a_client(&m2, 2, &lanes), lanes)
            });
            let second = 1u64.to_le_bytes();
            submit::push(&*m, 0, &second, None, Lane::Ranks(&[1]), BIT, &mut index).unwrap();
            let (slept, mut lanes) = rank1.join().unwrap();
            if let Some(own) = slept {
                if m.client_wake(2).load_relaxed() == own {
                    let mut buf = rkyv::util::AlignedVec::new();
                    assert_eq!(
                        lanes.poll(&*m, 0, &mut buf),
                        LanePoll::Empty,
                        "rank 1's new reader sleeps on with a lane record for it unread"
                    );
                }
            }
        });
    }

    /// A registration racing a lane record of its code: the sender saw no
    /// interest and woke nobody, so `want` must report the record (its
    /// queue is not released yet, and its ring copy will wake nobody).
    #[test]
    fn a_registration_racing_a_lane_record_never_leaves_the_reader_asleep() {
        bounded(|| {
            const BIT: u64 = 1 << 9;
            let m = Arc::new(ModelRing::new(2, 2, 1));
            m.client_interest(1).store_relaxed(0);
            let r = ReaderCore {
                client: 1,
                cursor: 0,
            };
            let (own, _) = r.prepare_sleep(&*m).expect("nothing unread");
            let m2 = m.clone();
            let sender = loom::thread::spawn(move || {
                push_fresh(&m2, 0u64, Lane::All, BIT);
            });
            let poked = want(&*m, 1, BIT);
            sender.join().unwrap();
            assert!(
                poked || m.client_wake(1).load_relaxed() != own,
                "the reader sleeps on with a lane record it wants unread"
            );
        });
    }

    /// A lane reader against a producer that rewrites the slot (queue depth
    /// 1) and the server that publishes each record's ring copy before it
    /// releases the slot: every record is delivered exactly once and in
    /// order, from the lane or from the ring, and a copy of a slot being
    /// rewritten is never accepted.
    #[test]
    fn a_lane_reader_gets_each_record_once_from_the_lane_or_the_ring() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(2);
        // Three threads: long executions.
        b.max_branches = 20_000;
        b.check(|| {
            const N: u64 = 2;
            let m = Arc::new(ModelRing::new(4, 2, 1));
            let mut lanes = LaneCore::new(&*m, 1);
            let m2 = m.clone();
            let producer = loom::thread::spawn(move || {
                for s in 0..N {
                    push_fresh(&m2, s, Lane::All, 1);
                }
            });
            let m3 = m.clone();
            let server = loom::thread::spawn(move || {
                let mut w = WriterCore::new(&*m3);
                let mut buf = rkyv::util::AlignedVec::new();
                let mut done = 0;
                while done < N {
                    match submit::pop(&*m3, 0, &mut buf) {
                        Popped::Record { seq } => {
                            // The ring copy first, then the slot.
                            w.publish_to(&*m3, &seq.to_le_bytes(), Wake::AllBut(0), 0)
                                .unwrap();
                            submit::release(&*m3, 0, seq + 1);
                            done += 1;
                        }
                        Popped::Empty => submit::wait(&*m3, std::iter::once(0), None),
                        Popped::Corrupt { why } => panic!("{why}"),
                    }
                }
            });
            let mut r = ReaderCore {
                client: 1,
                cursor: 0,
            };
            let mut got = Vec::new();
            let mut buf = rkyv::util::AlignedVec::new();
            // The ring first, then the lane, as the client's feed does: a
            // few rounds while the others run (bounded, as in the
            // two-reader model: a reader that finds nothing does not
            // spin), then to the end once they are done.
            // A lane found behind: the ring read next must hold the record
            // (the server published it before it released the slot).
            let mut behind_at: Option<usize> = None;
            let mut round = |got: &mut Vec<u64>| {
                while let Poll::Ready(p) = r.poll(&*m) {
                    let bytes = m.read_slot(p.slot);
                    r.finish(&*m, p);
                    let pos = u64::from_le_bytes(bytes[..8].try_into().unwrap());
                    if lanes.ring_copy(0, pos as u32).1 {
                        got.push(pos);
                    }
                }
                if let Some(k) = behind_at.take() {
                    assert!(got.len() > k, "behind, and the ring lacks the record");
                }
                loop {
                    match lanes.poll(&*m, 0, &mut buf) {
                        LanePoll::Record(pos) => {
                            assert_eq!(&buf[..], &pos.to_le_bytes(), "torn lane copy");
                            got.push(pos);
                        }
                        LanePoll::Corrupt(pos) => panic!("lane record {pos} corrupt"),
                        LanePoll::Behind => {
                            behind_at = Some(got.len());
                            break;
                        }
                        LanePoll::Empty => break,
                    }
                }
            };
            for _ in 0..3 {
                round(&mut got);
            }
            producer.join().unwrap();
            server.join().unwrap();
            // Everything is published now: one round reads the rest (a
            // lane found behind is read on in the next).
            round(&mut got);
            round(&mut got);
            assert_eq!(got, (0..N).collect::<Vec<_>>(), "once each, in order");
        });
    }

    /// Reads until the cursor passed `total` records; returns the
    /// sequences read and the records reported lost (records passed over
    /// as for others are neither).
    fn drain_to(m: &ModelRing, client: u32, total: u64) -> (Vec<u64>, u64) {
        let mut r = ReaderCore { client, cursor: 0 };
        let (mut read, mut lost) = (Vec::new(), 0u64);
        while r.cursor < total {
            match r.poll(m) {
                Poll::Ready(p) => {
                    assert_eq!(m.read_slot(p.slot), p.seq.to_le_bytes(), "torn read");
                    r.finish(m, p);
                    read.push(p.seq);
                }
                Poll::Lagged { missed } => lost += missed,
                Poll::Corrupt { seq, why } => panic!("record {seq} corrupt: {why}"),
                Poll::Empty => loom::thread::yield_now(),
            }
        }
        assert_eq!(m.client_lost(client).load_relaxed(), lost);
        (read, lost)
    }

    /// Reader 0 reads while the writer publishes into a ring of 2 one
    /// record per item of `plan`, each for the reader it names alone;
    /// returns what reader 0 read and the records it was told it lost.
    fn lapped(plan: &'static [u32]) -> (Vec<u64>, u64) {
        let m = Arc::new(ModelRing::new(2, 2, 1));
        let m2 = m.clone();
        let reader = loom::thread::spawn(move || drain_to(&m2, 0, plan.len() as u64));
        let mut w = WriterCore::new(&*m);
        for (s, c) in (0u64..).zip(plan) {
            w.publish_to(
                &*m,
                &s.to_le_bytes(),
                Wake::Only(std::slice::from_ref(c)),
                INTEREST_ALL,
            )
            .unwrap();
        }
        reader.join().unwrap()
    }

    /// RM-15: reader 0 reads while the writer publishes, into a ring of 2,
    /// three records for reader 1 alone and then one for reader 0. However
    /// the writer laps it, reader 0 reports no loss (none of the records it
    /// missed was for it: it passes over them) and reads the last record.
    /// Loom checks that the marks a lapped reader loads are those of every
    /// record it missed (the writer's Release stores before the index
    /// entry, the reader's Acquire loads after it).
    #[test]
    fn a_reader_lapped_by_records_for_others_passes_over_them() {
        bounded(|| {
            let (read, lost) = lapped(&[1, 1, 1, 0]);
            assert_eq!(lost, 0, "told of a loss of records for others");
            assert_eq!(read.last(), Some(&3), "the record for it read");
        });
    }

    /// RM-16: as RM-15 with a record for reader 0 first, then three for
    /// reader 1, then another for reader 0: reader 0 reads its first
    /// record or is told of a loss (lossless or told), and never counts
    /// more lost than it missed. A reader lapped over the first sees the
    /// second as its mark's `last`, so it must see the first as `prev`
    /// (loom fails this when the writer stores `last` before `prev`).
    #[test]
    fn a_reader_lapped_over_a_record_for_it_is_told() {
        bounded(|| {
            let (read, lost) = lapped(&[0, 1, 1, 1, 0]);
            assert!(read.contains(&0) || lost > 0, "record 0 lost silently");
            assert!(read.len() as u64 + lost <= 5);
            assert_eq!(read.last(), Some(&4));
        });
    }
}
