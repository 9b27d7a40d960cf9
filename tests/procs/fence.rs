//! The fence commands of a client process (`FENCE`, `FENCE_NB`,
//! `FENCE_CHECK`; see the module docs of `procs`), as the fence tests
//! drive them.

use super::ClientProc;

/// `FENCE <args>` → its status.
pub fn fence(c: &mut ClientProc, args: &str) -> i32 {
    c.send(&format!("FENCE {args}"));
    let l = c.expect("FENCE_RESULT ");
    l["FENCE_RESULT ".len()..].parse().unwrap()
}

/// `FENCE_NB <tag> <args>` → the call's status.
pub fn fence_nb(c: &mut ClientProc, tag: &str, args: &str) -> i32 {
    c.send(&format!("FENCE_NB {tag} {args}"));
    let l = c.expect(&format!("FENCE_NB_STARTED {tag} "));
    l.rsplit(' ').next().unwrap().parse().unwrap()
}

/// The status fence `tag`'s callback got (waits for it; it must have run
/// on another thread than the caller's).
pub fn fence_cb(c: &mut ClientProc, tag: &str) -> i32 {
    let l = c.expect(&format!("FENCE_CB {tag} "));
    assert!(l.ends_with(" thread=other"), "{l}");
    l.split(' ').nth(2).unwrap().parse().unwrap()
}

/// Every client of `c` enters fence `tag` (`FENCE_NB <tag> <args>`); each
/// callback's status.
pub fn everyone(c: &mut [ClientProc], tag: &str, args: &str) -> Vec<i32> {
    for x in c.iter_mut() {
        assert_eq!(fence_nb(x, tag, args), 0, "{}", x.proc);
    }
    c.iter_mut().map(|x| fence_cb(x, tag)).collect()
}

/// `pending`, or `done <status>`, once the server handled everything `c`
/// sent so far.
pub fn state(c: &mut ClientProc, tag: &str) -> String {
    c.send(&format!("FENCE_CHECK {tag}"));
    let l = c.expect(&format!("FENCE_STATE {tag} "));
    l[format!("FENCE_STATE {tag} ").len()..].to_owned()
}
