//! Building blocks shared by the x86_64 backends of several families.
//!
//! Only code that is the same instruction for instruction in more than one family or backend lives here;
//! each family's own backend files (`<family>/avx2.rs`, `<family>/avx512.rs`) still hold everything
//! particular to it. `divsteps` needs nothing beyond the x86_64 baseline (`cmov`), so every backend of a
//! family may use it.

pub(crate) mod divsteps;
pub(crate) mod transpose;
pub(crate) mod zmm5;
