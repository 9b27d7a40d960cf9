//! The server's part in the fence barrier (`crate::barrier`): a namespace
//! whose every rank runs on this node gets one at registration; the server
//! then only accounts for what a fence over it must respect — each
//! commit applied (so a fence returns after its participants' commits are
//! in the store) and each participant that left (so the open instance
//! fails with `PMIX_ERR_LOST_CONNECTION`, and later fences take the
//! server's path, whose rules decide).

use super::{Ns, Shared};
use crate::barrier::{self, Area, BarrierMemory};
use crate::types::Rank;

/// The barrier for a namespace of `size` ranks whose `local_peers`
/// (sorted) are all of them, or `None` (some run elsewhere, or the size is
/// unknown: its fences go through the server and the host).
pub(super) fn create(
    shared: &Shared,
    base: &str,
    size: Option<u32>,
    local_peers: &[u32],
) -> Option<Area> {
    let n = size.filter(|n| *n > 0)?;
    let whole = local_peers.len() == n as usize && local_peers.iter().copied().eq(0..n);
    if !whole {
        return None;
    }
    match Area::create(base, n) {
        Ok(a) => Some(a),
        Err(e) => {
            // Its fences take the server's path: slower, as correct.
            shared.say(&format!(
                "no fence barrier in shared memory for {base}: {e}"
            ));
            None
        }
    }
}

/// The server applied `rank`'s commit (in `ns`, under the namespaces'
/// lock the commit took): counted in its slot, and a process waiting for
/// it woken.
pub(super) fn committed(ns: &Ns, rank: Rank) {
    if let Some(a) = ns.barrier.as_ref().filter(|a| rank.0 < a.slots()) {
        // The server is the slot's only writer.
        let n = a.applied(rank.0).load_relaxed() + 1;
        barrier::applied(a, rank.0, n);
    }
}

/// Closes the barrier of every namespace one of whose ranks left for
/// good (an open instance that rank did not enter fails). Called
/// whenever a process may have left.
pub(super) fn settle(shared: &Shared) {
    let m = shared.nspaces();
    for ns in m.values() {
        let Some(a) = ns.barrier.as_ref() else {
            continue;
        };
        if barrier::is_closed(a) {
            continue;
        }
        if let Some(r) = (0..a.slots()).find(|r| ns.has_left(Rank(*r))) {
            barrier::close(a, Some(r));
        }
    }
}

/// A client registered beyond the barrier's ranks: the server's fence
/// counts it, so the barrier takes no more fences.
pub(super) fn registered(a: &Area, rank: Rank) {
    if rank.0 >= a.slots() {
        barrier::close(a, None);
    }
}

/// One line for `inspect`: participants, state, the open instance.
pub(super) fn describe(a: &Area) -> String {
    let (closed, gen, count) = shm_layout::barrier::unpack(a.state().load_acquire());
    format!(
        "{} ranks, {} B of shared memory, {}, {gen} fence(s) ended, {count} process(es) in the open one",
        a.slots(),
        a.footprint(),
        if closed { "closed (a rank left: fences go through the server)" } else { "open" }
    )
}
