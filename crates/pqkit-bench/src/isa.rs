//! `--isa`: the whole comparison run as a lesser CPU would run it.
//!
//! pqkit is capped through its own `PQKIT_CPU`. OpenSSL and aws-lc honour `OPENSSL_ia32cap`, a mask over the
//! CPUID words they read; both read it when the library initialises (OpenSSL from an ELF `.init` entry, before
//! `main`), so `--isa` re-runs this program with both variables set instead of setting them in-process. ring,
//! RustCrypto and libcrux detect the CPU themselves and cannot be capped; the report header says so.

use pqkit::cpu::Cap;
use std::process::ExitCode;

/// Set in the re-run child: the cap it was started with.
pub const APPLIED: &str = "PQKIT_BENCH_ISA";

/// Bits of a 32-bit CPUID register word.
const fn bits(list: &[u32]) -> u64 {
    let mut v = 0u64;
    let mut i = 0;
    while i < list.len() {
        v |= 1 << list[i];
        i += 1;
    }
    v
}

/// The `OPENSSL_ia32cap` value for a cap: `~mask` per 64-bit word, word 0 = CPUID.1 EDX | ECX << 32, word 1 =
/// CPUID.7.0 EBX | ECX << 32 (OpenSSL 3 and aws-lc read the same two words; OpenSSL clears the words after the
/// last one given, the leaf-7 subleaf-1 and AVX10 bits, which no AVX2-tier machine of the kind targeted has).
pub fn openssl_ia32cap(cap: Cap) -> Option<String> {
    match cap {
        Cap::Native | Cap::Avx512 => None,
        Cap::Avx2 => {
            // AVX-512 F, DQ, IFMA, PF, ER, CD, BW, VL in EBX; VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ in ECX.
            let ebx = bits(&[16, 17, 21, 26, 27, 28, 30, 31]);
            let ecx = bits(&[1, 6, 11, 12, 14]);
            Some(format!(":~0x{:x}", ebx | ecx << 32))
        }
        Cap::Portable => {
            // Leaf 1 ECX: PCLMULQDQ, SSSE3, XOP, FMA, SSE4.1, SSE4.2, MOVBE, AES-NI, AVX, F16C; all of leaf 7.
            // OpenSSL keeps its SSE2 baseline code: the closest it comes to portable.
            let ecx1 = bits(&[1, 9, 11, 12, 19, 20, 22, 25, 28, 29]);
            Some(format!("~0x{:x}:~0xffffffffffffffff", ecx1 << 32))
        }
    }
}

/// Runs this program again with the cap applied to pqkit and the peers that honour one; returns its exit
/// status. Called when `--isa` is given and this process is not already that re-run.
pub fn rerun(cap: Cap) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: --isa: cannot find this program to re-run it: {e}");
            return ExitCode::from(2);
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(std::env::args_os().skip(1)).env("PQKIT_CPU", cap.name()).env(APPLIED, cap.name());
    match openssl_ia32cap(cap) {
        Some(mask) => cmd.env("OPENSSL_ia32cap", mask),
        None => cmd.env_remove("OPENSSL_ia32cap"),
    };
    match cmd.status() {
        Ok(s) => ExitCode::from(s.code().unwrap_or(2).clamp(0, 255) as u8),
        Err(e) => {
            eprintln!("error: --isa: cannot re-run this program: {e}");
            ExitCode::from(2)
        }
    }
}

/// The tier line of the report header.
pub fn describe() -> String {
    let cap = pqkit::cpu::cap();
    let applied = std::env::var(APPLIED).ok();
    let lacking = cap.expects().without(pqkit::cpu::detected());
    let reached = if lacking.is_empty() { String::new() } else { format!(" (this CPU lacks {lacking}: not reached)") };
    match (applied, cap) {
        (None, Cap::Native) => "native: no cap, every implementation uses what the CPU has".into(),
        (None, c) => format!(
            "{c}{reached}: pqkit capped by PQKIT_CPU; the peers NOT capped (use --isa {c} to cap OpenSSL and aws-lc-rs too)"
        ),
        (Some(_), c) => match openssl_ia32cap(c) {
            Some(mask) => format!(
                "{c}{reached} (--isa {c}): pqkit capped (PQKIT_CPU={c}); OpenSSL and aws-lc-rs capped \
                 (OPENSSL_ia32cap={mask}); ring, RustCrypto and libcrux cannot be capped and use what the CPU has"
            ),
            None => format!("{c}{reached} (--isa {c}): the CPU's own features for every implementation"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks() {
        assert_eq!(openssl_ia32cap(Cap::Native), None);
        assert_eq!(openssl_ia32cap(Cap::Avx512), None);
        // AVX-512F is CPUID.7.0:EBX bit 16; AVX2 (bit 5), BMI2 (8), ADX (19), SHA (29), VAES (ECX 9) and
        // VPCLMULQDQ (ECX 10) stay.
        let m = u64::from_str_radix(openssl_ia32cap(Cap::Avx2).unwrap().trim_start_matches(":~0x"), 16).unwrap();
        assert!(m & 1 << 16 != 0 && m & 1 << 31 != 0 && m & 1 << (32 + 1) != 0);
        for keep in [5, 3, 8, 19, 29, 32 + 9, 32 + 10] {
            assert_eq!(m & 1 << keep, 0, "bit {keep} must stay");
        }
        let p = openssl_ia32cap(Cap::Portable).unwrap();
        assert!(p.starts_with("~0x") && p.ends_with(":~0xffffffffffffffff"));
        let w0 = u64::from_str_radix(p.trim_start_matches("~0x").split(':').next().unwrap(), 16).unwrap();
        assert!(w0 & 1 << (32 + 25) != 0 && w0 & 1 << (32 + 28) != 0, "AES-NI and AVX masked");
        assert_eq!(w0 & 0xffff_ffff, 0, "EDX (SSE2 and below) kept");
    }
}
