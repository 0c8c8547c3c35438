//! NATS-style subjects: dot-separated tokens; `*` matches one token, `>` one or more trailing tokens.

use crate::{Error, Result};

/// Longest subject or pattern, in bytes (it must fit the envelope's one-byte-range length field).
pub const MAX_SUBJECT_LEN: usize = 255;

fn check(s: &str, wildcards: bool) -> Result<()> {
    let bad = |reason: &'static str| Err(Error::InvalidSubject { subject: s.chars().take(64).collect(), reason });
    if s.is_empty() {
        return bad("empty");
    }
    if s.len() > MAX_SUBJECT_LEN {
        return bad("longer than 255 bytes");
    }
    let mut gt_seen = false;
    for tok in s.split('.') {
        if gt_seen {
            return bad("`>` must be the last token");
        }
        if tok.is_empty() {
            return bad("empty token (leading, trailing or double dot)");
        }
        if tok.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
            return bad("whitespace or control character");
        }
        match tok {
            "*" | ">" if !wildcards => return bad("wildcards are not allowed in a publish subject"),
            ">" => gt_seen = true,
            "*" => {}
            _ if tok.contains(['*', '>']) => return bad("`*` and `>` must be whole tokens"),
            _ => {}
        }
    }
    Ok(())
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
