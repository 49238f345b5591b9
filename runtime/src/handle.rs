//! Handle bits: the one place MPI handles become trace words.
//!
//! MPICH's handles are `int`s, Open MPI's are pointers; `mpi-sys` wraps
//! either in a newtype (`MPI_Comm(pub c_int)` or `MPI_Comm(pub *mut ...)`).
//! Every conversion goes through [`HandleBits`], so supporting another
//! representation means one more [`Repr`] impl, not a hunt for casts.

use mpi_sys::{
    MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Group, MPI_Message, MPI_Op, MPI_Request, MPI_Win,
};
use std::os::raw::c_int;

/// An MPI handle that can be stored in a trace record.
pub trait HandleBits: Copy {
    /// The handle's bit pattern, zero-extended to 64 bits (never
    /// sign-extended: MPICH's request handles are negative `int`s).
    fn bits(self) -> u64;
}

/// The representation inside a handle newtype.
pub trait Repr: Copy {
    /// The representation's bit pattern, zero-extended.
    fn repr_bits(self) -> u64;
}

impl Repr for c_int {
    fn repr_bits(self) -> u64 {
        u64::from(u32::from_ne_bytes(self.to_ne_bytes()))
    }
}

impl<T> Repr for *mut T {
    fn repr_bits(self) -> u64 {
        self as usize as u64
    }
}

impl<T> Repr for *const T {
    fn repr_bits(self) -> u64 {
        self as usize as u64
    }
}

macro_rules! handle_bits {
    ($($handle:ty),* $(,)?) => {
        $(
            impl HandleBits for $handle {
                #[inline]
                fn bits(self) -> u64 {
                    self.0.repr_bits()
                }
            }
        )*
    };
}

handle_bits!(
    MPI_Comm,
    MPI_Datatype,
    MPI_Errhandler,
    MPI_Group,
    MPI_Message,
    MPI_Op,
    MPI_Request,
    MPI_Win
);

/// Makes handle representations from small numbers, for tests that need
/// distinct handles under either MPI.
#[cfg(test)]
pub(crate) trait TestRepr {
    /// The representation of handle number `n`.
    fn test_repr(n: usize) -> Self;
}

#[cfg(test)]
impl TestRepr for c_int {
    fn test_repr(n: usize) -> Self {
        n as c_int
    }
}

#[cfg(test)]
impl<T> TestRepr for *mut T {
    fn test_repr(n: usize) -> Self {
        n as *mut T
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_handles_keep_their_number() {
        assert_eq!(
            MPI_Comm(TestRepr::test_repr(0x4400_0000)).bits(),
            0x4400_0000
        );
    }

    #[cfg(not(mpi_pointer_handles))]
    #[test]
    fn int_handles_keep_their_bit_pattern() {
        assert_eq!(MPI_Comm(0x4400_0000).bits(), 0x4400_0000);
        // MPICH request handles have the top bit set: no sign extension.
        assert_eq!(MPI_Request(-1).bits(), 0xffff_ffff);
        assert_eq!(MPI_Request(i32::MIN).bits(), 0x8000_0000);
        assert_eq!(MPI_Datatype(0).bits(), 0);
    }

    #[test]
    fn pointer_handles_keep_their_address() {
        let x = 7u8;
        let p: *const u8 = &x;
        assert_eq!(p.repr_bits(), p as usize as u64);
        assert_eq!(std::ptr::null_mut::<u8>().repr_bits(), 0);
    }
}
