//! Outputs: REPORT.md, report.json (schema version 1) and SVG charts; and `--compare` against a baseline.
//! The summary at the top of REPORT.md and the heat map come from [`crate::summary`].

use crate::RunOutput;
use crate::harness::Measurement;
use crate::registry::{Kind, Report};
use crate::stats;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

pub use crate::chart::{Point, fmt_size, fmt_tick, nice_ticks, points, slug, svg_throughput};
pub use crate::record::{KeySpread, OutlierCounts, Record};

/// Version of the JSON layout. Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Tolerance of `--compare`: a figure regressed if it is slower by more than this beyond both intervals.
pub const REGRESSION_TOLERANCE: f64 = 0.05;

/// A figure that got slower than the baseline beyond the confidence intervals.
#[derive(Clone, Debug, Serialize)]
pub struct Regression {
    /// `algorithm|operation|implementation|size|threads`.
    pub key: String,
    /// Baseline median, ns.
    pub baseline_median_ns: f64,
    /// Baseline CI high end, ns.
    pub baseline_ci_high_ns: f64,
    /// New median, ns.
    pub median_ns: f64,
    /// New CI low end, ns.
    pub ci_low_ns: f64,
    /// Slowdown of the median, percent.
    pub slowdown_percent: f64,
}

/// The whole report.json.
#[derive(Serialize)]
struct JsonReport<'a> {
    schema_version: u32,
    profile: &'a str,
    environment: &'a crate::env::Environment,
    records: Vec<Record>,
    errors: &'a [crate::harness::RunError],
    regressions: &'a [Regression],
}

fn key_of(r: &Record) -> String {
    format!("{}|{}|{}|{}|{}", r.algorithm, r.operation, r.implementation, r.size_bytes, r.threads)
}

/// Compares measurements against a baseline report.json: every figure whose CI low end is more than 5% above
/// the baseline's CI high end is a regression.
pub fn compare(ms: &[Measurement], baseline: &Path) -> Result<Vec<Regression>, String> {
    let text = std::fs::read_to_string(baseline).map_err(|e| format!("cannot read {}: {e}", baseline.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", baseline.display()))?;
    let recs: Vec<Record> = serde_json::from_value(v.get("records").cloned().unwrap_or_default())
        .map_err(|e| format!("{} has no valid records: {e}", baseline.display()))?;
    let base: BTreeMap<String, Record> = recs.into_iter().map(|r| (key_of(&r), r)).collect();
    let mut out = Vec::new();
    for m in ms {
        let r = Record::from(m);
        if let Some(b) = base.get(&key_of(&r))
            && stats::regressed(r.ci_low_ns, b.ci_high_ns, REGRESSION_TOLERANCE)
        {
            out.push(Regression {
                key: key_of(&r),
                baseline_median_ns: b.median_ns,
                baseline_ci_high_ns: b.ci_high_ns,
                median_ns: r.median_ns,
                ci_low_ns: r.ci_low_ns,
                slowdown_percent: (r.median_ns / b.median_ns - 1.0) * 100.0,
            });
        }
    }
    Ok(out)
}

/// A duration in ns, with a unit that keeps 3-4 significant digits.
pub fn fmt_ns(ns: f64) -> String {
    if !ns.is_finite() {
        "-".into()
    } else if ns < 1e3 {
        format!("{ns:.1} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Index of measurements by (algorithm, operation) in registry order.
struct Index<'a> {
    groups: Vec<((String, String), Vec<&'a Measurement>)>,
}

impl<'a> Index<'a> {
    fn new(out: &'a RunOutput) -> Self {
        let mut groups: Vec<((String, String), Vec<&Measurement>)> = Vec::new();
        for m in &out.measurements {
            let k = (m.algorithm.clone(), m.operation.clone());
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, v)) => v.push(m),
                None => groups.push((k, vec![m])),
            }
        }
        let pos = |k: &(String, String)| out.order.iter().position(|id| *id == format!("{}/{}", k.0, k.1));
        groups.sort_by_key(|(k, _)| pos(k));
        Index { groups }
    }
}

/// Implementations in a group, in first-seen order, pqkit first.
fn implementations(ms: &[&Measurement]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for m in ms {
        if !v.contains(&m.implementation) {
            v.push(m.implementation.clone());
        }
    }
    v.sort_by_key(|i| i != "pqkit");
    v
}

fn single<'a>(ms: &[&'a Measurement], imp: &str, size: usize) -> Option<&'a Measurement> {
    ms.iter().copied().find(|m| m.implementation == imp && m.size_bytes == size && m.threads == 1)
}

fn sizes(ms: &[&Measurement]) -> Vec<usize> {
    let mut v: Vec<usize> = ms.iter().filter(|m| m.threads == 1).map(|m| m.size_bytes).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The optimization note for a row where pqkit trails a peer.
fn note(ours: &Measurement, theirs: &Measurement, ratio: f64) -> String {
    if ratio >= 0.97 || ours.implementation != "pqkit" {
        return String::new();
    }
    let mut n = Vec::new();
    if ours.allocs_per_op > theirs.allocs_per_op {
        n.push(format!(
            "allocates {} times per op vs {}: reuse buffers",
            fmt_num(ours.allocs_per_op),
            fmt_num(theirs.allocs_per_op)
        ));
    }
    if ours.kind == Kind::PublicKey && ours.algorithm.starts_with("RSA") {
        n.push(if ours.operation == "keygen" {
            "prime search: sieve more candidates before Miller-Rabin, faster modular exponentiation, fewer allocations"
        } else {
            "modular exponentiation: faster Montgomery multiplication and squaring (mulx/adx, AVX-512 IFMA)"
        }
        .into());
    } else if ours.kind == Kind::PublicKey && (ours.algorithm == "X25519" || ours.algorithm == "Ed25519") {
        n.push("curve arithmetic: faster field multiplication and squaring, larger fixed-base tables".into());
    } else if ours.kind == Kind::PublicKey {
        n.push("polynomial arithmetic: vectorise NTT/sampling, avoid per-op key expansion".into());
    } else if ours.algorithm == "pqkit-bus" {
        n.push(
            "bus overhead over a raw channel: subjects, priorities, policy and (sealed) four AEAD passes per delivery"
                .into(),
        );
    } else if ours.kind == Kind::Fixed && ours.algorithm.starts_with("Argon2") {
        n.push("memory fill: vectorise the BlaMka compression, avoid block copies and per-call allocations".into());
    } else if ours.kind == Kind::Fixed {
        n.push("per-derivation cost: fewer HMAC state copies and compression calls, no repeated key padding".into());
    } else if ours.size_bytes <= 1024 {
        n.push("fixed per-call cost dominates: trim setup, dispatch and tail handling".into());
    } else {
        n.push("bulk loop: more blocks in flight, widest backend, stitched cipher+MAC passes".into());
    }
    n.join("; ")
}

fn regression_mark(out: &RunOutput, m: &Measurement) -> String {
    let r = Record::from(m);
    match out.regressions.iter().find(|g| g.key == key_of(&r)) {
        Some(g) => format!(" ⚠ regressed {:+.1}%", g.slowdown_percent),
        None => String::new(),
    }
}

/// The method section of REPORT.md: how buffers are laid out and what each family does inside and outside the
/// timed region (the same for every implementation of a family).
pub const METHOD: &str = "## Method

- **One process, same data.** Every implementation of an operation runs in this process on the same input bytes
  (deterministic pseudo-random, fixed seed). Before timing, their outputs are compared (byte equality, or cross
  round trips for randomized post-quantum schemes); a disagreement is listed under Errors and never timed.
- **Interleaved.** After a warm-up, samples are taken round-robin (A B C A B C ...), timed with the thread's CPU
  clock; medians with 95% confidence intervals, Tukey outliers counted, not removed.
- **Aligned buffers.** Each implementation gets its own input/output buffer, allocated 64-byte aligned (one cache
  line, one ZMM register) the same way for everyone, so that no side wins or loses on alignment. In-place
  operations (ciphers, AEAD seal/open) transform that buffer; hashes and MACs read it; tags, digests and derived
  keys are copied out into a second buffer that already has room for them (no allocation).
- **Set-up.** What is done once outside the timed region, and what every operation pays, per family:

| family | outside timing (once per implementation) | inside timing (every operation) |
|---|---|---|
| stream ciphers (ChaCha20, XChaCha20, Kusumi512, Threefish-512-CTR) | key schedule and nonce; OpenSSL: `EVP_CIPHER_CTX` keyed once | keystream generation and XOR, the stream continuing across operations |
| AEAD seal / open | key schedule: OpenSSL `EVP_CIPHER_CTX` keyed once; ring / aws-lc-rs `LessSafeKey`; RustCrypto and pqkit cipher objects | per-message nonce set-up (OpenSSL: `EVP_EncryptInit_ex` with only the IV), AAD, encryption, tag; open: one copy of the ciphertext into the buffer, then verify and decrypt in place |
| hashes, SHAKE | OpenSSL: `EVP_MD` fetched and one `EVP_MD_CTX` created | a fresh state (OpenSSL: `EVP_DigestInit_ex` re-initialising the reused context with the fetched digest), absorb, finalise |
| HMAC | the key: inner and outer padded states. OpenSSL: one `EVP_MAC_CTX` keyed once; ring / aws-lc-rs `hmac::Key`; RustCrypto and pqkit keyed `Hmac` values | the MAC from the prepared states (OpenSSL: `EVP_MAC_init` with a NULL key, which restarts from them; RustCrypto: clone of the keyed state) |
| Poly1305 | OpenSSL: one `EVP_MAC_CTX` | the one-time key set-up (a fresh key per message on every side: OpenSSL `EVP_MAC_init` with the key) and the MAC |
| HKDF (extract + expand) | OpenSSL: one `EVP_KDF_CTX` with digest, salt and info set | keying HMAC with the salt, extract, expand on every side; OpenSSL: passing the IKM (which it copies) |
| Argon2id | parameter objects; OpenSSL: one `EVP_KDF_CTX` with the costs and salt set | allocating and filling the memory, the tag; one thread (p = 1) everywhere |
| ML-KEM / ML-DSA | keygen: nothing; encaps / sign / verify / decaps: key generation from a fixed seed and key parsing | the operation itself (key generation for keygen) |
| X25519 | keygen: nothing; derive: the private key object and the parsed peer public key (OpenSSL: one `EVP_PKEY_CTX` with the peer set) | keygen: the key object from 32 private bytes (varied per call) and its public key; derive: the shared secret. ring has only single-use keys from its RNG: its keygen and derive include generating one (a `getrandom` call); aws-lc-rs clones its parsed peer key and creates an `EVP_PKEY_CTX` per call, as its `agree` requires. derive_many 8 / 64: 8 or 64 agreements per timed call, each pair prepared outside timing; pqkit calls `x25519::derive_many`, every peer (none has a batch API) its one-at-a-time derive 8 or 64 times, so the ratio is per agreement |
| Ed25519 | keygen: nothing; sign / verify: the key pair from a fixed seed and the parsed public key (ring: none, it parses per call) | keygen: the key pair from a 32-byte seed (varied per call); sign / verify of a 1 KiB message (RustCrypto: `verify_strict`). keygen_many / sign_many 8 / 64: 8 or 64 key pairs or signatures of 1 KiB messages per timed call (seeds, messages and the signing key prepared outside timing); pqkit calls `SigningKey::from_seeds_many` / `ed25519::sign_many`, every peer (none has a batch API) its one-at-a-time keygen / sign 8 or 64 times, so the ratio is per operation |
| P-256 ECDSA verify_many 8 / 64 | the 8 or 64 key pairs (each its own key), their 1 KiB messages and signatures, the parsed public keys | 8 or 64 verifications per timed call; pqkit calls `p256::verify_many` (SHA-256 of each message included), every peer (none has a batch API) its one-at-a-time verify 8 or 64 times, so the ratio is per verification |
| RSA-2048/3072/4096 | the fixed test key of each size imported from PKCS#8 DER (OpenSSL: an `EVP_PKEY` with one `EVP_PKEY_CTX` per operation, its padding set once; aws-lc-rs and RustCrypto typed keys; public keys parsed from (n, e)); for decrypt / verify, a ciphertext / signature made once | keygen: one fresh key with e = 65537 (a fixed number of keys per implementation, never cut by the time budget; the spread is reported next to the ratios); sign: SHA-256 of 1 KiB and the private-key operation with each library's blinding (PSS draws a 32-byte salt); verify: SHA-256 and the public-key operation (ring parses its key in every call, as its API does); OAEP-SHA256 encrypt of 32 bytes; OAEP decrypt with the padding check |
| pqkit-bus (Krait-Core's operation names) | the bus, the agents' identities and handshakes, subscriptions, publisher handles; peers: the channels (and their producer threads) | `send_10k`: 10,000 × 64 B published on one subject, then all received by one subscriber in batches (peers: sent, then `try_recv` until empty), plain or sealed (AES-256-GCM: the broker seals for the subscriber, the subscriber opens; a local publish is a method call on the authenticated handle and builds no publish envelope, docs/bus.md §3); `-producers-P`: P threads publish 10,000 each concurrently, then one drain; `-pairs-P`: P threads, each its own agent, subject and subscriber doing `send_10k` (peers: a channel per thread); `subscribe`: one subscribe + unsubscribe with 1,000 subscriptions held; `priority_heap`: 1,000 random-priority messages pushed then popped in order (peer: `BinaryHeap`); `fanout-100`: 100 messages to 100 subscribers, drained; `handshake`: both sides of the hybrid handshake |

- **Allocations** are counted through Rust's allocator on separate, untimed runs; allocations inside OpenSSL and
  aws-lc (C `malloc`) are not visible to it.

";

/// The spread table of a key-generation row timed over many keys (see [`crate::registry::KeyCount`]): the ratios
/// above compare medians; this shows how far single keys stray from them.
fn key_spread(s: &mut String, ms: &[&Measurement]) {
    let rows: Vec<&&Measurement> = ms.iter().filter(|m| m.keys.is_some() && m.threads == 1).collect();
    let Some(count) = rows.first().and_then(|m| m.keys) else { return };
    let taken = rows.iter().map(|m| m.ns.n).min().unwrap_or(0);
    let _ = writeln!(
        s,
        "Key generation time varies from key to key: {} keys per implementation (`--full`: {}, `--quick`: {}), one \
         per sample, interleaved.{}\n\n\
         | implementation | keys | median ms | p10 ms | p90 ms | min ms | max ms | keys/s (median) |\n\
         |---|---|---|---|---|---|---|---|",
        taken,
        count.full,
        count.quick,
        if taken < count.full {
            format!(
                " `--quick` takes {} keys here instead of the {} of `--full` (which would take minutes): the median \
                 and spread are less certain.",
                taken, count.full
            )
        } else {
            String::new()
        }
    );
    for m in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} |",
            m.implementation,
            m.ns.n,
            m.ns.median / 1e6,
            m.ns.p10 / 1e6,
            m.ns.p90 / 1e6,
            m.ns.min / 1e6,
            m.ns.max / 1e6,
            m.ops_per_sec()
        );
    }
    s.push('\n');
}

/// Renders REPORT.md.
pub fn markdown(out: &RunOutput) -> String {
    let e = &out.env;
    let idx = Index::new(out);
    let records: Vec<Record> = out.measurements.iter().map(Record::from).collect();
    let mut s = crate::summary::head_markdown(&out.profile, &crate::summary::ratios(&records));
    let _ = writeln!(s, "## Environment\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| CPU | {} |", e.cpu_model);
    let _ = writeln!(s, "| CPU features (pqkit, in force) | {} |", e.cpu_features);
    let _ = writeln!(s, "| instruction-set tier | {} |", e.isa);
    let _ = writeln!(s, "| cores | {} |", e.cores);
    let _ = writeln!(s, "| OS / kernel | {} |", e.os);
    let _ = writeln!(s, "| rustc | {} |", e.rustc);
    let _ = writeln!(s, "| OpenSSL | {} |", e.openssl);
    let crates: Vec<String> = e.crates.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(s, "| crates | {} |", crates.join(", "));
    let _ = writeln!(s, "| date (UTC) | {} |", e.date_utc);
    let _ = writeln!(s, "| pqkit git revision | {} |", e.git_revision);
    let _ = writeln!(
        s,
        "| TSC | {:.3} GHz nominal (TSC ticks are not core cycles under turbo or throttling) |\n",
        e.tsc_ghz
    );
    let _ = writeln!(
        s,
        "MB/s is 10^6 bytes per second at the median time. Times are medians with their 95% confidence interval \
         (order statistics). \"TSC/B\" is TSC ticks per byte. Allocations are counted per operation on a separate, \
         untimed run. Ratios are reference speed / peer speed: above 1 the reference is faster.\n"
    );

    s.push_str(METHOD);

    if !out.errors.is_empty() {
        let _ = writeln!(s, "## Errors (never timed)\n");
        let _ = writeln!(s, "| algorithm | operation | size | implementations | error |\n|---|---|---|---|---|");
        for er in &out.errors {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                er.algorithm,
                er.operation,
                fmt_size(er.size_bytes),
                er.implementations.join(", "),
                er.message.replace('|', "\\|")
            );
        }
        s.push('\n');
    }
    if !out.regressions.is_empty() {
        let _ = writeln!(s, "## Regressions against the baseline\n");
        let _ = writeln!(s, "| figure | baseline median | new median | slowdown |\n|---|---|---|---|");
        for r in &out.regressions {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:+.1}% |",
                r.key,
                fmt_ns(r.baseline_median_ns),
                fmt_ns(r.median_ns),
                r.slowdown_percent
            );
        }
        s.push('\n');
    }

    // (a)
    let _ = writeln!(s, "## (a) pqkit against each peer\n");
    let _ = writeln!(s, "![pqkit / fastest peer by family and size](heatmap.svg)\n");
    for ((alg, op), ms) in &idx.groups {
        if !ms.iter().any(|m| m.reports.contains(&Report::A)) {
            continue;
        }
        let imps = implementations(ms);
        let reference = &imps[0];
        let _ = writeln!(s, "### {alg} — {op}\n");
        if reference != "pqkit" {
            let _ = writeln!(
                s,
                "pqkit has no `{alg}` adapter registered yet; the reference column is `{reference}` so the peers \
                 can still be compared.\n"
            );
        }
        if ms[0].kind == Kind::Bulk {
            let _ = writeln!(s, "![throughput](throughput-{}.svg)\n", slug(&format!("{alg}-{op}")));
        }
        if imps.len() < 2 {
            let _ = writeln!(s, "Only `{reference}` implements this; nothing to compare.\n");
        }
        for peer in imps.iter().skip(1) {
            let bulk = ms[0].kind == Kind::Bulk;
            let unit = if bulk { "MB/s" } else { "ops/s" };
            let _ = writeln!(s, "**{reference} vs {peer}**\n");
            let _ = writeln!(
                s,
                "| size | {reference} {unit} | {peer} {unit} | ratio | gap % | note |\n|---|---|---|---|---|---|"
            );
            for size in sizes(ms) {
                let (Some(a), Some(b)) = (single(ms, reference, size), single(ms, peer, size)) else { continue };
                let ratio = stats::speed_ratio(a.ns.median, b.ns.median);
                let (va, vb) = if bulk { (a.mb_per_sec(), b.mb_per_sec()) } else { (a.ops_per_sec(), b.ops_per_sec()) };
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {:.2} | {:+.1} | {} |",
                    fmt_size(size),
                    fmt_num(va),
                    fmt_num(vb),
                    ratio,
                    stats::gap_percent(ratio),
                    note(a, b, ratio)
                );
            }
            s.push('\n');
        }
        key_spread(&mut s, ms);
    }

    // (b)
    let b: Vec<&Measurement> = out.measurements.iter().filter(|m| m.reports.contains(&Report::B)).collect();
    let _ = writeln!(s, "## (b) 512-bit ciphers: ChaCha20, Kusumi512, Threefish-512-CTR\n");
    if b.is_empty() {
        let _ = writeln!(s, "Nothing measured.\n");
    }
    for size in sizes(&b) {
        let _ = writeln!(s, "**{}**\n", fmt_size(size));
        let _ = writeln!(
            s,
            "| cipher | implementation | mode | time/op | MB/s | allocated KiB/op |\n|---|---|---|---|---|---|"
        );
        for m in b.iter().filter(|m| m.size_bytes == size) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.2} |",
                m.algorithm,
                m.implementation,
                m.operation,
                fmt_ns(m.ns.median),
                fmt_num(m.mb_per_sec()),
                m.alloc_bytes_per_op / 1024.0
            );
        }
        s.push('\n');
        let mut any = false;
        for m in b.iter().filter(|m| m.size_bytes == size && m.algorithm == "Kusumi512") {
            if let Some(t) = b.iter().find(|t| {
                t.algorithm == "Threefish-512-CTR"
                    && t.size_bytes == size
                    && t.operation == m.operation
                    && t.implementation == m.implementation
            }) {
                any = true;
                let _ = writeln!(
                    s,
                    "- Kusumi512/Threefish ({}, {}): Kusumi512 is {:.2}x the speed of Threefish-512-CTR",
                    m.implementation,
                    m.operation,
                    stats::speed_ratio(m.ns.median, t.ns.median)
                );
            }
        }
        if !any {
            let _ = writeln!(
                s,
                "- Kusumi512/Threefish ratio: n/a (needs both ciphers from one implementation; Kusumi512 exists only in pqkit)"
            );
        }
        s.push('\n');
    }

    // (c)
    let c: Vec<&Measurement> = out.measurements.iter().filter(|m| m.reports.contains(&Report::C)).collect();
    let _ = writeln!(s, "## (c) ChaCha20: cipher apply_keystream vs RNG fill_bytes (TSC ticks/byte)\n");
    let mut imps_c = implementations(&c);
    imps_c.retain(|i| c.iter().any(|m| &m.implementation == i && m.operation == "fill_bytes"));
    if imps_c.is_empty() {
        let _ = writeln!(s, "Nothing measured.\n");
    }
    for imp in imps_c {
        let _ = writeln!(s, "**{imp}**\n");
        let _ = writeln!(s, "| size | apply_keystream TSC/B | fill_bytes TSC/B | RNG overhead |\n|---|---|---|---|");
        for size in [1024usize, 2048, 4096, 8192, 16384] {
            let k =
                c.iter().find(|m| m.implementation == imp && m.operation == "apply_keystream" && m.size_bytes == size);
            let r = c.iter().find(|m| m.implementation == imp && m.operation == "fill_bytes" && m.size_bytes == size);
            let (Some(k), Some(r)) = (k, r) else { continue };
            let (tk, tr) = (k.tsc_per_byte().unwrap_or(f64::NAN), r.tsc_per_byte().unwrap_or(f64::NAN));
            let _ = writeln!(s, "| {} | {:.3} | {:.3} | {:+.1}% |", fmt_size(size), tk, tr, (tr / tk - 1.0) * 100.0);
        }
        s.push('\n');
    }

    // (d)
    let d: Vec<&Measurement> = out.measurements.iter().filter(|m| m.reports.contains(&Report::D)).collect();
    let _ = writeln!(s, "## (d) Post-quantum operations\n");
    if d.is_empty() {
        let _ = writeln!(s, "Nothing measured.\n");
    } else {
        let _ = writeln!(
            s,
            "Signing has a rejection loop and so a long tail: compare its mean with its median.\n\n\
             | algorithm | operation | implementation | median µs (95% CI) | mean µs | ops/s |\n|---|---|---|---|---|---|"
        );
        for m in &d {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.2} ({:.2}–{:.2}) | {:.2} | {} |",
                m.algorithm,
                m.operation,
                m.implementation,
                m.ns.median / 1e3,
                m.ns.ci_low / 1e3,
                m.ns.ci_high / 1e3,
                m.ns.mean / 1e3,
                fmt_num(m.ops_per_sec())
            );
        }
        s.push('\n');
    }

    // Scaling
    let par: Vec<&Measurement> = out.measurements.iter().filter(|m| m.threads > 1).collect();
    let _ = writeln!(s, "## Multi-core scaling (total MB/s over independent buffers, rayon)\n");
    if par.is_empty() {
        let _ = writeln!(s, "Nothing measured.\n");
    } else {
        let mut threads: Vec<usize> = par.iter().map(|m| m.threads).collect();
        threads.push(1);
        threads.sort_unstable();
        threads.dedup();
        let head: Vec<String> = threads.iter().map(|t| format!("{t} thr MB/s")).collect();
        let _ = writeln!(
            s,
            "| algorithm | implementation | buffer | {} | speedup |\n|---|---|---|{}---|",
            head.join(" | "),
            "---|".repeat(threads.len())
        );
        let mut seen = Vec::new();
        for m in &par {
            let k = (m.algorithm.clone(), m.operation.clone(), m.implementation.clone(), m.size_bytes);
            if seen.contains(&k) {
                continue;
            }
            seen.push(k);
            let find = |t: usize| {
                out.measurements.iter().find(|x| {
                    x.algorithm == m.algorithm
                        && x.operation == m.operation
                        && x.implementation == m.implementation
                        && x.size_bytes == m.size_bytes
                        && x.threads == t
                })
            };
            let vals: Vec<Option<f64>> = threads.iter().map(|&t| find(t).map(|x| x.mb_per_sec())).collect();
            let cells: Vec<String> = vals.iter().map(|v| v.map(fmt_num).unwrap_or_else(|| "-".into())).collect();
            let speedup = match (vals.first().copied().flatten(), vals.last().copied().flatten()) {
                (Some(a), Some(b)) => format!("{:.2}x", b / a),
                _ => "-".into(),
            };
            let _ = writeln!(
                s,
                "| {} {} | {} | {} | {} | {} |",
                m.algorithm,
                m.operation,
                m.implementation,
                fmt_size(m.size_bytes),
                cells.join(" | "),
                speedup
            );
        }
        s.push('\n');
    }

    // Details
    let _ = writeln!(s, "## All measurements\n");
    let _ = writeln!(
        s,
        "| algorithm | operation | implementation | version | size | threads | time/op (95% CI) | MB/s | ops/s | TSC/B | allocs/op | alloc B/op | outliers mild/severe | samples |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for (_, ms) in &idx.groups {
        for m in ms {
            let o = m.ns.outliers;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} ({} – {}){} | {} | {} | {} | {} | {} | {}/{} | {} |",
                m.algorithm,
                m.operation,
                m.implementation,
                m.implementation_version,
                fmt_size(m.size_bytes),
                m.threads,
                fmt_ns(m.ns.median),
                fmt_ns(m.ns.ci_low),
                fmt_ns(m.ns.ci_high),
                regression_mark(out, m),
                if m.has_throughput() { fmt_num(m.mb_per_sec()) } else { "-".into() },
                fmt_num(m.ops_per_sec()),
                m.tsc_per_byte().map(|t| format!("{t:.3}")).unwrap_or_else(|| "-".into()),
                fmt_num(m.allocs_per_op),
                fmt_num(m.alloc_bytes_per_op),
                o.low_mild + o.high_mild,
                o.severe(),
                m.ns.n
            );
        }
    }
    s
}

/// Renders report.json.
pub fn json(out: &RunOutput) -> String {
    let r = JsonReport {
        schema_version: SCHEMA_VERSION,
        profile: &out.profile,
        environment: &out.env,
        records: out.measurements.iter().map(Record::from).collect(),
        errors: &out.errors,
        regressions: &out.regressions,
    };
    serde_json::to_string(&r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Writes REPORT.md, report.json and the SVG charts into `dir`. Returns the files written.
pub fn write_all(out: &RunOutput, dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut put = |name: String, text: String| -> Result<(), String> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        files.push(p);
        Ok(())
    };
    put("REPORT.md".into(), markdown(out))?;
    put("report.json".into(), json(out))?;
    let records: Vec<Record> = out.measurements.iter().map(Record::from).collect();
    put(
        "heatmap.svg".into(),
        crate::summary::heatmap_svg(&crate::summary::ratios(&records), &crate::summary::heatmap_title(&out.env)),
    )?;
    let idx = Index::new(out);
    for ((alg, op), ms) in &idx.groups {
        if ms[0].kind == Kind::Bulk && ms.iter().any(|m| m.reports.contains(&Report::A)) {
            put(
                format!("throughput-{}.svg", slug(&format!("{alg}-{op}"))),
                svg_throughput(&format!("{alg} {op}"), &points(ms)),
            )?;
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_format() {
        assert_eq!(fmt_size(64), "64 B");
        assert_eq!(fmt_size(1024), "1 KiB");
        assert_eq!(fmt_size(10 << 20), "10 MiB");
        assert_eq!(slug("ChaCha20-Poly1305/seal"), "chacha20-poly1305-seal");
    }

    #[test]
    fn axis_ticks_are_round() {
        assert_eq!(nice_ticks(4554.0, 6), (1000.0, 5000.0));
        assert_eq!(nice_ticks(911.0, 6), (200.0, 1000.0));
        assert_eq!(nice_ticks(12.0, 6), (2.0, 12.0));
        assert_eq!(fmt_tick(0.6000000000000001, 0.2), "0.6");
        assert_eq!(fmt_tick(7.5, 2.5), "7.5");
        assert_eq!(fmt_tick(3000.0, 1000.0), "3000");
        assert_eq!(nice_ticks(0.0, 6), (0.2, 1.0));
        let svg = svg_throughput("t", &[("pqkit".into(), 64, 4554.0), ("openssl".into(), 64, 3000.0)]);
        for tick in [">0</text>", ">1000</text>", ">5000</text>"] {
            assert!(svg.contains(tick), "{tick} in {svg}");
        }
        assert!(!svg.contains(">4554"), "{svg}");
    }
}
