//! Signing: the pure, HashML-DSA and external-μ entry points of [`SigningKey`] (hedged or deterministic), the
//! rejection loop of ML-DSA.Sign_internal (FIPS 204 Algorithm 7) and the signer's working vectors, which are
//! wiped before signing returns.

use super::*;

impl<P: Params> SigningKey<P> {
    /// Hedged ML-DSA.Sign (FIPS 204 Algorithm 2) with 32 bytes of fresh OS randomness. `ctx` is at most 255
    /// bytes (else [`Error::InvalidLength`]).
    #[cfg(feature = "std")]
    pub fn sign(&self, msg: &[u8], ctx: &[u8]) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_internal_with_rnd(msg, ctx, &rnd)
    }

    /// Deterministic ML-DSA.Sign (rnd = 0^32): the same key, message and context always give the same
    /// signature.
    pub fn sign_deterministic(&self, msg: &[u8], ctx: &[u8]) -> Result<Signature<P>> {
        self.sign_internal_with_rnd(msg, ctx, &[0; 32])
    }

    /// ML-DSA.Sign with a caller-chosen `rnd` (for known-answer tests).
    #[doc(hidden)]
    pub fn sign_internal_with_rnd(&self, msg: &[u8], ctx: &[u8], rnd: &[u8; 32]) -> Result<Signature<P>> {
        check_ctx(P::NAME, ctx)?;
        let mu = compute_mu(&self.tr, msg, ctx)?;
        self.sign_mu_with_rnd(&mu, rnd)
    }

    /// Hedged HashML-DSA.Sign (FIPS 204 Algorithm 4): signs PH(msg) with domain separation from pure ML-DSA.
    #[cfg(feature = "std")]
    pub fn sign_prehash(&self, msg: &[u8], ctx: &[u8], ph: PreHash) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_prehash_with_rnd(msg, ctx, ph, &rnd)
    }

    /// HashML-DSA.Sign with a caller-chosen `rnd` (all zero for the deterministic variant).
    #[doc(hidden)]
    pub fn sign_prehash_with_rnd(&self, msg: &[u8], ctx: &[u8], ph: PreHash, rnd: &[u8; 32]) -> Result<Signature<P>> {
        check_ctx(P::NAME, ctx)?;
        let mu = prehash_mu(&self.tr, msg, ctx, ph);
        self.sign_mu_with_rnd(&mu, rnd)
    }

    /// Hedged signing of an externally computed μ (see [`compute_mu`]); equals [`sign`](Self::sign) when
    /// μ = `compute_mu(sk.tr(), msg, ctx)`.
    #[cfg(feature = "std")]
    pub fn sign_mu(&self, mu: &[u8; 64]) -> Result<Signature<P>> {
        let rnd = fresh_rnd()?;
        self.sign_mu_with_rnd(mu, &rnd)
    }

    /// ML-DSA.Sign_internal (FIPS 204 Algorithm 7) on μ with a caller-chosen `rnd`.
    #[doc(hidden)]
    pub fn sign_mu_with_rnd(&self, mu: &[u8; 64], rnd: &[u8; 32]) -> Result<Signature<P>> {
        let b = self.backend;
        let mut rho2 = Zeroizing::new([0u8; 64]);
        {
            let mut h = Shake256::with_backend(b.keccak());
            h.update(&self.key).update(rnd).update(mu);
            h.finalize_into(&mut rho2[..]);
        }
        let (s1_hat, s2_hat, t0_hat, a) = self.x.parts();
        let mut st = SignState::<P> {
            y: P::VecL::zero(),
            y_hat: P::VecL::zero(),
            z: P::VecL::zero(),
            w: P::VecK::zero(),
            w1: P::VecK::zero(),
            tmp: Poly::ZERO,
            backend: b,
        };
        let mut w1buf = [0u8; 8 * 192];
        let w1len = 32 * P::W1_BITS;
        let mut scratch = sampling::MaskScratch::new(b);
        let mut kappa: u32 = 0;
        'attempt: loop {
            if kappa > u32::from(u16::MAX) - P::L as u32 {
                return Err(Error::InvalidParameter { algorithm: P::NAME, reason: "signing did not terminate" });
            }
            sampling::expand_mask(b, &rho2, kappa as u16, &mut st.y.as_mut()[..P::L], P::GAMMA1, &mut scratch);
            kappa += P::L as u32;
            st.y_hat = st.y.clone();
            for p in &mut st.y_hat.as_mut()[..P::L] {
                b.ntt(p);
            }
            // w = A·y, w1 = HighBits(w).
            for i in 0..P::K {
                let wi = &mut st.w.as_mut()[i];
                b.pointwise_acc(wi, &a[i * P::L..(i + 1) * P::L], &st.y_hat.as_ref()[..P::L]);
                b.invntt(wi);
                let w1i = &mut st.w1.as_mut()[i];
                b.w_decompose(wi, w1i, P::GAMMA2);
                encoding::pack_w1(&mut w1buf[i * w1len..(i + 1) * w1len], w1i, P::W1_BITS as u32);
            }
            let mut ctilde = [0u8; 64];
            {
                let mut h = Shake256::with_backend(b.keccak());
                h.update(mu).update(&w1buf[..P::K * w1len]);
                h.finalize_into(&mut ctilde[..P::CTILDE]);
            }
            let mut c = sampling::sample_in_ball(b, &ctilde[..P::CTILDE], P::TAU);
            b.ntt(&mut c);

            // The two bound checks, r first: each polynomial is checked as soon as it is computed and the
            // attempt abandoned at the first one out of bounds, so a rejected attempt skips the remaining
            // products and inverse NTTs. The order of the checks does not change which attempt is accepted
            // (it must pass both); r's goes first because it rejects more often than z's in every parameter
            // set (ML-DSA-65: r passes with probability ≈ 0.32 over k = 6 polynomials, z ≈ 0.62 over l = 5).
            // What this makes public beyond the rejection decision is which check and which polynomial
            // failed. As in the reference implementation (whose norm checks return at the first polynomial
            // out of bounds and leave even the coefficient observable), that is independent of the secret:
            // each coefficient is out of bounds with a probability that does not depend on c·s1 or c·s2
            // (|.| ≤ β, added to y, respectively subtracted from w, whose low bits are uniform), and the
            // values themselves stay secret (each polynomial's check is constant time).
            //
            // r = w − c·s2, ‖LowBits(r)‖∞ < γ2 − β; keep r in w and HighBits(r) in w1.
            for (i, s2i) in s2_hat.iter().enumerate() {
                b.pointwise(&mut st.tmp, &c, s2i);
                b.invntt(&mut st.tmp);
                let (wi, w1i) = (&mut st.w.as_mut()[i], &mut st.w1.as_mut()[i]);
                let bad = b.r_finish(wi, w1i, &st.tmp, P::GAMMA2, P::GAMMA2 - P::BETA);
                // Public, see above.
                if crate::ct::declassify(bad) != 0 {
                    continue 'attempt;
                }
            }
            // z = y + c·s1, ‖z‖∞ < γ1 − β.
            for (j, s1j) in s1_hat.iter().enumerate() {
                let zj = &mut st.z.as_mut()[j];
                b.pointwise(zj, &c, s1j);
                b.invntt(zj);
                let bad = b.z_finish(zj, &st.y.as_ref()[j], P::GAMMA1 - P::BETA);
                // Public, see above.
                if crate::ct::declassify(bad) != 0 {
                    continue 'attempt;
                }
            }
            let mut bad = 0u32;
            // ‖c·t0‖∞ < γ2; h = MakeHint(−c·t0, r + c·t0) = [HighBits(r + c·t0) ≠ HighBits(r)], at most ω ones.
            let mut ones = 0u32;
            for (i, t0i) in t0_hat.iter().enumerate() {
                b.pointwise(&mut st.tmp, &c, t0i);
                b.invntt(&mut st.tmp);
                let (bad_i, ones_i) = b.hint(&st.tmp, &st.w.as_ref()[i], &mut st.w1.as_mut()[i], P::GAMMA2);
                bad |= bad_i;
                ones += ones_i;
            }
            // As above; the hint weight of an accepted signature is in the signature itself.
            if crate::ct::declassify(bad) != 0 || crate::ct::declassify(ones) as usize > P::OMEGA {
                continue;
            }
            // Accepted: encode (c̃, z, h).
            let mut sig = P::SigBytes::zero();
            {
                let s = sig.as_mut();
                s[..P::CTILDE].copy_from_slice(&ctilde[..P::CTILDE]);
                let zb = 32 * P::Z_BITS;
                let mut off = P::CTILDE;
                for p in &st.z.as_ref()[..P::L] {
                    encoding::pack_gamma1(&mut s[off..off + zb], p, P::GAMMA1);
                    off += zb;
                }
                encoding::pack_hint(&mut s[off..], k_of::<P>(&st.w1), P::OMEGA);
            }
            return Ok(Signature { bytes: sig });
        }
    }
}

/// The signer's working vectors, wiped on drop.
struct SignState<P: Params> {
    y: P::VecL,
    y_hat: P::VecL,
    z: P::VecL,
    w: P::VecK,
    w1: P::VecK,
    tmp: Poly,
    /// Wipes the vectors.
    backend: Checked<Backend>,
}

impl<P: Params> Drop for SignState<P> {
    fn drop(&mut self) {
        self.backend.wipe(self.y.as_mut());
        self.backend.wipe(self.y_hat.as_mut());
        self.backend.wipe(self.z.as_mut());
        self.backend.wipe(self.w.as_mut());
        self.backend.wipe(self.w1.as_mut());
        self.tmp.zeroize();
    }
}

#[cfg(feature = "std")]
fn fresh_rnd() -> Result<Zeroizing<[u8; 32]>> {
    let mut rnd = Zeroizing::new([0u8; 32]);
    crate::rng::fill_os(&mut rnd[..])?;
    Ok(rnd)
}
