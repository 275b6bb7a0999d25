//! Shared by every fuzz target: a global allocator that aborts on any single allocation over
//! 64 MiB. Stable Rust has no AddressSanitizer, so this is what catches allocations sized by
//! the input (a length field trusted, a buffer grown without a limit).

use std::alloc::{GlobalAlloc, Layout, System};

/// The largest single allocation a target may make.
pub const MAX_ALLOCATION: usize = 64 * 1024 * 1024;

/// The system allocator, refusing (by aborting the process) any request over [`MAX_ALLOCATION`].
pub struct CappedAllocator;

fn check(size: usize) {
    if size > MAX_ALLOCATION {
        // No allocation from here on: write a fixed message and abort, which libFuzzer
        // reports as a crash with the input that caused it.
        let msg = b"modelcontext-fuzz: single allocation over 64 MiB\n";
        // SAFETY: writing a static buffer to stderr.
        unsafe { libc_write(2, msg.as_ptr(), msg.len()) };
        std::process::abort();
    }
}

unsafe extern "C" {
    #[link_name = "write"]
    fn libc_write(fd: i32, buf: *const u8, count: usize) -> isize;
}

// SAFETY: every call is forwarded to `System` unchanged once the size is checked.
unsafe impl GlobalAlloc for CappedAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: same layout, as the caller guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        check(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        check(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Installs the capped allocator; each target invokes it once at the top level.
#[macro_export]
macro_rules! capped_allocator {
    () => {
        #[global_allocator]
        static ALLOCATOR: $crate::CappedAllocator = $crate::CappedAllocator;
    };
}
