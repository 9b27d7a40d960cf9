//! Every decoder of bytes another process wrote, behind one entry point,
//! for the fuzz harnesses: `tests/fuzz_decoders.rs` (proptest, always run)
//! and the cargo-fuzz targets in `fuzz/` (`tools/fuzz`). Each decoder is
//! called exactly as the production path calls it; see
//! `docs/reliability.md` ("Hostile input").

use crate::server::regex::{parse_node_map, parse_proc_map};
use crate::wire::control::{self, ArchivedReply, ArchivedRequest, FrameError, FrameReader};
use crate::wire::{decode_record, event_from_archived, info_from_archived, proc_from_archived};
use crate::Status;

/// The decoders, by the name of their corpus directory in `tests/corpus/`.
pub const TARGETS: [&str; 7] = [
    "record", "request", "reply", "frames", "node_map", "proc_map", "blob",
];

/// Copies into an aligned buffer, as the ring and the frame reader do.
fn aligned(b: &[u8]) -> rkyv::util::AlignedVec {
    let mut v = rkyv::util::AlignedVec::new();
    v.extend_from_slice(b);
    v
}

fn convert_request(r: &ArchivedRequest) -> Result<(), Status> {
    let infos = |v: &rkyv::vec::ArchivedVec<_>| -> Result<(), Status> {
        for i in v.iter() {
            info_from_archived(i)?;
        }
        Ok(())
    };
    let procs = |v: &rkyv::vec::ArchivedVec<_>| -> Result<(), Status> {
        for q in v.iter() {
            proc_from_archived(q)?;
        }
        Ok(())
    };
    match r {
        ArchivedRequest::ToolNotify { source, info, .. } => {
            proc_from_archived(source)?;
            infos(info)
        }
        ArchivedRequest::Allocate { info, .. } => infos(info),
        ArchivedRequest::JobControl {
            targets,
            directives,
            ..
        } => {
            procs(targets)?;
            infos(directives)
        }
        ArchivedRequest::Monitor {
            monitor,
            directives,
            ..
        } => {
            info_from_archived(monitor)?;
            infos(directives)
        }
        ArchivedRequest::Abort { targets, .. } => procs(targets),
        ArchivedRequest::Log {
            data, directives, ..
        } => {
            infos(data)?;
            infos(directives)
        }
        ArchivedRequest::Fence {
            procs: ps, info, ..
        } => {
            procs(ps)?;
            infos(info)
        }
        ArchivedRequest::Commit { items } => {
            for i in items.iter() {
                info_from_archived(&i.info)?;
            }
            Ok(())
        }
        ArchivedRequest::Get {
            proc, key, info, ..
        } => {
            proc_from_archived(proc)?;
            crate::Key::new(key.as_str())?;
            infos(info)
        }
        _ => Ok(()),
    }
}

fn convert_reply(r: &ArchivedReply) -> Result<(), Status> {
    match r {
        ArchivedReply::Welcome {
            server,
            job_info,
            replay,
            ..
        } => {
            proc_from_archived(server)?;
            for i in job_info.iter() {
                info_from_archived(i)?;
            }
            for e in replay.iter() {
                event_from_archived(e)?;
            }
            Ok(())
        }
        ArchivedReply::Result { info, .. } => {
            for i in info.iter() {
                info_from_archived(i)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// A non-blocking socket that has `.0` to read, then would block.
struct Nonblocking<'a>(&'a [u8]);

impl std::io::Read for Nonblocking<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.0.is_empty() {
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Runs decoder `target` (one of [`TARGETS`]) over `input`: `true` when it
/// accepted the input. Never panics on any input; an unknown target panics.
pub fn decode(target: &str, input: &[u8]) -> bool {
    match target {
        "record" => decode_record(input).is_ok(),
        "request" => control::request(&aligned(input))
            .map_err(|_| Status::ERR_BAD_PARAM)
            .and_then(convert_request)
            .is_ok(),
        "reply" => control::reply(&aligned(input))
            .map_err(|_| Status::ERR_BAD_PARAM)
            .and_then(convert_reply)
            .is_ok(),
        "frames" => {
            // Fed in uneven chunks, as a socket delivers them, to a reader
            // on each side: a frame is a request or a reply, by direction.
            let (mut server, mut client) = (FrameReader::default(), FrameReader::default());
            let mut ok = true;
            for chunk in input.chunks(7) {
                let filled = (
                    server.fill(Nonblocking(chunk)),
                    client.fill(Nonblocking(chunk)),
                );
                if filled.0.is_err() || filled.1.is_err() {
                    ok = false;
                }
                loop {
                    match server.next_request() {
                        Ok(Some(req)) => {
                            let _ = convert_request(&req);
                        }
                        Ok(None) => break,
                        // Not a request: consumed, the stream goes on.
                        Err(FrameError::Invalid(_)) => {}
                        Err(_) => return false,
                    }
                }
                loop {
                    match client.next_reply() {
                        Ok(Some(rep)) => {
                            let _ = convert_reply(&rep);
                        }
                        Ok(None) => break,
                        Err(FrameError::Invalid(_)) => {}
                        Err(_) => return false,
                    }
                }
            }
            ok
        }
        "node_map" => match std::str::from_utf8(input) {
            Ok(s) => parse_node_map(s).is_ok(),
            Err(_) => false,
        },
        "proc_map" => match std::str::from_utf8(input) {
            Ok(s) => parse_proc_map(s).is_ok(),
            Err(_) => false,
        },
        // What another node's server sent through the host (a fence's
        // collected data, a direct-modex answer).
        "blob" => crate::store::blob::decode(input).is_ok(),
        t => panic!("unknown decoder {t}"),
    }
}

/// Blobs as a server writes them for its host (the `blob` corpus): one
/// namespace with two processes, and two frames concatenated as a host
/// delivers them.
pub fn blob_seeds() -> Vec<Vec<u8>> {
    use crate::store::blob::encode;
    use crate::types::{Info, Key, Nspace, Value};
    use crate::wire::info_to_record;
    use shm_layout::store::{KvItem, KvRecord};
    let item = |scope: u8, k: &str, v: Value| KvItem {
        scope,
        info: info_to_record(&Info::new(Key::new(k).expect("a short key"), v)),
    };
    let rec = |rank: u32| KvRecord {
        rank,
        items: vec![
            item(3, "ep", Value::ByteObject(vec![rank as u8; 16])),
            item(2, "card", Value::String(format!("rank-{rank}"))),
        ],
    };
    let (a, b) = (
        Nspace::new("job-a").expect("a name"),
        Nspace::new("job-b").expect("a name"),
    );
    let mut one = Vec::new();
    encode(&a, vec![rec(0), rec(1)], &mut one);
    let mut two = one.clone();
    encode(&b, vec![rec(7)], &mut two);
    vec![one, two]
}
