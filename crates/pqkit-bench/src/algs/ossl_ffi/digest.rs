//! `EVP_MD`: a fetched digest and one context re-initialised per operation, through the `openssl` crate.

use super::e;
use openssl::md::Md;
use openssl::md_ctx::MdCtx;

/// A fetched `EVP_MD` and its `EVP_MD_CTX`. Re-initialising with the same fetched digest reuses the provider
/// context (a legacy `EVP_MD` would make OpenSSL fetch and allocate again on every re-init).
pub struct Digest {
    md: Md,
    ctx: MdCtx,
}

impl Digest {
    /// Fetches digest `name` (e.g. `SHA256`, `SHAKE128`) and creates its context.
    pub fn fetch(name: &str) -> Result<Self, String> {
        let md = Md::fetch(None, name, None).map_err(e)?;
        let mut ctx = MdCtx::new().map_err(e)?;
        ctx.digest_init(&md).map_err(e)?;
        Ok(Digest { md, ctx })
    }

    /// The digest's output length in bytes.
    pub fn size(&self) -> usize {
        self.md.size()
    }

    /// A fresh hash of `data` into `out` (exactly [`Self::size`] bytes).
    #[inline]
    pub fn digest(&mut self, data: &[u8], out: &mut [u8]) -> Result<(), String> {
        self.ctx.digest_init(&self.md).map_err(e)?;
        self.ctx.digest_update(data).map_err(e)?;
        self.ctx.digest_final(out).map_err(e)?;
        Ok(())
    }

    /// A fresh XOF output (SHAKE) of `data` filling `out` (`EVP_DigestFinalXOF`).
    #[inline]
    pub fn digest_xof(&mut self, data: &[u8], out: &mut [u8]) -> Result<(), String> {
        self.ctx.digest_init(&self.md).map_err(e)?;
        self.ctx.digest_update(data).map_err(e)?;
        self.ctx.digest_final_xof(out).map_err(e)
    }
}
