//! Huge pages for a benchmark's own buffers, as the crate asks for its large tables.

/// Asks the kernel to back `memory` with transparent huge pages where it can. Advice only: a
/// kernel that declines leaves the buffer as it was.
pub fn advise_huge_pages<T>(memory: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = memory.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(memory);
        let (first, last) = (start.next_multiple_of(PAGE), end & !(PAGE - 1));
        if first < last {
            // SAFETY: [first, last) lies inside `memory`, mapped memory we borrow mutably;
            // MADV_HUGEPAGE changes how the kernel backs the pages, never their contents.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_HUGEPAGE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = memory;
}
