//! TLS: the engine's OpenSSL context, built from the application's `ssl.SSLContext`.
//!
//! Python's `ssl` module and this engine link the same OpenSSL library (checked at
//! connect, [`same_openssl`]), so the engine reads the user's `SSL_CTX` directly instead of
//! re-parsing files: its certificate store (CA files, `load_default_certs`, CRLs), client
//! certificate, key and chain, protocol bounds, options, ciphers, security level and
//! verification parameters (depth, flags, host-check flags) are all carried over. The
//! engine builds its own context from them rather than sharing the user's, because its
//! verification differs in one point: the `scylla` crate checks every node's certificate
//! against the node's IP address, which the classic driver only does when
//! `check_hostname` is on ([`build`] relaxes that check otherwise, or checks
//! `server_hostname` instead when one is given).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Write;
use std::sync::Arc;

use crate::sync::Mutex;
use openssl::ssl::{SslContextBuilder, SslContextRef, SslMethod, SslVerifyMode};
use openssl::x509::store::X509Store;
use openssl::x509::X509;
use openssl_sys as ffi;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use scylla::client::session::OpenSsl010Config;
use scylla::client::session::TlsContext;

use foreign_types_shared::{ForeignType, ForeignTypeRef};

// Functions of the OpenSSL 3 API that `openssl-sys` does not declare.
extern "C" {
    fn SSL_CTX_get_ciphers(ctx: *const ffi::SSL_CTX) -> *mut ffi::stack_st_SSL_CIPHER;
    fn SSL_CTX_get_verify_depth(ctx: *const ffi::SSL_CTX) -> c_int;
    fn X509_STORE_up_ref(store: *mut ffi::X509_STORE) -> c_int;
    fn X509_VERIFY_PARAM_set1(to: *mut ffi::X509_VERIFY_PARAM, from: *const ffi::X509_VERIFY_PARAM) -> c_int;
}

/// `SSL_CTX_get0_chain_certs` is a macro over this control code.
const SSL_CTRL_GET_CHAIN_CERTS: c_int = 115;

/// What the application asked for, read from `Cluster(ssl_context=..., ssl_options=...)`.
pub struct TlsRequest<'py> {
    /// The `ssl.SSLContext` (built from `ssl_options` by the Python layer when only those
    /// were given).
    pub context: Bound<'py, PyAny>,
    /// `ssl_options["server_hostname"]`: the name the node certificates must carry when
    /// `check_hostname` is on, instead of each node's address.
    pub server_hostname: Option<String>,
}

/// The engine's TLS context, and why the last certificate it rejected failed (OpenSSL's
/// handshake error does not say; a failed connect reports it).
pub struct EngineTls {
    pub context: TlsContext,
    pub rejected: Arc<Mutex<Option<String>>>,
}

/// The crate's TLS context for `request`, or a clear error naming what cannot be honoured.
pub fn tls_context(py: Python<'_>, request: &TlsRequest<'_>) -> PyResult<EngineTls> {
    let ctx = &request.context;
    let ssl_mod = py.import("ssl")?;
    if !ctx.is_instance(&ssl_mod.getattr("SSLContext")?)? {
        return Err(PyTypeError::new_err(format!("ssl_context must be an ssl.SSLContext, not {}", ctx.get_type().name()?)));
    }
    if ctx.getattr("protocol")?.eq(ssl_mod.getattr("PROTOCOL_TLS_SERVER")?)? {
        return Err(PyValueError::new_err("ssl_context is a server-side context (PROTOCOL_TLS_SERVER): use a client context"));
    }
    if !same_openssl(py)? {
        return Err(PyValueError::new_err(format!(
            "this Python's ssl module uses its own copy of OpenSSL ({}), not the system library turbocql's engine \
             links, so turbocql cannot read the SSLContext; use a Python built against the system OpenSSL",
            ssl_mod.getattr("OPENSSL_VERSION")?
        )));
    }
    let raw = ssl_ctx_ptr(ctx)?;
    // The pointer is read at a fixed offset of the context object: check that it is the
    // context Python reports before trusting anything read through it.
    let python_mode: i32 = ctx.getattr("verify_mode")?.extract()?;
    // SAFETY: `raw` is the SSL_CTX of a live `ssl.SSLContext` (held by `ctx`), of the same
    // OpenSSL library; it is only read here.
    let user = unsafe { SslContextRef::from_ptr(raw) };
    let native_peer = user.verify_mode().contains(SslVerifyMode::PEER);
    if native_peer != (python_mode != 0) {
        return Err(PyValueError::new_err("turbocql could not read this ssl.SSLContext (its layout is not the one this engine knows)"));
    }
    let check_hostname: bool = ctx.getattr("check_hostname")?.extract()?;
    let keylog: Option<String> = ctx.getattr("keylog_filename")?.extract()?;
    let rejected = Arc::new(Mutex::new(None));
    let builder = build(user, check_hostname, request.server_hostname.as_deref(), keylog, rejected.clone())
        .map_err(|e| PyValueError::new_err(format!("could not build the TLS context from ssl_context: {e}")))?;
    Ok(EngineTls { context: TlsContext::from(OpenSsl010Config::from_dangerous_builder(builder)), rejected })
}

/// The `SSL_CTX *` of an `ssl.SSLContext`: the first field after the object header in
/// CPython's `PySSLContext` (3.11 to 3.13).
fn ssl_ctx_ptr(ctx: &Bound<'_, PyAny>) -> PyResult<*mut ffi::SSL_CTX> {
    // SAFETY: `ctx` is an instance of ssl.SSLContext (a subclass of `_ssl._SSLContext`,
    // whose C struct starts with PyObject_HEAD then `SSL_CTX *ctx`).
    let raw = unsafe {
        let base = ctx.as_ptr() as *const u8;
        *(base.add(std::mem::size_of::<pyo3::ffi::PyObject>()) as *const *mut ffi::SSL_CTX)
    };
    if raw.is_null() {
        return Err(PyValueError::new_err("ssl_context has no OpenSSL context"));
    }
    Ok(raw)
}

/// Whether Python's `_ssl` module calls the same OpenSSL functions as this engine: the
/// address of `SSL_CTX_new` as `_ssl` resolves it against the engine's.
fn same_openssl(py: Python<'_>) -> PyResult<bool> {
    let ours = ffi::SSL_CTX_new as *const () as usize;
    let name = CString::new("SSL_CTX_new").unwrap();
    let ssl_ext = py.import("_ssl")?;
    let theirs = match ssl_ext.getattr("__file__").and_then(|f| f.extract::<String>()) {
        Ok(path) => {
            let path = CString::new(path).map_err(|e| PyValueError::new_err(e.to_string()))?;
            // SAFETY: RTLD_NOLOAD only looks up an already loaded object (the `_ssl`
            // extension Python imported); the handle is closed right after the lookup.
            unsafe {
                let handle = libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
                if handle.is_null() {
                    return Ok(false);
                }
                let sym = libc::dlsym(handle, name.as_ptr()) as usize;
                libc::dlclose(handle);
                sym
            }
        }
        // `_ssl` built into the interpreter: it resolves through the global scope.
        // SAFETY: a symbol lookup only.
        Err(_) => unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize },
    };
    Ok(theirs != 0 && theirs == ours)
}

/// A client context with everything `user` configures, and the classic driver's host
/// check: the node's address when `check_hostname` is on, `server_hostname` instead when
/// given, none when `check_hostname` is off.
fn build(
    user: &SslContextRef,
    check_hostname: bool,
    server_hostname: Option<&str>,
    keylog: Option<String>,
    rejected: Arc<Mutex<Option<String>>>,
) -> Result<SslContextBuilder, openssl::error::ErrorStack> {
    let mut b = SslContextBuilder::new(SslMethod::tls_client())?;
    let src = user.as_ptr();
    let dst = b.as_ptr();
    // SAFETY: both pointers are live contexts; the getters return borrowed objects whose
    // references are taken (up_ref) before they are handed to the new context.
    unsafe {
        ffi::SSL_CTX_clear_options(dst, ffi::SSL_CTX_get_options(dst));
        ffi::SSL_CTX_set_options(dst, ffi::SSL_CTX_get_options(src));
        let store = ffi::SSL_CTX_get_cert_store(src);
        if !store.is_null() && X509_STORE_up_ref(store) == 1 {
            b.set_cert_store(X509Store::from_ptr(store));
        }
        if X509_VERIFY_PARAM_set1(ffi::SSL_CTX_get0_param(dst), ffi::SSL_CTX_get0_param(src)) != 1 {
            return Err(openssl::error::ErrorStack::get());
        }
        let depth = SSL_CTX_get_verify_depth(src);
        if depth >= 0 {
            b.set_verify_depth(depth as u32);
        }
        let min = ffi::SSL_CTX_get_min_proto_version(src);
        let max = ffi::SSL_CTX_get_max_proto_version(src);
        ffi::SSL_CTX_set_min_proto_version(dst, min);
        ffi::SSL_CTX_set_max_proto_version(dst, max);
        let (tls12, tls13) = cipher_lists(src);
        if tls12.is_empty() {
            // No TLS 1.2 cipher left enabled: only TLS 1.3 can be negotiated.
            b.set_min_proto_version(Some(openssl::ssl::SslVersion::TLS1_3))?;
        } else {
            b.set_cipher_list(&tls12)?;
        }
        if !tls13.is_empty() {
            b.set_ciphersuites(&tls13)?;
        }
        b.set_security_level(user.security_level());
        if let Some(cert) = user.certificate() {
            b.set_certificate(cert)?;
            let mut chain: *mut ffi::stack_st_X509 = std::ptr::null_mut();
            ffi::SSL_CTX_ctrl(src as *mut _, SSL_CTRL_GET_CHAIN_CERTS, 0, &mut chain as *mut _ as *mut c_void);
            for x in stack_items(chain as *const ffi::OPENSSL_STACK) {
                ffi::X509_up_ref(x as *mut ffi::X509);
                b.add_extra_chain_cert(X509::from_ptr(x as *mut ffi::X509))?;
            }
            for x in user.extra_chain_certs() {
                b.add_extra_chain_cert(x.to_owned())?;
            }
        }
        if let Some(key) = user.private_key() {
            b.set_private_key(key)?;
        }
    }
    if let (true, Some(name)) = (check_hostname, server_hostname) {
        b.verify_param_mut().set_host(name)?;
    }
    // The crate sets each node's IP as the expected identity; that check stands only when
    // the classic driver would check the node's address.
    let relax_ip = !check_hostname || server_hostname.is_some();
    b.set_verify_callback(user.verify_mode(), move |ok, store| {
        let accepted = ok || (relax_ip && store.error().as_raw() == ffi::X509_V_ERR_IP_ADDRESS_MISMATCH);
        if !accepted {
            *rejected.lock() = Some(store.error().error_string().to_string());
        }
        accepted
    });
    if let Some(path) = keylog {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path);
        if let Ok(file) = file {
            let file = Arc::new(Mutex::new(file));
            b.set_keylog_callback(move |_, line| {
                let _ = writeln!(file.lock(), "{line}");
            });
        }
    }
    Ok(b)
}

/// The enabled ciphers of `ctx`, as OpenSSL cipher-list strings: TLS 1.2 and below, then
/// TLS 1.3 (whose names all start with `TLS_`).
unsafe fn cipher_lists(ctx: *const ffi::SSL_CTX) -> (String, String) {
    let mut tls12 = Vec::new();
    let mut tls13 = Vec::new();
    // SAFETY: the stack and the names belong to `ctx`, alive for this call.
    for c in unsafe { stack_items(SSL_CTX_get_ciphers(ctx) as *const ffi::OPENSSL_STACK) } {
        let name = unsafe { CStr::from_ptr(ffi::SSL_CIPHER_get_name(c as *const ffi::SSL_CIPHER) as *const c_char) };
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("TLS_") {
            tls13.push(name);
        } else {
            tls12.push(name);
        }
    }
    (tls12.join(":"), tls13.join(":"))
}

/// The items of an OpenSSL stack (none for a null stack).
unsafe fn stack_items(stack: *const ffi::OPENSSL_STACK) -> Vec<*mut c_void> {
    if stack.is_null() {
        return Vec::new();
    }
    // SAFETY: `stack` is a live OpenSSL stack (the caller's contract).
    unsafe { (0..ffi::OPENSSL_sk_num(stack)).map(|i| ffi::OPENSSL_sk_value(stack, i)).collect() }
}
