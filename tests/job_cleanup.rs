//! `fastpmix::job::cleanup`: registration rules and removal on real files in
//! unique temporary directories (removed afterwards).

use fastpmix::job::cleanup::{is_cleanup_key, Cleanup, Report};
use fastpmix::types::attrs::*;
use fastpmix::types::{Info, Key, Status, Value};
use nix::unistd::{getegid, geteuid};
use std::ffi::CString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{lchown, symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

mod peer;

/// A unique directory under the temporary directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static N: Mutex<usize> = Mutex::new(0);
        let n = {
            let mut n = N.lock().unwrap();
            *n += 1;
            *n
        };
        let p =
            std::env::temp_dir().join(format!("fastpmix-cleanup-{}-{tag}-{n}", std::process::id()));
        fs::create_dir(&p).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        Scratch(p)
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
    /// Creates the file `rel` (and its parents).
    fn file(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, rel).unwrap();
        p
    }
    /// Creates the directory `rel` (and its parents).
    fn dir(&self, rel: &str) -> PathBuf {
        let p = self.p(rel);
        fs::create_dir_all(&p).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // std's remove_dir_all does not follow links.
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

fn dirs(paths: &[&Path], mods: &[(Key, Value)]) -> Vec<Info> {
    let list = paths.iter().map(|p| s(p)).collect::<Vec<_>>().join(",");
    let mut v = vec![Info::new(PMIX_REGISTER_CLEANUP_DIR, list)];
    v.extend(mods.iter().map(|(k, x)| Info::new(k.clone(), x.clone())));
    v
}

fn on() -> Value {
    Value::Bool(true)
}

/// Registers `infos` and executes it as the calling user.
fn run(infos: &[Info]) -> Report {
    let c = Cleanup::parse(infos).unwrap().expect("a registration");
    c.execute(geteuid().as_raw(), getegid().as_raw())
}

fn reason<'a>(r: &'a Report, p: &Path) -> Option<&'a str> {
    r.kept.iter().find(|(k, _)| k == p).map(|(_, w)| w.as_str())
}

fn exists(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}

fn err(infos: &[Info]) -> Status {
    Cleanup::parse(infos).unwrap_err()
}

// ---- registration rules

#[test]
fn cleanup_keys_recognised_and_absence_is_none() {
    for k in [
        PMIX_REGISTER_CLEANUP,
        PMIX_REGISTER_CLEANUP_DIR,
        PMIX_CLEANUP_RECURSIVE,
        PMIX_CLEANUP_EMPTY,
        PMIX_CLEANUP_IGNORE,
        PMIX_CLEANUP_LEAVE_TOPDIR,
    ] {
        assert!(is_cleanup_key(k.as_str()), "{k}");
    }
    assert!(!is_cleanup_key(PMIX_JOB_CTRL_KILL.as_str()));
    assert_eq!(
        Cleanup::parse(&[Info::new(PMIX_JOB_CTRL_KILL, true)]),
        Ok(None)
    );
    assert_eq!(Cleanup::parse(&[]), Ok(None));
    // A path that does not exist yet registers fine.
    let c = Cleanup::parse(&[Info::new(PMIX_REGISTER_CLEANUP, "/nonexistent/fastpmix/x")]);
    assert!(!c.unwrap().unwrap().is_empty());
    assert!(Cleanup::default().is_empty());
}

#[test]
fn conflicting_cleanup_directives_same_key_twice() {
    let conflict = Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES;
    assert_eq!(conflict, Status(-51));
    let a = Info::new(PMIX_REGISTER_CLEANUP, "/tmp/a");
    let b = Info::new(PMIX_REGISTER_CLEANUP, "/tmp/b");
    assert_eq!(err(&[a.clone(), b]), conflict);
    let d = Info::new(PMIX_REGISTER_CLEANUP_DIR, "/tmp/d");
    let r1 = Info::new(PMIX_CLEANUP_RECURSIVE, true);
    let r0 = Info::new(PMIX_CLEANUP_RECURSIVE, false);
    assert_eq!(err(&[d.clone(), r1.clone(), r0]), conflict);
    // The same value twice is harmless.
    let twice = Cleanup::parse(&[a.clone(), a.clone(), d.clone(), r1.clone(), r1]).unwrap();
    assert!(twice.is_some());
}

#[test]
fn conflicting_cleanup_directives_file_and_dir_in_one_call() {
    let infos = [
        Info::new(PMIX_REGISTER_CLEANUP, "/tmp/x,/tmp/y"),
        Info::new(PMIX_REGISTER_CLEANUP_DIR, "/tmp/y/"), // normalised to /tmp/y
    ];
    assert_eq!(err(&infos), Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES);
}

#[test]
fn conflicting_cleanup_directives_file_and_dir_across_merge() {
    let mut c = Cleanup::parse(&[Info::new(PMIX_REGISTER_CLEANUP, "/tmp/x")])
        .unwrap()
        .unwrap();
    let before = c.clone();
    let d = Cleanup::parse(&[Info::new(PMIX_REGISTER_CLEANUP_DIR, "/tmp/x")])
        .unwrap()
        .unwrap();
    assert_eq!(
        c.merge(d.clone()),
        Err(Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES)
    );
    assert_eq!(c, before, "a failed merge changes nothing");
    let mut d2 = d;
    assert_eq!(
        d2.merge(before),
        Err(Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES)
    );
}

#[test]
fn conflicting_cleanup_directives_merge_dir_with_other_flags() {
    let plain = [Info::new(PMIX_REGISTER_CLEANUP_DIR, "/tmp/d")];
    let mut c = Cleanup::parse(&plain).unwrap().unwrap();
    let rec = dirs(&[Path::new("/tmp/d")], &[(PMIX_CLEANUP_RECURSIVE, on())]);
    let other = Cleanup::parse(&rec).unwrap().unwrap();
    assert_eq!(
        c.merge(other),
        Err(Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES)
    );
    let ign = |l: &str| dirs(&[Path::new("/tmp/e")], &[(PMIX_CLEANUP_IGNORE, l.into())]);
    let mut e = Cleanup::parse(&ign("a,b")).unwrap().unwrap();
    // Same dir, same flags (ignore order does not matter): fine, no duplicate.
    let same = Cleanup::parse(&ign("b,a,b")).unwrap().unwrap();
    let copy = e.clone();
    assert_eq!(e.merge(same), Ok(()));
    assert_eq!(e, copy);
    // Another file and directory: added.
    let more = Cleanup::parse(&[Info::new(PMIX_REGISTER_CLEANUP, "/tmp/f")])
        .unwrap()
        .unwrap();
    assert_eq!(e.merge(more), Ok(()));
    assert_ne!(e, copy);
    assert_eq!(c.merge(e), Ok(()));
}

#[test]
fn bad_param_relative_empty_or_unsafe_path() {
    for p in [
        "tmp/x",
        "",
        "/tmp/a,,/tmp/b",
        "/tmp/a,",
        "./x",
        "/",
        "//",
        "/tmp/../etc",
        "/tmp/a\0b",
    ] {
        assert_eq!(
            err(&[Info::new(PMIX_REGISTER_CLEANUP, p)]),
            Status::ERR_BAD_PARAM,
            "{p:?}"
        );
        assert_eq!(
            err(&[Info::new(PMIX_REGISTER_CLEANUP_DIR, p)]),
            Status::ERR_BAD_PARAM,
            "{p:?}"
        );
    }
}

#[test]
fn bad_param_wrong_value_type() {
    assert_eq!(
        err(&[Info::new(PMIX_REGISTER_CLEANUP, true)]),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(
        err(&[Info::new(PMIX_REGISTER_CLEANUP_DIR, 3u32)]),
        Status::ERR_BAD_PARAM
    );
    let d = Path::new("/tmp/d");
    for m in [
        (PMIX_CLEANUP_RECURSIVE, Value::from("yes")),
        (PMIX_CLEANUP_EMPTY, Value::from(1u32)),
        (PMIX_CLEANUP_IGNORE, Value::Bool(true)),
        (PMIX_CLEANUP_LEAVE_TOPDIR, Value::Undef),
    ] {
        assert_eq!(
            err(&dirs(&[d], std::slice::from_ref(&m))),
            Status::ERR_BAD_PARAM,
            "{m:?}"
        );
    }
}

#[test]
fn bad_param_modifiers_without_cleanup_dir() {
    let f = Info::new(PMIX_REGISTER_CLEANUP, "/tmp/f");
    for m in [
        Info::new(PMIX_CLEANUP_RECURSIVE, true),
        Info::new(PMIX_CLEANUP_EMPTY, false),
        Info::new(PMIX_CLEANUP_IGNORE, "x"),
        Info::new(PMIX_CLEANUP_LEAVE_TOPDIR, true),
    ] {
        assert_eq!(err(&[f.clone(), m.clone()]), Status::ERR_BAD_PARAM, "{m:?}");
        assert_eq!(
            err(std::slice::from_ref(&m)),
            Status::ERR_BAD_PARAM,
            "{m:?}"
        );
    }
}

#[test]
fn bad_param_ignore_name_not_a_name() {
    for l in ["a/b", "", "a,,b", "x\0"] {
        let infos = dirs(&[Path::new("/tmp/d")], &[(PMIX_CLEANUP_IGNORE, l.into())]);
        assert_eq!(err(&infos), Status::ERR_BAD_PARAM, "{l:?}");
    }
}

// ---- removal

#[test]
fn files_unlinked_links_not_followed() {
    let t = Scratch::new("files");
    let out = Scratch::new("files-out");
    let target = out.file("target");
    let (a, b) = (t.file("a"), t.file("sub/b"));
    let link = t.p("link");
    symlink(&target, &link).unwrap();
    let (missing, sub) = (t.p("missing"), t.p("sub"));
    let list = [&a, &b, &link, &missing, &sub].map(|p| s(p)).join(",");
    let r = run(&[Info::new(PMIX_REGISTER_CLEANUP, list)]);
    assert!(!exists(&a) && !exists(&b) && !exists(&link));
    assert_eq!(r.removed, vec![a, b, link]);
    assert!(target.exists(), "the link's target survives");
    assert_eq!(reason(&r, &missing), Some("does not exist"));
    assert_eq!(reason(&r, &sub), Some("is a directory"));
    assert!(sub.is_dir());
}

#[test]
fn nonrecursive_dir_removes_its_files_and_leaves_subdirs() {
    let t = Scratch::new("flat");
    let top = t.dir("top");
    let (f1, f2, g) = (t.file("top/f1"), t.file("top/f2"), t.file("top/sub/g"));
    let empty = t.dir("top/empty");
    let r = run(&dirs(&[&top], &[]));
    assert!(!exists(&f1) && !exists(&f2));
    assert!(
        g.exists() && empty.is_dir(),
        "subdirectories are not touched"
    );
    assert_eq!(reason(&r, &top), Some("not empty"));
    // Once it holds only files, the directory itself goes too.
    let lone = t.dir("lone");
    t.file("lone/f");
    let r = run(&dirs(&[&lone], &[]));
    assert!(!exists(&lone));
    assert_eq!(r.removed.last(), Some(&lone));
    assert!(r.kept.is_empty(), "{:?}", r.kept);
}

#[test]
fn recursive_removes_everything_depth_first() {
    let t = Scratch::new("rec");
    let top = t.dir("top");
    for f in ["top/a", "top/s1/b", "top/s1/s2/c"] {
        t.file(f);
    }
    t.dir("top/s3");
    let r = run(&dirs(&[&top], &[(PMIX_CLEANUP_RECURSIVE, on())]));
    assert!(!exists(&top));
    assert!(r.kept.is_empty(), "{:?}", r.kept);
    let pos = |rel: &str| r.removed.iter().position(|p| *p == t.p(rel)).unwrap();
    assert!(pos("top/s1/s2/c") < pos("top/s1/s2"));
    assert!(pos("top/s1/s2") < pos("top/s1"));
    assert_eq!(pos("top"), r.removed.len() - 1);
    assert_eq!(r.removed.len(), 7);
}

#[test]
fn empty_keeps_files_and_removes_empty_dirs_depth_first() {
    let t = Scratch::new("empty");
    let top = t.dir("top");
    let (f, f2) = (t.file("top/f"), t.file("top/d/f2"));
    let (e1, e4, e5) = (t.dir("top/e1"), t.dir("top/e2/e3/e4"), t.dir("top/d/e5"));
    let r = run(&dirs(
        &[&top],
        &[(PMIX_CLEANUP_EMPTY, on()), (PMIX_CLEANUP_RECURSIVE, on())],
    ));
    assert!(f.exists() && f2.exists(), "files are never removed");
    assert!(!exists(&e1) && !exists(&e5));
    assert!(
        !exists(&t.p("top/e2")),
        "emptied of empty directories, e2 goes too"
    );
    let pos = |p: &Path| r.removed.iter().position(|q| q == p).unwrap();
    assert!(pos(&e4) < pos(&t.p("top/e2/e3")));
    assert!(pos(&t.p("top/e2/e3")) < pos(&t.p("top/e2")));
    assert_eq!(reason(&r, &t.p("top/d")), Some("not empty"));
    assert_eq!(reason(&r, &top), Some("not empty"));

    // Non-recursive: only the empty directories directly inside.
    let top2 = t.dir("top2");
    let (g, a, b) = (t.file("top2/g"), t.dir("top2/a"), t.dir("top2/b/c"));
    let r = run(&dirs(&[&top2], &[(PMIX_CLEANUP_EMPTY, on())]));
    assert!(g.exists() && !exists(&a) && b.is_dir());
    assert_eq!(reason(&r, &t.p("top2/b")), Some("not empty"));

    // A top that ends up empty goes too.
    let top3 = t.dir("top3/x/y");
    let top3 = top3.parent().unwrap().parent().unwrap();
    let r = run(&dirs(
        &[top3],
        &[(PMIX_CLEANUP_EMPTY, on()), (PMIX_CLEANUP_RECURSIVE, on())],
    ));
    assert!(!exists(top3) && r.kept.is_empty());
}

#[test]
fn ignore_at_top_and_nested() {
    let t = Scratch::new("ignore");
    let top = t.dir("top");
    let keep = [
        t.file("top/keep.me"),
        t.file("top/sub/keep.me"),
        t.file("top/logs/z"),
    ];
    let gone = [t.file("top/x"), t.file("top/sub/y"), t.file("top/other/w")];
    let mods = [
        (PMIX_CLEANUP_RECURSIVE, on()),
        (PMIX_CLEANUP_IGNORE, "keep.me,logs".into()),
    ];
    let r = run(&dirs(&[&top], &mods));
    assert!(keep.iter().all(|p| p.exists()), "ignored entries stay");
    assert!(gone.iter().all(|p| !exists(p)));
    assert!(!exists(&t.p("top/other")));
    assert_eq!(reason(&r, &keep[0]), Some("ignored"));
    assert_eq!(reason(&r, &keep[1]), Some("ignored"));
    assert_eq!(
        reason(&r, &t.p("top/logs")),
        Some("ignored"),
        "not descended into"
    );
    assert_eq!(reason(&r, &t.p("top/sub")), Some("not empty"));
    assert_eq!(reason(&r, &top), Some("not empty"));

    // Non-recursive: a file at the top.
    let flat = t.dir("flat");
    let (k, x) = (t.file("flat/keep.me"), t.file("flat/x"));
    run(&dirs(&[&flat], &[(PMIX_CLEANUP_IGNORE, "keep.me".into())]));
    assert!(k.exists() && !exists(&x));
}

#[test]
fn leave_topdir_keeps_the_registered_directory() {
    let t = Scratch::new("lvtop");
    let top = t.dir("top");
    t.file("top/a/b/c");
    t.file("top/d");
    let r = run(&dirs(
        &[&top],
        &[
            (PMIX_CLEANUP_RECURSIVE, on()),
            (PMIX_CLEANUP_LEAVE_TOPDIR, on()),
        ],
    ));
    assert!(top.is_dir());
    assert_eq!(fs::read_dir(&top).unwrap().count(), 0);
    assert!(r.kept.is_empty() && !r.removed.contains(&top));
    // Non-recursive too.
    t.file("top/e");
    run(&dirs(&[&top], &[(PMIX_CLEANUP_LEAVE_TOPDIR, on())]));
    assert!(top.is_dir() && !exists(&t.p("top/e")));
}

/// A tree with links to an outside directory full of files, and to a file.
fn linked_tree(t: &Scratch, out: &Scratch) -> (PathBuf, Vec<PathBuf>) {
    let outside = vec![out.file("o1"), out.file("deep/o2"), out.dir("emptyd")];
    let top = t.dir("top");
    symlink(&out.0, t.p("top/to-dir")).unwrap();
    symlink(&outside[0], t.p("top/to-file")).unwrap();
    t.dir("top/sub");
    symlink(out.p("deep"), t.p("top/sub/to-deep")).unwrap();
    (top, outside)
}

#[test]
fn symlink_in_tree_removed_not_followed_recursive() {
    let (t, out) = (Scratch::new("lnrec"), Scratch::new("lnrec-out"));
    let (top, outside) = linked_tree(&t, &out);
    let r = run(&dirs(&[&top], &[(PMIX_CLEANUP_RECURSIVE, on())]));
    assert!(!exists(&top), "{:?}", r.kept);
    assert!(r.removed.contains(&t.p("top/to-dir")) && r.removed.contains(&t.p("top/sub/to-deep")));
    assert!(
        outside.iter().all(|p| p.exists()),
        "nothing outside is touched"
    );
    // Also when EMPTY: links are never followed into empty directories.
    let (t2, out2) = (Scratch::new("lnemp"), Scratch::new("lnemp-out"));
    let (top2, outside2) = linked_tree(&t2, &out2);
    run(&dirs(
        &[&top2],
        &[(PMIX_CLEANUP_RECURSIVE, on()), (PMIX_CLEANUP_EMPTY, on())],
    ));
    assert!(outside2.iter().all(|p| p.exists()) && t2.p("top/to-dir").is_symlink());
}

#[test]
fn symlink_in_tree_removed_not_followed_nonrecursive() {
    let (t, out) = (Scratch::new("lnflat"), Scratch::new("lnflat-out"));
    let (top, outside) = linked_tree(&t, &out);
    let r = run(&dirs(&[&top], &[]));
    assert!(!exists(&t.p("top/to-dir")) && !exists(&t.p("top/to-file")));
    assert!(
        t.p("top/sub/to-deep").is_symlink(),
        "subdirectories are left"
    );
    assert!(
        outside.iter().all(|p| p.exists()),
        "nothing outside is touched"
    );
    assert_eq!(reason(&r, &top), Some("not empty"));
}

#[test]
fn registered_top_symlink_only_the_link_goes() {
    let (t, out) = (Scratch::new("lntop"), Scratch::new("lntop-out"));
    let inside = [out.file("a"), out.file("b/c")];
    let link = t.p("link");
    symlink(&out.0, &link).unwrap();
    let kept = run(&dirs(
        &[&link],
        &[
            (PMIX_CLEANUP_RECURSIVE, on()),
            (PMIX_CLEANUP_LEAVE_TOPDIR, on()),
        ],
    ));
    assert!(link.is_symlink() && inside.iter().all(|p| p.exists()));
    assert!(reason(&kept, &link).is_some_and(|w| w.contains("symbolic link")));
    let r = run(&dirs(&[&link], &[(PMIX_CLEANUP_RECURSIVE, on())]));
    assert_eq!(r.removed, vec![link.clone()]);
    assert!(!exists(&link) && inside.iter().all(|p| p.exists()));
    // A registered directory that is a plain file is left alone.
    let f = t.file("plain");
    assert_eq!(reason(&run(&dirs(&[&f], &[])), &f), Some("not a directory"));
    assert!(f.exists());
}

// ---- other filesystems

/// A tmpfs mounted on a directory of a scratch tree, unmounted on drop so
/// that a failed assertion leaves no mount behind (declare it after the
/// [`Scratch`] holding it: drops run in reverse, the unmount first).
struct Tmpfs(CString);

impl Tmpfs {
    fn mount(at: &Path) -> std::io::Result<Tmpfs> {
        let target = CString::new(at.as_os_str().as_bytes()).unwrap();
        // Two literals and `target`, owned here; the kernel only reads them.
        // SAFETY: every pointer is a NUL-terminated string outliving the call.
        let rc = unsafe {
            libc::mount(
                c"fastpmix-test".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                c"size=1m".as_ptr().cast(),
            )
        };
        match rc {
            0 => Ok(Tmpfs(target)),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Detached: a descriptor still open under it cannot keep it mounted.
        // SAFETY: `self.0` is a NUL-terminated string owned by `self`.
        unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
    }
}

/// A tmpfs on `at`, or `None` after saying why the test is skipped (not
/// root, or a container that refuses mounts).
fn tmpfs_or_skip(at: &Path) -> Option<Tmpfs> {
    if !geteuid().is_root() {
        eprintln!("not root: mount point test skipped (mounting a tmpfs needs root)");
        return None;
    }
    match Tmpfs::mount(at) {
        Ok(m) => Some(m),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES)) => {
            eprintln!("cannot mount a tmpfs here ({e}): mount point test skipped");
            None
        }
        Err(e) => panic!("mount -t tmpfs on {}: {e}", at.display()),
    }
}

#[test]
fn another_filesystem_mounted_inside_the_tree_is_skipped_and_reported() {
    let t = Scratch::new("xdev");
    let top = t.dir("top");
    let gone = [t.file("top/a"), t.file("top/sub/b")];
    let mnt = t.dir("top/mnt");
    let Some(_m) = tmpfs_or_skip(&mnt) else {
        return;
    };
    let inside = [t.file("top/mnt/inside"), t.file("top/mnt/deeper/c")];
    // Without the filesystem check the walk descends into the mount and
    // empties it; only the mount point itself would survive (EBUSY).
    let r = run(&dirs(&[&top], &[(PMIX_CLEANUP_RECURSIVE, on())]));
    assert!(inside.iter().all(|p| p.exists()), "{:?}", r.removed);
    assert!(gone.iter().all(|p| !exists(p)) && !exists(&t.p("top/sub")));
    assert!(
        !r.removed.iter().any(|p| p.starts_with(&mnt)),
        "{:?}",
        r.removed
    );
    assert_eq!(
        r.kept,
        [
            (mnt.clone(), "on another filesystem".to_owned()),
            (top.clone(), "not empty".to_owned()),
        ],
        "the mount point alone is reported, and its parent for it"
    );

    // An empty mount point under EMPTY: rmdir would fail with EBUSY, so
    // the reason tells a skipped entry from a failed removal.
    let top2 = t.dir("top2");
    let (e, mnt2) = (t.dir("top2/e"), t.dir("top2/mnt"));
    let Some(_m2) = tmpfs_or_skip(&mnt2) else {
        return;
    };
    let r = run(&dirs(
        &[&top2],
        &[(PMIX_CLEANUP_EMPTY, on()), (PMIX_CLEANUP_RECURSIVE, on())],
    ));
    assert!(!exists(&e) && mnt2.is_dir());
    assert_eq!(reason(&r, &mnt2), Some("on another filesystem"), "{r:?}");
    assert_eq!(reason(&r, &top2), Some("not empty"), "{r:?}");
}

// ---- credentials

/// `(fsuid, fsgid, groups)` of the calling thread.
fn thread_creds() -> (String, String, String) {
    let status = fs::read_to_string("/proc/thread-self/status").unwrap();
    let field = |k: &str| {
        let l = status.lines().find(|l| l.starts_with(k)).unwrap_or("");
        l[k.len()..].split_whitespace().collect::<Vec<_>>()
    };
    let (u, g) = (field("Uid:"), field("Gid:"));
    (u[3].to_owned(), g[3].to_owned(), field("Groups:").join(" "))
}

#[test]
fn credentials_root_owned_dir_not_removed_for_another_user() {
    if !geteuid().is_root() {
        // Without privilege, acting for another uid is refused outright.
        let t = Scratch::new("cred-refuse");
        let top = t.dir("top");
        t.file("top/f");
        let c = Cleanup::parse(&dirs(&[&top], &[])).unwrap().unwrap();
        let r = c.execute(geteuid().as_raw() + 1, getegid().as_raw());
        assert!(r.removed.is_empty() && t.p("top/f").exists());
        assert!(reason(&r, &top).unwrap().contains("not privileged"));
        eprintln!("not root: credential switch tests skipped (refusal checked)");
        return;
    }
    let before = thread_creds();
    let t = Scratch::new("cred-root");
    let top = t.dir("top");
    let f = t.file("top/f");
    fs::set_permissions(&top, fs::Permissions::from_mode(0o755)).unwrap();
    let c = Cleanup::parse(&dirs(&[&top], &[(PMIX_CLEANUP_RECURSIVE, on())]))
        .unwrap()
        .unwrap();
    let r = c.execute(peer::peer_ids().0, peer::peer_ids().1);
    assert!(r.removed.is_empty(), "{:?}", r.removed);
    assert!(f.exists() && top.is_dir());
    assert_eq!(reason(&r, &f), Some("permission denied"), "{:?}", r.kept);
    assert!(reason(&r, &top).is_some());
    assert_eq!(thread_creds(), before, "the caller's thread is unchanged");
    assert_eq!(before.0, "0");
}

#[test]
fn credentials_dir_owned_by_the_user_removed() {
    if !geteuid().is_root() {
        eprintln!("not root: credential switch test skipped");
        return;
    }
    let before = thread_creds();
    let t = Scratch::new("cred-own");
    let top = t.dir("top");
    let files = [t.file("top/f"), t.file("top/sub/g")];
    // The scratch directory too: removing `top` needs write access to it.
    for p in [&t.0, &top, &t.p("top/sub"), &files[0], &files[1]] {
        lchown(p, Some(peer::peer_ids().0), Some(peer::peer_ids().1)).unwrap();
    }
    let c = Cleanup::parse(&dirs(&[&top], &[(PMIX_CLEANUP_RECURSIVE, on())]))
        .unwrap()
        .unwrap();
    let r = c.execute(peer::peer_ids().0, peer::peer_ids().1);
    assert!(r.kept.is_empty(), "{:?}", r.kept);
    assert!(!exists(&top));
    assert_eq!(r.removed.len(), 4);
    assert_eq!(thread_creds(), before, "the caller's thread is unchanged");
    // And a root-owned file inside a directory the user owns is removable
    // (directory permissions decide), while the same as root works too.
    let f = t.file("rootfile");
    let r = Cleanup::parse(&[Info::new(PMIX_REGISTER_CLEANUP, s(&f))])
        .unwrap()
        .unwrap()
        .execute(0, 0);
    assert_eq!(r.removed, vec![f]);
}
