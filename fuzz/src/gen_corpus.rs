//! Writes the committed seed corpus: a few valid encodings per fuzz target, from pqkit's own encoders with
//! fixed keys (so the output is reproducible and re-running this changes nothing).
//! Run from `fuzz/`: `cargo run --example gen_corpus`.

use pqkit::aead::stream::{Algorithm, Encryptor, Header, KeySource};
use pqkit::ec::{ed25519, p256, secp256k1, x25519};
use pqkit::mldsa::{MlDsa44, MlDsa65, MlDsa87};
use pqkit::mlkem::{DecapsulationKey, MlKem512, MlKem768, MlKem1024};
use pqkit_bus::envelope::{self, Kind};
use pqkit_bus::{AgentId, Bus, Identity, Policy, Priority};
use std::io::Write;
use std::path::Path;

fn put(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn main() {
    // Encrypted files (key 0x42.., the fuzz targets' key) and headers, all three algorithms.
    for id in 1..=3u8 {
        let alg = Algorithm::from_id(id).unwrap();
        for (n, len) in [(0usize, 0usize), (1, 100), (2, 65536), (3, 65537)] {
            let mut e = Encryptor::with_key(alg, &[0x42; 32], Vec::new()).unwrap();
            e.write_all(&vec![n as u8; len]).unwrap();
            let file = e.finish().unwrap();
            if len <= 100 {
                put("stream_decrypt", &format!("file-{id}-{len}"), &file);
            }
            let mut seed = vec![id - 1 | if len > 100 { 0x80 } else { 0 }, n as u8, 0, 0, 0];
            seed.extend_from_slice(&vec![n as u8; len.min(64)]);
            put("stream_roundtrip", &format!("plain-{id}-{n}"), &seed);
        }
        let prefix = vec![7u8; alg.prefix_len()];
        let src = KeySource::Argon2id { m_cost: 65536, t_cost: 3, p_cost: 4 };
        let h = Header::new(alg, src, &[9u8; 32], &prefix).unwrap();
        put("stream_decrypt", &format!("header-argon2-{id}"), h.as_bytes());
    }

    // P-256 and secp256k1: keys (raw, PKCS#8, SEC1, SPKI, PEM, points) and signatures (P1363, DER).
    macro_rules! weier {
        ($m:ident, $tag:literal) => {{
            let sk = $m::SigningKey::from_bytes(&[0x11; 32]).unwrap();
            let sec = $m::SecretKey::from_bytes(&[0x22; 32]).unwrap();
            let t = "ec_weierstrass";
            put(t, concat!($tag, "-pkcs8"), &sk.to_pkcs8_der().unwrap());
            put(t, concat!($tag, "-sec1"), &sec.to_sec1_der().unwrap());
            put(t, concat!($tag, "-pkcs8-pem"), sec.to_pkcs8_pem().unwrap().as_bytes());
            put(t, concat!($tag, "-sec1-pem"), sec.to_sec1_pem().unwrap().as_bytes());
            let pk = sec.public_key();
            put(t, concat!($tag, "-point"), pk.to_sec1_bytes(false).as_bytes());
            put(t, concat!($tag, "-point-c"), pk.to_sec1_bytes(true).as_bytes());
            put(t, concat!($tag, "-spki"), &pk.to_public_key_der().unwrap());
            put(t, concat!($tag, "-spki-pem"), pk.to_public_key_pem().unwrap().as_bytes());
            let sig = sk.sign(b"seed");
            put(t, concat!($tag, "-sig-p1363"), &sig.to_bytes());
            put(t, concat!($tag, "-sig-der"), sig.to_der().as_bytes());
        }};
    }
    weier!(p256, "p256");
    weier!(secp256k1, "k256");

    // Ed25519 / X25519.
    let t = "ec_25519";
    let ed = ed25519::SigningKey::from_seed(&[0x33; 32]);
    put(t, "ed-seed", &ed.to_seed());
    put(t, "ed-pkcs8", &ed.to_pkcs8_der().unwrap());
    put(t, "ed-pkcs8-pem", ed.to_pkcs8_pem().unwrap().as_bytes());
    put(t, "ed-pub", ed.verifying_key().as_bytes());
    put(t, "ed-spki", &ed.verifying_key().to_public_key_der().unwrap());
    let mut sm = ed.sign(b"seed").to_bytes().to_vec();
    sm.extend_from_slice(b"seed");
    put(t, "ed-sig-msg", &sm);
    let x = x25519::X25519SecretKey::from_array([0x44; 32]);
    put(t, "x-pkcs8", &x.to_pkcs8_der().unwrap());
    put(t, "x-pub", &x.public_key().to_bytes());
    put(t, "x-spki", &x.public_key().to_public_key_der().unwrap());

    // ML-KEM: keys and a ciphertext per parameter set.
    macro_rules! kem {
        ($p:ty, $tag:literal) => {{
            let (dk, ek) = DecapsulationKey::<$p>::from_seed(&[0x55; 32], &[0x66; 32]);
            put("mlkem", concat!($tag, "-ek"), ek.as_bytes());
            put("mlkem", concat!($tag, "-dk"), &dk.to_bytes()[..]);
            put("mlkem", concat!($tag, "-ct"), ek.encapsulate_deterministic(&[0x77; 32]).0.as_bytes());
        }};
    }
    kem!(MlKem512, "512");
    kem!(MlKem768, "768");
    kem!(MlKem1024, "1024");
    put("mlkem", "seed64", &[0x88; 64]);

    // ML-DSA: keys and a signature per parameter set.
    macro_rules! dsa {
        ($p:ty, $tag:literal) => {{
            let (sk, vk) = pqkit::mldsa::SigningKey::<$p>::from_seed(&[0x99; 32]);
            put("mldsa", concat!($tag, "-vk"), vk.as_bytes());
            put("mldsa", concat!($tag, "-sk"), &sk.to_bytes()[..]);
            put("mldsa", concat!($tag, "-sig"), sk.sign_deterministic(b"seed", b"").unwrap().as_bytes());
        }};
    }
    dsa!(MlDsa44, "44");
    dsa!(MlDsa65, "65");
    dsa!(MlDsa87, "87");

    // Bus: envelopes of each kind, an identity, a sealed publish envelope.
    for (i, (kind, reply, sub)) in
        [(Kind::Publish, "", 0u64), (Kind::Deliver, "_INBOX.ab", 5), (Kind::Plain, "", 0)].into_iter().enumerate()
    {
        let h = envelope::Header {
            kind,
            priority: Priority::High,
            epoch: 1,
            seq: 42,
            sender: AgentId([3; 16]),
            sub,
            topic: "orders.eu.new",
            reply,
        };
        let mut env = Vec::new();
        h.append(&mut env);
        env.extend_from_slice(b"payload");
        if kind.sealed() {
            env.extend_from_slice(&[0xee; 16]);
        }
        put("bus_envelope", &format!("envelope-{i}"), &env);
    }
    let id = Identity::from_seed("agent-1", &[0xaa; 32]).unwrap();
    let mut enc = Vec::new();
    id.public().encode(&mut enc);
    put("bus_envelope", "identity", &enc);
    let bus = Bus::new(Policy::allow_all()).unwrap();
    let agent = bus.connect(&id).unwrap();
    let mut p = agent.publisher("orders.eu.new").unwrap();
    put("bus_ingest", "sealed", &p.seal(b"hello", Priority::Normal, None).unwrap());
    put("bus_ingest", "payload", b"\x01hello bus");

    // RSA: the benchmark's fixed 2048-bit key in every encoding, and a k-byte block for the padding checks.
    let der: &[u8] = include_bytes!("../../crates/pqkit-bench/src/algs/rsa_keys/rsa-2048.pk8.der");
    let k = pqkit::rsa::RsaPrivateKey::from_pkcs8_der(der).unwrap();
    put("rsa", "pkcs8-der", der);
    put("rsa", "pkcs1-der", &k.to_pkcs1_der().unwrap());
    put("rsa", "pkcs8-pem", k.to_pkcs8_pem().unwrap().as_bytes());
    put("rsa", "spki-der", &k.public_key().to_public_key_der().unwrap());
    put("rsa", "spki-pem", k.public_key().to_public_key_pem().unwrap().as_bytes());
    put("rsa", "pkcs1-public-der", &k.public_key().to_pkcs1_der().unwrap());
    put("rsa", "block", &[0x5a; 256]);
}
