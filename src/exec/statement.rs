//! Statement: what a statement is, decided in one place ([`classify`]), for every path
//! (sync, `execute_async`, asyncio, `execute_concurrent*`, pipelines, batches).
//!
//! A statement is a str, a `SimpleStatement`, a `PreparedStatement`, a `BoundStatement` or
//! a `BatchStatement` (subclasses included), as in the classic driver's
//! `Session._create_response_future`. What it is and its own options (consistency, serial
//! consistency, fetch size, idempotence) are read here; `super::request::build` then makes
//! the request with the call's parameters and the session's defaults. A
//! `PreparedStatement`'s classification is kept on it (`_engine_opts`; assigning any of its
//! attributes drops it), so executing one reads a single attribute.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use super::options::{consistency_of, serial_consistency_of, FetchSize, OwnOptions};
use super::prepared::Prepared;
use crate::pyrefs::{self, PyRefs};

/// What kind of statement it is, with what the request is made of.
pub enum Kind {
    /// CQL text (a str or a `SimpleStatement`), whose `%s` markers the parameters fill.
    Simple(Py<PyString>),
    /// A `PreparedStatement`: the parameters are its values.
    Prepared(Py<Prepared>),
    /// A `BoundStatement`: its values are bound already (no parameters).
    Bound(Py<Prepared>, Py<PyAny>),
    /// A `BatchStatement` (no parameters).
    Batch(Py<PyAny>),
}

/// A statement, classified.
pub struct Classified {
    pub kind: Kind,
    pub own: OwnOptions,
}

impl Classified {
    fn clone_ref(&self, py: Python<'_>) -> Classified {
        let kind = match &self.kind {
            Kind::Simple(s) => Kind::Simple(s.clone_ref(py)),
            Kind::Prepared(p) => Kind::Prepared(p.clone_ref(py)),
            Kind::Bound(p, v) => Kind::Bound(p.clone_ref(py), v.clone_ref(py)),
            Kind::Batch(b) => Kind::Batch(b.clone_ref(py)),
        };
        Classified { kind, own: self.own }
    }

    pub fn traverse(&self, visit: &pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        match &self.kind {
            Kind::Simple(s) => visit.call(s),
            Kind::Prepared(p) => visit.call(p),
            Kind::Bound(p, v) => {
                visit.call(p)?;
                visit.call(v)
            }
            Kind::Batch(b) => visit.call(b),
        }
    }
}

/// A `PreparedStatement`'s classification, kept on it as `_engine_opts`.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct ClassifiedStatement(Classified);

#[pymethods]
impl ClassifiedStatement {
    fn __traverse__(&self, visit: pyo3::gc::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        self.0.traverse(&visit)
    }
}

/// What `query` is (see the module doc). A TypeError for anything else.
pub fn classify(py: Python<'_>, query: &Bound<'_, PyAny>) -> PyResult<Classified> {
    let refs = pyrefs::get(py)?;
    let cache_key = pyo3::intern!(py, "_engine_opts");
    let prepared_type = refs.PreparedStatement.bind(py);
    if query.get_type().is(prepared_type) {
        if let Ok(cached) = query.getattr(cache_key)?.cast_into::<ClassifiedStatement>() {
            return Ok(cached.get().0.clone_ref(py));
        }
    }
    if let Ok(s) = query.cast::<PyString>() {
        return Ok(Classified { kind: Kind::Simple(s.clone().unbind()), own: OwnOptions::default() });
    }
    if query.is_instance(prepared_type)? {
        let handle = query.getattr(pyo3::intern!(py, "_prepared"))?.cast_into::<Prepared>()?.unbind();
        let classified = Classified { kind: Kind::Prepared(handle), own: own_options(py, refs, query, true)? };
        if query.get_type().is(prepared_type) {
            query.setattr(cache_key, ClassifiedStatement(classified.clone_ref(py)))?;
        }
        return Ok(classified);
    }
    if query.is_instance(refs.BoundStatement.bind(py))? {
        let ps = query.getattr(pyo3::intern!(py, "prepared_statement"))?;
        let handle = ps.getattr(pyo3::intern!(py, "_prepared"))?.cast_into::<Prepared>()?.unbind();
        let values = query.getattr(pyo3::intern!(py, "values"))?.unbind();
        return Ok(Classified { kind: Kind::Bound(handle, values), own: own_options(py, refs, query, true)? });
    }
    if query.is_instance(refs.SimpleStatement.bind(py))? {
        let text = query.getattr(pyo3::intern!(py, "query_string"))?.cast_into::<PyString>()?.unbind();
        return Ok(Classified { kind: Kind::Simple(text), own: own_options(py, refs, query, true)? });
    }
    if query.is_instance(refs.BatchStatement.bind(py))? {
        return Ok(Classified { kind: Kind::Batch(query.clone().unbind()), own: own_options(py, refs, query, false)? });
    }
    Err(PyTypeError::new_err(format!(
        "query must be a str or a Statement (SimpleStatement, PreparedStatement, BoundStatement, BatchStatement), not {}",
        query.get_type().name()?
    )))
}

/// A statement's own options (`fetch_size` only where `paged`: a batch has none).
fn own_options(py: Python<'_>, refs: &PyRefs, stmt: &Bound<'_, PyAny>, paged: bool) -> PyResult<OwnOptions> {
    let fetch_size = if paged {
        let f = stmt.getattr(pyo3::intern!(py, "fetch_size"))?;
        if f.is(refs.FETCH_SIZE_UNSET.bind(py)) {
            FetchSize::Default
        } else {
            FetchSize::of(f.extract()?)
        }
    } else {
        FetchSize::Unpaged
    };
    Ok(OwnOptions {
        consistency: consistency_of(&stmt.getattr(pyo3::intern!(py, "consistency_level"))?)?,
        serial: serial_consistency_of(&stmt.getattr(pyo3::intern!(py, "serial_consistency_level"))?)?,
        fetch_size,
        idempotent: stmt.getattr(pyo3::intern!(py, "is_idempotent"))?.is_truthy()?,
    })
}

/// Whether CQL `text` starts (after blanks and comments) with CREATE, ALTER or DROP: a
/// statement that may change the schema, whose result makes the session read the schema
/// metadata again before it is returned (`Session._own_schema_change`, as the classic
/// driver refreshes after its own SCHEMA_CHANGE results). The crate does not say which
/// results were schema changes; a CREATE ROLE or the like is told apart in Python.
pub fn may_change_schema(text: &str) -> bool {
    let mut rest = text.trim_start();
    loop {
        if let Some(line) = rest.strip_prefix("--").or_else(|| rest.strip_prefix("//")) {
            rest = line.split_once('\n').map_or("", |(_, after)| after).trim_start();
        } else if let Some(block) = rest.strip_prefix("/*") {
            rest = block.split_once("*/").map_or("", |(_, after)| after).trim_start();
        } else {
            break;
        }
    }
    let word = rest.split(|c: char| !c.is_ascii_alphabetic()).next().unwrap_or("");
    ["CREATE", "ALTER", "DROP"].iter().any(|verb| word.eq_ignore_ascii_case(verb))
}

#[cfg(test)]
mod tests {
    use super::may_change_schema;

    #[test]
    fn schema_verbs_are_found_after_blanks_and_comments() {
        assert!(may_change_schema("CREATE TABLE t (k int PRIMARY KEY)"));
        assert!(may_change_schema("  \n alter table t add v int"));
        assert!(may_change_schema("-- why\n/* note */ Drop KEYSPACE ks"));
        assert!(may_change_schema("// x\ncreate function f() ..."));
        assert!(!may_change_schema("INSERT INTO t (k) VALUES (1)"));
        assert!(!may_change_schema("SELECT * FROM created"));
        assert!(!may_change_schema("CREATED"));
        assert!(!may_change_schema("/* unterminated"));
        assert!(!may_change_schema(""));
    }
}
