//! Python's own OpenSSL, found at run time: the `SSL_CTX` behind an `ssl.SSLContext`, read
//! and used through the OpenSSL library that Python's `_ssl` module runs on. Nothing of
//! OpenSSL is linked at build time, so the wheel neither carries nor needs a libssl.
//!
//! It serves what only the context's OpenSSL knows: its certificate store (CA files, a
//! `capath` directory, `load_default_certs()`, CRLs) with its verification flags, depth
//! and purpose, and the client certificate, chain and key of `load_cert_chain()`. The
//! handshake itself stays rustls' (see [`super`]).
//!
//! Finding the `SSL_CTX *`: CPython keeps it as the first field after the object header of
//! its private `PySSLContext` struct (3.11 to 3.14). That layout is not an API, so nothing
//! is dereferenced until checks that cannot crash have confirmed it: the field lies inside
//! the object (`__basicsize__`), the pointer it holds is aligned and points to memory the
//! kernel says is readable (`process_vm_readv` on ourselves), and OpenSSL's options and
//! verification mode for that pointer equal what Python reports for the context. Only
//! then is the context referenced (`SSL_CTX_up_ref`) and used.
//!
//! Linux only: the library is found with `dlopen(RTLD_NOLOAD)` on `_ssl`'s file.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::ffi::{c_char, c_int, c_long, c_ulong, c_void, CStr, CString};

type Ptr = *mut c_void;

/// Declares the OpenSSL functions the engine calls, as a table of pointers looked up by
/// name in Python's OpenSSL.
macro_rules! openssl_functions {
    ($($name:ident: fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        #[allow(non_snake_case)]
        struct Lib {
            $($name: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Lib {
            /// Every function, looked up in `handle`; the first missing one is named.
            fn resolve(handle: Ptr) -> Result<Lib, String> {
                Ok(Lib {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        // SAFETY: a symbol lookup in a loaded object.
                        let sym = unsafe { libc::dlsym(handle, name.as_ptr() as *const c_char) };
                        if sym.is_null() {
                            return Err(format!("{} is not exported", stringify!($name)));
                        }
                        // SAFETY: the symbol is OpenSSL's function of that name, whose C
                        // signature (1.1.1 and 3.x) is the one declared here on 64-bit Linux
                        // (1.1.1's `unsigned long SSL_CTX_get_options` is 3.x's `uint64_t`
                        // there); `load` checks the version before any other is called.
                        unsafe { std::mem::transmute::<Ptr, unsafe extern "C" fn($($arg),*) $(-> $ret)?>(sym) }
                    },)*
                })
            }
        }
    };
}

openssl_functions! {
    OpenSSL_version_num: fn() -> c_ulong;
    SSL_CTX_up_ref: fn(Ptr) -> c_int;
    SSL_CTX_free: fn(Ptr);
    SSL_CTX_get_options: fn(Ptr) -> u64;
    SSL_CTX_get_verify_mode: fn(Ptr) -> c_int;
    SSL_CTX_get_cert_store: fn(Ptr) -> Ptr;
    SSL_CTX_get0_param: fn(Ptr) -> Ptr;
    SSL_CTX_get0_certificate: fn(Ptr) -> Ptr;
    SSL_CTX_get0_privatekey: fn(Ptr) -> Ptr;
    SSL_CTX_ctrl: fn(Ptr, c_int, c_long, Ptr) -> c_long;
    OPENSSL_sk_num: fn(Ptr) -> c_int;
    OPENSSL_sk_value: fn(Ptr, c_int) -> Ptr;
    OPENSSL_sk_new_null: fn() -> Ptr;
    OPENSSL_sk_push: fn(Ptr, Ptr) -> c_int;
    OPENSSL_sk_free: fn(Ptr);
    i2d_X509: fn(Ptr, *mut *mut u8) -> c_int;
    d2i_X509: fn(*mut Ptr, *mut *const u8, c_long) -> Ptr;
    X509_free: fn(Ptr);
    EVP_PKEY2PKCS8: fn(Ptr) -> Ptr;
    i2d_PKCS8_PRIV_KEY_INFO: fn(Ptr, *mut *mut u8) -> c_int;
    PKCS8_PRIV_KEY_INFO_free: fn(Ptr);
    X509_STORE_CTX_new: fn() -> Ptr;
    X509_STORE_CTX_free: fn(Ptr);
    X509_STORE_CTX_init: fn(Ptr, Ptr, Ptr, Ptr) -> c_int;
    X509_STORE_CTX_set_default: fn(Ptr, *const c_char) -> c_int;
    X509_STORE_CTX_get0_param: fn(Ptr) -> Ptr;
    X509_STORE_CTX_get_error: fn(Ptr) -> c_int;
    X509_VERIFY_PARAM_set1: fn(Ptr, Ptr) -> c_int;
    X509_VERIFY_PARAM_set1_host: fn(Ptr, *const c_char, usize) -> c_int;
    X509_VERIFY_PARAM_set1_ip_asc: fn(Ptr, *const c_char) -> c_int;
    X509_verify_cert: fn(Ptr) -> c_int;
    X509_verify_cert_error_string: fn(c_long) -> *const c_char;
    ERR_clear_error: fn();
}

/// `SSL_CTX_get0_chain_certs` and `SSL_CTX_get_extra_chain_certs` are macros over these.
const SSL_CTRL_GET_EXTRA_CHAIN_CERTS: c_int = 82;
const SSL_CTRL_GET_CHAIN_CERTS: c_int = 115;
/// OpenSSL's `X509_V_ERR_HOSTNAME_MISMATCH` and `X509_V_ERR_IP_ADDRESS_MISMATCH`.
const X509_V_ERR_HOSTNAME_MISMATCH: c_int = 62;
const X509_V_ERR_IP_ADDRESS_MISMATCH: c_int = 64;
/// The oldest OpenSSL whose API this table follows (CPython 3.10+ requires it too).
const OPENSSL_1_1_1: c_ulong = 0x1010_1000;
/// How much of the `SSL_CTX` must be readable before OpenSSL reads its fields (the
/// options and verify mode lie in its first 400 bytes in OpenSSL 3.0).
const SSL_CTX_PROBE: usize = 1024;

/// Python's OpenSSL, loaded once per process: the function table, or why it cannot be used.
/// (A `PyOnceLock`: loading imports Python modules, and a thread waiting for a plain
/// `OnceLock` with the GIL held would keep the loading thread from getting it back.)
fn lib(py: Python<'_>) -> Result<&'static Lib, String> {
    static LIB: PyOnceLock<Result<Lib, String>> = PyOnceLock::new();
    LIB.get_or_init(py, || load(py)).as_ref().map_err(Clone::clone)
}

fn load(py: Python<'_>) -> Result<Lib, String> {
    let ssl_ext = crate::pyrefs::ssl_extension(py).map_err(|e| format!("Python's _ssl module cannot be imported ({e})"))?;
    let handle = match ssl_ext.getattr("__file__").and_then(|f| f.extract::<String>()) {
        Ok(path) => {
            let path = CString::new(path).map_err(|e| e.to_string())?;
            // SAFETY: RTLD_NOLOAD only returns the already loaded `_ssl` extension; the
            // handle is kept for the life of the process (the table points into it).
            let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
            if handle.is_null() {
                return Err("Python's _ssl extension is not a loaded shared object".into());
            }
            handle
        }
        // `_ssl` built into the interpreter: its OpenSSL resolves through the global scope.
        Err(_) => libc::RTLD_DEFAULT,
    };
    let lib = Lib::resolve(handle).map_err(|e| format!("its ssl module keeps OpenSSL private ({e})"))?;
    // SAFETY: a plain getter.
    let version = unsafe { (lib.OpenSSL_version_num)() };
    if version < OPENSSL_1_1_1 {
        return Err(format!("its OpenSSL is older than 1.1.1 (0x{version:x})"));
    }
    let python_version: c_ulong =
        crate::pyrefs::ssl(py).and_then(|m| m.getattr("OPENSSL_VERSION_NUMBER")).and_then(|v| v.extract()).map_err(|e| e.to_string())?;
    if python_version != version {
        return Err(format!("the OpenSSL found (0x{version:x}) is not the one its ssl module reports (0x{python_version:x})"));
    }
    Ok(lib)
}

/// Whether `len` bytes from `addr` can be read, asked of the kernel (a bad address is an
/// `EFAULT`, never a fault): `process_vm_readv` on ourselves, or where that call is not
/// there (qemu's user-mode emulation answers `ENOSYS`; a seccomp filter may answer `EPERM`)
/// a `write` of those bytes into a pipe of our own, which the kernel (or the emulator)
/// checks the same way.
fn readable(addr: usize, len: usize) -> bool {
    let mut buf = vec![0u8; len];
    let local = libc::iovec { iov_base: buf.as_mut_ptr() as *mut c_void, iov_len: len };
    let remote = libc::iovec { iov_base: addr as *mut c_void, iov_len: len };
    // SAFETY: copies from our own address space into `buf`; the kernel checks `remote`.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n >= 0 {
        return n == len as isize;
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOSYS | libc::EPERM) => readable_through_pipe(addr, len),
        _ => false,
    }
}

/// [`readable`] by a `write` into a new pipe (`len` within a pipe's 64 KiB, so it never
/// blocks; non-blocking anyway). Both ends are closed before returning.
fn readable_through_pipe(addr: usize, len: usize) -> bool {
    let mut fds = [0 as c_int; 2];
    // SAFETY: `fds` is a live array of two ints for the call to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return false;
    }
    // SAFETY: `write` reads `len` bytes at `addr` in the kernel, which answers EFAULT for an
    // address it cannot read instead of faulting; the fds are the pipe's, closed once here.
    let n = unsafe {
        let n = libc::write(fds[1], addr as *const c_void, len);
        libc::close(fds[0]);
        libc::close(fds[1]);
        n
    };
    n == len as isize
}

/// An `ssl.SSLContext`'s `SSL_CTX`, referenced for as long as this lives.
pub struct SharedContext {
    lib: &'static Lib,
    ctx: Ptr,
}

// SAFETY: an SSL_CTX is reference counted and its store is locked by OpenSSL; the engine
// only reads the context and verifies against its store, from any thread.
unsafe impl Send for SharedContext {}
unsafe impl Sync for SharedContext {}

impl Drop for SharedContext {
    fn drop(&mut self) {
        // SAFETY: releases the reference taken in `share`.
        unsafe { (self.lib.SSL_CTX_free)(self.ctx) }
    }
}

impl std::fmt::Debug for SharedContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedContext").field("ctx", &self.ctx).finish()
    }
}

/// The context's `SSL_CTX` through Python's OpenSSL, or why it cannot be shared.
pub fn share(py: Python<'_>, context: &Bound<'_, PyAny>) -> Result<SharedContext, String> {
    let lib = lib(py)?;
    let field = std::mem::size_of::<pyo3::ffi::PyObject>();
    let ssl_context_type = crate::pyrefs::ssl_extension(context.py())
        .and_then(|m| m.getattr("_SSLContext"))
        .and_then(|t| t.cast_into::<pyo3::types::PyType>().map_err(PyErr::from))
        .map_err(|e| e.to_string())?;
    // The object's own type (its ob_type, not a `__class__` it may claim, which
    // `isinstance` honours): only an `_SSLContext` has the field read below.
    if !context.get_type().is_subclass(&ssl_context_type).map_err(|e| e.to_string())? {
        return Err(format!("{} is not an _ssl._SSLContext underneath", context.get_type()));
    }
    let basic: usize = ssl_context_type.getattr("__basicsize__").and_then(|b| b.extract()).map_err(|e| e.to_string())?;
    if basic < field + std::mem::size_of::<Ptr>() {
        return Err("this Python's SSLContext object has an unknown layout".into());
    }
    // SAFETY: `context`'s own type is `_ssl._SSLContext` or a subclass (checked above on its
    // ob_type), so its first field after the object header lies inside the object (the
    // type's `__basicsize__`, checked above, covers it), which `context` keeps alive; it is
    // read as plain bytes, and used only once the checks below agree it is an SSL_CTX.
    let raw = unsafe { std::ptr::read_unaligned((context.as_ptr() as *const u8).add(field) as *const usize) };
    if raw == 0 || raw % std::mem::align_of::<u64>() != 0 || !readable(raw, SSL_CTX_PROBE) {
        return Err("this Python's SSLContext object has an unknown layout".into());
    }
    let ctx = raw as Ptr;
    let options: u64 = context.getattr("options").and_then(|o| o.extract()).map_err(|e| e.to_string())?;
    let mode: c_int = context.getattr("verify_mode").and_then(|m| m.extract()).map_err(|e| e.to_string())?;
    // CERT_NONE, CERT_OPTIONAL, CERT_REQUIRED as OpenSSL's SSL_VERIFY_* bits.
    let native_mode = match mode {
        0 => 0,
        1 => 1,
        _ => 3,
    };
    // SAFETY: `ctx` points to readable memory covering the fields these getters read.
    let (got_options, got_mode) = unsafe { ((lib.SSL_CTX_get_options)(ctx), (lib.SSL_CTX_get_verify_mode)(ctx)) };
    if got_options != options || got_mode != native_mode {
        return Err("this Python's SSLContext object has an unknown layout".into());
    }
    // SAFETY: `ctx` is the context's live SSL_CTX (verified above).
    if unsafe { (lib.SSL_CTX_up_ref)(ctx) } != 1 {
        return Err("SSL_CTX_up_ref failed".into());
    }
    Ok(SharedContext { lib, ctx })
}

/// Why Python's OpenSSL cannot be shared on this interpreter, if it cannot (the context
/// itself is checked at connect).
pub fn unavailable(py: Python<'_>) -> Option<String> {
    lib(py).err()
}

/// The DER encoding of an OpenSSL object through its `i2d_*` function.
unsafe fn der(obj: Ptr, i2d: unsafe extern "C" fn(Ptr, *mut *mut u8) -> c_int) -> Option<Vec<u8>> {
    // SAFETY (both calls): `obj` is a live object of i2d's type; the first call measures,
    // the second writes exactly that many bytes into `out`.
    let len = unsafe { i2d(obj, std::ptr::null_mut()) };
    if len <= 0 {
        return None;
    }
    let mut out = vec![0u8; len as usize];
    let mut p = out.as_mut_ptr();
    (unsafe { i2d(obj, &mut p) } == len).then_some(out)
}

/// The X509 items of an OpenSSL stack (none for a null stack).
unsafe fn stack_items(lib: &Lib, stack: Ptr) -> Vec<Ptr> {
    if stack.is_null() {
        return Vec::new();
    }
    // SAFETY: `stack` is a live OpenSSL stack (the caller's contract).
    unsafe { (0..(lib.OPENSSL_sk_num)(stack)).map(|i| (lib.OPENSSL_sk_value)(stack, i)).collect() }
}

/// Whose name a certificate must carry (the classic driver's `check_hostname`).
pub enum HostCheck<'a> {
    Name(&'a str),
    Ip(&'a str),
}

impl SharedContext {
    /// The client certificate `load_cert_chain()` gave the context (certificate, then its
    /// chain) and its key, if it has one.
    pub fn client_identity(&self) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
        let lib = self.lib;
        // SAFETY: `self.ctx` is a referenced SSL_CTX; the getters return borrowed objects
        // that live as long as it does, and are only encoded here.
        unsafe {
            let cert = (lib.SSL_CTX_get0_certificate)(self.ctx);
            let key = (lib.SSL_CTX_get0_privatekey)(self.ctx);
            if cert.is_null() || key.is_null() {
                return Ok(None);
            }
            let mut chain = vec![CertificateDer::from(der(cert, lib.i2d_X509).ok_or("cannot encode the client certificate")?)];
            for ctrl in [SSL_CTRL_GET_CHAIN_CERTS, SSL_CTRL_GET_EXTRA_CHAIN_CERTS] {
                let mut stack: Ptr = std::ptr::null_mut();
                (lib.SSL_CTX_ctrl)(self.ctx, ctrl, 0, &mut stack as *mut Ptr as Ptr);
                for x in stack_items(lib, stack) {
                    chain.push(CertificateDer::from(der(x, lib.i2d_X509).ok_or("cannot encode a chain certificate")?));
                }
            }
            let info = (lib.EVP_PKEY2PKCS8)(key);
            if info.is_null() {
                (lib.ERR_clear_error)();
                return Err("the client key cannot be exported as PKCS#8".into());
            }
            let pkcs8 = der(info, lib.i2d_PKCS8_PRIV_KEY_INFO);
            (lib.PKCS8_PRIV_KEY_INFO_free)(info);
            let pkcs8 = pkcs8.ok_or("the client key cannot be exported as PKCS#8")?;
            Ok(Some((chain, PrivateKeyDer::from(PrivatePkcs8KeyDer::from(pkcs8)))))
        }
    }

    /// Verifies a server's chain against the context's store, as OpenSSL verifies it in a
    /// handshake (purpose `ssl_server`, the context's verification parameters), checking
    /// `host` when given. `Err` holds OpenSSL's reason, in Python's words for a host.
    pub fn verify(&self, leaf: &[u8], intermediates: &[&[u8]], host: Option<HostCheck<'_>>) -> Result<(), String> {
        let lib = self.lib;
        let mut certs: Vec<Ptr> = Vec::with_capacity(1 + intermediates.len());
        // SAFETY: every object is created and freed here; the store and the parameters are
        // the referenced SSL_CTX's, which OpenSSL locks for verification.
        unsafe {
            for der in std::iter::once(leaf).chain(intermediates.iter().copied()) {
                let mut p = der.as_ptr();
                let x = (lib.d2i_X509)(std::ptr::null_mut(), &mut p, der.len() as c_long);
                if x.is_null() {
                    certs.iter().for_each(|&x| (lib.X509_free)(x));
                    (lib.ERR_clear_error)();
                    return Err("the server sent a certificate OpenSSL cannot parse".into());
                }
                certs.push(x);
            }
            let untrusted = (lib.OPENSSL_sk_new_null)();
            for &x in &certs {
                (lib.OPENSSL_sk_push)(untrusted, x);
            }
            let store_ctx = (lib.X509_STORE_CTX_new)();
            let mut outcome = Err("could not set up the certificate verification".to_string());
            if !store_ctx.is_null() && (lib.X509_STORE_CTX_init)(store_ctx, (lib.SSL_CTX_get_cert_store)(self.ctx), certs[0], untrusted) == 1 {
                (lib.X509_STORE_CTX_set_default)(store_ctx, c"ssl_server".as_ptr());
                let param = (lib.X509_STORE_CTX_get0_param)(store_ctx);
                (lib.X509_VERIFY_PARAM_set1)(param, (lib.SSL_CTX_get0_param)(self.ctx));
                let host_set = match &host {
                    None => 1,
                    Some(HostCheck::Name(name)) => (lib.X509_VERIFY_PARAM_set1_host)(param, name.as_ptr() as *const c_char, name.len()),
                    Some(HostCheck::Ip(ip)) => {
                        let ip = CString::new(*ip).unwrap_or_default();
                        (lib.X509_VERIFY_PARAM_set1_ip_asc)(param, ip.as_ptr())
                    }
                };
                outcome = if host_set != 1 {
                    Err("the host name to check is not valid".into())
                } else if (lib.X509_verify_cert)(store_ctx) == 1 {
                    Ok(())
                } else {
                    let code = (lib.X509_STORE_CTX_get_error)(store_ctx);
                    Err(match (code, &host) {
                        // The words Python's ssl module uses for a host mismatch.
                        (X509_V_ERR_HOSTNAME_MISMATCH, Some(HostCheck::Name(name))) => {
                            format!("Hostname mismatch, certificate is not valid for '{name}'.")
                        }
                        (X509_V_ERR_IP_ADDRESS_MISMATCH, Some(HostCheck::Ip(ip))) => {
                            format!("IP address mismatch, certificate is not valid for '{ip}'.")
                        }
                        _ => CStr::from_ptr((lib.X509_verify_cert_error_string)(code as c_long)).to_string_lossy().into_owned(),
                    })
                };
            }
            if !store_ctx.is_null() {
                (lib.X509_STORE_CTX_free)(store_ctx);
            }
            (lib.OPENSSL_sk_free)(untrusted);
            certs.iter().for_each(|&x| (lib.X509_free)(x));
            (lib.ERR_clear_error)();
            outcome
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_tells_live_memory_from_a_bad_address() {
        let live = vec![7u8; SSL_CTX_PROBE];
        let addr = live.as_ptr() as usize;
        assert!(readable(addr, live.len()));
        assert!(readable_through_pipe(addr, live.len()));
        assert!(!readable(8, 16));
        assert!(!readable_through_pipe(8, 16));
    }
}
