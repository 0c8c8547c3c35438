//! Rough timing of RSA private and public operations, with the best backend and with the portable one (not a
//! benchmark: the comparison with peers lives in pqkit-bench's RSA rows). Keys are imported once under each CPU
//! cap (the Montgomery contexts pick their backend at import) and the runs interleave, so the comparison
//! survives a noisy machine better. Run: `cargo run --release -p pqkit-bench --example rsa_timing`.

use pqkit::cpu::{Cap, set_cap};
use pqkit::rsa::RsaPrivateKey;
use std::time::{Duration, Instant};

fn main() {
    let mut rng = pqkit::rng::ChaCha20Rng::from_key([11; 32]);
    for bits in [2048usize, 3072, 4096] {
        let t = Instant::now();
        let key = RsaPrivateKey::generate(bits, &mut rng).expect("keygen");
        let kg = t.elapsed();
        let pk = key.public_key();
        let (n, e) = (pk.n(), pk.e());
        let keys: Vec<RsaPrivateKey> = [Cap::Native, Cap::Portable]
            .into_iter()
            .map(|cap| {
                set_cap(cap);
                RsaPrivateKey::from_crt_components(
                    &n,
                    &e,
                    &key.d(),
                    &key.p(),
                    &key.q(),
                    &key.dp(),
                    &key.dq(),
                    &key.qinv(),
                )
                .expect("import")
            })
            .collect();
        set_cap(Cap::Native);
        let k = pk.size();
        let iters = 40 * 2048 / bits;
        let mut best = [Duration::MAX; 2];
        for _round in 0..5 {
            for (i, key) in keys.iter().enumerate() {
                let mut x = vec![0u8; k];
                x[1] = 7;
                let t = Instant::now();
                for _ in 0..iters {
                    x = key.raw_private(&x).expect("private op").to_vec();
                }
                best[i] = best[i].min(t.elapsed() / iters as u32);
            }
        }
        let mut x = vec![0u8; k];
        x[1] = 7;
        let t = Instant::now();
        for _ in 0..iters * 10 {
            x = pk.raw_public(&x).expect("public op");
        }
        let per_pub = t.elapsed() / (iters * 10) as u32;
        println!(
            "RSA-{bits}: keygen {kg:?}, private {:?}/op (best backend), {:?}/op (portable), public {per_pub:?}/op",
            best[0], best[1]
        );
    }
}
