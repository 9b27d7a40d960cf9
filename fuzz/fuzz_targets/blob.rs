#![no_main]
// The `blob` decoder exactly as fastpmix::internals::fuzzing::decode calls it.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fastpmix::internals::fuzzing::decode("blob", data);
});
