//! The ring rigs: a segment with its writer in this process and reader
//! processes ([`RingRig`]), or writer and reader both here ([`Local`]).

use super::block::Ctl;
use super::children::Kids;
use super::records::{small, typical, Encoded};
use super::wait::{busy_wait, cores, mono_ns, sleep_until, spin_until};
use super::{
    ACK, DEADLINE, FLOW_BATCH, GAP_ASLEEP, GAP_SPINNING, MAX_READERS, READERS_ENV, SEGMENT_ENV,
    SPIN_BUDGET, STOP_CODE,
};
use fastpmix::internals::ring::{EventRecord, Next, RingReader, RingWriter, Segment, Start};
use shm_layout::client_state;
use shm_layout::Geometry;
use std::hint::spin_loop;
use std::thread;
use std::time::{Duration, Instant};

/// How the reader processes of a [`RingRig`] wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Asleep in the futex before each publish (never spin).
    Sleeping,
    /// Busy-polling `try_next`.
    Spinning,
}

/// A ring segment, its writer (this process) and `n` reader processes.
pub struct RingRig {
    seg: Segment,
    writer: RingWriter,
    ctl: Ctl,
    kids: Kids,
    n: usize,
    mode: Mode,
    done: u32,
    typical: Encoded,
    small: Encoded,
    typical_rec: EventRecord,
    /// Samples after which not every reader was seen asleep within 1 s.
    pub unsettled: u64,
    /// Times the throughput writer had to wait for the reader (it was a
    /// ring minus two batches ahead).
    pub flow_waits: u64,
}

impl RingRig {
    /// A default-geometry segment (512 slots of 1 KiB) with `n` readers.
    pub fn new(n: usize, mode: Mode) -> RingRig {
        assert!((1..=MAX_READERS).contains(&n));
        let g = Geometry {
            client_capacity: (n as u32 + 1).max(4),
            ..Geometry::default()
        };
        let seg = Segment::create(g).expect("create ring segment");
        let writer = RingWriter::new(seg.region().clone());
        let ctl = Ctl::create();
        let role = match mode {
            Mode::Sleeping => "reader-sleep",
            Mode::Spinning => "reader-spin",
        };
        let extra = [
            (SEGMENT_ENV, seg.name().to_owned()),
            (READERS_ENV, n.to_string()),
        ];
        let kids = Kids::spawn(role, &ctl, &extra, n);
        let mut typical_rec = typical(0);
        typical_rec.flags |= ACK;
        let mut rig = RingRig {
            seg,
            writer,
            ctl,
            kids,
            n,
            mode,
            done: 0,
            typical: Encoded::new(&typical(0), ACK),
            small: Encoded::new(&small(0), ACK),
            typical_rec,
            unsettled: 0,
            flow_waits: 0,
        };
        rig.settle();
        rig
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        self.seg.name()
    }

    /// Waits until the readers are ready for the next send: asleep in the
    /// futex (sleeping mode) or back to polling (spinning mode).
    fn settle(&mut self) {
        if self.mode == Mode::Spinning {
            busy_wait(GAP_SPINNING);
            return;
        }
        let t = Instant::now();
        loop {
            let st = self.seg.region().state();
            let asleep = st
                .clients
                .iter()
                .filter(|c| c.state == client_state::ACTIVE && c.waiting)
                .count();
            if asleep >= self.n {
                break;
            }
            if t.elapsed() > Duration::from_secs(1) {
                self.unsettled += 1;
                break;
            }
            if self.n + 1 > cores() {
                thread::sleep(Duration::from_micros(20));
            } else {
                thread::yield_now();
            }
        }
        busy_wait(GAP_ASLEEP);
    }

    fn wait_done(&self) {
        match self.mode {
            Mode::Sleeping => sleep_until(self.ctl.done(), self.done, "reader children"),
            Mode::Spinning => spin_until(self.ctl.done(), self.done, "reader children"),
        }
    }

    /// Publishes one typical record and returns the latency (ns) of the
    /// last reader to hold it. `encode`: rkyv encoding is included.
    pub fn one_way(&mut self, encode: bool) -> u64 {
        self.done = self.done.wrapping_add(self.n as u32);
        if encode {
            self.typical_rec.timestamp_ns = mono_ns();
            self.writer
                .publish(&self.typical_rec)
                .expect("publish typical");
        } else {
            let t0 = mono_ns();
            self.typical.stamp(t0);
            self.writer
                .publish_bytes(&self.typical.bytes)
                .expect("publish typical bytes");
        }
        self.collect_one_way()
    }

    /// As [`RingRig::one_way`] with pre-encoded bytes of a small record.
    pub fn one_way_small(&mut self) -> u64 {
        self.done = self.done.wrapping_add(self.n as u32);
        let t0 = mono_ns();
        self.small.stamp(t0);
        self.writer
            .publish_bytes(&self.small.bytes)
            .expect("publish small bytes");
        self.collect_one_way()
    }

    fn collect_one_way(&mut self) -> u64 {
        self.wait_done();
        let last = (0..self.n)
            .map(|i| self.ctl.stamp(i).load_relaxed())
            .max()
            .unwrap_or(0);
        self.settle();
        last
    }

    /// Publishes `k` records (`body` for all but the last, `last` last),
    /// never more than a ring ahead of the slowest reader. Returns the ns
    /// from the first publish until the reader held the last record.
    pub fn throughput(&mut self, k: u64, body: &[u8], last: &mut Encoded) -> u64 {
        assert_eq!(self.n, 1, "throughput runs with one reader");
        let cap = self.seg.region().geometry().slot_count as u64;
        let room = cap.saturating_sub(2 * FLOW_BATCH).max(1);
        self.done = self.done.wrapping_add(1);
        let t0 = mono_ns();
        last.stamp(t0);
        for i in 0..k.saturating_sub(1) {
            if i % FLOW_BATCH == 0 {
                self.flow_control(room);
            }
            self.writer.publish_bytes(body).expect("publish body");
        }
        self.flow_control(room);
        self.writer
            .publish_bytes(&last.bytes)
            .expect("publish last");
        self.wait_done();
        let el = self.ctl.stamp(0).load_relaxed();
        self.settle();
        el
    }

    /// Spins until the slowest active reader is at most `room` behind.
    fn flow_control(&mut self, room: u64) {
        let head = self.writer.published();
        let t = Instant::now();
        let mut i = 0u64;
        loop {
            let st = self.seg.region().state();
            let slowest = st
                .clients
                .iter()
                .filter(|c| c.state == client_state::ACTIVE)
                .map(|c| c.cursor)
                .min()
                .unwrap_or(head);
            if head.saturating_sub(slowest) <= room {
                return;
            }
            if i == 0 {
                self.flow_waits += 1;
            }
            i += 1;
            if t.elapsed() >= SPIN_BUDGET {
                assert!(t.elapsed() < DEADLINE, "reader stopped consuming");
                thread::yield_now();
            } else {
                // Do not keep stealing the reader's cursor line.
                for _ in 0..128 {
                    spin_loop();
                }
            }
        }
    }

    /// Records lost to lag and corrupt records, as the readers reported.
    pub fn lost_and_errors(&self) -> (u64, u64) {
        (self.ctl.lost(), self.ctl.errors())
    }
}

impl Drop for RingRig {
    fn drop(&mut self) {
        let mut stop = small(0);
        stop.code = STOP_CODE;
        let _ = self.writer.publish(&stop);
        self.kids.finish(Duration::from_secs(2));
    }
}

/// An in-process writer + reader on a fresh segment with no sleeper, for
/// publish and pickup costs.
pub struct Local {
    /// The segment (unlinked on drop).
    pub seg: Segment,
    /// Its writer.
    pub writer: RingWriter,
    /// A reader in this process (never waits).
    pub reader: RingReader,
}

impl Local {
    /// Creates the segment and attaches the reader at the head.
    pub fn new() -> Local {
        let seg = Segment::create(Geometry::default()).expect("create segment");
        let writer = RingWriter::new(seg.region().clone());
        let reader = RingReader::attach(seg.region().clone(), Start::Head).expect("attach");
        Local {
            seg,
            writer,
            reader,
        }
    }

    /// Publishes `k` ≤ 256 copies of `bytes` (untimed), then times `k`
    /// `try_next` + drop; returns the total.
    pub fn pickup(&mut self, bytes: &[u8], k: u64) -> Duration {
        assert!(k <= 256);
        for _ in 0..k {
            self.writer.publish_bytes(bytes).expect("publish");
        }
        let t = Instant::now();
        for _ in 0..k {
            match self.reader.try_next() {
                Next::Record(r) => {
                    std::hint::black_box(r.seq());
                }
                other => panic!("pickup found {other:?}"),
            }
        }
        t.elapsed()
    }
}

impl Default for Local {
    fn default() -> Self {
        Local::new()
    }
}
