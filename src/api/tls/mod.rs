//! TLS: the crate's rustls client configuration, built from the application's
//! `ssl.SSLContext` (`ssl_options` alone become one in the Python layer, `_cluster/tls.py`).
//!
//! The handshake is always rustls' (aws-lc-rs underneath), so the engine links no OpenSSL.
//! What the context asks for is honoured, or refused with an error naming it:
//! - protocol bounds (`minimum_version`, `maximum_version`, a fixed-version `protocol`,
//!   `OP_NO_TLSv1_2`/`OP_NO_TLSv1_3`) and the enabled ciphers (`get_ciphers()`): rustls
//!   offers what lies in both the context's set and its own (TLS 1.2 and 1.3, AEAD suites),
//!   and a context that leaves nothing raises;
//! - `verify_mode`, `check_hostname` and `server_hostname`, as the classic driver checks
//!   them ([`verify`]); `keylog_filename`; `OP_NO_TICKET`.
//!
//! Certificates are verified, and the client certificate found, in one of two ways
//! ([`Verifier`]):
//! - `python-openssl`: the context's own OpenSSL, shared at run time
//!   ([`python_openssl`]): its store (CA files, `capath`, `load_default_certs()`, CRLs),
//!   flags, depth and messages apply, and `load_cert_chain()` gives the client certificate;
//! - `rustls`: rustls' WebPKI verifier against the CA certificates the context exposes
//!   (`get_ca_certs(binary_form=True)`), where the Python's OpenSSL cannot be shared
//!   (python-build-standalone, a static `_ssl`). Client certificates then come from
//!   `ssl_options` files; what only OpenSSL could check (CRLs, other flags) raises.
//!
//! The first is taken when it can be; `TURBOCQL_TLS_VERIFIER=python-openssl|rustls`
//! forces one (the TLS tests run both).

pub mod python_openssl;
pub mod verify;

use std::collections::HashSet;
use std::io::Write;
use std::sync::Arc;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rustls::client::{ResolvesClientCert, Resumption, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::{CertifiedKey, Signer, SigningKey};
use rustls::{ClientConfig, RootCertStore, SignatureAlgorithm, SignatureScheme, SupportedCipherSuite};
use scylla::client::session::TlsContext;

pub use crate::errors::TlsFailure;
use crate::sync::Mutex;
use verify::{Checks, ContextVerifier, HostRule};

/// What the application asked for, from `Cluster(ssl_context=..., ssl_options=...)`.
pub struct TlsRequest<'py> {
    /// The `ssl.SSLContext` (built from `ssl_options` by the Python layer when only those
    /// were given).
    pub context: Bound<'py, PyAny>,
    /// `ssl_options["server_hostname"]`: the name the node certificates must carry when
    /// `check_hostname` is on, instead of each node's address.
    pub server_hostname: Option<String>,
    /// `ssl_options["certfile"]` / `["keyfile"]`: the client certificate as files, which
    /// the `rustls` way reads itself.
    pub certfile: Option<String>,
    pub keyfile: Option<String>,
}

/// How certificates are verified and the client certificate found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verifier {
    PythonOpenSsl,
    Rustls,
}

impl Verifier {
    pub fn name(self) -> &'static str {
        match self {
            Verifier::PythonOpenSsl => "python-openssl",
            Verifier::Rustls => "rustls",
        }
    }
}

/// The engine's TLS context and where a failed handshake says why.
pub struct EngineTls {
    pub context: TlsContext,
    pub failure: Arc<Mutex<Option<TlsFailure>>>,
    pub verifier: Verifier,
}

/// The environment switch that forces one verifier.
const VERIFIER_ENV: &str = "TURBOCQL_TLS_VERIFIER";

/// What `TURBOCQL_TLS_VERIFIER` forces, if anything.
fn forced_verifier() -> PyResult<Option<Verifier>> {
    match std::env::var(VERIFIER_ENV).unwrap_or_default().as_str() {
        "rustls" => Ok(Some(Verifier::Rustls)),
        "python-openssl" => Ok(Some(Verifier::PythonOpenSsl)),
        "" | "auto" => Ok(None),
        other => Err(PyValueError::new_err(format!("{VERIFIER_ENV}={other:?}: use python-openssl, rustls or auto"))),
    }
}

/// The verifier a context gets here (the switch, else whether this Python's OpenSSL can be
/// shared), and why it is not `python-openssl` when it is not.
fn expected_verifier(py: Python<'_>) -> PyResult<(Verifier, Option<String>)> {
    Ok(match (forced_verifier()?, python_openssl::unavailable(py)) {
        (Some(Verifier::Rustls), _) => (Verifier::Rustls, Some(format!("{VERIFIER_ENV}=rustls"))),
        (_, None) => (Verifier::PythonOpenSsl, None),
        (_, Some(why)) => (Verifier::Rustls, Some(format!("this Python's OpenSSL cannot be shared: {why}"))),
    })
}

/// The verifier a context gets here, and why it is not `python-openssl` when it is not
/// (what `_tls.load_lazy_cas` asks before connecting).
#[pyfunction]
pub fn tls_verifier(py: Python<'_>) -> PyResult<(String, Option<String>)> {
    let (verifier, why) = expected_verifier(py)?;
    Ok((verifier.name().into(), why))
}

/// The crate's TLS context for `request`, or a clear error naming what cannot be honoured.
pub fn tls_context(py: Python<'_>, request: &TlsRequest<'_>) -> PyResult<EngineTls> {
    let ctx = &request.context;
    let ssl = crate::pyrefs::ssl(py)?;
    if !ctx.is_instance(&ssl.getattr("SSLContext")?)? {
        return Err(PyTypeError::new_err(format!("ssl_context must be an ssl.SSLContext, not {}", ctx.get_type().name()?)));
    }
    if ctx.getattr("protocol")?.eq(ssl.getattr("PROTOCOL_TLS_SERVER")?)? {
        return Err(PyValueError::new_err("ssl_context is a server-side context (PROTOCOL_TLS_SERVER): use a client context"));
    }
    let verify_mode: i64 = ctx.getattr("verify_mode")?.extract()?;
    let check_hostname: bool = ctx.getattr("check_hostname")?.extract()?;
    let options: u64 = ctx.getattr("options")?.extract()?;
    let op = |name: &str| -> PyResult<u64> { ssl.getattr(name)?.extract() };

    let provider = Arc::new(provider_for(ctx)?);
    let versions = protocol_versions(ctx, options, op("OP_NO_TLSv1_2")?, op("OP_NO_TLSv1_3")?, &provider)?;

    let (verifier, shared) = choose_verifier(py, ctx)?;
    let failure = Arc::new(Mutex::new(None));
    // The context's client certificate counts whatever it verifies (CERT_NONE included);
    // ssl_options' files stand in for it where it cannot be read.
    let from_context = match &shared {
        Some(shared) => shared.client_identity().map_err(PyValueError::new_err)?,
        None => None,
    };
    let checks = match (verify_mode, shared) {
        (0, _) => Checks::None,
        (_, Some(shared)) => Checks::PythonOpenSsl(shared),
        (_, None) => Checks::WebPki(webpki_verifier(py, ctx, &provider)?),
    };
    let identity = match (from_context, &request.certfile) {
        (Some(id), _) => Some(id),
        (None, Some(certfile)) => Some(identity_from_files(certfile, request.keyfile.as_deref())?),
        (None, None) => None,
    };
    // Under `rustls` a context's own client certificate cannot be seen; a server that asks
    // for one is refused rather than answered without it.
    let unseen_identity = identity.is_none() && request.certfile.is_none() && verifier == Verifier::Rustls;
    let verifier_obj = ContextVerifier {
        host: match (check_hostname, &request.server_hostname) {
            (false, _) => HostRule::Off,
            (true, Some(name)) => HostRule::Name(name.clone()),
            (true, None) => HostRule::NodeAddress,
        },
        checks,
        algorithms: provider.signature_verification_algorithms,
        failure: failure.clone(),
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| PyValueError::new_err(format!("ssl_context cannot be honoured: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier_obj));
    let mut config = match identity {
        Some((chain, key)) => {
            builder.with_client_auth_cert(chain, key).map_err(|e| PyValueError::new_err(format!("the client certificate or key cannot be used: {e}")))?
        }
        None if unseen_identity => builder.with_client_cert_resolver(Arc::new(UnseenClientCertificate { failure: failure.clone() })),
        None => builder.with_no_client_auth(),
    };
    if options & op("OP_NO_TICKET")? != 0 {
        config.resumption = Resumption::disabled();
    }
    if let Some(path) = ctx.getattr("keylog_filename")?.extract::<Option<String>>()? {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| PyValueError::new_err(format!("keylog_filename {path:?} cannot be opened: {e}")))?;
        config.key_log = Arc::new(KeyLogFile(Mutex::new(file)));
    }
    Ok(EngineTls { context: TlsContext::Rustls023(Arc::new(config)), failure, verifier })
}

/// `python-openssl` with the shared context when it can be had (or is forced), else `rustls`.
fn choose_verifier(py: Python<'_>, ctx: &Bound<'_, PyAny>) -> PyResult<(Verifier, Option<python_openssl::SharedContext>)> {
    let forced = forced_verifier()?;
    if forced == Some(Verifier::Rustls) {
        return Ok((Verifier::Rustls, None));
    }
    match python_openssl::share(py, ctx) {
        Ok(shared) => Ok((Verifier::PythonOpenSsl, Some(shared))),
        Err(why) if forced == Some(Verifier::PythonOpenSsl) => {
            Err(PyValueError::new_err(format!("{VERIFIER_ENV}=python-openssl, but this Python's OpenSSL cannot be shared: {why}")))
        }
        Err(_) => Ok((Verifier::Rustls, None)),
    }
}

/// The aws-lc-rs provider with only the cipher suites the context enables.
fn provider_for(ctx: &Bound<'_, PyAny>) -> PyResult<CryptoProvider> {
    let mut enabled = HashSet::new();
    let mut names = Vec::new();
    for c in ctx.call_method0("get_ciphers")?.try_iter()? {
        let c = c?;
        let c = c.cast::<PyDict>()?;
        let id: u64 = c.get_item("id")?.map(|v| v.extract()).transpose()?.unwrap_or(0);
        enabled.insert((id & 0xffff) as u16);
        if let Some(name) = c.get_item("name")? {
            names.push(name.extract::<String>()?);
        }
    }
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    let ours: Vec<String> = provider.cipher_suites.iter().map(|s| format!("{:?}", s.suite())).collect();
    provider.cipher_suites.retain(|s| enabled.contains(&u16::from(s.suite())));
    if provider.cipher_suites.is_empty() {
        return Err(PyValueError::new_err(format!(
            "none of the ciphers this ssl_context enables ({}) is one turbocql's TLS speaks ({})",
            names.join(":"),
            ours.join(", ")
        )));
    }
    Ok(provider)
}

/// The TLS versions the context allows that rustls speaks and has a cipher suite for.
fn protocol_versions(
    ctx: &Bound<'_, PyAny>,
    options: u64,
    no_tls12: u64,
    no_tls13: u64,
    provider: &CryptoProvider,
) -> PyResult<Vec<&'static rustls::SupportedProtocolVersion>> {
    const TLS1_2: i64 = 0x303;
    const TLS1_3: i64 = 0x304;
    let ssl = crate::pyrefs::ssl(ctx.py())?;
    let protocol = ctx.getattr("protocol")?;
    // A context of a fixed-version method speaks that version whatever its bounds say.
    let fixed = [("PROTOCOL_TLSv1", 0x301), ("PROTOCOL_TLSv1_1", 0x302), ("PROTOCOL_TLSv1_2", TLS1_2)]
        .into_iter()
        .find(|(name, _)| ssl.getattr(*name).and_then(|p| protocol.eq(p)).unwrap_or(false))
        .map(|(_, v)| v);
    let (mut low, mut high): (i64, i64) = (ctx.getattr("minimum_version")?.extract()?, ctx.getattr("maximum_version")?.extract()?);
    // MINIMUM_SUPPORTED and MAXIMUM_SUPPORTED.
    if low == -2 {
        low = 0;
    }
    if high == -1 {
        high = i64::MAX;
    }
    if let Some(v) = fixed {
        (low, high) = (v, v);
    }
    let has_suites = |tls13: bool| provider.cipher_suites.iter().any(|s| matches!(s, SupportedCipherSuite::Tls13(_)) == tls13);
    let mut versions = Vec::new();
    if (low..=high).contains(&TLS1_3) && options & no_tls13 == 0 && has_suites(true) {
        versions.push(&rustls::version::TLS13);
    }
    if (low..=high).contains(&TLS1_2) && options & no_tls12 == 0 && has_suites(false) {
        versions.push(&rustls::version::TLS12);
    }
    if versions.is_empty() {
        return Err(PyValueError::new_err(format!(
            "ssl_context allows no protocol version turbocql's TLS speaks with the ciphers it enables (TLS 1.2 and 1.3; \
             the context's bounds: {}, {}, options 0x{options:x})",
            ctx.getattr("minimum_version")?,
            ctx.getattr("maximum_version")?,
        )));
    }
    Ok(versions)
}

/// rustls' WebPKI verifier over the CA certificates `ctx` exposes, or a clear error for
/// what it cannot check as the context asks.
fn webpki_verifier(py: Python<'_>, ctx: &Bound<'_, PyAny>, provider: &Arc<CryptoProvider>) -> PyResult<Arc<WebPkiServerVerifier>> {
    let ssl = crate::pyrefs::ssl(py)?;
    let flags: u64 = ctx.getattr("verify_flags")?.extract()?;
    let flag = |name: &str| -> PyResult<u64> { ssl.getattr(name)?.extract() };
    // Why rustls verifies here rather than the context's own OpenSSL.
    let why_rustls = expected_verifier(py)?.1.unwrap_or_else(|| "the context's layout could not be verified".into());
    if flags & flag("VERIFY_CRL_CHECK_LEAF")? != 0 || flags & flag("VERIFY_CRL_CHECK_CHAIN")? != 0 {
        return Err(PyValueError::new_err(format!(
            "ssl_context checks CRLs (verify_flags), which turbocql can honour only with this Python's own OpenSSL, \
             which is not used here ({why_rustls})"
        )));
    }
    let partial_chain = flag("VERIFY_X509_PARTIAL_CHAIN")?;
    // Strict X.509 checks are what WebPKI always does; trusted-first changes no outcome.
    let understood = flag("VERIFY_X509_STRICT")? | flag("VERIFY_X509_TRUSTED_FIRST")? | partial_chain;
    if flags & !understood != 0 {
        return Err(PyValueError::new_err(format!(
            "ssl_context's verify_flags {flags:#x} ask for checks turbocql can honour only with this Python's own \
             OpenSSL, which is not used here ({why_rustls})"
        )));
    }
    let mut roots = RootCertStore::empty();
    for der in ctx.call_method1("get_ca_certs", (true,))?.try_iter()? {
        let der: Vec<u8> = der?.extract()?;
        // Without VERIFY_X509_PARTIAL_CHAIN, OpenSSL anchors a chain only at a self-signed
        // certificate of its store.
        if flags & partial_chain == 0 && !verify::is_self_signed(&der) {
            continue;
        }
        roots.add(CertificateDer::from(der)).map_err(|e| PyValueError::new_err(format!("a CA certificate of ssl_context cannot be used: {e}")))?;
    }
    if roots.is_empty() {
        // For the system's CAs, the file of them this Python would read, where there is one.
        let system_file: Option<String> =
            ssl.call_method0("get_default_verify_paths").and_then(|p| p.getattr("cafile")).and_then(|f| f.extract()).unwrap_or(None);
        let system = match system_file {
            Some(file) => format!("; the system's CAs are in {file:?}"),
            None => String::new(),
        };
        return Err(PyValueError::new_err(format!(
            "ssl_context verifies certificates, but turbocql sees no CA certificate in it: rustls verifies here \
             ({why_rustls}), and sees only the certificates loaded from a file or data, not \
             a capath directory nor the system's default paths (load_default_certs()). Load the CA with \
             load_verify_locations(cafile=... or cadata=...), or give ssl_options={{'ca_certs': ...}}{system}"
        )));
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| PyValueError::new_err(format!("ssl_context's CA certificates cannot be used: {e}")))
}

/// The client certificate chain and key of `ssl_options["certfile"]` / `["keyfile"]`
/// (the key in the certificate file when no key file is given).
fn identity_from_files(certfile: &str, keyfile: Option<&str>) -> PyResult<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let chain = CertificateDer::pem_file_iter(certfile)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| PyValueError::new_err(format!("ssl_options certfile {certfile:?} cannot be read: {e}")))?;
    if chain.is_empty() {
        return Err(PyValueError::new_err(format!("ssl_options certfile {certfile:?} holds no certificate")));
    }
    let keyfile = keyfile.unwrap_or(certfile);
    let key = PrivateKeyDer::from_pem_file(keyfile)
        .map_err(|e| PyValueError::new_err(format!("ssl_options keyfile {keyfile:?} holds no private key turbocql can read (PEM, not encrypted): {e}")))?;
    Ok((chain, key))
}

/// Under `rustls`, the answer to a server that asks for a client certificate the context
/// may hold but the engine cannot see: a key that refuses to sign, so the handshake fails
/// (rather than going on without the certificate), naming the `ssl_options` keys that give it.
#[derive(Debug)]
struct UnseenClientCertificate {
    failure: Arc<Mutex<Option<TlsFailure>>>,
}

const UNSEEN_CLIENT_CERTIFICATE: &str = "the server asks for a client certificate, and turbocql cannot read one from an \
    ssl_context on this Python (its OpenSSL cannot be shared): give the certificate as ssl_options={'ca_certs': ..., \
    'certfile': ..., 'keyfile': ...} instead of ssl_context";

impl ResolvesClientCert for UnseenClientCertificate {
    fn resolve(&self, _root_hint_subjects: &[&[u8]], _sigschemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        *self.failure.lock() = Some(TlsFailure::ClientCertificateUnavailable(UNSEEN_CLIENT_CERTIFICATE.into()));
        Some(Arc::new(CertifiedKey::new(Vec::new(), Arc::new(RefusingKey))))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

#[derive(Debug)]
struct RefusingKey;

impl SigningKey for RefusingKey {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        offered.first().map(|&scheme| Box::new(RefusingSigner(scheme)) as Box<dyn Signer>)
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        SignatureAlgorithm::Unknown(0)
    }
}

#[derive(Debug)]
struct RefusingSigner(SignatureScheme);

impl Signer for RefusingSigner {
    fn sign(&self, _message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        Err(rustls::Error::General(UNSEEN_CLIENT_CERTIFICATE.into()))
    }

    fn scheme(&self) -> SignatureScheme {
        self.0
    }
}

/// `keylog_filename`: the session secrets in the NSS key log format, as OpenSSL writes them.
#[derive(Debug)]
struct KeyLogFile(Mutex<std::fs::File>);

impl rustls::KeyLog for KeyLogFile {
    fn log(&self, label: &str, client_random: &[u8], secret: &[u8]) {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let line = format!("{label} {} {}\n", hex(client_random), hex(secret));
        let _ = self.0.lock().write_all(line.as_bytes());
    }
}
