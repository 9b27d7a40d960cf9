//! The second uid of the two-uid tests: `fastpmix-peer`, a
//! system user `tools/test` creates when it runs as root
//! (`fastpmix_ensure_test_user` in tools/lib.sh), so that no other process
//! on the machine runs as it. Without it (a test binary run by hand), uid
//! and gid 65534 (`nobody`) stand in.
#![allow(dead_code)]

/// The user `tools/test` creates.
pub const PEER_USER: &str = "fastpmix-peer";

/// (uid, gid) of the second user.
pub fn peer_ids() -> (u32, u32) {
    std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                let f: Vec<&str> = l.split(':').collect();
                (f.len() > 3 && f[0] == PEER_USER)
                    .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))
                    .flatten()
            })
        })
        .unwrap_or((65534, 65534))
}

/// Can the second user execute this test binary? (Not when the checkout
/// lives under a directory only root may enter, e.g. a `mktemp -d`.)
pub fn peer_can_run_this_binary() -> bool {
    use std::os::unix::fs::PermissionsExt;
    let exe = std::env::current_exe().unwrap();
    exe.ancestors()
        .skip(1)
        .all(|d| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0))
        && std::fs::metadata(&exe).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
}
