//! RESULT bodies → columns: numpy arrays (codec::columnar), Arrow buffers (codec::arrow) and
//! CQL text columns, then the Arrow columns imported by pyarrow as the package imports them
//! (a record batch through the C data interface): a buffer the codec built wrong fails there.
#![no_main]

use _engine::codec::{arrow, columnar, rows};
use _engine::pyrefs;
use libfuzzer_sys::fuzz_target;
use pyo3::prelude::*;

fuzz_target!(|data: &[u8]| {
    let Some(page) = turbocql_fuzz::rows_page(data, None) else { return };
    turbocql_fuzz::with_python(|py| {
        let _ = columnar::page_columns(py, &page);
        let Ok((names, _types)) = rows::column_meta(py, &page) else { return };
        for text in [false, true] {
            let cols = if text { arrow::page_text_columns(py, &page) } else { arrow::page_arrow_columns(py, &page) };
            let Ok(cols) = cols else { continue };
            let cols: Vec<Py<arrow::ArrowColumn>> = cols.into_iter().map(|c| Py::new(py, c).expect("an ArrowColumn")).collect();
            let batch = pyrefs::get(py).expect("bootstrapped").arrow_record_batch.bind(py).call1((&names, cols));
            let batch = batch.unwrap_or_else(|e| panic!("pyarrow refused the codec's columns: {e}"));
            let full = pyo3::types::PyDict::new(py);
            full.set_item("full", true).unwrap();
            if let Err(e) = batch.call_method("validate", (), Some(&full)) {
                panic!("the codec's Arrow columns are not valid Arrow: {e}");
            }
        }
    });
});
