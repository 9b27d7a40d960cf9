//! The tool itself (see the crate docs in main.rs).

use fastpmix::internals::ring::{ArchivedEventRecord, Segment, SegmentError};
use fastpmix::internals::ring::{OpenError, NAME_PREFIX};
use rkyv::util::AlignedVec;
use shm_layout::{client_state, SegmentHeader, INIT_COMPLETE, LAYOUT_VERSION, SCHEMA_HASH};
use std::time::Duration;

const USAGE: &str = "usage: fastpmix-shm-inspect [--records] [--timeout-ms N] (NAME... | --all)

  NAME           segment name (/fastpmix-...), with or without '/', or /dev/shm/<name>
  --all          every /dev/shm/fastpmix-* segment of this user
  --records      one line per live record
  --timeout-ms N wait up to N ms for a segment's init-complete word (default 200)";

fn usage() -> ! {
    eprintln!("{USAGE}");
    std::process::exit(2)
}

struct Options {
    all: bool,
    records: bool,
    timeout: Duration,
    names: Vec<String>,
}

fn parse_args() -> Options {
    let mut o = Options {
        all: false,
        records: false,
        timeout: Duration::from_millis(200),
        names: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--all" => o.all = true,
            "--records" => o.records = true,
            "--timeout-ms" => {
                let ms = args
                    .next()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or_else(|| usage());
                o.timeout = Duration::from_millis(ms);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            s if s.starts_with('-') => {
                eprintln!("unknown option {s}");
                usage()
            }
            _ => o.names.push(a),
        }
    }
    // Either --all or names: not both, not neither.
    if o.all != o.names.is_empty() {
        usage();
    }
    o
}

/// `/dev/shm/x`, `x` and `/x` all name the shm object `/x`.
fn normalise(name: &str) -> String {
    let bare = name
        .strip_prefix("/dev/shm/")
        .unwrap_or(name)
        .trim_start_matches('/');
    format!("/{bare}")
}

/// Every `/dev/shm/fastpmix-*` object owned by this user, sorted.
fn all_segments() -> std::io::Result<Vec<String>> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut names = Vec::new();
    for entry in std::fs::read_dir("/dev/shm")? {
        let Ok(entry) = entry else { continue };
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if !file_name.starts_with(&NAME_PREFIX[1..]) {
            continue;
        }
        if entry.metadata().is_ok_and(|m| m.uid() == uid) {
            names.push(format!("/{file_name}"));
        }
    }
    names.sort();
    Ok(names)
}

/// "alive", "gone" or "unknown" for a pid.
fn liveness(pid: u32) -> &'static str {
    if pid == 0 || pid > i32::MAX as u32 {
        return "unknown";
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    if r == 0 {
        return "alive";
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ESRCH) => "gone",
        Some(libc::EPERM) => "alive",
        _ => "unknown",
    }
}

fn state_name(s: u32) -> String {
    match s {
        client_state::FREE => "FREE".into(),
        client_state::RESERVED => "RESERVED".into(),
        client_state::ACTIVE => "ACTIVE".into(),
        client_state::DEAD => "DEAD".into(),
        other => format!("?{other}"),
    }
}

fn magic_text(m: u64) -> String {
    m.to_le_bytes()
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
        .collect()
}

pub fn main() {
    let o = parse_args();
    let names = if o.all {
        match all_segments() {
            Ok(n) if n.is_empty() => {
                // SAFETY: getuid cannot fail.
                let uid = unsafe { libc::getuid() };
                println!("no fastpmix segments of uid {uid} in /dev/shm");
                return;
            }
            Ok(n) => n,
            Err(e) => {
                eprintln!("cannot list /dev/shm: {e}");
                std::process::exit(1)
            }
        }
    } else {
        o.names.iter().map(|n| normalise(n)).collect()
    };
    let mut failed = 0;
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            println!();
        }
        if !inspect(name, &o) {
            failed += 1;
        }
    }
    if failed > 0 {
        std::process::exit(1);
    }
}

/// Prints one segment; false when it could not be opened.
fn inspect(name: &str, o: &Options) -> bool {
    let seg = match Segment::open_read_only(name, o.timeout) {
        Ok(s) => s,
        Err(e) => {
            println!("segment {name}");
            println!("  error: cannot open: {e}");
            println!("  typed: {e:?}");
            if matches!(
                e,
                SegmentError::Open(
                    OpenError::VersionMismatch { .. }
                        | OpenError::SchemaMismatch { .. }
                        | OpenError::BadGeometry(_)
                )
            ) {
                raw_header(name);
            }
            return false;
        }
    };
    let region = seg.region();
    let h = region.header();
    let g = region.geometry();
    let off = region.offsets();
    let st = region.state();

    println!("segment {name}");
    println!("header");
    println!(
        "  magic            {:#018x} \"{}\"",
        h.magic,
        magic_text(h.magic)
    );
    println!(
        "  layout version   {} (this build reads {LAYOUT_VERSION})",
        h.layout_version
    );
    println!(
        "  schema hash      {:#018x} ({})",
        h.schema_hash,
        if h.schema_hash == SCHEMA_HASH {
            "matches this build".to_owned()
        } else {
            format!("DIFFERS: this build is {SCHEMA_HASH:#018x}")
        }
    );
    println!(
        "  geometry         slot_count {}, slot_size {} B ({} B per record), data_slots {}, client_capacity {}, submit_depth {}",
        g.slot_count,
        g.slot_size,
        shm_layout::slot_capacity(g.slot_size),
        off.data_slots,
        g.client_capacity,
        g.submit_depth
    );
    println!(
        "  offsets          ring {}, clients {}, index {}, slots {}, submit headers {}, submit slots {} ({} B per queue)",
        h.ring_offset,
        h.clients_offset,
        h.index_offset,
        h.slots_offset,
        h.submit_offset,
        h.submit_slots_offset,
        h.submit_queue_size
    );
    println!(
        "  total size       {} B ({:.1} KiB), header {} B",
        h.total_size,
        h.total_size as f64 / 1024.0,
        h.header_size
    );
    println!(
        "  server           pid {} ({}), uid {}, generation {:#018x}, heartbeat {}",
        h.server_pid,
        liveness(h.server_pid),
        h.server_uid,
        h.server_generation,
        st.server_heartbeat
    );

    let n = g.slot_count as u64;
    let oldest = st.head.saturating_sub(n);
    println!("ring");
    println!(
        "  head {} (live seqs {}..{})  sleepers {}  wakes {}  refused {}",
        st.head,
        oldest,
        st.head,
        st.sleeper_words
            .iter()
            .map(|w| format!("{w:#x}"))
            .collect::<Vec<_>>()
            .join(","),
        st.wakes,
        st.refused
    );

    let used: Vec<_> = st
        .clients
        .iter()
        .filter(|c| c.state != client_state::FREE)
        .collect();
    println!(
        "clients: {} of {} entries not FREE",
        used.len(),
        g.client_capacity
    );
    if !used.is_empty() {
        println!(
            "  {:>5} {:<8} {:>8} {:<7} {:>4} {:>10} {:>8} {:>7} {:>8} {:>6} {:>9} {:>18} {:>9} {:>8}",
            "entry",
            "state",
            "pid",
            "process",
            "gen",
            "cursor",
            "lag",
            "waiting",
            "lost",
            "held",
            "heartbeat",
            "wakes for codes",
            "submitted",
            "unrouted"
        );
        for c in used {
            let lag = st.head.saturating_sub(c.cursor);
            let held = if c.held_slot == u32::MAX {
                "-".to_owned()
            } else {
                c.held_slot.to_string()
            };
            let wants = match c.interest {
                shm_layout::INTEREST_ALL => "all".to_owned(),
                0 => "none".to_owned(),
                bits => format!("{bits:#018x}"),
            };
            println!(
                "  {:>5} {:<8} {:>8} {:<7} {:>4} {:>10} {:>8} {:>7} {:>8} {:>6} {:>9} {:>18} {:>9} {:>8}{}",
                c.index,
                state_name(c.state),
                c.pid,
                liveness(c.pid),
                c.generation,
                c.cursor,
                lag,
                if c.waiting { "yes" } else { "no" },
                c.lost,
                held,
                c.heartbeat,
                wants,
                c.submitted,
                c.submitted.saturating_sub(c.routed),
                if lag > n {
                    "  (more than a ring behind: passes over records for others, or reports a loss)"
                } else {
                    ""
                }
            );
        }
    }

    let (mut valid, mut invalid, mut unstable) = (0u64, 0u64, 0u64);
    let mut lines = Vec::new();
    for seq in oldest..st.head {
        let Some(bytes) = region.copy_record(seq) else {
            unstable += 1;
            if o.records {
                lines.push(format!(
                    "  {seq:>10}  unstable (overwritten or changing while copied)"
                ));
            }
            continue;
        };
        let mut aligned = AlignedVec::<16>::with_capacity(bytes.len());
        aligned.extend_from_slice(&bytes);
        match rkyv::access::<ArchivedEventRecord, rkyv::rancor::Error>(&aligned) {
            Ok(r) => {
                valid += 1;
                if o.records {
                    lines.push(format!(
                        "  {seq:>10} {:>5} {:>7} {:<24} {:>5} {:#6x} {:>5} {:>10}",
                        bytes.len(),
                        r.code.to_native(),
                        format!("{}:{}", r.source.nspace.as_str(), r.source.rank.to_native()),
                        r.range,
                        r.flags.to_native(),
                        r.info.len(),
                        r.source_seq.to_native()
                    ));
                }
            }
            Err(e) => {
                invalid += 1;
                if o.records {
                    lines.push(format!("  {seq:>10} {:>5}  INVALID: {e}", bytes.len()));
                }
            }
        }
    }
    println!(
        "records: {} live (seqs {}..{}): {valid} valid, {invalid} invalid, {unstable} unstable",
        st.head - oldest,
        oldest,
        st.head
    );
    if o.records && !lines.is_empty() {
        println!(
            "  {:>10} {:>5} {:>7} {:<24} {:>5} {:>6} {:>5} {:>10}",
            "seq", "len", "code", "source", "range", "flags", "infos", "source_seq"
        );
        for l in lines {
            println!("{l}");
        }
    }
    true
}

/// Prints the immutable header fields of a segment this build cannot open
/// (another layout version or schema), straight from a read-only mapping.
fn raw_header(name: &str) {
    let path = format!("/dev/shm{name}");
    let Ok(file) = std::fs::File::open(&path) else {
        return;
    };
    // SAFETY: a read-only shared mapping of a shm object; only the header's
    // immutable fields are read below, by value through raw pointers.
    let Ok(map) = (unsafe { memmap2::Mmap::map(&file) }) else {
        return;
    };
    if map.len() < std::mem::size_of::<SegmentHeader>() {
        println!(
            "  raw header: object is {} B, smaller than a header",
            map.len()
        );
        return;
    }
    let h = map.as_ptr() as *const SegmentHeader;
    // SAFETY: the mapping is at least one header long and page-aligned (so
    // aligned for SegmentHeader); each field is read by value through a raw
    // pointer (no reference to memory another process may write). These
    // fields are written once, before init-complete, by the creator.
    let (magic, version, schema, total, slots, slot_size, clients, pid, init) = unsafe {
        (
            std::ptr::addr_of!((*h).magic).read_volatile(),
            std::ptr::addr_of!((*h).layout_version).read_volatile(),
            std::ptr::addr_of!((*h).schema_hash).read_volatile(),
            std::ptr::addr_of!((*h).total_size).read_volatile(),
            std::ptr::addr_of!((*h).slot_count).read_volatile(),
            std::ptr::addr_of!((*h).slot_size).read_volatile(),
            std::ptr::addr_of!((*h).client_capacity).read_volatile(),
            std::ptr::addr_of!((*h).server_pid).read_volatile(),
            std::ptr::addr_of!((*h).init_complete).read_volatile(),
        )
    };
    println!("  raw header (not validated):");
    println!(
        "    magic {magic:#018x} \"{}\", layout version {version} (this build {LAYOUT_VERSION})",
        magic_text(magic)
    );
    println!(
        "    schema hash {schema:#018x} ({})",
        if schema == SCHEMA_HASH {
            "matches this build"
        } else {
            "differs from this build"
        }
    );
    println!(
        "    total {total} B, slot_count {slots}, slot_size {slot_size}, client_capacity {clients}"
    );
    println!(
        "    server pid {pid} ({}), init {}",
        liveness(pid),
        if init == INIT_COMPLETE {
            "complete"
        } else {
            "NOT complete"
        }
    );
}
