//! Hash functions.

pub mod skein;
