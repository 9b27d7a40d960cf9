//! For readers that must not wait on a lock: a forked child of a
//! multi-threaded process, where a lock another thread held at the fork
//! stays held forever (resource managers call `PMIx_server_setup_fork` in
//! the child they forked).

use super::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

/// A value published once in a while and read without a lock.
pub struct Published<T: 'static> {
    cur: AtomicPtr<T>,
    /// Every value ever published: a reader may hold any of them for the
    /// rest of the process, so none is freed. Publish rarely (a server
    /// start or stop).
    kept: Mutex<Vec<&'static T>>,
}

impl<T: Sync + 'static> Published<T> {
    /// Nothing published yet.
    pub const fn new() -> Self {
        Self {
            cur: AtomicPtr::new(std::ptr::null_mut()),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// Publishes `v`, or withdraws the current value with `None`.
    pub fn set(&self, v: Option<T>) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let p = match v {
            Some(v) => {
                let r: &'static T = Box::leak(Box::new(v));
                kept.push(r);
                r as *const T as *mut T
            }
            None => std::ptr::null_mut(),
        };
        // Release: a reader that sees the pointer sees the value behind it.
        self.cur.store(p, Ordering::Release);
    }

    /// The value last published, if any; never waits.
    pub fn get(&self) -> Option<&'static T> {
        let p = self.cur.load(Ordering::Acquire);
        // Leaked values are never freed (`kept`).
        // SAFETY: a non-null pointer comes from `Box::leak` in `set`.
        unsafe { p.cast_const().as_ref() }
    }
}

impl<T: Sync + 'static> Default for Published<T> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_published_value_is_read_until_withdrawn_and_outlives_its_replacement() {
        let p = Published::new();
        assert!(p.get().is_none());
        p.set(Some(String::from("one")));
        let first = p.get().unwrap();
        p.set(Some(String::from("two")));
        assert_eq!((first.as_str(), p.get().unwrap().as_str()), ("one", "two"));
        p.set(None);
        assert!(p.get().is_none());
    }
}
