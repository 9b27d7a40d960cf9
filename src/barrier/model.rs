//! Loom model of the barrier's protocol: participants entering, one
//! timing out, the server applying a commit and closing the barrier when
//! a participant leaves (the server's steps run on a participant's thread:
//! two threads each). Run with
//! `RUSTFLAGS="--cfg loom" cargo test --release --lib barrier::model`.

use super::protocol::{
    applied, close, complete, enter, expire, wait, wait_applied, BarrierMemory, Entry,
};
use crate::sync::{Cell32, Cell64, ModelBytes};
use loom::sync::Arc;
use shm_layout::barrier::{outcome, OUTCOMES};
use std::time::Duration;

/// A barrier in loom memory, plus one data cell per rank standing for
/// what it committed (the server writes it before `applied`).
struct ModelBarrier {
    slots: u32,
    state: Cell64,
    done: Cell32,
    applied_seq: Cell32,
    appliers: Cell32,
    outcomes: Vec<Cell32>,
    sent: Vec<Cell64>,
    applied: Vec<Cell64>,
    entered: Vec<Cell32>,
    data: Vec<ModelBytes>,
}

impl ModelBarrier {
    fn new(slots: u32) -> Arc<ModelBarrier> {
        let n = slots as usize;
        Arc::new(ModelBarrier {
            slots,
            state: Cell64::new(0),
            done: Cell32::new(0),
            applied_seq: Cell32::new(0),
            appliers: Cell32::new(0),
            // Only the first few instances run in a model.
            outcomes: (0..4).map(|_| Cell32::new(0)).collect(),
            sent: (0..n).map(|_| Cell64::new(0)).collect(),
            applied: (0..n).map(|_| Cell64::new(0)).collect(),
            entered: (0..n).map(|_| Cell32::new(0)).collect(),
            data: (0..n).map(|_| ModelBytes::new()).collect(),
        })
    }
}

impl BarrierMemory for ModelBarrier {
    fn slots(&self) -> u32 {
        self.slots
    }
    fn state(&self) -> &Cell64 {
        &self.state
    }
    fn done(&self) -> &Cell32 {
        &self.done
    }
    fn applied_seq(&self) -> &Cell32 {
        &self.applied_seq
    }
    fn appliers(&self) -> &Cell32 {
        &self.appliers
    }
    fn outcome(&self, i: usize) -> &Cell32 {
        assert!(i < OUTCOMES);
        &self.outcomes[i % 4]
    }
    fn sent(&self, rank: u32) -> &Cell64 {
        &self.sent[rank as usize]
    }
    fn applied(&self, rank: u32) -> &Cell64 {
        &self.applied[rank as usize]
    }
    fn entered(&self, rank: u32) -> &Cell32 {
        &self.entered[rank as usize]
    }
}

/// Runs `f` under loom with at most `preemptions` preemptions. Waiting
/// is spinning on a loom futex word (each turn a branch), so the branch
/// limit is raised above loom's default; a lost wake-up still shows as an
/// unbounded spin and fails the model. Every model has two threads:
/// with three that spin, loom had not finished in 20 minutes here.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    b.check(f);
}

/// A blocking fence as the client runs it: enter, wait, then wait for the
/// participants' commits.
fn fence(m: &ModelBarrier, rank: u32, sent: u64) -> Option<u32> {
    let code = match enter(m, rank, sent) {
        Entry::Closed => return None,
        Entry::Last(g) => {
            assert!(wait_applied(m, None, &|| false, Duration::ZERO));
            complete(m, g, outcome::SUCCESS)
        }
        Entry::Waiting(g) => wait(m, g, None, &|| false, Duration::ZERO).expect("no give-up here"),
    };
    if code == outcome::SUCCESS {
        assert!(wait_applied(m, None, &|| false, Duration::ZERO));
    }
    Some(code)
}

/// Two participants; rank 0 committed before entering, and the server
/// applies that commit (on rank 1's thread, after rank 1 entered: two
/// threads keep the model small) while rank 0 may be waiting for it. Both
/// succeed, and rank 0's data is visible to both once their fence
/// returned (a lost wake-up of a commit waiter fails the model as a spin).
#[test]
fn a_fence_returns_after_every_participant_entered_and_its_commits_landed() {
    model(3, || {
        let m = ModelBarrier::new(2);
        let a = m.clone();
        let r0 = loom::thread::spawn(move || {
            let got = fence(&a, 0, 1);
            assert_eq!(a.data[0].read(), b"card", "rank 0's commit is in");
            got
        });
        let entry = enter(&*m, 1, 0);
        // The server, applying rank 0's commit.
        m.data[0].write(b"card");
        applied(&*m, 0, 1);
        let code = match entry {
            Entry::Last(g) => {
                // The last entrant waits for rank 0's commit before it
                // wakes rank 0.
                assert!(wait_applied(&*m, None, &|| false, Duration::ZERO));
                complete(&*m, g, outcome::SUCCESS)
            }
            Entry::Waiting(g) => wait(&*m, g, None, &|| false, Duration::ZERO).unwrap(),
            Entry::Closed => panic!("nobody closed it"),
        };
        assert_eq!(code, outcome::SUCCESS);
        assert!(wait_applied(&*m, None, &|| false, Duration::ZERO));
        assert_eq!(m.data[0].read(), b"card");
        assert_eq!(r0.join().unwrap(), Some(outcome::SUCCESS));
    });
}

/// Back to back fences stay separate instances: both participants see
/// two successes, in order, and the generation moved twice.
#[test]
fn back_to_back_fences_are_separate_instances() {
    model(3, || {
        let m = ModelBarrier::new(2);
        let a = m.clone();
        let r0 = loom::thread::spawn(move || [fence(&a, 0, 0), fence(&a, 0, 0)]);
        let mine = [fence(&m, 1, 0), fence(&m, 1, 0)];
        assert_eq!(mine, [Some(outcome::SUCCESS); 2]);
        assert_eq!(r0.join().unwrap(), [Some(outcome::SUCCESS); 2]);
        let (_, gen, count) = shm_layout::barrier::unpack(m.state.load_relaxed());
        assert_eq!((gen, count), (2, 0));
    });
}

/// Rank 0's timeout passes while rank 1 enters: either the fence
/// completed (both succeed) or it expired (both hear TIMEOUT: rank 1 was
/// waiting in the expired instance, or it opened a new one alone, which
/// it then expires too). Never a hang, never two outcomes for one
/// instance.
#[test]
fn a_timeout_racing_the_last_entry_gives_one_outcome() {
    model(3, || {
        let m = ModelBarrier::new(2);
        let a = m.clone();
        let r0 = loom::thread::spawn(move || match enter(&*a, 0, 0) {
            Entry::Last(g) => complete(&*a, g, outcome::SUCCESS),
            Entry::Waiting(g) => {
                if expire(&*a, g) {
                    outcome::TIMEOUT
                } else {
                    wait(&*a, g, None, &|| false, Duration::ZERO).unwrap()
                }
            }
            Entry::Closed => panic!("nobody closed it"),
        });
        let mine = match enter(&*m, 1, 0) {
            Entry::Last(g) => complete(&*m, g, outcome::SUCCESS),
            Entry::Waiting(0) => wait(&*m, 0, None, &|| false, Duration::ZERO).unwrap(),
            Entry::Waiting(g) => {
                // Rank 0 expired instance 0: this is a new one, alone.
                assert!(expire(&*m, g));
                outcome::TIMEOUT
            }
            Entry::Closed => panic!("nobody closed it"),
        };
        let theirs = r0.join().unwrap();
        assert_eq!(theirs, mine);
    });
}

/// Rank 2 of three leaves without entering: the server closes the
/// barrier (on rank 1's thread, after rank 1 entered) while rank 0
/// enters. Rank 0 either fails with LOST or is sent to the server's fence;
/// rank 1's open instance fails; none succeeds, none hangs.
#[test]
fn a_participant_leaving_fails_the_open_instance_and_closes_the_barrier() {
    model(3, || {
        let m = ModelBarrier::new(3);
        let a = m.clone();
        let r0 = loom::thread::spawn(move || fence(&a, 0, 0));
        let entry = enter(&*m, 1, 0);
        close(&*m, Some(2));
        let mine = match entry {
            Entry::Waiting(g) => wait(&*m, g, None, &|| false, Duration::ZERO),
            other => panic!("rank 1 cannot be {other:?}: nobody closed it, three slots"),
        };
        assert_eq!(mine, Some(outcome::LOST));
        let theirs = r0.join().unwrap();
        assert!(matches!(theirs, None | Some(outcome::LOST)), "{theirs:?}");
        assert!(matches!(enter(&*m, 0, 0), Entry::Closed));
    });
}

/// Rank 0 leaves after entering while the last entrant has yet to end
/// the instance: the server may take the missing outcome for a dead last
/// entrant's and record LOST. Whichever is first, everyone in the
/// instance gets the same outcome, and nobody hangs.
#[test]
fn the_last_entrant_and_the_server_agree_on_one_outcome() {
    model(3, || {
        let m = ModelBarrier::new(2);
        let a = m.clone();
        let r0 = loom::thread::spawn(move || fence(&a, 0, 0));
        let entry = enter(&*m, 1, 0);
        // The server hears that rank 0 left (it entered, or is entering).
        close(&*m, Some(0));
        let mine = match entry {
            Entry::Last(g) => complete(&*m, g, outcome::SUCCESS),
            Entry::Waiting(g) => wait(&*m, g, None, &|| false, Duration::ZERO).unwrap(),
            Entry::Closed => panic!("nobody closed it before rank 1 entered"),
        };
        let theirs = r0.join().unwrap();
        match theirs {
            Some(c) => assert_eq!(c, mine, "one outcome per instance"),
            // Rank 0 found the barrier closed: rank 1's instance failed.
            None => assert_eq!(mine, outcome::LOST),
        }
    });
}
