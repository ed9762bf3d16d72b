//! The codec layer: Python values ↔ CQL bytes, with no notion of a session or a request.
//!
//! - [`types`]: CQL type names;
//! - [`mismatch`]: why a value does not fit its column, as TypeError / ValueError;
//! - [`scalars`]: one value of a single-valued CQL type → bytes;
//! - [`values`]: a row of Python values → CQL bytes ([`values::BoundValues`]), typed by
//!   the statement's bind markers;
//! - [`arrays`]: numpy arrays (the buffer protocol) read and built without per-element
//!   objects;
//! - [`columns`]: parameters given as columns (`execute_concurrent_with_args`);
//! - [`from_arrow`]: Arrow data (pyarrow, polars) → CQL values, for parameters given as
//!   Arrow columns; [`from_text`] / [`to_text`]: a value written as CQL text ↔ CQL bytes
//!   ([`text_scalars`]: the single values' text forms read into numbers);
//! - [`rows`]: a page's bytes → Python rows (tuples) or numpy columns;
//! - [`arrow`]: a page's bytes → Arrow buffers ([`arrow::ArrowColumn`]), for pyarrow;
//! - [`named_rows`]: the default row factory's named tuples, made in Rust;
//! - [`fill`]: the budget of what a page's nulls and short values may fill in;
//! - [`standalone`]: the encoders and decoders on their own (`_engine.encode`, ...).
//!
//! Nothing here imports from `exec` or `api`.

pub mod arrays;
pub mod arrow;
pub mod columnar;
pub mod columns;
pub mod fill;
pub mod from_arrow;
pub mod from_text;
pub mod mismatch;
pub mod named_rows;
pub mod rows;
pub mod scalars;
pub mod standalone;
pub mod text_scalars;
pub mod to_text;
pub mod types;
pub mod values;
