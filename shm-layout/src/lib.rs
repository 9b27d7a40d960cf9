//! The shared-memory contract of fastpmix.
//!
//! Every process that maps a fastpmix node segment (the server, its clients,
//! tools and any future C reader) agrees on the definitions in this crate and
//! nothing else. The ring issue fills it with the `#[repr(C)]` segment, ring,
//! slot and client-table layouts; until then it only pins the format version
//! so that dependants can already name it.

#![no_std]

/// Version of the shared-memory layout. Bumped on any change to a `#[repr(C)]`
/// definition in this crate; an opener refuses a segment with another version.
pub const LAYOUT_VERSION: u32 = 0;

#[cfg(test)]
mod tests {
    #[test]
    fn layout_version_is_pre_release() {
        // 0 marks "no layout published yet": the ring issue sets it to 1.
        assert_eq!(super::LAYOUT_VERSION, 0);
    }
}
