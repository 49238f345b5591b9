//! MPI constants, read from `mpi-sys`'s `RSMPI_*` statics (initialised by
//! the C compiler from the installed `mpi.h`) or from `src/mpi_consts.c`,
//! never hard-coded.

use mpi_sys::{MPI_Comm, MPI_Datatype, MPI_Op, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// `MPI_SUCCESS`.
pub const SUCCESS: c_int = mpi_sys::MPI_SUCCESS as c_int;

/// `MPI_ERR_IN_STATUS`.
pub const ERR_IN_STATUS: c_int = mpi_sys::MPI_ERR_IN_STATUS as c_int;

/// `MPI_ERR_PENDING`.
pub const ERR_PENDING: c_int = mpi_sys::MPI_ERR_PENDING as c_int;

unsafe extern "C" {
    fn mbhybrid_rt_mpi_bottom() -> *mut c_void;
    fn mbhybrid_rt_mpi_in_place() -> *mut c_void;
    fn mbhybrid_rt_mpi_byte() -> MPI_Datatype;
    fn mbhybrid_rt_mpi_packed() -> MPI_Datatype;
    fn mbhybrid_rt_predefined_ops(out: *mut MPI_Op, len: c_int) -> c_int;
    fn mbhybrid_rt_predefined_types(out: *mut MPI_Datatype, len: c_int) -> c_int;
}

/// Room for the predefined datatypes `mpi_consts.c` lists (50).
const PREDEFINED_TYPES: usize = 64;

/// The position of `datatype` among the predefined datatypes
/// `mpi_consts.c` lists, the same in every process (unlike the handle, an
/// address in Open MPI); `None` for any other.
pub fn predefined_type_index(datatype: MPI_Datatype) -> Option<usize> {
    use crate::handle::HandleBits;
    let mut types: [MPI_Datatype; PREDEFINED_TYPES] = [datatype; PREDEFINED_TYPES];
    // SAFETY: `types` holds PREDEFINED_TYPES handles; the shim writes at
    // most that many.
    let n = unsafe { mbhybrid_rt_predefined_types(types.as_mut_ptr(), PREDEFINED_TYPES as c_int) };
    let n = usize::try_from(n).unwrap_or(0).min(PREDEFINED_TYPES);
    types[..n].iter().position(|t| t.bits() == datatype.bits())
}

/// Room for the predefined reduction operations (MPI-4.1 has 14).
const PREDEFINED_OPS: usize = 16;

/// The position of `op` among MPI's predefined reduction operations
/// (`MPI_MAX` ... `MPI_NO_OP`), `None` for one the program made.
pub fn predefined_op_index(op: MPI_Op) -> Option<usize> {
    use crate::handle::HandleBits;
    let mut ops: [MPI_Op; PREDEFINED_OPS] = [op_min(); PREDEFINED_OPS];
    // SAFETY: `ops` holds PREDEFINED_OPS handles; the shim writes at most
    // that many.
    let n = unsafe { mbhybrid_rt_predefined_ops(ops.as_mut_ptr(), PREDEFINED_OPS as c_int) };
    let n = usize::try_from(n).unwrap_or(0).min(PREDEFINED_OPS);
    ops[..n].iter().position(|p| p.bits() == op.bits())
}

/// `MPI_ANY_SOURCE`.
#[inline]
pub fn any_source() -> c_int {
    // SAFETY: an immutable C `const int` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_ANY_SOURCE }
}

/// `MPI_ANY_TAG`.
#[inline]
pub fn any_tag() -> c_int {
    // SAFETY: an immutable C `const int` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_ANY_TAG }
}

/// `MPI_PROC_NULL`.
#[inline]
pub fn proc_null() -> c_int {
    // SAFETY: an immutable C `const int` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_PROC_NULL }
}

/// `MPI_UNDEFINED`.
#[inline]
pub fn undefined() -> c_int {
    // SAFETY: an immutable C `const int` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_UNDEFINED }
}

/// `MPI_STATUS_IGNORE` (a sentinel pointer, never dereferenced).
#[inline]
pub fn status_ignore() -> *mut MPI_Status {
    // SAFETY: an immutable C `MPI_Status* const` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_STATUS_IGNORE }
}

/// `MPI_STATUSES_IGNORE` (a sentinel pointer, never dereferenced).
#[inline]
pub fn statuses_ignore() -> *mut MPI_Status {
    // SAFETY: an immutable C `MPI_Status* const` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_STATUSES_IGNORE }
}

/// `MPI_COMM_WORLD`.
#[inline]
pub fn comm_world() -> MPI_Comm {
    // SAFETY: an immutable C `const MPI_Comm` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_COMM_WORLD }
}

/// `MPI_COMM_SELF`.
#[inline]
pub fn comm_self() -> MPI_Comm {
    // SAFETY: an immutable C `const MPI_Comm` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_COMM_SELF }
}

/// `MPI_REQUEST_NULL`.
#[inline]
pub fn request_null() -> MPI_Request {
    // SAFETY: an immutable C `const MPI_Request` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_REQUEST_NULL }
}

/// `MPI_UINT64_T`: the type of clock words.
#[inline]
pub fn uint64() -> MPI_Datatype {
    // SAFETY: an immutable C `const MPI_Datatype` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_UINT64_T }
}

/// `MPI_INT32_T`.
#[inline]
pub fn int32() -> MPI_Datatype {
    // SAFETY: an immutable C `const MPI_Datatype` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_INT32_T }
}

/// `MPI_MAX`.
#[inline]
pub fn op_max() -> MPI_Op {
    // SAFETY: an immutable C `const MPI_Op` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_MAX }
}

/// `MPI_MIN`.
#[inline]
pub fn op_min() -> MPI_Op {
    // SAFETY: an immutable C `const MPI_Op` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_MIN }
}

/// `MPI_BOTTOM`.
#[inline]
pub fn bottom() -> *mut c_void {
    // SAFETY: a C function without arguments returning a constant.
    unsafe { mbhybrid_rt_mpi_bottom() }
}

/// `MPI_IN_PLACE`.
#[inline]
pub fn in_place() -> *mut c_void {
    // SAFETY: a C function without arguments returning a constant.
    unsafe { mbhybrid_rt_mpi_in_place() }
}

/// `MPI_PACKED`.
#[inline]
pub fn packed() -> MPI_Datatype {
    // SAFETY: a C function without arguments returning a constant.
    unsafe { mbhybrid_rt_mpi_packed() }
}

/// `MPI_BYTE`.
#[inline]
pub fn byte() -> MPI_Datatype {
    // SAFETY: a C function without arguments returning a constant.
    unsafe { mbhybrid_rt_mpi_byte() }
}
