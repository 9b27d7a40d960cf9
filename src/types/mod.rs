//! PMIx values and constants: statuses, identifiers, typed values, infos and
//! the attribute table. Plain data; no I/O, no threads.

pub mod attrs;
pub(crate) mod fasthash;
mod ids;
mod info;
mod status;
mod value;

pub use ids::{AllocDirective, DataRange, DataType, Nspace, Proc, Rank, MAX_NSLEN};
pub use info::{Info, InfoFlags, Key, MAX_KEYLEN};
pub use status::Status;
pub use value::{DataArray, Timeval, Value};
