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
    "shake",
    "hmac",
    "hkdf",
    "argon2",
    "blake2",
    "threefish",
    "skein",
    "ml-kem",
    "ml-dsa",
    "libcrux-ml-kem",
    "libcrux-ml-dsa",
    "x25519-dalek",
    "ed25519-dalek",
    "curve25519-dalek",
    "rayon",
    "pqkit-bus",
    "flume",
    "crossbeam-channel",
    "tokio",
    // Hybrid KEM and HPKE peers.
    "x-wing",
    "hpke",
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
            versions = resolve(&text);
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

/// `name=version` for every crate of [`PEERS`]. A crate locked at several versions is resolved through
/// pqkit-bench's own dependency list (Cargo.lock writes `"name version"` there when the name is ambiguous);
/// otherwise the highest locked version is taken.
fn resolve(lock: &str) -> Vec<String> {
    let mut packages: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut in_deps = false;
    for line in lock.lines() {
        let line = line.trim();
        if line == "[[package]]" {
            packages.push((String::new(), String::new(), Vec::new()));
            in_deps = false;
        } else if let Some(p) = packages.last_mut() {
            if let Some(v) = line.strip_prefix("name = ") {
                p.0 = v.trim_matches('"').to_string();
            } else if let Some(v) = line.strip_prefix("version = ") {
                p.1 = v.trim_matches('"').to_string();
            } else if line.starts_with("dependencies = [") {
                in_deps = true;
            } else if in_deps && line == "]" {
                in_deps = false;
            } else if in_deps {
                p.2.push(line.trim_end_matches(',').trim_matches('"').to_string());
            }
        }
    }
    let own: Vec<String> = packages.iter().find(|p| p.0 == "pqkit-bench").map(|p| p.2.clone()).unwrap_or_default();
    let mut out = Vec::new();
    for name in PEERS {
        let mut versions: Vec<&str> = packages.iter().filter(|p| p.0 == *name).map(|p| p.1.as_str()).collect();
        if versions.is_empty() {
            continue;
        }
        let pinned = own.iter().find_map(|d| {
            let mut it = d.split(' ');
            (it.next() == Some(name)).then(|| it.next()).flatten()
        });
        let chosen = match pinned {
            Some(v) => v.to_string(),
            None => {
                versions.sort_by_key(|v| {
                    v.split(|c: char| !c.is_ascii_digit()).map(|x| x.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>()
                });
                versions.last().map(|v| v.to_string()).unwrap_or_default()
            }
        };
        out.push(format!("{name}={chosen}"));
    }
    out
}
