//! Both ends of the mapped submission queues (client -> server): a
//! [`Submitter`] per client, one [`Collector`] in the server.

use super::Region;
use crate::ring::submit::{self, Popped, SubmitError};
use crate::sync::Cell32;
use shm_layout::record::{ArchivedEventRecord, EventRecord};
use std::time::Duration;

/// A client's end of its submission queue (the client-table entry it got).
pub struct Submitter {
    region: Region,
    client: u32,
    scratch: rkyv::util::AlignedVec,
}

impl Submitter {
    /// The producer of queue `client` (the entry the server assigned).
    pub fn new(region: Region, client: u32) -> Submitter {
        assert!(
            client < region.geometry().client_capacity,
            "client {client} out of range"
        );
        Submitter {
            region,
            client,
            scratch: rkyv::util::AlignedVec::with_capacity(1024),
        }
    }

    /// Queues encoded bytes; waits for space at most `timeout` (`None`:
    /// forever). Returns the record's position in this queue.
    pub fn submit_bytes(
        &mut self,
        bytes: &[u8],
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        submit::push(&self.region, self.client, bytes, timeout)
    }

    /// Encodes and queues an event record.
    pub fn submit(
        &mut self,
        rec: &EventRecord,
        timeout: Option<Duration>,
    ) -> Result<u64, SubmitError> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let buf = rkyv::api::high::to_bytes_in::<_, rkyv::rancor::Error>(rec, buf)
            .expect("encoding into a growable buffer cannot fail");
        let r = submit::push(&self.region, self.client, &buf, timeout);
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
        use shm_layout::record::flags;
        if !self.valid {
            return None;
        }
        // SAFETY: `valid` is set only when `pop` validated exactly these
        // bytes with `rkyv::access`; the buffer is private to the collector
        // and unchanged since (every other outcome of `pop` clears `valid`).
        let rec = unsafe { rkyv::access_unchecked_mut::<ArchivedEventRecord>(&mut self.buf) };
        munge!(let ArchivedEventRecord { flags: mut bits, source_seq: mut seq, timestamp_ns: mut ts, .. } = rec);
        *bits = (bits.to_native() | flags::RELAYED).into();
        *seq = source_seq.into();
        *ts = timestamp_ns.into();
        Some(&self.buf)
    }

    /// The record the last [`Collector::pop`] returned, if it returned one.
    pub fn last(&self) -> Option<&ArchivedEventRecord> {
        // SAFETY: as in `relay_last`: validated by `pop`, unchanged since.
        self.valid
            .then(|| unsafe { rkyv::access_unchecked::<ArchivedEventRecord>(&self.buf) })
    }

    /// Takes the next record from queue `client`.
    pub fn pop(&mut self, client: u32) -> Collected<'_> {
        self.valid = false;
        match submit::pop(&self.region, client, &mut self.buf) {
            Popped::Empty => Collected::Empty,
            Popped::Corrupt { why } => Collected::Corrupt {
                client,
                why: why.to_owned(),
            },
            Popped::Record { .. } => {
                match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&self.buf) {
                    Ok(rec) => {
                        self.valid = true;
                        Collected::Record { client, rec }
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
        n
    }
}
