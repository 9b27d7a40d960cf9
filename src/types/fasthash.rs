//! FNV-1a maps for the per-event paths.
//!
//! Every map here is keyed by something small this process registered or
//! authenticated (namespaces, procs, codes, attribute names, handler ids),
//! or is a fixed table only looked up (the attribute table): no map an
//! untrusted peer can fill with colliding keys. SipHash, the standard
//! default, showed in the event path's profiles (keys of 8–260 bytes
//! hashed several times per event).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a, 64 bits.
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A map with the [`Fnv`] hasher.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// The FNV-1a hash of `bytes` alone.
pub fn fnv(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.write(bytes);
    h.finish()
}
