//! PMIx values and constants: statuses, identifiers, typed values, infos and
//! the attribute table. Plain data; no I/O, no threads.

pub mod attrs;
pub(crate) mod fasthash;
mod ids;
mod info;
pub mod names;
mod pdata;
mod status;
mod value;

pub use ids::{AllocDirective, DataRange, DataType, Nspace, Proc, Rank, MAX_NSLEN};
pub use info::{find_info, Info, InfoFlags, Key, MAX_KEYLEN};
pub use pdata::{App, PData};
pub use status::Status;
pub use value::{nested_too_deep, DataArray, ProcInfo, Timeval, Value, MAX_INFO_NESTING};

/// fastpmix's event code for "events were lost before this process could
/// read them" (ring lag, a corrupt record, a cache eviction, an event too
/// large for a ring slot): handlers get the count in
/// [`EVENTS_LOST_COUNT`]. Below `PMIX_EXTERNAL_ERR_BASE`, as the Standard
/// reserves for codes outside PMIx.
pub const EVENTS_LOST: Status = Status(-3001);
/// Key of the `Uint64` info carrying how many events were lost.
pub const EVENTS_LOST_COUNT: Key = Key::from_static("fastpmix.evlost.count");
