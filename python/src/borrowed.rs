//! PyTorch device memory as a cudarc slice, for the library calls that take
//! only cudarc views: a packed batch's prefix sums (`PackedSeqs::new`) and
//! the log-sum-exp output (`RunExtras::lse`), which `sdpa::raw` has no
//! raw-address constructors for. The slice is never freed here: dropping a
//! [`Borrowed`] hands its address back through `CudaSlice::leak`, which
//! releases cudarc's own bookkeeping and leaves the memory to PyTorch.

use sdpa::cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut};
use std::sync::Arc;

/// `len` elements of `T` at a device address another library owns.
pub struct Borrowed<T> {
    /// Always `Some` until dropped.
    slice: Option<CudaSlice<T>>,
}

impl<T> Borrowed<T> {
    /// The memory at `address`, seen on `stream`.
    ///
    /// # Safety
    /// `address` is the first of `len` elements of `T` in device memory of
    /// `stream`'s device, which its owner keeps allocated (and, when the
    /// slice is written, reads or writes by no other work) while the
    /// returned value and the work queued with it live. `stream`'s context
    /// does not track events (the runner's contexts, made with event
    /// tracking disabled), so no event is made or recorded for it.
    pub unsafe fn new(stream: &Arc<CudaStream>, address: u64, len: usize) -> Borrowed<T> {
        // SAFETY: the caller's promise above covers `upgrade_device_ptr`'s
        // (a valid allocation holding `len` elements); `Drop` leaks the
        // slice, so cudarc never frees it.
        let slice = unsafe { stream.upgrade_device_ptr::<T>(address, len) };
        Borrowed { slice: Some(slice) }
    }

    /// The elements, for reading.
    pub fn view(&self) -> CudaView<'_, T> {
        self.slice.as_ref().expect("present until dropped").as_view()
    }

    /// The elements, for writing.
    pub fn view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.slice.as_mut().expect("present until dropped").as_view_mut()
    }
}

impl<T> Drop for Borrowed<T> {
    fn drop(&mut self) {
        if let Some(slice) = self.slice.take() {
            // The address goes back to its owner, unfreed.
            slice.leak();
        }
    }
}
