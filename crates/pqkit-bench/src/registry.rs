//! What the harness measures: algorithms, each with its candidates (pqkit and the peers).
//!
//! An [`Algorithm`] is one operation of one algorithm ("ChaCha20-Poly1305" / "seal") at a list of sizes. Each
//! [`Candidate`] is one implementation of it: a `setup` closure that prepares everything outside the timed
//! region (keys scheduled, contexts built) and returns an [`Op`], the operation the harness both checks and
//! times.
//!
//! ## The operation contract
//! `op.run(data, out)`: `data` holds the input (the harness fills it with the input bytes before the
//! agreement check; during timing it holds whatever the previous call left, which costs the same). The op
//! may transform `data` in place, and writes any further output into `out` (it must `clear()` `out` first if
//! it appends; `out` comes with spare capacity so that appending does not allocate). The **observable
//! output**, compared across candidates before timing, is `data` after the call followed by `out`.

/// The reports an algorithm appears in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Report {
    /// (a) pqkit against each peer, per algorithm and size.
    A,
    /// (b) the 512-bit cipher comparison: ChaCha20, Kusumi512, Threefish-512-CTR in three modes.
    B,
    /// (c) ChaCha20 cipher against the ChaCha20 RNG, in TSC ticks per byte.
    C,
    /// (d) post-quantum operations per second.
    D,
}

/// Bulk (sized input, bytes per second), public-key or fixed-size (operations per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Throughput over a range of input sizes.
    Bulk,
    /// Operations per second; `size_bytes` is the message length (0 when there is none).
    PublicKey,
    /// A fixed-size symmetric operation (a KDF) in operations per second: `size_bytes` is the input length (the
    /// IKM or password), but no throughput is derived from it. Timed in calibrated batches like bulk operations.
    Fixed,
}

/// One prepared operation. Any `FnMut(&mut [u8], &mut Vec<u8>) -> Result<(), String> + Send` is an `Op`.
pub trait Op: Send {
    /// Runs the operation once (see the module docs for the contract).
    fn run(&mut self, data: &mut [u8], out: &mut Vec<u8>) -> Result<(), String>;
}

impl<F: FnMut(&mut [u8], &mut Vec<u8>) -> Result<(), String> + Send> Op for F {
    #[inline]
    fn run(&mut self, data: &mut [u8], out: &mut Vec<u8>) -> Result<(), String> {
        self(data, out)
    }
}

/// Prepares an [`Op`] for one input size, outside timing.
pub type Setup = Box<dyn Fn(usize) -> Result<Box<dyn Op>, String> + Send + Sync>;

/// How candidates are checked against each other before timing.
pub enum Check {
    /// Every candidate's observable output on the same input must be byte-identical.
    Equal,
    /// Randomized schemes: a custom check (e.g. a cross round trip between every pair of implementations).
    /// Returns a description of the first disagreement.
    Custom(Box<dyn Fn() -> Result<(), String> + Send + Sync>),
}

/// One implementation of an algorithm.
pub struct Candidate {
    /// `pqkit`, `openssl`, `aws-lc-rs`, `ring`, `rustcrypto` or `libcrux`.
    pub implementation: &'static str,
    /// Version of that implementation (e.g. `OpenSSL 3.6.0 1 Oct 2025`, `chacha20 0.10.2`).
    pub version: String,
    /// Builds the prepared operation for an input size.
    pub setup: Setup,
}

impl Candidate {
    /// A candidate whose version is looked up from the build-time Cargo.lock data (see [`crate::env`]).
    pub fn new(
        implementation: &'static str,
        version: String,
        setup: impl Fn(usize) -> Result<Box<dyn Op>, String> + Send + Sync + 'static,
    ) -> Self {
        Candidate { implementation, version, setup: Box::new(setup) }
    }
}

/// The number of keys a key-generation row is timed over, when the time of one key generation varies from key to
/// key (RSA: the number of candidates tried before a prime is found). Such a row takes exactly this many
/// samples per implementation, one key each, interleaved and never cut short by the time budget, and the report
/// shows their spread next to the median.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyCount {
    /// Keys per implementation under `--full`.
    pub full: usize,
    /// Keys per implementation under `--quick` (fewer only where `full` would take minutes).
    pub quick: usize,
}

/// One operation of one algorithm, with its candidates.
pub struct Algorithm {
    /// Algorithm name, e.g. `ChaCha20-Poly1305`.
    pub name: String,
    /// Operation, e.g. `seal`, `apply_keystream`, `digest`, `keygen`, `one-shot`.
    pub operation: String,
    /// Bulk, public-key or fixed-size.
    pub kind: Kind,
    /// Reports this algorithm appears in.
    pub reports: Vec<Report>,
    /// Input sizes in bytes.
    pub sizes: Vec<usize>,
    /// Whether multi-thread scaling is measured (bulk AEAD and hash).
    pub scaling: bool,
    /// Agreement check.
    pub check: Check,
    /// Implementations.
    pub candidates: Vec<Candidate>,
    /// A fixed key count for key generation that varies per key (see [`KeyCount`]); `None` for every other row.
    pub keys: Option<KeyCount>,
}

impl Algorithm {
    /// A bulk algorithm at the standard sizes (64 B .. 10 MiB), in report (a), checked for equal output.
    pub fn bulk(name: &str, operation: &str) -> Self {
        Algorithm {
            name: name.into(),
            operation: operation.into(),
            kind: Kind::Bulk,
            reports: vec![Report::A],
            sizes: BULK_SIZES.to_vec(),
            scaling: false,
            check: Check::Equal,
            candidates: Vec::new(),
            keys: None,
        }
    }

    /// A public-key operation (report (d)), with a custom agreement check.
    pub fn public_key(name: &str, operation: &str, msg_len: usize, check: Check) -> Self {
        Algorithm {
            name: name.into(),
            operation: operation.into(),
            kind: Kind::PublicKey,
            reports: vec![Report::A, Report::D],
            sizes: vec![msg_len],
            scaling: false,
            check,
            candidates: Vec::new(),
            keys: None,
        }
    }

    /// A fixed-size operation (report (a), ops/s) on an `input_len`-byte input, checked for equal output.
    pub fn fixed(name: &str, operation: &str, input_len: usize) -> Self {
        Algorithm {
            name: name.into(),
            operation: operation.into(),
            kind: Kind::Fixed,
            reports: vec![Report::A],
            sizes: vec![input_len],
            scaling: false,
            check: Check::Equal,
            candidates: Vec::new(),
            keys: None,
        }
    }

    /// Sets the reports.
    pub fn reports(mut self, r: &[Report]) -> Self {
        self.reports = r.to_vec();
        self
    }

    /// Sets the sizes.
    pub fn sizes(mut self, s: &[usize]) -> Self {
        self.sizes = s.to_vec();
        self
    }

    /// Times the row over a fixed number of keys per implementation (see [`KeyCount`]).
    pub fn keys(mut self, full: usize, quick: usize) -> Self {
        self.keys = Some(KeyCount { full, quick });
        self
    }

    /// Marks the algorithm for multi-thread scaling.
    pub fn scaling(mut self) -> Self {
        self.scaling = true;
        self
    }

    /// Adds a candidate.
    pub fn with(mut self, c: Candidate) -> Self {
        self.candidates.push(c);
        self
    }

    /// `name/operation`, the key `--only` matches against.
    pub fn id(&self) -> String {
        format!("{}/{}", self.name, self.operation)
    }
}

/// 64 B, 1 KiB, 16 KiB, 1 MiB, 10 MiB.
pub const BULK_SIZES: [usize; 5] = [64, 1024, 16 * 1024, 1024 * 1024, 10 * 1024 * 1024];
