//! The Fortran 2008 interface module (`include/pmix_f08.f90`): it compiles
//! as strict F2008, its bind(C) types have the C layouts, its constants are
//! the C header's, every interface names a function libfastpmix exports, and
//! a Fortran client (`tests/f/f_client.f90`) run as a 2-process job under
//! `fastpmix run` initializes, reads job data, exchanges an event between
//! the ranks through a Fortran handler, and uses the job-management calls.

mod cabi;

use cabi::{
    assert_ok, build_program, dump, field, include_dir, line, lines_of, output_within, root,
    run_job, run_job_memcheck, scratch, stdout, Lang,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

const MODULE: &str = "include/pmix_f08.f90";

/// gfortran writes `pmix_f08.mod` into the shared scratch directory: one
/// Fortran build at a time.
fn fortran_build(name: &str, sources: &[&str]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    build_program(name, Lang::Fortran, sources, &[])
}

fn module_text() -> String {
    std::fs::read_to_string(root().join(MODULE)).expect(MODULE)
}

/// `tests/f/f_client.f90`, built once per test process.
fn exe() -> &'static PathBuf {
    static E: OnceLock<PathBuf> = OnceLock::new();
    E.get_or_init(|| fortran_build("f_client", &[MODULE, "tests/f/f_client.f90"]))
}

/// The 2-rank job of `tests/f/f_client.f90`, run once per test process.
fn job() -> &'static Output {
    static O: OnceLock<Output> = OnceLock::new();
    O.get_or_init(|| run_job(2, exe(), &[], &[]))
}

/// Asserts rank `rank` printed exactly `want`.
fn expect(o: &Output, rank: u32, want: &str) {
    let prefix = want.split('=').next().unwrap_or(want);
    assert_eq!(line(o, rank, prefix), want, "rank {rank}\n{}", dump(o));
}

// ------------------------------------------------------------ the module

#[test]
fn fortran_module_compiles_alone_as_strict_f2008_without_warnings() {
    let dir = scratch().join("f08-module-only");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let mut cmd = Command::new("gfortran");
    cmd.args([
        "-std=f2008",
        "-Wall",
        "-Wextra",
        "-pedantic",
        "-Werror",
        "-c",
    ])
    .arg(root().join(MODULE))
    .arg("-J")
    .arg(&dir)
    .arg("-o")
    .arg(dir.join("pmix_f08.o"));
    let o = output_within(cmd, Duration::from_secs(120));
    assert!(o.status.success(), "gfortran -c {MODULE}:\n{}", dump(&o));
    assert!(dir.join("pmix_f08.mod").exists(), "no pmix_f08.mod written");
    assert!(
        !include_dir().join("pmix_f08.mod").exists(),
        "a .mod file was written into include/"
    );
}

/// name → (kind bits or 0 for a string) of every `parameter` of the module.
fn module_parameters() -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for l in module_text().lines() {
        let l = l.trim();
        let Some((decl, rest)) = l.split_once(", parameter :: ") else {
            continue;
        };
        let name = rest.split([' ', '=']).next().unwrap_or("").to_owned();
        let bits = match decl {
            "character(len=*)" => 0,
            "integer(c_int8_t)" => 8,
            "integer(c_int16_t)" => 16,
            "integer" | "integer(c_int)" | "integer(c_int32_t)" => 32,
            "integer(c_int64_t)" => 64,
            _ => panic!("unexpected declaration {l:?}"),
        };
        if name.starts_with("PMIX_") || name.starts_with("FASTPMIX_") {
            m.insert(name, bits);
        }
    }
    m
}

/// Every `#define PMIX_…` of include/pmix_constants.h, and fastpmix's own
/// `FASTPMIX_…` constants (not the include guard, which has no value).
fn header_names() -> BTreeSet<String> {
    let h = std::fs::read_to_string(include_dir().join("pmix_constants.h")).expect("header");
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .filter(|l| l.starts_with("PMIX_") || l.starts_with("FASTPMIX_"))
        .filter_map(|l| l.split_once(' ').map(|(n, _)| n.to_owned()))
        .collect()
}

#[derive(Debug, PartialEq)]
enum Val {
    Int(i128),
    Str(String),
}

/// Parses `NAME 123` and `NAME "text"` lines; a string line of the Fortran
/// program ends with ` T` when the parameter ends in its only c_null_char.
fn parse_values(out: &str, fortran: bool) -> BTreeMap<String, Val> {
    out.lines()
        .map(|l| {
            let (name, rest) = l
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad line {l:?}"));
            let v = if let Some(s) = rest.strip_prefix('"') {
                let s = if fortran {
                    let (s, nul) = s.rsplit_once(' ').expect("nul flag");
                    assert_eq!(nul, "T", "{name}: not one c_null_char at the end");
                    s
                } else {
                    s
                };
                Val::Str(s.strip_suffix('"').expect("closing quote").to_owned())
            } else {
                Val::Int(
                    rest.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("bad int {l:?}")),
                )
            };
            (name.to_owned(), v)
        })
        .collect()
}

fn run_plain(exe: &PathBuf) -> String {
    let o = output_within(Command::new(exe), Duration::from_secs(60));
    assert!(o.status.success(), "{}:\n{}", exe.display(), dump(&o));
    stdout(&o)
}

#[test]
fn fortran_module_constants_match_pmix_constants_h() {
    let params = module_parameters();
    let names = header_names();
    assert!(
        names.len() > 400,
        "too few header constants: {}",
        names.len()
    );
    let missing: Vec<_> = names.iter().filter(|n| !params.contains_key(*n)).collect();
    assert!(
        missing.is_empty(),
        "constants of pmix_constants.h missing from {MODULE} (add them there): {missing:?}"
    );
    let extra: Vec<_> = params.keys().filter(|n| !names.contains(*n)).collect();
    assert!(
        extra.is_empty(),
        "{MODULE} has constants the C header lacks: {extra:?}"
    );

    // The values as each compiler sees them: a Fortran program printing
    // every parameter of the module, a C program every #define.
    let dir = scratch().join("f08-consts");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut f = String::from("program f_consts\n    use pmix_f08\n    implicit none\n");
    let mut c = String::from(
        "#include <pmix.h>\n#include <stdio.h>\n\
         static void pi(const char *n, long long v) { printf(\"%s %lld\\n\", n, v); }\n\
         static void ps(const char *n, const char *v) { printf(\"%s \\\"%s\\\"\\n\", n, v); }\n\
         #define P(n) _Generic((n), char *: ps, const char *: ps, default: pi)(#n, n)\n\
         int main(void)\n{\n",
    );
    for (name, bits) in &params {
        if *bits == 0 {
            f.push_str(&format!(
                "    write (*, '(a,1x,3a,1x,l1)') \"{name}\", '\"', &\n        \
                 {name}(1:len({name}) - 1), '\"', &\n        \
                 index({name}, c_null_char) == len({name})\n"
            ));
        } else {
            f.push_str(&format!(
                "    write (*, '(a,1x,i0)') \"{name}\", &\n        {name}\n"
            ));
        }
        c.push_str(&format!("    P({name});\n"));
    }
    f.push_str("end program f_consts\n");
    c.push_str("    return 0;\n}\n");
    let (fp, cp) = (dir.join("f_consts.f90"), dir.join("c_consts.c"));
    std::fs::write(&fp, f).expect("write");
    std::fs::write(&cp, c).expect("write");
    let fexe = fortran_build("f_consts", &[MODULE, fp.to_str().expect("utf-8")]);
    let cexe = build_program("c_consts", Lang::C, &[cp.to_str().expect("utf-8")], &[]);
    let fv = parse_values(&run_plain(&fexe), true);
    let cv = parse_values(&run_plain(&cexe), false);
    assert_eq!(
        fv.len(),
        params.len(),
        "the Fortran program printed too few"
    );
    assert_eq!(cv.len(), params.len(), "the C program printed too few");

    let mut bad = vec![];
    for (name, bits) in &params {
        match (&fv[name], &cv[name]) {
            (Val::Str(a), Val::Str(b)) if a == b => {}
            (Val::Int(a), Val::Int(b)) if *bits > 0 => {
                // Same bits in the Fortran kind, and the C value fits it
                // (as a signed or an unsigned number).
                let m = 1i128 << bits;
                let fits = -(m / 2) <= *b && *b < m;
                if !fits || (a - b).rem_euclid(m) != 0 {
                    bad.push(format!("{name}: Fortran {a} ({bits} bits), C {b}"));
                }
            }
            (a, b) => bad.push(format!("{name}: Fortran {a:?}, C {b:?}")),
        }
    }
    assert!(bad.is_empty(), "values differ:\n{}", bad.join("\n"));
}

/// The C names the module binds (`bind(C, name="…")`), strlen aside.
fn bound_names() -> BTreeSet<String> {
    module_text()
        .split("name=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter(|n| *n != "strlen")
        .map(str::to_owned)
        .collect()
}

#[test]
fn fortran_module_binds_only_functions_libfastpmix_exports_and_declares() {
    let names = bound_names();
    assert!(names.len() >= 40, "too few interfaces: {names:?}");
    let so = cabi::built_lib("libfastpmix.so");
    let o = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&so)
        .output()
        .expect("nm");
    assert!(o.status.success(), "nm failed");
    let exported: BTreeSet<String> = stdout(&o)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .map(str::to_owned)
        .collect();
    let headers = ["pmix.h", "pmix_common.h"]
        .iter()
        .map(|h| std::fs::read_to_string(include_dir().join(h)).expect("header"))
        .collect::<String>();
    for n in &names {
        assert!(
            exported.contains(n),
            "{n} is not exported by libfastpmix.so"
        );
        assert!(
            headers.contains(&format!(" {n}(")) || headers.contains(&format!("*{n}(")),
            "{n} is not declared in pmix.h/pmix_common.h"
        );
    }
}

#[test]
fn fortran_module_has_an_interface_for_every_client_call_of_pmix_h_fastpmix_implements() {
    let h = std::fs::read_to_string(include_dir().join("pmix.h")).expect("pmix.h");
    let calls: BTreeSet<String> = h
        .split("PMIx_")
        .skip(1)
        .filter_map(|s| {
            let (n, rest) = s.split_once('(')?;
            let ok = !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            // A declaration, not a mention in a comment.
            (ok && !rest.starts_with(')')).then(|| format!("PMIx_{n}"))
        })
        .collect();
    assert!(calls.len() >= 20, "too few client calls found: {calls:?}");
    let bound = bound_names();
    // The calls fastpmix does not implement (src/capi/unsupported.rs: they
    // only return PMIX_ERR_NOT_SUPPORTED) need no Fortran interface.
    let unsupported = fastpmix::internals::unsupported::NOT_SUPPORTED;
    let missing: Vec<_> = calls
        .iter()
        .filter(|c| !bound.contains(*c) && !unsupported.contains(&c.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "no interface in {MODULE} for {missing:?}"
    );
}

// ---------------------------------------------------------- the client job

#[test]
fn fortran_types_have_the_c_sizes_260_32_552() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "sizes proc=260 value=32 info=552");
        expect(o, r, "sizes2 data_array=24 byte_object=16");
        expect(
            o,
            r,
            "offsets proc.rank=256 value.data=8 info.flags=512 info.value=520",
        );
    }
}

#[test]
fn fortran_program_links_every_interface_it_names() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "links all=36 resolved=36");
    }
}

#[test]
fn fortran_client_initializes_and_reads_version_and_error_strings() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "init rc=0 initialized=1 rank_valid=T");
        let v = line(o, r, "version ");
        assert!(v.starts_with("version fastpmix "), "{v}");
        expect(o, r, "errstr -46 PMIX_ERR_NOT_FOUND");
    }
}

#[test]
fn fortran_client_gets_rank_and_job_size() {
    let o = job();
    for r in 0..2 {
        // PMIX_PROC_RANK (40) and PMIX_UINT32 (14), read through the
        // module's value accessors.
        expect(
            o,
            r,
            &format!("get rank rc=0 type=40 value={r} matches_init=T"),
        );
        expect(o, r, "get job_size rc=0 type=14 value=2");
        expect(o, r, "get nspace rc=0 matches_init=T");
        expect(o, r, "get missing rc=-46");
    }
}

#[test]
fn fortran_handler_receives_a_namespace_event_from_the_other_rank() {
    let o = job();
    expect(o, 0, "notify rc=0");
    assert!(lines_of(o, 1, "notify").is_empty(), "{}", dump(o));
    for r in 0..2 {
        let reg = line(o, r, "register ref=");
        let refn: i64 = field(&reg, "ref").parse().expect("ref");
        assert!(refn >= 1, "{reg}");
        expect(o, r, "fence1 rc=0");
    }
    // CUSTOM_CODE = PMIX_EXTERNAL_ERR_BASE - 77; the text came through the
    // info array the Fortran handler read.
    let ev = line(o, 1, "event ");
    assert_eq!(field(&ev, "status"), "-3077", "{ev}");
    assert_eq!(field(&ev, "source_rank"), "0", "{ev}");
    assert_eq!(field(&ev, "same_nspace"), "T", "{ev}");
    assert!(ev.contains(" text=hello from fortran "), "{ev}");
    assert_eq!(field(&ev, "ref_matches"), "T", "{ev}");
    assert_eq!(field(&ev, "nresults"), "0", "{ev}");
    assert_eq!(field(&ev, "calls"), "1", "{ev}");
    // The handler completed the event through c_f_procpointer: the other
    // rank got through the next steps.
    expect(o, 1, "done");
    assert_ok(o);
}

#[test]
fn fortran_notifier_handles_its_own_namespace_event_once() {
    let o = job();
    let ev = line(o, 0, "event ");
    assert_eq!(field(&ev, "status"), "-3077", "{ev}");
    assert_eq!(field(&ev, "source_rank"), "0", "{ev}");
    assert!(ev.contains(" text=hello from fortran "), "{ev}");
    assert_eq!(field(&ev, "calls"), "1", "{ev}");
}

#[test]
fn fortran_job_management_calls_go_through_the_module() {
    let o = job();
    let out = stdout(o);
    for r in 0..2 {
        expect(o, r, "log rc=0");
        // The launcher writes PMIX_LOG_STDOUT on its own stdout, untagged.
        let want = format!("fortran-log rank {r}");
        assert_eq!(
            out.lines().filter(|l| *l == want).count(),
            1,
            "{want:?}\n{}",
            dump(o)
        );
        expect(o, r, "heartbeat_monitor rc=0");
        expect(o, r, "alloc_external rc=-47");
        let jc = line(o, r, "jobctl_badtype ");
        assert_eq!(field(&jc, "rc"), "-27", "{jc}");
    }
}

#[test]
fn fortran_callbacks_are_bind_c_procedures_given_their_cbdata() {
    let o = job();
    for r in 0..2 {
        expect(o, r, "fence_nb rc=0 cb_status=0 cb_data_ok=T cb_calls=1");
    }
}

#[test]
fn fortran_client_deregisters_finalizes_and_the_job_succeeds() {
    let o = job();
    assert_ok(o);
    for r in 0..2 {
        expect(o, r, "deregister rc=0");
        expect(o, r, "finalize rc=0 initialized=0");
        expect(o, r, "done");
        assert!(lines_of(o, r, "FAIL").is_empty(), "{}", dump(o));
    }
}

#[test]
fn fortran_client_leaks_nothing_under_valgrind() {
    // Both processes under memcheck: values and info arrays the module's
    // calls create and free, the handler's info read through c_f_pointer,
    // callbacks with their cbdata. gfortran's runtime keeps its unit
    // buffers "still reachable" at exit, which is not an error.
    let Some((o, m)) = run_job_memcheck("fortran", 2, &[], exe(), &[], &[]) else {
        return;
    };
    m.assert_clean(&o, 2);
    assert_ok(&o);
    for r in 0..2 {
        expect(&o, r, "fence_nb rc=0 cb_status=0 cb_data_ok=T cb_calls=1");
        expect(&o, r, "finalize rc=0 initialized=0");
        expect(&o, r, "done");
    }
    let ev = line(&o, 1, "event ");
    assert_eq!(field(&ev, "status"), "-3077", "{ev}");
}
