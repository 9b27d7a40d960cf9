//! A node segment's life: created with `shm_open` (mode 0600, unique name per
//! server instance), mapped MAP_SHARED, initialised, published; opened by
//! readers with validation; unlinked when the owner drops it; stale segments
//! of dead servers detected and removed.

use super::region::{Backing, OpenError, Region};
use shm_layout::{Geometry, SegmentHeader, INIT_COMPLETE};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::FromRawFd;
use std::time::Duration;

/// Prefix of every fastpmix segment name.
pub const NAME_PREFIX: &str = "/fastpmix-";

/// Why a segment could not be created or opened.
#[derive(Debug)]
pub enum SegmentError {
    /// A system call failed.
    Sys {
        /// Which call.
        call: &'static str,
        /// The error.
        err: io::Error,
    },
    /// The geometry is invalid.
    Geometry(&'static str),
    /// The segment exists but is not one this build can read.
    Open(OpenError),
    /// The shared-memory filesystem has no room for the segment's pages
    /// (full, or a quota reached): reserving them failed at creation, so
    /// no page can be missing later, when touching it would be a SIGBUS.
    NoSpace {
        /// The segment's size.
        bytes: u64,
        /// What `posix_fallocate` said.
        err: io::Error,
    },
}

impl std::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SegmentError::Sys { call, err } => write!(f, "{call} failed: {err}"),
            SegmentError::Geometry(w) => write!(f, "invalid ring geometry: {w}"),
            SegmentError::Open(e) => write!(f, "{e}"),
            SegmentError::NoSpace { bytes, err } => write!(
                f,
                "no room for a {bytes}-byte shared-memory segment in /dev/shm \
                 (posix_fallocate: {err}): the filesystem is full or a quota is reached"
            ),
        }
    }
}

impl std::error::Error for SegmentError {}

fn sys(call: &'static str) -> SegmentError {
    SegmentError::Sys {
        call,
        err: io::Error::last_os_error(),
    }
}

fn random_u64() -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: getrandom writes at most 8 bytes into the 8-byte buffer.
    let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
    if n == 8 {
        u64::from_ne_bytes(b)
    } else {
        // No entropy syscall: uniqueness then rests on pid + counter + time.
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    }
}

pub(crate) fn shm_open(name: &str, flags: i32, mode: libc::mode_t) -> Result<File, SegmentError> {
    let c = CString::new(name).map_err(|_| SegmentError::Geometry("segment name contains NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    let fd = unsafe { libc::shm_open(c.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(sys("shm_open"));
    }
    // SAFETY: `fd` is a fresh descriptor we own exclusively.
    Ok(unsafe { File::from_raw_fd(fd) })
}

pub(crate) fn shm_unlink(name: &str) -> io::Result<()> {
    let c = CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    if unsafe { libc::shm_unlink(c.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Reserves every page of the `len`-byte shared-memory file now. A sized
/// but sparse tmpfs file gets its pages when they are first touched, and
/// when `/dev/shm` is full by then (any local user can fill it) the
/// touching process dies of SIGBUS; reserved, ENOSPC is an error here.
pub(crate) fn commit(file: &File, len: u64) -> Result<(), SegmentError> {
    use std::os::fd::AsRawFd;
    let len =
        libc::off_t::try_from(len).map_err(|_| SegmentError::Geometry("segment too large"))?;
    // SAFETY: plain syscall on a descriptor we own; it returns the error
    // number instead of setting errno.
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len) };
    match r {
        0 => Ok(()),
        libc::ENOSPC | libc::EDQUOT | libc::EFBIG | libc::ENOMEM => Err(SegmentError::NoSpace {
            bytes: len as u64,
            err: io::Error::from_raw_os_error(r),
        }),
        _ => Err(SegmentError::Sys {
            call: "posix_fallocate",
            err: io::Error::from_raw_os_error(r),
        }),
    }
}

/// Creates shm object `name` (`O_EXCL`, mode 0600) of `len` bytes, its
/// pages reserved (a full `/dev/shm` is an error here, never a SIGBUS
/// later), and maps it shared; on any failure the name is unlinked again.
/// The creator's liveness lock is held while the returned file is open.
/// For the objects beside a segment (data-store chunks, fence barriers).
pub(crate) fn create_object(
    name: &str,
    len: u64,
) -> Result<(File, memmap2::MmapMut), SegmentError> {
    let file = shm_open(name, libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, 0o600)?;
    // The liveness lock while the object is still empty (see
    // `Segment::create`); held as long as the returned file is open.
    let _ = hold_alive_lock(&file);
    let made = (|| {
        file.set_len(len).map_err(|err| SegmentError::Sys {
            call: "ftruncate",
            err,
        })?;
        commit(&file, len)?;
        map(&file)
    })();
    match made {
        Ok(m) => Ok((file, m)),
        Err(e) => {
            let _ = shm_unlink(name);
            Err(e)
        }
    }
}

pub(crate) fn map(file: &File) -> Result<memmap2::MmapMut, SegmentError> {
    // SAFETY: the file is a POSIX shared-memory object. Other processes do
    // change its contents while mapped — that is its purpose — and every
    // access to the mapping goes through atomic cells or the ring's pin
    // protocol (docs/shm-format.md), never through plain shared references
    // to mutable data. MmapMut::map_mut maps MAP_SHARED.
    unsafe { memmap2::MmapMut::map_mut(file) }
        .map_err(|err| SegmentError::Sys { call: "mmap", err })
}

/// A node segment. The creator owns it and unlinks the name on drop.
pub struct Segment {
    name: String,
    region: Region,
    owner: bool,
    /// The creator's descriptor, holding the liveness lock
    /// ([`hold_alive_lock`]) while the segment lives.
    _alive: Option<File>,
}

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment")
            .field("name", &self.name)
            .field("owner", &self.owner)
            .finish()
    }
}

impl Segment {
    /// Creates, sizes, maps and initialises a new segment with a name unique
    /// to this server instance, owner-only (0600).
    pub fn create(g: Geometry) -> Result<Segment, SegmentError> {
        static COUNTER: std::sync::Mutex<u64> = std::sync::Mutex::new(0);
        let o = g.validate().map_err(SegmentError::Geometry)?;
        let n = {
            let mut c = COUNTER.lock().unwrap_or_else(|e| e.into_inner());
            *c += 1;
            *c
        };
        // SAFETY: getuid cannot fail.
        let (uid, pid) = (unsafe { libc::getuid() }, std::process::id());
        let generation = random_u64();
        let name = format!("{NAME_PREFIX}{uid}-{pid}-{n}-{generation:016x}");
        let file = shm_open(&name, libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, 0o600)?;
        // The liveness lock first (best effort: without it, stale removal
        // falls back on the pid); until then the object is empty, which
        // stale removal leaves alone while it is young.
        let _ = hold_alive_lock(&file);
        let made = (|| {
            file.set_len(o.total).map_err(|err| SegmentError::Sys {
                call: "ftruncate",
                err,
            })?;
            commit(&file, o.total)?;
            let mm = map(&file)?;
            Ok(Region::initialise(
                Backing::Mapped(mm),
                g,
                o,
                pid,
                uid,
                generation,
            ))
        })();
        match made {
            Ok(region) => Ok(Segment {
                name,
                region,
                owner: true,
                _alive: Some(file),
            }),
            Err(e) => {
                let _ = shm_unlink(&name);
                Err(e)
            }
        }
    }

    /// Opens an existing segment read-write (readers update their cursor),
    /// waiting up to `timeout` for its creator to finish initialising.
    pub fn open(name: &str, timeout: Duration) -> Result<Segment, SegmentError> {
        let file = shm_open(name, libc::O_RDWR, 0)?;
        let mm = map(&file)?;
        let region = Region::open(Backing::Mapped(mm), timeout).map_err(SegmentError::Open)?;
        Ok(Segment {
            name: name.to_owned(),
            region,
            owner: false,
            _alive: None,
        })
    }

    /// Opens an existing segment read-only, for inspection: only
    /// [`Region::state`], [`Region::header`] and [`Region::copy_record`] may
    /// be used on it (any store would fault).
    pub fn open_read_only(name: &str, timeout: Duration) -> Result<Segment, SegmentError> {
        let file = shm_open(name, libc::O_RDONLY, 0)?;
        // SAFETY: as in `map`, read-only: this process only loads.
        let mm = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|err| SegmentError::Sys { call: "mmap", err })?;
        let region = Region::open(Backing::ReadOnly(mm), timeout).map_err(SegmentError::Open)?;
        Ok(Segment {
            name: name.to_owned(),
            region,
            owner: false,
            _alive: None,
        })
    }

    /// Gives the segment to another user (mode stays 0600): only `uid` (and
    /// root) can map it afterwards. Needs the privilege to chown.
    pub fn set_owner(&self, uid: u32, gid: u32) -> Result<(), SegmentError> {
        std::os::unix::fs::chown(format!("/dev/shm/{}", self.name), Some(uid), Some(gid))
            .map_err(|err| SegmentError::Sys { call: "chown", err })
    }

    /// The name to pass to [`Segment::open`] (e.g. through the environment).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The mapped region.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Removes segments of this user whose server process is gone. Returns
    /// the names removed. Segments of live servers, of other users, or that
    /// cannot be read are left alone.
    pub fn remove_stale() -> io::Result<Vec<String>> {
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        let mut removed = Vec::new();
        for entry in std::fs::read_dir("/dev/shm")? {
            let Ok(entry) = entry else { continue };
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let Some(rest) = file_name.strip_prefix(&NAME_PREFIX[1..]) else {
                continue;
            };
            if !rest.starts_with(&format!("{uid}-")) {
                continue;
            }
            let name = format!("/{file_name}");
            if Self::server_is_dead(&name) == Some(true) && shm_unlink(&name).is_ok() {
                removed.push(name);
            }
        }
        Ok(removed)
    }

    /// `Some(true)` when the segment's creator process no longer exists.
    fn server_is_dead(name: &str) -> Option<bool> {
        let file = shm_open(name, libc::O_RDONLY, 0).ok()?;
        // A creator that runs in another PID namespace (a container, a
        // test harness's namespace sharing /dev/shm) has a pid that means
        // nothing here: its liveness lock says it is alive.
        if alive_lock_held(&file) {
            return Some(false);
        }
        let meta = file.metadata().ok()?;
        if meta.len() == 0 && too_young_to_be_stale(&meta) {
            // Just created, its lock perhaps not taken yet (a creator in
            // another PID namespace has a pid that means nothing here).
            return Some(false);
        }
        if name.contains("-kv") || name.ends_with("-bar") {
            // A data-store chunk (`store::chunk`) or a fence barrier
            // (`barrier::area`): its header is not a segment header; the
            // pid in the name is its server's.
            return name
                .split('-')
                .nth(2)
                .and_then(|p| p.parse().ok())
                .map(pid_is_dead);
        }
        if (meta.len() as usize) < std::mem::size_of::<SegmentHeader>() {
            // Never sized: its creator died between shm_open and ftruncate,
            // or is in between right now; the pid is in the name.
            return name
                .split('-')
                .nth(2)
                .and_then(|p| p.parse().ok())
                .map(pid_is_dead);
        }
        // SAFETY: read-only shared mapping of a shm object; we only read the
        // header's pid and init word, which never change after init-complete.
        let mm = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        // SAFETY: the mapping is at least a header long (checked above).
        let h = unsafe { &*(mm.as_ptr() as *const SegmentHeader) };
        if h.init_complete != INIT_COMPLETE {
            return name
                .split('-')
                .nth(2)
                .and_then(|p| p.parse().ok())
                .map(pid_is_dead);
        }
        Some(pid_is_dead(h.server_pid))
    }
}

/// Takes a shared `flock` on `file` for as long as the descriptor stays
/// open: the creator's liveness lock, which [`alive_lock_held`] sees from
/// any process, in any PID namespace.
///
/// Another server's probe ([`alive_lock_held`]) holds an exclusive lock
/// for two system calls: a creator that meets one tries again (up to
/// about 100 ms) instead of living without its lock, which would let that
/// prober, in another PID namespace, take it for dead.
pub(crate) fn hold_alive_lock(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut tries = 0;
    loop {
        // SAFETY: plain syscall on a descriptor the caller owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        tries += 1;
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) || tries >= 1000 {
            return Err(e);
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
}

/// An empty shm object, or a control directory without its socket,
/// younger than this is never taken for stale: between its creation and
/// its liveness lock, a live server's looks like a dead one's to a process
/// in another PID namespace.
pub(crate) const STALE_MIN_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether the file or directory `m` describes was modified less than
/// [`STALE_MIN_AGE`] ago (or its time cannot be read: kept).
pub(crate) fn too_young_to_be_stale(m: &std::fs::Metadata) -> bool {
    m.modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < STALE_MIN_AGE)
}

/// Whether some process holds the liveness lock of the file `file` opens:
/// an exclusive lock cannot be taken without waiting.
pub(crate) fn alive_lock_held(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: plain syscalls on a descriptor the caller owns; a lock taken
    // is released at once.
    unsafe {
        if libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) == 0 {
            libc::flock(fd, libc::LOCK_UN);
            return false;
        }
    }
    io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK)
}

fn pid_is_dead(pid: u32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

impl Drop for Segment {
    fn drop(&mut self) {
        if self.owner {
            let _ = shm_unlink(&self.name);
        }
    }
}
