//! Mismatch: why a Python value does not fit a CQL type, and the `TypeError` /
//! `ValueError` that says so, naming the column and its CQL type.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use scylla::frame::response::result::ColumnSpec;

use super::types::type_name;

/// Why a value does not fit: a type mismatch (TypeError) or a bad value (ValueError).
pub struct Mismatch {
    pub type_error: bool,
    pub msg: String,
}

pub(crate) fn type_err(msg: String) -> Mismatch {
    Mismatch { type_error: true, msg }
}

pub(crate) fn value_err(msg: String) -> Mismatch {
    Mismatch { type_error: false, msg }
}

pub(crate) fn py_type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

pub(crate) fn expected(what: &str, v: &Bound<'_, PyAny>) -> Mismatch {
    type_err(format!("expected {what}, got {}", py_type_name(v)))
}

impl Mismatch {
    /// The Python exception: TypeError for a type mismatch, else ValueError.
    pub fn into_err(self, context: impl std::fmt::Display) -> PyErr {
        let msg = format!("{context}: {}", self.msg);
        if self.type_error {
            PyTypeError::new_err(msg)
        } else {
            PyValueError::new_err(msg)
        }
    }

    /// The exception for a value bound to the column `spec`, naming it and its type.
    pub fn for_column(self, spec: &ColumnSpec<'_>) -> PyErr {
        let head = if self.type_error { "Received an argument of invalid type" } else { "Received an invalid value" };
        let context = format!("{head} for column \"{}\" of CQL type {}", spec.name(), type_name(spec.typ()));
        self.into_err(context)
    }
}
