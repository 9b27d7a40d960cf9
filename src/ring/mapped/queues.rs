//! Both ends of the mapped submission queues (client -> server): a
//! [`Submitter`] per client, one [`Collector`] in the server.

use super::Region;
use crate::ring::lane::{Lane, PeerIndex};
use crate::ring::submit::{self, Popped, SubmitError};
use crate::sync::Cell32;
use shm_layout::record::{flags, ArchivedEventRecord, EventRecord};
use std::time::Duration;

/// A client's end of its submission queue (the client-table entry it got).
pub struct Submitter {
    region: Region,
    client: u32,
    scratch: rkyv::util::AlignedVec,
    /// Where this client's custom ranges' targets were found.
    peers: PeerIndex,
}

impl Submitter {
    /// The producer of queue `client` (the entry the server assigned).
    pub fn new(region: Region, client: u32) -> Submitter {
        assert!(
            client < region.geometry().client_capacity,
            "client {client} out of range"
        );
        // A record names its lane in 16 bits; a validated geometry has
        // fewer data slots, so fewer entries, than that.
        assert!(
            client <= u16::MAX as u32,
            "client {client} beyond a lane's 16 bits"
        );
        Submitter {
            region,
            client,
            scratch: rkyv::util::AlignedVec::with_capacity(1024),
            peers: PeerIndex::default(),
        }
    }

    /// Queues encoded bytes; waits for space at most `timeout` (`None`:
    /// forever). Returns the record's position in this queue.
    pub fn submit_bytes(
        &mut self,
        bytes: &[u8],
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        submit::push(
            &self.region,
            self.client,
            bytes,
            timeout,
            Lane::No,
            0,
            &mut self.peers,
        )
    }

    /// Encodes and queues an event record for the server only (as it is:
    /// a `lane_pos` it carries is the caller's, and the server checks it).
    pub fn submit(
        &mut self,
        rec: &EventRecord,
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(rec, buf)
            .expect("encoding into a growable buffer cannot fail");
        let r = submit::push(
            &self.region,
            self.client,
            &buf,
            timeout,
            Lane::No,
            0,
            &mut self.peers,
        );
        self.scratch = buf;
        r
    }

    /// Encodes and queues an event record; `lane`: whether it is also for
    /// this namespace's other clients, who read it from the queue (its
    /// `LANED` flag, `lane_entry` and `lane_pos` are set here), and which:
    /// the sleeping ones it is for that want its code are woken now,
    /// before the server.
    pub fn submit_to(
        &mut self,
        rec: &mut EventRecord,
        timeout: Option<Duration>,
        lane: Lane<'_>,
    ) -> Result<u64, SubmitError> {
        use submit::SubmitMemory;
        // Only this producer writes `produced`: the push below takes this
        // position (the caller serialises its submissions).
        let p = self.region.produced(self.client).load_relaxed();
        if lane != Lane::No {
            rec.flags |= flags::LANED;
            // Fits: a segment has fewer than 2^16 entries (`new`).
            (rec.lane_entry, rec.lane_pos) = (self.client as u16, p as u32);
        } else {
            rec.flags &= !flags::LANED;
            (rec.lane_entry, rec.lane_pos) = (0, 0);
        }
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(&*rec, buf)
            .expect("encoding into a growable buffer cannot fail");
        let topic = shm_layout::interest_bit(rec.code);
        let r = submit::push(
            &self.region,
            self.client,
            &buf,
            timeout,
            lane,
            topic,
            &mut self.peers,
        );
        self.scratch = buf;
        r
    }
}

/// The server's end of every submission queue.
pub struct Collector {
    region: Region,
    buf: rkyv::util::AlignedVec,
    /// `buf` holds the record the last `pop` validated.
    valid: bool,
    /// The queue and position of the last record popped, whose slot is
    /// released only by [`Collector::finish`] (or the next pop): a lane
    /// record's slot stays until its ring copy is published.
    held: Option<(u32, u64)>,
}

/// One record taken from a submission queue.
#[derive(Debug)]
pub enum Collected<'a> {
    /// Every queue is empty.
    Empty,
    /// A validated record (a copy: the producer cannot change it any more).
    Record {
        /// The queue (client-table entry) it came from.
        client: u32,
        /// The record.
        rec: &'a ArchivedEventRecord,
    },
    /// Queue `client` held bytes that are not a valid record, or corrupt
    /// counters; skipped.
    Corrupt {
        /// The queue.
        client: u32,
        /// What was wrong.
        why: String,
    },
}

impl Collector {
    /// The consumer of every queue of `region`.
    pub fn new(region: Region) -> Collector {
        Collector {
            region,
            buf: rkyv::util::AlignedVec::with_capacity(1024),
            valid: false,
            held: None,
        }
    }

    /// The record the last [`Collector::pop`] returned, with its sequence
    /// number and timestamp set and [`flags::RELAYED`] added, in its own
    /// bytes: what the server publishes when it relays the record as it
    /// came. `None` unless the last pop returned a record.
    ///
    /// [`flags::RELAYED`]: shm_layout::record::flags::RELAYED
    pub fn relay_last(&mut self, source_seq: u64, timestamp_ns: u64) -> Option<&[u8]> {
        use rkyv::munge::munge;
        if !self.valid {
            return None;
        }
        // SAFETY: `valid` is set only when `pop` validated exactly these
        // bytes with `rkyv::access`; the buffer is private to the collector
        // and unchanged since (every other outcome of `pop` clears `valid`).
        let rec = unsafe { rkyv::access_unchecked_mut::<ArchivedEventRecord>(&mut self.buf) };
        munge!(let ArchivedEventRecord { flags: mut bits, source_seq: mut seq, timestamp_ns: mut ts, .. } = rec);
        *bits = (bits.to_native() | flags::RELAYED).into();
        *seq = (source_seq as u32).into();
        *ts = timestamp_ns.into();
        Some(&self.buf)
    }

    /// The record the last [`Collector::pop`] returned, if it returned one.
    pub fn last(&self) -> Option<&ArchivedEventRecord> {
        // SAFETY: as in `relay_last`: validated by `pop`, unchanged since.
        self.valid
            .then(|| unsafe { rkyv::access_unchecked::<ArchivedEventRecord>(&self.buf) })
    }

    /// The lane of the last record popped: `Some((entry, position))` when
    /// its submitter meant it for its namespace's peers too (they read it
    /// from the queue; its ring copy names this position).
    pub fn lane(&self) -> Option<(u32, u64)> {
        let rec = self.last()?;
        let (c, pos) = self.held?;
        (rec.flags.to_native() & flags::LANED != 0).then_some((c, pos))
    }

    /// Releases the slot of the last record popped, once it is routed.
    pub fn finish(&mut self) {
        if let Some((c, pos)) = self.held.take() {
            submit::release(&self.region, c, pos + 1);
        }
    }

    /// Takes the next record from queue `client` (releasing the slot of
    /// the record before, if [`Collector::finish`] did not).
    pub fn pop(&mut self, client: u32) -> Collected<'_> {
        self.finish();
        self.valid = false;
        match submit::pop(&self.region, client, &mut self.buf) {
            Popped::Empty => Collected::Empty,
            Popped::Corrupt { why } => Collected::Corrupt {
                client,
                why: why.to_owned(),
            },
            Popped::Record { seq } => {
                self.held = Some((client, seq));
                match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&self.buf) {
                    Ok(rec) => {
                        let laned = rec.flags.to_native() & flags::LANED != 0;
                        let (entry, pos) = (rec.lane_entry.to_native(), rec.lane_pos.to_native());
                        if laned && (entry as u32 != client || pos != seq as u32) {
                            // Not where it says: no lane record (its peers
                            // could not have read it there).
                            // SAFETY: `rkyv::access` validated these bytes
                            // just above, and they are private to us.
                            unsafe { crate::ring::lane::clear_lane(&mut self.buf) };
                        }
                        self.valid = true;
                        // `clear_lane` only rewrote fixed-size integers of
                        // the record just validated: still valid.
                        match self.last() {
                            Some(rec) => Collected::Record { client, rec },
                            None => Collected::Empty,
                        }
                    }
                    Err(e) => Collected::Corrupt {
                        client,
                        why: format!("record fails validation: {e}"),
                    },
                }
            }
        }
    }

    /// Sleeps until some queue in `clients` has a record (or `timeout`).
    pub fn wait(&self, clients: impl Iterator<Item = u32>, timeout: Option<Duration>) {
        submit::wait(&self.region, clients, timeout);
    }

    /// First half of a sleep the caller performs itself (e.g. through an
    /// io_uring futex wait): announces the sleep and re-checks `clients`.
    /// `Some(bell)`: sleep while [`Collector::bell`] holds `bell`. `None`:
    /// a queue has a record.
    pub fn prepare_sleep(&self, clients: impl Iterator<Item = u32>) -> Option<u32> {
        submit::prepare_sleep(&self.region, clients)
    }

    /// Whether queue `client` holds a record not taken yet (what a round
    /// over every queue asks first: most are empty).
    pub fn holds(&self, client: u32) -> bool {
        submit::holds(&self.region, client)
    }

    /// The segment-wide futex word producers ring.
    pub fn bell(&self) -> &Cell32 {
        use submit::SubmitMemory;
        self.region.submit_bell()
    }

    /// Drops whatever queue `client` still holds (its producer is gone) and
    /// wakes a producer waiting for space, so the entry can be reused.
    pub fn discard(&mut self, client: u32) -> u64 {
        let mut n = 0;
        while !matches!(self.pop(client), Collected::Empty) {
            n += 1;
        }
        self.finish();
        n
    }
}
