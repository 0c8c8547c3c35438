//! Verification: the pure, HashML-DSA and external-μ entry points of [`VerifyingKey`], ML-DSA.Verify_internal
//! (FIPS 204 Algorithm 8) with the matrix A expanded per call or once ([`ExpandedVerifyingKey`]).

use super::*;

impl<P: Params> VerifyingKey<P> {
    /// μ for `msg` and `ctx` under this key (see [`compute_mu`]).
    pub fn compute_mu(&self, msg: &[u8], ctx: &[u8]) -> Result<[u8; 64]> {
        check_ctx(P::NAME, ctx)?;
        compute_mu(&self.tr, msg, ctx)
    }

    /// ML-DSA.Verify (FIPS 204 Algorithm 3). `Ok(())` for a valid signature, else
    /// [`Error::AuthenticationFailed`] (or [`Error::InvalidLength`] for a context over 255 bytes).
    pub fn verify(&self, msg: &[u8], ctx: &[u8], sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.tr, msg, ctx)?;
        self.verify_mu(&mu, sig)
    }

    /// HashML-DSA.Verify (FIPS 204 Algorithm 5).
    pub fn verify_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash, sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.tr, msg, ctx, ph);
        self.verify_mu(&mu, sig)
    }

    /// Verifies a signature on an externally computed μ (ML-DSA.Verify_internal, FIPS 204 Algorithm 8).
    pub fn verify_mu(&self, mu: &[u8; 64], sig: &Signature<P>) -> Result<()> {
        if self.verify_core(mu, sig.bytes.as_ref()) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: P::NAME })
        }
    }

    /// The matrix A, expanded from ρ.
    fn expand_matrix(&self) -> P::Mat {
        let mut rho = [0u8; 32];
        rho.copy_from_slice(&self.bytes.as_ref()[..32]);
        let mut a = P::Mat::zero();
        sampling::expand_a(self.backend, &rho, a.as_mut(), P::L);
        a
    }

    /// This key with its matrix A expanded once, for verifying many signatures (see [`ExpandedVerifyingKey`]).
    pub fn expand(&self) -> ExpandedVerifyingKey<P> {
        #[cfg(feature = "alloc")]
        let a = alloc::boxed::Box::new(self.expand_matrix());
        #[cfg(not(feature = "alloc"))]
        let a = self.expand_matrix();
        ExpandedVerifyingKey { vk: self.clone(), a }
    }

    fn verify_core(&self, mu: &[u8; 64], s: &[u8]) -> bool {
        self.verify_with(mu, s, None)
    }

    /// Verify_internal with A given (`Some`, from an [`ExpandedVerifyingKey`]) or expanded here (`None`, after
    /// the cheap checks on z and h have passed).
    fn verify_with(&self, mu: &[u8; 64], s: &[u8], a: Option<&P::Mat>) -> bool {
        let b = self.backend;
        let ctilde = &s[..P::CTILDE];
        let zb = 32 * P::Z_BITS;
        let mut z = P::VecL::zero();
        let mut off = P::CTILDE;
        let bound = P::GAMMA1 - P::BETA;
        for p in &mut z.as_mut()[..P::L] {
            b.unpack_gamma1(p, &s[off..off + zb], P::GAMMA1);
            off += zb;
            if p.0.iter().any(|&c| c >= bound || c <= -bound) {
                return false;
            }
        }
        let mut h = P::VecK::zero();
        if encoding::unpack_hint(&mut h.as_mut()[..P::K], &s[off..], P::OMEGA).is_none() {
            return false;
        }
        let mut c = sampling::sample_in_ball(b, ctilde, P::TAU);
        b.ntt(&mut c);
        for p in &mut z.as_mut()[..P::L] {
            b.ntt(p);
        }
        let expanded;
        let a = match a {
            Some(a) => a.as_ref(),
            None => {
                expanded = self.expand_matrix();
                expanded.as_ref()
            }
        };
        let mut w1buf = [0u8; 8 * 192];
        let w1len = 32 * P::W1_BITS;
        let mut w = Poly::ZERO;
        let mut ct1 = Poly::ZERO;
        for i in 0..P::K {
            b.pointwise_acc(&mut w, &a[i * P::L..(i + 1) * P::L], &z.as_ref()[..P::L]);
            b.pointwise(&mut ct1, &c, &self.t1_hat.as_ref()[i]);
            for (x, y) in w.0.iter_mut().zip(ct1.0.iter()) {
                *x = poly::reduce32(*x - *y);
            }
            b.invntt(&mut w);
            let hi = &h.as_ref()[i];
            for t in 0..N {
                w.0[t] = poly::use_hint(hi.0[t] != 0, poly::freeze(w.0[t]), P::GAMMA2);
            }
            encoding::pack_w1(&mut w1buf[i * w1len..(i + 1) * w1len], &w, P::W1_BITS as u32);
        }
        let mut ct2 = [0u8; 64];
        let mut hs = Shake256::with_backend(b.keccak());
        hs.update(mu).update(&w1buf[..P::K * w1len]);
        hs.finalize_into(&mut ct2[..P::CTILDE]);
        crate::ct::eq(&ct2[..P::CTILDE], ctilde)
    }
}

impl<P: Params> ExpandedVerifyingKey<P> {
    /// A (behind its box with `alloc`).
    fn matrix(&self) -> &P::Mat {
        &self.a
    }

    /// The public key this was expanded from.
    pub fn verifying_key(&self) -> &VerifyingKey<P> {
        &self.vk
    }

    /// The encoded public key.
    pub fn as_bytes(&self) -> &[u8] {
        self.vk.as_bytes()
    }

    /// Switches the arithmetic backend (tests run each one; A does not depend on it).
    #[doc(hidden)]
    pub fn with_backend(mut self, b: Checked<Backend>) -> Self {
        self.vk.backend = b;
        self
    }

    /// ML-DSA.Verify (FIPS 204 Algorithm 3), as [`VerifyingKey::verify`] (same results and errors).
    pub fn verify(&self, msg: &[u8], ctx: &[u8], sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.vk.tr, msg, ctx)?;
        self.verify_mu(&mu, sig)
    }

    /// HashML-DSA.Verify (FIPS 204 Algorithm 5), as [`VerifyingKey::verify_prehash`].
    pub fn verify_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash, sig: &Signature<P>) -> Result<()> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.vk.tr, msg, ctx, ph);
        self.verify_mu(&mu, sig)
    }

    /// Verify_internal on an externally computed μ (FIPS 204 Algorithm 8), as [`VerifyingKey::verify_mu`].
    pub fn verify_mu(&self, mu: &[u8; 64], sig: &Signature<P>) -> Result<()> {
        if self.vk.verify_with(mu, sig.bytes.as_ref(), Some(self.matrix())) {
            Ok(())
        } else {
            Err(Error::AuthenticationFailed { algorithm: P::NAME })
        }
    }
}
