//! Two nodes on one machine: a job of four ranks across two fastpmix
//! servers in two processes, each with its own shared memory and its own
//! client processes, joined by a relay host that carries the servers'
//! `fence_nb` and `direct_modex` traffic over a Unix socket
//! (`tests/relay/mod.rs`). Node A runs ranks 0 and 1, node B ranks 2 and
//! 3. The server side is `src/server/fence.rs` and
//! `src/server/exchange.rs`; the clients are this binary re-executed
//! (`tests/procs`).
//!
//! "Not complete yet" is never a grace period: `FENCE_CHECK` runs a fence
//! over the client alone, answered after everything it sent before; a
//! fence or Get the server had answered by then has had its callback run.
//! A relay's counters (`STATS`) are read after such a probe, so the
//! upcalls they count have happened. No duration is asserted; `HANG` only
//! turns a hang into a failure.

mod procs;
mod relay;

use fastpmix::Status;
use procs::{ClientProc, ROLE_ENV};
use relay::{NodeSpec, TwoNodes, RELAY};

const CHILD: &str = "child_client";
const NODE_CHILD: &str = "child_node";
const NOT_FOUND: i32 = Status::ERR_NOT_FOUND.0;
const UNREACH: i32 = Status::ERR_UNREACH.0;

#[test]
fn child_client() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("client") {
        procs::client_main();
    }
}

#[test]
fn child_node() {
    if std::env::var(ROLE_ENV).as_deref() == Ok("server") {
        relay::node_main();
    }
}

/// Both nodes with an ordinary relay, and the four clients.
fn two(ns: &str) -> TwoNodes {
    TwoNodes::start(NODE_CHILD, CHILD, ns, &[RELAY, RELAY])
}

/// Sends `cmd`, returns the rest of the line after `reply `.
fn ask(c: &mut ClientProc, cmd: &str, reply: &str) -> String {
    c.send(cmd);
    let l = c.expect(&format!("{reply} "));
    l[reply.len() + 1..].to_owned()
}

fn put(c: &mut ClientProc, scope: u8, kv: &str) {
    assert_eq!(ask(c, &format!("PUT {scope} {kv}"), "PUT_RESULT"), "0");
}

fn commit(c: &mut ClientProc) {
    assert_eq!(ask(c, "COMMIT", "COMMIT_RESULT"), "0");
}

/// `GETX` → "<status> <value>".
fn get(c: &mut ClientProc, args: &str) -> String {
    ask(c, &format!("GETX {args}"), "GETX_RESULT")
}

/// `GETX_NB` started; its callback's line comes later.
fn get_nb(c: &mut ClientProc, tag: &str, args: &str) {
    let started = ask(
        c,
        &format!("GETX_NB {tag} {args}"),
        &format!("GETX_NB_STARTED {tag}"),
    );
    assert_eq!(started, "0");
}

fn get_cb(c: &mut ClientProc, tag: &str) -> String {
    let l = c.expect(&format!("GETX_CB {tag} "));
    l[format!("GETX_CB {tag} ").len()..].to_owned()
}

/// `FENCE_NB <tag> <args>` started.
fn fence_nb(c: &mut ClientProc, tag: &str, args: &str) {
    let started = ask(
        c,
        &format!("FENCE_NB {tag} {args}"),
        &format!("FENCE_NB_STARTED {tag}"),
    );
    assert_eq!(started, "0", "{}", c.proc);
}

/// The status fence `tag`'s callback got (waits for it).
fn fence_cb(c: &mut ClientProc, tag: &str) -> i32 {
    let l = c.expect(&format!("FENCE_CB {tag} "));
    l.split(' ').nth(2).unwrap().parse().unwrap()
}

/// Every client enters fence `tag`; each callback's status, by rank.
fn everyone(c: &mut [ClientProc], tag: &str, args: &str) -> Vec<i32> {
    for x in c.iter_mut() {
        fence_nb(x, tag, args);
    }
    c.iter_mut().map(|x| fence_cb(x, tag)).collect()
}

/// Whether fence or Get `tag` is still unanswered once the server handled
/// everything `c` sent so far.
fn pending(c: &mut ClientProc, tag: &str) -> bool {
    ask(
        c,
        &format!("FENCE_CHECK {tag}"),
        &format!("FENCE_STATE {tag}"),
    ) == "pending"
}

/// The node of `rank`.
fn node_of(rank: usize) -> usize {
    rank / 2
}

/// Every rank puts a GLOBAL, a REMOTE and a LOCAL item naming itself,
/// and commits.
fn put_three_scopes(t: &mut TwoNodes) {
    for (r, x) in t.clients.iter_mut().enumerate() {
        put(x, 3, &format!("g=s:global-{r}"));
        put(x, 2, &format!("r=s:remote-{r}"));
        put(x, 1, &format!("l=s:local-{r}"));
        commit(x);
    }
}

/// XNODE-1: a fence over the whole job waits for the slower node. Node
/// A's clients entered, its server called the host once, and the fence
/// stays pending while node B's clients come one by one; the last one
/// completes it for all four. Node B's processes name the participants
/// otherwise than node A's: the servers name the fence alike to their
/// hosts all the same.
#[test]
fn a_fence_across_nodes_waits_for_the_slower_node() {
    let mut t = two("xn-slow");
    for x in &mut t.clients[..2] {
        fence_nb(x, "f", "@*");
    }
    for x in &mut t.clients[..2] {
        assert!(pending(x, "f"), "{} done before node B entered", x.proc);
    }
    assert_eq!(t.stats(0).fence_nb, 1, "node A went to its host once");
    assert_eq!(t.stats(1).fence_nb, 0);
    // Named otherwise on node B: the same fence (both servers name it
    // alike to their hosts, which match the nodes' parts by that name).
    fence_nb(&mut t.clients[2], "f", "@3,@1,@2,@0");
    assert!(pending(&mut t.clients[2], "f"), "rank 3 has not entered");
    assert!(pending(&mut t.clients[0], "f"));
    assert_eq!(t.stats(1).fence_nb, 0, "node B waits for its own ranks");
    fence_nb(&mut t.clients[3], "f", "-");
    let done: Vec<i32> = t.clients.iter_mut().map(|x| fence_cb(x, "f")).collect();
    assert_eq!(done, [0, 0, 0, 0]);
    assert_eq!((t.stats(0).fence_nb, t.stats(1).fence_nb), (1, 1));
    // And again: the next fence over the same set is its own barrier.
    assert_eq!(everyone(&mut t.clients, "g", "-"), [0, 0, 0, 0]);
    assert_eq!((t.stats(0).fence_nb, t.stats(1).fence_nb), (2, 2));
}

/// XNODE-2: with `PMIX_COLLECT_DATA`, every node's GLOBAL and REMOTE
/// items reach the other node's store (its clients read them there, no
/// direct modex); LOCAL items stay on their node; the host's `fence_nb` is
/// called once per server per fence.
#[test]
fn a_collecting_fence_brings_remote_and_global_items_and_keeps_local_ones_home() {
    let mut t = two("xn-coll");
    put_three_scopes(&mut t);
    let all = everyone(&mut t.clients, "f", "@* pmix.collect=b:1");
    assert_eq!(all, [0, 0, 0, 0]);
    let nf = format!("{NOT_FOUND} -");
    for me in 0..4 {
        for other in (0..4).filter(|o| *o != me) {
            let c = &mut t.clients[me];
            let same = node_of(me) == node_of(other);
            let what = format!("rank {me} reading rank {other}");
            assert_eq!(
                get(c, &format!("@{other} g")),
                format!("0 s:global-{other}"),
                "{what}"
            );
            // A peer on this node put it for other nodes only.
            let remote = if same {
                format!("{} -", Status::ERR_EXISTS_OUTSIDE_SCOPE.0)
            } else {
                format!("0 s:remote-{other}")
            };
            assert_eq!(get(c, &format!("@{other} r")), remote, "{what}");
            let local = if same {
                format!("0 s:local-{other}")
            } else {
                nf.clone()
            };
            assert_eq!(get(c, &format!("@{other} l")), local, "{what}");
        }
    }
    // `PMIX_RANK_UNDEF`: the reader's own item first (it is a process of
    // the namespace too), else the lowest rank that shows the key to it.
    assert_eq!(get(&mut t.clients[1], "@undef r"), "0 s:remote-1");
    assert_eq!(get(&mut t.clients[3], "@undef r"), "0 s:remote-3");
    for i in 0..2 {
        let s = t.stats(i);
        assert_eq!(s.fence_nb, 1, "node {i}: one upcall for one fence");
        assert_eq!(s.direct_modex, 0, "node {i}: everything was collected");
        // Its ranks' three items each, the other node's two each.
        assert_eq!(s.items, 2 * 3 + 2 * 2, "node {i}");
    }
}

/// XNODE-3: fences over different subsets of the job's ranks across
/// nodes are separate (each its own `fence_nb`), run at the same time, and
/// each collects only its participants' data.
#[test]
fn fences_over_subsets_across_nodes_are_separate_and_collect_only_their_participants() {
    let mut t = two("xn-sub");
    put_three_scopes(&mut t);
    let collect = "pmix.collect=b:1";
    fence_nb(&mut t.clients[0], "a", &format!("@0,@2 {collect}"));
    fence_nb(&mut t.clients[1], "b", &format!("@3,@1 {collect}"));
    fence_nb(&mut t.clients[2], "a", &format!("@2,@0 {collect}"));
    assert_eq!(fence_cb(&mut t.clients[0], "a"), 0);
    assert_eq!(fence_cb(&mut t.clients[2], "a"), 0);
    assert!(pending(&mut t.clients[1], "b"), "rank 3 has not entered b");
    let nf = format!("{NOT_FOUND} -");
    assert_eq!(get(&mut t.clients[0], "@2 g"), "0 s:global-2");
    assert_eq!(get(&mut t.clients[0], "@3 g pmix.optional=b:1"), nf);
    assert_eq!(get(&mut t.clients[2], "@0 r"), "0 s:remote-0");
    assert_eq!(get(&mut t.clients[2], "@1 g pmix.optional=b:1"), nf);
    fence_nb(&mut t.clients[3], "b", &format!("@1,@3 {collect}"));
    assert_eq!(fence_cb(&mut t.clients[1], "b"), 0);
    assert_eq!(fence_cb(&mut t.clients[3], "b"), 0);
    assert_eq!(get(&mut t.clients[3], "@1 g"), "0 s:global-1");
    assert_eq!(get(&mut t.clients[1], "@3 r"), "0 s:remote-3");
    for i in 0..2 {
        let s = t.stats(i);
        assert_eq!((s.fence_nb, s.direct_modex), (2, 0), "node {i}");
    }
}

/// XNODE-4: without collection, a Get of another node's rank goes
/// through the host's `direct_modex` to the other server's
/// `dmodex_request`, and its bytes answer it; a Get issued before that
/// rank committed waits for the commit; concurrent Gets of one remote rank
/// make one upcall; LOCAL items never leave their node; a rank that
/// leaves without committing ends the other node's wait with NOT_FOUND.
#[test]
fn a_remote_get_without_collection_asks_the_other_node_once_and_waits_for_its_commit() {
    let mut t = two("xn-dm");
    put(&mut t.clients[3], 3, "ep=s:endpoint-3");
    put(&mut t.clients[3], 1, "l=i:3");
    commit(&mut t.clients[3]);
    assert_eq!(everyone(&mut t.clients, "f", "@*"), [0, 0, 0, 0]);
    assert_eq!(t.stats(0).items, 0, "a plain fence collects nothing");
    assert_eq!(get(&mut t.clients[1], "@3 ep"), "0 s:endpoint-3");
    assert_eq!(t.stats(0).direct_modex, 1);
    assert_eq!(t.stats(1).served, 1);
    let nf = format!("{NOT_FOUND} -");
    assert_eq!(
        get(&mut t.clients[1], "@3 l"),
        nf,
        "a LOCAL item stays home"
    );
    assert_eq!(t.stats(0).direct_modex, 1, "rank 3's data is here now");
    // Rank 2 has not committed: three Gets of it, from both local ranks.
    get_nb(&mut t.clients[0], "a", "@2 ep");
    get_nb(&mut t.clients[1], "b", "@2 ep");
    get_nb(&mut t.clients[0], "c", "@2 card");
    assert!(pending(&mut t.clients[0], "a"));
    assert!(pending(&mut t.clients[0], "c"));
    assert!(pending(&mut t.clients[1], "b"));
    assert_eq!(t.stats(0).direct_modex, 2, "one upcall for three Gets");
    assert_eq!(t.stats(1).served, 1, "node B waits for rank 2's commit");
    put(&mut t.clients[2], 3, "ep=s:endpoint-2");
    put(&mut t.clients[2], 2, "card=bytes:300");
    commit(&mut t.clients[2]);
    let sum: u64 = (0..300u64).map(|i| i % 251).sum();
    assert_eq!(get_cb(&mut t.clients[0], "a"), "0 s:endpoint-2");
    assert_eq!(get_cb(&mut t.clients[1], "b"), "0 s:endpoint-2");
    assert_eq!(get_cb(&mut t.clients[0], "c"), format!("0 bytes:300:{sum}"));
    assert_eq!(t.stats(0).direct_modex, 2);
    assert_eq!(t.stats(1).served, 2);
    // The other way round: node B asks node A.
    put(&mut t.clients[0], 2, "back=s:from-a");
    commit(&mut t.clients[0]);
    assert_eq!(get(&mut t.clients[3], "@0 back"), "0 s:from-a");
    assert_eq!((t.stats(1).direct_modex, t.stats(0).served), (1, 1));
    // A rank that leaves without committing: the other node's Get of it
    // ends NOT_FOUND (never a hang).
    get_nb(&mut t.clients[3], "gone", "@1 k");
    assert!(pending(&mut t.clients[3], "gone"));
    t.clients[1].finalize();
    assert_eq!(get_cb(&mut t.clients[3], "gone"), nf);
}

/// XNODE-10: a fence or a Get across nodes with `PMIX_TIMEOUT` whose
/// other node does not answer ends with `PMIX_ERR_TIMEOUT`; the host's
/// late answer to the abandoned fence is dropped (no second callback, and
/// the next fence is a fresh one), the late direct-modex answer is kept
/// (a later Get finds the data with no second upcall).
#[test]
fn a_fence_or_get_across_nodes_times_out_and_the_late_answers_do_no_harm() {
    let mut t = two("xn-late");
    let timeout = Status::ERR_TIMEOUT.0;
    for x in &mut t.clients[..2] {
        fence_nb(x, "t", "@* pmix.timeout=i:1");
    }
    get_nb(&mut t.clients[1], "g", "@2 ep pmix.timeout=i:1");
    assert_eq!(fence_cb(&mut t.clients[0], "t"), timeout);
    assert_eq!(fence_cb(&mut t.clients[1], "t"), timeout);
    assert_eq!(get_cb(&mut t.clients[1], "g"), format!("{timeout} -"));
    // Node B enters late: its host delivers node A's part of the
    // abandoned fence, and node A's host the answer nobody waits for.
    put(&mut t.clients[2], 3, "ep=s:endpoint-2");
    commit(&mut t.clients[2]);
    assert_eq!(everyone(&mut t.clients[2..], "late", "@*"), [0, 0]);
    assert_eq!(get(&mut t.clients[1], "@2 ep"), "0 s:endpoint-2");
    assert_eq!(t.stats(0).direct_modex, 1, "the late answer was kept");
    assert_eq!(everyone(&mut t.clients, "next", "@*"), [0, 0, 0, 0]);
    for x in &mut t.clients[..2] {
        x.sync();
        let again = x.seen.iter().filter(|l| l.starts_with("FENCE_CB t "));
        assert_eq!(again.count(), 0, "{}: a second callback", x.proc);
    }
}

/// The items of XNODE-5: (scope, key=T:V), the same for every rank.
fn same_items(ns: &str) -> Vec<(u8, String)> {
    vec![
        (3, "s=s:the~same~value".into()),
        (2, "b=bytes:300000".into()),
        (3, "n=u64:18446744073709551615".into()),
        (2, "p=procs:".to_owned() + &format!("{ns}:0;{ns}:3")),
        (3, "i=infos:a=i:-1|b=s:x~y|c=u32:7".into()),
        (3, "t=strs:a;b;c".into()),
    ]
}

/// `GETX` of every item of [`same_items`] of `who`.
fn get_items(c: &mut ClientProc, ns: &str, who: &str) -> Vec<String> {
    same_items(ns)
        .iter()
        .map(|(_, kv)| {
            let key = kv.split_once('=').unwrap().0;
            get(c, &format!("{who} {key}"))
        })
        .collect()
}

/// XNODE-5: collected data and direct modex give identical values, of
/// every kind (strings, bytes, integers, proc and info arrays).
#[test]
fn collected_data_and_direct_modex_give_identical_values() {
    let ns = "xn-same";
    let mut t = two(ns);
    for x in t.clients.iter_mut() {
        for (scope, kv) in same_items(ns) {
            put(x, scope, &kv);
        }
        commit(x);
    }
    let own = get_items(&mut t.clients[0], ns, "@me");
    assert!(own.iter().all(|v| v.starts_with("0 ")), "{own:?}");
    let by_modex_a = get_items(&mut t.clients[0], ns, "@2");
    let by_modex_b = get_items(&mut t.clients[2], ns, "@0");
    assert_eq!((t.stats(0).direct_modex, t.stats(1).direct_modex), (1, 1));
    let all = everyone(&mut t.clients, "f", "@* pmix.collect=b:1");
    assert_eq!(all, [0, 0, 0, 0]);
    let collected_a = get_items(&mut t.clients[1], ns, "@3");
    let collected_b = get_items(&mut t.clients[3], ns, "@1");
    let again_a = get_items(&mut t.clients[0], ns, "@2");
    assert_eq!((t.stats(0).direct_modex, t.stats(1).direct_modex), (1, 1));
    for (what, v) in [
        ("A by direct modex", &by_modex_a),
        ("B by direct modex", &by_modex_b),
        ("A collected", &collected_a),
        ("B collected", &collected_b),
        ("A collected after a direct modex", &again_a),
    ] {
        assert_eq!(v, &own, "{what}");
    }
}

/// XNODE-6: a node that dies while the other waits for it in a fence
/// and in a direct-modex Get: the relay host sees the peer's socket close
/// and fails what is pending with `PMIX_ERR_UNREACH`, which the clients
/// get; later fences and Gets across nodes fail at once. Never a hang.
#[test]
fn a_killed_node_fails_the_pending_fence_and_get_instead_of_hanging() {
    let mut t = two("xn-kill");
    fence_nb(&mut t.clients[0], "f", "@0,@2");
    assert!(pending(&mut t.clients[0], "f"));
    get_nb(&mut t.clients[1], "g", "@3 ep");
    assert!(pending(&mut t.clients[1], "g"));
    let s = t.stats(0);
    assert_eq!((s.fence_nb, s.direct_modex), (1, 1), "both at the host");
    t.nodes[1].kill();
    t.clients[2].kill();
    t.clients[3].kill();
    t.expect(0, "PEER_LOST");
    assert_eq!(fence_cb(&mut t.clients[0], "f"), UNREACH);
    assert_eq!(get_cb(&mut t.clients[1], "g"), format!("{UNREACH} -"));
    // Node A goes on: its host fails what needs the lost node at once.
    assert_eq!(everyone(&mut t.clients[..2], "h", "@*"), [UNREACH, UNREACH]);
    assert_eq!(get(&mut t.clients[0], "@2 ep"), format!("{UNREACH} -"));
    assert_eq!(everyone(&mut t.clients[..2], "local", "@0,@1"), [0, 0]);
}

/// XNODE-7: a host that delivers a truncated blob, or one whose frame
/// lies about its length, fails the fence on that node with
/// `PMIX_ERR_UNPACK_FAILURE` and nothing of it is stored (not even the
/// whole frames before the damage); the other node, whose blob was fine,
/// completes; a later fence succeeds and stores the data. A direct-modex
/// answer cut short fails the Get the same way, and the next Get asks
/// again.
#[test]
fn a_garbled_blob_fails_the_fence_with_unpack_failure_and_stores_nothing() {
    let garbling = NodeSpec {
        mode: "relay",
        garble: "modex-cut,cut,lie",
        ..RELAY
    };
    let mut t = TwoNodes::start(NODE_CHILD, CHILD, "xn-garble", &[garbling, RELAY]);
    put_three_scopes(&mut t);
    let bad = Status::ERR_UNPACK_FAILURE.0;
    let nf = format!("{NOT_FOUND} -");
    // A direct-modex answer cut short fails the Get; asked again, it
    // works.
    assert_eq!(get(&mut t.clients[0], "@3 r"), format!("{bad} -"));
    assert_eq!(t.stats(0).items, 2 * 3, "node A stored nothing");
    assert_eq!(get(&mut t.clients[0], "@3 r"), "0 s:remote-3");
    let s = t.stats(0);
    assert_eq!((s.direct_modex, s.items), (2, 2 * 3 + 2));
    for tag in ["cut", "lie"] {
        let all = everyone(&mut t.clients, tag, "@* pmix.collect=b:1");
        assert_eq!(all, [bad, bad, 0, 0], "blob {tag}");
        assert_eq!(t.stats(0).items, 2 * 3 + 2, "node A stored nothing ({tag})");
        assert_eq!(get(&mut t.clients[0], "@2 g pmix.optional=b:1"), nf);
        assert_eq!(get(&mut t.clients[1], "@2 r pmix.optional=b:1"), nf);
    }
    assert_eq!(get(&mut t.clients[2], "@0 g"), "0 s:global-0");
    assert_eq!(
        everyone(&mut t.clients, "good", "@* pmix.collect=b:1"),
        [0, 0, 0, 0]
    );
    assert_eq!(t.stats(0).items, 2 * 3 + 2 + 2 * 2);
    assert_eq!(get(&mut t.clients[0], "@2 g"), "0 s:global-2");
    assert_eq!(get(&mut t.clients[1], "@2 r"), "0 s:remote-2");
    let s = t.stats(0);
    assert_eq!((s.fence_nb, s.direct_modex), (3, 2));
}

/// XNODE-8: under a host without `fence_nb` (the default `NoHost`), a
/// fence with participants on another node fails with
/// `PMIX_ERR_NOT_SUPPORTED` for every local entrant, collecting or not
/// (never a silent success); a Get of another node's rank is
/// `PMIX_ERR_NOT_FOUND` (no direct modex); a fence of the local ranks
/// still completes.
#[test]
fn a_host_without_fence_nb_fails_a_fence_across_nodes() {
    let nohost = NodeSpec {
        mode: "nohost",
        garble: "",
        ..RELAY
    };
    let mut t = TwoNodes::start(NODE_CHILD, CHILD, "xn-nohost", &[nohost]);
    let ns = Status::ERR_NOT_SUPPORTED.0;
    assert_eq!(everyone(&mut t.clients, "f", "@*"), [ns, ns]);
    assert_eq!(
        everyone(&mut t.clients, "c", "- pmix.collect=b:1"),
        [ns, ns]
    );
    fence_nb(&mut t.clients[0], "s", "@0,@3");
    assert_eq!(fence_cb(&mut t.clients[0], "s"), ns, "a named remote rank");
    assert_eq!(get(&mut t.clients[0], "@2 ep"), format!("{NOT_FOUND} -"));
    assert_eq!(everyone(&mut t.clients, "local", "@0,@1"), [0, 0]);
}

/// XNODE-9: a host that registers only the job's size (no node or
/// proc maps, no local peers): the ranks below the size that are not
/// registered on this node are on other nodes, for fences and for what
/// their data shows (REMOTE items visible, LOCAL ones not).
#[test]
fn without_maps_the_ranks_not_registered_here_are_remote() {
    let bare = NodeSpec {
        maps: false,
        ..RELAY
    };
    let mut t = TwoNodes::start(NODE_CHILD, CHILD, "xn-bare", &[bare, RELAY]);
    put_three_scopes(&mut t);
    let all = everyone(&mut t.clients, "f", "@* pmix.collect=b:1");
    assert_eq!(all, [0, 0, 0, 0]);
    let nf = format!("{NOT_FOUND} -");
    let c = &mut t.clients[0];
    assert_eq!(get(c, "@2 g"), "0 s:global-2");
    assert_eq!(get(c, "@2 r"), "0 s:remote-2");
    assert_eq!(get(c, "@2 l"), nf);
    let outside = format!("{} -", Status::ERR_EXISTS_OUTSIDE_SCOPE.0);
    assert_eq!(get(c, "@1 r"), outside);
    assert_eq!(get(c, "@1 l"), "0 s:local-1");
    assert_eq!(get(c, "@undef r"), "0 s:remote-0", "its own item first");
    assert_eq!(get(c, "@undef l"), "0 s:local-0");
    // Node B, which has the maps, sees the same of node A's ranks.
    let c = &mut t.clients[2];
    assert_eq!(get(c, "@0 r"), "0 s:remote-0");
    assert_eq!(get(c, "@0 l"), nf);
    assert_eq!(get(c, "@undef r"), "0 s:remote-2", "its own item first");
    let s = t.stats(0);
    assert_eq!((s.fence_nb, s.direct_modex), (1, 0));
}
