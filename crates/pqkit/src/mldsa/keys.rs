//! Key generation and the encodings of keys and signatures: ML-DSA.KeyGen from a seed (t = A·s1 + s2 and its
//! split into t1 and t0), the FIPS 204 encodings of private keys, public keys and signatures with their
//! parsing checks, and the public-key hash tr. Signing is in `sign.rs`, verification in `verify.rs`.

use super::*;

/// Every coefficient 2^64 mod q (centred): a Montgomery product with it multiplies by 2^32.
const R2_POLY: Poly = Poly([poly::center(((1u128 << 64) % Q as u128) as i32); N]);

/// t = A·s1 + s2 in \[0, q), from NTT(s1) and s2.
fn compute_t<P: Params>(b: Checked<Backend>, a: &[Poly], s1h: &[Poly], s2: &P::VecK, t: &mut P::VecK) {
    for i in 0..P::K {
        let ti = &mut (*t).as_mut()[i];
        b.pointwise_acc(ti, &a[i * P::L..(i + 1) * P::L], s1h);
        b.invntt(ti);
        for (c, s) in ti.0.iter_mut().zip(s2.as_ref()[i].0.iter()) {
            *c = poly::freeze(*c + *s);
        }
    }
}

impl<P: Params> SigningKey<P> {
    /// A fresh key pair from 32 bytes of OS randomness (ML-DSA.KeyGen, FIPS 204 Algorithm 1).
    #[cfg(feature = "std")]
    pub fn generate() -> Result<(SigningKey<P>, VerifyingKey<P>)> {
        let mut xi = Zeroizing::new([0u8; 32]);
        crate::rng::fill_os(&mut xi[..])?;
        Ok(Self::from_seed(&xi))
    }

    /// The key pair for seed ξ (ML-DSA.KeyGen_internal, FIPS 204 Algorithm 6). The signing key remembers ξ,
    /// so [`to_seed`](Self::to_seed) can store it compactly.
    pub fn from_seed(xi: &[u8; 32]) -> (SigningKey<P>, VerifyingKey<P>) {
        Self::from_seed_with_backend(xi, Backend::detect())
    }

    /// As [`from_seed`](Self::from_seed) from a slice, which must be exactly 32 bytes ([`Error::InvalidLength`]).
    pub fn from_seed_bytes(xi: &[u8]) -> Result<(SigningKey<P>, VerifyingKey<P>)> {
        let xi: &[u8; 32] = xi.try_into().map_err(|_| Error::length(P::NAME, "seed", 32, xi.len()))?;
        Ok(Self::from_seed(xi))
    }

    /// As [`from_seed`](Self::from_seed) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_seed_with_backend(xi: &[u8; 32], b: Checked<Backend>) -> (SigningKey<P>, VerifyingKey<P>) {
        let mut buf = Zeroizing::new([0u8; 128]);
        let mut h = Shake256::with_backend(b.keccak());
        h.update(xi).update(&[P::K as u8, P::L as u8]);
        h.finalize_into(&mut buf[..]);
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&buf[..32]);
        let mut rho1 = Zeroizing::new([0u8; 64]);
        rho1.copy_from_slice(&buf[32..96]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&buf[96..]);

        let mut sk = SigningKey::<P> { rho, key, tr: [0; 64], seed: Some(*xi), x: Expanded::new(), backend: b };
        let (s1_hat, s2_hat, t0_hat, a) = sk.x.parts_mut();
        sampling::expand_a(b, &rho, a, P::L);
        // s1 and s2 are sampled straight into their final places and transformed there; only s2 is kept
        // (briefly) in the normal domain, for t = A·s1 + s2.
        sampling::expand_s(b, &rho1, s1_hat, s2_hat, P::ETA);
        let mut s2 = P::VecK::zero();
        s2.as_mut().copy_from_slice(s2_hat);
        for h in s1_hat.iter_mut().chain(s2_hat.iter_mut()) {
            b.ntt(h);
        }
        // t = A·s1 + s2, one row at a time, only as far as t1 = Power2Round(t).1 (public). On the way,
        // 2^32·(A ∘ NTT(s1)) (Montgomery form) goes into t0_hat: once NTT(t1·2^13) is known,
        // NTT(t0) = NTT(t) − NTT(t1·2^13) = that + NTT(s2) − NTT(t1·2^13), without another forward NTT.
        let mut pk = P::PkBytes::zero();
        let mut t1_hat = P::VecK::zero();
        let mut ti = Poly::ZERO;
        {
            let pkb = pk.as_mut();
            pkb[..32].copy_from_slice(&rho);
            for i in 0..P::K {
                b.pointwise_acc(&mut ti, &a[i * P::L..(i + 1) * P::L], s1_hat);
                b.pointwise(&mut t0_hat[i], &ti, &R2_POLY);
                b.invntt(&mut ti);
                let t1 = &mut t1_hat.as_mut()[i];
                for ((o, c), s) in t1.0.iter_mut().zip(ti.0.iter()).zip(s2.as_ref()[i].0.iter()) {
                    *o = poly::power2round(poly::freeze(*c + *s)).0;
                }
                encoding::pack_t1(&mut pkb[32 + 320 * i..32 + 320 * (i + 1)], t1);
                for c in t1.0.iter_mut() {
                    *c <<= D;
                }
                b.ntt(t1);
                for ((x, s), y) in t0_hat[i].0.iter_mut().zip(s2_hat[i].0.iter()).zip(t1.0.iter()) {
                    *x = poly::reduce32(*x + *s - *y);
                }
            }
        }
        b.wipe(core::slice::from_mut(&mut ti));
        b.wipe(s2.as_mut());
        let vk = VerifyingKey::<P>::with_t1_hat(pk, t1_hat, b);
        sk.tr = vk.tr;
        (sk, vk)
    }

    /// x from NTT(x) (for s1, s2, t0, whose centred representatives are the values themselves).
    fn from_ntt(b: Checked<Backend>, hat: &Poly, out: &mut Poly) {
        for (o, h) in out.0.iter_mut().zip(hat.0.iter()) {
            *o = poly::reduce32(*h);
        }
        // invntt(NTT(x)) = x · 2^32; one Montgomery reduction removes the 2^32.
        b.invntt(out);
        for c in out.0.iter_mut() {
            *c = poly::center(poly::freeze(poly::mont_reduce(i64::from(*c))));
        }
    }

    /// The 32-byte seed ξ the key was generated from, or `None` for a key loaded with
    /// [`from_bytes`](Self::from_bytes) (the expanded encoding does not contain ξ).
    pub fn to_seed(&self) -> Option<Zeroizing<[u8; 32]>> {
        self.seed.map(Zeroizing::new)
    }

    /// The FIPS 204 private key encoding skEncode(ρ, K, tr, s1, s2, t0) (Algorithm 24).
    pub fn to_bytes(&self) -> Zeroizing<P::SkBytes> {
        let mut out = Zeroizing::new(P::SkBytes::zero());
        let o = out.as_mut();
        o[..32].copy_from_slice(&self.rho);
        o[32..64].copy_from_slice(&self.key);
        o[64..128].copy_from_slice(&self.tr);
        let eb = 32 * P::ETA_BITS;
        let mut off = 128;
        let b = self.backend;
        let mut tmp = Poly::ZERO;
        let (s1_hat, s2_hat, t0_hat, _) = self.x.parts();
        for p in s1_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_eta(&mut o[off..off + eb], &tmp, P::ETA);
            off += eb;
        }
        for p in s2_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_eta(&mut o[off..off + eb], &tmp, P::ETA);
            off += eb;
        }
        for p in t0_hat {
            Self::from_ntt(b, p, &mut tmp);
            encoding::pack_t0(&mut o[off..off + 416], &tmp);
            off += 416;
        }
        b.wipe(core::slice::from_mut(&mut tmp));
        out
    }

    /// Loads the FIPS 204 private key encoding (skDecode, Algorithm 25). Rejects a wrong length
    /// ([`Error::InvalidLength`]) and s1/s2 coefficients outside \[-η, η\] ([`Error::InvalidEncoding`]).
    pub fn from_bytes(sk: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(sk, Backend::detect())
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(sk: &[u8], b: Checked<Backend>) -> Result<Self> {
        Error::check_length(P::NAME, "private key", P::SK_LEN, sk.len())?;
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&sk[..32]);
        let mut key = [0u8; 32];
        key.copy_from_slice(&sk[32..64]);
        let mut tr = [0u8; 64];
        tr.copy_from_slice(&sk[64..128]);
        let mut out = SigningKey::<P> { rho, key, tr, seed: None, x: Expanded::new(), backend: b };
        let (s1_hat, s2_hat, t0_hat, a) = out.x.parts_mut();
        sampling::expand_a(b, &rho, a, P::L);
        let eb = 32 * P::ETA_BITS;
        let mut off = 128;
        let mut bad = 0;
        for p in s1_hat.iter_mut() {
            bad |= encoding::unpack_eta(p, &sk[off..off + eb], P::ETA);
            b.ntt(p);
            off += eb;
        }
        for p in s2_hat.iter_mut() {
            bad |= encoding::unpack_eta(p, &sk[off..off + eb], P::ETA);
            b.ntt(p);
            off += eb;
        }
        for p in t0_hat.iter_mut() {
            encoding::unpack_t0(p, &sk[off..off + 416]);
            b.ntt(p);
            off += 416;
        }
        // Validity of the encoding is returned as an error: public.
        if crate::ct::declassify(bad) != 0 {
            return Err(Error::InvalidEncoding { algorithm: P::NAME, reason: "s1 or s2 coefficient out of range" });
        }
        Ok(out)
    }

    /// The matching public key (recomputes t = A·s1 + s2; free for keys from [`from_seed`](Self::from_seed)
    /// apart from that computation).
    pub fn verifying_key(&self) -> VerifyingKey<P> {
        let b = self.backend;
        let mut t = Zeroizing::new(P::VecK::zero());
        let mut s2 = Zeroizing::new(P::VecK::zero());
        let (s1_hat, s2_hat, _, a) = self.x.parts();
        for (s, h) in s2.as_mut().iter_mut().zip(s2_hat) {
            Self::from_ntt(b, h, s);
        }
        compute_t::<P>(b, a, s1_hat, &s2, &mut *t);
        let mut pk = P::PkBytes::zero();
        let pkb = pk.as_mut();
        pkb[..32].copy_from_slice(&self.rho);
        for i in 0..P::K {
            let mut t1 = Poly::ZERO;
            for j in 0..N {
                t1.0[j] = poly::power2round((*t).as_ref()[i].0[j]).0;
            }
            encoding::pack_t1(&mut pkb[32 + 320 * i..32 + 320 * (i + 1)], &t1);
        }
        VerifyingKey::from_parts(pk, b)
    }

    /// The hash tr = H(pk, 64) stored in the private key.
    pub fn tr(&self) -> &[u8; 64] {
        &self.tr
    }

    /// Switches the arithmetic backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.backend = b;
        self
    }
}

impl<P: Params> VerifyingKey<P> {
    /// The key from its encoding and NTT(t1·2^13) (computes tr).
    fn with_t1_hat(bytes: P::PkBytes, t1_hat: P::VecK, b: Checked<Backend>) -> Self {
        let mut tr = [0u8; 64];
        let mut h = Shake256::with_backend(b.keccak());
        h.update(bytes.as_ref());
        h.finalize_into(&mut tr);
        VerifyingKey { bytes, tr, t1_hat, backend: b }
    }

    fn from_parts(bytes: P::PkBytes, b: Checked<Backend>) -> Self {
        let pk = bytes.as_ref();
        let mut t1_hat = P::VecK::zero();
        for i in 0..P::K {
            let p = &mut t1_hat.as_mut()[i];
            encoding::unpack_t1(p, &pk[32 + 320 * i..32 + 320 * (i + 1)]);
            for c in p.0.iter_mut() {
                *c <<= D;
            }
            b.ntt(p);
        }
        Self::with_t1_hat(bytes, t1_hat, b)
    }

    /// Loads the FIPS 204 public key encoding pkEncode(ρ, t1) (exactly `P::PK_LEN` bytes; any such string is
    /// a valid key).
    pub fn from_bytes(pk: &[u8]) -> Result<Self> {
        Self::from_bytes_with_backend(pk, Backend::detect())
    }

    /// As [`from_bytes`](Self::from_bytes) with a forced backend, for tests.
    #[doc(hidden)]
    pub fn from_bytes_with_backend(pk: &[u8], b: Checked<Backend>) -> Result<Self> {
        Error::check_length(P::NAME, "public key", P::PK_LEN, pk.len())?;
        let mut bytes = P::PkBytes::zero();
        bytes.as_mut().copy_from_slice(pk);
        Ok(Self::from_parts(bytes, b))
    }

    /// Switches the arithmetic backend (tests run each one).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.backend = b;
        self
    }

    /// The encoded public key.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoded public key, as an array.
    pub fn to_bytes(&self) -> P::PkBytes {
        self.bytes.clone()
    }

    /// tr = SHAKE256(pk, 64), the public-key hash that μ binds.
    pub fn tr(&self) -> &[u8; 64] {
        &self.tr
    }
}

impl<P: Params> Signature<P> {
    /// Parses an encoded signature: exactly `P::SIG_LEN` bytes ([`Error::InvalidLength`]) with a well-formed
    /// hint encoding ([`Error::InvalidEncoding`]); the norm of z is checked by verification.
    pub fn from_bytes(sig: &[u8]) -> Result<Self> {
        Error::check_length(P::NAME, "signature", P::SIG_LEN, sig.len())?;
        let mut h = P::VecK::zero();
        let off = P::CTILDE + 32 * P::Z_BITS * P::L;
        if encoding::unpack_hint(&mut h.as_mut()[..P::K], &sig[off..], P::OMEGA).is_none() {
            return Err(Error::InvalidEncoding { algorithm: P::NAME, reason: "malformed hint in signature" });
        }
        let mut bytes = P::SigBytes::zero();
        bytes.as_mut().copy_from_slice(sig);
        Ok(Signature { bytes })
    }

    /// The encoded signature.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.as_ref()
    }

    /// The encoded signature, as an array.
    pub fn to_bytes(&self) -> P::SigBytes {
        self.bytes.clone()
    }
}

impl<P: Params> AsRef<[u8]> for Signature<P> {
    fn as_ref(&self) -> &[u8] {
        self.bytes.as_ref()
    }
}
