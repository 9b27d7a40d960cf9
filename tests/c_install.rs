//! tools/install: what it puts under a prefix (the shared library under its
//! soname with the development symlink, the archive, every header and
//! Fortran source of include/, the launcher, fastpmix.pc), and that a C
//! program built only from the installed tree through pkg-config links
//! (dynamically and statically) and runs under the installed launcher.
//!
//! The tests install target/<profile> (the build of this test run) with
//! FASTPMIX_INSTALL_FROM, so no release build happens here.

mod cabi;

use cabi::{
    assert_ok, built_lib, dump, include_dir, install_from, output_within, root, scratch, stdout,
    Memcheck,
};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const SONAME: &str = "libfastpmix.so.0";

/// A small client: identity, job size and version from the library, a
/// fence, finalize.
const CLIENT: &str = r#"
#define _GNU_SOURCE
#include <pmix.h>
#include <stdio.h>

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    pmix_proc_t me, all;
    if (PMIX_SUCCESS != PMIx_Init(&me, NULL, 0)) {
        return 2;
    }
    PMIX_LOAD_PROCID(&all, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&all, PMIX_JOB_SIZE, NULL, 0, &v);
    if (PMIX_SUCCESS != rc || PMIX_UINT32 != v->type) {
        return 3;
    }
    printf("installed client rank %u of %u, %s\n", me.rank, v->data.uint32,
           PMIx_Get_version());
    PMIX_VALUE_RELEASE(v);
    if (PMIX_SUCCESS != PMIx_Fence(&all, 1, NULL, 0)) {
        return 4;
    }
    if (PMIX_SUCCESS != PMIx_Finalize(NULL, 0)) {
        return 5;
    }
    printf("installed client finalized\n");
    return 0;
}
"#;

fn run(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null());
    output_within(cmd, Duration::from_secs(300))
}

/// Runs tools/install PREFIX from this test run's build.
fn install(prefix: &Path) -> Output {
    let mut c = Command::new(root().join("tools/install"));
    c.arg(prefix)
        .env("FASTPMIX_INSTALL_FROM", install_from())
        // Not the invoking shell's: the script must not depend on it.
        .env_remove("PKG_CONFIG_PATH")
        .current_dir(scratch());
    let o = run(c);
    assert_ok(&o);
    o
}

/// One prefix, installed once, shared by the tests that only read it.
fn prefix() -> &'static Path {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let p = scratch().join("prefix");
        let _ = std::fs::remove_dir_all(&p);
        install(&p);
        p
    })
}

/// `pkg-config ARGS fastpmix` against the installed module only.
fn pkg_config(prefix: &Path, args: &[&str]) -> Vec<String> {
    let mut c = Command::new("pkg-config");
    c.args(args)
        .arg("fastpmix")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"));
    let o = run(c);
    assert_ok(&o);
    stdout(&o).split_whitespace().map(str::to_owned).collect()
}

/// `readelf -d FILE`: (tag, value) pairs such as ("NEEDED", "libc.so.6").
fn dynamic_section(file: &Path) -> Vec<(String, String)> {
    let mut c = Command::new("readelf");
    c.arg("-d").arg(file);
    let o = run(c);
    assert_ok(&o);
    stdout(&o)
        .lines()
        .filter_map(|l| {
            let tag = l.split_once('(')?.1.split_once(')')?.0;
            let val = l.split_once('[')?.1.split_once(']')?.0;
            Some((tag.to_owned(), val.to_owned()))
        })
        .collect()
}

fn needed(file: &Path) -> Vec<String> {
    dynamic_section(file)
        .into_iter()
        .filter(|(t, _)| t == "NEEDED")
        .map(|(_, v)| v)
        .collect()
}

/// Writes CLIENT and compiles it with `cc -std=c11 -Wall -Werror` plus
/// `flags` (all of them from pkg-config).
fn build_client(name: &str, flags: &[String]) -> PathBuf {
    let src = scratch().join(format!("{name}.c"));
    std::fs::write(&src, CLIENT).expect("write client");
    let exe = scratch().join(name);
    let mut c = Command::new("cc");
    c.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .args(flags)
        // Under tools/sanitize the library is instrumented.
        .args(cabi::sanitizer_flags())
        // Nothing from the environment points at the source tree.
        .env_remove("LIBRARY_PATH")
        .env_remove("C_INCLUDE_PATH")
        .env_remove("CPATH");
    let o = run(c);
    assert!(o.status.success(), "building {name} failed:\n{}", dump(&o));
    exe
}

/// Runs `exe` as a 2-process job under the installed launcher.
fn run_installed(exe: &Path, env: &[(&str, &Path)]) -> Output {
    run_installed_under(&[], exe, env)
}

/// Runs `wrapper… exe` as a 2-process job under the installed launcher.
fn run_installed_under(wrapper: &[String], exe: &Path, env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(prefix().join("bin/fastpmix"));
    c.args(["run", "-n", "2", "--"])
        .args(wrapper)
        .arg(exe)
        .env_remove("LD_LIBRARY_PATH");
    for (k, v) in env {
        c.env(k, v);
    }
    run(c)
}

fn assert_client_ran(o: &Output) {
    assert_ok(o);
    let version = format!("fastpmix {}", env!("CARGO_PKG_VERSION"));
    for r in 0..2 {
        let lines = cabi::lines_of(o, r, "installed client");
        assert_eq!(lines.len(), 2, "rank {r}:\n{}", dump(o));
        assert!(
            lines[0].starts_with(&format!("installed client rank {r} of 2, {version}")),
            "{}",
            dump(o)
        );
        assert_eq!(lines[1], "installed client finalized", "{}", dump(o));
    }
}

fn files_in(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    v.sort();
    v
}

#[test]
fn install_puts_libraries_headers_and_pkg_config_under_the_prefix() {
    let p = prefix();
    let lib = p.join("lib");

    // The shared library under its soname: a regular file, the same bytes
    // as the build's, with that soname recorded in it.
    let so = lib.join(SONAME);
    let meta = std::fs::symlink_metadata(&so).expect("libfastpmix.so.0");
    assert!(
        meta.file_type().is_file(),
        "{} is not a regular file",
        so.display()
    );
    assert_eq!(
        std::fs::read(&so).expect("read"),
        std::fs::read(built_lib("libfastpmix.so")).expect("read built"),
        "installed library differs from the build's"
    );
    let sonames: Vec<String> = dynamic_section(&so)
        .into_iter()
        .filter(|(t, _)| t == "SONAME")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(sonames, [SONAME]);

    // libfastpmix.so: a relative symlink to the soname (for -lfastpmix).
    let dev = lib.join("libfastpmix.so");
    assert!(std::fs::symlink_metadata(&dev)
        .expect("libfastpmix.so")
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&dev).expect("link"), Path::new(SONAME));

    // The archive.
    assert_eq!(
        std::fs::read(lib.join("libfastpmix.a")).expect("libfastpmix.a"),
        std::fs::read(built_lib("libfastpmix.a")).expect("built archive")
    );

    // Every header and Fortran source of include/, identical, and nothing else.
    let mut ours = files_in(&include_dir(), ".h");
    ours.extend(files_in(&include_dir(), ".f90"));
    ours.sort();
    for h in [
        "pmix.h",
        "pmix_common.h",
        "pmix_constants.h",
        "pmix_server.h",
        "pmix_tool.h",
    ] {
        assert!(
            ours.iter().any(|n| n == h),
            "include/{h} missing from the tree"
        );
    }
    let mut installed: Vec<String> = std::fs::read_dir(p.join("include"))
        .expect("include dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    installed.sort();
    assert_eq!(installed, ours);
    for h in &ours {
        assert_eq!(
            std::fs::read(p.join("include").join(h)).expect("installed header"),
            std::fs::read(include_dir().join(h)).expect("header"),
            "{h}"
        );
        let mode = std::fs::metadata(p.join("include").join(h))
            .expect("meta")
            .permissions();
        assert_eq!(mode.mode() & 0o777, 0o644, "{h}");
    }

    // The launcher, executable.
    let bin = p.join("bin/fastpmix");
    let mode = std::fs::metadata(&bin)
        .expect("bin/fastpmix")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);

    // The pkg-config module: version from Cargo.toml, paths in the prefix.
    assert_eq!(
        pkg_config(p, &["--modversion"]),
        [env!("CARGO_PKG_VERSION")]
    );
    assert_eq!(
        pkg_config(p, &["--cflags"]),
        [format!("-I{}", p.join("include").display())]
    );
    assert_eq!(
        pkg_config(p, &["--libs"]),
        [format!("-L{}", lib.display()), "-lfastpmix".to_owned()]
    );
    let private = pkg_config(p, &["--static", "--libs"]);
    for l in ["-lhwloc", "-lpthread", "-lm", "-ldl", "-lgcc_s"] {
        assert!(private.iter().any(|f| f == l), "{l} not in {private:?}");
    }
    assert_eq!(
        pkg_config(p, &["--variable=prefix"]),
        [p.display().to_string()]
    );
}

/// What a host built `--with-pmix=PREFIX` does with the prefix, as Slurm
/// 22.05 does it: its configure includes `pmix_server.h` and
/// `pmix_common.h` from `PREFIX/include`, requires `PMIX_VERSION_MAJOR` 4
/// for its v4 plugin, and links a call of `PMIx_Get_version` with
/// `-lpmix`; its mpi/pmix plugin then `dlopen`s `PREFIX/lib/libpmix.so` and
/// looks up the 13 functions it calls. All of it works against the
/// installed tree alone.
#[test]
fn a_host_built_with_pmix_at_the_prefix_configures_links_and_loads_fastpmix() {
    let p = prefix();
    let lib = p.join("lib");
    let link = lib.join("libpmix.so");
    assert_eq!(
        std::fs::read_link(&link).expect("libpmix.so"),
        Path::new(SONAME)
    );
    let src = scratch().join("with_pmix_probe.c");
    std::fs::write(
        &src,
        r#"
#include <pmix_server.h>
#include <pmix_common.h>
#include <dlfcn.h>
#include <stdio.h>
#if (PMIX_VERSION_MAJOR != 4L)
#error not PMIx 4
#endif
static const char *imports[] = {
    "PMIx_server_init", "PMIx_server_finalize", "PMIx_server_register_nspace",
    "PMIx_server_register_client", "PMIx_server_setup_fork", "PMIx_server_dmodex_request",
    "PMIx_Register_event_handler", "PMIx_Deregister_event_handler", "PMIx_generate_regex",
    "PMIx_generate_ppn", "PMIx_Info_load", "PMIx_Value_load", "PMIx_Value_destruct",
};
int main(int argc, char **argv)
{
    (void) argc;
    printf("linked %s\n", PMIx_Get_version());
    void *h = dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL);
    if (NULL == h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    for (size_t i = 0; i < sizeof imports / sizeof imports[0]; i++) {
        if (NULL == dlsym(h, imports[i])) {
            printf("missing %s\n", imports[i]);
            return 1;
        }
    }
    printf("all %zu imports found\n", sizeof imports / sizeof imports[0]);
    return 0;
}
"#,
    )
    .expect("write probe");
    let exe = scratch().join("with_pmix_probe");
    let mut c = Command::new("cc");
    c.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg(format!("-I{}", p.join("include").display()))
        .arg(format!("-L{}", lib.display()))
        .arg("-lpmix")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-ldl")
        .args(cabi::sanitizer_flags())
        .env_remove("LIBRARY_PATH")
        .env_remove("C_INCLUDE_PATH")
        .env_remove("CPATH");
    let o = run(c);
    assert!(
        o.status.success(),
        "configure's probe failed:
{}",
        dump(&o)
    );
    assert_eq!(needed(&exe).iter().filter(|n| *n == SONAME).count(), 1);
    let mut c = Command::new(&exe);
    c.arg(&link);
    let o = run(c);
    assert_ok(&o);
    assert!(stdout(&o).contains("all 13 imports found"), "{}", dump(&o));
}

/// CLIENT linked against the installed shared library, built once.
fn dynamic_client() -> &'static Path {
    static E: OnceLock<PathBuf> = OnceLock::new();
    E.get_or_init(|| {
        let flags = pkg_config(prefix(), &["--cflags", "--libs"]);
        build_client("installed_client_dynamic", &flags)
    })
}

/// CLIENT linked against the installed archive, built once.
fn static_client() -> &'static Path {
    static E: OnceLock<PathBuf> = OnceLock::new();
    E.get_or_init(|| {
        let p = prefix();
        // The archive by name: -l:libfastpmix.a in place of -lfastpmix (the
        // shared library, which -lfastpmix would pick, is installed beside
        // it).
        let mut flags = pkg_config(p, &["--cflags"]);
        let libs = pkg_config(p, &["--static", "--libs"]);
        assert!(libs.iter().any(|f| f == "-lfastpmix"), "{libs:?}");
        flags.extend(libs.into_iter().map(|f| {
            if f == "-lfastpmix" {
                "-l:libfastpmix.a".to_owned()
            } else {
                f
            }
        }));
        build_client("installed_client_static", &flags)
    })
}

#[test]
fn a_client_links_dynamically_through_pkg_config_and_runs() {
    let p = prefix();
    let exe = dynamic_client();
    // It asks for the soname, not for a path into the build tree.
    let n = needed(exe);
    assert!(n.iter().any(|l| l == SONAME), "{n:?}");
    assert!(
        !dynamic_section(exe)
            .iter()
            .any(|(t, _)| t == "RPATH" || t == "RUNPATH"),
        "no run path expected: {:?}",
        dynamic_section(exe)
    );
    // The loader resolves it to the installed library.
    let mut ldd = Command::new("ldd");
    ldd.arg(exe).env("LD_LIBRARY_PATH", p.join("lib"));
    let o = run(ldd);
    assert_ok(&o);
    let resolved = format!("{SONAME} => {}", p.join("lib").join(SONAME).display());
    assert!(stdout(&o).contains(&resolved), "{}", stdout(&o));

    let lib = p.join("lib");
    let o = run_installed(exe, &[("LD_LIBRARY_PATH", &lib)]);
    assert_client_ran(&o);
}

#[test]
fn a_client_links_statically_through_pkg_config_and_runs() {
    let exe = static_client();
    let n = needed(exe);
    assert!(
        !n.iter().any(|l| l.starts_with("libfastpmix")),
        "a static client needs no libfastpmix at run time: {n:?}"
    );
    // The library's code is in the program itself.
    let mut nm = Command::new("nm");
    nm.arg("--defined-only").arg(exe);
    let o = run(nm);
    assert_ok(&o);
    assert!(
        stdout(&o).lines().any(|l| l.ends_with(" T PMIx_Init")),
        "PMIx_Init not defined in the static client"
    );
    // No LD_LIBRARY_PATH: nothing to find.
    let o = run_installed(exe, &[]);
    assert_client_ran(&o);
}

#[test]
fn installed_clients_leak_nothing_under_valgrind() {
    // The client linked dynamically and statically (the library's code in
    // the program itself), each process under memcheck, started by the
    // installed launcher.
    let lib = prefix().join("lib");
    for (tag, exe, env) in [
        (
            "installed-dynamic",
            dynamic_client(),
            vec![("LD_LIBRARY_PATH", lib.as_path())],
        ),
        ("installed-static", static_client(), vec![]),
    ] {
        let Some(m) = Memcheck::new(tag) else {
            return;
        };
        let o = run_installed_under(&m.command(), exe, &env);
        m.assert_clean(&o, 2);
        assert_client_ran(&o);
    }
}

/// Every path under `dir`, with what it is: a symlink's target, or a
/// file's mode and bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for e in std::fs::read_dir(d).expect("read dir") {
            let path = e.expect("entry").path();
            let rel = path.strip_prefix(base).expect("under base").to_path_buf();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            let what = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).expect("link").display())
            } else if meta.is_dir() {
                walk(base, &path, out);
                format!("dir {:o}", meta.permissions().mode() & 0o7777)
            } else {
                let bytes = std::fs::read(&path).expect("read");
                let sum = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
                });
                format!(
                    "file {:o} {} {sum:016x}",
                    meta.permissions().mode() & 0o7777,
                    bytes.len()
                )
            };
            out.insert(rel, what);
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn install_is_idempotent() {
    let p = scratch().join("prefix-twice");
    let _ = std::fs::remove_dir_all(&p);
    let first_out = install(&p);
    let first = snapshot(&p);
    assert!(
        first.contains_key(Path::new("lib/libfastpmix.so.0")),
        "{first:?}"
    );
    let second_out = install(&p);
    let second = snapshot(&p);
    assert_eq!(first, second, "a second install changed the tree");
    // It says what it installed, both times alike.
    assert_eq!(stdout(&first_out), stdout(&second_out));
    assert!(
        stdout(&second_out).contains(&format!(
            "installed {}",
            p.join("lib").join(SONAME).display()
        )),
        "{}",
        stdout(&second_out)
    );

    // A stale development name (a regular file where the symlink belongs)
    // is replaced by the symlink.
    let dev = p.join("lib/libfastpmix.so");
    std::fs::remove_file(&dev).expect("remove link");
    std::fs::write(&dev, b"stale").expect("stale file");
    install(&p);
    assert_eq!(snapshot(&p), first, "re-install did not restore the tree");
}

/// OpenPMIx's names for the library, in a directory of their own: a host
/// whose component records `NEEDED libpmix.so.2` (Open MPI 4.1's
/// pmix/ext3x) loads fastpmix when that directory is first on
/// `LD_LIBRARY_PATH`. Both names are relative symlinks to the installed
/// soname, the directory holds nothing else, and the loader, asked for
/// `libpmix.so.2` by name, maps our library.
#[test]
fn install_provides_openpmix_names_in_a_compat_directory() {
    let p = prefix();
    let compat = p.join("lib/pmix-compat");
    let mut names = files_in(&compat, "");
    names.sort();
    assert_eq!(names, ["libpmix.so", "libpmix.so.2"]);
    let ours = std::fs::canonicalize(p.join("lib").join(SONAME)).expect("installed soname");
    for n in &names {
        let link = compat.join(n);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("compat name")
                .file_type()
                .is_symlink(),
            "{} is not a symlink",
            link.display()
        );
        assert_eq!(
            std::fs::read_link(&link).expect("link"),
            Path::new("..").join(SONAME),
            "{n}"
        );
        assert_eq!(std::fs::canonicalize(&link).expect("resolve"), ours, "{n}");
    }

    // What the loader does with NEEDED libpmix.so.2: dlopen by name, with
    // only the compat directory on LD_LIBRARY_PATH, gives fastpmix.
    let src = scratch().join("compat_probe.c");
    std::fs::write(
        &src,
        r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int main(void)
{
    void *h = dlopen("libpmix.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (NULL == h) {
        printf("dlopen failed: %s\n", dlerror());
        return 1;
    }
    const char *(*version)(void) = (const char *(*)(void)) dlsym(h, "PMIx_Get_version");
    Dl_info info;
    if (NULL == version || 0 == dladdr((void *) version, &info)) {
        printf("no PMIx_Get_version\n");
        return 1;
    }
    printf("version %s\nfrom %s\n", version(), info.dli_fname);
    return 0;
}
"#,
    )
    .expect("write probe");
    let exe = scratch().join("compat_probe");
    let mut c = Command::new("cc");
    c.args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-ldl")
        .args(cabi::sanitizer_flags());
    let o = run(c);
    assert!(
        o.status.success(),
        "building the probe failed:\n{}",
        dump(&o)
    );
    let mut c = Command::new(&exe);
    c.env("LD_LIBRARY_PATH", &compat);
    let o = run(c);
    assert_ok(&o);
    let out = stdout(&o);
    assert!(
        out.contains(&format!("version fastpmix {}", env!("CARGO_PKG_VERSION"))),
        "{out}"
    );
    let from = out
        .lines()
        .find_map(|l| l.strip_prefix("from "))
        .expect("from line");
    assert_eq!(
        std::fs::canonicalize(from).expect("mapped file"),
        ours,
        "{out}"
    );
}
