//! Gives libfastpmix.so its soname (the C ABI's major version), so programs
//! linked against it keep working across compatible releases.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfastpmix.so.0");
    println!("cargo:rerun-if-changed=build.rs");
}
