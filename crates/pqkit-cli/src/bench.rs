//! `pqkit bench`: pqkit's own throughput on this machine, no peers (the comparison lives in pqkit-bench).

use crate::error::CliResult;
use clap::Args;
use pqkit::aead::{Aead, Aes256Gcm, ChaCha20Poly1305, Kusumi512Poly1305, XChaCha20Poly1305};
use pqkit::hash::Hasher;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct BenchArgs {
    /// Seconds to spend on each algorithm.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// Message size in bytes.
    #[arg(long, default_value_t = 1 << 16)]
    size: usize,
}

fn measure(name: &str, size: usize, budget: Duration, mut f: impl FnMut()) {
    f(); // warm-up
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        f();
        n += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let mibs = (n as f64 * size as f64) / secs / (1024.0 * 1024.0);
    let _ = crate::io::print_line(&format!("{name:<28} {mibs:>10.1} MiB/s"));
}

fn aead<A: Aead>(name: &str, a: A, size: usize, budget: Duration) {
    let mut buf = vec![0u8; size];
    let nonce = vec![0u8; A::NONCE_LEN];
    measure(name, size, budget, || {
        let _ = std::hint::black_box(a.seal_in_place_detached(&nonce, &[], &mut buf));
    });
}

fn hash<H: Hasher>(size: usize, budget: Duration) {
    let buf = vec![0u8; size];
    measure(H::NAME, size, budget, || {
        std::hint::black_box(H::digest(&buf));
    });
}

pub fn run(a: BenchArgs) -> CliResult {
    let budget = Duration::from_secs_f64(a.seconds.clamp(0.01, 60.0));
    let size = a.size.max(1);
    crate::io::print_line(&format!(
        "pqkit bench: {size}-byte messages, {:.2} s each, CPU: {}",
        budget.as_secs_f64(),
        pqkit::cpu::features()
    ))?;
    aead("XChaCha20-Poly1305", XChaCha20Poly1305::new(&[7; 32])?, size, budget);
    aead("ChaCha20-Poly1305", ChaCha20Poly1305::new(&[7; 32])?, size, budget);
    aead("Kusumi512-Poly1305", Kusumi512Poly1305::new(&[7; 64])?, size, budget);
    aead("AES-256-GCM", Aes256Gcm::new(&[7; 32])?, size, budget);
    hash::<pqkit::hash::sha2::Sha256>(size, budget);
    hash::<pqkit::hash::sha2::Sha512>(size, budget);
    hash::<pqkit::hash::sha3::Sha3_256>(size, budget);
    hash::<pqkit::hash::blake2::Blake2b512>(size, budget);
    Ok(())
}
