//! The packed fast path of small messages.
//!
//! On the wire a piggybacked message is the header's bytes followed by the
//! data's bytes (MPICH, homogeneous: no conversion), whatever datatype each
//! side describes it with. So each side chooses its own way
//! independently:
//!
//! * **packed**, when the user's datatype is a named type whose elements
//!   lie back to back (size = extent = true extent, true lower bound 0)
//!   and the data is at most [`MAX_DATA`] bytes: the sender copies header
//!   and data into scratch memory and sends it as `MPI_BYTE`; the receiver
//!   receives `MPI_BYTE` into scratch memory of the header's size plus its
//!   own buffer's, then copies the header and the data out;
//!   Nonblocking sends and receives do the same in their request slot's
//!   memory (header, then 256 bytes of data) or, for more data, in a
//!   buffer the slot takes from a pool (`Slots::give_room`); a receive's
//!   data is copied out when the program
//!   completes the request (or sees it complete with
//!   `MPI_Request_get_status`);
//! * **struct**, otherwise: the struct datatype of [`crate::piggyback`]
//!   (header and user buffer from `MPI_BOTTOM`), built, committed and
//!   freed per message.
//!
//! Both give the status the same count (header plus data bytes), so
//! [`crate::piggyback::fix_status`] applies to either; a message longer than
//! the receive's buffer overflows the packed receive's scratch by the same
//! bytes and fails with `MPI_ERR_TRUNCATE` as without the tool.
//!
//! Why: MPICH (over UCX here) sends a struct datatype through its generic
//! noncontiguous path, which costs several microseconds per message even
//! when the type is cached (BENCHMARKS.md, "Where the time goes"), while a
//! copy of a few hundred bytes costs tens of nanoseconds. Past a few KiB
//! the copies cost more than the struct path saves.
//!
//! Derived datatypes keep the struct path (their typemap may reorder or
//! skip bytes, and an uncommitted one must still fail as MPI makes it).

use crate::consts::{bottom, byte, SUCCESS};
use crate::handle::HandleBits;
use crate::piggyback;
use mpi_sys::{MPI_Count, MPI_Datatype, MPI_Status};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::os::raw::{c_int, c_void};

/// Largest data (bytes) a message takes the packed path with. Measured
/// (BENCHMARKS.md, MPICH 4.0 over UCX shared memory): up to 8 KiB MPICH
/// sends eagerly and a struct type costs about 2 µs per KiB more than
/// `MPI_BYTE`; from about 10 KiB it goes by rendezvous, where the struct
/// type costs nothing extra and the packed path's two copies cost 30-60%.
pub const MAX_DATA: usize = 8 * 1024;

/// A hasher for datatype handles (integers or pointers): one multiply,
/// enough for a table of a few dozen handles, much cheaper than SipHash on
/// every message.
#[derive(Default, Clone, Copy)]
pub struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ v >> 29).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by handle bits with [`HandleHasher`].
pub type HandleMap<V> = HashMap<u64, V, BuildHasherDefault<HandleHasher>>;

/// A [`HandleMap`] of answers about handles with the last one asked in
/// front: a program sends the same datatype over and over, and one
/// compare costs less than hashing and probing on every message.
#[derive(Debug)]
pub struct HandleCache<V: Copy> {
    /// The handle asked last ([`NO_HANDLE`]: none), and its answer.
    last_bits: u64,
    last: V,
    map: HandleMap<V>,
}

/// Bits no handle has (MPICH's are 32-bit integers, Open MPI's pointers).
const NO_HANDLE: u64 = u64::MAX;

impl<V: Copy> HandleCache<V> {
    /// An empty cache; `blank` fills the place of the last answer until
    /// there is one (it is never returned).
    pub fn new(blank: V) -> Self {
        HandleCache {
            last_bits: NO_HANDLE,
            last: blank,
            map: HandleMap::with_capacity_and_hasher(64, Default::default()),
        }
    }

    /// The answer for handle `bits`, made by `make` the first time.
    #[inline(always)]
    pub fn get_or_insert_with(&mut self, bits: u64, make: impl FnOnce() -> V) -> V {
        if self.last_bits == bits {
            return self.last;
        }
        self.miss(bits, make)
    }

    #[cold]
    #[inline(never)]
    fn miss(&mut self, bits: u64, make: impl FnOnce() -> V) -> V {
        let v = *self.map.entry(bits).or_insert_with(make);
        self.last_bits = bits;
        self.last = v;
        v
    }

    /// Forgets the answer for handle `bits` (the handle was freed).
    pub fn remove(&mut self, bits: u64) {
        self.map.remove(&bits);
        if self.last_bits == bits {
            self.last_bits = NO_HANDLE;
        }
    }
}

/// How one side of a message goes to MPI: `count` x `datatype` at `buf`.
#[derive(Debug)]
pub struct Message {
    /// Buffer given to MPI.
    pub buf: *mut c_void,
    /// Count given to MPI.
    pub count: c_int,
    /// Datatype given to MPI.
    pub datatype: MPI_Datatype,
    /// `datatype` is a struct type this message owns (freed by [`Message::free`]).
    derived: bool,
    /// Header and data go as `MPI_BYTE` through a scratch: unlike
    /// `derived`, still true after [`Message::free`], which `MPI_Sendrecv`
    /// calls before its receive completes and it asks where the header is.
    packed: bool,
    /// A packed receive: where its header and data go once it arrived.
    unpack: Option<Unpack>,
}

#[derive(Debug, Clone, Copy)]
struct Unpack {
    header: *mut u64,
    data: *mut u8,
    capacity: usize,
}

impl Message {
    /// Frees the struct type, if any (a communication in progress with it
    /// completes normally, MPI-3.1 §4.1.9).
    pub fn free(&mut self) {
        if self.derived {
            piggyback::free_type(&mut self.datatype);
            self.derived = false;
        }
    }

    /// Whether the message goes packed (its header then lies in the
    /// scratch), before or after [`Message::free`].
    pub fn is_packed(&self) -> bool {
        self.packed
    }
}

/// Scratch memory and per-datatype answers for the packed path of
/// blocking calls (one send and one receive at a time).
pub struct Wire {
    hbytes: usize,
    out: Vec<u64>,
    inn: Vec<u64>,
    /// Element size of each datatype handle seen, when packable.
    layouts: HandleCache<Option<usize>>,
}

impl Wire {
    /// Scratch for headers of `hbytes` bytes and [`MAX_DATA`] bytes of data.
    pub fn new(hbytes: usize) -> Wire {
        let words = (hbytes + MAX_DATA).div_ceil(8);
        Wire {
            hbytes,
            out: vec![0; words],
            inn: vec![0; words],
            layouts: HandleCache::new(None),
        }
    }

    /// Bytes of `count` x `datatype` when the message can go packed.
    #[inline]
    pub fn packed_bytes(&mut self, count: c_int, datatype: MPI_Datatype) -> Option<usize> {
        let size = self
            .layouts
            .get_or_insert_with(datatype.bits(), || element_size(datatype))?;
        let bytes = usize::try_from(count).ok()?.checked_mul(size)?;
        (bytes <= MAX_DATA).then_some(bytes)
    }

    /// Forgets what is known of a datatype being freed.
    pub fn forget_type(&mut self, datatype: MPI_Datatype) {
        self.layouts.remove(datatype.bits());
    }

    /// The send of header `header` (`hbytes` bytes) and `count` x
    /// `datatype` at `buf`: packed into the send scratch, or as a struct
    /// type. Returns the MPI error code of a failed struct type.
    ///
    /// # Safety
    ///
    /// `header` holds the header; `buf`, `count`, `datatype` are the
    /// user's. For the struct path the header must stay valid until the
    /// send completes; the packed path copies it (and the data), and the
    /// send scratch must not be reused before the send completes.
    pub unsafe fn outgoing(
        &mut self,
        header: *const u64,
        buf: *const c_void,
        count: c_int,
        datatype: MPI_Datatype,
    ) -> Result<Message, c_int> {
        negative_count(count)?;
        match self.packed_bytes(count, datatype) {
            Some(bytes) => {
                let scratch = self.out.as_mut_ptr();
                // SAFETY: the caller's contract; the scratch holds hbytes +
                // MAX_DATA bytes.
                Ok(unsafe { pack(scratch, self.hbytes, header, buf, bytes) })
            }
            // SAFETY: the caller's contract.
            None => unsafe { struct_message(header, self.hbytes, buf, count, datatype) },
        }
    }

    /// Where a send of `count` x `datatype` best has its header written:
    /// at the start of the send scratch when it goes packed (then
    /// [`Wire::outgoing`] moves only the data), else at `stable`, where
    /// the struct type will point.
    #[inline]
    pub fn send_header(
        &mut self,
        count: c_int,
        datatype: MPI_Datatype,
        stable: *mut u64,
    ) -> *mut u64 {
        if count >= 0 && self.packed_bytes(count, datatype).is_some() {
            self.out.as_mut_ptr()
        } else {
            stable
        }
    }

    /// The header words of the last packed receive (its scratch's start):
    /// [`unpack`] leaves the header there.
    #[inline]
    pub fn received_header(&self) -> &[u64] {
        &self.inn[..self.hbytes / 8]
    }

    /// The receive of a header into `header` and `count` x `datatype` into
    /// `buf`: into the receive scratch (then [`unpack`], which leaves the
    /// header in the scratch: [`Wire::received_header`]), or as a struct
    /// type.
    ///
    /// # Safety
    ///
    /// As for [`Wire::outgoing`]; the receive scratch is not reused before
    /// the receive completed and was unpacked.
    pub unsafe fn incoming(
        &mut self,
        header: *mut u64,
        buf: *mut c_void,
        count: c_int,
        datatype: MPI_Datatype,
    ) -> Result<Message, c_int> {
        negative_count(count)?;
        match self.packed_bytes(count, datatype) {
            Some(bytes) => Ok(Message {
                buf: self.inn.as_mut_ptr().cast(),
                count: (self.hbytes + bytes) as c_int,
                datatype: byte(),
                derived: false,
                packed: true,
                unpack: Some(Unpack {
                    header: self.inn.as_mut_ptr(),
                    data: buf.cast(),
                    capacity: bytes,
                }),
            }),
            // SAFETY: the caller's contract.
            None => unsafe { struct_message(header, self.hbytes, buf, count, datatype) },
        }
    }
}

/// Copies `hbytes` of header and `bytes` of data into `scratch` and
/// describes it as `MPI_BYTE`. `header` may be `scratch` itself (a request
/// slot's header, with room for data after it): then only the data moves.
///
/// # Safety
///
/// `scratch` holds `hbytes + bytes` bytes; `header` `hbytes` (at `scratch`
/// or not overlapping it); `buf` `bytes` not overlapping the scratch (may
/// be null when `bytes` is 0).
pub unsafe fn pack(
    scratch: *mut u64,
    hbytes: usize,
    header: *const u64,
    buf: *const c_void,
    bytes: usize,
) -> Message {
    let to = scratch.cast::<u8>();
    // SAFETY: the caller's contract; the regions do not overlap (scratch
    // is the runtime's own).
    unsafe {
        if header != scratch.cast_const() {
            std::ptr::copy_nonoverlapping(header.cast::<u8>(), to, hbytes);
        }
        if bytes > 0 {
            std::ptr::copy_nonoverlapping(buf.cast::<u8>(), to.add(hbytes), bytes);
        }
    }
    Message {
        buf: scratch.cast(),
        count: (hbytes + bytes) as c_int,
        datatype: byte(),
        derived: false,
        packed: true,
        unpack: None,
    }
}

/// The struct-type form of a message (nonblocking calls too: nothing is
/// copied).
///
/// # Safety
///
/// As for [`piggyback::struct_type`].
pub unsafe fn struct_message(
    header: *const u64,
    hbytes: usize,
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Result<Message, c_int> {
    let mut ty = datatype;
    // SAFETY: the caller's contract.
    let rc =
        unsafe { piggyback::struct_type(header, hbytes as c_int, buf, count, datatype, &mut ty) };
    if rc != SUCCESS {
        return Err(rc);
    }
    Ok(Message {
        buf: bottom(),
        count: 1,
        datatype: ty,
        derived: true,
        packed: false,
        unpack: None,
    })
}

/// After a packed receive completed successfully with `status`: copies the
/// header (`hbytes`) and the data that arrived out of the scratch. Nothing
/// for a struct-type message (MPI put both in place). The status still
/// counts the header; [`piggyback::fix_status`] removes it, given the
/// count returned here (header and data bytes), so MPI is asked once.
///
/// # Safety
///
/// `message` is the receive's, completed with `status` (a status MPI
/// filled in); its scratch has not been reused.
pub unsafe fn unpack(
    message: &Message,
    hbytes: usize,
    status: *const MPI_Status,
) -> Option<MPI_Count> {
    let u = message.unpack?;
    let from = message.buf.cast::<u8>().cast_const();
    // SAFETY: the caller's contract.
    let received = unsafe { unpack_data(from, hbytes, u.data, u.capacity, status) }?;
    if u.header.cast::<u8>().cast_const() != from {
        // SAFETY: the scratch starts with the header MPI wrote; the header
        // memory is the caller's, apart from the scratch.
        unsafe { std::ptr::copy_nonoverlapping(from, u.header.cast::<u8>(), hbytes) };
    }
    Some(received)
}

/// Copies the data of a packed receive completed with `status` from after
/// the header at `from` (`hbytes`) to `to` (at most `capacity` bytes).
/// Returns the bytes the status counts (header and data) when a header
/// arrived (`None`: the message is foreign, or the status holds no count).
///
/// # Safety
///
/// `from` holds `hbytes + capacity` bytes MPI wrote; `to` is valid for
/// `capacity` bytes; `status` is null or a status MPI filled in.
pub unsafe fn unpack_data(
    from: *const u8,
    hbytes: usize,
    to: *mut u8,
    capacity: usize,
    status: *const MPI_Status,
) -> Option<MPI_Count> {
    if status.is_null() || status == crate::consts::status_ignore().cast_const() {
        return None;
    }
    // SAFETY: a status MPI filled in.
    let count = unsafe { piggyback::status_bytes(status) }?;
    let received = usize::try_from(count).unwrap_or(0);
    if received < hbytes {
        return None;
    }
    let data = (received - hbytes).min(capacity);
    if data > 0 {
        // SAFETY: the caller's contract.
        unsafe { std::ptr::copy_nonoverlapping(from.add(hbytes), to, data) };
    }
    Some(count)
}

/// The element size of `datatype` when its `count` elements are `count *
/// size` bytes back to back in typemap order from the buffer's address: a
/// named type with size = extent = true extent and true lower bound 0.
fn element_size(datatype: MPI_Datatype) -> Option<usize> {
    if !crate::typesig::is_named(datatype) {
        return None;
    }
    let (mut size, mut lb, mut extent, mut true_lb, mut true_extent): (
        MPI_Count,
        MPI_Count,
        MPI_Count,
        MPI_Count,
        MPI_Count,
    ) = (0, 0, 0, 0, 0);
    // SAFETY: a valid named type (the envelope call succeeded); valid
    // out-parameters.
    let ok = unsafe {
        mpi_sys::PMPI_Type_size_x(datatype, &mut size) == SUCCESS
            && mpi_sys::PMPI_Type_get_extent_x(datatype, &mut lb, &mut extent) == SUCCESS
            && mpi_sys::PMPI_Type_get_true_extent_x(datatype, &mut true_lb, &mut true_extent)
                == SUCCESS
    };
    (ok && size > 0 && size == extent && size == true_extent && true_lb == 0)
        .then(|| usize::try_from(size).ok())
        .flatten()
}

/// A negative count is refused with the class MPI gives it
/// (`MPI_ERR_COUNT`), before the message is made: made into the runtime's
/// struct type it came back as another class (`MPI_ERR_ARG` under Open
/// MPI), which a program that checks the class would see.
fn negative_count(count: c_int) -> Result<(), c_int> {
    if count < 0 {
        Err(mpi_sys::MPI_ERR_COUNT as c_int)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn pack_puts_data_right_after_the_header() {
        let header = [1u64, 2, 3, 4, 5];
        let data = *b"hello";
        let mut scratch = [0u64; 8];
        // SAFETY: 40 header bytes and 5 data bytes fit in 64.
        let m = unsafe {
            pack(
                scratch.as_mut_ptr(),
                40,
                header.as_ptr(),
                data.as_ptr().cast(),
                5,
            )
        };
        assert_eq!(m.count, 45);
        assert!(m.is_packed());
        assert_eq!(&scratch[..5], &header);
        assert_eq!(&scratch[5].to_ne_bytes()[..5], b"hello");
        // Zero bytes from a null buffer is fine.
        // SAFETY: nothing is read from the null buffer.
        let m = unsafe {
            pack(
                scratch.as_mut_ptr(),
                40,
                header.as_ptr(),
                std::ptr::null(),
                0,
            )
        };
        assert_eq!(m.count, 40);
    }

    #[test]
    fn handle_hasher_spreads_neighbouring_handles() {
        let b = BuildHasherDefault::<HandleHasher>::default();
        let h: Vec<u64> = (0x4c00_0101u64..0x4c00_0110)
            .map(|v| b.hash_one(v))
            .collect();
        let mut sorted = h.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), h.len());
    }
}
