//! The hex input parsers of the known-answer and key commands (crates/pqkit-cli/src/parse.rs, compiled here
//! from the same file the CLI uses): `--key`-style options with whitespace anywhere, hex on stdin, exact-length
//! options, and signature files that may be hex. Input: a selector byte, then the text. Properties: never a
//! panic; a decoded value has half as many bytes as the input has hex digits; the decoders agree with each
//! other; an exact-length decode has that length or says which length it got; hex printed from any bytes
//! decodes back to them with every decoder.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/pqkit-cli/src/parse.rs"]
#[allow(dead_code)]
mod parse;

use parse::hex::{HexError, decode_exact, decode_file, decode_spaced, decode_stdin};

/// A decoded value as plain bytes, for comparisons.
fn plain(v: Option<zeroize::Zeroizing<Vec<u8>>>) -> Option<Vec<u8>> {
    v.map(|v| v.to_vec())
}

fuzz_target!(|data: &[u8]| {
    let (sel, text) = match data.split_first() {
        Some((&b, rest)) => (b, rest),
        None => (0, data),
    };
    if let Some(v) = decode_stdin(text) {
        let s = core::str::from_utf8(text).expect("decoded stdin is UTF-8");
        assert_eq!(s.chars().filter(|c| !c.is_whitespace()).count(), 2 * v.len());
        assert_eq!(plain(decode_spaced(s)), Some(v.to_vec()));
    }
    if let Ok(s) = core::str::from_utf8(text) {
        let len = if sel & 1 == 1 { Some(usize::from(sel >> 1)) } else { None };
        match decode_exact(s, len) {
            Ok(v) => {
                if let Some(n) = len {
                    assert_eq!(v.len(), n);
                }
                assert_eq!(decode_file(text).as_deref(), Some(&v[..]));
                // Trimmed hex has no inner whitespace, so the whitespace-tolerant decoder agrees.
                assert_eq!(plain(decode_spaced(s)), Some(v.to_vec()));
            }
            Err(HexError::WrongLength { expected, actual }) => {
                assert_eq!(Some(expected), len);
                assert_ne!(expected, actual);
                assert_eq!(decode_file(text).map(|v| v.len()), Some(actual));
            }
            Err(HexError::NotHex) => assert!(decode_file(text).is_none()),
        }
    } else {
        assert!(decode_stdin(text).is_none() && decode_file(text).is_none());
    }
    // The printer: hex of any bytes decodes back to them.
    let printed = hex::encode(text);
    assert_eq!(decode_exact(&printed, Some(text.len())).as_deref().map(|v| &v[..]), Ok(text));
    assert_eq!(plain(decode_spaced(&printed)), Some(text.to_vec()));
    assert_eq!(plain(decode_stdin(printed.as_bytes())), Some(text.to_vec()));
    assert_eq!(decode_file(printed.as_bytes()).as_deref(), Some(text));
});
