//! The engine's allocator: mimalloc, except that a block of [`HUGE`] bytes or more is an
//! anonymous mapping made with `MAP_NORESERVE` (Linux).
//!
//! Why mimalloc: a request allocates and frees a few dozen small blocks (the crate's futures,
//! frames, result buffers), on the I/O thread; with glibc's malloc those were about 10% of a
//! request's CPU at 10,000 connections (`_int_malloc` alone 5%); with mimalloc the futures
//! path there took 25.1 µs of CPU per request instead of 29.6 (medians of 4 alternated runs
//! each against benchmarks' `cql-responder`; 21.8 against 23.2 at 1,000 connections).
//! Python's own objects stay with Python's allocator.
//!
//! Why the mappings: the scylla crate sizes some buffers by a count read from a server's
//! frame before it has read what the count describes (scylla-cql 2.0.0: a frame body by its
//! declared length, a result's column specs by its column count, a PREPARED result's
//! partition key indexes by their count), and a failed allocation aborts a Rust program. Under the kernel's default
//! (heuristic) overcommit, one mapping larger than RAM + swap is refused unless it is
//! `MAP_NORESERVE`: a frame claiming 2^31 columns (a 223 GB reservation) killed the process.
//! With `MAP_NORESERVE` only the pages written become memory, so a lying length costs the
//! bytes the server really sent, and the request ends with the crate's parse error.
//!
//! After `fork()` (tests/integration/test_fork.py, `_fork_alloc.py`): mimalloc has no fork
//! handling on Linux, and offers no way to hold its locks across `fork()`. Allocating and
//! freeing are lock-free (per-thread heaps, atomic lists for blocks freed by other threads);
//! in a child, a block of a page owned by a parent's thread (gone there) goes to that page's
//! list of remote frees and is never reused: memory the child leaks, not corruption. What a
//! fork can break is a pthread mutex held by another thread at that moment: it stays held in
//! the child, whose next pass through the same path hangs. So the line of mimalloc matters,
//! and the `mimalloc` crate builds the v2 line (its `v2` feature; mimalloc 2.3 in
//! libmimalloc-sys 0.1.49), not its default v3:
//! - v3 takes a mutex each time a thread's heap is made (its first allocation) or given back
//!   (its exit), `theaps_lock` of the main heap, and others when a new arena is reserved
//!   (`arena_reserve_lock`) or the page map grows (`page_map_lock`). Threads start and exit
//!   without the GIL in the forking process (the runtime's blocking-pool threads; a Python
//!   thread's exit), and the child's first new thread (its I/O thread) needs `theaps_lock`.
//!   Natively, one child of 150 forked while three threads started and exited hung once, on
//!   a machine loaded by other work, and none on a quiet one. Under qemu's arm64 emulation 3
//!   of 150 did not end within 10 s, a deadline not then scaled for emulation: slow or hung.
//! - v2 makes and gives back a thread's heap with atomics only (its thread data cache,
//!   segments abandoned to their arena's bitmap), and reserves arenas without a lock. Its
//!   mutexes are on paths the engine does not take while running: the list of abandoned
//!   segments outside any arena (a block aligned beyond 32 MiB, or arenas disabled),
//!   visiting abandoned segments (mimalloc's heap walks), its message output, its one-time
//!   initialization. The same 150 forks under emulation: see docs/ARCHITECTURE.md (Fork).
//!
//! Why no huge pages (the `mimalloc` crate's `no_thp` feature): mimalloc 2 commits its arenas (1
//! GiB reservations) at once where the kernel overcommits, and then advises them as transparent
//! huge pages (`MADV_HUGEPAGE`). Where THP is on for advised memory only (`madvise`, as on the
//! machine measured), every first touch of one of its 2 MiB pages then faults in, and zeroes, a
//! whole huge page: 27% of a profile of 40,000 `execute_async` then every `result()`
//! (`clear_page_erms` under `mi_page_free_list_extend`, most of it on the I/O thread). Without the
//! advice the heap gets what the system gives any other memory. On 2026-12-07, three alternated
//! runs of each build, 20,000 requests, an emulated test running beside them: unthrottled futures
//! writes took 11.8 µs of client CPU per request instead of 16.0 (medians; system time 0.10–0.12 s
//! a run instead of 0.17–0.22), reads 13.4 instead of 16.5; `execute_concurrent` 6.1 and 8.5
//! against 6.3 and 8.5 (unchanged), its peak RSS 7 MB lower. The feature leaves the process's THP
//! setting alone (mimalloc's `allow_thp` option would disable THP for the whole process, numpy's
//! arrays included).
//!
//! What it cannot do alone: with strict overcommit (`vm.overcommit_memory = 2`) or an
//! address-space limit (`RLIMIT_AS`) such a mapping is refused all the same and the process
//! aborts. What bounds a frame before anything is allocated for it is the frame cap
//! (vendor/patches/scylla-cql/0001, `Cluster(max_frame_length)`); the hostile-server frames
//! run under `RLIMIT_AS` too (tests/integration/test_hostile_frames.py, docs/faults.md).

use std::alloc::{GlobalAlloc, Layout};

#[cfg(not(miri))]
use mimalloc::MiMalloc;

/// Where every block below [`HUGE`] comes from.
#[cfg(not(miri))]
const BASE: MiMalloc = MiMalloc;
/// Under Miri (scripts/miri.sh), which runs no C: std's allocator in mimalloc's place.
#[cfg(miri)]
const BASE: std::alloc::System = std::alloc::System;

/// Blocks from this size up are mapped with `MAP_NORESERVE`.
#[cfg(not(miri))]
pub const HUGE: usize = 1 << 30;
/// Under Miri: small enough for its interpreter to map, fill and move such blocks.
#[cfg(miri)]
pub const HUGE: usize = 1 << 16;
/// The huge blocks' mappings: private, anonymous, and no swap reserved for them.
#[cfg(all(target_os = "linux", not(miri)))]
const MAP_FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
/// Under Miri, whose `mmap` takes these two flags only (`MAP_NORESERVE` changes the kernel's
/// accounting, not what the mapping is).
#[cfg(all(target_os = "linux", miri))]
const MAP_FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
/// What `mmap` aligns to at least.
const PAGE: usize = 4096;

pub struct EngineAlloc;

#[inline]
fn is_huge(layout: &Layout) -> bool {
    cfg!(target_os = "linux") && layout.size() >= HUGE && layout.align() <= PAGE
}

#[cfg(target_os = "linux")]
unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address of the kernel's choice.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, MAP_FLAGS, -1, 0) };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn map(_size: usize) -> *mut u8 {
    unreachable!("is_huge is false off Linux")
}

#[cfg(target_os = "linux")]
unsafe fn unmap(ptr: *mut u8, size: usize) {
    // SAFETY: `ptr` is a mapping of `size` bytes made by `map`.
    unsafe { libc::munmap(ptr.cast(), size) };
}

/// A mapping grown or shrunk by the kernel, its pages moved rather than copied.
#[cfg(target_os = "linux")]
unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    // SAFETY: `ptr` is a mapping of `old` bytes made by `map`; it keeps MAP_NORESERVE.
    let p = unsafe { libc::mremap(ptr.cast(), old, new, libc::MREMAP_MAYMOVE) };
    if p == libc::MAP_FAILED {
        std::ptr::null_mut()
    } else {
        p.cast()
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn remap(_ptr: *mut u8, _old: usize, _new: usize) -> *mut u8 {
    unreachable!("is_huge is false off Linux")
}

#[cfg(not(target_os = "linux"))]
unsafe fn unmap(_ptr: *mut u8, _size: usize) {
    unreachable!("is_huge is false off Linux")
}

// SAFETY: every block is either mimalloc's (and goes back to it) or a mapping
// of exactly its layout's size (and is unmapped with that size): `is_huge` of the same layout
// decides both ways, and a reallocation that crosses the line moves the block. A mapping is
// page-aligned, and `is_huge` takes no alignment above a page. The blocks in the methods pass
// the caller's GlobalAlloc contract on to mimalloc or to map / unmap / remap unchanged.
unsafe impl GlobalAlloc for EngineAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if is_huge(&layout) {
            unsafe { map(layout.size()) }
        } else {
            unsafe { BASE.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if is_huge(&layout) {
            // A fresh anonymous mapping reads as zeros.
            unsafe { map(layout.size()) }
        } else {
            unsafe { BASE.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if is_huge(&layout) {
            unsafe { unmap(ptr, layout.size()) }
        } else {
            unsafe { BASE.dealloc(ptr, layout) }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY (of the layout): the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow isize.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (is_huge(&layout), is_huge(&new_layout)) {
            (false, false) => return unsafe { BASE.realloc(ptr, layout, new_size) },
            (true, true) => return unsafe { remap(ptr, layout.size(), new_size) },
            _ => {}
        }
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and at least this long; they do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
            unsafe { self.dealloc(ptr, layout) };
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reserved but untouched memory of the process, in KiB (VmSize, VmRSS of /proc/self/status).
    #[cfg(target_os = "linux")]
    fn vm_kib(field: &str) -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with(field)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    #[test]
    #[cfg(target_os = "linux")]
    #[cfg_attr(miri, ignore = "reads /proc and reserves 223 GB: not for an interpreter")]
    fn a_reservation_far_past_ram_succeeds_and_costs_only_what_is_written() {
        // 223 GB: what 2^31 column specs claimed; more than this machine's RAM and swap.
        let size = 223usize << 30;
        let rss_before = vm_kib("VmRSS:");
        // black_box: without it the optimizer may drop an allocation whose bytes it can
        // follow (written, then read back), and nothing would be mapped to measure.
        let mut v: Vec<u8> = std::hint::black_box(Vec::with_capacity(size));
        assert!(v.capacity() >= size);
        v.extend_from_slice(&[7u8; 1 << 20]);
        std::hint::black_box(&mut v);
        assert!(vm_kib("VmSize:") >= (size >> 10) as u64);
        assert!(vm_kib("VmRSS:") < rss_before + 64 * 1024, "RSS grew by more than 64 MiB");
        assert_eq!(v[(1 << 20) - 1], 7);
        drop(v);
        assert!(vm_kib("VmSize:") < (size >> 10) as u64, "the mapping was not released");
    }

    #[test]
    fn growing_across_the_line_keeps_the_contents() {
        let mut v: Vec<u32> = (0..1000).collect();
        v.reserve_exact(HUGE / 4); // small -> huge: moved into a mapping
        v.extend(1000..2000);
        v.shrink_to_fit(); // huge -> small: moved back
        assert_eq!(v, (0..2000).collect::<Vec<u32>>());
        let mut big: Vec<u8> = vec![0u8; HUGE]; // zeroed, huge
        big[HUGE - 1] = 1;
        big.reserve_exact(HUGE); // huge -> huge
        assert_eq!((big[0], big[HUGE - 1], big.len()), (0, 1, HUGE));
    }
}
