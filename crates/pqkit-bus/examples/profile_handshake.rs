//! A profiling loop for the `pqkit-bus/handshake` row: both sides of the hybrid handshake, the initiator pinning
//! the responder's public identity (as `Bus::connect` does), repeated. Not a benchmark (pqkit-bench measures);
//! it prints only the count. Use it under `perf`:
//!
//! ```text
//! perf stat -e task-clock target/release/examples/profile_handshake 2000   # CPU ms / 2 = µs per handshake
//! perf record -g target/release/examples/profile_handshake 2000
//! perf stat -e task-clock target/release/examples/profile_handshake 2000 verify          # the hybrid check
//! perf stat -e task-clock target/release/examples/profile_handshake 2000 verify_pinned   # same, A kept
//! ```
use pqkit_bus::Identity;
use pqkit_bus::handshake::{initiate, respond};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let iters: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let mode = std::env::args().nth(2).unwrap_or_default();
    let a = Identity::from_seed("initiator", &[1; 32])?;
    let b = Identity::from_seed("responder", &[2; 32])?;
    // The responder's identity as the initiator holds it: decoded from its encoding, like a configured pin.
    let mut enc = Vec::new();
    b.public().encode(&mut enc);
    let (pinned, _) = pqkit_bus::identity::PublicIdentity::decode(&enc)?;
    if mode == "verify" || mode == "verify_pinned" {
        // One handshake signature's check, repeated: `verify` expands the ML-DSA matrix each time,
        // `verify_pinned` once.
        let mut sig = Vec::new();
        b.sign(b"pqkit-bus hs sig R transcript", &mut sig)?;
        for _ in 0..iters {
            if mode == "verify" {
                pinned.verify(b"pqkit-bus hs sig R transcript", &sig)?;
            } else {
                pinned.verify_pinned(b"pqkit-bus hs sig R transcript", &sig)?;
            }
        }
        println!("{iters} verifications");
        return Ok(());
    }
    for _ in 0..iters {
        let (st, m1) = initiate()?;
        let (rs, m2) = respond(&b, &m1)?;
        let (_ka, m3) = st.finish_pinned(&a, &m2, &pinned)?;
        let (_kb, pa) = rs.finish(&m3)?;
        if pa.id() != a.id() {
            return Err("handshake proved the wrong identity".into());
        }
    }
    println!("{iters} handshakes");
    Ok(())
}
