//! MPI constants, read from `mpi-sys`'s `RSMPI_*` statics (initialised by
//! the C compiler from the installed `mpi.h`), never hard-coded.

use mpi_sys::{MPI_Comm, MPI_Status};
use std::os::raw::c_int;

/// `MPI_SUCCESS`.
pub const SUCCESS: c_int = mpi_sys::MPI_SUCCESS as c_int;

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

/// `MPI_STATUS_IGNORE` (a sentinel pointer, never dereferenced).
#[inline]
pub fn status_ignore() -> *mut MPI_Status {
    // SAFETY: an immutable C `MPI_Status* const` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_STATUS_IGNORE }
}

/// `MPI_COMM_WORLD`.
#[inline]
pub fn comm_world() -> MPI_Comm {
    // SAFETY: an immutable C `const MPI_Comm` defined by mpi-sys's shim.
    unsafe { mpi_sys::RSMPI_COMM_WORLD }
}
