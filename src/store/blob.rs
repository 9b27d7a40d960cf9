//! The bytes a server hands its host for other nodes (its contribution to
//! a fence, its answer to a direct-modex request) and reads back from the
//! host (every node's contributions, concatenated). Self-describing
//! frames, so the host only concatenates:
//!
//! ```text
//! frame := magic (8 B, "FPMXBLB1") | body length (u64 LE) | body (rkyv BlobRecord) | pad to 8
//! ```
//!
//! A truncated frame, a length beyond the bytes, an unknown magic or a
//! body that does not validate refuses the whole blob: nothing of it is
//! stored, and the waiters hear `PMIX_ERR_UNPACK_FAILURE`.

use crate::types::{Info, Nspace, Status};
use crate::wire::info_from_archived;
use shm_layout::store::{ArchivedBlobRecord, BlobRecord, KvRecord, BLOB_MAGIC};

/// One process's items: rank, then (scope, item) in put order.
pub(crate) type ProcItems = (u32, Vec<(u8, Info)>);

/// One frame: a namespace and its processes' items.
pub(crate) type Frame = (Nspace, Vec<ProcItems>);

/// One frame holding `procs` of `nspace`.
pub(crate) fn encode(nspace: &Nspace, procs: Vec<KvRecord>, out: &mut Vec<u8>) {
    if procs.is_empty() {
        return;
    }
    let rec = BlobRecord {
        nspace: nspace.as_str().to_owned(),
        procs,
    };
    let body = rkyv::to_bytes::<rkyv::rancor::Error>(&rec)
        .expect("encoding into a growable buffer cannot fail");
    out.extend_from_slice(&BLOB_MAGIC.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&body);
    out.resize(out.len().next_multiple_of(8), 0);
}

/// Every frame of `bytes`, or why the blob is refused.
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Frame>, (Status, String)> {
    let bad = |why: String| (Status::ERR_UNPACK_FAILURE, why);
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let head = bytes
            .get(at..at + 16)
            .ok_or_else(|| bad(format!("a frame header cut short at byte {at}")))?;
        let magic = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        if magic != BLOB_MAGIC {
            return Err(bad(format!("not a fastpmix data frame at byte {at}")));
        }
        let len = u64::from_le_bytes(head[8..].try_into().expect("8 bytes"));
        let start = at + 16;
        let end = usize::try_from(len)
            .ok()
            .and_then(|l| start.checked_add(l))
            .filter(|e| *e <= bytes.len())
            .ok_or_else(|| {
                bad(format!(
                    "a frame at byte {at} claims {len} bytes, {} are left",
                    bytes.len() - start
                ))
            })?;
        // The body is copied into aligned memory: the host's bytes have
        // no alignment promise.
        let mut body = rkyv::util::AlignedVec::<16>::with_capacity(end - start);
        body.extend_from_slice(&bytes[start..end]);
        let rec = rkyv::access::<ArchivedBlobRecord, rkyv::rancor::Error>(&body)
            .map_err(|e| bad(format!("a frame at byte {at} does not validate: {e}")))?;
        let ns = Nspace::new(rec.nspace.as_str())
            .map_err(|_| bad(format!("a frame at byte {at} names a bad namespace")))?;
        let mut procs = Vec::with_capacity(rec.procs.len());
        for p in rec.procs.iter() {
            let items = p
                .items
                .iter()
                .map(|i| Ok((i.scope, info_from_archived(&i.info)?)))
                .collect::<Result<Vec<_>, Status>>()
                .map_err(|s| bad(format!("a frame at byte {at} holds a bad item ({s})")))?;
            procs.push((p.rank.to_native(), items));
        }
        out.push((ns, procs));
        at = end.next_multiple_of(8);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shm_layout::record::{InfoRecord, ValueRecord};
    use shm_layout::store::{scope, KvItem};

    fn rec(rank: u32) -> KvRecord {
        KvRecord {
            rank,
            items: vec![KvItem {
                scope: scope::GLOBAL,
                info: InfoRecord {
                    key: "ep".into(),
                    flags: 0,
                    value: ValueRecord::ByteObject(vec![rank as u8; 100]),
                },
            }],
        }
    }

    #[test]
    fn concatenated_frames_read_back_in_order() {
        let (a, b) = (Nspace::new("a").unwrap(), Nspace::new("b").unwrap());
        let mut bytes = Vec::new();
        encode(&a, vec![rec(0), rec(1)], &mut bytes);
        encode(&b, vec![], &mut bytes);
        encode(&b, vec![rec(7)], &mut bytes);
        let got = decode(&bytes).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, a);
        let ranks: Vec<u32> = got[0].1.iter().map(|p| p.0).collect();
        assert_eq!(ranks, [0, 1]);
        assert_eq!(got[1].1[0].0, 7);
        let (scope, item) = &got[1].1[0].1[0];
        assert_eq!((*scope, item.key.as_str()), (scope::GLOBAL, "ep"));
        assert_eq!(item.value, crate::types::Value::ByteObject(vec![7; 100]));
        assert!(decode(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_truncated_or_lying_blob_is_refused_whole() {
        let a = Nspace::new("a").unwrap();
        let mut bytes = Vec::new();
        encode(&a, vec![rec(0)], &mut bytes);
        // (The padding after the last body may be missing: it holds nothing.)
        for cut in [1, 8, 15, 17, bytes.len() - 8] {
            let e = decode(&bytes[..cut]).unwrap_err();
            assert_eq!(e.0, Status::ERR_UNPACK_FAILURE, "cut at {cut}");
        }
        let mut lying = bytes.clone();
        lying[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&lying).is_err());
        let mut short = bytes.clone();
        short[8..16].copy_from_slice(&8u64.to_le_bytes());
        assert!(decode(&short).is_err(), "a body cut by its own length");
        let mut magic = bytes.clone();
        magic[0] ^= 1;
        assert!(decode(&magic).is_err());
        // The root object sits at the end of the body: scribbled over, its
        // relative pointers point outside.
        let mut garbage = bytes;
        let end = garbage.len();
        for b in &mut garbage[end - 24..end] {
            *b = 0xff;
        }
        assert!(decode(&garbage).is_err());
    }
}
