//! RESULT bodies → Python rows: the metadata read by the crate, then every row through the
//! engine's codec as tuples and as the default row factory's named tuples (allocated directly,
//! codec::named_rows), with the column names and types. Every CQL type can appear, nested
//! collections, UDTs, tuples and vectors included. A body the codec cannot read must raise.
#![no_main]

use _engine::codec::{named_rows, rows};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(page) = turbocql_fuzz::rows_page(data, None) else { return };
    turbocql_fuzz::with_python(|py| {
        let Ok((names, _types)) = rows::column_meta(py, &page) else { return };
        let _ = rows::page_rows(py, &page);
        let _ = named_rows::page_named_rows(py, &page, &names);
    });
});
