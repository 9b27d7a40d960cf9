//! Private directories for a server's control socket and a launcher's job
//! records.
//!
//! The shared temporary directory (`$TMPDIR`, `/tmp`) is writable by every
//! user, so a name there that another user can predict is a name that user
//! can take first: a directory they own, a file they can read, a FIFO that
//! blocks the writer, a symbolic link to somewhere else. Everything fastpmix
//! keeps under `$TMPDIR` therefore lives in a directory made by
//! `mkdtemp(3)`: a name with a random part, created atomically and only if
//! it did not exist, mode 0700, owned by the caller. Nothing of another user
//! is ever used or removed. See docs/architecture.md ("Control channel").

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The shared temporary directory: `$TMPDIR`, else `/tmp`.
pub fn temp_base() -> PathBuf {
    std::env::var_os("TMPDIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| "/tmp".into())
}

/// Creates `<base>/<prefix>XXXXXX` with `mkdtemp(3)` (mode 0700, random
/// suffix, never an existing name) and checks what was made: a directory,
/// not a link, owned by this process's effective uid, with no access for
/// group or others. The error names the directory it could not make.
pub fn private_dir(base: &Path, prefix: &str) -> io::Result<PathBuf> {
    let mut template = base.join(format!("{prefix}XXXXXX")).into_os_string();
    template.push("\0");
    let mut bytes = template.into_vec();
    let named = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!(
                "cannot create a private directory {}/{prefix}XXXXXX: {e}",
                base.display()
            ),
        )
    };
    // SAFETY: `bytes` is a writable NUL-terminated template ending in
    // "XXXXXX" (mkdtemp's one requirement); mkdtemp replaces those six bytes
    // in place and never writes past the NUL.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(named(io::Error::last_os_error()));
    }
    bytes.pop(); // the NUL
    let dir = PathBuf::from(OsString::from_vec(bytes));
    if let Err(e) = check_private(&dir) {
        let _ = std::fs::remove_dir(&dir);
        return Err(named(e));
    }
    Ok(dir)
}

/// Checks that `dir` is a directory (not a symbolic link to one) owned by
/// this process's effective uid that no other user may write into (it may
/// let them search it: mode 0711 or 0755).
pub fn check_private(dir: &Path) -> io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if !m.file_type().is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a directory", dir.display()),
        ));
    }
    if m.uid() != euid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} belongs to uid {}, not to this process (uid {euid})",
                dir.display(),
                m.uid()
            ),
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is writable by other users (mode {:o})",
                dir.display(),
                m.mode() & 0o7777
            ),
        ));
    }
    Ok(())
}

/// Sets `dir`'s permission bits. The path was made by [`private_dir`]:
/// only its owner can replace it with anything else.
pub fn set_dir_mode(dir: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
}

/// Opens `dir` and takes its liveness lock: while the returned descriptor
/// is open, [`remove_stale`] in any process leaves the directory alone.
pub fn hold(dir: &Path) -> io::Result<std::fs::File> {
    let f = std::fs::File::open(dir)?;
    crate::ring::hold_alive_lock(&f)?;
    Ok(f)
}

/// Removes what killed servers of this user left under `base`: in each
/// directory `fastpmix-<pid>-XXXXXX` of this user whose process `<pid>`
/// is gone, the socket `ctl` and an empty `job.records`, then the
/// directory if nothing else is left (job records stay). Directories of
/// other users, of live processes and of other names are not touched.
pub fn remove_stale(base: &Path) {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fastpmix-"))
            .and_then(|r| r.split_once('-'))
            .filter(|(_, suffix)| suffix.len() == 6)
            .and_then(|(p, _)| p.parse::<i32>().ok())
        else {
            continue;
        };
        let dir = e.path();
        let Ok(m) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !m.is_dir() || m.uid() != euid {
            continue;
        }
        // Just made, its socket not bound (and perhaps its lock not taken)
        // yet: a live server's, whatever its pid says here.
        if !dir.join("ctl").exists() && crate::ring::too_young_to_be_stale(&m) {
            continue;
        }
        // SAFETY: signal 0 only checks for existence and permission.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        // A server in another PID namespace (sharing this /tmp) has a pid
        // that means nothing here: its liveness lock on the directory says
        // it is alive.
        let held = std::fs::File::open(&dir).is_ok_and(|f| crate::ring::alive_lock_held(&f));
        if !gone || held {
            continue;
        }
        use std::os::unix::fs::FileTypeExt;
        let ctl = dir.join("ctl");
        if std::fs::symlink_metadata(&ctl).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(&ctl);
        }
        let records = dir.join("job.records");
        if std::fs::symlink_metadata(&records).is_ok_and(|m| m.is_file() && m.len() == 0) {
            let _ = std::fs::remove_file(&records);
        }
        let _ = std::fs::remove_dir(&dir);
    }
}
