//! The statistics of a set of timing samples: median, a 95% confidence interval of the median, Tukey-fence
//! outliers, and the comparisons (ratio, gap, regression) the reports print.
//!
//! The confidence interval uses the distribution-free order-statistic method: the number of samples below
//! the true median is Binomial(n, 1/2), so the interval `[x(j), x(n-j+1)]` (sorted samples, 1-based) covers
//! the median with probability `1 - 2 P(B <= j-1)`; `j` is the largest rank keeping that at least 95%. It
//! assumes nothing about the shape of the distribution, which for timings is skewed and heavy-tailed.

/// Tukey-fence outlier counts, as criterion reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outliers {
    /// Below `Q1 - 3 IQR`.
    pub low_severe: usize,
    /// Between `Q1 - 3 IQR` and `Q1 - 1.5 IQR`.
    pub low_mild: usize,
    /// Between `Q3 + 1.5 IQR` and `Q3 + 3 IQR`.
    pub high_mild: usize,
    /// Above `Q3 + 3 IQR`.
    pub high_severe: usize,
}

impl Outliers {
    /// All outliers, mild and severe.
    pub fn total(&self) -> usize {
        self.low_severe + self.low_mild + self.high_mild + self.high_severe
    }
    /// Severe outliers only.
    pub fn severe(&self) -> usize {
        self.low_severe + self.high_severe
    }
}

/// A summary of one sample set.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Lower end of the 95% confidence interval of the median.
    pub ci_low: f64,
    /// Upper end of the 95% confidence interval of the median.
    pub ci_high: f64,
    /// Arithmetic mean (reported for long-tailed operations such as ML-DSA signing).
    pub mean: f64,
    /// Tukey-fence outliers.
    pub outliers: Outliers,
    /// 10th percentile (the spread of key-generation rows timed over many keys).
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
}

fn sorted(xs: &[f64]) -> Vec<f64> {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// The median of `xs` (mean of the two middle values for an even count). `NaN` for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let v = sorted(xs);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

/// The arithmetic mean of `xs`.
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The `p`-quantile (0..=1) of already sorted values, by linear interpolation between closest ranks.
pub fn quantile_sorted(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let pos = p.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// `P(B <= k)` for `B ~ Binomial(n, 1/2)`.
fn binom_half_cdf(n: usize, k: usize) -> f64 {
    // Work in log space so that large n does not underflow 0.5^n.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_c = 0.0f64; // ln C(n, 0)
    let mut acc = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        acc += (ln_c + ln_half_n).exp();
    }
    acc.min(1.0)
}

/// The 1-based rank `j` of the lower end of the 95% order-statistic interval `[x(j), x(n-j+1)]`.
///
/// For `n <= 5` no pair of order statistics reaches 95% and the widest interval, min to max, is returned.
pub fn median_ci_rank(n: usize) -> usize {
    let mut j = 1;
    while j < n / 2 && binom_half_cdf(n, j) <= 0.025 {
        // cdf(j) <= 0.025 means rank j+1 still gives coverage 1 - 2 cdf(j) >= 95%.
        j += 1;
    }
    j
}

/// The 95% confidence interval of the median of `xs`, as `(low, high)`.
pub fn median_ci(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let v = sorted(xs);
    let n = v.len();
    let j = median_ci_rank(n);
    (v[j - 1], v[n - j])
}

/// Counts Tukey-fence outliers: mild beyond 1.5 IQR from the quartiles, severe beyond 3 IQR.
pub fn tukey(xs: &[f64]) -> Outliers {
    let v = sorted(xs);
    let q1 = quantile_sorted(&v, 0.25);
    let q3 = quantile_sorted(&v, 0.75);
    let iqr = q3 - q1;
    let (lm, ls) = (q1 - 1.5 * iqr, q1 - 3.0 * iqr);
    let (hm, hs) = (q3 + 1.5 * iqr, q3 + 3.0 * iqr);
    let mut o = Outliers::default();
    for &x in &v {
        if x < ls {
            o.low_severe += 1;
        } else if x < lm {
            o.low_mild += 1;
        } else if x > hs {
            o.high_severe += 1;
        } else if x > hm {
            o.high_mild += 1;
        }
    }
    o
}

/// Summarises a sample set.
pub fn summarize(xs: &[f64]) -> Summary {
    let (ci_low, ci_high) = median_ci(xs);
    let v = sorted(xs);
    Summary {
        n: xs.len(),
        median: median(xs),
        ci_low,
        ci_high,
        mean: mean(xs),
        outliers: tukey(xs),
        p10: quantile_sorted(&v, 0.1),
        p90: quantile_sorted(&v, 0.9),
        min: v.first().copied().unwrap_or(f64::NAN),
        max: v.last().copied().unwrap_or(f64::NAN),
    }
}

/// How many times faster `ours` is than `theirs`, given both as times per operation (higher is better for us).
/// Equivalently, our throughput divided by theirs.
pub fn speed_ratio(ours_ns: f64, theirs_ns: f64) -> f64 {
    theirs_ns / ours_ns
}

/// The gap in percent corresponding to a speed ratio: positive when we are faster, negative when we trail.
pub fn gap_percent(ratio: f64) -> f64 {
    (ratio - 1.0) * 100.0
}

/// True if a new measurement regressed against a baseline by more than `tolerance` (0.05 = 5%) beyond the
/// confidence intervals: the new interval's low end lies above the baseline's high end times `1 + tolerance`.
pub fn regressed(new_ci_low_ns: f64, base_ci_high_ns: f64, tolerance: f64) -> bool {
    new_ci_low_ns > base_ci_high_ns * (1.0 + tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_odd_even_and_unsorted() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0]), 7.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_sorted(&v, 0.25), 2.0);
        assert_eq!(quantile_sorted(&v, 0.5), 3.0);
        assert_eq!(quantile_sorted(&[0.0, 10.0], 0.25), 2.5);
    }

    #[test]
    fn binomial_cdf_matches_hand_values() {
        // n = 4: P(B<=0)=1/16, P(B<=1)=5/16, P(B<=4)=1.
        assert!((binom_half_cdf(4, 0) - 1.0 / 16.0).abs() < 1e-12);
        assert!((binom_half_cdf(4, 1) - 5.0 / 16.0).abs() < 1e-12);
        assert!((binom_half_cdf(4, 4) - 1.0).abs() < 1e-12);
        // Large n must not underflow: P(B <= n/2) is a bit above one half.
        let c = binom_half_cdf(2000, 1000);
        assert!(c > 0.5 && c < 0.52, "{c}");
    }

    #[test]
    fn median_ci_ranks_match_tables() {
        // Classic table values for the 95% distribution-free CI of the median (e.g. Conover, Practical
        // Nonparametric Statistics): n=10 -> ranks (2, 9); n=20 -> (6, 15); n=30 -> (10, 21); n=100 -> (40, 61).
        assert_eq!(median_ci_rank(10), 2);
        assert_eq!(median_ci_rank(20), 6);
        assert_eq!(median_ci_rank(30), 10);
        assert_eq!(median_ci_rank(100), 40);
        // Too few samples: min..max.
        assert_eq!(median_ci_rank(5), 1);
        let (lo, hi) = median_ci(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((lo, hi), (1.0, 5.0));
    }

    #[test]
    fn median_ci_covers_the_median_and_is_ordered() {
        let xs: Vec<f64> = (1..=30).map(|i| (i * 7 % 31) as f64).collect();
        let (lo, hi) = median_ci(&xs);
        let m = median(&xs);
        assert!(lo <= m && m <= hi);
        let mut s = xs.clone();
        s.sort_by(f64::total_cmp);
        assert_eq!((lo, hi), (s[9], s[20]));
    }

    #[test]
    fn tukey_fences_classify_mild_and_severe() {
        // Quartiles of 1..=8 plus outliers: build data with Q1=2.75.. simpler: 20 values at 10, spread 10..12.
        let mut xs: Vec<f64> = (0..20).map(|i| 10.0 + (i % 3) as f64).collect(); // 10, 11, 12 repeating
        let v = sorted(&xs);
        let q1 = quantile_sorted(&v, 0.25);
        let q3 = quantile_sorted(&v, 0.75);
        let iqr = q3 - q1;
        assert!(iqr > 0.0);
        xs.push(q3 + 2.0 * iqr); // high mild
        xs.push(q3 + 10.0 * iqr); // high severe (moves quartiles little)
        xs.push(q1 - 2.0 * iqr); // low mild
        let o = tukey(&xs);
        assert_eq!(o.high_severe, 1, "{o:?}");
        assert_eq!(o.high_mild, 1, "{o:?}");
        assert_eq!(o.low_mild, 1, "{o:?}");
        assert_eq!(o.low_severe, 0);
        assert_eq!(o.total(), 3);
        assert_eq!(o.severe(), 1);
        // No outliers in a constant set.
        assert_eq!(tukey(&[5.0; 10]).total(), 0);
    }

    #[test]
    fn ratio_gap_and_regression() {
        // We take 50 ns, the peer 100 ns: we are 2x as fast, 100% ahead.
        let r = speed_ratio(50.0, 100.0);
        assert_eq!(r, 2.0);
        assert_eq!(gap_percent(r), 100.0);
        // We take 125 ns, the peer 100 ns: ratio 0.8, we trail by 20%.
        let r = speed_ratio(125.0, 100.0);
        assert!((r - 0.8).abs() < 1e-12);
        assert!((gap_percent(r) + 20.0).abs() < 1e-9);
        assert!(regressed(106.0, 100.0, 0.05));
        assert!(!regressed(104.0, 100.0, 0.05));
    }

    #[test]
    fn summary_fields() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0, 100.0]);
        assert_eq!(s.n, 5);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 22.0);
        assert_eq!(s.outliers.high_severe, 1);
    }
}
