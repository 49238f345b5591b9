//! The requests a blocked call on several (`MPI_Waitall`, `MPI_Waitany`,
//! `MPI_Waitsome`) waits for, listed for the wait-for graph in
//! [`OpKind::WaitRequest`] records.
//!
//! The call's own record names only its first request. Without the others
//! the graph cannot tell a `Waitall` that waits for a send nobody will
//! receive from one whose requests can all complete, and must assume it
//! can complete: a deadlock in a `Waitall` then ran into the run's timeout
//! instead of being confirmed (seed 003 §3 treats `Waitall` as an AND node
//! over its requests, `Waitany` as an OR node).
//!
//! Listing costs a record per request, so it is written only when the
//! call waits: once its polling loop has spun its busy passes
//! ([`super::backoff`]), or just before it blocks inside MPI. A call
//! whose requests are already complete, as in a halo exchange whose
//! messages arrived, writes nothing more. The call's requests are noted
//! when it begins (slot lookups only), since the scratch arrays of the
//! snapshot may serve other calls while it polls.

use super::Rt;
use crate::handle::HandleBits;
use crate::record;
use crate::slots::Kind;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;

/// The requests of the call on several that is waiting, not yet listed.
#[derive(Default)]
pub(super) struct Awaited {
    /// The call's record; `None` when nothing is left to list.
    call: Option<u64>,
    /// Per request, 1 + the index of the record that made it (0: a
    /// request the runtime does not know), as [`OpKind::WaitRequest`]'s
    /// `aux` holds it.
    origins: Vec<u64>,
}

impl Rt {
    /// Notes that call `index` waits for every active request of the
    /// snapshot (`Waitall`: all of them; `Waitany`/`Waitsome`: one).
    pub(super) fn await_all(&mut self, index: Option<u64>) {
        self.awaited.origins.clear();
        self.awaited.call = index;
        if index.is_none() {
            return;
        }
        for i in 0..self.ids.len() {
            if let Some(origin) = self.origin_word(i) {
                self.awaited.origins.push(origin);
            }
        }
    }

    /// Notes that call `index` waits for the snapshot's request `j` alone
    /// (a replay forces a `Waitany`/`Waitsome` to return it, seed 001 §4).
    pub(super) fn await_one(&mut self, index: Option<u64>, j: usize) {
        self.awaited.origins.clear();
        self.awaited.call = index;
        if let Some(origin) = self.origin_word(j) {
            self.awaited.origins.push(origin);
        }
    }

    /// The `WaitRequest` word of the snapshot's request `i`: 1 + its
    /// origin record, 0 when unknown; `None` for `MPI_REQUEST_NULL` and
    /// requests the program freed (they complete by themselves).
    fn origin_word(&self, i: usize) -> Option<u64> {
        let null = self.handles.get(i)?.bits() == crate::consts::request_null().bits();
        if null {
            return None;
        }
        let Some(id) = self.ids.get(i).copied().flatten() else {
            return Some(0);
        };
        match self.slots.get(id) {
            Some(slot) if matches!(slot.kind, Kind::Free) || slot.orphan => None,
            Some(slot) => Some(slot.record.map_or(0, |r| r.wrapping_add(1))),
            None => Some(0),
        }
    }

    /// Writes the noted requests' records, once: the call is about to
    /// block, or has polled long enough to count as waiting.
    pub(super) fn list_awaited(&mut self) {
        let Some(call) = self.awaited.call.take() else {
            return;
        };
        for &origin in &self.awaited.origins {
            record::append(|| RawOp {
                kind: OpKind::WaitRequest as u16,
                flags: flags::RETURNED,
                request: call,
                aux: origin,
                ..RawOp::default()
            });
        }
    }

    /// The call returned: nothing left to list.
    pub(super) fn forget_awaited(&mut self) {
        self.awaited.call = None;
    }
}
