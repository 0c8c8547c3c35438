//! Building blocks shared by the x86_64 SIMD backends of several families.
//!
//! Only code that is the same instruction for instruction in more than one family lives here; each family's
//! own backend files (`<family>/avx2.rs`, `<family>/avx512.rs`) still hold everything particular to it.

pub(crate) mod transpose;
