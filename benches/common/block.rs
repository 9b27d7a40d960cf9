//! The control block: a shared memfd of futex words and counters that
//! re-executed children inherit.

use super::wait::env_parse;
use super::{CTL_ENV, MAX_READERS};
use fastpmix::internals::sync::{Cell32, Cell64};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};

/// Control block line numbers (each word on its own 128-byte line).
const L_PING: usize = 0;
const L_PONG: usize = 1;
const L_DONE: usize = 2;
const L_READY: usize = 3;
pub(super) const L_ERRORS: usize = 4;
pub(super) const L_LOST: usize = 5;
const L_FLOOR_STAMP: usize = 6;
const L_STAMPS: usize = 8;
const CTL_LINES: usize = L_STAMPS + MAX_READERS;
const LINE: usize = 128;

/// A MAP_SHARED memfd of 128-byte lines that re-executed children
/// inherit (its descriptor number travels in an environment variable):
/// futex words and counters, each on its own line. Shared by the ring
/// and server benches.
pub struct Block {
    _file: File,
    _map: memmap2::MmapMut,
    base: *mut u8,
    lines: usize,
    /// The descriptor children inherit.
    pub fd: i32,
}

impl Block {
    /// A fresh zeroed block of `lines` lines.
    pub fn create(name: &std::ffi::CStr, lines: usize) -> Block {
        // SAFETY: `name` is NUL-terminated; flags 0 (no MFD_CLOEXEC) on
        // purpose: children inherit the descriptor.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
        assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let file = unsafe { File::from_raw_fd(fd) };
        file.set_len((lines * LINE) as u64)
            .expect("size the control block");
        Block::map(file, lines)
    }

    /// The block a parent passed down in `env` (child side).
    pub fn inherit(env: &str, lines: usize) -> Block {
        let fd: i32 = env_parse(env);
        // SAFETY: the parent created this memfd without CLOEXEC and named
        // its number in the environment; this process owns its copy.
        let file = unsafe { File::from_raw_fd(fd) };
        Block::map(file, lines)
    }

    fn map(file: File, lines: usize) -> Block {
        // SAFETY: a memfd mapped MAP_SHARED (map_mut) between this process
        // and its parent/children; every word in it is accessed only
        // through atomic cells (`Cell32`/`Cell64`), never through plain
        // references.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.expect("map control block");
        assert!(map.len() >= lines * LINE);
        let base = map.as_mut_ptr();
        let fd = file.as_raw_fd();
        Block {
            _file: file,
            _map: map,
            base,
            lines,
            fd,
        }
    }

    /// The 32-bit word at the start of `line`.
    pub fn c32(&self, line: usize) -> &Cell32 {
        assert!(line < self.lines);
        // SAFETY: in bounds (line < lines, mapping that long), 128-byte
        // aligned (page-aligned base); the mapping lives as long as `self`;
        // all processes access the word only atomically.
        unsafe { Cell32::at(self.base.add(line * LINE) as *mut u32) }
    }

    /// The 64-bit word at the start of `line`.
    pub fn c64(&self, line: usize) -> &Cell64 {
        assert!(line < self.lines);
        // SAFETY: as for `c32`, for a u64 word.
        unsafe { Cell64::at(self.base.add(line * LINE) as *mut u64) }
    }
}

/// This bench's control block: futex words, counters and the results
/// area (one latency per reader).
pub struct Ctl {
    block: Block,
    pub(super) fd: i32,
}

impl Ctl {
    /// A fresh zeroed block.
    pub fn create() -> Ctl {
        Ctl::wrap(Block::create(c"fastpmix-ring-bench", CTL_LINES))
    }

    /// The block a parent passed down (child side).
    pub(super) fn from_env() -> Ctl {
        Ctl::wrap(Block::inherit(CTL_ENV, CTL_LINES))
    }

    fn wrap(block: Block) -> Ctl {
        let fd = block.fd;
        Ctl { block, fd }
    }

    pub(super) fn c32(&self, line: usize) -> &Cell32 {
        self.block.c32(line)
    }

    pub(super) fn c64(&self, line: usize) -> &Cell64 {
        self.block.c64(line)
    }

    pub(super) fn ping(&self) -> &Cell32 {
        self.c32(L_PING)
    }
    pub(super) fn pong(&self) -> &Cell32 {
        self.c32(L_PONG)
    }
    pub(super) fn done(&self) -> &Cell32 {
        self.c32(L_DONE)
    }
    pub(super) fn ready(&self) -> &Cell32 {
        self.c32(L_READY)
    }
    /// Corrupt records the readers reported.
    pub fn errors(&self) -> u64 {
        self.c64(L_ERRORS).load_relaxed()
    }
    /// Records the readers lost to lag.
    pub fn lost(&self) -> u64 {
        self.c64(L_LOST).load_relaxed()
    }
    pub(super) fn floor_stamp(&self) -> &Cell64 {
        self.c64(L_FLOOR_STAMP)
    }
    pub(super) fn stamp(&self, i: usize) -> &Cell64 {
        assert!(i < MAX_READERS);
        self.c64(L_STAMPS + i)
    }
}
