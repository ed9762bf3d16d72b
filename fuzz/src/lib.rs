//! What the fuzz targets share: an embedded Python with the turbocql package imported on top of
//! this build's engine module (the targets call the engine's codec directly, so the objects the
//! package hands over at import must reach this copy of it, not the wheel's), and the readers
//! that turn a target's bytes into what the engine receives from the scylla crate.
//!
//! The package is found through `PYTHONPATH` (scripts/fuzz.sh sets it to `python/` and the
//! venv's site-packages, for numpy and pyarrow).

use std::sync::{Arc, Once};

use bytes::Bytes;
use pyo3::prelude::*;
use pyo3::types::PyList;
use scylla_cql::frame::protocol_features::ProtocolFeatures;
use scylla_cql::frame::response::result::{self, DeserializedMetadataAndRawRows, Prepared, ResultMetadata, ResultWithDeserializedMetadata};

static START: Once = Once::new();

/// Runs `f` with the GIL, Python started and the package imported on the first call.
pub fn with_python<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> R {
    START.call_once(|| {
        // A small frame limit, so the fill budget it sets (src/codec/fill.rs) is reached in
        // microseconds rather than after filling 256 MiB: the refusal path is what is fuzzed.
        scylla_cql::frame::set_max_response_frame_length(1 << 20);
        Python::initialize();
        Python::attach(|py| -> PyResult<()> {
            let engine = pyo3::wrap_pymodule!(_engine::_engine)(py);
            py.import("sys")?.getattr("modules")?.set_item("turbocql._engine", &engine)?;
            // cluster.py hands the engine its objects at the end of its import.
            py.import("turbocql.cluster")?;
            py.import("turbocql")?.setattr("_engine", engine)?;
            py.import("numpy")?;
            py.import("pyarrow")?;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("the fuzz targets need turbocql, numpy and pyarrow on PYTHONPATH: {e}"));
    });
    Python::attach(f)
}

/// A RESULT body read as the crate reads one, when it is a well-formed ROWS result: its
/// metadata deserialized, its rows left as bytes for the codec. `cached` stands for the
/// prepared statement's result metadata (a ROWS result sent without its own).
pub fn rows_page(body: &[u8], cached: Option<&Arc<ResultMetadata<'static>>>) -> Option<DeserializedMetadataAndRawRows> {
    let parsed = result::deserialize_with_features(Bytes::copy_from_slice(body), cached, &ProtocolFeatures::default()).ok()?;
    match parsed.deserialize_metadata().ok()? {
        ResultWithDeserializedMetadata::Rows((page, _paging)) => Some(page),
        _ => None,
    }
}

/// A RESULT body read as a PREPARED result, when it is one.
pub fn prepared(body: &[u8]) -> Option<Prepared> {
    match result::deserialize_with_features(Bytes::copy_from_slice(body), None, &ProtocolFeatures::default()).ok()? {
        result::Result::Prepared(p) => Some(p),
        _ => None,
    }
}

/// Python values of every kind a user binds, for the prepared statements' markers: each
/// marker gets one of them, chosen by the input, and the codec must encode it or refuse it
/// with an exception.
pub fn palette(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let code = c"[None, True, 0, -1, 2**31, -2**63, 2**64, 2**200, 1.5, float('nan'), 'text', '', 'é' * 40, b'', b'\\x00' * 17, \
        bytearray(b'ab'), [], [1, 2, 3], ['a', None], (1, 'x', 2.0), (), {1: 'a'}, {'k': [1]}, {1, 2}, frozenset(), \
        __import__('uuid').UUID(int=7), __import__('uuid').uuid1(), __import__('datetime').datetime(2026, 12, 5, 1, 2, 3), \
        __import__('datetime').date(1, 1, 1), __import__('datetime').time(23, 59, 59, 999999), \
        __import__('datetime').timedelta(days=-3), __import__('decimal').Decimal('-1.5E+30'), __import__('decimal').Decimal('NaN'), \
        __import__('ipaddress').ip_address('::1'), '127.0.0.1', object(), __import__('turbocql.query').query.UNSET_VALUE]";
    Ok(py.eval(code, None, None)?.cast_into::<PyList>()?)
}
