//! Hash functions.
