//! The generated point tables.
//!
//! The fixed-base and verification multiplications read tables of multiples of a generator. They are stored
//! as Rust source in `src/ec/tables/`: each file is one array literal of 64-bit words, one row of words per
//! point, which the module that owns the table reads with `include!` and copies into its point type in its
//! static's initializer (no arithmetic at compile time). Deriving them in constant evaluation instead made
//! every compilation of the crate about two and a half minutes longer: the compiler's interpreter runs field
//! arithmetic several thousand times slower than the processor does.
//!
//! Each owning module keeps the derivation (`const fn` code over its own field and group arithmetic, compiled
//! for its tests only) and a unit test, named `generated_tables_match_their_derivation`, that runs it and
//! compares every word with the stored table through [`tests::check`]. Run that test with
//! `PQKIT_WRITE_TABLES=1` to rewrite the tables whose derivation changed, then build and test again:
//!
//! ```text
//! PQKIT_WRITE_TABLES=1 cargo test -p pqkit --lib generated_tables
//! ```
//!
//! Other tests check the entries themselves against independent reference arithmetic.

#[cfg(test)]
pub(crate) mod tests {
    extern crate std;
    use core::fmt::Write;
    use std::string::String;

    /// Compares a stored table (`stored`, read back from its static) with what its derivation gives
    /// (`derived`), point by point: `None` when they are equal. Otherwise a description of the difference,
    /// after rewriting `src/ec/tables/<file>` from `derived` when `PQKIT_WRITE_TABLES` is set (`what` is the
    /// file's heading, `row_len` the points per row of a two-dimensional table, 0 for a list).
    pub(crate) fn check<const W: usize>(
        file: &str,
        what: &str,
        row_len: usize,
        stored: &[[u64; W]],
        derived: &[[u64; W]],
    ) -> Option<String> {
        let dir = std::format!("{}/src/ec/tables", env!("CARGO_MANIFEST_DIR"));
        let rewrite = std::env::var_os("PQKIT_WRITE_TABLES").is_some();
        check_in(&dir, rewrite, file, what, row_len, stored, derived)
    }

    /// [`check`] with the tables' directory and the rewrite switch as arguments, so that its tests need neither
    /// the source tree nor the environment.
    fn check_in<const W: usize>(
        dir: &str,
        rewrite: bool,
        file: &str,
        what: &str,
        row_len: usize,
        stored: &[[u64; W]],
        derived: &[[u64; W]],
    ) -> Option<String> {
        if stored == derived {
            return None;
        }
        let path = std::format!("{dir}/{file}");
        if rewrite {
            std::fs::write(&path, render(what, row_len, derived)).expect("write the table");
            return Some(std::format!("{path} rewritten from its derivation: build and run the tests again"));
        }
        let first = stored.iter().zip(derived).position(|(a, b)| a != b);
        Some(std::format!(
            "{path} differs from its derivation ({} stored points, {} derived, first difference at {first:?}): \
             rerun this test with PQKIT_WRITE_TABLES=1 to rewrite it",
            stored.len(),
            derived.len()
        ))
    }

    /// Fails with every difference [`check`] found (a test checks all its tables before failing, so one run
    /// with `PQKIT_WRITE_TABLES` rewrites them all).
    pub(crate) fn report(outcomes: &[Option<String>]) {
        let failures: std::vec::Vec<&String> = outcomes.iter().flatten().collect();
        assert!(failures.is_empty(), "{failures:#?}");
    }

    /// The file's text: a comment, then the array literal (rows of `row_len` points when it is not 0).
    fn render<const W: usize>(what: &str, row_len: usize, words: &[[u64; W]]) -> String {
        let mut s = String::new();
        for line in what.lines() {
            writeln!(s, "// {line}").unwrap();
        }
        s.push_str(
            "// Generated from its derivation by the unit test `generated_tables_match_their_derivation` of the module\n\
             // that includes it (see src/ec/table.rs); do not edit.\n[\n",
        );
        let point = |s: &mut String, indent: &str, p: &[u64; W]| {
            s.push_str(indent);
            s.push('[');
            for (k, w) in p.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                write!(s, "{w:#018x}").unwrap();
            }
            s.push_str("],\n");
        };
        if row_len == 0 {
            for p in words {
                point(&mut s, "    ", p);
            }
        } else {
            assert_eq!(words.len() % row_len, 0, "whole rows");
            for row in words.chunks(row_len) {
                s.push_str("    [\n");
                for p in row {
                    point(&mut s, "        ", p);
                }
                s.push_str("    ],\n");
            }
        }
        s.push_str("]\n");
        s
    }

    #[test]
    fn a_table_renders_as_an_array_literal_of_rows() {
        let words = [[1u64, 0xffff_ffff_ffff_ffff], [2, 3], [4, 5], [6, 7]];
        let list = render("list", 0, &words);
        assert!(list.starts_with("// list\n// Generated"));
        assert!(list.ends_with(
            "[\n    [0x0000000000000001, 0xffffffffffffffff],\n    [0x0000000000000002, 0x0000000000000003],\n    \
             [0x0000000000000004, 0x0000000000000005],\n    [0x0000000000000006, 0x0000000000000007],\n]\n"
        ));
        let rows = render("rows", 2, &words);
        assert!(rows.contains("[\n    [\n        [0x0000000000000001, 0xffffffffffffffff],\n"));
        assert!(rows.ends_with("        [0x0000000000000006, 0x0000000000000007],\n    ],\n]\n"));
    }

    #[test]
    #[should_panic(expected = "differs from its derivation")]
    fn a_stored_table_that_differs_from_its_derivation_fails() {
        let dir = "/nonexistent";
        assert_eq!(check_in(dir, false, "none.rs", "none", 0, &[[1u64]], &[[1u64]]), None);
        report(&[None, check_in(dir, false, "none.rs", "none", 0, &[[1u64]], &[[2u64]])]);
    }

    #[test]
    fn a_differing_table_is_rewritten_from_its_derivation_when_asked() {
        let dir = std::env::temp_dir().join(std::format!("pqkit-table-check-{}", std::process::id()));
        // A directory left by an interrupted run of an earlier process with the same id.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.to_str().unwrap();
        let file = dir.join("t.rs");
        let derived = [[1u64, 2], [3, 4], [5, 6], [7, 0xffff_ffff_ffff_ffff]];
        // Equal: nothing is written.
        assert_eq!(check_in(d, true, "t.rs", "t", 2, &derived, &derived), None);
        assert!(!file.exists());
        // Different, with the switch: the file is the derivation's rendering, and the words read back from it are
        // the derived ones.
        let stored = [[1u64, 2], [3, 5], [5, 6], [7, 8]];
        let msg = check_in(d, true, "t.rs", "a test table", 2, &stored, &derived).unwrap();
        assert!(msg.ends_with("t.rs rewritten from its derivation: build and run the tests again"), "{msg}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, render("a test table", 2, &derived));
        let words: std::vec::Vec<u64> = text
            .lines()
            .filter(|l| !l.starts_with("//"))
            .flat_map(|l| l.split(['[', ']', ',']).map(str::trim).filter(|t| !t.is_empty()))
            .map(|t| u64::from_str_radix(t.strip_prefix("0x").unwrap(), 16).unwrap())
            .collect();
        assert_eq!(words, derived.concat());
        // Different, without the switch: reported with the first differing point, and the file left as it was.
        let msg = check_in(d, false, "t.rs", "other", 2, &stored, &derived).unwrap();
        assert!(msg.contains("differs from its derivation (4 stored points, 4 derived, first difference at Some(1))"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
