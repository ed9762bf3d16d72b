//! CPU time for the timed sections: this process's (`getrusage(2)`, declared by hand so that the
//! workspace's Cargo.lock gains no package) and another process's, the server's with
//! `--server-pid` (`/proc/PID/stat`).

// getrusage(2), declared by hand (Linux, 64-bit: timeval is two longs, then 14 longs).

#[repr(C)]
#[derive(Default)]
struct Timeval {
    tv_sec: i64,
    tv_usec: i64,
}

#[repr(C)]
#[derive(Default)]
struct Rusage {
    ru_utime: Timeval,
    ru_stime: Timeval,
    rest: [i64; 14],
}

extern "C" {
    fn getrusage(who: i32, usage: *mut Rusage) -> i32;
}

const RUSAGE_SELF: i32 = 0;

/// User + system CPU time of this process (all threads), in microseconds.
pub(crate) fn self_cpu_us() -> f64 {
    let mut ru = Rusage::default();
    // SAFETY: `ru` is a valid, writable `struct rusage` with the kernel's layout.
    let rc = unsafe { getrusage(RUSAGE_SELF, &mut ru) };
    assert_eq!(rc, 0, "getrusage failed");
    let us = |t: &Timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(&ru.ru_utime) + us(&ru.ru_stime)
}

/// utime + stime of another process, in microseconds (clock ticks assumed 100 Hz, as on
/// every Linux build that matters here), or None if it cannot be read.
pub(crate) fn proc_cpu_us(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may contain spaces.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state); utime is field 14, stime field 15.
    let utime: f64 = f.get(11)?.parse().ok()?;
    let stime: f64 = f.get(12)?.parse().ok()?;
    Some((utime + stime) * 10_000.0)
}
