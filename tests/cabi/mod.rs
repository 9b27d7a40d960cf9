//! Builds C, C++ and Fortran programs against `include/` and libfastpmix,
//! and runs them under `fastpmix run`. Shared by the tests/c_*.rs suites.
//!
//! The library is the one cargo built for this test run (target/<profile>/
//! libfastpmix.so, next to the `fastpmix` binary). Its soname is
//! libfastpmix.so.0, so programs are linked through a private directory
//! holding that name, with an rpath to it: nothing is installed anywhere.
#![allow(dead_code)]

pub mod script;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// The launcher.
pub const FASTPMIX: &str = env!("CARGO_BIN_EXE_fastpmix");

/// The repository root (for `include/` and `tests/c/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `include/`.
pub fn include_dir() -> PathBuf {
    root().join("include")
}

/// The directory cargo put the binary and the library in.
pub fn target_dir() -> PathBuf {
    Path::new(FASTPMIX)
        .parent()
        .expect("binary dir")
        .to_path_buf()
}

/// A per-process scratch directory for build outputs, under cargo's
/// scratch space for integration tests (target/tmp: never in the repo,
/// gone with `cargo clean`). A test process cannot remove its own at exit
/// (its programs may still run), so each one removes those of processes
/// that have ended: one directory per live test process, not one per run.
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
        prune_dead(base);
        let d = base.join(format!("fastpmix-cabi-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    })
}

/// Removes `base/fastpmix-cabi-PID` of every PID that is not running.
fn prune_dead(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("fastpmix-cabi-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            // Another test process may prune the same one: either wins.
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// This test run's build of a library file (`libfastpmix.so`, `.a`): cargo
/// test compiles every crate type of the library into target/<profile>/deps
/// (only `cargo build` copies them up a level, where they may be older).
pub fn built_lib(name: &str) -> PathBuf {
    let deps = target_dir().join("deps").join(name);
    let p = if deps.exists() {
        deps
    } else {
        target_dir().join(name)
    };
    assert!(p.exists(), "{} is not built", p.display());
    p
}

/// A directory laid out as target/<profile> for `tools/install`'s
/// FASTPMIX_INSTALL_FROM: this run's library files and launcher.
pub fn install_from() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = scratch().join("install-from");
        std::fs::create_dir_all(&d).expect("install-from dir");
        for (name, src) in [
            ("libfastpmix.so", built_lib("libfastpmix.so")),
            ("libfastpmix.a", built_lib("libfastpmix.a")),
            ("fastpmix", PathBuf::from(FASTPMIX)),
        ] {
            let link = d.join(name);
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&src, &link).expect("install-from link");
        }
        d
    })
}

/// A directory with `libfastpmix.so.0` (the soname) → the built library.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let so = built_lib("libfastpmix.so");
        let d = scratch().join("lib");
        std::fs::create_dir_all(&d).expect("lib dir");
        let link = d.join("libfastpmix.so.0");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&so, &link).expect("soname link");
        let _ = std::fs::remove_file(d.join("libfastpmix.so"));
        std::os::unix::fs::symlink(&so, d.join("libfastpmix.so")).expect("link");
        d
    })
}

/// Which compiler drives a build.
#[derive(Clone, Copy, Debug)]
pub enum Lang {
    /// `cc -std=c11`.
    C,
    /// `c++ -std=c++17`.
    Cxx,
    /// `gfortran` (free form, F2008).
    Fortran,
}

/// Compiles and links `sources` (relative to the repo root, or absolute)
/// into `scratch()/name`, against the shared library; panics with the
/// compiler's output on failure. Warnings are errors for C and C++.
pub fn build(name: &str, lang: Lang, sources: &[&str], extra: &[&str]) -> PathBuf {
    let out = scratch().join(name);
    let (cc, std_flags): (&str, &[&str]) = match lang {
        Lang::C => ("cc", &["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"]),
        Lang::Cxx => ("c++", &["-std=c++17", "-Wall", "-Wextra", "-Werror", "-g"]),
        Lang::Fortran => (
            "gfortran",
            &["-std=f2008", "-Wall", "-g", "-fno-range-check"],
        ),
    };
    let mut cmd = Command::new(cc);
    cmd.args(std_flags).arg("-I").arg(include_dir());
    if matches!(lang, Lang::Fortran) {
        // Where gfortran writes (and finds) .mod files.
        cmd.arg("-J").arg(scratch());
    }
    cmd.arg("-o").arg(&out);
    for s in sources {
        let p = Path::new(s);
        cmd.arg(if p.is_absolute() {
            p.to_path_buf()
        } else {
            root().join(p)
        });
    }
    cmd.args(extra)
        .arg("-L")
        .arg(lib_dir())
        .arg("-lfastpmix")
        .arg(format!("-Wl,-rpath,{}", lib_dir().display()));
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(
        o.status.success(),
        "building {name} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Runs `exe args` as an `n`-process job under `fastpmix run`, with a
/// deadline (a hung job is killed and the test fails saying so).
pub fn run_job(n: u32, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    run_with(&["run", "-n", &n.to_string(), "--"], exe, args, env)
}

/// Runs `fastpmix <pre…> exe args`.
pub fn run_with(pre: &[&str], exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(FASTPMIX);
    cmd.args(pre)
        .arg(exe)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    output_within(cmd, Duration::from_secs(120))
}

/// Runs `cmd`, killing it (and failing) after `limit`.
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.expect("wait"),
        Err(_) => {
            // SAFETY: kill(2) on the pid we spawned; no memory involved.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("{cmd:?} did not finish within {limit:?}");
        }
    }
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts the job succeeded, printing its output otherwise.
pub fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "job failed ({:?}):\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Lines of stdout that start with `[rank] prefix`, with the rank tag
/// removed (the launcher prefixes each line with its rank).
pub fn lines_of(o: &Output, rank: u32, prefix: &str) -> Vec<String> {
    let tag = format!("[{rank}] ");
    stdout(o)
        .lines()
        .filter_map(|l| l.strip_prefix(&tag))
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// Is `valgrind` installed? (tools/test installs it; a missing one fails
/// the leak tests unless FASTPMIX_SKIP_VALGRIND=1.)
pub fn valgrind() -> bool {
    let ok = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("FASTPMIX_SKIP_VALGRIND").as_deref() != Ok("1") {
        panic!("valgrind not found: install it (tools/test does) or set FASTPMIX_SKIP_VALGRIND=1");
    }
    ok
}

/// Status, stdout and stderr of a run, for assertion messages.
pub fn dump(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The one line of `rank` starting with `prefix` (exactly one, or the test
/// fails showing the whole run).
pub fn line(o: &Output, rank: u32, prefix: &str) -> String {
    let v = lines_of(o, rank, prefix);
    assert_eq!(
        v.len(),
        1,
        "rank {rank}: expected one line starting with {prefix:?}, got {v:?}\n{}",
        dump(o)
    );
    v[0].clone()
}

/// The value of `name=` in a printed result line.
pub fn field<'a>(l: &'a str, name: &str) -> &'a str {
    let pat = format!("{name}=");
    l.split(' ')
        .find_map(|w| w.strip_prefix(&pat))
        .unwrap_or_else(|| panic!("no {name}= in {l:?}"))
}

// ------------------------------------------------------------------ memcheck

/// valgrind's memcheck as every leak test runs it: a full
/// leak check in which a definite or indirect leak is an error like an
/// invalid access, and any error makes the process exit with 99. Blocks
/// only "possibly lost" or "still reachable" are not errors: the library's
/// progress threads are still parked when a process exits, holding their
/// stacks and thread-local state. A child a program forks without exec
/// (to check what a forked child of a client may do) is not checked: it
/// leaves by `_exit` holding its parent's memory.
pub const MEMCHECK: &[&str] = &[
    "valgrind",
    "--leak-check=full",
    "--errors-for-leak-kinds=definite,indirect",
    "--error-exitcode=99",
    "--child-silent-after-fork=yes",
];

/// One memcheck run. Every process valgrind runs writes its report to its
/// own file in a fresh directory (`--log-file=DIR/%p`), so the reports
/// neither mix with the program's output nor go unread: `assert_clean`
/// reads each one.
pub struct Memcheck {
    dir: PathBuf,
}

impl Memcheck {
    /// A fresh, empty report directory named after `tag`. `None` (after
    /// printing why) under tools/sanitize, whose programs memcheck cannot
    /// run, or when valgrind is missing and FASTPMIX_SKIP_VALGRIND=1; a
    /// missing valgrind fails the test otherwise (see `valgrind`).
    pub fn new(tag: &str) -> Option<Memcheck> {
        if let Some(s) = sanitizer() {
            // A sanitizer's runtime and valgrind cannot share a process
            // (both replace malloc; ASan reserves terabytes of shadow).
            println!("skipped: memcheck cannot run programs built with -fsanitize={s}");
            return None;
        }
        if !valgrind() {
            println!("skipped: valgrind not installed (FASTPMIX_SKIP_VALGRIND=1)");
            return None;
        }
        let dir = scratch().join(format!("memcheck-{tag}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("memcheck report dir");
        Some(Memcheck { dir })
    }

    /// The words to put before a program to run it under memcheck:
    /// `MEMCHECK` and the report file.
    pub fn command(&self) -> Vec<String> {
        let mut v: Vec<String> = MEMCHECK.iter().map(|s| (*s).to_owned()).collect();
        v.push(format!("--log-file={}/%p", self.dir.display()));
        v
    }

    /// An executable script that runs `exe` with its arguments under
    /// memcheck, keeping its pid (`exec`): for launchers that start a
    /// program by path, such as the C resource-manager daemon.
    pub fn wrapper(&self, exe: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let name = exe.file_name().expect("program name").to_string_lossy();
        let script = self.dir.with_file_name(format!(
            "{}-{name}.sh",
            self.dir.file_name().expect("dir name").to_string_lossy()
        ));
        let words: Vec<String> = self
            .command()
            .iter()
            .map(|w| format!("'{w}'"))
            .chain([format!("'{}'", exe.display())])
            .collect();
        std::fs::write(
            &script,
            format!("#!/bin/sh\nexec {} \"$@\"\n", words.join(" ")),
        )
        .expect("write memcheck wrapper");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
            .expect("chmod memcheck wrapper");
        script
    }

    /// Every report, as (file name = pid, text), in pid order.
    pub fn reports(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = std::fs::read_dir(&self.dir)
            .expect("memcheck report dir")
            .map(|e| {
                let p = e.expect("report").path();
                let name = p
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                (name, std::fs::read_to_string(&p).unwrap_or_default())
            })
            .collect();
        v.sort();
        v
    }

    /// Asserts that exactly `finished` processes ran to their end under
    /// memcheck (a process killed by a signal writes no "ERROR SUMMARY")
    /// and that each of them reports 0 errors: no invalid read or write,
    /// no use of uninitialised memory in a decision, no bad free, no
    /// definite or indirect leak. `o` (the run) is shown on failure with
    /// every report.
    pub fn assert_clean(&self, o: &Output, finished: usize) {
        let reports = self.reports();
        let mut summaries = Vec::new();
        for (pid, text) in &reports {
            if let Some(l) = text.lines().find(|l| l.contains("ERROR SUMMARY: ")) {
                let n = l
                    .split("ERROR SUMMARY: ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.replace(',', "").parse::<u64>().ok());
                summaries.push((pid.clone(), n));
            }
        }
        let clean = summaries.len() == finished && summaries.iter().all(|(_, n)| *n == Some(0));
        if !clean {
            // valgrind 3.19 warns at each syscall it does not know
            // (futex_waitv, pidfd_open); the library falls back. Noise.
            let shown: Vec<String> = reports
                .iter()
                .map(|(pid, text)| {
                    let t: Vec<&str> = text
                        .lines()
                        .filter(|l| {
                            !(l.contains("unhandled amd64-linux syscall")
                                || l.contains("your own handler")
                                || l.contains("README_MISSING_SYSCALL")
                                || l.contains("consider this a bug")
                                || l.contains("valgrind.org/support/bug_reports"))
                        })
                        .collect();
                    format!("--- report of pid {pid}:\n{}", t.join("\n"))
                })
                .collect();
            panic!(
                "memcheck: expected {finished} finished processes with 0 errors, got {summaries:?} \
                 ({} reports)\n{}\n{}",
                reports.len(),
                shown.join("\n"),
                dump(o)
            );
        }
    }
}

/// `fastpmix run -n N [opts] -- valgrind … exe args`: every process of the
/// job under memcheck. `None` when valgrind is skipped (see `Memcheck::new`).
pub fn run_job_memcheck(
    tag: &str,
    n: u32,
    opts: &[&str],
    exe: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<(Output, Memcheck)> {
    let m = Memcheck::new(tag)?;
    let n = n.to_string();
    let vg = m.command();
    let mut pre: Vec<&str> = vec!["run", "-n", &n];
    pre.extend_from_slice(opts);
    pre.push("--");
    pre.extend(vg.iter().map(String::as_str));
    let o = run_with(&pre, exe, args, env);
    Some((o, m))
}

// ---------------------------------------------------------------- sanitizers

/// The sanitizer this test binary and the library were built with, when
/// tools/sanitize runs the tests (it sets FASTPMIX_SANITIZER=address);
/// `None` in an ordinary run.
pub fn sanitizer() -> Option<String> {
    std::env::var("FASTPMIX_SANITIZER")
        .ok()
        .filter(|s| !s.is_empty())
}

/// Compiler flags a program needs to load this run's library: under a
/// sanitizer the library is instrumented and calls the sanitizer's runtime,
/// which the program then links (gcc's libasan, whose interface version,
/// `__asan_version_mismatch_check_v8`, is the one rustc's instrumentation
/// calls), and the program's own code is instrumented too. Empty in an
/// ordinary run.
pub fn sanitizer_flags() -> Vec<String> {
    match sanitizer() {
        Some(s) => vec![format!("-fsanitize={s}"), "-fno-omit-frame-pointer".into()],
        None => Vec::new(),
    }
}

/// `build` with `sanitizer_flags()` added: every program a C test runs
/// against the library is built through this.
pub fn build_program(name: &str, lang: Lang, sources: &[&str], extra: &[&str]) -> PathBuf {
    let flags = sanitizer_flags();
    let mut all: Vec<&str> = extra.to_vec();
    all.extend(flags.iter().map(String::as_str));
    build(name, lang, sources, &all)
}

/// `pkg-config ARGS pmix` (e.g. `--cflags`, `--libs`): OpenPMIx's flags,
/// or None (with FASTPMIX_SKIP_OPENPMIX=1) when OpenPMIx is not installed.
pub fn openpmix_flags(args: &[&str]) -> Option<Vec<String>> {
    match Command::new("pkg-config").args(args).arg("pmix").output() {
        Ok(o) if o.status.success() => Some(
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        ),
        _ if std::env::var("FASTPMIX_SKIP_OPENPMIX").as_deref() == Ok("1") => None,
        _ => panic!(
            "OpenPMIx (pkg-config module pmix, Debian libpmix-dev) is not installed: \
             run tools/test (it installs it) or set FASTPMIX_SKIP_OPENPMIX=1"
        ),
    }
}
