//! The runtime half of issue 18's buffer check: before a call goes to MPI,
//! whether its `count` elements of its datatype (by the datatype's true
//! extent, so derived types too) reach past the end of the buffer's
//! object. The object's size comes from the heap table ([`crate::heap`]:
//! a buffer that starts a block the program's own code allocated) or from
//! the static analysis ([`RoomAtCall`]: the room left in a local or global
//! object at a call whose datatype or count `build` could not check).
//! A call that does not fit is recorded as a
//! [`LocalCheck::BufferOverflow`](mbh_trace::op::LocalCheck::BufferOverflow), even when the message that arrives is
//! short. Nothing here changes what the call does.

use crate::checks;
use crate::consts::SUCCESS;
use mbh_trace::check::Check;
use mbh_trace::config::RoomAtCall;
use mbh_trace::static_report::BufferAccess;
use mpi_sys::{MPI_Count, MPI_Datatype};
use std::os::raw::{c_int, c_void};
use std::sync::OnceLock;

/// The rooms of the run's configuration, ordered by site and access.
static ROOMS: OnceLock<Vec<RoomAtCall>> = OnceLock::new();

/// Keeps the rooms `verify` computed (once, at start).
pub fn set_rooms(mut rooms: Vec<RoomAtCall>) {
    rooms.sort();
    let _ = ROOMS.set(rooms);
}

/// The room the static analysis gave buffer `access` of the call at `site`.
fn room(site: u32, access: BufferAccess) -> Option<u64> {
    let rooms = ROOMS.get()?;
    let at = rooms
        .binary_search_by(|r| (r.site, r.access).cmp(&(site, access)))
        .ok()?;
    rooms.get(at).map(|r| r.bytes)
}

/// The bytes from a buffer's address that `count` elements of `datatype`
/// cover (the last element's true end), or `None` when MPI cannot say.
fn bytes_covered(count: c_int, datatype: MPI_Datatype) -> Option<u64> {
    if count <= 0 {
        return Some(0);
    }
    let (_, end) = true_span(count, datatype)?;
    u64::try_from(end).ok()
}

/// The bytes, as offsets from a buffer's address, that `count` (> 0)
/// elements of `datatype` touch: from the first element's true lower
/// bound to the last element's true end (`MPI_Type_get_true_extent`), or
/// `None` when MPI cannot say.
fn true_span(count: c_int, datatype: MPI_Datatype) -> Option<(i128, i128)> {
    let (mut lb, mut extent): (MPI_Count, MPI_Count) = (0, 0);
    let (mut true_lb, mut true_extent): (MPI_Count, MPI_Count) = (0, 0);
    // SAFETY: valid out-parameters; an invalid datatype returns an error
    // (the runtime sets MPI_ERRORS_RETURN), and is then not checked here.
    let ok = unsafe {
        mpi_sys::PMPI_Type_get_extent_x(datatype, &mut lb, &mut extent) == SUCCESS
            && mpi_sys::PMPI_Type_get_true_extent_x(datatype, &mut true_lb, &mut true_extent)
                == SUCCESS
    };
    if !ok {
        return None;
    }
    let end =
        i128::from(true_lb) + i128::from(count - 1) * i128::from(extent) + i128::from(true_extent);
    Some((i128::from(true_lb).min(end), end))
}

/// The address range `count` elements of `datatype` at `buffer` touch
/// (for a derived datatype with holes, its whole true extent), or `None`
/// when it is empty or MPI cannot say.
pub fn address_range(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
) -> Option<(usize, usize)> {
    if count <= 0 {
        return None;
    }
    let (first, end) = true_span(count, datatype)?;
    let base = buffer as usize as i128;
    let start = usize::try_from(base + first).ok()?;
    let end = usize::try_from(base + end).ok()?;
    (end > start).then_some((start, end))
}

/// Records a [`LocalCheck::BufferOverflow`](mbh_trace::op::LocalCheck::BufferOverflow) at the current call when
/// `count` elements of `datatype` from `buffer` reach past the end of its
/// object, as far as the runtime knows the object. Call before the call
/// goes to MPI.
pub fn check_fits(
    buffer: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    access: BufferAccess,
) {
    let site = crate::record::peek_site();
    // The heap block the buffer starts, else the static analysis's room
    // for the call.
    let known = match crate::heap::block_size(buffer) {
        Some(size) => Some((size as u64, false)),
        None => room(site, access).map(|bytes| (bytes, true)),
    };
    let Some((size, from_room)) = known else {
        return;
    };
    let Some(covered) = bytes_covered(count, datatype) else {
        return;
    };
    if covered > size {
        checks::report(
            Check::BufferOverflow {
                access,
                from_room,
                object_bytes: size,
                count,
                covered_bytes: covered,
            },
            site,
            u64::MAX,
        );
    }
}
