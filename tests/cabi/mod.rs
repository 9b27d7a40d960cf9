//! Builds C, C++ and Fortran programs against `include/` and libfastpmix,
//! and runs them under `fastpmix run`. Shared by the tests/c_*.rs suites.
//!
//! The library is the one cargo built for this test run (target/<profile>/
//! libfastpmix.so, next to the `fastpmix` binary). Its soname is
//! libfastpmix.so.0, so programs are linked through a private directory
//! holding that name, with an rpath to it: nothing is installed anywhere.
#![allow(dead_code)]

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

/// A per-process scratch directory for build outputs (never in the repo).
pub fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("fastpmix-cabi-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    })
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
