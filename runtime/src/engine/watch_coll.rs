//! The access check's watch over a nonblocking collective's buffers
//! ([`crate::coll_pending`] says which): made once the call
//! returned its request, on that request's slot, so that the program's
//! `Wait`/`Test` releasing the slot forgets them, as for `MPI_Isend`.

use super::Rt;
use crate::coll_pending::Buffers;
use crate::consts::SUCCESS;
use crate::handle::HandleBits;
use crate::record::REQUESTS;
use mpi_sys::MPI_Request;
use std::os::raw::c_int;

impl Rt {
    /// Watches `buffers`, those of the nonblocking collective that just
    /// returned `rc` and `*request`, until its request completes.
    ///
    /// # Safety
    ///
    /// `request` is null or the call's request argument.
    pub unsafe fn watch_collective(&self, rc: c_int, request: *mut MPI_Request, buffers: Buffers) {
        if rc != SUCCESS || request.is_null() {
            return;
        }
        // SAFETY: the caller's request, written by the call.
        let handle = unsafe { *request };
        let Some(id) = REQUESTS.get(handle.bits()) else {
            return;
        };
        let Some(record) = self.slots.get(id).map(|slot| slot.record) else {
            return;
        };
        let mut list = [((0, 0), crate::pending::Pending::Send); 2];
        let mut count = 0;
        for (place, buffer) in list.iter_mut().zip(buffers.as_list()) {
            *place = buffer;
            count += 1;
        }
        crate::access::watch_all(id, record, &list[..count]);
    }
}
