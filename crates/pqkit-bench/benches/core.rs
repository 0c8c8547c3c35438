//! Criterion benches of the core groups (apply_keystream, fill_bytes, AEAD seal) for quick loops during
//! development. They reuse the harness's registry, so every candidate registered there (pqkit's too, with
//! the `pqkit-algs` feature) appears here. Comparisons for reports come from the `pqkit-bench` binary.
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pqkit_bench::{algs, harness::input_bytes};

fn group(c: &mut Criterion, group_name: &str, alg_id: &str, sizes: &[usize]) {
    let all = algs::all();
    let Some(alg) = all.iter().find(|a| a.id() == alg_id) else { return };
    let mut g = c.benchmark_group(group_name);
    for &size in sizes {
        g.throughput(Throughput::Bytes(size as u64));
        for cand in &alg.candidates {
            let Ok(mut op) = (cand.setup)(size) else { continue };
            let mut data = pqkit_bench::aligned::AlignedBuf::from_slice(&input_bytes(size));
            let mut out = Vec::with_capacity(size + 64);
            g.bench_with_input(BenchmarkId::new(cand.implementation, size), &size, |b, _| {
                b.iter(|| op.run(std::hint::black_box(&mut *data), &mut out))
            });
        }
    }
    g.finish();
}

fn apply_keystream(c: &mut Criterion) {
    group(c, "apply_keystream", "ChaCha20/apply_keystream", &[1024, 16384]);
}

fn fill_bytes(c: &mut Criterion) {
    group(c, "fill_bytes", "ChaCha20Rng/fill_bytes", &[1024, 16384]);
}

fn aead_seal(c: &mut Criterion) {
    group(c, "aead_seal/chacha20-poly1305", "ChaCha20-Poly1305/seal", &[1024, 16384]);
    group(c, "aead_seal/aes-256-gcm", "AES-256-GCM/seal", &[1024, 16384]);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = apply_keystream, fill_bytes, aead_seal
}
criterion_main!(benches);
