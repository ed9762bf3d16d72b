//! Gives the engine PyO3's `Py_3_*` cfgs for the Python it is built for: `codec::named_rows`
//! writes a tuple's fields itself, and a tuple gained a cached hash in CPython 3.14.
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
