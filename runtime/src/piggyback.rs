//! The header every point-to-point message carries, and datatype
//! piggybacking (seed 000 §2.4.3, Fig 5.8).
//!
//! # Header (all words `u64`, native order)
//!
//! | word | content |
//! | --- | --- |
//! | 0 | [`MAGIC`] in the low 32 bits, [`SYNC`] and other flags in the high 32 |
//! | 1 | sender's world rank in the low 32 bits (as `i32`), the acknowledgement tag in the high 32 |
//! | 2 | sender's record index (`u64::MAX` when not recorded) |
//! | 3 | the hash of the payload's type signature (0: not checked; [`crate::typesig`]) |
//! | 4.. | the sender's clock: 1 word (Lamport) or one per world rank (vector) |
//!
//! The size is fixed for a run ([`header_words`]): every rank uses the same
//! clocks. On the wire a message is the header's bytes followed by the
//! data's. Small messages of named contiguous types are copied into
//! scratch memory and sent as `MPI_BYTE` ([`crate::packed`]); the others
//! are sent from `MPI_BOTTOM` with a struct datatype of the header's bytes
//! (`MPI_BYTE`, at the header's absolute address) followed by the user's
//! `count` elements of the user's datatype (at the buffer's absolute
//! address) ([`struct_type`]); each receive chooses its own way, so the
//! header lands in the runtime's buffer and the data in the user's.
//! Afterwards the status is fixed so `MPI_Get_count` and
//! `MPI_Get_elements` see the user's data only ([`fix_status`]).
//!
//! Building, committing and freeing the struct datatype costs several
//! microseconds per message under MPICH's eager protocol; that is why
//! small messages go packed.

use crate::consts::{byte, SUCCESS};
use mpi_sys::{MPI_Aint, MPI_Count, MPI_Datatype, MPI_Status};
use std::os::raw::{c_int, c_void};

/// Marks a message as carrying an mbhybrid header ("MBHP").
pub const MAGIC: u32 = 0x4d42_4850;
/// Flag: the sender is synchronous and waits for an acknowledgement
/// carrying the receiver's clock (seed 000 §5.2.1).
pub const SYNC: u32 = 1;
/// Words before the clock.
pub const FIXED_WORDS: usize = 4;

/// Header words for a clock of `width` words.
pub fn header_words(width: usize) -> usize {
    FIXED_WORDS + width
}

/// What a header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// [`SYNC`] and future flags.
    pub flags: u32,
    /// Sender's world rank.
    pub sender: i32,
    /// Tag the acknowledgement of a synchronous send uses.
    pub ack_tag: i32,
    /// Sender's record index (`u64::MAX`: not recorded).
    pub op_index: u64,
    /// Hash of the payload's type signature (0: not checked).
    pub signature: u64,
    /// Sender's clock.
    pub clock: &'a [u64],
}

impl Header<'_> {
    /// Whether the sender waits for an acknowledgement.
    pub fn sync(&self) -> bool {
        self.flags & SYNC != 0
    }

    /// The record index, `None` when the sender did not record it.
    pub fn op_index(&self) -> Option<u64> {
        (self.op_index != u64::MAX).then_some(self.op_index)
    }
}

/// Writes a header into `words` (exactly [`header_words`] long).
pub fn encode(words: &mut [u64], header: &Header<'_>) {
    let [w0, w1, w2, w3, clock @ ..] = words else {
        return;
    };
    *w0 = u64::from(MAGIC) | u64::from(header.flags) << 32;
    *w1 = u64::from(header.sender as u32) | u64::from(header.ack_tag as u32) << 32;
    *w2 = header.op_index;
    *w3 = header.signature;
    for (to, from) in clock.iter_mut().zip(header.clock) {
        *to = *from;
    }
}

/// Reads a header; `None` when the words do not start with [`MAGIC`].
pub fn decode(words: &[u64]) -> Option<Header<'_>> {
    let [w0, w1, w2, w3, clock @ ..] = words else {
        return None;
    };
    if *w0 as u32 != MAGIC {
        return None;
    }
    Some(Header {
        flags: (*w0 >> 32) as u32,
        sender: *w1 as u32 as i32,
        ack_tag: (*w1 >> 32) as u32 as i32,
        op_index: *w2,
        signature: *w3,
        clock,
    })
}

/// Builds and commits the struct datatype {`header_bytes` bytes at
/// `header`, `count` x `datatype` at `buf`}, to be used from `MPI_BOTTOM`
/// with count 1. Returns the MPI error code of the first call that failed.
///
/// # Safety
///
/// `header` must stay valid until the communication using the type
/// completes; `buf`, `count` and `datatype` are the user's, passed to MPI.
pub unsafe fn struct_type(
    header: *const u64,
    header_bytes: c_int,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    out: &mut MPI_Datatype,
) -> c_int {
    let mut addresses: [MPI_Aint; 2] = [0, 0];
    // SAFETY: Get_address only computes an address; both out-parameters
    // are valid.
    let rc = unsafe { mpi_sys::PMPI_Get_address(header.cast(), &mut addresses[0]) };
    if rc != SUCCESS {
        return rc;
    }
    // SAFETY: as above; `buf` may be MPI_BOTTOM or null with count 0.
    let rc = unsafe { mpi_sys::PMPI_Get_address(buf, &mut addresses[1]) };
    if rc != SUCCESS {
        return rc;
    }
    let lengths: [c_int; 2] = [header_bytes, count];
    let types: [MPI_Datatype; 2] = [byte(), datatype];
    // SAFETY: three arrays of two entries; `out` is a valid out-parameter.
    let rc = unsafe {
        mpi_sys::PMPI_Type_create_struct(
            2,
            lengths.as_ptr(),
            addresses.as_ptr(),
            types.as_ptr(),
            out,
        )
    };
    if rc != SUCCESS {
        return rc;
    }
    // SAFETY: `out` was just created.
    let rc = unsafe { mpi_sys::PMPI_Type_commit(out) };
    if rc != SUCCESS {
        free_type(out);
    }
    rc
}

/// Frees a type made by [`struct_type`] (communication in progress with it
/// completes normally, MPI-3.1 §4.1.9).
pub fn free_type(datatype: &mut MPI_Datatype) {
    // SAFETY: a committed type this module created.
    unsafe { mpi_sys::PMPI_Type_free(datatype) };
}

unsafe extern "C" {
    fn mbhybrid_rt_status_bytes(status: *const MPI_Status) -> std::os::raw::c_longlong;
    fn mbhybrid_rt_status_set_bytes(
        status: *mut MPI_Status,
        bytes: std::os::raw::c_longlong,
    ) -> c_int;
}

/// The bytes a receive's or probe's `status` counts (`MPI_Get_elements_x`
/// of `MPI_BYTE`), read from the struct where `mpi.h` lays it out
/// (`mpi_consts.c`), or asked of MPI where the layout is not known.
/// `None` when MPI cannot say.
///
/// # Safety
///
/// `status` must be a valid status MPI filled in.
#[inline]
pub unsafe fn status_bytes(status: *const MPI_Status) -> Option<MPI_Count> {
    // SAFETY: the caller's contract.
    let bytes = unsafe { mbhybrid_rt_status_bytes(status) };
    if bytes >= 0 {
        return Some(bytes as MPI_Count);
    }
    let mut bytes: MPI_Count = 0;
    // SAFETY: a valid status; `bytes` is a valid out-parameter.
    let rc = unsafe { mpi_sys::PMPI_Get_elements_x(status, byte(), &mut bytes) };
    (rc == SUCCESS).then_some(bytes)
}

/// Sets the bytes `status` counts (`MPI_Status_set_elements_x` of
/// `MPI_BYTE`), as [`status_bytes`] reads them.
///
/// # Safety
///
/// `status` must be a valid status MPI filled in.
#[inline]
unsafe fn set_status_bytes(status: *mut MPI_Status, bytes: MPI_Count) {
    // SAFETY: the caller's contract.
    if unsafe { mbhybrid_rt_status_set_bytes(status, bytes as std::os::raw::c_longlong) } == 0 {
        // SAFETY: as above.
        unsafe { mpi_sys::PMPI_Status_set_elements_x(status, byte(), bytes) };
    }
}

/// Removes the header's bytes from the count of a receive's or probe's
/// `status`. Returns the bytes of data, `None` when the message is shorter
/// than a header (it was sent without one). `known`: the bytes the status
/// counts, when the caller already asked MPI (a packed receive's unpack).
///
/// # Safety
///
/// `status` must be a valid status MPI filled in.
pub unsafe fn fix_status(
    status: *mut MPI_Status,
    header_bytes: c_int,
    known: Option<MPI_Count>,
) -> Option<u64> {
    let bytes = match known {
        Some(bytes) => bytes,
        // SAFETY: the caller's contract.
        None => unsafe { status_bytes(status) }?,
    };
    let header = MPI_Count::from(header_bytes);
    if bytes < header {
        return None;
    }
    // SAFETY: the caller's contract.
    unsafe { set_status_bytes(status, bytes - header) };
    u64::try_from(bytes - header).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let clock = [3, 0, 9];
        let mut words = [0u64; FIXED_WORDS + 3];
        let h = Header {
            flags: SYNC,
            sender: 2,
            ack_tag: 31999,
            op_index: 17,
            signature: 0xdead_beef,
            clock: &clock,
        };
        encode(&mut words, &h);
        let back = decode(&words).unwrap();
        assert_eq!(back, h);
        assert!(back.sync());
        assert_eq!(back.op_index(), Some(17));
    }

    #[test]
    fn status_bytes_round_trip_and_leave_the_other_fields() {
        for bytes in [0, 1, 40, 41, (1 << 31) + 3, (1 << 32) + 7, 1 << 40] {
            let mut status = crate::engine::blank_status();
            status.MPI_SOURCE = 3;
            status.MPI_TAG = 17;
            status.MPI_ERROR = 5;
            // SAFETY: a status of this MPI's layout.
            unsafe { set_status_bytes(&mut status, bytes) };
            // SAFETY: as above.
            assert_eq!(unsafe { status_bytes(&status) }, Some(bytes));
            assert_eq!(
                (status.MPI_SOURCE, status.MPI_TAG, status.MPI_ERROR),
                (3, 17, 5)
            );
        }
    }

    #[cfg(not(mpi_pointer_handles))] // MPICH's layout
    #[test]
    fn status_bytes_keep_mpich_cancelled_flag() {
        let mut status = crate::engine::blank_status();
        status.count_hi_and_cancelled = 1;
        // SAFETY: a status of this MPI's layout.
        unsafe { set_status_bytes(&mut status, (3 << 32) + 9) };
        assert_eq!(status.count_hi_and_cancelled, 3 << 1 | 1);
        assert_eq!(status.count_lo, 9);
        // SAFETY: as above.
        assert_eq!(unsafe { status_bytes(&status) }, Some((3 << 32) + 9));
    }

    #[test]
    fn negative_fields_and_missing_magic() {
        let mut words = [0u64; FIXED_WORDS + 1];
        let h = Header {
            flags: 0,
            sender: -1,
            ack_tag: -5,
            op_index: u64::MAX,
            signature: 0,
            clock: &[1],
        };
        encode(&mut words, &h);
        let back = decode(&words).unwrap();
        assert_eq!((back.sender, back.ack_tag), (-1, -5));
        assert_eq!(back.op_index(), None);
        assert!(decode(&[0u64; FIXED_WORDS + 1]).is_none());
        assert!(decode(&[0u64; 2]).is_none());
        assert_eq!(header_words(1), 5);
    }
}
