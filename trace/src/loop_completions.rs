//! Which requests the calls of each site completed within each run of
//! the loop around them: the run-time half of "the order this call
//! returns its requests in is no choice" (the static half is `build`'s
//! `CompletionOrder`). The loops are those `build` marked with
//! `MPI_Pcontrol` entry and exit markers (`static_report`).

use std::collections::{HashMap, HashSet};

use crate::rank_trace::{Op, RankTrace, ABSTRACT_ENTER, ABSTRACT_EXIT, LOOP_ENTER, LOOP_EXIT};
use crate::OpKind;

/// Which requests the calls of each site completed in each run of the
/// innermost loop around them (loops as the `MPI_Pcontrol` markers
/// delimit them), to tell whether a choice among requests was settled
/// inside its loop ([`WildcardEvent::settled_in_loop`]).
pub(crate) struct LoopCompletions {
    /// Per record index of a call with a choice: its site and the run of
    /// its innermost loop (a number per entry into a loop).
    run_at: HashMap<u64, (u32, u64)>,
    /// Per (site, loop run): the record indices of the calls that
    /// completed a request there, one per request, ascending.
    completed: HashMap<(u32, u64), Vec<u64>>,
}

impl LoopCompletions {
    pub(crate) fn of(trace: &RankTrace) -> LoopCompletions {
        let choices: HashSet<u64> = trace
            .ops
            .iter()
            .filter(|op| op.kind == OpKind::ChoiceClock)
            .filter_map(|op| op.event_clock().map(|c| c.call))
            .collect();
        let mut found = LoopCompletions {
            run_at: HashMap::new(),
            completed: HashMap::new(),
        };
        if choices.is_empty() {
            return found;
        }
        // Open loops, innermost last: (level, id, run).
        let mut open: Vec<(u32, i32, u64)> = Vec::new();
        let mut runs = 0u64;
        for op in &trace.ops {
            match op.kind {
                OpKind::Pcontrol => track_loop(op, &mut open, &mut runs),
                OpKind::Completed => {
                    let (Some(done), Some(&(_, _, run))) = (op.completed_request(), open.last())
                    else {
                        continue;
                    };
                    if let Some(call) = trace.ops.get(done.call as usize) {
                        found
                            .completed
                            .entry((call.site, run))
                            .or_default()
                            .push(done.call);
                    }
                }
                _ => {}
            }
            if choices.contains(&op.index) {
                if let Some(&(_, _, run)) = open.last() {
                    found.run_at.insert(op.index, (op.site, run));
                }
            }
        }
        found
    }

    /// Whether the `active` requests of the choice made by record `call`
    /// were all completed at its site within its loop's run.
    pub(crate) fn settled(&self, call: u64, active: i32) -> bool {
        let (Some(&key), Ok(active)) = (self.run_at.get(&call), usize::try_from(active)) else {
            return false;
        };
        let calls = self.completed.get(&key).map_or(&[][..], Vec::as_slice);
        let from = calls.partition_point(|&c| c < call);
        active >= 2 && calls.len() - from >= active
    }
}

/// Follows loop entries and exits: an entry opens a new run.
fn track_loop(op: &Op, open: &mut Vec<(u32, i32, u64)>, runs: &mut u64) {
    let level = (op.aux >> 32) as u32;
    let id = op.aux as u32 as i32;
    match level {
        ABSTRACT_ENTER | LOOP_ENTER => {
            *runs += 1;
            open.push((level, id, *runs));
        }
        ABSTRACT_EXIT | LOOP_EXIT => {
            let opening = if level == ABSTRACT_EXIT {
                ABSTRACT_ENTER
            } else {
                LOOP_ENTER
            };
            if let Some(at) = open.iter().rposition(|m| m.0 == opening && m.1 == id) {
                open.truncate(at);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::rank_trace::{Op, RankTrace, LOOP_ENTER, LOOP_EXIT};
    use crate::OpKind;

    fn marker(index: u64, level: u32, id: u32) -> Op {
        Op {
            aux: (u64::from(level) << 32) | u64::from(id),
            ..Op::new(index, OpKind::Pcontrol)
        }
    }

    /// A `Waitany` at site 7 in loop 3 over `active` requests: the first
    /// call (record 1) chooses, and `completions` calls complete one each
    /// before the loop is left.
    fn waitany_loop(active: i32, completions: u64) -> RankTrace {
        let mut ops = vec![marker(0, LOOP_ENTER, 3)];
        for k in 0..completions {
            let call = ops.len() as u64;
            ops.push(Op {
                site: 7,
                ..Op::new(call, OpKind::Waitany)
            });
            ops.push(Op {
                request: call,
                aux: 100 + k,
                ..Op::new(call + 1, OpKind::Completed)
            });
            if k == 0 {
                ops.push(Op {
                    request: call,
                    tag: active,
                    ..Op::new(call + 2, OpKind::ChoiceClock)
                });
            }
        }
        ops.push(marker(ops.len() as u64, LOOP_EXIT, 3));
        RankTrace::finalized(0, 3, ops)
    }

    #[test]
    fn a_choice_is_settled_when_its_loop_completes_every_active_request_at_its_site() {
        let settled = |active, completions| {
            waitany_loop(active, completions).wildcard_events()[0].settled_in_loop
        };
        assert!(settled(2, 2));
        assert!(settled(3, 3));
        // One request left to after the loop; an old trace (no count).
        assert!(!settled(3, 2));
        assert!(!settled(-1, 2));
    }
}
