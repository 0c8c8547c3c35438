//! The environment header: what machine, toolchain and versions produced a report.

use serde::{Deserialize, Serialize};
use std::process::Command;

/// Environment of one run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Environment {
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: String,
    /// CPU features pqkit may use (`pqkit::cpu::features()`: detected, narrowed by the cap in force).
    pub cpu_features: String,
    /// The instruction-set tier of the run: `native`, or the `--isa` cap and which peers it could and could not
    /// cap (see `isa.rs`).
    pub isa: String,
    /// Logical cores available to this process.
    pub cores: usize,
    /// `uname -sr`.
    pub os: String,
    /// rustc version the harness was built with.
    pub rustc: String,
    /// OpenSSL's own version string, as the linked library reports it.
    pub openssl: String,
    /// Resolved versions of pqkit and the peer crates, from Cargo.lock at build time.
    pub crates: Vec<(String, String)>,
    /// Start of the run, UTC, ISO 8601.
    pub date_utc: String,
    /// pqkit's git revision (at run time if git is available, else at build time).
    pub git_revision: String,
    /// Nominal TSC frequency in GHz, calibrated against the monotonic clock (0 off x86_64).
    pub tsc_ghz: f64,
}

fn cmd(program: &str, args: &[&str]) -> Option<String> {
    let o = Command::new(program).args(args).output().ok()?;
    if !o.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Resolved version of a crate from the build-time Cargo.lock data, or `?`.
pub fn crate_version(name: &str) -> String {
    env!("PQKIT_BENCH_PEER_VERSIONS")
        .split(';')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .unwrap_or_else(|| "?".into())
}

/// `name version`, for a candidate's version string.
pub fn crate_label(name: &str) -> String {
    format!("{name} {}", crate_version(name))
}

/// OpenSSL's version as the linked library reports it.
pub fn openssl_version() -> String {
    crate::algs::ossl_ffi::version()
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The current time in UTC as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

/// Reads the time-stamp counter (0 off x86_64).
#[inline]
/// Nanoseconds of CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`).
///
/// Single-thread samples are timed with this clock rather than wall time: on a shared machine a thread that is
/// descheduled mid-sample would otherwise be charged for other processes' time, and a 1 MiB operation on a
/// loaded 2-core machine is preempted often enough to make wall-clock medians meaningless.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_THREAD_CPUTIME_ID is supported on every Linux.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn rdtsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` is available on every x86_64 CPU and has no memory effects.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Nominal TSC rate in GHz, measured against the monotonic clock over ~20 ms.
pub fn tsc_ghz() -> f64 {
    let t0 = std::time::Instant::now();
    let c0 = rdtsc();
    while t0.elapsed().as_millis() < 20 {
        std::hint::spin_loop();
    }
    let c1 = rdtsc();
    (c1.wrapping_sub(c0)) as f64 / t0.elapsed().as_nanos() as f64
}

/// "family F, model M" from /proc/cpuinfo, with the AMD Zen generation where the family and model say it.
fn generation(cpuinfo: &str) -> Option<String> {
    let field = |k: &str| {
        cpuinfo
            .lines()
            .find(|l| l.split(':').next().is_some_and(|n| n.trim() == k))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let family: u32 = field("cpu family")?.parse().ok()?;
    let model: u32 = field("model")?.parse().ok()?;
    let zen = match (field("vendor_id").as_deref(), family, model) {
        (Some("AuthenticAMD"), 0x17, 0x00..=0x2f) => " = Zen / Zen+",
        (Some("AuthenticAMD"), 0x17, _) => " = Zen 2",
        (Some("AuthenticAMD"), 0x19, 0x10..=0x1f | 0x60..=0x7f | 0xa0..=0xaf) => " = Zen 4",
        (Some("AuthenticAMD"), 0x19, _) => " = Zen 3",
        (Some("AuthenticAMD"), 0x1a, _) => " = Zen 5",
        _ => "",
    };
    Some(format!("family {family}, model {model}{zen}"))
}

impl Environment {
    /// Collects the environment of this process.
    pub fn collect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        // Model names like "AMD EPYC" do not say the generation, which the tiers' figures depend on.
        let cpu_model = match generation(&cpuinfo) {
            Some(g) => format!("{cpu_model} ({g})"),
            None => cpu_model,
        };
        let crates = env!("PQKIT_BENCH_PEER_VERSIONS")
            .split(';')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Environment {
            cpu_model,
            cpu_features: pqkit::cpu::features().to_string(),
            isa: crate::isa::describe(),
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            os: cmd("uname", &["-sr"]).unwrap_or_else(|| std::env::consts::OS.into()),
            rustc: env!("PQKIT_BENCH_RUSTC").into(),
            openssl: openssl_version(),
            crates,
            date_utc: now_utc(),
            git_revision: cmd("git", &["rev-parse", "--short", "HEAD"])
                .unwrap_or_else(|| env!("PQKIT_BENCH_BUILD_GIT").to_string()),
            tsc_ghz: tsc_ghz(),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil_dates() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(super::civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn cpu_generation_from_cpuinfo() {
        let info = |vendor: &str, family: u32, model: u32| {
            format!(
                "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: X\n"
            )
        };
        let g = |v: &str, f, m| super::generation(&info(v, f, m));
        assert_eq!(g("AuthenticAMD", 26, 2).as_deref(), Some("family 26, model 2 = Zen 5"));
        assert_eq!(g("AuthenticAMD", 25, 17).as_deref(), Some("family 25, model 17 = Zen 4"));
        assert_eq!(g("AuthenticAMD", 25, 97).as_deref(), Some("family 25, model 97 = Zen 4"));
        assert_eq!(g("AuthenticAMD", 25, 1).as_deref(), Some("family 25, model 1 = Zen 3"));
        assert_eq!(g("AuthenticAMD", 25, 33).as_deref(), Some("family 25, model 33 = Zen 3"));
        assert_eq!(g("AuthenticAMD", 23, 49).as_deref(), Some("family 23, model 49 = Zen 2"));
        // Other vendors: family and model only ("model name" is not mistaken for "model").
        assert_eq!(g("GenuineIntel", 6, 143).as_deref(), Some("family 6, model 143"));
        assert_eq!(super::generation("model name\t: X\n"), None);
    }
}
