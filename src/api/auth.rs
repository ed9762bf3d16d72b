//! Authentication by the application's `AuthProvider`: the crate's SASL exchange calls
//! the Python `Authenticator` it gives, once per connection, as the classic driver does
//! (`server_authenticator_class`, `initial_response`, `evaluate_challenge`,
//! `on_authentication_success`), each call on a blocking-pool thread (see [`attach`]).
//!
//! `PlainTextAuthProvider` does not come here: the crate's own username/password
//! authenticator does the same exchange without Python.

use std::sync::Arc;

use async_trait::async_trait;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use scylla::authentication::{AuthError, AuthenticatorProvider, AuthenticatorSession};

/// The engine side of a Python `AuthProvider`.
pub struct PyAuthProvider {
    pub provider: Arc<Py<PyAny>>,
}

/// One connection's Python `Authenticator`.
struct PyAuthSession {
    authenticator: Arc<Py<PyAny>>,
}

/// A Python exception as the crate's authentication error. Only the exception's type and
/// message: never the arguments the authenticator was called with.
fn auth_error(py: Python<'_>, what: &str, err: PyErr) -> AuthError {
    let kind = err.get_type(py).name().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    format!("{what} raised {kind}: {}", err.value(py))
}

/// Runs `f` with the GIL on a blocking-pool thread, never on the I/O thread that drives
/// the handshake (and every other connection): an authenticator that waits on a token
/// service, or for the GIL, holds up only its own connection. Fails the handshake once the
/// interpreter is exiting (a thread that takes the GIL then would be ended by Python in
/// the middle of Rust code).
async fn attach<T: Send + 'static>(f: impl for<'py> FnOnce(Python<'py>) -> Result<T, AuthError> + Send + 'static) -> Result<T, AuthError> {
    let called = tokio::task::spawn_blocking(move || Python::try_attach(f).unwrap_or_else(|| Err("the Python interpreter is exiting".to_string())));
    called.await.unwrap_or_else(|e| Err(format!("the authenticator's thread failed: {e}")))
}

fn token(value: Bound<'_, PyAny>, what: &str) -> Result<Option<Vec<u8>>, AuthError> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(s) = value.extract::<String>() {
        return Ok(Some(s.into_bytes()));
    }
    value.extract::<Vec<u8>>().map(Some).map_err(|_| {
        let kind = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        format!("{what} must return bytes or None, not {kind}")
    })
}

fn bytes_or_none<'py>(py: Python<'py>, data: Option<&[u8]>) -> Bound<'py, PyAny> {
    match data {
        Some(d) => PyBytes::new(py, d).into_any(),
        None => py.None().into_bound(py),
    }
}

/// The AUTH_SUCCESS token as the classic driver hands it over: text (empty when the server
/// sends none), bytes only when it is not UTF-8.
fn success_token<'py>(py: Python<'py>, data: Option<&[u8]>) -> Bound<'py, PyAny> {
    let data = data.unwrap_or_default();
    match std::str::from_utf8(data) {
        Ok(text) => pyo3::types::PyString::new(py, text).into_any(),
        Err(_) => PyBytes::new(py, data).into_any(),
    }
}

#[async_trait]
impl AuthenticatorProvider for PyAuthProvider {
    async fn start_authentication_session(&self, authenticator_name: &str) -> Result<(Option<Vec<u8>>, Box<dyn AuthenticatorSession>), AuthError> {
        let provider = self.provider.clone();
        let authenticator_name = authenticator_name.to_string();
        attach(move |py| {
            let provider = provider.bind(py);
            // The classic driver passes the node's address; the crate does not say which node
            // a connection goes to, so the host is None (docs/migrating.md's migration table).
            let authenticator = provider.call_method1("new_authenticator", (py.None(),)).map_err(|e| auth_error(py, "AuthProvider.new_authenticator", e))?;
            authenticator
                .setattr("server_authenticator_class", authenticator_name)
                .map_err(|e| auth_error(py, "setting Authenticator.server_authenticator_class", e))?;
            let initial = authenticator.call_method0("initial_response").map_err(|e| auth_error(py, "Authenticator.initial_response", e))?;
            let initial = token(initial, "Authenticator.initial_response")?;
            // The protocol sends an empty response for None (as the classic driver does).
            let initial = Some(initial.unwrap_or_default());
            Ok((initial, Box::new(PyAuthSession { authenticator: Arc::new(authenticator.unbind()) }) as Box<dyn AuthenticatorSession>))
        })
        .await
    }
}

#[async_trait]
impl AuthenticatorSession for PyAuthSession {
    async fn evaluate_challenge(&mut self, challenge: Option<&[u8]>) -> Result<Option<Vec<u8>>, AuthError> {
        let authenticator = self.authenticator.clone();
        let challenge = challenge.map(<[u8]>::to_vec);
        attach(move |py| {
            let response = authenticator
                .bind(py)
                .call_method1("evaluate_challenge", (bytes_or_none(py, challenge.as_deref()),))
                .map_err(|e| auth_error(py, "Authenticator.evaluate_challenge", e))?;
            Ok(Some(token(response, "Authenticator.evaluate_challenge")?.unwrap_or_default()))
        })
        .await
    }

    async fn success(&mut self, success: Option<&[u8]>) -> Result<(), AuthError> {
        let authenticator = self.authenticator.clone();
        let success = success.map(<[u8]>::to_vec);
        attach(move |py| {
            authenticator
                .bind(py)
                .call_method1("on_authentication_success", (success_token(py, success.as_deref()),))
                .map(|_| ())
                .map_err(|e| auth_error(py, "Authenticator.on_authentication_success", e))
        })
        .await
    }
}
