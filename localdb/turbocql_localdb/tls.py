"""A private CA and the certificates of a TLS localdb node (``turbocql localdb start --tls``).

:func:`ensure_tls_files` makes, in a node's ``tls/`` directory, whatever is missing of:

``ca.pem`` / ``ca-key.pem``
    a self-signed CA (EC P-256, 10 years), the truststore of the node and of clients;
``node.pem``
    the node's keystore as Cassandra's ``PEMBasedSslContextFactory`` reads it: the private
    key in PKCS#8 (``-----BEGIN PRIVATE KEY-----``; Cassandra rejects SEC1 ``EC PRIVATE KEY``),
    then the node certificate (subjectAltName: the node's IP address and DNS ``localhost``),
    then the CA certificate; unencrypted, so no keystore password;
``client.pem`` / ``client-key.pem``
    a client certificate (CN ``turbocql-client``, extendedKeyUsage clientAuth) and its PKCS#8
    key, signed by the same CA, for ``--require-client-auth``
    (``ssl.SSLContext.load_cert_chain(client.pem, client-key.pem)``).

Existing files are kept (a restarted node keeps its CA); ``node.pem`` alone is made again when
the node's address is not among its certificate's SANs or when it was not signed by the
``ca.pem`` beside it. A cluster's nodes share one CA (:func:`ensure_tls_files` with
``ca_from``: the CA and client files are copied from the cluster's ``tls/`` directory), each
with its own node certificate.

Needs the ``cryptography`` package (a development requirement, not a runtime one of turbocql):
without it a :class:`LocalDBError` says so.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path
from typing import Any

from .node import EXIT_USAGE, LocalDBError, TLSFiles

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    _HAVE_CRYPTOGRAPHY = True
except ImportError:  # pragma: no cover - a development requirement
    _HAVE_CRYPTOGRAPHY = False

CA_NAME = "turbocql localdb CA"
CLIENT_NAME = "turbocql-client"
VALID_DAYS = 3650
_SHARED = ("ca", "ca_key", "client_cert", "client_key")


def _need_cryptography() -> None:
    if not _HAVE_CRYPTOGRAPHY:
        raise LocalDBError(
            "--tls needs the Python package 'cryptography' to make the certificates: "
            "pip install cryptography (it is in requirements-dev.txt)",
            EXIT_USAGE,
        )


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` atomically (a key: readable by its owner only)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _key_pem(key: Any) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _cert_pem(cert: Any) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _builder(subject: Any, issuer: Any, public_key: Any) -> Any:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
    )


def _name(cn: str) -> Any:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "turbocql localdb"),
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
        ]
    )


def _leaf_usage(builder: Any, ca_cert: Any, public_key: Any, eku: Any) -> Any:
    return (
        builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage(eku), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),
            critical=False,
        )
    )


def make_ca(files: TLSFiles) -> None:
    """Write a new self-signed CA to ``files.ca`` and ``files.ca_key``."""
    _need_cryptography()
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(CA_NAME)
    cert = (
        _builder(name, name, key.public_key())
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    files.dir.mkdir(parents=True, exist_ok=True)
    _write_private(files.ca_key, _key_pem(key))
    _write_private(files.ca, _cert_pem(cert), 0o644)


def _load_ca(files: TLSFiles) -> tuple[Any, Any]:
    try:
        cert = x509.load_pem_x509_certificate(files.ca.read_bytes())
        key = serialization.load_pem_private_key(files.ca_key.read_bytes(), password=None)
    except (OSError, ValueError) as e:
        raise LocalDBError(f"unreadable CA in {files.dir}: {e}; remove that directory to make a new one") from None
    return cert, key


def make_node_cert(files: TLSFiles, address: str) -> None:
    """Write ``files.node_keystore``: a PKCS#8 key, a certificate for ``address``
    (and DNS ``localhost``) signed by the CA in ``files``, and the CA certificate."""
    _need_cryptography()
    ca_cert, ca_key = _load_ca(files)
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address)), x509.DNSName("localhost")])
    builder = _builder(_name(address), ca_cert.subject, key.public_key()).add_extension(san, critical=False)
    eku = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
    cert = _leaf_usage(builder, ca_cert, key.public_key(), eku).sign(ca_key, hashes.SHA256())
    _write_private(files.node_keystore, _key_pem(key) + _cert_pem(cert) + _cert_pem(ca_cert))


def make_client_cert(files: TLSFiles) -> None:
    """Write ``files.client_cert`` (CN ``turbocql-client``, signed by the CA; then the CA) and
    ``files.client_key`` (PKCS#8)."""
    _need_cryptography()
    ca_cert, ca_key = _load_ca(files)
    key = ec.generate_private_key(ec.SECP256R1())
    builder = _builder(_name(CLIENT_NAME), ca_cert.subject, key.public_key())
    cert = _leaf_usage(builder, ca_cert, key.public_key(), [ExtendedKeyUsageOID.CLIENT_AUTH]).sign(
        ca_key, hashes.SHA256()
    )
    _write_private(files.client_key, _key_pem(key))
    _write_private(files.client_cert, _cert_pem(cert) + _cert_pem(ca_cert), 0o644)


def _node_cert_fits(files: TLSFiles, address: str) -> bool:
    """Whether ``node.pem`` holds a key and a certificate for ``address`` signed by ``ca.pem``."""
    try:
        data = files.node_keystore.read_bytes()
        if b"-----BEGIN PRIVATE KEY-----" not in data:
            return False
        cert = x509.load_pem_x509_certificate(data[data.index(b"-----BEGIN CERTIFICATE-----") :])
        ca_cert = x509.load_pem_x509_certificate(files.ca.read_bytes())
        cert.verify_directly_issued_by(ca_cert)
        ips = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.IPAddress
        )
    except Exception:  # unreadable, another CA, no SAN: make it again
        return False
    return ipaddress.ip_address(address) in ips


def ensure_tls_files(tls_dir: str | os.PathLike, address: str, ca_from: str | os.PathLike | None = None) -> TLSFiles:
    """Make whatever is missing of a node's TLS files in ``tls_dir`` (see the module docstring).

    ``ca_from``: another ``tls/`` directory whose CA and client certificate this node shares (a
    cluster's); they are made there if missing and copied here. Returns the :class:`TLSFiles`."""
    files = TLSFiles(Path(tls_dir))
    files.dir.mkdir(parents=True, exist_ok=True)
    if ca_from is not None:
        shared = ensure_shared_files(ca_from)
        if not files.ca.exists() or files.ca.read_bytes() != shared.ca.read_bytes():
            for attr in _SHARED:
                src = getattr(shared, attr)
                _write_private(getattr(files, attr), src.read_bytes(), src.stat().st_mode & 0o777)
    else:
        ensure_shared_files(files.dir)
    _need_cryptography()
    if not _node_cert_fits(files, address):
        make_node_cert(files, address)
    return files


def ensure_shared_files(tls_dir: str | os.PathLike) -> TLSFiles:
    """The CA and the client certificate in ``tls_dir``, made if missing (no node certificate)."""
    files = TLSFiles(Path(tls_dir))
    files.dir.mkdir(parents=True, exist_ok=True)
    if not (files.ca.exists() and files.ca_key.exists()):
        make_ca(files)
        for stale in (files.client_cert, files.client_key, files.node_keystore):
            stale.unlink(missing_ok=True)
    if not (files.client_cert.exists() and files.client_key.exists()):
        make_client_cert(files)
    return files
