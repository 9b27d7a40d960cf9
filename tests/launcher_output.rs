//! `fastpmix run` forwards each process's stdout and stderr as bytes, each
//! line behind its rank's `[r] ` prefix: any encoding, binary data, lines
//! of any length, a last line without a newline, any amount. Forwarding
//! never closes a child's pipe while it may still write (it would die of
//! SIGPIPE), even when the launcher's own output is gone.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_fastpmix");

/// `fastpmix run -n <n> -- sh -c <script>`; output collected, with a hang
/// guard.
fn run_sh(n: u32, script: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(["run", "-n", &n.to_string(), "--", "sh", "-c", script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fastpmix");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let guard = guard_kill(child.id());
    let mut stdout = Vec::new();
    out.read_to_end(&mut stdout).expect("read stdout");
    let status = child.wait().expect("wait");
    drop(guard);
    Output {
        status,
        stdout,
        stderr: e.join().expect("stderr reader"),
    }
}

/// Kills the launcher if the test hangs for a minute; dropping it disarms.
fn guard_kill(pid: u32) -> std::sync::mpsc::Sender<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            rx.recv_timeout(Duration::from_secs(60))
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    });
    tx
}

fn dump(o: &Output) -> String {
    let cut = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(2000)]).into_owned();
    format!(
        "status {:?}\nstdout (first 2000 bytes):\n{}\nstderr:\n{}",
        o.status,
        cut(&o.stdout),
        cut(&o.stderr)
    )
}

/// The bytes rank 0 wrote, from output where every line is `[0] `-prefixed
/// (a missing final newline came back as one).
fn unprefix(out: &[u8]) -> Vec<u8> {
    let mut data = Vec::with_capacity(out.len());
    let body = out.strip_suffix(b"\n").expect("output ends with a newline");
    for line in body.split(|&b| b == b'\n') {
        let rest = line.strip_prefix(b"[0] ").unwrap_or_else(|| {
            panic!(
                "line without the rank prefix: {:?}",
                &line[..line.len().min(80)]
            )
        });
        data.extend_from_slice(rest);
        data.push(b'\n');
    }
    data
}

#[test]
fn output_that_is_not_utf8_is_forwarded_and_the_process_lives_on() {
    let o = run_sh(
        1,
        r"printf 'caf\351\n'; printf '\377\376 after\n'; echo last >&2; exit 0",
    );
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    assert_eq!(
        o.stdout,
        b"[0] caf\xe9\n[0] \xff\xfe after\n",
        "{}",
        dump(&o)
    );
    assert!(
        o.stderr.windows(9).any(|w| w == b"[0] last\n"),
        "{}",
        dump(&o)
    );
}

#[test]
fn a_one_mib_line_arrives_whole_behind_one_prefix() {
    let o = run_sh(1, "head -c 1048576 /dev/zero | tr '\\000' x; echo");
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    let mut want = b"[0] ".to_vec();
    want.extend(std::iter::repeat_n(b'x', 1 << 20));
    want.push(b'\n');
    assert!(
        o.stdout == want,
        "{} bytes, not the 1 MiB line\n{}",
        o.stdout.len(),
        dump(&o)
    );
}

#[test]
fn a_last_line_without_a_newline_is_forwarded() {
    let o = run_sh(1, "printf 'first\\nlast'");
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    assert_eq!(o.stdout, b"[0] first\n[0] last\n", "{}", dump(&o));
}

#[test]
fn binary_data_is_forwarded_byte_for_byte() {
    // 1 MiB of pseudo-random bytes (every value, newlines and NULs among
    // them), through `cat`.
    let dir = std::env::temp_dir().join(format!("fastpmix-output-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("random.bin");
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let data: Vec<u8> = (0..1 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(&file, &data).expect("write data");
    let o = run_sh(1, &format!("cat '{}'", file.display()));
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    let mut want = data.clone();
    if want.last() != Some(&b'\n') {
        want.push(b'\n');
    }
    let got = unprefix(&o.stdout);
    assert!(
        got == want,
        "{} bytes back for {} sent",
        got.len(),
        data.len()
    );
}

#[test]
fn a_hundred_megabytes_of_output_are_forwarded_in_full() {
    const TOTAL: usize = 100_000_000;
    let t = Instant::now();
    let o = run_sh(1, &format!("yes 0123456789abcdef | head -c {TOTAL}"));
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    // 17-byte lines; the last one is cut short and gets its newline back.
    let lines = TOTAL.div_ceil(17);
    assert_eq!(o.stdout.len(), TOTAL + 1 + 4 * lines, "{}", dump(&o));
    let mut want = b"0123456789abcdef\n".repeat(lines);
    want.truncate(TOTAL);
    want.push(b'\n');
    assert!(unprefix(&o.stdout) == want, "the bytes differ");
    println!("100 MB forwarded in {:.2} s", t.elapsed().as_secs_f64());
}

#[test]
fn lines_of_ranks_writing_at_once_never_mix() {
    let o = run_sh(
        3,
        r#"i=0; while [ $i -lt 3000 ]; do echo "rank-$PMIX_RANK-line-$i-................................"; i=$((i+1)); done"#,
    );
    assert_eq!(o.status.code(), Some(0), "{}", dump(&o));
    let text = String::from_utf8(o.stdout.clone()).expect("ASCII output");
    let mut per_rank = [0usize; 3];
    for l in text.lines() {
        let (tag, rest) = l.split_once(' ').expect("a prefixed line");
        let r: usize = tag
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .expect("rank tag");
        assert!(
            rest.starts_with(&format!("rank-{r}-line-"))
                && rest.ends_with("................................"),
            "mixed line {l:?}"
        );
        per_rank[r] += 1;
    }
    assert_eq!(per_rank, [3000; 3], "{}", dump(&o));
}

#[test]
fn a_process_keeps_writing_after_the_launchers_own_stdout_is_gone() {
    // The launcher's stdout is a pipe nobody reads any more: its writes
    // fail, but the children's pipes stay open and drained.
    let dir = std::env::temp_dir().join(format!("fastpmix-closed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let marker = dir.join("finished");
    let script = format!(
        "i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done; touch '{}'",
        marker.display()
    );
    let mut child = Command::new(BIN)
        .args(["run", "-n", "1", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start fastpmix");
    drop(child.stdout.take());
    let mut err = child.stderr.take().expect("piped");
    let guard = guard_kill(child.id());
    let mut stderr = Vec::new();
    let _ = err.read_to_end(&mut stderr);
    let status = child.wait().expect("wait");
    drop(guard);
    let finished = marker.exists();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&stderr);
    assert!(finished, "the process did not run to its end:\n{stderr}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}
