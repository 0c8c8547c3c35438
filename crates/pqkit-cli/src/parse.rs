//! Parsers (and their printers) for the command line's text inputs.

/// Hex inputs of the known-answer and key commands (`--key`, `--nonce`, `--seed`, hex on stdin, signature
/// files that may be hex or raw).
pub mod hex {
    use zeroize::Zeroizing;

    /// Why a hex input was refused. Neither variant holds the input (it may be a key).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum HexError {
        /// Not an even number of hex digits.
        NotHex,
        /// Valid hex of the wrong decoded length.
        WrongLength {
            /// The length required.
            expected: usize,
            /// The decoded length.
            actual: usize,
        },
    }

    /// Decodes hex with whitespace allowed anywhere (the cipher, AEAD, MAC and KDF known-answer commands:
    /// vectors are often wrapped or grouped). `None` if what remains is not an even number of hex digits.
    pub fn decode_spaced(s: &str) -> Option<Zeroizing<Vec<u8>>> {
        let s: Zeroizing<String> = Zeroizing::new(s.chars().filter(|c| !c.is_whitespace()).collect());
        ::hex::decode(s.as_str()).ok().map(Zeroizing::new)
    }

    /// Decodes hex read from stdin (`--hex`): UTF-8 text, whitespace allowed anywhere.
    pub fn decode_stdin(bytes: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
        decode_spaced(core::str::from_utf8(bytes).ok()?)
    }

    /// Decodes a hex option with surrounding whitespace trimmed and, if `len` is given, of exactly `len`
    /// bytes (`--seed`, `--m`, `--ctx` of the ML-KEM, ML-DSA and EC commands).
    pub fn decode_exact(s: &str, len: Option<usize>) -> Result<Zeroizing<Vec<u8>>, HexError> {
        let v = Zeroizing::new(::hex::decode(s.trim()).map_err(|_| HexError::NotHex)?);
        match len {
            Some(n) if v.len() != n => Err(HexError::WrongLength { expected: n, actual: v.len() }),
            _ => Ok(v),
        }
    }

    /// A signature file's contents: its bytes decoded if the whole file (trimmed) is hex text, else `None`
    /// (the caller then takes the bytes as raw).
    pub fn decode_file(raw: &[u8]) -> Option<Vec<u8>> {
        core::str::from_utf8(raw).ok().and_then(|s| ::hex::decode(s.trim()).ok())
    }
}

/// The `hash --check` list format of GNU coreutils' `sha256sum`: one `[\]HEX  NAME` or `[\]HEX *NAME` line per
/// file, names holding `\`, newline or carriage return escaped (and the line then starts with `\`).
pub mod checklist {
    /// Escapes a file name as coreutils does: a name holding `\`, newline or carriage return gets a leading
    /// `\` on its line and those characters written as `\\`, `\n`, `\r`. Returns the line prefix and the name.
    pub fn escape(name: &[u8]) -> (&'static str, Vec<u8>) {
        if !name.iter().any(|&c| matches!(c, b'\\' | b'\n' | b'\r')) {
            return ("", name.to_vec());
        }
        let mut out = Vec::with_capacity(name.len() + 4);
        for &c in name {
            match c {
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                c => out.push(c),
            }
        }
        ("\\", out)
    }

    /// The inverse of [`escape`]; `None` for an unknown escape or a trailing `\` (an improperly formatted
    /// line).
    pub fn unescape(name: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(name.len());
        let mut it = name.iter();
        while let Some(&c) = it.next() {
            if c == b'\\' {
                match it.next()? {
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b'\\' => out.push(b'\\'),
                    _ => return None,
                }
            } else {
                out.push(c);
            }
        }
        Some(out)
    }

    /// The line `pqkit hash` prints for a digest and a file name, newline included: `[\]HEX  NAME`.
    pub fn format_line(digest: &[u8], name: &[u8]) -> Vec<u8> {
        let (pre, name) = escape(name);
        let mut line = format!("{pre}{}  ", ::hex::encode(digest)).into_bytes();
        line.extend_from_slice(&name);
        line.push(b'\n');
        line
    }

    /// The lines of a check list worth parsing, numbered from 1: split at `\n`, a trailing `\r` dropped,
    /// empty lines and `#` comments skipped.
    pub fn lines(data: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
        data.split(|&c| c == b'\n').enumerate().filter_map(|(i, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() || line.starts_with(b"#") { None } else { Some((i + 1, line)) }
        })
    }

    /// One line of a check list: `[\]HEX  NAME` or `[\]HEX *NAME`, with a digest of exactly `want_len` bytes
    /// (a shorter digest is never a match, even for a XOF). Returns the digest and the unescaped name, or
    /// `None` for an improperly formatted line.
    pub fn parse_line(line: &[u8], want_len: usize) -> Option<(Vec<u8>, Vec<u8>)> {
        let (esc, rest) = match line.strip_prefix(b"\\") {
            Some(r) => (true, r),
            None => (false, line),
        };
        let sp = rest.iter().position(|&c| c == b' ')?;
        let (h, n) = (&rest[..sp], &rest[sp + 1..]);
        let n = n.strip_prefix(b" ").or_else(|| n.strip_prefix(b"*"))?;
        if n.is_empty() || h.len() != 2 * want_len {
            return None;
        }
        let d = ::hex::decode(h).ok()?;
        let name = if esc { unescape(n)? } else { n.to_vec() };
        Some((d, name))
    }
}

#[cfg(test)]
mod tests {
    use super::checklist::*;
    use super::hex::*;

    #[test]
    fn checklist_round_trip_and_rejections() {
        for name in [&b"plain"[..], b"a\\b", b"new\nline", b"cr\r", b" lead", b"*star", b"#hash"] {
            let d = [0xab; 32];
            let line = format_line(&d, name);
            let (_, l) = lines(&line).next().expect("one line");
            assert_eq!(parse_line(l, 32), Some((d.to_vec(), name.to_vec())), "{name:?}");
        }
        // Wrong digest length, missing separator, bad escape, empty name, bad hex.
        assert_eq!(parse_line(b"abab  f", 1), None);
        assert_eq!(parse_line(b"ab  f", 1).map(|x| x.1), Some(b"f".to_vec()));
        assert_eq!(parse_line(b"ab f", 1), None);
        assert_eq!(parse_line(b"\\ab  a\\x", 1), None);
        assert_eq!(parse_line(b"\\ab  a\\", 1), None);
        assert_eq!(parse_line(b"ab  ", 1), None);
        assert_eq!(parse_line(b"zz  f", 1), None);
        assert_eq!(lines(b"# c\n\r\nab  f\r\n").collect::<Vec<_>>(), vec![(3, &b"ab  f"[..])]);
    }

    #[test]
    fn hex_inputs() {
        assert_eq!(&decode_spaced(" 00 ff\n1 0").unwrap()[..], &[0, 0xff, 0x10]);
        assert!(decode_spaced("0").is_none());
        assert!(decode_stdin(b"\xff").is_none());
        assert_eq!(decode_exact(" abcd\n", Some(2)).map(|v| v.to_vec()), Ok(vec![0xab, 0xcd]));
        assert_eq!(decode_exact("abcd", Some(3)), Err(HexError::WrongLength { expected: 3, actual: 2 }));
        assert_eq!(decode_exact("a b", None), Err(HexError::NotHex));
        assert_eq!(decode_file(b"abcd\n"), Some(vec![0xab, 0xcd]));
        assert_eq!(decode_file(b"0E"), Some(vec![0x0e]));
        assert_eq!(decode_file(b"\x30\x82\x01"), None);
    }
}
