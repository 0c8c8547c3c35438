//! Gives the shared library an ELF SONAME, `libpqkit_ffi.so.<major>`, so programs linked against it record
//! the ABI version they were built for (as a C library installed with `cargo cinstall` or by hand does).
//! The major version is the crate's: 0 while the C API may still change.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(os.as_str(), "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpqkit_ffi.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
