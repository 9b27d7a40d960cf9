//! A test script of the project's own that runs real daemons
//! (`tools/slurm-test`, `tools/ompi-test`): run once per test binary, with
//! this build's library, and its "check NAME LAYOUT STATUS DETAIL" lines
//! collected for the tests to assert one by one.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one run of the script said.
pub struct Run {
    /// Why it did not run, if it did not.
    pub skipped: Option<String>,
    /// Its "check NAME LAYOUT STATUS DETAIL" lines.
    pub checks: Vec<String>,
    /// Everything it printed, for failure messages.
    pub all: String,
}

/// Kills the script's process group unless it ended: the daemons live in a
/// PID namespace whose first process is the script's, so nothing they
/// started outlives it.
struct KillOnDrop(Option<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            // SAFETY: kill(2) of the process group this test created (the
            // script's own, see `process_group(0)`); no memory involved.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
        }
    }
}

/// Runs `tools/<script> --lib <this build's libfastpmix.so>`, at most
/// `limit`; skipped (without running) when the environment variable `off`
/// is `0`. Panics when the script fails or overruns (its process group is
/// killed).
pub fn run_script(script: &str, off: &str, limit: Duration) -> Run {
    if std::env::var(off).as_deref() == Ok("0") {
        return Run {
            skipped: Some(format!("{off}=0")),
            checks: Vec::new(),
            all: String::new(),
        };
    }
    let lib = super::built_lib("libfastpmix.so");
    let mut cmd = Command::new(super::root().join("tools").join(script));
    cmd.arg("--lib")
        .arg(&lib)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawn tools/{script}: {e}"));
    let mut guard = KillOnDrop(Some(child.id() as i32));
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        // Dropping the guard on this panic kills the process group.
        assert!(
            start.elapsed() < limit,
            "tools/{script} did not finish within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    guard.0 = None;
    let stdout = reader.join().expect("stdout reader");
    let stderr = err_reader.join().expect("stderr reader");
    let all = format!("{stdout}\n--- stderr ---\n{stderr}");
    assert!(status.success(), "tools/{script} failed ({status}):\n{all}");
    let skipped = stdout
        .lines()
        .find_map(|l| l.strip_prefix("skip: "))
        .map(str::to_owned);
    let checks = stdout
        .lines()
        .filter(|l| l.starts_with("check "))
        .map(str::to_owned)
        .collect();
    Run {
        skipped,
        checks,
        all,
    }
}
