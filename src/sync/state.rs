//! Small atomic cells with named orderings, so no other module names an atomic.

use super::atomic::{AtomicU64, AtomicU8, Ordering};

/// Hands out identifiers that are never reused within a process (starting at 1:
/// reference 0 would be indistinguishable from `PMIX_SUCCESS` in the C ABI).
pub struct IdCounter(AtomicU64);

impl IdCounter {
    /// A counter whose first id is `first`.
    pub fn starting_at(first: u64) -> Self {
        Self(AtomicU64::new(first))
    }

    /// The next unused id.
    pub fn next(&self) -> u64 {
        // Relaxed: uniqueness needs only the atomicity of the RMW.
        self.0.fetch_add(1, Ordering::Relaxed)
    }
}

/// A version number published by a writer and polled by a reader.
pub struct Generation(AtomicU64);

impl Default for Generation {
    fn default() -> Self {
        Self(AtomicU64::new(0))
    }
}

impl Generation {
    /// Publishes a new generation. Release: pairs with the Acquire in
    /// [`Generation::current`], so whatever the writer stored before bumping
    /// is visible to a reader that sees the new value.
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }

    /// The current generation (Acquire, pairs with [`Generation::bump`]).
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// Life cycle of a registration: pending until its callback ran, then active,
/// then dead forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LifeState {
    /// Registered, but its registration callback has not run yet.
    Pending,
    /// Receives events.
    Active,
    /// Deregistered: never receives an event again.
    Dead,
}

/// An atomic [`LifeState`].
pub struct LifeCell(AtomicU8);

impl LifeCell {
    /// A cell in `state`.
    pub fn new(state: LifeState) -> Self {
        Self(AtomicU8::new(state as u8))
    }

    /// The current state (Acquire: pairs with the Release in the setters).
    pub fn get(&self) -> LifeState {
        match self.0.load(Ordering::Acquire) {
            0 => LifeState::Pending,
            1 => LifeState::Active,
            _ => LifeState::Dead,
        }
    }

    /// Pending → Active; a dead cell stays dead. Returns whether it activated.
    pub fn activate(&self) -> bool {
        self.0
            .compare_exchange(
                LifeState::Pending as u8,
                LifeState::Active as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// Any state → Dead. Returns the previous state.
    pub fn kill(&self) -> LifeState {
        match self.0.swap(LifeState::Dead as u8, Ordering::AcqRel) {
            0 => LifeState::Pending,
            1 => LifeState::Active,
            _ => LifeState::Dead,
        }
    }
}

/// A one-way flag: once set, set forever.
#[derive(Default)]
pub struct Latch(super::atomic::AtomicBool);

impl Latch {
    /// Sets the flag (Release: pairs with [`Latch::is_set`]).
    pub fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Has it been set? (Acquire: pairs with [`Latch::set`].)
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
