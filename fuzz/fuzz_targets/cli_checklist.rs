//! The `pqkit hash --check` list parser (crates/pqkit-cli/src/parse.rs, compiled here from the same file the
//! CLI uses). Input: a first byte choosing the digest length (0..=64 bytes), then a check list. Properties:
//! never a panic; every line handed out by `lines` is non-empty, not a comment and holds no newline; a parsed
//! line has a digest of exactly the length asked for and a non-empty name, and the printer's line for it
//! (`format_line`) parses back to the same digest and name; file-name escaping round-trips and leaves no
//! newline or carriage return in the printed name.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/pqkit-cli/src/parse.rs"]
#[allow(dead_code)]
mod parse;

use parse::checklist::{escape, format_line, lines, parse_line, unescape};

fuzz_target!(|data: &[u8]| {
    let (want_len, list) = match data.split_first() {
        Some((&b, rest)) => (usize::from(b % 65), rest),
        None => (32, data),
    };
    let mut last = 0;
    for (lineno, line) in lines(list) {
        assert!(lineno > last, "line numbers increase");
        last = lineno;
        assert!(!line.is_empty() && !line.starts_with(b"#") && !line.contains(&b'\n'));
        if let Some((digest, name)) = parse_line(line, want_len) {
            assert_eq!(digest.len(), want_len);
            assert!(!name.is_empty());
            let printed = format_line(&digest, &name);
            let mut again = lines(&printed);
            let (_, l) = again.next().expect("the printed line");
            assert!(again.next().is_none(), "the printer wrote one line");
            assert_eq!(parse_line(l, want_len), Some((digest, name)), "print then parse");
        }
    }
    // Any byte string as a file name.
    let (pre, esc) = escape(list);
    assert!(!esc.contains(&b'\n') && !esc.contains(&b'\r'));
    let back = if pre.is_empty() { esc.clone() } else { unescape(&esc).expect("an escaped name unescapes") };
    assert_eq!(back, list);
    let _ = unescape(list);
});
