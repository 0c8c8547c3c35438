//! NATS-style subjects: dot-separated tokens; `*` matches one token, `>` one or more trailing tokens.

use crate::{Error, Result};

/// Longest subject or pattern, in bytes (it must fit the envelope's one-byte-range length field).
pub const MAX_SUBJECT_LEN: usize = 255;

/// One pass over the bytes (a `split('.')` with a scan per rule cost ≈ 15 % of a subscribe + unsubscribe);
/// the rules and, where several apply, which is reported are those of the token-by-token reading: tokens
/// left to right, and in a token first `>` before it, then empty, then whitespace or control, then wildcards.
fn check(s: &str, wildcards: bool) -> Result<()> {
    let bad = |reason: &'static str| Err(Error::InvalidSubject { subject: s.chars().take(64).collect(), reason });
    if s.is_empty() {
        return bad("empty");
    }
    if s.len() > MAX_SUBJECT_LEN {
        return bad("longer than 255 bytes");
    }
    let b = s.as_bytes();
    let mut gt_seen = false;
    let mut i = 0;
    loop {
        // One token: b[i..j].
        let (mut j, mut ws, mut wild) = (i, false, false);
        while j < b.len() && b[j] != b'.' {
            let c = b[j];
            // is_ascii_whitespace (space, \t, \n, \x0c, \r) or is_ascii_control (< 0x20, 0x7f).
            ws |= c <= b' ' || c == 0x7f;
            wild |= c == b'*' || c == b'>';
            j += 1;
        }
        if gt_seen {
            return bad("`>` must be the last token");
        }
        if j == i {
            return bad("empty token (leading, trailing or double dot)");
        }
        if ws {
            return bad("whitespace or control character");
        }
        if wild {
            if j - i > 1 {
                return bad("`*` and `>` must be whole tokens");
            }
            if !wildcards {
                return bad("wildcards are not allowed in a publish subject");
            }
            gt_seen = b[i] == b'>';
        }
        if j == b.len() {
            return Ok(());
        }
        i = j + 1;
    }
}

/// Whether two subjects (or any short byte strings) are equal, without a call into libc's `memcmp`: the receive
/// path compares the subject of every message with the last one three or four times, and subjects are short.
/// Up to 16 bytes it is two overlapping 8-byte (or 4-byte) loads per side; longer ones use `==`. An empty string
/// is never read (glibc's `memcmp` of zero bytes at an empty slice's dangling address costs ~100 ns on Zen 5).
#[inline(always)]
pub fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    #[inline(always)]
    fn w8(x: &[u8], i: usize) -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&x[i..i + 8]);
        u64::from_le_bytes(w)
    }
    #[inline(always)]
    fn w4(x: &[u8], i: usize) -> u32 {
        let mut w = [0u8; 4];
        w.copy_from_slice(&x[i..i + 4]);
        u32::from_le_bytes(w)
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        _ => a == b,
    }
}

/// Checks a publish subject: no wildcards.
pub fn validate_subject(s: &str) -> Result<()> {
    check(s, false)
}

/// Checks a subscription pattern: wildcards allowed.
pub fn validate_pattern(s: &str) -> Result<()> {
    check(s, true)
}

/// Whether `subject` (no wildcards) matches `pattern`. Both must be valid.
pub fn matches(pattern: &str, subject: &str) -> bool {
    let mut p = pattern.split('.');
    let mut s = subject.split('.');
    loop {
        match (p.next(), s.next()) {
            (None, None) => return true,
            (Some(">"), Some(_)) => return true,
            (Some("*"), Some(_)) => {}
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

/// Whether every subject matched by `pattern` is also matched by `allowed` (policy coverage).
pub fn covers(allowed: &str, pattern: &str) -> bool {
    let mut a = allowed.split('.');
    let mut p = pattern.split('.');
    loop {
        match (a.next(), p.next()) {
            (None, None) => return true,
            (Some(">"), Some(_)) => return true,
            (Some(_), Some(">")) => return false,
            (Some("*"), Some(_)) => {}
            (Some(x), Some(y)) if x == y && y != "*" => {}
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `same` agrees with `==` on every length up to 40 (each path of its `match`), for equal strings and for
    /// strings that differ in exactly one byte at each position, and for different lengths.
    #[test]
    fn same_agrees_with_eq() {
        for n in 0..40usize {
            let a: Vec<u8> = (0..n).map(|i| b'a' + (i * 7 % 26) as u8).collect();
            assert!(same(&a, &a.clone()), "equal, length {n}");
            for i in 0..n {
                let mut b = a.clone();
                b[i] ^= 0x20;
                assert!(!same(&a, &b), "differ at {i} of {n}");
            }
            assert!(!same(&a, &a[..n.saturating_sub(1)]) || n == 0, "shorter, length {n}");
            let mut longer = a.clone();
            longer.push(b'x');
            assert!(!same(&a, &longer), "longer, length {n}");
        }
        assert!(same(b"", &[]) && !same(b"", b"a"));
    }

    #[test]
    fn validation() {
        for ok in ["a", "a.b.c", "_INBOX.x.y", "orders.eu-west.42"] {
            validate_subject(ok).unwrap();
            validate_pattern(ok).unwrap();
        }
        for ok in ["a.*", "a.>", "*.b.*", ">", "*"] {
            validate_pattern(ok).unwrap();
            assert!(validate_subject(ok).is_err(), "{ok}");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "a b", "a.>.c", "a.b*", "a\n", &"x".repeat(256)] {
            assert!(matches!(validate_pattern(bad), Err(Error::InvalidSubject { .. })), "{bad:?}");
            assert!(validate_subject(bad).is_err());
        }
    }

    /// The token-by-token reading `check` replaced: the reference its single pass is compared with.
    fn check_by_tokens(s: &str, wildcards: bool) -> std::result::Result<(), &'static str> {
        if s.is_empty() {
            return Err("empty");
        }
        if s.len() > MAX_SUBJECT_LEN {
            return Err("longer than 255 bytes");
        }
        let mut gt_seen = false;
        for tok in s.split('.') {
            if gt_seen {
                return Err("`>` must be the last token");
            }
            if tok.is_empty() {
                return Err("empty token (leading, trailing or double dot)");
            }
            if tok.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
                return Err("whitespace or control character");
            }
            match tok {
                "*" | ">" if !wildcards => return Err("wildcards are not allowed in a publish subject"),
                ">" => gt_seen = true,
                "*" => {}
                _ if tok.contains(['*', '>']) => return Err("`*` and `>` must be whole tokens"),
                _ => {}
            }
        }
        Ok(())
    }

    fn reason(r: Result<()>) -> std::result::Result<(), &'static str> {
        r.map_err(|e| match e {
            Error::InvalidSubject { reason, .. } => reason,
            other => panic!("{other:?}"),
        })
    }

    #[test]
    fn single_pass_check_agrees_with_the_token_reading() {
        // Every string of up to 4 characters over an alphabet with each class of byte, then random longer ones.
        let alpha: &[u8] = b"a.*> \t\x7f\x0b\xc3\xa9";
        let mut n = 0;
        let mut strings: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..4 {
            let next: Vec<Vec<u8>> =
                strings.iter().flat_map(|s| alpha.iter().map(move |&c| [s.as_slice(), &[c]].concat())).collect();
            strings.extend(next);
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 300) as usize;
            strings.push((0..len).map(|k| alpha[((x >> (k % 50)) as usize + k * 7) % alpha.len()]).collect());
        }
        for raw in &strings {
            let Ok(s) = std::str::from_utf8(raw) else { continue };
            for w in [false, true] {
                assert_eq!(reason(check(s, w)), check_by_tokens(s, w), "{s:?} wildcards={w}");
                n += 1;
            }
        }
        assert!(n > 10_000, "{n}");
        // Each reason at least once, so the comparison covers every rejection.
        for (s, w, why) in [
            ("", true, "empty"),
            ("a.>.b", true, "`>` must be the last token"),
            ("a..b", true, "empty token (leading, trailing or double dot)"),
            ("a.\x7f", true, "whitespace or control character"),
            ("a.*", false, "wildcards are not allowed in a publish subject"),
            ("a.b>", true, "`*` and `>` must be whole tokens"),
        ] {
            assert_eq!(reason(check(s, w)), Err(why), "{s:?}");
        }
        assert_eq!(reason(check(&"a".repeat(256), true)), Err("longer than 255 bytes"));
    }

    #[test]
    fn matching() {
        assert!(matches("a.b.c", "a.b.c"));
        assert!(!matches("a.b.c", "a.b"));
        assert!(!matches("a.b", "a.b.c"));
        assert!(matches("a.*.c", "a.x.c"));
        assert!(!matches("a.*.c", "a.x.y.c"));
        assert!(matches("a.>", "a.b"));
        assert!(matches("a.>", "a.b.c.d"));
        assert!(!matches("a.>", "a"));
        assert!(matches(">", "z"));
        assert!(matches("*", "z"));
        assert!(!matches("*", "z.y"));
    }

    #[test]
    fn coverage() {
        assert!(covers("a.>", "a.b"));
        assert!(covers("a.>", "a.*.c"));
        assert!(covers("a.>", "a.>"));
        assert!(!covers("a.>", "a"));
        assert!(!covers("a.*", "a.>"));
        assert!(covers("a.*", "a.*"));
        assert!(covers("a.*", "a.b"));
        assert!(!covers("a.b", "a.*"));
        assert!(!covers("a.b", "a.c"));
        assert!(covers(">", "x.y.>"));
    }
}
