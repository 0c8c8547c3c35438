//! The input parsers of the `pqkit` command line, as a library so that the fuzz targets (`fuzz/`) can reach
//! them: the `hash --check` list format and the hex inputs of the known-answer commands. The binary
//! (`src/main.rs`) is the only other user; everything else of the CLI stays in the binary.
//!
//! Security contract: every function here takes arbitrary bytes or text and never panics; decoded bytes that
//! may be keys are returned in [`zeroize::Zeroizing`] buffers; allocation is bounded by the input's length.

pub mod parse;
