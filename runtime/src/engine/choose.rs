//! Choices among requests (seed 001 §4; [`crate::choice`] has the rules):
//! the event of a `Waitany`, `Testany`, `Waitsome` or `Testsome` over more
//! than one active request, the index a replay forces, and the records
//! (`ChoiceClock`, `PotentialIndex`, `ChoiceCandidate`).
//!
//! The calls themselves (`complete.rs`) ask [`Rt::choosing`] before they
//! wait. In a guided run that names the event, they wait for the forced
//! request alone (as `MPI_Wait` would, [`Rt::block_on`]) and return its
//! index, so the program sees the forced order; otherwise MPI picks. Before
//! the returned requests are processed, [`Rt::note_others`] looks at the
//! rest of the array; after, [`Rt::chose`] takes the final clock and
//! records the choice.

use super::Rt;
use crate::consts::SUCCESS;
use crate::record;
use crate::slots::Kind;
use mbh_trace::op::flags;
use mbh_trace::rank_trace::RawOp;
use mbh_trace::OpKind;
use std::os::raw::c_int;

/// A choice among requests being made.
#[derive(Debug, Clone, Copy)]
pub(super) struct Choosing {
    /// Its event number (for a `Test` form, the number it takes if it
    /// completes a request).
    pub event: u32,
    /// The clock when called.
    pub start: u64,
    /// The index a guided run (or deterministic mode) forces: an active
    /// request of the snapshot.
    pub forced: Option<usize>,
    /// `forced` is the guidance's: the choice's record says it was forced
    /// ([`flags::FORCED`]). Deterministic mode's index is not: to the
    /// search that run is free.
    pub guided: bool,
}

impl Rt {
    /// Whether the call on the snapshot (`Rt::snapshot`) is a choice: more
    /// than one active request the runtime made. `consume` takes the event
    /// number (the `Wait` forms); a `Test` form only peeks and takes it in
    /// [`Rt::chose`] when it completes a request, so polls that complete
    /// nothing number nothing.
    pub(super) fn choosing(&mut self, consume: bool) -> Option<Choosing> {
        if self.ids.iter().filter(|id| id.is_some()).count() < 2 {
            return None;
        }
        let event = if consume {
            self.llcp.next_event()
        } else {
            self.llcp.peek_event()
        };
        let start = self.llcp.now();
        let det_index = self.det.as_mut().and_then(|d| d.forced_index.take());
        let guided = det_index.is_none() && self.llcp.guiding();
        let forced = if let Some(j) = det_index {
            i32::try_from(j).ok()
        } else if guided {
            self.forced.source_for(self.rank, event)
        } else {
            None
        };
        // An index that is not an active request here means the replay
        // diverged: MPI picks, and the explorer reports the force unmet.
        let forced = forced
            .and_then(|j| usize::try_from(j).ok())
            .filter(|&j| self.ids.get(j).is_some_and(Option::is_some));
        Some(Choosing {
            event,
            start,
            guided: guided && forced.is_some(),
            forced,
        })
    }

    /// Before the returned requests are processed (their slots still
    /// held): notes the other active requests of the snapshot. Those the
    /// call returned too (`returned`), receives already complete and
    /// requests that need no message (`MPI_PROC_NULL`) could have come
    /// first at once; other receives are judged when they complete; sends
    /// are not offered (`crate::choice`).
    pub(super) fn note_others(&mut self, chosen: usize, returned: impl Fn(usize) -> bool) {
        self.others.clear();
        for i in 0..self.ids.len() {
            let Some(id) = self.ids[i].filter(|_| i != chosen) else {
                continue;
            };
            let Some(slot) = self.slots.get(id) else {
                continue;
            };
            let Ok(index) = i32::try_from(i) else {
                break;
            };
            match slot.kind {
                _ if returned(i) => self.others.push((index, None, true)),
                Kind::Plain { .. } => self.others.push((index, None, true)),
                Kind::Recv(_) => {
                    // Already complete when the call returned: MPI could
                    // have returned it (what happens to the rank next, a
                    // failed assertion say, cannot hide it then).
                    let mut flag: c_int = 0;
                    let mut status = super::blank_status();
                    // SAFETY: a receive request the runtime holds; valid
                    // out-parameters. MPI keeps the request.
                    let rc = unsafe {
                        mpi_sys::PMPI_Request_get_status(slot.request, &mut flag, &mut status)
                    };
                    if rc == SUCCESS && flag != 0 {
                        self.others.push((index, None, true));
                    } else if slot.record.is_some() {
                        self.others.push((index, slot.record, false));
                    }
                }
                _ => {}
            }
        }
    }

    /// The choice `c` returned `chosen` (first) and its requests were
    /// processed; `at` is the call's record. Takes the final clock
    /// (`Llcp::choose`), records the choice and the indices offered at
    /// once, and watches the receives noted by [`Rt::note_others`].
    pub(super) fn chose(&mut self, c: Choosing, chosen: usize, at: Option<u64>, test: bool) {
        let event = if test {
            self.llcp.next_event()
        } else {
            c.event
        };
        let order = self.llcp.order();
        let end = self.llcp.choose();
        let at = at.unwrap_or(u64::MAX);
        let forced = if c.guided { flags::FORCED } else { 0 };
        // How many requests of the array were active: the search checks
        // that the loop around the call completed them all there before
        // it skips the order as no choice (mbh_trace's `settled`).
        let active = self.ids.iter().filter(|id| id.is_some()).count();
        record::append(|| RawOp {
            kind: OpKind::ChoiceClock as u16,
            flags: flags::RETURNED | forced,
            count: event as i32,
            request: at,
            comm: c.start,
            // The order, not the own component: see `Llcp::order`.
            aux: order,
            peer: i32::try_from(chosen).unwrap_or(-1),
            tag: i32::try_from(active).unwrap_or(i32::MAX),
            ..RawOp::default()
        });
        for k in 0..self.others.len() {
            match self.others[k] {
                (index, _, true) => index_record(OpKind::PotentialIndex, event, index, at, end),
                (index, Some(made), false) => {
                    index_record(OpKind::ChoiceCandidate, event, index, made, at);
                    self.choices.watch(event, end, made, index);
                }
                (_, None, false) => {}
            }
        }
        self.others.clear();
    }

    /// The request made by record `made` completed (in the call recorded
    /// as `completer`), a receive whose message carried `clock`: records it
    /// as a potential index of the choices it could have been returned by.
    pub(super) fn settle_choices(&mut self, made: u64, clock: Option<u64>, completer: Option<u64>) {
        let at = completer.unwrap_or(u64::MAX);
        self.choices.settle(made, clock, |event, index| {
            index_record(OpKind::PotentialIndex, event, index, at, clock.unwrap_or(0));
        });
    }
}

/// Appends a record about `index` of choice `event` (`PotentialIndex`,
/// `ChoiceCandidate`: `mbh_trace::OpKind` says what `request` and `aux`
/// hold for each).
fn index_record(kind: OpKind, event: u32, index: i32, request: u64, aux: u64) {
    record::append(|| RawOp {
        kind: kind as u16,
        flags: flags::RETURNED,
        count: event as i32,
        peer: index,
        request,
        aux,
        ..RawOp::default()
    });
}
