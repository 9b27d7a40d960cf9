//! Hostile input: every decoder that reads bytes another
//! process wrote, fed mutated and random input. A malformed input returns an
//! error; it never panics, never hangs, and nothing reads out of bounds (the
//! decoders are safe Rust over rkyv's validated access; the ring's own
//! unsafe reads are covered by `ring_hostile` and miri).
//!
//! The seeds live in `tests/corpus/<decoder>/` (valid inputs, one per
//! file). Each run decodes every seed (they must still decode: a format
//! change shows up here), then mutates them with proptest: bit flips, byte
//! overwrites with boundary values, truncation, extension, splicing two
//! seeds, and pure noise. This is the always-on harness that runs
//! when cargo-fuzz cannot; `FASTPMIX_FUZZ_CASES=<n>` makes it longer.
//! `FASTPMIX_WRITE_CORPUS=1` rewrites the seeds from the encoders.
//!
//! The decoders are called through `fastpmix::internals::fuzzing::decode`, which the
//! cargo-fuzz targets in `fuzz/` share. Decoders and the production path
//! each one stands for:
//! - `record`: a ring slot or a submission-queue slot → `decode_record`
//!   (rkyv validation, then `event_from_archived`), as `RingReader` and the
//!   server's `Collector` do.
//! - `request` / `reply`: a control-socket frame body → `control::request`
//!   / `control::reply`, then every embedded record converted as the server
//!   and the client convert them.
//! - `frames`: a byte stream → `FrameReader` (length prefixes, the 1 MiB cap).
//! - `node_map` / `proc_map`: `PMIX_NODE_MAP` / `PMIX_PROC_MAP` strings →
//!   `parse_node_map` / `parse_proc_map`.

use fastpmix::event::EventClass;
use fastpmix::internals::fuzzing::decode;
use fastpmix::internals::wire::control::{self, Reply, Request};
use fastpmix::internals::wire::{
    decode_record, event_to_record, info_to_record, proc_to_record, WireEvent,
};
use fastpmix::server::regex::{generate_ppn, generate_regex};
use fastpmix::types::attrs;
use fastpmix::types::DataArray;
use fastpmix::{DataRange, Info, Proc, Status, Value};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

/// A decoder that runs past this is a hang.
const HANG: Duration = Duration::from_secs(300);

fn cases() -> u32 {
    std::env::var("FASTPMIX_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(target)
}

fn key(s: &str) -> fastpmix::Key {
    fastpmix::Key::new(s).unwrap()
}

fn p(ns: &str, rank: u32) -> Proc {
    Proc::new(ns, rank).unwrap()
}

fn events() -> Vec<WireEvent> {
    let ev = |code: i32, range: DataRange, info: Vec<Info>| WireEvent {
        code: Status(code),
        source: p("job-a", 3),
        range,
        info,
        class: EventClass::Job,
        source_seq: 7,
        timestamp_ns: 1_700_000_000_000_000_000,
    };
    let nested = Info::new(
        key("test.nested"),
        Value::DataArray(DataArray::Info(vec![
            Info::new(key("test.inner"), Value::Uint32(5)),
            Info::new(
                key("test.deeper"),
                Value::DataArray(DataArray::String(vec!["x".into(), "yz".into()])),
            ),
        ])),
    );
    vec![
        ev(-5201, DataRange::LOCAL, vec![]),
        ev(
            -5202,
            DataRange::NAMESPACE,
            vec![
                Info::new(key("test.s"), Value::String("hello".into())),
                Info::new(key("test.i"), Value::Int64(-9)),
                Info::new(key("test.d"), Value::Double(2.5)),
                Info::new(key("test.b"), Value::ByteObject(vec![0, 1, 2, 255])),
                Info::new(
                    attrs::PMIX_EVENT_AFFECTED_PROC,
                    Value::Proc(Box::new(p("job-a", 1))),
                ),
            ],
        ),
        ev(
            -5203,
            DataRange::CUSTOM,
            vec![
                Info::new(
                    attrs::PMIX_EVENT_CUSTOM_RANGE,
                    Value::DataArray(DataArray::Proc(vec![p("job-a", 0), p("job-b", 2)])),
                ),
                Info::new(attrs::PMIX_EVENT_NON_DEFAULT, Value::Bool(true)),
                nested,
            ],
        ),
    ]
}

fn requests() -> Vec<Request> {
    let infos = || {
        vec![
            info_to_record(&Info::new(key("test.s"), Value::String("v".into()))),
            info_to_record(&Info::new(attrs::PMIX_TIMEOUT, Value::Int(3))),
        ]
    };
    vec![
        Request::Hello {
            version: control::PROTOCOL_VERSION,
            nspace: "job-a".into(),
            rank: 0,
        },
        Request::RegisterEvents {
            codes: vec![-1, -231, 5],
        },
        Request::Finalize,
        Request::ToolNotify {
            code: -5201,
            range: 3,
            source: proc_to_record(&p("job-a", 0)),
            info: infos(),
        },
        Request::JobControl {
            id: 9,
            targets: vec![proc_to_record(&p("job-a", 1))],
            directives: infos(),
        },
        Request::Monitor {
            id: 10,
            monitor: info_to_record(&Info::new(attrs::PMIX_MONITOR_HEARTBEAT, Value::Bool(true))),
            error: -109,
            directives: infos(),
        },
        Request::Abort {
            id: 11,
            status: 3,
            msg: "bye".into(),
            targets: vec![],
        },
        Request::Fence {
            id: 12,
            procs: vec![proc_to_record(&p("job-a", u32::MAX))],
            info: infos(),
        },
        Request::Query {
            id: 13,
            keys: vec![vec!["pmix.qry.ns".into(), "pmix.qry.ptable".into()]],
            qualifiers: vec![infos()],
        },
        Request::Commit {
            items: infos()
                .into_iter()
                .map(|info| shm_layout::store::KvItem { scope: 3, info })
                .collect(),
        },
        Request::Get {
            id: 14,
            proc: proc_to_record(&p("job-a", 1)),
            key: "ep".into(),
            info: infos(),
        },
        Request::Publish {
            id: 15,
            info: infos(),
        },
        Request::Lookup {
            id: 16,
            keys: vec!["svc".into(), "port".into()],
            info: infos(),
        },
        Request::Unpublish {
            id: 17,
            keys: vec![],
            info: infos(),
        },
        Request::Spawn {
            id: 18,
            job_info: infos(),
            apps: vec![control::AppRecord {
                cmd: "/bin/true".into(),
                argv: vec!["/bin/true".into(), "-x".into()],
                env: vec!["A=1".into()],
                cwd: "/tmp".into(),
                maxprocs: 2,
                info: infos(),
            }],
        },
        Request::Connect {
            id: 19,
            disconnect: true,
            procs: vec![
                proc_to_record(&p("job-a", 0)),
                proc_to_record(&p("job-a", 1)),
            ],
            info: infos(),
        },
    ]
}

fn replies() -> Vec<Reply> {
    vec![
        Reply::Welcome {
            segment: "/fastpmix-1-2".into(),
            client: 3,
            server: proc_to_record(&p("srv", 0)),
            job_info: vec![info_to_record(&Info::new(
                attrs::PMIX_JOB_SIZE,
                Value::Uint32(4),
            ))],
            replay: events().iter().map(event_to_record).collect(),
            lost: 2,
            cache_size: 512,
        },
        Reply::Done { status: -25 },
        Reply::Result {
            id: 4,
            status: 0,
            info: vec![info_to_record(&Info::new(
                key("test.r"),
                Value::String("ok".into()),
            ))],
        },
        Reply::Result {
            id: 13,
            status: -52,
            info: vec![info_to_record(&Info::new(
                attrs::PMIX_QUERY_PROC_TABLE,
                Value::DataArray(fastpmix::types::DataArray::ProcInfo(vec![
                    fastpmix::types::ProcInfo {
                        proc: p("job-a", 1),
                        hostname: "n1".into(),
                        executable: "/bin/app".into(),
                        pid: 77,
                        exit_code: 0,
                        state: 6,
                    },
                ])),
            ))],
        },
        Reply::Refused {
            status: -27,
            why: "no".into(),
        },
    ]
}

fn bytes_of<T>(v: &T) -> Vec<u8>
where
    T: for<'a> rkyv::Serialize<
        rkyv::api::high::HighSerializer<
            rkyv::util::AlignedVec,
            rkyv::ser::allocator::ArenaHandle<'a>,
            rkyv::rancor::Error,
        >,
    >,
{
    rkyv::to_bytes::<rkyv::rancor::Error>(v).unwrap().to_vec()
}

/// The encoders' current output, by decoder.
fn generated() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let records: Vec<Vec<u8>> = events()
        .iter()
        .map(|e| bytes_of(&event_to_record(e)))
        .collect();
    let frames: Vec<Vec<u8>> = requests()
        .iter()
        .map(control::frame)
        .chain(replies().iter().map(control::frame))
        .collect();
    vec![
        ("record", records),
        ("request", requests().iter().map(bytes_of).collect()),
        ("reply", replies().iter().map(bytes_of).collect()),
        ("frames", frames),
        (
            "node_map",
            ["node01,node02,node03,login", "a,a,b,c[1],,d-7", "x"]
                .iter()
                .map(|s| generate_regex(s).into_bytes())
                .collect(),
        ),
        (
            "proc_map",
            ["0,1,2;3,4,5", "0;1;2", "7,3,9,10,11;;0"]
                .iter()
                .map(|s| generate_ppn(s).into_bytes())
                .collect(),
        ),
        ("blob", fastpmix::internals::fuzzing::blob_seeds()),
    ]
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no seeds in {}", dir.display());
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip {
        at: usize,
        bit: u8,
    },
    Set {
        at: usize,
        byte: u8,
    },
    /// Writes a boundary value (0, 0xFF.., a huge length) over 4 or 8 bytes.
    Word {
        at: usize,
        which: u8,
    },
    Truncate {
        at: usize,
    },
    Extend {
        bytes: Vec<u8>,
    },
    Splice {
        other: usize,
        at: usize,
        from: usize,
    },
    Noise {
        bytes: Vec<u8>,
    },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Set { at, byte }),
        3 => (any::<usize>(), 0u8..6).prop_map(|(at, which)| Mutation::Word { at, which }),
        2 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        1 => proptest::collection::vec(any::<u8>(), 1..64).prop_map(|bytes| Mutation::Extend { bytes }),
        1 => (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(other, at, from)| Mutation::Splice { other, at, from }),
        1 => proptest::collection::vec(any::<u8>(), 0..512).prop_map(|bytes| Mutation::Noise { bytes }),
    ]
}

fn apply(seeds: &[Vec<u8>], base: usize, ms: &[Mutation]) -> Vec<u8> {
    let mut b = seeds[base % seeds.len()].clone();
    for m in ms {
        let n = b.len().max(1);
        match m {
            Mutation::Flip { at, bit } => {
                if !b.is_empty() {
                    b[at % n] ^= 1 << bit;
                }
            }
            Mutation::Set { at, byte } => {
                if !b.is_empty() {
                    b[at % n] = *byte;
                }
            }
            Mutation::Word { at, which } => {
                let w: &[u8] = match which {
                    0 => &[0; 4],
                    1 => &[0xFF; 4],
                    2 => &[0xFF; 8],
                    3 => &[0xFF, 0xFF, 0xFF, 0x7F],
                    4 => &[0x00, 0x00, 0x10, 0x00], // 1 MiB
                    _ => &[0x01, 0x00, 0x10, 0x00], // 1 MiB + 1
                };
                let at = at % n;
                for (i, x) in w.iter().enumerate() {
                    if let Some(slot) = b.get_mut(at + i) {
                        *slot = *x;
                    }
                }
            }
            Mutation::Truncate { at } => b.truncate(at % n),
            Mutation::Extend { bytes } => b.extend_from_slice(bytes),
            Mutation::Splice { other, at, from } => {
                let o = &seeds[other % seeds.len()];
                let at = at % n;
                let from = from % o.len().max(1);
                b.truncate(at);
                b.extend_from_slice(&o[from.min(o.len())..]);
            }
            Mutation::Noise { bytes } => b = bytes.clone(),
        }
    }
    b
}

/// Mutates `target`'s seeds for [`cases`] cases in a thread: a panic fails
/// the case (proptest shrinks it and prints the input), a hang fails the
/// test. Returns how many mutated inputs were accepted and refused.
fn fuzz(target: &'static str) -> (u32, u32) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let seeds = seeds(target);
        let mut runner = TestRunner::new(Config {
            cases: cases(),
            failure_persistence: None,
            ..Config::default()
        });
        let counts = std::cell::Cell::new((0u32, 0u32));
        let strategy = (any::<usize>(), proptest::collection::vec(mutation(), 1..6));
        let r = runner.run(&strategy, |(base, ms)| {
            let input = apply(&seeds, base, &ms);
            let ok = decode(target, &input);
            let (a, b) = counts.get();
            counts.set(if ok { (a + 1, b) } else { (a, b + 1) });
            Ok(())
        });
        let _ = tx.send(r.map(|_| counts.get()).map_err(|e| e.to_string()));
    });
    match rx.recv_timeout(HANG) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => panic!("{target}: {e}"),
        Err(_) => panic!("{target}: a decoder hung or panicked outside a case"),
    }
}

fn fuzz_and_report(target: &'static str) {
    let (accepted, refused) = fuzz(target);
    eprintln!("{target}: {accepted} mutated inputs accepted, {refused} refused");
    // The harness reaches the error paths: a corpus of seeds that mutation
    // never breaks would test nothing.
    assert!(refused > 0, "{target}: no mutated input was refused");
}

#[test]
fn the_corpus_seeds_are_what_the_encoders_write_and_every_one_decodes() {
    let write = std::env::var("FASTPMIX_WRITE_CORPUS").as_deref() == Ok("1");
    for (target, inputs) in generated() {
        let dir = corpus_dir(target);
        if write {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            for (i, b) in inputs.iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i:02}")), b).unwrap();
            }
        }
        let on_disk = seeds(target);
        assert_eq!(
            on_disk, inputs,
            "{target}: the corpus differs from the encoders' output (a format change?); \
             rerun with FASTPMIX_WRITE_CORPUS=1 and review the diff"
        );
        for (i, s) in on_disk.iter().enumerate() {
            assert!(decode(target, s), "{target} seed {i} does not decode");
        }
    }
}

#[test]
fn mutated_ring_and_submission_records_are_refused_or_decoded_never_a_panic() {
    fuzz_and_report("record");
}

#[test]
fn mutated_control_requests_are_refused_or_decoded_never_a_panic() {
    fuzz_and_report("request");
}

#[test]
fn mutated_control_replies_are_refused_or_decoded_never_a_panic() {
    fuzz_and_report("reply");
}

#[test]
fn mutated_control_byte_streams_are_framed_or_refused_never_a_panic() {
    fuzz_and_report("frames");
}

#[test]
fn mutated_node_maps_are_refused_or_parsed_never_a_panic() {
    fuzz_and_report("node_map");
}

#[test]
fn mutated_proc_maps_are_refused_or_parsed_never_a_panic() {
    fuzz_and_report("proc_map");
}

#[test]
fn mutated_blobs_from_the_host_are_refused_or_decoded_never_a_panic() {
    fuzz_and_report("blob");
}

#[test]
fn a_record_decodes_to_exactly_the_event_encoded() {
    for e in events() {
        let b = bytes_of(&event_to_record(&e));
        let d = decode_record(&b).unwrap();
        assert_eq!((d.code, d.source, d.range), (e.code, e.source, e.range));
        assert_eq!(d.info, e.info);
    }
}
