//! The futex floor: the raw wake-up between two processes that the
//! latency rows of the table programs are read against.

use super::block::Ctl;
use super::children::Kids;
use super::wait::{busy_wait, mono_ns, sleep_until, spin_until};
use super::{GAP_ASLEEP, GAP_SPINNING, PING_STOP};
use std::time::Duration;

/// The raw floor: this process and one child exchanging a shared word in
/// the control block, either asleep in the futex (the floor of the
/// sleeping rows) or busy-polling it (what a cache-line transfer between
/// two processes costs here: the floor of the spinning rows).
pub struct FloorRig {
    ctl: Ctl,
    kids: Kids,
    next: u32,
    spinning: bool,
}

impl FloorRig {
    /// Spawns a child that sleeps in `futex_wait` and waits until it is up.
    pub fn new() -> FloorRig {
        FloorRig::start(false)
    }

    /// Spawns a child that busy-polls the word (no syscalls).
    pub fn spinning() -> FloorRig {
        FloorRig::start(true)
    }

    fn start(spinning: bool) -> FloorRig {
        let ctl = Ctl::create();
        let role = if spinning { "floor-spin" } else { "floor" };
        let kids = Kids::spawn(role, &ctl, &[], 1);
        busy_wait(Duration::from_millis(1));
        FloorRig {
            ctl,
            kids,
            next: 0,
            spinning,
        }
    }

    /// One exchange after both processes slept for `idle` (the parent
    /// in `nanosleep`, the child in the futex): one-way ns. On a VM a
    /// vCPU idle that long may be descheduled by the host, and its
    /// wake-up costs more: the floor of rows that let clients idle.
    pub fn once_after_idle(&mut self, idle: Duration) -> u64 {
        std::thread::sleep(idle);
        self.once().0
    }

    /// One exchange: (one-way = child's stamp − send, round trip / 2), in
    /// ns. Futex rig: both sides sleep in the futex, then a pause so the
    /// child is asleep again. Spinning rig: store and spin, no syscall.
    pub fn once(&mut self) -> (u64, u64) {
        self.next = self.next.wrapping_add(1);
        if self.next == PING_STOP || self.next == 0 {
            self.next = 1;
        }
        let t0 = mono_ns();
        self.ctl.ping().store_release(self.next);
        if self.spinning {
            spin_until(self.ctl.pong(), self.next, "the spinning floor child");
        } else {
            self.ctl.ping().wake_all();
            sleep_until(self.ctl.pong(), self.next, "the floor child");
        }
        let t1 = mono_ns();
        let woke = self.ctl.floor_stamp().load_relaxed();
        busy_wait(if self.spinning {
            GAP_SPINNING
        } else {
            GAP_ASLEEP
        });
        (woke.saturating_sub(t0), (t1 - t0) / 2)
    }
}

impl Default for FloorRig {
    fn default() -> Self {
        FloorRig::new()
    }
}

impl Drop for FloorRig {
    fn drop(&mut self) {
        self.ctl.ping().store_release(PING_STOP);
        if !self.spinning {
            self.ctl.ping().wake_all();
        }
        self.kids.finish(Duration::from_secs(2));
    }
}
