//! The binding's errors as Python exceptions: `TypeError` for an argument of
//! the wrong element type, `ValueError` for arguments the library refuses,
//! `RuntimeError` for the driver, the device and CUDA-graph capture.

use crate::args::ArgError;
use crate::runner::RunError;
use pyo3::PyErr;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use sdpa::AttnError;

/// An argument check's error.
pub fn from_arg(e: ArgError) -> PyErr {
    if e.is_type_error() { PyTypeError::new_err(e.to_string()) } else { PyValueError::new_err(e.to_string()) }
}

/// A run's error: the library's (see [`from_attn`]); a capture that cannot
/// proceed as `RuntimeError`.
pub fn from_run(e: RunError) -> PyErr {
    match e {
        RunError::Attn(e) => from_attn(e),
        RunError::Capture(_) => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The library's error: invalid input as `ValueError`, the rest (driver,
/// device, capture) as `RuntimeError`.
fn from_attn(e: AttnError) -> PyErr {
    let invalid_input = matches!(
        e,
        AttnError::ShapeMismatch(_)
            | AttnError::UnsupportedHeadDim { .. }
            | AttnError::ZeroDimension { .. }
            | AttnError::HeadsNotDivisible { .. }
            | AttnError::InvalidScale { .. }
            | AttnError::ScaleOutOfRange { .. }
            | AttnError::BufferLength { .. }
            | AttnError::InvalidStrides { .. }
            | AttnError::TooLarge(_)
            | AttnError::UnknownVariant { .. }
            | AttnError::WrongDevice { .. }
            | AttnError::Misaligned { .. }
            | AttnError::NotDeviceMemory { .. }
            | AttnError::NotPlanned(_)
            | AttnError::UnsupportedScores { .. }
    );
    if invalid_input { PyValueError::new_err(e.to_string()) } else { PyRuntimeError::new_err(e.to_string()) }
}
