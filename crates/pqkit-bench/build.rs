//! Captures, at build time, what the running binary cannot find out by itself: the rustc version and the
//! exact versions of the peer crates, read from the workspace's Cargo.lock (nothing is hard-coded).
use std::path::PathBuf;
use std::process::Command;

/// Packages whose resolved versions the report names.
const PEERS: &[&str] = &[
    "pqkit",
    "openssl",
    "openssl-src",
    "aws-lc-rs",
    "aws-lc-sys",
    "ring",
    "chacha20",
    "chacha20poly1305",
    "poly1305",
    "aes-gcm",
    "sha2",
    "sha3",
    "blake2",
    "threefish",
    "skein",
    "ml-kem",
    "ml-dsa",
    "libcrux-ml-kem",
    "libcrux-ml-dsa",
    "rayon",
];

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PQKIT_BENCH_RUSTC={version}");

    // Walk up from the manifest directory to the first Cargo.lock (the workspace root's).
    let mut dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut versions = Vec::new();
    loop {
        let lock = dir.join("Cargo.lock");
        if lock.is_file() {
            println!("cargo:rerun-if-changed={}", lock.display());
            let text = std::fs::read_to_string(&lock).unwrap_or_default();
            let mut name: Option<String> = None;
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("name = ") {
                    name = Some(v.trim_matches('"').to_string());
                } else if let Some(v) = line.strip_prefix("version = ") {
                    if let Some(n) = name.take() {
                        if PEERS.contains(&n.as_str()) {
                            versions.push(format!("{n}={}", v.trim_matches('"')));
                        }
                    }
                }
            }
            break;
        }
        if !dir.pop() {
            break;
        }
    }
    println!("cargo:rustc-env=PQKIT_BENCH_PEER_VERSIONS={}", versions.join(";"));
    let git = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=PQKIT_BENCH_BUILD_GIT={git}");
    println!("cargo:rerun-if-changed=build.rs");
}
