//! DLPack tensors handed over in Python capsules (`torch.utils.dlpack.
//! to_dlpack(t)`, or `t.__dlpack__()`), read without taking them over.
//!
//! The capsule is only borrowed: its name is left as it is, so the producer's
//! own destructor frees the tensor when the capsule is collected, and the
//! memory it describes stays alive for as long as the Python tensor the
//! caller holds during the call. This module is the binding's only reader of
//! raw DLPack memory; what it returns is plain data ([`TensorInfo`]).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};
use std::ffi::{CStr, c_void};

/// `DLDevice`: where a tensor lives.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlDevice {
    /// `DLDeviceType` (`kDLCUDA` = 2, ...).
    pub device_type: i32,
    /// The device ordinal within its type.
    pub device_id: i32,
}

/// `DLDataType`: an element type as (type code, bits, lanes).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlDataType {
    /// `DLDataTypeCode` (`kDLUInt` = 1, `kDLFloat` = 2, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes per element (1 for scalars).
    pub lanes: u16,
}

/// `DLTensor`: the tensor's description, as the producer laid it out.
#[repr(C)]
#[derive(Debug)]
pub struct DlTensor {
    /// The allocation's base pointer (on the device for CUDA tensors).
    pub data: *mut c_void,
    /// Where it lives.
    pub device: DlDevice,
    /// Rank.
    pub ndim: i32,
    /// Element type.
    pub dtype: DlDataType,
    /// `ndim` sizes.
    pub shape: *const i64,
    /// `ndim` strides in elements, or null for compact row-major.
    pub strides: *const i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor`, the payload of a capsule named `dltensor`.
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    _manager_ctx: *mut c_void,
    _deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// `DLPackVersion`.
#[repr(C)]
struct DlPackVersion {
    major: u32,
    minor: u32,
}

/// `DLManagedTensorVersioned`, the payload of a capsule named
/// `dltensor_versioned` (DLPack 1.x).
#[repr(C)]
struct DlManagedTensorVersioned {
    version: DlPackVersion,
    _manager_ctx: *mut c_void,
    _deleter: Option<unsafe extern "C" fn(*mut DlManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DlTensor,
}

/// `kDLCUDA`.
pub const DEVICE_CUDA: i32 = 2;
/// `kDLInt`.
pub const CODE_INT: u8 = 0;
/// `kDLUInt`.
pub const CODE_UINT: u8 = 1;
/// `kDLFloat`.
pub const CODE_FLOAT: u8 = 2;
/// `kDLBfloat`.
pub const CODE_BFLOAT: u8 = 4;
/// `kDLFloat8_e4m3fn` (DLPack 1.1).
pub const CODE_FLOAT8_E4M3FN: u8 = 10;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`.
const FLAG_READ_ONLY: u64 = 1;
/// The DLPack major version whose layout [`DlManagedTensorVersioned`] is.
const MAJOR_VERSION: u32 = 1;

const NAME: &CStr = c"dltensor";
const NAME_VERSIONED: &CStr = c"dltensor_versioned";

/// A tensor's description, copied out of its capsule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    /// The address of the first element (`data + byte_offset`).
    pub address: u64,
    /// Where it lives.
    pub device: DlDevice,
    /// Element type.
    pub dtype: DlDataType,
    /// Sizes.
    pub shape: Vec<i64>,
    /// Strides in elements (compact row-major where the producer gave none).
    pub strides: Vec<i64>,
    /// The producer marked it read-only (DLPack 1.x only).
    pub read_only: bool,
}

impl TensorInfo {
    /// Copies what `tensor` describes.
    ///
    /// # Safety
    /// `tensor.shape` (and `tensor.strides` unless null) must point to
    /// `tensor.ndim` readable `i64`s, as DLPack requires of a producer.
    pub unsafe fn from_dl(tensor: &DlTensor, read_only: bool) -> TensorInfo {
        let rank = usize::try_from(tensor.ndim).unwrap_or(0);
        let read = |p: *const i64| -> Vec<i64> {
            if p.is_null() || rank == 0 {
                Vec::new()
            } else {
                // SAFETY: the caller promises `rank` readable values at `p`.
                unsafe { std::slice::from_raw_parts(p, rank) }.to_vec()
            }
        };
        let shape = read(tensor.shape);
        let strides = if tensor.strides.is_null() { row_major_strides(&shape) } else { read(tensor.strides) };
        TensorInfo {
            address: (tensor.data as u64).wrapping_add(tensor.byte_offset),
            device: tensor.device,
            dtype: tensor.dtype,
            shape,
            strides,
            read_only,
        }
    }
}

/// A contiguous tensor of `shape` on CUDA device 0 of DLPack type `(code,
/// bits)`, as a capsule would describe it: the argument checks' tests.
#[cfg(test)]
pub fn cuda_tensor(shape: &[i64], code: u8, bits: u8) -> TensorInfo {
    TensorInfo {
        address: 0x1000,
        device: DlDevice { device_type: DEVICE_CUDA, device_id: 0 },
        dtype: DlDataType { code, bits, lanes: 1 },
        shape: shape.to_vec(),
        strides: row_major_strides(shape),
        read_only: false,
    }
}

/// The strides (in elements) of a compact row-major tensor of `shape`.
pub fn row_major_strides(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

/// Reads the tensor a DLPack capsule holds (unversioned `dltensor`, or
/// `dltensor_versioned` of DLPack 1.x), leaving the capsule as it was.
/// `what` names the argument in errors.
pub fn read_capsule(capsule: &Bound<'_, PyAny>, what: &str) -> PyResult<TensorInfo> {
    let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
        PyTypeError::new_err(format!("{what}: expected a DLPack capsule (torch.utils.dlpack.to_dlpack(t))"))
    })?;
    if capsule.is_valid_checked(Some(NAME)) {
        let managed = capsule.pointer_checked(Some(NAME))?.cast::<DlManagedTensor>();
        // SAFETY: a valid capsule named `dltensor` holds a live
        // `DLManagedTensor` (the DLPack capsule protocol) whose shape and
        // strides arrays hold `ndim` values; it stays alive while the
        // capsule, which the caller holds, is not collected or consumed.
        return Ok(unsafe { TensorInfo::from_dl(&managed.as_ref().dl_tensor, false) });
    }
    if capsule.is_valid_checked(Some(NAME_VERSIONED)) {
        let managed = capsule.pointer_checked(Some(NAME_VERSIONED))?.cast::<DlManagedTensorVersioned>();
        // SAFETY: as above, for a capsule named `dltensor_versioned`; its
        // leading `version` field has the same place in every DLPack 1.x,
        // and the rest is read only once the major version is known.
        let managed = unsafe { managed.as_ref() };
        if managed.version.major != MAJOR_VERSION {
            return Err(PyTypeError::new_err(format!(
                "{what}: DLPack {}.{} is not supported (major version {MAJOR_VERSION} is)",
                managed.version.major, managed.version.minor
            )));
        }
        let read_only = managed.flags & FLAG_READ_ONLY != 0;
        // SAFETY: as above.
        return Ok(unsafe { TensorInfo::from_dl(&managed.dl_tensor, read_only) });
    }
    Err(PyTypeError::new_err(format!(
        "{what}: not an unconsumed DLPack capsule (named \"dltensor\" or \"dltensor_versioned\")"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_strides_of_a_4d_shape() {
        assert_eq!(row_major_strides(&[2, 3, 5, 7]), vec![105, 35, 7, 1]);
        assert_eq!(row_major_strides(&[]), Vec::<i64>::new());
    }

    #[test]
    fn from_dl_adds_the_byte_offset_and_fills_missing_strides() {
        let shape = [2i64, 4, 8, 64];
        let tensor = DlTensor {
            data: 0x1000 as *mut c_void,
            device: DlDevice { device_type: DEVICE_CUDA, device_id: 1 },
            ndim: 4,
            dtype: DlDataType { code: CODE_UINT, bits: 8, lanes: 1 },
            shape: shape.as_ptr(),
            strides: std::ptr::null(),
            byte_offset: 0x40,
        };
        // SAFETY: `shape` holds `ndim` values; strides are null.
        let info = unsafe { TensorInfo::from_dl(&tensor, false) };
        assert_eq!(info.address, 0x1040);
        assert_eq!(info.shape, shape);
        assert_eq!(info.strides, vec![2048, 512, 64, 1]);
        assert_eq!(info.device.device_id, 1);
    }

    #[test]
    fn from_dl_keeps_given_strides() {
        let shape = [2i64, 8, 4, 64];
        let strides = [2048i64, 64, 512, 1];
        let tensor = DlTensor {
            data: std::ptr::null_mut(),
            device: DlDevice { device_type: DEVICE_CUDA, device_id: 0 },
            ndim: 4,
            dtype: DlDataType { code: CODE_FLOAT, bits: 16, lanes: 1 },
            shape: shape.as_ptr(),
            strides: strides.as_ptr(),
            byte_offset: 0,
        };
        // SAFETY: `shape` and `strides` hold `ndim` values.
        let info = unsafe { TensorInfo::from_dl(&tensor, true) };
        assert_eq!(info.strides, strides);
        assert!(info.read_only);
    }
}
