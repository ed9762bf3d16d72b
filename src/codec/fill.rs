//! The fill budget: what decoding a page may build that none of its bytes stand for.
//!
//! A value read from a page is at most a few times the bytes it came from, except for the
//! slots a null or a short value fills in: a null row of a numeric vector is `dimension`
//! zeros in a numpy or Arrow column, a null tuple or UDT in an Arrow column is a null in each
//! of its fields, and the fields a tuple or UDT value leaves out are each read as None. Those
//! sizes come from the result metadata, the server's word: a few bytes of nulls under a
//! `vector<float, 2000000000>` would otherwise ask for gigabytes, and a failed allocation
//! aborts the process.
//!
//! So every decoding of server bytes starts a budget ([`start`]) of the frame limit
//! (`Cluster(max_frame_length)`, 256 MiB by default), and each such fill is charged to it
//! ([`charge`]) before anything is allocated for it: past the budget the page fails with a
//! DriverException naming the limit. Fills no wider than [`FREE_WIDTH`] bytes (a null scalar,
//! a missing field or two) are not charged: those stay within a few times the 4 bytes of the
//! null or length they answer. The buffers the fills grow are reserved fallibly
//! ([`reserve`]): an allocation the process cannot have is a MemoryError, never an abort.

use std::cell::Cell;

use pyo3::exceptions::PyMemoryError;
use pyo3::PyErr;

/// The widest fill (bytes) left uncharged: a null UUID or duration.
pub const FREE_WIDTH: usize = 16;

thread_local! {
    static LEFT: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Starts the budget of one page (or one standalone value) on this thread. A row factory that
/// decodes another page on the same thread restarts it: the budget holds per decoding, not
/// per nesting.
pub fn start() {
    LEFT.set(scylla_cql::frame::max_response_frame_length());
}

/// Charges a fill of `bytes` (the part over [`FREE_WIDTH`]); the error says what and why.
pub fn charge(bytes: usize) -> Result<(), String> {
    if bytes <= FREE_WIDTH {
        return Ok(());
    }
    let left = LEFT.get();
    if bytes > left {
        let limit = scylla_cql::frame::max_response_frame_length();
        return Err(format!(
            "nulls and short values would fill in {bytes} bytes beyond those received, over the page's budget of \
             {limit} bytes (Cluster max_frame_length)"
        ));
    }
    LEFT.set(left - bytes);
    Ok(())
}

/// Reserves room for `more` items in `v`, as a MemoryError when the process cannot have it.
pub fn reserve<T>(v: &mut Vec<T>, more: usize) -> Result<(), PyErr> {
    v.try_reserve(more).map_err(|e| PyMemoryError::new_err(format!("a result column could not grow by {more} items: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_fills_are_free_and_wide_ones_are_charged_up_to_the_limit() {
        start();
        let limit = scylla_cql::frame::max_response_frame_length();
        for _ in 0..1000 {
            charge(FREE_WIDTH).unwrap();
        }
        charge(limit / 2).unwrap();
        charge(limit / 2).unwrap();
        let err = charge(FREE_WIDTH + 1).unwrap_err();
        assert!(err.contains("max_frame_length"), "{err}");
        start();
        charge(limit).unwrap();
    }

    #[test]
    fn an_impossible_reservation_is_a_memory_error() {
        let mut v: Vec<u64> = Vec::new();
        assert!(reserve(&mut v, usize::MAX / 4).is_err());
        reserve(&mut v, 10).unwrap();
        assert!(v.capacity() >= 10);
    }
}
