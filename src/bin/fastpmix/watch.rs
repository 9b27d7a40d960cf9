//! One thread watches every rank of a `fastpmix run` job: it forwards the
//! ranks' stdout and stderr, each line behind its rank's `[r] ` prefix, and
//! reaps each rank when its pidfd says it ended. One thread for the whole
//! job however many ranks: a thread per pipe and per rank was three per
//! rank (3 072 for a 1 024-rank job), and a small `RLIMIT_NPROC` stopped
//! the job.
//!
//! Output is forwarded as bytes: any encoding, binary data, lines of any
//! length, a last line without a newline (which gets one, so the next
//! prefix starts a line). A pipe is read to its end whatever happens to the
//! launcher's own output (a closed stdout only loses our copy): closing it
//! early would kill the rank with SIGPIPE.

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ExitStatus};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// A line longer than this is passed on in pieces: its prefix once, then
/// its bytes as they come (another rank's line may then land inside it).
/// Below it, a line is written whole, so ranks' lines never mix.
const WHOLE_LINE: usize = 4 << 20;

/// What the watcher is told about a rank it should watch.
struct Rank {
    rank: u32,
    pidfd: Arc<OwnedFd>,
    out: OwnedFd,
    err: OwnedFd,
}

/// Called with a rank and its exit status, on the watcher's thread.
pub type OnExit = Box<dyn Fn(u32, ExitStatus) + Send>;

/// The job's watcher thread, seen from the launcher.
pub struct Watcher {
    add: Option<mpsc::Sender<Rank>>,
    wake: Arc<OwnedFd>,
    /// Said when the thread has nothing left to watch.
    done: mpsc::Receiver<()>,
    /// When output last arrived.
    active: Arc<Mutex<Instant>>,
}

use fastpmix::internals::sync::lock;

impl Watcher {
    /// Starts the thread; `on_exit` hears of each rank's end.
    pub fn start(on_exit: OnExit) -> Result<Watcher, String> {
        // SAFETY: eventfd takes two integers; the result is checked.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(format!(
                "cannot make the watcher's eventfd: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: `fd` is a new descriptor nothing else owns.
        let wake = Arc::new(unsafe { OwnedFd::from_raw_fd(fd) });
        let (add, added) = mpsc::channel();
        let (said, done) = mpsc::channel();
        let active = Arc::new(Mutex::new(Instant::now()));
        let (w, a) = (wake.clone(), active.clone());
        std::thread::Builder::new()
            .name("fastpmix-watch".into())
            .spawn(move || {
                Loop::new(w, added, a, on_exit).run();
                let _ = said.send(());
            })
            .map_err(|e| format!("cannot start the thread that watches the ranks: {e}"))?;
        Ok(Watcher {
            add: Some(add),
            wake,
            done,
            active,
        })
    }

    /// Watches `child` as `rank`: takes its stdout and stderr pipes;
    /// `pidfd` names it (the launcher signals through the same one).
    pub fn watch(&self, rank: u32, child: &mut Child, pidfd: Arc<OwnedFd>) -> Result<(), String> {
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(format!("rank {rank}: no output pipes"));
        };
        let r = Rank {
            rank,
            pidfd,
            out: out.into(),
            err: err.into(),
        };
        self.add
            .as_ref()
            .and_then(|a| a.send(r).ok())
            .ok_or_else(|| "the watcher thread is gone".to_string())?;
        self.ring();
        Ok(())
    }

    fn ring(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: writes 8 bytes from a live buffer to our eventfd; a full
        // counter (EAGAIN) already means "wake up".
        unsafe { libc::write(self.wake.as_raw_fd(), one.as_ptr().cast(), one.len()) };
    }

    /// After every rank ended: waits until their pipes are drained, however
    /// long that takes while bytes keep coming; a descendant that keeps a
    /// pipe open and silent gets `quiet`.
    pub fn drain(mut self, quiet: Duration) {
        self.add = None;
        self.ring();
        loop {
            let until = *lock(&self.active) + quiet;
            match self
                .done
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Err(mpsc::RecvTimeoutError::Timeout)
                    if Instant::now() < *lock(&self.active) + quiet => {}
                _ => return,
            }
        }
    }
}

/// One pipe being forwarded.
struct Pipe {
    fd: OwnedFd,
    err: bool,
    lines: Prefixer,
}

/// The watcher thread's state.
struct Loop {
    wake: Arc<OwnedFd>,
    added: mpsc::Receiver<Rank>,
    /// No more ranks will be added.
    closed: bool,
    pipes: Vec<Pipe>,
    procs: Vec<(u32, Arc<OwnedFd>)>,
    active: Arc<Mutex<Instant>>,
    on_exit: OnExit,
    chunk: Vec<u8>,
}

impl Loop {
    fn new(
        wake: Arc<OwnedFd>,
        added: mpsc::Receiver<Rank>,
        active: Arc<Mutex<Instant>>,
        on_exit: OnExit,
    ) -> Loop {
        Loop {
            wake,
            added,
            closed: false,
            pipes: Vec::new(),
            procs: Vec::new(),
            active,
            on_exit,
            chunk: vec![0; 64 << 10],
        }
    }

    fn run(mut self) {
        let mut fds: Vec<libc::pollfd> = Vec::new();
        while !(self.closed && self.pipes.is_empty() && self.procs.is_empty()) {
            fds.clear();
            let watch = |fd: &OwnedFd| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            fds.push(watch(&self.wake));
            fds.extend(self.pipes.iter().map(|p| watch(&p.fd)));
            fds.extend(self.procs.iter().map(|(_, fd)| watch(fd)));
            // SAFETY: `fds` is a live array of `fds.len()` pollfds.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if n < 0 {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                // Nothing to wait on can be made to work: give up watching
                // (the ranks keep running; the launcher's deadlines apply).
                eprintln!(
                    "fastpmix: the watcher cannot poll: {}",
                    std::io::Error::last_os_error()
                );
                return;
            }
            let ready = |i: usize| fds[i].revents != 0;
            // Back to front, so removing one keeps the others' indices.
            let np = self.pipes.len();
            for k in (0..self.procs.len()).rev() {
                if ready(1 + np + k) {
                    self.reap(k);
                }
            }
            for k in (0..np).rev() {
                if ready(1 + k) {
                    self.read(k);
                }
            }
            if ready(0) {
                self.take_added();
            }
        }
    }

    fn take_added(&mut self) {
        let mut buf = [0u8; 8];
        // SAFETY: reads at most 8 bytes into a live buffer; the eventfd is
        // non-blocking (EAGAIN when already read).
        unsafe { libc::read(self.wake.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        loop {
            match self.added.try_recv() {
                Ok(r) => {
                    for (fd, err) in [(r.out, false), (r.err, true)] {
                        self.pipes.push(Pipe {
                            fd,
                            err,
                            lines: Prefixer::new(r.rank),
                        });
                    }
                    self.procs.push((r.rank, r.pidfd));
                }
                Err(mpsc::TryRecvError::Empty) => return,
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.closed = true;
                    return;
                }
            }
        }
    }

    /// Reads what pipe `k` has; at its end, forwards the rest and drops it.
    fn read(&mut self, k: usize) {
        let p = &mut self.pipes[k];
        // SAFETY: reads into a live buffer of its own length; the pipe is
        // readable (poll said so), so this does not block.
        let n = unsafe {
            libc::read(
                p.fd.as_raw_fd(),
                self.chunk.as_mut_ptr().cast(),
                self.chunk.len(),
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error().kind();
            if e == std::io::ErrorKind::Interrupted || e == std::io::ErrorKind::WouldBlock {
                return;
            }
        }
        if n > 0 {
            *lock(&self.active) = Instant::now();
            let batch = p.lines.feed(&self.chunk[..n as usize]);
            emit(p.err, batch);
            return;
        }
        let p = self.pipes.swap_remove(k);
        let mut lines = p.lines;
        emit(p.err, lines.finish());
    }

    /// Reaps process `k`, whose pidfd is readable: it ended.
    fn reap(&mut self, k: usize) {
        let (rank, fd) = self.procs.swap_remove(k);
        // SAFETY: siginfo_t is plain data, zeroed before waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child's pidfd with a live out-param.
        let r = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                fd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED,
            )
        };
        if r != 0 {
            // Not ours to reap after all (reaped elsewhere): an unknown end.
            (self.on_exit)(rank, ExitStatus::from_raw(1 << 8));
            return;
        }
        // SAFETY: waitid filled a SIGCHLD siginfo, whose status field is set.
        let status = unsafe { info.si_status() };
        let raw = match info.si_code {
            libc::CLD_EXITED => (status & 0xff) << 8,
            libc::CLD_DUMPED => (status & 0x7f) | 0x80,
            _ => status & 0x7f,
        };
        (self.on_exit)(rank, ExitStatus::from_raw(raw));
    }
}

/// Writes a batch of lines to our stdout or stderr; errors are ignored (the
/// rank's pipe is still drained).
fn emit(err: bool, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    if err {
        let _ = std::io::stderr().lock().write_all(bytes);
    } else {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(bytes);
        let _ = o.flush();
    }
}

/// Splits a byte stream into lines and puts `[rank] ` before each.
struct Prefixer {
    prefix: Vec<u8>,
    /// The line begun and not yet ended.
    partial: Vec<u8>,
    /// `partial`'s prefix (and bytes before it) already went out: the line
    /// was longer than [`WHOLE_LINE`].
    started: bool,
    /// The batch handed out by the last call.
    out: Vec<u8>,
}

impl Prefixer {
    fn new(rank: u32) -> Self {
        Prefixer {
            prefix: format!("[{rank}] ").into_bytes(),
            partial: Vec::new(),
            started: false,
            out: Vec::new(),
        }
    }

    /// The complete lines that `bytes` ends, prefixed (and the start of an
    /// over-long line).
    fn feed(&mut self, mut bytes: &[u8]) -> &[u8] {
        self.out.clear();
        while let Some(i) = bytes.iter().position(|&b| b == b'\n') {
            self.start_line();
            self.out.append(&mut self.partial);
            self.out.extend_from_slice(&bytes[..=i]);
            self.started = false;
            bytes = &bytes[i + 1..];
        }
        self.partial.extend_from_slice(bytes);
        if self.partial.len() >= WHOLE_LINE {
            self.start_line();
            self.out.append(&mut self.partial);
            self.started = true;
        }
        &self.out
    }

    /// What is left at the end of the stream, ended with a newline.
    fn finish(&mut self) -> &[u8] {
        self.out.clear();
        if self.started || !self.partial.is_empty() {
            self.start_line();
            self.out.append(&mut self.partial);
            self.out.push(b'\n');
            self.started = false;
        }
        &self.out
    }

    fn start_line(&mut self) {
        if !self.started {
            self.out.extend_from_slice(&self.prefix);
        }
    }
}
