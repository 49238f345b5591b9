//! The buffer of buffered sends (`MPI_Buffer_attach`/`MPI_Buffer_detach`),
//! enlarged behind the program's back for the headers, so that a buffer
//! sized as the standard says still holds the messages it counted.
//!
//! A program sizes its buffer as the standard says: for each message that
//! can be buffered at once, `MPI_Pack_size` of its data plus
//! `MPI_BSEND_OVERHEAD` (MPI-4.1 §3.6.1). Every message the runtime sends
//! is the header followed by the data ([`crate::piggyback`]), so each
//! buffered message needs `hbytes` more than the program counted, and a
//! correct `MPI_Bsend` would fail with `MPI_ERR_BUFFER`. The runtime
//! attaches its own buffer instead: the program's size plus one header for
//! every message that size can hold (each takes at least
//! `MPI_BSEND_OVERHEAD`), and `MPI_Buffer_detach` hands back the program's
//! address and size. The program's memory is left untouched (MPI forbids
//! the program to touch it while attached, so it cannot tell).
//!
//! The cost of that slack: a program whose buffer is too small by less
//! than the headers' room runs where MPI would fail with
//! `MPI_ERR_BUFFER` (docs/limits.md).

use super::Rt;
use crate::consts::SUCCESS;
use std::os::raw::{c_int, c_void};

/// The buffer the program attached, and the one MPI really has.
pub(super) struct AttachedBuffer {
    /// The program's address and size, returned by `MPI_Buffer_detach`.
    program: (*mut c_void, c_int),
    /// The runtime's buffer, attached in its place (`u64`s: aligned for
    /// any header MPI writes into it).
    attached: Vec<u64>,
}

/// The size the runtime attaches for a program buffer of `size` bytes,
/// when each message carries `header_bytes` more than the program counted.
/// `size` is not negative.
pub(super) fn enlarged_size(size: c_int, header_bytes: c_int, overhead: c_int) -> c_int {
    let size = i64::from(size);
    let messages = size / i64::from(overhead.max(1)) + 1;
    let enlarged = size + messages * i64::from(header_bytes);
    c_int::try_from(enlarged).unwrap_or(c_int::MAX)
}

impl Rt {
    /// `MPI_Buffer_attach`: attaches an enlarged buffer of the runtime's
    /// instead of `buffer` and remembers the program's.
    ///
    /// # Safety
    ///
    /// As for `MPI_Buffer_attach`.
    pub unsafe fn buffer_attach(&mut self, buffer: *mut c_void, size: c_int) -> c_int {
        if size < 0 {
            // MPI's own error for it.
            // SAFETY: the caller's arguments, unchanged.
            return unsafe { mpi_sys::PMPI_Buffer_attach(buffer, size) };
        }
        let overhead = c_int::try_from(mpi_sys::MPI_BSEND_OVERHEAD).unwrap_or(c_int::MAX);
        let bytes = enlarged_size(size, self.hbytes, overhead);
        let mut attached = vec![0u64; (bytes as usize).div_ceil(8)];
        // SAFETY: `attached` lives in `self.bsend` until detached (the
        // state outlives MPI_Finalize, which detaches implicitly).
        let rc = unsafe { mpi_sys::PMPI_Buffer_attach(attached.as_mut_ptr().cast(), bytes) };
        if rc == SUCCESS {
            self.bsend = Some(AttachedBuffer {
                program: (buffer, size),
                attached,
            });
        }
        rc
    }

    /// `MPI_Buffer_detach`: detaches the runtime's buffer (waiting, as MPI
    /// does, for its messages to go) and returns the program's address and
    /// size in `buffer_addr` and `size`.
    ///
    /// # Safety
    ///
    /// As for `MPI_Buffer_detach`: `buffer_addr` points at a `void *`.
    pub unsafe fn buffer_detach(&mut self, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
        // SAFETY: the caller's out-parameters, as MPI takes them.
        let rc = unsafe { mpi_sys::PMPI_Buffer_detach(buffer_addr, size) };
        if rc != SUCCESS {
            return rc;
        }
        if let Some(AttachedBuffer { program, attached }) = self.bsend.take() {
            // SAFETY: MPI has just written through both pointers, so they
            // are valid for these writes.
            unsafe {
                buffer_addr.cast::<*mut c_void>().write(program.0);
                size.write(program.1);
            }
            drop(attached);
        }
        rc
    }
}

#[cfg(test)]
mod tests {
    use super::enlarged_size;

    #[test]
    fn every_message_the_buffer_can_hold_gets_room_for_a_header() {
        // Two messages of 16 bytes as the standard sizes them (MPICH: 96
        // bytes of overhead each), Lamport headers of 40 bytes.
        let program = 2 * (16 + 96);
        assert_eq!(enlarged_size(program, 40, 96), program + 3 * 40);
    }

    #[test]
    fn a_huge_buffer_is_capped_at_the_largest_int() {
        assert_eq!(enlarged_size(i32::MAX, 40, 96), i32::MAX);
    }

    #[test]
    fn an_empty_buffer_still_gets_one_header() {
        assert_eq!(enlarged_size(0, 40, 96), 40);
    }
}
