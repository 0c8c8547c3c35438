//! PKCS#8 / SubjectPublicKeyInfo / PEM encodings of the Ed25519 and X25519 keys (RFC 8410): known answers
//! from RFC 8410 §10, round trips, every rejection path, and interoperability with the `openssl` command.

use pqkit::Error;
use pqkit::ec::ed25519::{Signature, SigningKey, VerifyingKey};
use pqkit::ec::x25519::{X25519PublicKey, X25519SecretKey};
use std::path::{Path, PathBuf};
use std::process::Command;

// RFC 8410 §10.3 (private key, version 1) and §10.1 (its public key).
const RFC_PRIVATE_PEM: &str = "-----BEGIN PRIVATE KEY-----\n\
MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
-----END PRIVATE KEY-----\n";
const RFC_PUBLIC_PEM: &str = "-----BEGIN PUBLIC KEY-----\n\
MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n\
-----END PUBLIC KEY-----\n";
// RFC 8410 §10.3: the same key as version 2, with an attribute and the public key.
const RFC_PRIVATE_V2_PEM: &str = "-----BEGIN PRIVATE KEY-----\n\
MHICAQEwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n\
oB8wHQYKKoZIhvcNAQkJFDEPDA1DdXJkbGUgQ2hhaXJzgSEAGb9ECWmEzf6FQbrB\n\
Z9w7lshQhqowtrbLDFw4rXAxZuE=\n\
-----END PRIVATE KEY-----\n";
const RFC_SEED: &str = "d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842";
const RFC_PUBLIC: &str = "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1";

// Fixed DER prefixes (RFC 8410 §7 and §4).
const ED_PRIV_PREFIX: &str = "302e020100300506032b657004220420";
const X_PRIV_PREFIX: &str = "302e020100300506032b656e04220420";
const ED_PUB_PREFIX: &str = "302a300506032b6570032100";
const X_PUB_PREFIX: &str = "302a300506032b656e032100";

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

fn reason(r: Result<impl Sized, Error>) -> &'static str {
    match r {
        Err(Error::InvalidEncoding { reason, .. }) => reason,
        Err(e) => panic!("expected InvalidEncoding, got {e:?}"),
        Ok(_) => panic!("expected InvalidEncoding, got Ok"),
    }
}

fn pem(label: &str, der: &[u8]) -> String {
    pem_wrap(label, &base64(der))
}

fn pem_wrap(label: &str, body: &str) -> String {
    let mut s = format!("-----BEGIN {label}-----\n");
    for chunk in body.as_bytes().chunks(64) {
        s.push_str(std::str::from_utf8(chunk).unwrap());
        s.push('\n');
    }
    s.push_str(&format!("-----END {label}-----\n"));
    s
}

/// Plain base64 (the test's own, independent of the crate under test).
fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn rfc8410_known_answers() {
    let sk = SigningKey::from_pkcs8_pem(RFC_PRIVATE_PEM).unwrap();
    assert_eq!(hex::encode(sk.to_seed()), RFC_SEED);
    assert_eq!(hex::encode(sk.verifying_key().as_bytes()), RFC_PUBLIC);
    assert_eq!(sk.to_pkcs8_pem().unwrap().as_str(), RFC_PRIVATE_PEM);
    assert_eq!(sk.verifying_key().to_public_key_pem().unwrap(), RFC_PUBLIC_PEM);
    let vk = VerifyingKey::from_public_key_pem(RFC_PUBLIC_PEM).unwrap();
    assert_eq!(hex::encode(vk.as_bytes()), RFC_PUBLIC);
    // The version 2 form (attributes skipped, public key checked against the private key).
    let sk2 = SigningKey::from_pkcs8_pem(RFC_PRIVATE_V2_PEM).unwrap();
    assert_eq!(hex::encode(sk2.to_seed()), RFC_SEED);
}

#[test]
fn der_layout_is_rfc8410() {
    let seed = [0x5a; 32];
    let sk = SigningKey::from_seed(&seed);
    assert_eq!(hex::encode(&*sk.to_pkcs8_der().unwrap()), format!("{ED_PRIV_PREFIX}{}", hex::encode(seed)));
    let vk = sk.verifying_key();
    assert_eq!(hex::encode(vk.to_public_key_der().unwrap()), format!("{ED_PUB_PREFIX}{}", hex::encode(vk.as_bytes())));
    let xk = X25519SecretKey::from_array(seed);
    assert_eq!(hex::encode(&*xk.to_pkcs8_der().unwrap()), format!("{X_PRIV_PREFIX}{}", hex::encode(seed)));
    let xp = xk.public_key();
    assert_eq!(hex::encode(xp.to_public_key_der().unwrap()), format!("{X_PUB_PREFIX}{}", hex::encode(xp.as_bytes())));
    // PEM is the DER in base64 under the right label.
    assert_eq!(sk.to_pkcs8_pem().unwrap().as_str(), pem("PRIVATE KEY", &sk.to_pkcs8_der().unwrap()));
    assert_eq!(xp.to_public_key_pem().unwrap(), pem("PUBLIC KEY", &xp.to_public_key_der().unwrap()));
}

#[test]
fn round_trips() {
    let mut rng = pqkit::rng::ChaCha20Rng::from_key([9; 32]);
    for _ in 0..16 {
        let sk = SigningKey::generate(&mut rng);
        let vk = sk.verifying_key();
        assert_eq!(SigningKey::from_pkcs8_der(&sk.to_pkcs8_der().unwrap()).unwrap().to_seed(), sk.to_seed());
        assert_eq!(SigningKey::from_pkcs8_pem(&sk.to_pkcs8_pem().unwrap()).unwrap().to_seed(), sk.to_seed());
        assert_eq!(VerifyingKey::from_public_key_der(&vk.to_public_key_der().unwrap()).unwrap(), vk);
        assert_eq!(VerifyingKey::from_public_key_pem(&vk.to_public_key_pem().unwrap()).unwrap(), vk);

        let xk = X25519SecretKey::generate(&mut rng);
        let xp = xk.public_key();
        assert_eq!(X25519SecretKey::from_pkcs8_der(&xk.to_pkcs8_der().unwrap()).unwrap().to_bytes(), xk.to_bytes());
        assert_eq!(X25519SecretKey::from_pkcs8_pem(&xk.to_pkcs8_pem().unwrap()).unwrap().to_bytes(), xk.to_bytes());
        assert_eq!(X25519PublicKey::from_public_key_der(&xp.to_public_key_der().unwrap()).unwrap(), xp);
        assert_eq!(X25519PublicKey::from_public_key_pem(&xp.to_public_key_pem().unwrap()).unwrap(), xp);
    }
    // Any 32 bytes are an X25519 public key, in SPKI too (top bit set, u >= p).
    let any = X25519PublicKey::from([0xff; 32]);
    assert_eq!(X25519PublicKey::from_public_key_der(&any.to_public_key_der().unwrap()).unwrap(), any);
}

/// PKCS#8 for `oid_hex` (the OID's content bytes) with the given inner privateKey content and extra fields.
fn pkcs8(version: u8, alg_id_content: &[u8], private_key_content: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut alg = vec![0x30, alg_id_content.len() as u8];
    alg.extend_from_slice(alg_id_content);
    let mut body = vec![0x02, 0x01, version];
    body.extend_from_slice(&alg);
    body.extend_from_slice(&[0x04, private_key_content.len() as u8]);
    body.extend_from_slice(private_key_content);
    body.extend_from_slice(tail);
    let mut out = vec![0x30, body.len() as u8];
    out.extend_from_slice(&body);
    out
}

fn spki(alg_id_content: &[u8], bit_string_content: &[u8]) -> Vec<u8> {
    let mut body = vec![0x30, alg_id_content.len() as u8];
    body.extend_from_slice(alg_id_content);
    body.extend_from_slice(&[0x03, bit_string_content.len() as u8]);
    body.extend_from_slice(bit_string_content);
    let mut out = vec![0x30, body.len() as u8];
    out.extend_from_slice(&body);
    out
}

const ED_ALG: [u8; 5] = [0x06, 0x03, 0x2b, 0x65, 0x70];
const X_ALG: [u8; 5] = [0x06, 0x03, 0x2b, 0x65, 0x6e];

fn curve_key(k: &[u8]) -> Vec<u8> {
    let mut v = vec![0x04, k.len() as u8];
    v.extend_from_slice(k);
    v
}

#[test]
fn builders_match_the_library() {
    // The hand-built encodings the negative tests start from are the library's, so each negative test
    // changes exactly one thing.
    let seed = [3u8; 32];
    assert_eq!(pkcs8(0, &ED_ALG, &curve_key(&seed), &[]), *SigningKey::from_seed(&seed).to_pkcs8_der().unwrap());
    assert_eq!(pkcs8(0, &X_ALG, &curve_key(&seed), &[]), *X25519SecretKey::from_array(seed).to_pkcs8_der().unwrap());
    let pk = X25519PublicKey::from([4; 32]);
    assert_eq!(spki(&X_ALG, &[&[0u8][..], &[4; 32]].concat()), pk.to_public_key_der().unwrap());
}

#[test]
fn private_key_rejections() {
    let seed = [3u8; 32];
    let good = pkcs8(0, &ED_ALG, &curve_key(&seed), &[]);
    assert!(SigningKey::from_pkcs8_der(&good).is_ok());

    // Wrong OID both ways, and an unrelated one (id-Ed448).
    let e = reason(X25519SecretKey::from_pkcs8_der(&good));
    assert_eq!(e, "PKCS#8: the algorithm is not id-X25519 (OID 1.3.101.110)");
    let xgood = pkcs8(0, &X_ALG, &curve_key(&seed), &[]);
    assert_eq!(reason(SigningKey::from_pkcs8_der(&xgood)), "PKCS#8: the algorithm is not id-Ed25519 (OID 1.3.101.112)");
    let ed448 = pkcs8(0, &[0x06, 0x03, 0x2b, 0x65, 0x71], &curve_key(&seed), &[]);
    assert_eq!(reason(SigningKey::from_pkcs8_der(&ed448)), "PKCS#8: the algorithm is not id-Ed25519 (OID 1.3.101.112)");

    // Parameters present (NULL).
    let params = pkcs8(0, &[&ED_ALG[..], &[0x05, 0x00]].concat(), &curve_key(&seed), &[]);
    assert_eq!(
        reason(SigningKey::from_pkcs8_der(&params)),
        "PKCS#8: the algorithm parameters must be absent (RFC 8410)"
    );

    // Wrong key lengths: 31, 33 and 0 bytes.
    for k in [&seed[..31], &[&seed[..], &[0]].concat()[..], &[][..]] {
        let d = pkcs8(0, &ED_ALG, &curve_key(k), &[]);
        assert_eq!(reason(SigningKey::from_pkcs8_der(&d)), "PKCS#8: the private key must be 32 bytes");
        let d = pkcs8(0, &X_ALG, &curve_key(k), &[]);
        assert_eq!(reason(X25519SecretKey::from_pkcs8_der(&d)), "PKCS#8: the private key must be 32 bytes");
    }
    // The raw key without the CurvePrivateKey wrapping (a common mistake), and data after it.
    let raw = pkcs8(0, &ED_ALG, &seed, &[]);
    let inner_msg = "PKCS#8: privateKey must hold exactly one DER OCTET STRING (CurvePrivateKey, RFC 8410)";
    assert_eq!(reason(SigningKey::from_pkcs8_der(&raw)), inner_msg);
    let inner_trailing = pkcs8(0, &ED_ALG, &[&curve_key(&seed)[..], &[0]].concat(), &[]);
    assert_eq!(reason(SigningKey::from_pkcs8_der(&inner_trailing)), inner_msg);

    // Trailing data after the structure.
    let trailing = [&good[..], &[0]].concat();
    assert_eq!(reason(SigningKey::from_pkcs8_der(&trailing)), "PKCS#8: trailing data after the PrivateKeyInfo");
    let trailing = [&xgood[..], &good[..]].concat();
    assert_eq!(reason(X25519SecretKey::from_pkcs8_der(&trailing)), "PKCS#8: trailing data after the PrivateKeyInfo");

    // Malformed: truncated at every length, empty, a bad version, a public key given where a private is due.
    let malformed = "PKCS#8: not a DER PrivateKeyInfo (malformed or truncated)";
    for n in 0..good.len() {
        assert_eq!(reason(SigningKey::from_pkcs8_der(&good[..n])), malformed, "truncated to {n}");
        assert_eq!(reason(X25519SecretKey::from_pkcs8_der(&xgood[..n])), malformed, "truncated to {n}");
    }
    assert_eq!(reason(SigningKey::from_pkcs8_der(&pkcs8(2, &ED_ALG, &curve_key(&seed), &[]))), malformed);
    let pubder = SigningKey::from_seed(&seed).verifying_key().to_public_key_der().unwrap();
    assert_eq!(reason(SigningKey::from_pkcs8_der(&pubder)), malformed);
    // Version 1 with a public key, version 2 without one.
    let vk = SigningKey::from_seed(&seed).verifying_key();
    let pk_field = [&[0x81, 0x21, 0x00][..], vk.as_bytes()].concat();
    assert_eq!(reason(SigningKey::from_pkcs8_der(&pkcs8(0, &ED_ALG, &curve_key(&seed), &pk_field))), malformed);
    assert_eq!(reason(SigningKey::from_pkcs8_der(&pkcs8(1, &ED_ALG, &curve_key(&seed), &[]))), malformed);
}

#[test]
fn version2_public_key_is_checked() {
    let seed = [3u8; 32];
    let vk = SigningKey::from_seed(&seed).verifying_key();
    let v2 = |pk: &[u8]| pkcs8(1, &ED_ALG, &curve_key(&seed), &[&[0x81, pk.len() as u8][..], pk].concat());
    let ok = v2(&[&[0][..], vk.as_bytes()].concat());
    assert_eq!(SigningKey::from_pkcs8_der(&ok).unwrap().to_seed(), seed);
    let mut other = *vk.as_bytes();
    other[0] ^= 1;
    let mismatch = v2(&[&[0][..], &other].concat());
    assert_eq!(reason(SigningKey::from_pkcs8_der(&mismatch)), "PKCS#8: the public key does not match the private key");
    let short = v2(&[&[0][..], &vk.as_bytes()[..31]].concat());
    assert_eq!(
        reason(SigningKey::from_pkcs8_der(&short)),
        "PKCS#8: the public key must be 32 bytes with no unused bits"
    );
    let unused = v2(&[&[1][..], vk.as_bytes()].concat());
    assert_eq!(
        reason(SigningKey::from_pkcs8_der(&unused)),
        "PKCS#8: the public key must be 32 bytes with no unused bits"
    );

    // X25519 likewise.
    let xk = X25519SecretKey::from_array(seed);
    let xv2 = |pk: &[u8]| pkcs8(1, &X_ALG, &curve_key(&seed), &[&[0x81, pk.len() as u8][..], pk].concat());
    let ok = xv2(&[&[0][..], xk.public_key().as_bytes()].concat());
    assert_eq!(X25519SecretKey::from_pkcs8_der(&ok).unwrap().to_bytes(), seed);
    let mut other = xk.public_key().to_bytes();
    other[31] ^= 0x40;
    let mismatch = xv2(&[&[0][..], &other].concat());
    assert_eq!(
        reason(X25519SecretKey::from_pkcs8_der(&mismatch)),
        "PKCS#8: the public key does not match the private key"
    );

    // The RFC's version 2 example with its public key changed.
    let sk = SigningKey::from_pkcs8_pem(RFC_PRIVATE_V2_PEM).unwrap();
    assert_eq!(sk.verifying_key().as_bytes()[..], h(RFC_PUBLIC)[..]);
    let tampered = RFC_PRIVATE_V2_PEM.replace("Z9w7", "Z9w8");
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&tampered)), "PKCS#8: the public key does not match the private key");
}

#[test]
fn public_key_rejections() {
    let vk = SigningKey::from_seed(&[3; 32]).verifying_key();
    let key = vk.to_bytes();
    let bits = [&[0u8][..], &key].concat();
    assert!(VerifyingKey::from_public_key_der(&spki(&ED_ALG, &bits)).is_ok());

    assert_eq!(
        reason(X25519PublicKey::from_public_key_der(&spki(&ED_ALG, &bits))),
        "SubjectPublicKeyInfo: the algorithm is not id-X25519 (OID 1.3.101.110)"
    );
    assert_eq!(
        reason(VerifyingKey::from_public_key_der(&spki(&X_ALG, &bits))),
        "SubjectPublicKeyInfo: the algorithm is not id-Ed25519 (OID 1.3.101.112)"
    );
    let params = spki(&[&ED_ALG[..], &[0x05, 0x00]].concat(), &bits);
    assert_eq!(
        reason(VerifyingKey::from_public_key_der(&params)),
        "SubjectPublicKeyInfo: the algorithm parameters must be absent (RFC 8410)"
    );
    let len_msg = "SubjectPublicKeyInfo: the public key must be 32 bytes with no unused bits";
    for b in [&bits[..32], &[&bits[..], &[0]].concat()[..], &[&[1u8][..], &key].concat()[..], &[0u8][..]] {
        assert_eq!(reason(VerifyingKey::from_public_key_der(&spki(&ED_ALG, b))), len_msg);
        assert_eq!(reason(X25519PublicKey::from_public_key_der(&spki(&X_ALG, b))), len_msg);
    }
    let good = spki(&ED_ALG, &bits);
    assert_eq!(
        reason(VerifyingKey::from_public_key_der(&[&good[..], &[0]].concat())),
        "SubjectPublicKeyInfo: trailing data after the structure"
    );
    for n in 0..good.len() {
        assert_eq!(
            reason(VerifyingKey::from_public_key_der(&good[..n])),
            "SubjectPublicKeyInfo: not a DER structure (malformed or truncated)"
        );
    }
    let priv_der = SigningKey::from_seed(&[3; 32]).to_pkcs8_der().unwrap();
    assert_eq!(
        reason(VerifyingKey::from_public_key_der(&priv_der)),
        "SubjectPublicKeyInfo: not a DER structure (malformed or truncated)"
    );
    // An Ed25519 key of small order (the identity, y = 1) and a non-canonical one are refused by the key check.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    let small = spki(&ED_ALG, &[&[0u8][..], &identity].concat());
    assert_eq!(reason(VerifyingKey::from_public_key_der(&small)), "public key: point of small order");
    let noncanon = spki(&ED_ALG, &[&[0u8][..], &[0xff; 32]].concat());
    assert!(reason(VerifyingKey::from_public_key_der(&noncanon)).starts_with("public key: "));
}

#[test]
fn pem_rejections() {
    let sk = SigningKey::from_seed(&[3; 32]);
    let der = sk.to_pkcs8_der().unwrap();
    let pub_pem = sk.verifying_key().to_public_key_pem().unwrap();
    let priv_label = "PEM: the label must be \"PRIVATE KEY\" (an unencrypted PKCS#8 key)";
    let pub_label = "PEM: the label must be \"PUBLIC KEY\" (a SubjectPublicKeyInfo)";
    for label in ["ENCRYPTED PRIVATE KEY", "EC PRIVATE KEY", "PUBLIC KEY", "private key"] {
        assert_eq!(reason(SigningKey::from_pkcs8_pem(&pem(label, &der))), priv_label, "{label}");
        assert_eq!(reason(X25519SecretKey::from_pkcs8_pem(&pem(label, &der))), priv_label, "{label}");
    }
    let vder = sk.verifying_key().to_public_key_der().unwrap();
    for label in ["PRIVATE KEY", "RSA PUBLIC KEY", "CERTIFICATE"] {
        assert_eq!(reason(VerifyingKey::from_public_key_pem(&pem(label, &vder))), pub_label, "{label}");
        assert_eq!(reason(X25519PublicKey::from_public_key_pem(&pem(label, &vder))), pub_label, "{label}");
    }
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&pub_pem)), priv_label);

    let boundaries = "PEM: malformed document (RFC 7468 boundaries)";
    let body = "PEM: malformed document (base64 body)";
    let good = sk.to_pkcs8_pem().unwrap();
    assert_eq!(reason(SigningKey::from_pkcs8_pem("")), boundaries);
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&hex::encode(&*der))), boundaries);
    // Data after the END line, a mismatched END label, a missing END line.
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&format!("{}junk\n", *good))), boundaries);
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&good.replace("END PRIVATE", "END PUBLIC"))), boundaries);
    assert_eq!(reason(SigningKey::from_pkcs8_pem(good.split("-----END").next().unwrap())), boundaries);
    // Bad base64.
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&pem_wrap("PRIVATE KEY", "MC4CAQAw!!!!"))), body);
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&good.replace("MC4C", "MC4"))), body);
    // Valid PEM around bad DER is a DER error.
    assert_eq!(
        reason(SigningKey::from_pkcs8_pem(&pem("PRIVATE KEY", &der[..40]))),
        "PKCS#8: not a DER PrivateKeyInfo (malformed or truncated)"
    );
    assert_eq!(
        reason(SigningKey::from_pkcs8_pem(&pem("PRIVATE KEY", &[&der[..], &[0]].concat()))),
        "PKCS#8: trailing data after the PrivateKeyInfo"
    );
    // Too long for a private key.
    assert_eq!(reason(SigningKey::from_pkcs8_pem(&pem("PRIVATE KEY", &[0u8; 2000]))), body);
    // Public PEM: malformed.
    let pub_msg = "PEM: malformed document (RFC 7468 boundaries or base64 body)";
    assert_eq!(reason(VerifyingKey::from_public_key_pem("")), pub_msg);
    assert_eq!(reason(VerifyingKey::from_public_key_pem(&pub_pem.replace("MCow", "MC!w"))), pub_msg);
    assert_eq!(reason(X25519PublicKey::from_public_key_pem(&format!("{pub_pem}x"))), pub_msg);
    // CRLF line endings are fine.
    assert!(SigningKey::from_pkcs8_pem(&good.replace('\n', "\r\n")).is_ok());
}

#[test]
fn debug_output_holds_no_secret_and_pem_is_zeroizing() {
    let sk = SigningKey::from_seed(&[0x77; 32]);
    let pem: zeroize::Zeroizing<String> = sk.to_pkcs8_pem().unwrap();
    let der: zeroize::Zeroizing<Vec<u8>> = sk.to_pkcs8_der().unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    assert_eq!(der.len(), 48);
    let xk = X25519SecretKey::from_array([0x77; 32]);
    let _: zeroize::Zeroizing<String> = xk.to_pkcs8_pem().unwrap();
    let _: zeroize::Zeroizing<Vec<u8>> = xk.to_pkcs8_der().unwrap();
}

// ---- OpenSSL interoperability ----

#[path = "common/tool.rs"]
mod tool;

/// The `openssl` command, when installed (the rule of `common/tool.rs`: required under CI).
fn openssl() -> Option<Command> {
    tool::available("openssl", "version", "apt-get install openssl").then(|| Command::new("openssl"))
}

fn run(mut c: Command) -> Vec<u8> {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{c:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("pqkit-ec-encoding-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn p(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn openssl_ed25519_interop() {
    let Some(mut genkey) = openssl() else { return };
    let d = TempDir::new("ed25519");
    let (osk, msg) = (d.path("openssl.pem"), d.path("msg"));
    std::fs::write(&msg, b"pqkit and OpenSSL agree on Ed25519").unwrap();

    // An OpenSSL key read by pqkit, in PEM and DER; the public keys agree.
    genkey.args(["genpkey", "-algorithm", "ed25519", "-out", p(&osk)]);
    run(genkey);
    let sk = SigningKey::from_pkcs8_pem(&std::fs::read_to_string(&osk).unwrap()).unwrap();
    let mut c = Command::new("openssl");
    c.args(["pkey", "-in", p(&osk), "-outform", "DER"]);
    assert_eq!(SigningKey::from_pkcs8_der(&run(c)).unwrap().to_seed(), sk.to_seed());
    let mut c = Command::new("openssl");
    c.args(["pkey", "-in", p(&osk), "-pubout"]);
    let opub = String::from_utf8(run(c)).unwrap();
    assert_eq!(VerifyingKey::from_public_key_pem(&opub).unwrap(), sk.verifying_key());
    assert_eq!(opub, sk.verifying_key().to_public_key_pem().unwrap());

    // An OpenSSL signature verified by pqkit, and equal to pqkit's (Ed25519 is deterministic).
    let sig_path = d.path("openssl.sig");
    let mut c = Command::new("openssl");
    c.args(["pkeyutl", "-sign", "-rawin", "-inkey", p(&osk), "-in", p(&msg), "-out", p(&sig_path)]);
    run(c);
    let osig = std::fs::read(&sig_path).unwrap();
    let m = std::fs::read(&msg).unwrap();
    sk.verifying_key().verify(&m, &Signature::from_bytes(&osig).unwrap()).unwrap();
    assert_eq!(sk.sign(&m).to_bytes()[..], osig[..]);

    // pqkit-written keys read by OpenSSL; a pqkit signature verified by OpenSSL.
    let pk = SigningKey::from_seed(&[0x42; 32]);
    let (psk, ppub, psig) = (d.path("pqkit.pem"), d.path("pqkit.pub.pem"), d.path("pqkit.sig"));
    std::fs::write(&psk, pk.to_pkcs8_pem().unwrap().as_bytes()).unwrap();
    std::fs::write(&ppub, pk.verifying_key().to_public_key_pem().unwrap()).unwrap();
    let mut c = Command::new("openssl");
    c.args(["pkey", "-in", p(&psk), "-pubout"]);
    assert_eq!(String::from_utf8(run(c)).unwrap(), pk.verifying_key().to_public_key_pem().unwrap());
    let mut c = Command::new("openssl");
    c.args(["pkey", "-pubin", "-in", p(&ppub), "-outform", "DER"]);
    assert_eq!(run(c), pk.verifying_key().to_public_key_der().unwrap());
    let mut c = Command::new("openssl");
    c.args(["pkey", "-in", p(&psk), "-outform", "DER"]);
    assert_eq!(run(c), *pk.to_pkcs8_der().unwrap());
    std::fs::write(&psig, pk.sign(&m).to_bytes()).unwrap();
    let mut c = Command::new("openssl");
    c.args(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", p(&ppub), "-in", p(&msg), "-sigfile", p(&psig)]);
    let out = String::from_utf8(run(c)).unwrap();
    assert!(out.contains("Signature Verified Successfully"), "{out}");
    // And OpenSSL refuses it for another message (the check can fail).
    std::fs::write(&msg, b"another message").unwrap();
    let mut c = Command::new("openssl");
    c.args(["pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", p(&ppub), "-in", p(&msg), "-sigfile", p(&psig)]);
    assert!(!c.output().unwrap().status.success());
}

#[test]
fn openssl_x25519_interop() {
    let Some(mut genkey) = openssl() else { return };
    let d = TempDir::new("x25519");
    let (osk, opub) = (d.path("openssl.pem"), d.path("openssl.pub.pem"));
    genkey.args(["genpkey", "-algorithm", "x25519", "-out", p(&osk)]);
    run(genkey);
    let mut c = Command::new("openssl");
    c.args(["pkey", "-in", p(&osk), "-pubout", "-out", p(&opub)]);
    run(c);
    let ok = X25519SecretKey::from_pkcs8_pem(&std::fs::read_to_string(&osk).unwrap()).unwrap();
    let opk = X25519PublicKey::from_public_key_pem(&std::fs::read_to_string(&opub).unwrap()).unwrap();
    assert_eq!(ok.public_key(), opk);

    // pqkit's key pair, written for OpenSSL.
    let pk = X25519SecretKey::from_array([0x24; 32]);
    let (psk, ppub) = (d.path("pqkit.pem"), d.path("pqkit.pub.pem"));
    std::fs::write(&psk, pk.to_pkcs8_pem().unwrap().as_bytes()).unwrap();
    std::fs::write(&ppub, pk.public_key().to_public_key_pem().unwrap()).unwrap();
    let ours = pk.diffie_hellman(&opk).unwrap();

    // OpenSSL derives with its key and pqkit's public key, and with pqkit's private key and its public key.
    for (key, peer) in [(&osk, &ppub), (&psk, &opub)] {
        let mut c = Command::new("openssl");
        c.args(["pkeyutl", "-derive", "-inkey", p(key), "-peerkey", p(peer)]);
        assert_eq!(run(c), ours.as_bytes(), "openssl derive with {key:?}");
    }
}
