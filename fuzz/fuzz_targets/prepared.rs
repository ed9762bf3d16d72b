//! PREPARED results: the bind markers' and result columns' metadata read by the crate, their
//! CQL type names, then one row of Python values bound to the markers by the engine's codec
//! (codec::values::bind_row), the partition key read from it; and a ROWS body read with the
//! prepared result metadata in its stead. The first byte picks the Python values.
#![no_main]

use std::sync::Arc;

use _engine::codec::{rows, types, values};
use libfuzzer_sys::fuzz_target;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

fuzz_target!(|data: &[u8]| {
    let Some((pick, body)) = data.split_first() else { return };
    let Some(prepared) = turbocql_fuzz::prepared(body) else { return };
    let markers = &prepared.prepared_metadata;
    for spec in markers.col_specs.iter().chain(prepared.result_metadata.col_specs()) {
        let _ = types::type_name(spec.typ());
    }
    turbocql_fuzz::with_python(|py| {
        let palette = turbocql_fuzz::palette(py).expect("the palette");
        let n = palette.len();
        let row: Vec<Bound<'_, PyAny>> = (0..markers.col_specs.len().min(64)).map(|i| palette.get_item((usize::from(*pick) + i * 7) % n).unwrap()).collect();
        let row = PyTuple::new(py, row).unwrap();
        let _ = values::bind_row(py, Some(row.as_any()), &markers.col_specs, &markers.pk_indexes);
        let _ = values::bind_row(py, None, &markers.col_specs, &markers.pk_indexes);
        // A ROWS result that leaves its metadata out is read with the prepared statement's.
        let cached = Arc::new(prepared.result_metadata.clone());
        let mut rows_body = vec![0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0];
        rows_body.extend_from_slice(&body[body.len().min(4)..]);
        if let Some(page) = turbocql_fuzz::rows_page(&rows_body, Some(&cached)) {
            let _ = rows::page_rows(py, &page);
        }
    });
});
