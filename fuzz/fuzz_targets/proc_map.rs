#![no_main]
// The `proc_map` decoder exactly as fastpmix::fuzzing::decode calls it.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = fastpmix::fuzzing::decode("proc_map", data);
});
