//! Fast hash maps, and a fast compare of short byte strings, for the
//! per-event paths.
//!
//! Every map here is keyed by something small this process registered or
//! authenticated (namespaces, procs, codes, attribute names, handler ids),
//! or is a fixed table only looked up (the attribute table): no map an
//! untrusted peer can fill with colliding keys. SipHash, the standard
//! default, showed in the event path's profiles (keys of 8–260 bytes
//! hashed several times per event).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A word-at-a-time multiplicative hash (the rustc compiler's "Fx" step):
/// eight bytes per multiply. FNV-1a's byte-at-a-time chain of dependent
/// multiplies cost 10-20 ns for each namespace, proc or key hashed, several
/// times per event; this costs a few. Keys here are never chosen by a peer
/// (see above), so a fast, non-keyed hash is enough.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const SEED: u64 = 0x517c_c1b7_2722_0a95;

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves its best bits at the top; the table indexes
        // with the low ones (and `hash_bytes` takes a remainder).
        self.0.rotate_left(26)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            // Up to seven bytes as one word, with their count in the top
            // byte (so "a" and "a\0" differ).
            let mut w = (rest.len() as u64) << 56;
            for (i, &b) in rest.iter().enumerate() {
                w |= (b as u64) << (8 * i);
            }
            self.add(w);
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// A map with the [`FastHasher`] hasher.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// The hash of `bytes` alone.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = FastHasher::default();
    h.write(bytes);
    h.finish()
}

/// `a == b` for byte strings, without a call into libc's `memcmp` for the
/// short ones that namespaces and keys are (several compares per event,
/// each a call of ~8 ns at the sizes seen in profiles): two overlapping
/// loads of the widest word that fits, compared at once.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // `w(x, i)`: the N bytes of `x` from `i` as one word (in bounds: every
    // arm below has N <= n and i = 0 or n - N).
    fn w<const N: usize>(x: &[u8], i: usize) -> [u8; N] {
        let mut o = [0u8; N];
        o.copy_from_slice(&x[i..i + N]);
        o
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => w::<4>(a, 0) == w::<4>(b, 0) && w::<4>(a, n - 4) == w::<4>(b, n - 4),
        8..=15 => w::<8>(a, 0) == w::<8>(b, 0) && w::<8>(a, n - 8) == w::<8>(b, n - 8),
        16..=32 => w::<16>(a, 0) == w::<16>(b, 0) && w::<16>(a, n - 16) == w::<16>(b, n - 16),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_agrees_with_slice_equality_at_every_length_and_position() {
        for n in 0..=70usize {
            let a: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "equal, length {n}");
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "differ at {at} of {n}");
            }
            let mut longer = a.clone();
            longer.push(0);
            assert!(!same_bytes(&a, &longer), "length {n} against {}", n + 1);
        }
    }

    #[test]
    fn the_hash_tells_apart_strings_that_differ_in_any_byte_or_in_length() {
        let base = b"pmix.event.proxy-and-then-some".to_vec();
        let mut seen = std::collections::HashSet::new();
        for n in 0..=base.len() {
            assert!(seen.insert(hash_bytes(&base[..n])), "prefix of length {n}");
        }
        for at in 0..base.len() {
            let mut b = base.clone();
            b[at] ^= 1;
            assert_ne!(hash_bytes(&b), hash_bytes(&base), "differ at {at}");
        }
        assert_ne!(hash_bytes(b"a"), hash_bytes(b"a\0"));
    }

    #[test]
    fn a_map_of_many_procs_finds_each_one() {
        let m: FastMap<crate::types::Proc, u32> = (0..5000u32)
            .map(|r| {
                (
                    crate::types::Proc::new(&format!("job-{}", r % 7), r).unwrap(),
                    r,
                )
            })
            .collect();
        assert_eq!(m.len(), 5000);
        for r in 0..5000u32 {
            let p = crate::types::Proc::new(&format!("job-{}", r % 7), r).unwrap();
            assert_eq!(m.get(&p), Some(&r));
        }
    }
}
