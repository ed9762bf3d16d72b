//! `Cluster(max_frame_length=...)`: the largest response frame body a connection reads. The
//! limit lives in scylla-cql (vendor/patches/scylla-cql: a frame declaring a longer body fails
//! its connection before anything is allocated for it) and is one for the whole process, so
//! the sessions connected at one time must agree on it: each holds it while connected, and a
//! session asking for another limit meanwhile is refused with the reason.

use pyo3::exceptions::PyValueError;
use pyo3::PyResult;

use crate::sync::Mutex;

/// 256 MiB, as the Java driver's `advanced.protocol.max-frame-length` and the protocol's own
/// limit on a frame's body.
pub const DEFAULT_MAX_FRAME_LENGTH: usize = scylla_cql::frame::DEFAULT_MAX_RESPONSE_FRAME_LENGTH;

/// The limit in force and how many connected sessions hold it.
static IN_FORCE: Mutex<(usize, usize)> = Mutex::new((DEFAULT_MAX_FRAME_LENGTH, 0));

/// A connected session's hold on the limit; dropped (or released) at its shutdown.
pub struct FrameLimitHold {
    released: bool,
}

/// Sets the process's limit to `limit` bytes and holds it, unless a connected session holds
/// another one.
pub fn hold(limit: usize) -> PyResult<FrameLimitHold> {
    if limit == 0 {
        return Err(PyValueError::new_err("max_frame_length must be at least 1 byte"));
    }
    let mut in_force = IN_FORCE.lock();
    let (current, holders) = *in_force;
    if holders > 0 && current != limit {
        return Err(PyValueError::new_err(format!(
            "max_frame_length={limit} cannot be honoured: the frame limit is one for the whole \
             process, and {holders} connected session(s) hold max_frame_length={current}; give \
             every Cluster of the process the same value, or shut the others down first"
        )));
    }
    scylla_cql::frame::set_max_response_frame_length(limit);
    *in_force = (limit, holders + 1);
    Ok(FrameLimitHold { released: false })
}

impl FrameLimitHold {
    pub fn release(&mut self) {
        if !std::mem::replace(&mut self.released, true) {
            let mut in_force = IN_FORCE.lock();
            in_force.1 = in_force.1.saturating_sub(1);
        }
    }
}

impl Drop for FrameLimitHold {
    fn drop(&mut self) {
        self.release();
    }
}

/// The limit in force, in bytes.
pub fn in_force() -> usize {
    scylla_cql::frame::max_response_frame_length()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_share_one_limit_and_release_it() {
        let mut a = hold(1 << 20).unwrap();
        assert_eq!(in_force(), 1 << 20);
        let b = hold(1 << 20).unwrap();
        assert!(hold(2 << 20).is_err());
        drop(b);
        a.release();
        a.release(); // once only
        let c = hold(2 << 20).unwrap();
        assert_eq!(in_force(), 2 << 20);
        drop(c);
        drop(a);
        assert_eq!(IN_FORCE.lock().1, 0);
        scylla_cql::frame::set_max_response_frame_length(DEFAULT_MAX_FRAME_LENGTH);
    }

    /// The patched crate refuses a declared body over the limit before reading it, naming
    /// both; a body within it is read.
    #[test]
    fn the_crate_refuses_a_frame_over_the_limit() {
        use scylla_cql::frame::{read_response_frame_with_limit, FrameTooLarge};
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        // RESULT (0x08), stream 1, declared body 2 GiB, then 4 bytes.
        let mut frame: &[u8] = &[0x84, 0, 0, 1, 0x08, 0x80, 0, 0, 0, 0, 0, 0, 1];
        let err = rt.block_on(read_response_frame_with_limit(&mut frame, 1 << 20)).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("2147483648") && text.contains("1048576"), "{text}");
        let scylla::frame::frame_errors::FrameHeaderParseError::HeaderIoError(io) = err else { panic!("{err:?}") };
        let too_large = io.get_ref().and_then(|e| e.downcast_ref::<FrameTooLarge>()).unwrap();
        assert_eq!((too_large.length, too_large.limit), (1 << 31, 1 << 20));
        // A VOID result (kind 1) of 4 bytes is read.
        let mut frame: &[u8] = &[0x84, 0, 0, 1, 0x08, 0, 0, 0, 4, 0, 0, 0, 1];
        let (_, _, body) = rt.block_on(read_response_frame_with_limit(&mut frame, 4)).unwrap();
        assert_eq!(&body[..], &[0, 0, 0, 1]);
    }
}
