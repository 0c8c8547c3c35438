//! One measurement as the report's JSON stores it ([`Record`]), read back by `--compare`, `--index` and the
//! summary.

use crate::harness::Measurement;
use serde::{Deserialize, Serialize};

/// Tukey-fence outlier counts in a record.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OutlierCounts {
    /// Below Q1 - 3 IQR.
    pub low_severe: u64,
    /// Between Q1 - 3 IQR and Q1 - 1.5 IQR.
    pub low_mild: u64,
    /// Between Q3 + 1.5 IQR and Q3 + 3 IQR.
    pub high_mild: u64,
    /// Above Q3 + 3 IQR.
    pub high_severe: u64,
    /// Sum of the four.
    pub total: u64,
}

/// One measurement as written to report.json.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// Algorithm name.
    pub algorithm: String,
    /// Operation.
    pub operation: String,
    /// Implementation.
    pub implementation: String,
    /// Implementation version.
    pub implementation_version: String,
    /// Input size in bytes (per buffer in multi-thread runs; message length or 0 for public-key operations).
    pub size_bytes: u64,
    /// Median time per operation, ns.
    pub median_ns: f64,
    /// 95% CI of the median, low end, ns.
    pub ci_low_ns: f64,
    /// 95% CI of the median, high end, ns.
    pub ci_high_ns: f64,
    /// Bytes per second at the median (total over all threads); null when there is no input size.
    pub bytes_per_sec: Option<f64>,
    /// Median TSC ticks per byte (nominal TSC rate, not core cycles); null without an input size and in
    /// multi-thread runs.
    pub tsc_per_byte: Option<f64>,
    /// Operations per second at the median (total over all threads).
    pub ops_per_sec: f64,
    /// Allocation calls per operation (counted on a separate untimed run).
    pub allocs_per_op: Option<f64>,
    /// Allocated bytes per operation.
    pub alloc_bytes_per_op: Option<f64>,
    /// Number of samples.
    pub samples: u64,
    /// Tukey-fence outliers.
    pub outliers: OutlierCounts,
    /// Threads.
    pub threads: u64,
    /// Key-generation rows timed over many keys (RSA): the spread over the keys, ns. Absent for other rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_spread: Option<KeySpread>,
}

/// The spread of a key-generation row timed over a fixed number of keys (one key per sample).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KeySpread {
    /// Keys timed.
    pub keys: u64,
    /// 10th percentile, ns.
    pub p10_ns: f64,
    /// 90th percentile, ns.
    pub p90_ns: f64,
    /// Fastest key, ns.
    pub min_ns: f64,
    /// Slowest key, ns.
    pub max_ns: f64,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl From<&Measurement> for Record {
    fn from(m: &Measurement) -> Self {
        let o = m.ns.outliers;
        Record {
            algorithm: m.algorithm.clone(),
            operation: m.operation.clone(),
            implementation: m.implementation.clone(),
            implementation_version: m.implementation_version.clone(),
            size_bytes: m.size_bytes as u64,
            median_ns: m.ns.median,
            ci_low_ns: m.ns.ci_low,
            ci_high_ns: m.ns.ci_high,
            bytes_per_sec: if m.has_throughput() { finite(m.bytes_per_sec()) } else { None },
            tsc_per_byte: m.tsc_per_byte(),
            ops_per_sec: m.ops_per_sec(),
            allocs_per_op: finite(m.allocs_per_op),
            alloc_bytes_per_op: finite(m.alloc_bytes_per_op),
            samples: m.ns.n as u64,
            outliers: OutlierCounts {
                low_severe: o.low_severe as u64,
                low_mild: o.low_mild as u64,
                high_mild: o.high_mild as u64,
                high_severe: o.high_severe as u64,
                total: o.total() as u64,
            },
            threads: m.threads as u64,
            key_spread: m.keys.map(|_| KeySpread {
                keys: m.ns.n as u64,
                p10_ns: m.ns.p10,
                p90_ns: m.ns.p90,
                min_ns: m.ns.min,
                max_ns: m.ns.max,
            }),
        }
    }
}
