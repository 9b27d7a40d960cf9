//! `pmix_info_t`: a key, a value and directive flags.

use super::attrs::{self, AttrType};
use super::{Status, Value};
use std::fmt;
use std::sync::Arc;

/// `PMIX_MAX_KEYLEN`: longest key in bytes.
pub const MAX_KEYLEN: usize = 511;

/// An attribute key: at most 511 bytes, no NUL. The empty key marks a result
/// entry for removal (RFC0018 consolidation, see `event`).
///
/// Cloning never allocates: constant keys are `&'static str`, others are
/// shared (`Arc<str>`), since the same keys are copied into every event.
/// A key made at run time that names one of our attributes points at its
/// row of the attribute table, so that its type is known without hashing
/// it again (the type check of every info of every event received).
#[derive(Clone)]
pub struct Key(Repr);

#[derive(Clone)]
enum Repr {
    /// A constant ([`Key::from_static`]): in the table or not.
    Static(&'static str),
    /// The table's row of this key.
    Known(&'static (&'static str, AttrType)),
    /// Not in the table ([`Key::new`] and [`Key::intern`] look first).
    Shared(Arc<str>),
}

impl PartialEq for Key {
    fn eq(&self, o: &Key) -> bool {
        super::fasthash::same_bytes(self.as_str().as_bytes(), o.as_str().as_bytes())
    }
}
impl Eq for Key {}
impl std::hash::Hash for Key {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Key) -> std::cmp::Ordering {
        self.as_str().cmp(o.as_str())
    }
}

impl Key {
    /// The empty key.
    pub const EMPTY: Key = Key(Repr::Static(""));

    /// A key from a constant, checked at compile time when used in a `const`.
    pub const fn from_static(s: &'static str) -> Key {
        let b = s.as_bytes();
        assert!(
            b.len() <= MAX_KEYLEN,
            "PMIx key longer than PMIX_MAX_KEYLEN"
        );
        let mut i = 0;
        while i < b.len() {
            assert!(b[i] != 0, "PMIx key contains NUL");
            i += 1;
        }
        Key(Repr::Static(s))
    }

    /// A validated key: `PMIX_ERR_BAD_PARAM` if longer than 511 bytes or
    /// containing a NUL.
    pub fn new(s: impl AsRef<str>) -> Result<Key, Status> {
        let s = s.as_ref();
        if s.len() > MAX_KEYLEN || s.as_bytes().contains(&0) {
            return Err(Status::ERR_BAD_PARAM);
        }
        Ok(match attrs::table_row(s) {
            Some(row) => Key(Repr::Known(row)),
            None => Key(Repr::Shared(Arc::from(s))),
        })
    }

    /// The key text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(s) => s,
            Repr::Known(row) => row.0,
            Repr::Shared(s) => s,
        }
    }

    /// The documented type of this key's attribute, if it is one of ours
    /// (hashes the key only for a constant).
    pub fn attr_type(&self) -> Option<AttrType> {
        match &self.0 {
            Repr::Static(s) => attrs::expected_type(s),
            Repr::Known(row) => Some(row.1),
            Repr::Shared(_) => None,
        }
    }

    /// As [`Key::new`], for keys decoded on the event path (from the ring,
    /// a submission queue or a C caller's `pmix_info_t`): the attribute
    /// table's own copy for one of ours, else the copy this thread made of
    /// the same text recently, so that a key repeated in every event is
    /// allocated once, not per event.
    pub fn intern(s: &str) -> Result<Key, Status> {
        // One hash and one compare for a key seen recently (static or not).
        let slot = super::fasthash::hash_bytes(s.as_bytes()) as usize % RECENT_KEYS;
        RECENT.with(|r| {
            let mut r = r.borrow_mut();
            if let Some(k) = &r[slot] {
                if super::fasthash::same_bytes(k.as_str().as_bytes(), s.as_bytes()) {
                    return Ok(k.clone());
                }
            }
            let k = Key::new(s)?;
            r[slot] = Some(k.clone());
            Ok(k)
        })
    }

    /// The empty key?
    pub fn is_empty(&self) -> bool {
        self.as_str().is_empty()
    }
}

/// Keys [`Key::intern`] remembers per thread (direct-mapped by hash: a
/// bounded cache, at most this many keys of ≤ 511 bytes).
const RECENT_KEYS: usize = 64;

thread_local! {
    static RECENT: std::cell::RefCell<[Option<Key>; RECENT_KEYS]> =
        const { std::cell::RefCell::new([const { None }; RECENT_KEYS]) };
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, o: &str) -> bool {
        self.as_str() == o
    }
}

/// `pmix_info_directives_t` (u32): per-info flags.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
#[repr(transparent)]
pub struct InfoFlags(pub u32);

impl InfoFlags {
    /// No flag.
    pub const NONE: InfoFlags = InfoFlags(0);
    /// The attribute is required: an implementation that does not support it
    /// must return `PMIX_ERR_NOT_SUPPORTED`.
    pub const REQD: InfoFlags = InfoFlags(0x1);
    /// Marks the end of an array (internal).
    pub const ARRAY_END: InfoFlags = InfoFlags(0x2);
    /// A required attribute was processed.
    pub const REQD_PROCESSED: InfoFlags = InfoFlags(0x4);
    /// The info qualifies another.
    pub const QUALIFIER: InfoFlags = InfoFlags(0x8);
    /// Persistent.
    pub const PERSISTENT: InfoFlags = InfoFlags(0x10);

    /// Is every bit of `f` set?
    pub fn contains(self, f: InfoFlags) -> bool {
        self.0 & f.0 == f.0
    }
}

/// `pmix_info_t`.
#[derive(Clone, PartialEq, Debug)]
pub struct Info {
    /// The key.
    pub key: Key,
    /// The value.
    pub value: Value,
    /// Directive flags.
    pub flags: InfoFlags,
}

impl Info {
    /// An info without flags.
    pub fn new(key: Key, value: impl Into<Value>) -> Info {
        Info {
            key,
            value: value.into(),
            flags: InfoFlags::NONE,
        }
    }

    /// An info with `PMIX_INFO_REQD` set.
    pub fn required(key: Key, value: impl Into<Value>) -> Info {
        Info {
            key,
            value: value.into(),
            flags: InfoFlags::REQD,
        }
    }

    /// Is `PMIX_INFO_REQD` set?
    pub fn is_required(&self) -> bool {
        self.flags.contains(InfoFlags::REQD)
    }

    /// Marks this entry for removal from an event's results (RFC0018): the
    /// engine drops it before the next handler runs.
    pub fn mark_removed(&mut self) {
        self.key = Key::EMPTY;
    }
}

/// The first info in `info` with key `key`: when a list names a key twice,
/// the earlier entry is the one that counts.
pub fn find_info<'a>(info: &'a [Info], key: &Key) -> Option<&'a Info> {
    info.iter().find(|i| i.key == *key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::attrs;

    #[test]
    fn intern_gives_the_table_copy_of_a_known_key() {
        let k = Key::intern("pmix.evname").unwrap();
        assert_eq!(k, attrs::PMIX_EVENT_HDLR_NAME);
        assert!(
            matches!(k.0, Repr::Known(_)),
            "no allocation for a known key"
        );
    }

    #[test]
    fn a_key_knows_its_attribute_type_however_it_was_made() {
        let want = Some(AttrType::ProcList);
        assert_eq!(attrs::PMIX_EVENT_CUSTOM_RANGE.attr_type(), want);
        assert_eq!(Key::new("pmix.evrange").unwrap().attr_type(), want);
        assert_eq!(Key::intern("pmix.evrange").unwrap().attr_type(), want);
        assert!(matches!(
            Key::new("pmix.evrange").unwrap().0,
            Repr::Known(_)
        ));
        assert_eq!(Key::new("bench.t0").unwrap().attr_type(), None);
        assert_eq!(Key::from_static("bench.t0").attr_type(), None);
    }

    #[test]
    fn intern_shares_a_recent_unknown_key_and_keeps_apart_different_ones() {
        let a = Key::intern("bench.t0").unwrap();
        let b = Key::intern("bench.t0").unwrap();
        assert!(matches!((&a.0, &b.0), (Repr::Shared(x), Repr::Shared(y)) if Arc::ptr_eq(x, y)));
        // Twice: once looked up in the table, once from the cache.
        for _ in 0..2 {
            let k = Key::intern("pmix.evname").unwrap();
            assert!(matches!(k.0, Repr::Known(_)));
        }
        // Many other keys evict it; equality never depends on the cache.
        for i in 0..1000 {
            let k = Key::intern(&format!("k{i}")).unwrap();
            assert_eq!(k.as_str(), format!("k{i}"));
        }
        assert_eq!(Key::intern("bench.t0").unwrap(), a);
    }

    #[test]
    fn find_info_returns_the_first_entry_with_the_key() {
        let k = Key::from_static("t.k");
        let list = [
            Info::new(Key::from_static("t.other"), 0u32),
            Info::new(k.clone(), 1u32),
            Info::new(k.clone(), 2u32),
        ];
        assert_eq!(
            find_info(&list, &k).map(|i| &i.value),
            Some(&Value::Uint32(1))
        );
        assert!(find_info(&list, &Key::from_static("t.none")).is_none());
        assert!(find_info(&[], &k).is_none());
    }

    #[test]
    fn intern_refuses_what_new_refuses() {
        assert_eq!(Key::intern("a\0b").err(), Some(Status::ERR_BAD_PARAM));
        let long = "x".repeat(MAX_KEYLEN + 1);
        assert_eq!(Key::intern(&long).err(), Some(Status::ERR_BAD_PARAM));
        assert!(Key::intern(&"x".repeat(MAX_KEYLEN)).is_ok());
    }
}
