//! Prepared: a statement prepared on the cluster, with its metadata
//! (`PreparedStatement._prepared` on the Python side).

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use scylla::statement::prepared::PreparedStatement;

use crate::codec::types::type_name;
use crate::codec::values::bind_row;

/// A prepared statement with its metadata.
#[pyclass(frozen, module = "turbocql._engine")]
pub struct Prepared {
    pub(crate) stmt: PreparedStatement,
}

#[pymethods]
impl Prepared {
    #[getter]
    fn query_string(&self) -> &str {
        self.stmt.get_statement()
    }
    #[getter]
    fn query_id<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.stmt.get_id())
    }
    #[getter]
    fn param_names(&self) -> Vec<String> {
        self.stmt.get_variable_col_specs().iter().map(|s| s.name().to_string()).collect()
    }
    #[getter]
    fn param_types(&self) -> Vec<String> {
        self.stmt.get_variable_col_specs().iter().map(|s| type_name(s.typ())).collect()
    }
    #[getter]
    fn result_column_names(&self) -> Vec<String> {
        self.stmt.get_current_result_set_col_specs().get().iter().map(|s| s.name().to_string()).collect()
    }
    #[getter]
    fn result_column_types(&self) -> Vec<String> {
        self.stmt.get_current_result_set_col_specs().get().iter().map(|s| type_name(s.typ())).collect()
    }
    #[getter]
    fn routing_key_indexes(&self) -> Vec<u16> {
        let mut pk: Vec<_> = self.stmt.get_variable_pk_indexes().to_vec();
        pk.sort_by_key(|p| p.sequence);
        pk.iter().map(|p| p.index).collect()
    }
    #[getter]
    fn keyspace(&self) -> Option<&str> {
        self.stmt.get_keyspace_name()
    }
    #[getter]
    fn table(&self) -> Option<&str> {
        self.stmt.get_table_name()
    }
    #[getter]
    fn is_lwt(&self) -> bool {
        self.stmt.is_confirmed_lwt()
    }
    /// Converts `values` as `execute` would, without sending anything (raises on bad input).
    #[pyo3(signature = (values=None))]
    fn check_values(&self, py: Python<'_>, values: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        bind_row(py, values.as_ref(), self.stmt.get_variable_col_specs().as_slice(), self.stmt.get_variable_pk_indexes()).map(|_| ())
    }
}
