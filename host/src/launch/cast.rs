//! Typed device views as their bytes or bits (the reinterpretations the
//! device API's typed constructors need, and the only `unsafe` they use).

use cudarc::driver::{CudaSlice, CudaView, CudaViewMut};

/// E4M3 codes typed as `float8::F8E4M3`, as their bytes.
pub(crate) fn e4m3_as_bytes(codes: CudaView<'_, float8::F8E4M3>) -> CudaView<'_, u8> {
    let len = codes.len();
    // SAFETY: `F8E4M3` is one byte and every byte is a valid `u8`; the
    // length in bytes is the length in codes, so the view always exists.
    unsafe { codes.transmute::<u8>(len) }.expect("a one-byte type views as its bytes")
}

/// A whole f16 or bf16 buffer as its 16-bit patterns.
pub(crate) fn halves_as_bits<T: HalfFloat>(o: &mut CudaSlice<T>) -> CudaViewMut<'_, u16> {
    let len = o.len();
    // SAFETY: `T` is a 2-byte float (`HalfFloat`) whose every bit pattern
    // is a valid `u16` and the reverse; the length in u16 is the length in
    // `T`, so the view always exists.
    unsafe { o.transmute_mut::<u16>(len) }.expect("a two-byte type views as its bits")
}

/// The 16-bit floats an output buffer may hold.
pub(crate) trait HalfFloat {}
impl HalfFloat for half::f16 {}
impl HalfFloat for half::bf16 {}
