//! A global allocator that counts live and peak heap bytes, for tests that bound memory.
//!
//! Install it in a test binary of its own (it counts every allocation of the process, so tests
//! sharing the binary would disturb each other's figures; run such a binary with
//! `--test-threads=1` or keep one measuring test in it):
//!
//! ```
//! use mcp_tests::counting_alloc::CountingAlloc;
//!
//! #[global_allocator]
//! static ALLOC: CountingAlloc = CountingAlloc::new();
//!
//! fn main() {
//!     ALLOC.reset_peak();
//!     let block = vec![1u8; 1 << 20];
//!     drop(block);
//!     assert!(ALLOC.peak_above_baseline() >= 1 << 20);
//!     assert!(ALLOC.current() < ALLOC.peak());
//! }
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Wraps the system allocator and counts bytes currently allocated and the peak since the
/// last [`reset_peak`](Self::reset_peak). Counting is exact for the sizes requested (allocator
/// overhead is not included).
///
/// Two peaks are kept. [`peak`](Self::peak) counts a `realloc` as a resize (the convention of
/// dhat and jemalloc's statistics): the live bytes the program holds. [`peak_with_moves`]
/// additionally counts, for a `realloc` that moved the block, the instant when the old and the
/// new block both existed: the worst case under an allocator that copies.
///
/// [`peak_with_moves`]: Self::peak_with_moves
#[derive(Debug)]
pub struct CountingAlloc {
    current: AtomicUsize,
    peak: AtomicUsize,
    peak_with_moves: AtomicUsize,
    baseline: AtomicUsize,
}

impl CountingAlloc {
    /// A counter at zero; use it as a `static` with `#[global_allocator]`.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            current: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            peak_with_moves: AtomicUsize::new(0),
            baseline: AtomicUsize::new(0),
        }
    }

    /// Bytes allocated right now.
    pub fn current(&self) -> usize {
        self.current.load(Ordering::SeqCst)
    }

    /// The most bytes allocated at once since the last [`reset_peak`](Self::reset_peak).
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// Like [`peak`](Self::peak), but a moving `realloc` counts its old and new block together.
    pub fn peak_with_moves(&self) -> usize {
        self.peak_with_moves.load(Ordering::SeqCst)
    }

    /// What [`current`](Self::current) was at the last [`reset_peak`](Self::reset_peak).
    pub fn baseline(&self) -> usize {
        self.baseline.load(Ordering::SeqCst)
    }

    /// Starts a new measurement: the peak and the baseline become the current figure.
    pub fn reset_peak(&self) {
        let now = self.current();
        self.baseline.store(now, Ordering::SeqCst);
        self.peak.store(now, Ordering::SeqCst);
        self.peak_with_moves.store(now, Ordering::SeqCst);
    }

    /// The peak above the baseline: the extra heap the measured work needed at its worst.
    pub fn peak_above_baseline(&self) -> usize {
        self.peak().saturating_sub(self.baseline())
    }

    /// [`peak_with_moves`](Self::peak_with_moves) above the baseline.
    pub fn peak_with_moves_above_baseline(&self) -> usize {
        self.peak_with_moves().saturating_sub(self.baseline())
    }

    fn add(&self, n: usize) {
        let now = self.current.fetch_add(n, Ordering::SeqCst) + n;
        self.peak.fetch_max(now, Ordering::SeqCst);
        self.peak_with_moves.fetch_max(now, Ordering::SeqCst);
    }

    fn resize(&self, old: usize, new: usize, moved: bool) {
        if moved {
            let both = self.current().saturating_add(new);
            self.peak_with_moves.fetch_max(both, Ordering::SeqCst);
        }
        if new >= old {
            self.add(new - old);
        } else {
            self.sub(old - new);
        }
    }

    fn sub(&self, n: usize) {
        self.current.fetch_sub(n, Ordering::SeqCst);
    }
}

impl Default for CountingAlloc {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract is System's; the counters only observe sizes.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc_zeroed`'s contract.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            self.add(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; `ptr` came from this allocator (hence from System).
        unsafe { System.dealloc(ptr, layout) };
        self.sub(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `realloc`'s contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            self.resize(layout.size(), new_size, p != ptr);
        }
        p
    }
}
