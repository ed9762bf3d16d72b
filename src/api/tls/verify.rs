//! Server certificate checks of the engine's rustls connections, with the classic driver's
//! rules: `verify_mode` decides whether the chain is verified, `check_hostname` whether the
//! certificate must name the node (its address, or `ssl_options["server_hostname"]` when
//! given). The chain is verified by the context's own OpenSSL store when it is shared
//! ([`Checks::PythonOpenSsl`]), else by rustls' WebPKI verifier against the CA certificates
//! the context exposes ([`Checks::WebPki`]). A rejection is recorded in OpenSSL's words
//! (what Python's `ssl` would say) for the connect error.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use super::python_openssl::{HostCheck, SharedContext};
use super::TlsFailure;
use crate::sync::Mutex;

/// How the chain is verified.
pub enum Checks {
    /// `CERT_NONE`: not at all (the handshake's signatures still are).
    None,
    /// By the context's own OpenSSL store and verification parameters.
    PythonOpenSsl(SharedContext),
    /// By rustls' WebPKI verifier against the CA certificates the context exposes.
    WebPki(Arc<WebPkiServerVerifier>),
}

/// Which name the certificate must carry.
pub enum HostRule {
    /// `check_hostname` off: none.
    Off,
    /// The node's address (the name the crate connects with).
    NodeAddress,
    /// `ssl_options["server_hostname"]`.
    Name(String),
}

pub struct ContextVerifier {
    pub checks: Checks,
    pub host: HostRule,
    pub algorithms: WebPkiSupportedAlgorithms,
    /// Why the last certificate was rejected, for the connect error.
    pub failure: Arc<Mutex<Option<TlsFailure>>>,
}

impl std::fmt::Debug for ContextVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let checks = match self.checks {
            Checks::None => "none",
            Checks::PythonOpenSsl(_) => "python-openssl",
            Checks::WebPki(_) => "webpki",
        };
        f.debug_struct("ContextVerifier").field("checks", &checks).finish()
    }
}

impl ContextVerifier {
    fn reject(&self, reason: String) -> rustls::Error {
        *self.failure.lock() = Some(TlsFailure::CertificateRejected(reason.clone()));
        rustls::Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(Rejected(reason)))))
    }
}

/// A rejection reason carried inside rustls' error.
#[derive(Debug)]
struct Rejected(String);

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Rejected {}

fn address_text(name: &ServerName<'_>) -> String {
    match name {
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => other.to_str().into_owned(),
    }
}

impl ServerCertVerifier for ContextVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let node = address_text(server_name);
        match &self.checks {
            Checks::None => Ok(ServerCertVerified::assertion()),
            Checks::PythonOpenSsl(shared) => {
                let host = match &self.host {
                    HostRule::Off => None,
                    // An address given as server_hostname is checked as an address, as Python does.
                    HostRule::Name(name) if name.parse::<std::net::IpAddr>().is_ok() => Some(HostCheck::Ip(name)),
                    HostRule::Name(name) => Some(HostCheck::Name(name)),
                    HostRule::NodeAddress => Some(match server_name {
                        ServerName::IpAddress(_) => HostCheck::Ip(&node),
                        _ => HostCheck::Name(&node),
                    }),
                };
                let chain: Vec<&[u8]> = intermediates.iter().map(|c| c.as_ref()).collect();
                shared.verify(end_entity, &chain, host).map(|()| ServerCertVerified::assertion()).map_err(|r| self.reject(r))
            }
            Checks::WebPki(webpki) => {
                let named;
                let (name, shown) = match &self.host {
                    HostRule::Name(n) => {
                        named = ServerName::try_from(n.as_str()).map_err(|_| self.reject(format!("server_hostname {n:?} is not a valid host name")))?;
                        (&named, n.clone())
                    }
                    _ => (server_name, node.clone()),
                };
                match webpki.verify_server_cert(end_entity, intermediates, name, ocsp_response, now) {
                    Ok(v) => Ok(v),
                    Err(rustls::Error::InvalidCertificate(CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }))
                        if matches!(self.host, HostRule::Off) =>
                    {
                        Ok(ServerCertVerified::assertion())
                    }
                    Err(rustls::Error::InvalidCertificate(e)) => Err(self.reject(openssl_words(&e, end_entity, intermediates, name, &shown))),
                    Err(other) => Err(self.reject(other.to_string())),
                }
            }
        }
    }

    fn verify_tls12_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(&self, message: &[u8], cert: &CertificateDer<'_>, dss: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A WebPKI rejection in the words OpenSSL (and so Python's `ssl`) uses for it.
fn openssl_words(e: &CertificateError, leaf: &CertificateDer<'_>, intermediates: &[CertificateDer<'_>], name: &ServerName<'_>, shown: &str) -> String {
    match e {
        // No trusted issuer, or one of the same name whose key did not sign: OpenSSL names
        // the untrusted self-signed end of the chain the server sent, when it has one.
        CertificateError::UnknownIssuer | CertificateError::BadSignature if is_self_signed(leaf) => "self-signed certificate".into(),
        CertificateError::UnknownIssuer | CertificateError::BadSignature if intermediates.iter().any(|c| is_self_signed(c)) => {
            "self-signed certificate in certificate chain".into()
        }
        CertificateError::UnknownIssuer => "unable to get local issuer certificate".into(),
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => "certificate has expired".into(),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => "certificate is not yet valid".into(),
        CertificateError::BadSignature => "certificate signature failure".into(),
        CertificateError::Revoked => "certificate revoked".into(),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => "unsupported certificate purpose".into(),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => match name {
            ServerName::IpAddress(_) => format!("IP address mismatch, certificate is not valid for '{shown}'."),
            _ => format!("Hostname mismatch, certificate is not valid for '{shown}'."),
        },
        other => format!("{}", rustls::Error::InvalidCertificate(other.clone())),
    }
}

/// Whether a DER certificate names itself as its issuer (OpenSSL's "self-signed").
pub fn is_self_signed(der: &[u8]) -> bool {
    issuer_and_subject(der).is_some_and(|(issuer, subject)| issuer == subject)
}

/// The encoded issuer and subject names of a DER certificate, if it parses that far.
fn issuer_and_subject(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (cert, _) = content(der, 0x30)?;
    let (tbs, _) = content(cert, 0x30)?;
    let mut rest = tbs;
    if rest.first() == Some(&0xa0) {
        rest = element(rest)?.1; // [0] version
    }
    rest = element(rest)?.1; // serialNumber
    rest = element(rest)?.1; // signature algorithm
    let (issuer, rest) = element(rest)?;
    let rest = element(rest)?.1; // validity
    let (subject, _) = element(rest)?;
    Some((issuer, subject))
}

/// The first DER element of `b` (tag, length and content) and what follows it.
fn element(b: &[u8]) -> Option<(&[u8], &[u8])> {
    let (header, len) = header(b)?;
    let end = header.checked_add(len)?;
    (end <= b.len()).then(|| b.split_at(end))
}

/// The content of the first DER element of `b`, which must have tag `tag`, and what follows.
fn content(b: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if b.first() != Some(&tag) {
        return None;
    }
    let (header, _) = header(b)?;
    let (whole, rest) = element(b)?;
    Some((&whole[header..], rest))
}

/// A DER element's header length and content length.
fn header(b: &[u8]) -> Option<(usize, usize)> {
    let first = *b.get(1)?;
    if first < 0x80 {
        return Some((2, first as usize));
    }
    let n = (first & 0x7f) as usize;
    if n == 0 || n > 4 {
        return None;
    }
    let len = b.get(2..2 + n)?.iter().fold(0usize, |acc, &x| (acc << 8) | x as usize);
    Some((2 + n, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DER element of `tag` around `content`.
    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        if content.len() < 0x80 {
            out.push(content.len() as u8);
        } else {
            out.push(0x82);
            out.extend_from_slice(&(content.len() as u16).to_be_bytes());
        }
        out.extend_from_slice(content);
        out
    }

    fn cert(issuer: &str, subject: &str, filler: usize) -> Vec<u8> {
        let tbs = [
            tlv(0xa0, &tlv(0x02, &[2])),
            tlv(0x02, &[7]),
            tlv(0x30, &tlv(0x06, &[1, 2, 3])),
            tlv(0x30, issuer.as_bytes()),
            tlv(0x30, &vec![0u8; filler]),
            tlv(0x30, subject.as_bytes()),
        ]
        .concat();
        tlv(0x30, &[tlv(0x30, &tbs), tlv(0x30, &[0]), tlv(0x03, &[0])].concat())
    }

    #[test]
    fn self_signed_is_told_by_issuer_and_subject() {
        assert!(is_self_signed(&cert("CA", "CA", 3)));
        assert!(!is_self_signed(&cert("CA", "node", 3)));
        // Long forms of the length (a validity of 300 bytes) parse too.
        assert!(is_self_signed(&cert("CA", "CA", 300)));
        assert_eq!(issuer_and_subject(&cert("CA", "node", 300)).map(|(i, s)| (i.len(), s.len())), Some((4, 6)));
    }

    #[test]
    fn truncated_or_foreign_input_is_not_a_certificate() {
        let good = cert("CA", "CA", 3);
        for cut in 0..good.len() {
            assert!(!is_self_signed(&good[..cut]), "prefix of {cut} bytes");
        }
        assert!(!is_self_signed(b"not der at all"));
    }
}
