//! The measurement loop: agreement check, warm-up, interleaved sampling, allocation counting, and
//! multi-thread scaling.

use crate::aligned::AlignedBuf;
use crate::alloc_count;
use crate::env::{rdtsc, thread_cpu_ns};
use crate::registry::{Algorithm, Check, KeyCount, Kind, Op, Report};
use crate::stats::{self, Summary};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// How long and how often to measure.
#[derive(Clone, Debug)]
pub struct Timing {
    /// Samples per (candidate, size), at most.
    pub samples: usize,
    /// Samples per (candidate, size), at least (the time budget may cut the count down to this).
    pub min_samples: usize,
    /// Target duration of one sample; the iteration count per sample is calibrated to it.
    pub sample_target: Duration,
    /// Warm-up time per candidate and size.
    pub warmup: Duration,
    /// Time budget for all candidates of one (algorithm, size), sampling only.
    pub budget: Duration,
    /// Whether key-generation rows with a fixed key count ([`KeyCount`]) take their `quick` count.
    pub quick_keys: bool,
}

impl Timing {
    /// `--quick`: the whole registry in under three minutes on a busy 2-core machine.
    pub fn quick() -> Self {
        Timing {
            samples: 31,
            min_samples: 11,
            sample_target: Duration::from_micros(1500),
            warmup: Duration::from_millis(15),
            budget: Duration::from_millis(600),
            quick_keys: true,
        }
    }
    /// `--full`: more and longer samples.
    pub fn full() -> Self {
        Timing {
            samples: 101,
            min_samples: 21,
            sample_target: Duration::from_millis(5),
            warmup: Duration::from_millis(150),
            budget: Duration::from_secs(6),
            quick_keys: false,
        }
    }
    /// A tiny configuration for tests.
    pub fn tiny() -> Self {
        Timing {
            samples: 7,
            min_samples: 5,
            sample_target: Duration::from_micros(100),
            warmup: Duration::from_millis(1),
            budget: Duration::from_millis(20),
            quick_keys: true,
        }
    }
}

/// One timed result.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Algorithm name.
    pub algorithm: String,
    /// Operation.
    pub operation: String,
    /// Implementation name.
    pub implementation: String,
    /// Implementation version.
    pub implementation_version: String,
    /// Input size in bytes (per buffer, for multi-thread runs).
    pub size_bytes: usize,
    /// Threads (1 for the single-threaded measurements).
    pub threads: usize,
    /// Time per operation, ns (for multi-thread runs: wall time divided by all operations of all threads).
    pub ns: Summary,
    /// Median TSC ticks per operation (single-thread runs only; 0 otherwise).
    pub tsc_per_op: f64,
    /// Allocation calls per operation.
    pub allocs_per_op: f64,
    /// Allocated bytes per operation.
    pub alloc_bytes_per_op: f64,
    /// Bulk, public-key or fixed-size.
    pub kind: Kind,
    /// Reports this belongs to.
    pub reports: Vec<Report>,
    /// The row's fixed key count, for key generation timed over many keys (see [`KeyCount`]): every sample is
    /// one key, and the report shows the spread (`ns.p10`..`ns.p90`, `ns.min`..`ns.max`).
    pub keys: Option<KeyCount>,
}

impl Measurement {
    /// Whether bytes/s and TSC/byte mean something: an input size, and not a fixed-size KDF operation.
    pub fn has_throughput(&self) -> bool {
        self.size_bytes != 0 && self.kind != Kind::Fixed
    }
    /// Bytes per second (0 when the operation has no throughput, see [`Self::has_throughput`]).
    pub fn bytes_per_sec(&self) -> f64 {
        if !self.has_throughput() { 0.0 } else { self.size_bytes as f64 * 1e9 / self.ns.median }
    }
    /// MB/s (10^6 bytes).
    pub fn mb_per_sec(&self) -> f64 {
        self.bytes_per_sec() / 1e6
    }
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        1e9 / self.ns.median
    }
    /// TSC ticks per byte (`None` without an input size or for multi-thread runs).
    pub fn tsc_per_byte(&self) -> Option<f64> {
        if !self.has_throughput() || self.tsc_per_op == 0.0 {
            None
        } else {
            Some(self.tsc_per_op / self.size_bytes as f64)
        }
    }
    /// The key `--compare` matches records on.
    pub fn key(&self) -> String {
        format!("{}|{}|{}|{}|{}", self.algorithm, self.operation, self.implementation, self.size_bytes, self.threads)
    }
}

/// An agreement failure or an operation that failed; never timed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunError {
    /// Algorithm name.
    pub algorithm: String,
    /// Operation.
    pub operation: String,
    /// Input size in bytes.
    pub size_bytes: usize,
    /// The implementations concerned.
    pub implementations: Vec<String>,
    /// What went wrong.
    pub message: String,
}

/// Wall-clock guard of the sampling loop: the sample count planned from warm-up estimates is cut short when
/// a loaded machine makes rounds slower than estimated — at the budget once the minimum count is reached, and
/// at three times the budget once 5 rounds are in (the hard floor of the statistics).
fn over_budget(started: Instant, rounds_done: usize, timing: &Timing) -> bool {
    let t = started.elapsed();
    (rounds_done >= timing.min_samples && t > timing.budget)
        || (rounds_done >= timing.min_samples.min(5) && t > timing.budget * 3)
}

/// Deterministic pseudo-random input bytes (SplitMix64 from a fixed seed mixed with the size).
pub fn input_bytes(size: usize) -> Vec<u8> {
    let mut s = 0x5eed_0f9c_4b17_u64 ^ (size as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut v = Vec::with_capacity(size + 8);
    while v.len() < size {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        v.extend_from_slice(&z.to_le_bytes());
    }
    v.truncate(size);
    v
}

/// Spare room in `out` so that ops appending a tag, digest or ciphertext never reallocate.
fn out_capacity(size: usize) -> usize {
    size + 8192
}

/// One candidate's prepared operation with its own buffers. `data` is 64-byte aligned for every candidate alike
/// (see [`crate::aligned`]); `out` only ever receives small results copied out of the implementation (tags,
/// digests, keys) or memory an operation allocates itself (report (b)'s one-shot and stream modes).
struct Slot {
    op: Box<dyn Op>,
    data: AlignedBuf,
    out: Vec<u8>,
}

impl Slot {
    fn new(op: Box<dyn Op>, input: &[u8], size: usize) -> Self {
        Slot { op, data: AlignedBuf::from_slice(input), out: Vec::with_capacity(out_capacity(size)) }
    }
}

impl Slot {
    #[inline]
    fn run(&mut self) -> Result<(), String> {
        self.op.run(black_box(&mut *self.data), &mut self.out)?;
        black_box(&self.out);
        Ok(())
    }
}

/// Runs the agreement check for one size. Returns the indices of the candidates that may be timed, plus
/// errors for those that may not.
pub fn check_agreement(alg: &Algorithm, size: usize, input: &[u8]) -> (Vec<usize>, Vec<RunError>) {
    let err = |imps: Vec<String>, message: String| RunError {
        algorithm: alg.name.clone(),
        operation: alg.operation.clone(),
        size_bytes: size,
        implementations: imps,
        message,
    };
    let mut errors = Vec::new();
    // Every candidate must set up and run; failures are errors on their own.
    let mut outputs: Vec<(usize, Vec<u8>)> = Vec::new();
    for (i, c) in alg.candidates.iter().enumerate() {
        let res = (c.setup)(size).and_then(|op| {
            let mut slot = Slot::new(op, input, size);
            slot.op.run(&mut slot.data, &mut slot.out)?;
            let mut seen = slot.data.to_vec();
            seen.extend_from_slice(&slot.out);
            Ok(seen)
        });
        match res {
            Ok(o) => outputs.push((i, o)),
            Err(e) => errors.push(err(vec![c.implementation.into()], format!("failed to run: {e}"))),
        }
    }
    match &alg.check {
        Check::Custom(f) => {
            if let Err(e) = f() {
                let imps = alg.candidates.iter().map(|c| c.implementation.to_string()).collect();
                errors.push(err(imps, format!("agreement check failed: {e}")));
                return (Vec::new(), errors);
            }
            (outputs.into_iter().map(|(i, _)| i).collect(), errors)
        }
        Check::Equal => {
            // Group candidates by identical output.
            let mut groups: Vec<(Vec<u8>, Vec<usize>)> = Vec::new();
            for (i, o) in outputs {
                match groups.iter_mut().find(|(g, _)| *g == o) {
                    Some((_, members)) => members.push(i),
                    None => groups.push((o, vec![i])),
                }
            }
            if groups.len() <= 1 {
                return (groups.pop().map(|(_, m)| m).unwrap_or_default(), errors);
            }
            groups.sort_by_key(|(_, m)| std::cmp::Reverse(m.len()));
            let total: usize = groups.iter().map(|(_, m)| m.len()).sum();
            let name = |i: usize| alg.candidates[i].implementation.to_string();
            // A strict majority (of at least two) that agrees is timed; every dissenter is an error.
            let majority = groups[0].1.len() >= 2 && groups[0].1.len() * 2 > total;
            let describe = |members: &[usize], out: &[u8]| {
                let first_diff = out.iter().zip(groups[0].0.iter()).position(|(a, b)| a != b);
                format!(
                    "output of [{}] differs from [{}] ({} vs {} bytes, first difference at byte {})",
                    members.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", "),
                    groups[0].1.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", "),
                    out.len(),
                    groups[0].0.len(),
                    first_diff.map(|p| p.to_string()).unwrap_or_else(|| "end".into()),
                )
            };
            for (out, members) in &groups[1..] {
                errors.push(err(members.iter().map(|&i| name(i)).collect(), describe(members, out)));
            }
            if majority {
                (groups[0].1.clone(), errors)
            } else {
                let all: Vec<String> = groups.iter().flat_map(|(_, m)| m.iter().map(|&i| name(i))).collect();
                errors.push(err(all, "no majority of implementations agrees; nothing timed at this size".into()));
                (Vec::new(), errors)
            }
        }
    }
}

/// Measures the given candidates of `alg` at `size`, interleaved. Returns measurements and run errors.
pub fn measure(
    alg: &Algorithm,
    size: usize,
    input: &[u8],
    which: &[usize],
    timing: &Timing,
) -> (Vec<Measurement>, Vec<RunError>) {
    let mut errors = Vec::new();
    let mut slots: Vec<(usize, Slot)> = Vec::new();
    for &i in which {
        match (alg.candidates[i].setup)(size) {
            Ok(op) => slots.push((i, Slot::new(op, input, size))),
            Err(e) => errors.push(RunError {
                algorithm: alg.name.clone(),
                operation: alg.operation.clone(),
                size_bytes: size,
                implementations: vec![alg.candidates[i].implementation.into()],
                message: format!("setup failed: {e}"),
            }),
        }
    }
    // Warm up each candidate and estimate its time per operation.
    let mut per_op = vec![0f64; slots.len()];
    let mut failed = vec![None; slots.len()];
    for (k, (_, slot)) in slots.iter_mut().enumerate() {
        let t0 = Instant::now();
        let mut n = 0u64;
        while n == 0 || t0.elapsed() < timing.warmup {
            if let Err(e) = slot.run() {
                failed[k] = Some(e);
                break;
            }
            n += 1;
        }
        per_op[k] = t0.elapsed().as_nanos() as f64 / n.max(1) as f64;
    }
    // Allocation counts from separate, untimed runs.
    let mut allocs = vec![(0f64, 0f64); slots.len()];
    for (k, (_, slot)) in slots.iter_mut().enumerate() {
        if failed[k].is_some() {
            continue;
        }
        let runs: u64 = if per_op[k] > 1e6 { 1 } else { 4 };
        let ((calls, bytes), res) = alloc_count::count(|| (0..runs).try_for_each(|_| slot.run()));
        if let Err(e) = res {
            failed[k] = Some(e);
        }
        allocs[k] = (calls as f64 / runs as f64, bytes as f64 / runs as f64);
    }
    // Public-key operations are timed one operation per sample, with ten times the samples: averaging several
    // signatures per sample would hide the long tail of ML-DSA's rejection loop, which report (d) must show.
    let single = alg.kind == Kind::PublicKey;
    let iters: Vec<u64> = per_op
        .iter()
        .map(
            |&t| if single { 1 } else { ((timing.sample_target.as_nanos() as f64 / t.max(1.0)).round() as u64).max(1) },
        )
        .collect();
    let max_samples = if single { timing.samples * 10 } else { timing.samples };
    let round_ns: f64 = per_op.iter().zip(&iters).map(|(t, &n)| t * n as f64).sum();
    // Key generation that varies per key: exactly the row's key count, whatever the budget.
    let fixed = alg.keys.map(|k| if timing.quick_keys { k.quick } else { k.full });
    let n_samples = fixed.unwrap_or_else(|| {
        ((timing.budget.as_nanos() as f64 / round_ns.max(1.0)) as usize).clamp(timing.min_samples, max_samples)
    });
    let mut ns_samples = vec![Vec::with_capacity(n_samples); slots.len()];
    let mut tsc_samples = vec![Vec::with_capacity(n_samples); slots.len()];
    // Interleave: A B C A B C ... so that drift of the machine affects every candidate alike.
    let started = Instant::now();
    for round in 0..n_samples {
        if fixed.is_none() && over_budget(started, round, timing) {
            break;
        }
        for (k, (_, slot)) in slots.iter_mut().enumerate() {
            if failed[k].is_some() {
                continue;
            }
            let n = iters[k];
            let w0 = Instant::now();
            let cpu0 = thread_cpu_ns();
            let c0 = rdtsc();
            for _ in 0..n {
                if let Err(e) = slot.run() {
                    failed[k] = Some(e);
                    break;
                }
            }
            let c1 = rdtsc();
            let cpu = thread_cpu_ns().saturating_sub(cpu0) as f64;
            let wall = w0.elapsed().as_nanos() as f64;
            // Time on this CPU only (see `thread_cpu_ns`). The TSC runs on while the thread is descheduled, so its
            // ticks are scaled by the same on-CPU fraction of the sample.
            let on_cpu = if wall > 0.0 { (cpu / wall).min(1.0) } else { 1.0 };
            ns_samples[k].push(cpu / n as f64);
            tsc_samples[k].push(c1.wrapping_sub(c0) as f64 * on_cpu / n as f64);
        }
    }
    let mut out = Vec::new();
    for (k, (i, _)) in slots.iter().enumerate() {
        let c = &alg.candidates[*i];
        if let Some(e) = &failed[k] {
            errors.push(RunError {
                algorithm: alg.name.clone(),
                operation: alg.operation.clone(),
                size_bytes: size,
                implementations: vec![c.implementation.into()],
                message: format!("failed while timing: {e}"),
            });
            continue;
        }
        out.push(Measurement {
            algorithm: alg.name.clone(),
            operation: alg.operation.clone(),
            implementation: c.implementation.into(),
            implementation_version: c.version.clone(),
            size_bytes: size,
            threads: 1,
            ns: stats::summarize(&ns_samples[k]),
            tsc_per_op: stats::median(&tsc_samples[k]),
            allocs_per_op: allocs[k].0,
            alloc_bytes_per_op: allocs[k].1,
            kind: alg.kind,
            reports: alg.reports.clone(),
            keys: alg.keys,
        });
    }
    (out, errors)
}

/// Multi-thread scaling: `threads` independent buffers of `size` bytes processed in parallel with rayon.
/// The time per operation is wall time divided by all operations, so bytes/s is the total throughput.
pub fn measure_parallel(
    alg: &Algorithm,
    size: usize,
    input: &[u8],
    which: &[usize],
    threads: usize,
    timing: &Timing,
) -> (Vec<Measurement>, Vec<RunError>) {
    use rayon::prelude::*;
    let mut errors = Vec::new();
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(e) => {
            errors.push(RunError {
                algorithm: alg.name.clone(),
                operation: alg.operation.clone(),
                size_bytes: size,
                implementations: vec![],
                message: format!("cannot build a {threads}-thread pool: {e}"),
            });
            return (Vec::new(), errors);
        }
    };
    let mut sets: Vec<(usize, Vec<Slot>)> = Vec::new();
    'cands: for &i in which {
        let mut v = Vec::new();
        for _ in 0..threads {
            match (alg.candidates[i].setup)(size) {
                Ok(op) => v.push(Slot::new(op, input, size)),
                Err(e) => {
                    errors.push(RunError {
                        algorithm: alg.name.clone(),
                        operation: alg.operation.clone(),
                        size_bytes: size,
                        implementations: vec![alg.candidates[i].implementation.into()],
                        message: format!("setup failed: {e}"),
                    });
                    continue 'cands;
                }
            }
        }
        sets.push((i, v));
    }
    let run_round = |slots: &mut Vec<Slot>, iters: u64| -> Result<f64, String> {
        let t0 = Instant::now();
        pool.install(|| slots.par_iter_mut().with_max_len(1).try_for_each(|s| (0..iters).try_for_each(|_| s.run())))?;
        Ok(t0.elapsed().as_nanos() as f64)
    };
    let mut iters = vec![1u64; sets.len()];
    let mut failed: Vec<Option<String>> = vec![None; sets.len()];
    for (k, (_, slots)) in sets.iter_mut().enumerate() {
        let t0 = Instant::now();
        let mut rounds = 0u64;
        while rounds == 0 || t0.elapsed() < timing.warmup {
            if let Err(e) = run_round(slots, 1) {
                failed[k] = Some(e);
                break;
            }
            rounds += 1;
        }
        let per_round = t0.elapsed().as_nanos() as f64 / rounds as f64;
        iters[k] = ((timing.sample_target.as_nanos() as f64 / per_round).round() as u64).max(1);
    }
    // Allocations per operation, counted on this thread over untimed runs of one worker's op.
    let mut allocs = vec![(f64::NAN, f64::NAN); sets.len()];
    for (k, (_, slots)) in sets.iter_mut().enumerate() {
        if failed[k].is_none() {
            let ((calls, bytes), res) = alloc_count::count(|| (0..2).try_for_each(|_| slots[0].run()));
            match res {
                Ok(()) => allocs[k] = (calls as f64 / 2.0, bytes as f64 / 2.0),
                Err(e) => failed[k] = Some(e),
            }
        }
    }
    let round_ns: f64 = timing.sample_target.as_nanos() as f64 * sets.len() as f64;
    let n_samples =
        ((timing.budget.as_nanos() as f64 / round_ns.max(1.0)) as usize).clamp(timing.min_samples, timing.samples);
    let mut samples = vec![Vec::new(); sets.len()];
    let started = Instant::now();
    for round in 0..n_samples {
        if over_budget(started, round, timing) {
            break;
        }
        for (k, (_, slots)) in sets.iter_mut().enumerate() {
            if failed[k].is_some() {
                continue;
            }
            match run_round(slots, iters[k]) {
                Ok(ns) => samples[k].push(ns / (iters[k] * threads as u64) as f64),
                Err(e) => failed[k] = Some(e),
            }
        }
    }
    let mut out = Vec::new();
    for (k, (i, _)) in sets.iter().enumerate() {
        let c = &alg.candidates[*i];
        if let Some(e) = &failed[k] {
            errors.push(RunError {
                algorithm: alg.name.clone(),
                operation: alg.operation.clone(),
                size_bytes: size,
                implementations: vec![c.implementation.into()],
                message: format!("failed in the {threads}-thread run: {e}"),
            });
            continue;
        }
        out.push(Measurement {
            algorithm: alg.name.clone(),
            operation: alg.operation.clone(),
            implementation: c.implementation.into(),
            implementation_version: c.version.clone(),
            size_bytes: size,
            threads,
            ns: stats::summarize(&samples[k]),
            tsc_per_op: 0.0,
            allocs_per_op: allocs[k].0,
            alloc_bytes_per_op: allocs[k].1,
            kind: alg.kind,
            reports: vec![],
            keys: None,
        });
    }
    (out, errors)
}
