//! `PMIx_Job_control` cleanup registration (`PMIX_REGISTER_CLEANUP[_DIR]` and
//! the `PMIX_CLEANUP_*` modifiers) and the removal the node server carries out
//! when the registering process terminates.
//!
//! # Registration ([`Cleanup::parse`], [`Cleanup::merge`])
//!
//! One job-control call carries at most one value per key (the same key twice
//! with different values is `PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES`, with
//! equal values harmless). `PMIX_REGISTER_CLEANUP` and
//! `PMIX_REGISTER_CLEANUP_DIR` are comma-delimited path lists, split on `,`
//! only (no trimming); each element must be absolute, non-empty, free of NUL
//! and `..`, and not `/`, else `PMIX_ERR_BAD_PARAM`. Paths are normalised
//! lexically (`//`, `/./` and a trailing `/` dropped). The modifiers apply to
//! every directory of the same call; giving one without
//! `PMIX_REGISTER_CLEANUP_DIR` is `PMIX_ERR_BAD_PARAM`, as is a value of the
//! wrong type or an ignore name that is empty or holds a `/`. A path
//! registered both as a file and as a directory (in one call or across
//! calls), or a directory registered again with different modifiers, is
//! `PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES`. A path need not exist yet.
//!
//! # Removal ([`Cleanup::execute`]): files first, then directories
//!
//! - File: unlinked; a symlink is unlinked as a link, never followed.
//! - Directory, default: the non-directories directly in it are unlinked
//!   (subdirectories stay), then the directory itself if it is then empty.
//! - `RECURSIVE`: everything below, depth first, then the directory itself.
//! - `EMPTY`: never a file or a link, only empty directories: those directly
//!   in it (at every level, depth first, with `RECURSIVE`, so a directory
//!   emptied of empty directories goes too), then the top if it is empty.
//! - `IGNORE`: an entry with one of these names (at any level) is neither
//!   removed nor descended into, so the directories holding it stay.
//! - `LEAVE_TOPDIR`: the registered directory itself is never removed.
//! - A registered directory that is a symlink is unlinked as a link (unless
//!   `LEAVE_TOPDIR`); one that is not a directory at all is left alone.
//!
//! Safety: from the registered path's last component down, nothing is
//! followed. The walk holds directory descriptors and uses
//! `fstatat(AT_SYMLINK_NOFOLLOW)`, `openat(O_DIRECTORY|O_NOFOLLOW)` (checking
//! that the directory opened is the one just stat'ed) and `unlinkat`, so a
//! link inside the tree is removed as a link and its target is untouched.
//! Entries on another filesystem than the registered directory are skipped.
//! (The parent of a registered path is resolved by the kernel as the user
//! would resolve it.) All of it runs on a short-lived thread whose filesystem
//! credentials are first switched to the registering uid/gid, so the kernel
//! refuses whatever that user could not remove itself (a server that is not
//! root acts only for its own euid and refuses other uids). Depth is bounded by
//! the descriptor limit (one open directory per level); deeper levels are
//! reported, not removed.
//!
//! [`Report::kept`] lists, with the reason, every path the registration covers
//! that is still there: errors (`"permission denied"`, ...), `"does not
//! exist"`, `"ignored"`, `"not empty"`, `"on another filesystem"`. What the
//! mode leaves by design (files under `EMPTY`, subdirectories of a
//! non-recursive directory) is not listed.

use crate::types::attrs::{
    self, PMIX_CLEANUP_EMPTY, PMIX_CLEANUP_IGNORE, PMIX_CLEANUP_LEAVE_TOPDIR,
    PMIX_CLEANUP_RECURSIVE, PMIX_REGISTER_CLEANUP, PMIX_REGISTER_CLEANUP_DIR,
};
use crate::types::{Info, Status, Value};
use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag, AT_FDCWD};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use nix::unistd::{geteuid, getgrouplist, unlinkat, Gid, Uid, UnlinkatFlags, User};
use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Is `key` one of the six cleanup keys ([`Cleanup::parse`] consumes them)?
pub fn is_cleanup_key(key: &str) -> bool {
    slot(key).is_some()
}

// Slots of the six keys in `parse`.
const FILES: usize = 0;
const DIRS: usize = 1;
const RECURSIVE: usize = 2;
const EMPTY: usize = 3;
const IGNORE: usize = 4;
const LEAVE_TOP: usize = 5;

fn slot(key: &str) -> Option<usize> {
    [
        &PMIX_REGISTER_CLEANUP,
        &PMIX_REGISTER_CLEANUP_DIR,
        &PMIX_CLEANUP_RECURSIVE,
        &PMIX_CLEANUP_EMPTY,
        &PMIX_CLEANUP_IGNORE,
        &PMIX_CLEANUP_LEAVE_TOPDIR,
    ]
    .iter()
    .position(|k| k.as_str() == key)
}

/// The modifiers of one registered directory.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct DirFlags {
    recursive: bool,
    empty: bool,
    leave_top: bool,
    /// Sorted and deduplicated, so that equal sets compare equal.
    ignore: Vec<String>,
}

/// What one process registered for removal at its termination.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cleanup {
    files: Vec<PathBuf>,
    dirs: Vec<(PathBuf, DirFlags)>,
}

/// What [`Cleanup::execute`] did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    /// Paths removed, in removal order (depth first).
    pub removed: Vec<PathBuf>,
    /// Covered paths still there, with the reason.
    pub kept: Vec<(PathBuf, String)>,
}

impl Report {
    fn keep(&mut self, path: PathBuf, why: impl Into<String>) {
        self.kept.push((path, why.into()));
    }
}

impl Cleanup {
    /// The cleanup registration carried by one job-control call's directives;
    /// `Ok(None)` if there is none. Other keys are ignored. Errors: see the
    /// module documentation.
    pub fn parse(directives: &[Info]) -> Result<Option<Cleanup>, Status> {
        let mut seen: [Option<&Value>; 6] = [None; 6];
        for info in directives {
            let Some(i) = slot(info.key.as_str()) else {
                continue;
            };
            attrs::check(info)?;
            match seen[i] {
                Some(v) if *v != info.value => {
                    return Err(Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES)
                }
                _ => seen[i] = Some(&info.value),
            }
        }
        let modifiers = seen[RECURSIVE..].iter().any(Option::is_some);
        if seen[DIRS].is_none() && modifiers {
            return Err(Status::ERR_BAD_PARAM);
        }
        if seen[FILES].is_none() && seen[DIRS].is_none() {
            return Ok(None);
        }
        let flag = |i: usize| matches!(seen[i], Some(Value::Bool(true)));
        let mut ignore = Vec::new();
        for name in list(seen[IGNORE]) {
            if name.is_empty() || name.contains(['/', '\0']) {
                return Err(Status::ERR_BAD_PARAM);
            }
            ignore.push(name.to_owned());
        }
        ignore.sort();
        ignore.dedup();
        let flags = DirFlags {
            recursive: flag(RECURSIVE),
            empty: flag(EMPTY),
            leave_top: flag(LEAVE_TOP),
            ignore,
        };
        let mut c = Cleanup::default();
        for p in list(seen[FILES]) {
            push_new(&mut c.files, path(p)?);
        }
        for p in list(seen[DIRS]) {
            let p = path(p)?;
            if !c.dirs.iter().any(|(q, _)| *q == p) {
                c.dirs.push((p, flags.clone()));
            }
        }
        // Both lists of one call are new to each other: `merge` checks them.
        let (files, dirs) = (std::mem::take(&mut c.files), std::mem::take(&mut c.dirs));
        c.merge(Cleanup { files, dirs })?;
        Ok(Some(c))
    }

    /// Adds a later registration of the same process. On error `self` is
    /// unchanged.
    pub fn merge(&mut self, other: Cleanup) -> Result<(), Status> {
        let conflict = other
            .files
            .iter()
            .any(|f| self.dirs.iter().any(|(d, _)| d == f))
            || other.dirs.iter().any(|(d, fl)| {
                self.files.contains(d)
                    || other.files.contains(d)
                    || self.dirs.iter().any(|(e, g)| e == d && g != fl)
            });
        if conflict {
            return Err(Status::ERR_CONFLICTING_CLEANUP_DIRECTIVES);
        }
        for f in other.files {
            push_new(&mut self.files, f);
        }
        for (d, fl) in other.dirs {
            if !self.dirs.iter().any(|(e, _)| *e == d) {
                self.dirs.push((d, fl));
            }
        }
        Ok(())
    }

    /// Nothing registered?
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.dirs.is_empty()
    }

    /// Carries out the removal as `uid`/`gid` (blocks; the caller runs it off
    /// its progress thread).
    ///
    /// The work runs on a dedicated thread that first sets its supplementary
    /// groups (the user's, from the group database, else none), fsgid and
    /// fsuid with raw per-thread syscalls (glibc's wrappers would apply them
    /// to every thread of the server) and checks they took. Moving fsuid off
    /// 0 also drops that thread's `CAP_DAC_OVERRIDE` and `CAP_FOWNER`, so the
    /// kernel applies the user's permissions. The thread then exits, taking
    /// its credentials with it. A server that is not root acts directly when
    /// `uid` is its own euid (its own gid and groups apply) and refuses
    /// otherwise; a refusal or failed switch reports every path as kept.
    pub fn execute(&self, uid: u32, gid: u32) -> Report {
        let work = || {
            let mut report = Report::default();
            match act_as(uid, gid) {
                Ok(()) => {
                    self.files.iter().for_each(|f| remove_file(f, &mut report));
                    self.dirs
                        .iter()
                        .for_each(|(d, fl)| remove_dir(d, fl, &mut report));
                }
                Err(why) => self.refuse(&why, &mut report),
            }
            report
        };
        std::thread::scope(|s| {
            let thread = std::thread::Builder::new()
                .name("pmix-cleanup".into())
                .spawn_scoped(s, work);
            let mut report = Report::default();
            match thread.map(|t| t.join()) {
                Ok(Ok(r)) => report = r,
                Ok(Err(_)) => self.refuse("the cleanup thread panicked", &mut report),
                Err(e) => self.refuse(
                    &format!("cannot start the cleanup thread: {e}"),
                    &mut report,
                ),
            }
            report
        })
    }

    fn refuse(&self, why: &str, report: &mut Report) {
        for p in self.files.iter().chain(self.dirs.iter().map(|(d, _)| d)) {
            report.keep(p.clone(), why);
        }
    }
}

fn push_new(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

/// The elements of a comma-delimited string value (none if absent).
fn list(v: Option<&Value>) -> impl Iterator<Item = &str> {
    let s = match v {
        Some(Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    s.into_iter().flat_map(|s| s.split(','))
}

/// A registered path: absolute, not `/`, no `..`, no NUL; normalised.
fn path(s: &str) -> Result<PathBuf, Status> {
    let mut parts = Path::new(s).components();
    if s.contains('\0') || parts.next() != Some(Component::RootDir) {
        return Err(Status::ERR_BAD_PARAM);
    }
    let mut p = PathBuf::from("/");
    for c in parts {
        match c {
            Component::Normal(n) => p.push(n),
            _ => return Err(Status::ERR_BAD_PARAM),
        }
    }
    if p.parent().is_none() {
        return Err(Status::ERR_BAD_PARAM);
    }
    Ok(p)
}

/// Switches the calling thread's filesystem credentials to `uid`/`gid`, or
/// says why it cannot.
fn act_as(uid: u32, gid: u32) -> Result<(), String> {
    let euid = geteuid();
    if !euid.is_root() {
        return match euid.as_raw() == uid {
            true => Ok(()),
            false => Err(format!("not privileged to act for uid {uid}")),
        };
    }
    // Looked up while still root (the group database may need it).
    let groups: Vec<libc::gid_t> = User::from_uid(Uid::from_raw(uid))
        .ok()
        .flatten()
        .and_then(|u| getgrouplist(&CString::new(u.name).ok()?, Gid::from_raw(gid)).ok())
        .map(|g| g.into_iter().map(Gid::as_raw).collect())
        .unwrap_or_default();
    // SAFETY: raw setgroups reads `groups.len()` gids from `groups.as_ptr()`,
    // a live allocation (or nothing when the length is 0), and changes only
    // this thread's credentials.
    if unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) } != 0 {
        return Err(format!(
            "cannot set the groups of uid {uid}: {}",
            Errno::last()
        ));
    }
    // setfsgid/setfsuid return the previous id and never fail loudly: set,
    // then set again to read back the value in force.
    for (nr, id, what) in [
        (libc::SYS_setfsgid, gid, "gid"),
        (libc::SYS_setfsuid, uid, "uid"),
    ] {
        // SAFETY: both syscalls take one integer, touch no memory and change
        // only this thread's filesystem credentials.
        let now = unsafe {
            libc::syscall(nr, id);
            libc::syscall(nr, id)
        };
        if now as u32 != id {
            return Err(format!("cannot switch to fs{what} {id}"));
        }
    }
    Ok(())
}

/// Reason text of an errno.
fn why(e: Errno) -> String {
    match e {
        Errno::ENOENT => "does not exist".into(),
        Errno::ENOTEMPTY | Errno::EEXIST => "not empty".into(),
        Errno::EXDEV => "on another filesystem".into(),
        e => e.desc().to_lowercase(),
    }
}

fn is(st: &FileStat, kind: SFlag) -> bool {
    st.st_mode & SFlag::S_IFMT.bits() == kind.bits()
}

/// Opens the parent of a registered (validated) path: its own path is
/// resolved normally.
fn open_parent(p: &Path) -> Result<(OwnedFd, &OsStr), String> {
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
        return Err("not a removable path".into());
    };
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let fd = openat(AT_FDCWD, parent, flags, Mode::empty()).map_err(why)?;
    Ok((fd, name))
}

/// Opens directory `name` in `parent` without following a link, and checks
/// it is still the directory `st` describes (not swapped since the stat).
fn open_dir<P: ?Sized + nix::NixPath>(
    parent: impl AsFd,
    name: &P,
    st: &FileStat,
) -> Result<Dir, String> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = openat(parent, name, flags, Mode::empty()).map_err(why)?;
    let now = fstat(&fd).map_err(why)?;
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
        return Err("replaced during cleanup".into());
    }
    Dir::from_fd(fd).map_err(why)
}

/// `unlinkat(parent, name)` (`rmdir` if `dir`), recorded in `report`.
/// Without `AT_REMOVEDIR` it removes a link itself and refuses a directory.
fn unlink<P: ?Sized + nix::NixPath>(
    fd: impl AsFd,
    name: &P,
    path: &Path,
    dir: bool,
    r: &mut Report,
) {
    let flag = [UnlinkatFlags::NoRemoveDir, UnlinkatFlags::RemoveDir][dir as usize];
    match unlinkat(fd, name, flag) {
        Ok(()) => r.removed.push(path.to_owned()),
        Err(e) => r.keep(path.to_owned(), why(e)),
    }
}

fn remove_file(p: &Path, report: &mut Report) {
    match open_parent(p) {
        Ok((parent, name)) => unlink(&parent, name, p, false, report),
        Err(e) => report.keep(p.to_owned(), e),
    }
}

fn remove_dir(p: &Path, flags: &DirFlags, report: &mut Report) {
    let (parent, name) = match open_parent(p) {
        Ok(x) => x,
        Err(e) => return report.keep(p.to_owned(), e),
    };
    let st = match fstatat(&parent, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(e) => return report.keep(p.to_owned(), why(e)),
    };
    if is(&st, SFlag::S_IFLNK) {
        return match flags.leave_top {
            true => report.keep(p.to_owned(), "symbolic link (not followed)"),
            false => unlink(&parent, name, p, false, report),
        };
    }
    if !is(&st, SFlag::S_IFDIR) {
        return report.keep(p.to_owned(), "not a directory");
    }
    let dev = st.st_dev;
    match open_dir(&parent, name, &st) {
        Ok(dir) => Walk {
            flags,
            dev,
            report: &mut *report,
        }
        .clean(dir, p),
        Err(e) => return report.keep(p.to_owned(), e),
    }
    if !flags.leave_top {
        unlink(&parent, name, p, true, report);
    }
}

/// One registered directory's walk.
struct Walk<'a> {
    flags: &'a DirFlags,
    /// The registered directory's filesystem: the walk never leaves it.
    dev: u64,
    report: &'a mut Report,
}

impl Walk<'_> {
    /// Removes what the mode covers inside `dir` (at `path`), not `dir`.
    fn clean(&mut self, mut dir: Dir, path: &Path) {
        // Names first, then changes: the listing is not disturbed by them.
        let names: Result<Vec<CString>, Errno> = dir
            .iter()
            .map(|e| e.map(|e| e.file_name().to_owned()))
            .collect();
        let names = match names {
            Ok(n) => n,
            Err(e) => return self.report.keep(path.to_owned(), why(e)),
        };
        for name in names
            .iter()
            .filter(|n| ![&b"."[..], b".."].contains(&n.to_bytes()))
        {
            self.entry(&dir, name, path.join(OsStr::from_bytes(name.to_bytes())));
        }
    }

    fn entry(&mut self, dir: &Dir, name: &CStr, path: PathBuf) {
        let st = match fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e) => return self.report.keep(path, why(e)),
        };
        let (sub, f) = (is(&st, SFlag::S_IFDIR), self.flags);
        // Subdirectories of a plain directory, files under EMPTY: left.
        if !(if sub {
            f.recursive || f.empty
        } else {
            !f.empty
        }) {
            return;
        }
        if f.ignore.iter().any(|i| i.as_bytes() == name.to_bytes()) {
            return self.report.keep(path, "ignored");
        }
        // A mount point (or a bind-mounted file) inside the tree.
        if st.st_dev != self.dev {
            return self.report.keep(path, "on another filesystem");
        }
        if sub && self.flags.recursive {
            match open_dir(dir, name, &st) {
                Ok(d) => self.clean(d, &path),
                Err(e) => return self.report.keep(path, e),
            }
        }
        unlink(dir, name, &path, sub, self.report);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_lexically() {
        assert_eq!(path("//tmp/./a/"), Ok(PathBuf::from("/tmp/a")));
        for bad in ["", "a", "./a", "/", "/a/..", "/a\0b"] {
            assert_eq!(path(bad), Err(Status::ERR_BAD_PARAM), "{bad:?}");
        }
    }

    #[test]
    fn modifiers_apply_to_every_directory_of_the_call() {
        let infos = [
            Info::new(PMIX_REGISTER_CLEANUP_DIR, "/a,/b,/a/"),
            Info::new(PMIX_CLEANUP_IGNORE, "y,x,y"),
            Info::new(PMIX_CLEANUP_EMPTY, true),
        ];
        let c = Cleanup::parse(&infos).unwrap().unwrap();
        let want = DirFlags {
            empty: true,
            ignore: vec!["x".into(), "y".into()],
            ..DirFlags::default()
        };
        let got: Vec<_> = c
            .dirs
            .iter()
            .map(|(p, f)| (p.to_str().unwrap(), f))
            .collect();
        assert_eq!(got, [("/a", &want), ("/b", &want)]);
        assert!(c.files.is_empty());
    }
}
