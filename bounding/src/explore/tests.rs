//! Exact run counts of the search on synthetic programs: each program is a
//! function from a run's guidance to the wildcard events that run records.

use super::*;
use crate::config::{LoopAbstraction, LOOP_ABSTRACTED, LOOP_OTHER};
use mbh_trace::envelope::RecvPattern;
use mbh_trace::rank_trace::LoopMarker;
use mbh_trace::OpKind;

fn event(rank: i32, event: u32, clock: u64, matched: i32, potential: &[i32]) -> WildcardEvent {
    WildcardEvent {
        rank,
        event,
        op_index: u64::from(event),
        kind: OpKind::Recv,
        site: 0,
        start_clock: clock,
        final_clock: clock,
        matched,
        matched_tag: 0,
        potential: potential.to_vec(),
        loops: Vec::new(),
        zone: None,
        pattern: Some(RecvPattern {
            comm: 0,
            source: None,
            tag: Some(0),
        }),
        enablers: Vec::new(),
        forced: false,
        settled_in_loop: false,
    }
}

/// `events`, the run of `guidance`, as the runtime records them: each
/// event the guidance lists is forced ([`WildcardEvent::forced`]).
fn as_recorded(guidance: Option<&Guidance>, mut events: Vec<WildcardEvent>) -> Vec<WildcardEvent> {
    let index = guidance.map(Guidance::index).unwrap_or_default();
    for e in &mut events {
        e.forced = index.source_for(e.rank, e.event).is_some();
    }
    events
}

/// Records `events`, the run of `guidance` ([`as_recorded`]); a crash cut
/// every rank short (none is known to have finalized).
fn record(
    explorer: &mut Explorer,
    guidance: Option<&Guidance>,
    events: Vec<WildcardEvent>,
    end: RunEnd,
) -> (Vec<WildcardEvent>, Vec<UnmatchedForce>) {
    let events = as_recorded(guidance, events);
    let reach = match end {
        RunEnd::Crashed => Reach::Crashed {
            finished: BTreeSet::new(),
        },
        _ => Reach::Whole,
    };
    let unmatched = explorer.record_run(&events, end, &reach);
    (events, unmatched)
}

/// The runs of one exploration: the guidance of each and what it recorded.
struct Explored {
    explorer: Explorer,
    runs: Vec<(Option<Guidance>, Vec<WildcardEvent>)>,
}

impl Explored {
    /// The matched sender of every event of every run, for comparing runs.
    fn outcomes(&self) -> Vec<Vec<(i32, u32, i32)>> {
        self.runs
            .iter()
            .map(|(_, events)| {
                let mut o: Vec<_> = events
                    .iter()
                    .map(|e| (e.rank, e.event, e.matched))
                    .collect();
                o.sort();
                o
            })
            .collect()
    }

    fn assert_distinct(&self) {
        let outcomes = self.outcomes();
        let distinct: HashSet<_> = outcomes.iter().collect();
        assert_eq!(
            distinct.len(),
            outcomes.len(),
            "a run repeated: {outcomes:?}"
        );
    }
}

fn explore(
    config: ExploreConfig,
    mut program: impl FnMut(Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd),
) -> Explored {
    let mut explorer = Explorer::new(config);
    let mut runs = Vec::new();
    while let Some(run) = explorer.next_run() {
        assert_eq!(run.number as usize, runs.len() + 1);
        let (events, end) = program(run.guidance.as_ref());
        let (events, unmatched) = record(&mut explorer, run.guidance.as_ref(), events, end);
        assert!(unmatched.is_empty(), "{unmatched:?}");
        runs.push((run.guidance, events));
        assert!(runs.len() < 10_000, "the search does not end");
    }
    Explored { explorer, runs }
}

fn forced(g: Option<&Guidance>, rank: i32, event: u32) -> Option<i32> {
    g.and_then(|g| g.index().source_for(rank, event))
}

/// S1, the crooked barrier (seed 000 Fig 1.1): P1's `Irecv(*)` (event 0)
/// takes P0's message first, P2's is a potential match; the later
/// `Recv(*)` (event 1) takes whatever is left. Returns the value of `x`
/// with the events.
fn crooked_barrier(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first = forced(g, 1, 0).unwrap_or(0);
    let other = 2 - first;
    let x = if first == 0 { 22 } else { 33 };
    let end = if x == 33 {
        RunEnd::Crashed // assert(x != 33)
    } else {
        RunEnd::Complete
    };
    (
        vec![event(1, 0, 1, first, &[other]), event(1, 1, 3, other, &[])],
        end,
    )
}

#[test]
fn s1_crooked_barrier_runs_twice_and_the_failure_replays() {
    let explored = explore(ExploreConfig::default(), crooked_barrier);
    // 1 free run + 1 alternative (P2) for the one choice point.
    assert_eq!(explored.runs.len(), 2);
    assert!(explored.explorer.is_complete());
    assert!(!explored.explorer.is_bounded());
    let (guidance, events) = &explored.runs[1];
    let guidance = guidance.clone().unwrap();
    assert_eq!(
        guidance,
        Guidance {
            last_guided_clock: 1,
            forced: vec![ForcedMatch {
                rank: 1,
                event: 0,
                source: 2
            }],
        }
    );
    // The failing run replays to the same output.
    let replayed = as_recorded(Some(&guidance), crooked_barrier(Some(&guidance)).0);
    assert_eq!(&replayed, events);
    assert_eq!(crooked_barrier(Some(&guidance)).1, RunEnd::Crashed);
    let stats = explored.explorer.stats();
    assert_eq!(stats.runs, 2);
    assert_eq!(stats.died, 1);
    assert_eq!(
        stats.choice_points,
        ChoicePointStats {
            found: 1,
            explored: 1,
            abstracted: 0,
            mixing_bounded: 0,
            orderless: 0
        }
    );
}

/// Issue 11 (seed 001 §4): P0's `Waitany` over two receives (event 0, an
/// index choice) then a `Recv(*)` (event 1) that P1 or P2 can match. The
/// choice is forced by index like a sender: 2 x 2 = 4 distinct runs.
#[test]
fn a_waitany_choice_is_explored_like_a_wildcard_match() {
    let program = |g: Option<&Guidance>| {
        let index = forced(g, 0, 0).unwrap_or(0);
        let sender = forced(g, 0, 1).unwrap_or(1);
        let choice = WildcardEvent {
            kind: OpKind::Waitany,
            ..event(0, 0, 0, index, &[1 - index])
        };
        assert!(choice.is_index_choice());
        let receive = event(0, 1, 1, sender, &[3 - sender]);
        (vec![choice, receive], RunEnd::Complete)
    };
    let explored = explore(ExploreConfig::default(), program);
    assert_eq!(explored.runs.len(), 4);
    explored.assert_distinct();
    assert!(explored.explorer.is_complete());
    let indices: HashSet<i32> = explored
        .outcomes()
        .iter()
        .map(|o| o.iter().find(|e| e.1 == 0).map_or(-1, |e| e.2))
        .collect();
    assert_eq!(indices, HashSet::from([0, 1]));
}

/// Issue 37: the same program with the `Waitany` at site 7, inside loop
/// 3, which `build` found orderless. Settled in its loop, the choice is no
/// choice point (2 runs, complete, not bounded); unsettled (the loop left
/// a request to later), or with the run's innermost loop not the site's,
/// it is explored as before (4 runs).
#[test]
fn an_orderless_choice_settled_in_its_loop_is_no_choice_point() {
    let program = |settled: bool, loop_id: i32| {
        move |g: Option<&Guidance>| {
            let index = forced(g, 0, 0).unwrap_or(0);
            let sender = forced(g, 0, 1).unwrap_or(1);
            let choice = WildcardEvent {
                kind: OpKind::Waitany,
                site: 7,
                loops: vec![LoopMarker {
                    level: LOOP_OTHER,
                    loop_id,
                }],
                settled_in_loop: settled,
                ..event(0, 0, 0, index, &[1 - index])
            };
            let receive = event(0, 1, 1, sender, &[3 - sender]);
            (vec![choice, receive], RunEnd::Complete)
        }
    };
    let config = || ExploreConfig::default().orderless_sites(BTreeMap::from([(7, 3)]));
    for (settled, loop_id, runs, orderless) in [(true, 3, 2, 1), (false, 3, 4, 0), (true, 4, 4, 0)]
    {
        let explored = explore(config(), program(settled, loop_id));
        let case = format!("settled {settled}, loop {loop_id}");
        assert_eq!(explored.runs.len(), runs, "{case}");
        explored.assert_distinct();
        assert!(explored.explorer.is_complete(), "{case}");
        assert!(!explored.explorer.is_bounded(), "{case}");
        let stats = explored.explorer.stats();
        assert_eq!(stats.choice_points.orderless, orderless, "{case}");
    }
}

/// S5 (seed 000 Fig 5.14): P0 posts `Irecv(*, tag 2)`, `Irecv(*, tag 3)`,
/// `Recv(*, tag 2)`, `Recv(*, tag 3)` (events 0..3, final clocks 0, 2, 1,
/// 3); P1 and P2 each send one message of each tag. Every event lists both
/// senders at some point, but the second receive of a tag gets the one
/// message of that tag left: 2 (tag 2) x 2 (tag 3) = 4 interleavings.
fn tags_and_pending_receives(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    // (event, clock, tag), in matching (clock) order.
    let receives = [(0u32, 0u64, 2), (2, 1, 2), (1, 2, 3), (3, 3, 3)];
    let mut left: BTreeMap<i32, Vec<i32>> = BTreeMap::from([(2, vec![1, 2]), (3, vec![1, 2])]);
    let mut events = Vec::new();
    for (ev, clock, tag) in receives {
        let senders = left.get_mut(&tag).unwrap();
        let matched = forced(g, 0, ev).unwrap_or(senders[0]);
        senders.retain(|&s| s != matched);
        events.push(event(0, ev, clock, matched, senders));
    }
    events.sort_by_key(|e| e.event);
    (events, RunEnd::Complete)
}

#[test]
fn s5_four_wildcards_two_tags_four_interleavings() {
    let explored = explore(ExploreConfig::default(), tags_and_pending_receives);
    assert_eq!(explored.runs.len(), 4);
    explored.assert_distinct();
    assert!(explored.explorer.is_complete());
    // The first receive of each tag is a choice point; the second never is.
    let stats = explored.explorer.stats();
    assert_eq!(stats.choice_points.found, 2);
    assert_eq!(stats.choice_points.explored, 2);
    // Fig 5.23's order: the highest clock first (event 1, clock 2), then
    // event 0 (clock 0), whose replay reveals event 1 again.
    let lgcs: Vec<_> = explored
        .runs
        .iter()
        .map(|(g, _)| g.as_ref().map(|g| g.last_guided_clock))
        .collect();
    assert_eq!(lgcs, vec![None, Some(2), Some(0), Some(2)]);
    // Branching at clock 2 forces everything below it as in the first run.
    let second = explored.runs[1].0.as_ref().unwrap();
    assert_eq!(
        second.forced,
        vec![
            ForcedMatch {
                rank: 0,
                event: 0,
                source: 1
            },
            ForcedMatch {
                rank: 0,
                event: 1,
                source: 2
            },
            ForcedMatch {
                rank: 0,
                event: 2,
                source: 2
            },
        ]
    );
}

/// P1's receive (clock 1) takes P0 or P2. When it takes P2, P2 goes on to
/// a phase where P3's receive (clock 4) races P0 against P1; otherwise P3's
/// receive is deterministic. Runs: free; P1<-P2 (reveals P3's choice);
/// P1<-P2, P3<-P1. The revealed choice is explored right away.
fn revealing(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first = forced(g, 1, 0).unwrap_or(0);
    let mut events = vec![event(1, 0, 1, first, &[2 - first])];
    if first == 2 {
        let second = forced(g, 3, 0).unwrap_or(0);
        events.push(event(3, 0, 4, second, &[1 - second]));
    } else {
        events.push(event(3, 0, 4, 0, &[]));
    }
    (events, RunEnd::Complete)
}

#[test]
fn a_forced_choice_that_reveals_a_choice_point_is_explored_first() {
    let explored = explore(ExploreConfig::default(), revealing);
    assert_eq!(explored.runs.len(), 3);
    explored.assert_distinct();
    let third = explored.runs[2].0.clone().unwrap();
    assert_eq!(
        third,
        Guidance {
            last_guided_clock: 4,
            forced: vec![
                ForcedMatch {
                    rank: 1,
                    event: 0,
                    source: 2
                },
                ForcedMatch {
                    rank: 3,
                    event: 0,
                    source: 1
                },
            ],
        }
    );
    assert_eq!(explored.explorer.stats().choice_points.found, 2);
    assert_eq!(explored.explorer.stats().choice_points.explored, 2);
}

/// A sender that only the forced run lists (P3, once P0's receive is
/// forced to P2) is run once; P1, matched by the free run, is not run again.
#[test]
fn senders_found_by_a_forced_run_are_run_once() {
    let explored = explore(ExploreConfig::default(), |g| {
        let matched = forced(g, 0, 0).unwrap_or(1);
        let potential: &[i32] = match matched {
            1 => &[2],
            2 => &[1, 3],
            _ => &[1, 2],
        };
        (vec![event(0, 0, 1, matched, potential)], RunEnd::Complete)
    });
    // Free (P1), forced P2, forced P3.
    assert_eq!(explored.runs.len(), 3);
    explored.assert_distinct();
    assert!(explored.explorer.is_complete());
}

/// Two binary choice points at the same clock on different ranks: they are
/// concurrent, so all 2 x 2 combinations are run; the later one (rank 2)
/// is branched first, with rank 1's event forced to its recorded sender.
#[test]
fn tied_clocks_explore_every_combination() {
    let explored = explore(ExploreConfig::default(), |g| {
        let a = forced(g, 1, 0).unwrap_or(0);
        let b = forced(g, 2, 0).unwrap_or(0);
        (
            vec![event(1, 0, 3, a, &[3 - a]), event(2, 0, 3, b, &[3 - b])],
            RunEnd::Complete,
        )
    });
    assert_eq!(explored.runs.len(), 4);
    explored.assert_distinct();
    assert_eq!(
        explored.runs[1].0.clone().unwrap(),
        Guidance {
            last_guided_clock: 3,
            forced: vec![
                ForcedMatch {
                    rank: 1,
                    event: 0,
                    source: 0
                },
                ForcedMatch {
                    rank: 2,
                    event: 0,
                    source: 3
                },
            ],
        }
    );
}

/// A chain of `n` independent binary choice points: rank 0's event `i`
/// (final clock `i + 1`) takes P1 unless forced, and could take P2.
/// `loops(i)` and `zone(i)` give each event's markers.
fn chain(
    n: u32,
    loops: impl Fn(u32) -> Vec<LoopMarker>,
    zone: impl Fn(u32) -> Option<(i32, i32)>,
) -> impl FnMut(Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    move |g| {
        let events = (0..n)
            .map(|i| {
                let matched = forced(g, 0, i).unwrap_or(1);
                WildcardEvent {
                    loops: loops(i),
                    zone: zone(i),
                    ..event(0, i, u64::from(i) + 1, matched, &[3 - matched])
                }
            })
            .collect();
        (events, RunEnd::Complete)
    }
}

fn plain_chain(n: u32) -> impl FnMut(Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    chain(n, |_| Vec::new(), |_| None)
}

/// Runs of a chain of `n` binary choice points under mixing bound `k`.
///
/// The free run branches at every choice point. The run forcing the
/// `i`-th (1-based, by clock) has `m = n - i` choice points above it, of
/// which it explores the next `min(k, m)` with all their combinations:
/// below a forced choice with budget `b` and `m >= b` choice points above,
/// the runs are `f(m, b) = sum over j = 1..=b of (1 + f(m - j, b - j))
/// = 2^b - 1`, so that forced run and its subtree are `2^min(k, m)` runs.
/// In all: `1 + sum over i = 1..=n of 2^min(k, n - i)`. Unbounded (k >= n - 1)
/// that is `1 + (2^n - 1) = 2^n`; k = 0 gives `1 + n` (seed 000: "P * N");
/// k = 1 gives `2n`; k = 2 gives `4n - 4` (n >= 2).
fn mixing_runs(n: u32, k: Option<u32>) -> usize {
    let k = k.unwrap_or(n);
    1 + (1..=n).map(|i| 1usize << k.min(n - i)).sum::<usize>()
}

#[test]
fn chain_without_bounds_runs_every_combination() {
    for n in 0..=6 {
        let explored = explore(ExploreConfig::default(), plain_chain(n));
        assert_eq!(explored.runs.len(), 1 << n, "n = {n}");
        explored.assert_distinct();
        assert!(explored.explorer.is_complete());
        assert_eq!(
            explored.explorer.stats().choice_points.explored,
            u64::from(n)
        );
    }
}

#[test]
fn chain_under_mixing_bounds() {
    // n = 5: k = 0: 6; k = 1: 10; k = 2: 16; k = 3: 24; k = 4 and unbounded: 32.
    let expected = [
        (Some(0), 6),
        (Some(1), 10),
        (Some(2), 16),
        (Some(3), 24),
        (Some(4), 32),
        (None, 32),
    ];
    for (k, runs) in expected {
        assert_eq!(mixing_runs(5, k), runs);
        let explored = explore(ExploreConfig::new().mixing_bound(k), plain_chain(5));
        assert_eq!(explored.runs.len(), runs, "k = {k:?}");
        explored.assert_distinct();
        assert!(explored.explorer.is_complete());
        let stats = explored.explorer.stats();
        assert_eq!(stats.choice_points.found, 5);
        // Every choice point is explored under the free run; the bound
        // leaves the ones above the window of some forced run to MPI:
        // choice points k + 2 ..= n (1-based), i.e. n - 1 - k of them.
        assert_eq!(stats.choice_points.explored, 5);
        let bounded = 4u64.saturating_sub(u64::from(k.unwrap_or(4)));
        assert_eq!(stats.choice_points.mixing_bounded, bounded, "k = {k:?}");
        assert_eq!(explored.explorer.is_bounded(), bounded > 0);
    }
    for n in 2..=7 {
        assert_eq!(mixing_runs(n, Some(0)), 1 + n as usize);
        assert_eq!(mixing_runs(n, Some(1)), 2 * n as usize);
        assert_eq!(mixing_runs(n, Some(2)), 4 * n as usize - 4);
        for k in 0..=n {
            let explored = explore(ExploreConfig::new().mixing_bound(Some(k)), plain_chain(n));
            assert_eq!(
                explored.runs.len(),
                mixing_runs(n, Some(k)),
                "n = {n}, k = {k}"
            );
        }
    }
}

#[test]
fn zones_override_the_global_mixing_bound() {
    // Every event in zone 1 with k = 0, no global bound: as k = 0, 1 + 4.
    let explored = explore(ExploreConfig::new(), chain(4, |_| vec![], |_| Some((1, 0))));
    assert_eq!(explored.runs.len(), 5);
    // A zone with k < 0 is unbounded even under a global k = 0: 2^4.
    let explored = explore(
        ExploreConfig::new().mixing_bound(Some(0)),
        chain(4, |_| vec![], |_| Some((1, -1))),
    );
    assert_eq!(explored.runs.len(), 16);
    // Events 0 and 1 in a zone with k = 0, events 2 and 3 in none, no
    // global bound: free run 1; forcing event 0 or 1: 1 run each (budget
    // 0); forcing event 2: 2 runs (event 3 under it); forcing event 3: 1.
    let explored = explore(
        ExploreConfig::new(),
        chain(4, |_| vec![], |i| (i < 2).then_some((1, 0))),
    );
    assert_eq!(explored.runs.len(), 1 + 1 + 1 + 2 + 1);
    explored.assert_distinct();
}

#[test]
fn loop_abstraction_keeps_the_first_outcome() {
    // n = 5; events 1 and 2 in a loop marked for abstraction (7301), event 3
    // in another loop with wildcards (7304).
    let loops = |i: u32| match i {
        1 | 2 => vec![LoopMarker {
            level: LOOP_ABSTRACTED,
            loop_id: 7,
        }],
        3 => vec![LoopMarker {
            level: LOOP_OTHER,
            loop_id: 8,
        }],
        _ => vec![],
    };
    // off: 2^5; auto: 2^(5-2); all: 2^(5-3).
    for (setting, runs, abstracted) in [
        (LoopAbstraction::Off, 32, 0),
        (LoopAbstraction::Auto, 8, 2),
        (LoopAbstraction::All, 4, 3),
    ] {
        let config = ExploreConfig::new().loop_abstraction(setting);
        let explored = explore(config, chain(5, loops, |_| None));
        assert_eq!(explored.runs.len(), runs, "{setting}");
        explored.assert_distinct();
        let stats = explored.explorer.stats();
        assert_eq!(stats.choice_points.abstracted, abstracted, "{setting}");
        assert_eq!(stats.choice_points.explored, 5 - abstracted, "{setting}");
        // Abstracted events are never forced to another sender.
        for (g, _) in &explored.runs {
            let Some(g) = g else { continue };
            for f in &g.forced {
                if setting != LoopAbstraction::Off && (1..=2).contains(&f.event) {
                    assert_eq!(f.source, 1, "{setting}: {g:?}");
                }
            }
        }
    }
    // Both bounds: auto leaves 3 choice points, k = 1 on those: 2 * 3.
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Auto)
        .mixing_bound(Some(1));
    assert_eq!(explore(config, chain(5, loops, |_| None)).runs.len(), 6);
}

#[test]
fn stop_leaves_coverage_partial() {
    let explored = explore(ExploreConfig::new(), plain_chain(5));
    assert_eq!(explored.runs.len(), 32);
    assert!(explored.explorer.is_complete());

    let mut program = plain_chain(5);
    let mut explorer = Explorer::new(ExploreConfig::new());
    for _ in 0..3 {
        let run = explorer.next_run().unwrap();
        // Asking twice gives the same run.
        assert_eq!(explorer.next_run().unwrap(), run);
        let (events, end) = program(run.guidance.as_ref());
        let _ = record(&mut explorer, run.guidance.as_ref(), events, end);
    }
    explorer.stop();
    assert_eq!(explorer.next_run(), None);
    assert!(!explorer.is_complete());
    assert_eq!(explorer.runs(), 3);
}

#[test]
fn a_program_without_choice_points_runs_once() {
    let explored = explore(ExploreConfig::new(), |_| {
        (vec![event(0, 0, 1, 1, &[])], RunEnd::Complete)
    });
    assert_eq!(explored.runs.len(), 1);
    assert!(explored.explorer.is_complete());
    assert_eq!(
        explored.explorer.stats().choice_points,
        ChoicePointStats::default()
    );
}

#[test]
fn forced_matches_that_did_not_happen_are_reported_not_expanded() {
    let guidance = Guidance {
        last_guided_clock: 4,
        forced: vec![
            ForcedMatch {
                rank: 1,
                event: 0,
                source: 2,
            },
            ForcedMatch {
                rank: 1,
                event: 1,
                source: 0,
            },
        ],
    };
    let events = vec![event(1, 0, 1, 0, &[2])];
    let took_other = UnmatchedForce {
        forced: guidance.forced[0],
        observed: Some(0),
    };
    let never_completed = UnmatchedForce {
        forced: guidance.forced[1],
        observed: None,
    };
    assert_eq!(
        unmatched_forces(&guidance, &events, &Reach::Whole),
        vec![took_other, never_completed]
    );
    // A crashed run may have been killed before the event.
    let killed = Reach::Crashed {
        finished: BTreeSet::new(),
    };
    assert_eq!(
        unmatched_forces(&guidance, &events, &killed),
        vec![took_other]
    );

    // In the engine: P1's receive forced to P2 deadlocks (P2 never sends to
    // it): reported, and the run is not expanded.
    let mut explorer = Explorer::new(ExploreConfig::new());
    explorer.next_run().unwrap();
    let first = vec![event(1, 0, 1, 0, &[2]), event(1, 1, 2, 0, &[3])];
    let (_, unmatched) = record(&mut explorer, None, first, RunEnd::Complete);
    assert!(unmatched.is_empty());
    let run = explorer.next_run().unwrap();
    let g = run.guidance.unwrap();
    assert_eq!(g.last_guided_clock, 2);
    let second = vec![event(1, 0, 1, 0, &[2])];
    let (_, unmatched) = record(&mut explorer, Some(&g), second, RunEnd::Deadlocked);
    assert_eq!(
        unmatched,
        vec![UnmatchedForce {
            forced: ForcedMatch {
                rank: 1,
                event: 1,
                source: 3
            },
            observed: None
        }]
    );
    assert_eq!(explorer.stats().unexpanded, 1);
    // The search goes on with the other choice point.
    let run = explorer.next_run().unwrap();
    assert_eq!(run.guidance.unwrap().last_guided_clock, 1);
}

#[test]
fn child_budgets_shrink_by_position_and_zones_never_widen_them() {
    assert_eq!(child_budget(None, 3, None), None);
    assert_eq!(child_budget(None, 3, Some(2)), Some(2));
    assert_eq!(child_budget(Some(3), 1, None), Some(2));
    assert_eq!(child_budget(Some(3), 1, Some(1)), Some(1));
    assert_eq!(child_budget(Some(1), 1, Some(5)), Some(0));
}

/// An earlier nonblocking wildcard receive that reaches its final clock
/// after a later receive (seed 000 Fig 5.14: `irecv(*, tag=3)` ends at clock
/// 2, after `recv(*, tag=2)` at clock 1) is forced to its match whenever the
/// later one is flipped: left free, it could take the message the flipped
/// receive is forced to wait for.
#[test]
fn earlier_issued_events_are_forced_whatever_their_final_clock() {
    let explored = explore(ExploreConfig::new(), |g| {
        // Event 0 is issued first but completes last; event 1 is the choice.
        let first = forced(g, 0, 0).unwrap_or(1);
        let second = forced(g, 0, 1).unwrap_or(1);
        let events = vec![
            event(0, 0, 5, first, &[]),
            event(0, 1, 1, second, if second == 1 { &[2] } else { &[] }),
        ];
        (events, RunEnd::Complete)
    });
    assert_eq!(explored.runs.len(), 2);
    let guidance = explored.runs[1].0.as_ref().expect("a guided run");
    assert_eq!(
        guidance.index().source_for(0, 1),
        Some(2),
        "the flipped event"
    );
    assert_eq!(
        guidance.index().source_for(0, 0),
        Some(1),
        "the earlier-issued event keeps its match"
    );
    assert_eq!(guidance.last_guided_clock, 1);
}

/// An earlier receive that cannot take the forced message (another tag)
/// stays free: forcing it would keep its alternatives from ever being
/// combined with the flip.
#[test]
fn earlier_receives_of_other_tags_stay_free() {
    let explored = explore(ExploreConfig::new(), |g| {
        let first = forced(g, 0, 0).unwrap_or(1);
        let second = forced(g, 0, 1).unwrap_or(1);
        let mut early = event(0, 0, 5, first, if first == 1 { &[3] } else { &[] });
        early.pattern = early.pattern.map(|p| RecvPattern { tag: Some(7), ..p });
        let events = vec![
            early,
            event(0, 1, 1, second, if second == 1 { &[2] } else { &[] }),
        ];
        (events, RunEnd::Complete)
    });
    let guidances: Vec<_> = explored.runs.iter().filter_map(|r| r.0.clone()).collect();
    let flip = guidances
        .iter()
        .find(|g| g.index().source_for(0, 1) == Some(2))
        .expect("the later receive flipped");
    assert_eq!(
        flip.index().source_for(0, 0),
        None,
        "the other tag's receive is free"
    );
    assert_eq!(explored.outcomes().len(), 4, "every combination of the two");
}

/// Soak seed 3191's shape: rank 2 takes two messages (ranks 0 and 1) and
/// then sends to rank 1, whose first receive (key before rank 2's) could
/// take it. That message is in the causal past of both of rank 2's
/// receives but needs neither outcome: flipping rank 1's receive to it
/// must leave them free, so that all 4 combinations run (forcing the
/// receives a message comes after, tried for soak seed 3125, lost two).
fn late_sender(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first2 = forced(g, 2, 0).unwrap_or(0);
    let first1 = forced(g, 1, 0).unwrap_or(0);
    let mut took_late = event(1, 0, 0, first1, &[2 - first1]);
    took_late.enablers = vec![(2, vec![(2, 0), (2, 1)])];
    let events = vec![
        event(2, 0, 0, first2, &[1 - first2]),
        event(2, 1, 1, 1 - first2, &[]),
        took_late,
        event(1, 1, 3, 2 - first1, &[]),
    ];
    (events, RunEnd::Complete)
}

#[test]
fn a_flip_to_a_late_sender_leaves_its_past_free() {
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Off)
        .mixing_bound(None);
    let explored = explore(config, late_sender);
    let outcomes: HashSet<_> = explored.outcomes().into_iter().collect();
    assert_eq!(outcomes.len(), 4, "{outcomes:?}");
    assert!(explored.explorer.is_complete());
}

/// Soak seed 3111's shape: rank 3 takes two messages (ranks 0 and 2) and
/// fails when rank 0's comes first; otherwise it sends to rank 0, whose
/// first receive (key before rank 3's) then has a sender it never had in a
/// first run where rank 3 failed. The revealed sender is run below the
/// flip ([`revealed_senders`]).
fn late_reveal(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first3 = forced(g, 3, 0).unwrap_or(0);
    let events = vec![
        event(3, 0, 0, first3, &[2 - first3]),
        event(3, 1, 1, 2 - first3, &[]),
    ];
    rank0_takes_rank3_if_it_lives(g, events, first3 == 2)
}

/// The rest of [`late_reveal`] and [`deep_reveal`]: rank 0 takes rank 1's
/// message and, when rank 3 `lives`, rank 3's too, in either order; a
/// run where rank 3 dies is `Crashed`.
fn rank0_takes_rank3_if_it_lives(
    g: Option<&Guidance>,
    mut events: Vec<WildcardEvent>,
    lives: bool,
) -> (Vec<WildcardEvent>, RunEnd) {
    let senders: Vec<i32> = if lives { vec![1, 3] } else { vec![1] };
    let wanted = forced(g, 0, 0);
    if wanted.is_some_and(|s| !senders.contains(&s)) {
        return (events, RunEnd::Deadlocked);
    }
    let a = wanted.unwrap_or(1);
    let others: Vec<i32> = senders.iter().copied().filter(|&s| s != a).collect();
    events.push(event(0, 0, 0, a, &others));
    if lives {
        events.push(event(0, 1, 1, others[0], &[]));
    }
    let end = if lives {
        RunEnd::Complete
    } else {
        RunEnd::Crashed
    };
    (events, end)
}

#[test]
fn a_sender_revealed_by_a_later_flip_is_run() {
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Off)
        .mixing_bound(None);
    let explored = explore(config, late_reveal);
    let rank0_first: HashSet<i32> = explored
        .runs
        .iter()
        .filter(|(_, events)| {
            events
                .iter()
                .any(|e| e.rank == 3 && e.event == 0 && e.matched == 2)
        })
        .filter_map(|(_, events)| events.iter().find(|e| e.rank == 0 && e.event == 0))
        .map(|e| e.matched)
        .collect();
    assert_eq!(rank0_first, HashSet::from([1, 3]));
    assert!(explored.explorer.is_complete());
}

/// Soak seed 3402's shape: like [`late_reveal`], but rank 3 lives to send
/// to rank 0 only after two flips (its first receive takes rank 2, then
/// its `Testany` returns index 0), and the run of the first flip dies too.
/// Rank 0's first receive is forced by key order from that run on, so the
/// grandchild that lives reveals a sender for an event its parent had
/// forced, not left free: the sender is new to every run of the path.
fn deep_reveal(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first3 = forced(g, 3, 0).unwrap_or(1);
    // The choice's own order depends on the first match (timing, in the
    // soak program): the first flip's run dies as the free run did.
    let index = forced(g, 3, 1).unwrap_or(if first3 == 2 { 1 } else { 0 });
    let events = vec![
        event(3, 0, 0, first3, &[3 - first3]),
        event(3, 1, 1, index, &[1 - index]),
    ];
    rank0_takes_rank3_if_it_lives(g, events, first3 == 2 && index == 0)
}

#[test]
fn a_sender_revealed_two_flips_below_its_forcing_is_run() {
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Off)
        .mixing_bound(None);
    let explored = explore(config, deep_reveal);
    let rank0_first: HashSet<i32> = explored
        .runs
        .iter()
        .filter(|(_, events)| {
            let matched = |rank, event| {
                events
                    .iter()
                    .find(|e| e.rank == rank && e.event == event)
                    .map(|e| e.matched)
            };
            matched(3, 0) == Some(2) && matched(3, 1) == Some(0)
        })
        .filter_map(|(_, events)| events.iter().find(|e| e.rank == 0 && e.event == 0))
        .map(|e| e.matched)
        .collect();
    assert_eq!(rank0_first, HashSet::from([1, 3]));
    assert!(explored.explorer.is_complete());
    explored.assert_distinct();
}

/// Soak seed 3402's second shape: forcing rank 1's receive to rank 2 makes
/// a run that dies (rank 2 fails) before that receive completes, so the run
/// never records it. Its child, which flips rank 2's choice so that rank 2
/// lives, must still force it.
fn dies_before_its_forcing(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let first1 = forced(g, 1, 0).unwrap_or(0);
    let index = forced(g, 2, 0).unwrap_or(0);
    let mut events = vec![event(2, 0, 1, index, &[1 - index])];
    let lives = index == 1;
    if first1 == 0 || lives {
        events.push(event(1, 0, 0, first1, &[2 - first1]));
    }
    let end = if lives {
        RunEnd::Complete
    } else {
        RunEnd::Crashed
    };
    (events, end)
}

#[test]
fn a_forcing_its_run_never_reached_binds_the_children() {
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Off)
        .mixing_bound(None);
    let explored = explore(config, dies_before_its_forcing);
    explored.assert_distinct();
    let outcomes: HashSet<Vec<(i32, u32, i32)>> = explored.outcomes().into_iter().collect();
    assert!(
        outcomes.contains(&vec![(1, 0, 2), (2, 0, 1)]),
        "{outcomes:?}"
    );
    assert!(explored.explorer.is_complete());
}

/// Soak seed 3213's shape under `--buffering zero`: ranks 2, 3 and 4 each
/// send to rank 0 and then to rank 1, synchronously; rank 0 takes two of
/// the three, so only those two ever send to rank 1, which takes both.
/// Rank 1's receives come first in key order (the acknowledgement that
/// lets a sender go on carries no clock), so a flip of rank 1's first
/// receive to a sender leaves free the receive of rank 0 its message
/// needs, and MPI may match that one otherwise: the forced match cannot
/// happen. The explorer tries such a flip again with the sender's enablers
/// forced ([`with_enablers`]), and still runs every combination.
fn needs_a_later_receive(g: Option<&Guidance>) -> (Vec<WildcardEvent>, RunEnd) {
    let mut left = vec![2, 3, 4];
    let mut events = Vec::new();
    let mut took = Vec::new();
    for k in 0..2u32 {
        let source = forced(g, 0, k).unwrap_or(left[0]);
        left.retain(|&s| s != source);
        let mut e = event(0, k, 2 + u64::from(k), source, &left);
        e.potential = left.clone();
        events.push(e);
        took.push(source);
    }
    // The messages rank 1 can get, and the rank 0 event each needs.
    let available: Vec<(i32, u32)> = took.iter().zip(0u32..).map(|(&s, k)| (s, k)).collect();
    let needs = |s: i32| {
        available
            .iter()
            .find(|(sender, _)| *sender == s)
            .map(|&(_, k)| vec![(0, k)])
    };
    let wanted = forced(g, 1, 0);
    if wanted.is_some_and(|s| needs(s).is_none()) {
        return (events, RunEnd::Deadlocked);
    }
    let first = wanted.unwrap_or(available[0].0);
    let second = available
        .iter()
        .map(|&(s, _)| s)
        .find(|&s| s != first)
        .unwrap_or(-1);
    let mut e0 = event(1, 0, 0, first, &[second]);
    e0.enablers = [first, second]
        .iter()
        .filter_map(|&s| Some((s, needs(s)?)))
        .collect();
    let mut e1 = event(1, 1, 1, second, &[]);
    e1.enablers = needs(second).into_iter().map(|n| (second, n)).collect();
    events.extend([e0, e1]);
    (events, RunEnd::Deadlocked)
}

#[test]
fn a_forced_match_whose_sender_needs_a_later_receive_is_retried_with_it() {
    let config = ExploreConfig::new()
        .loop_abstraction(LoopAbstraction::Off)
        .mixing_bound(None);
    let mut explorer = Explorer::new(config);
    let (mut outcomes, mut retries) = (HashSet::new(), 0);
    while let Some(run) = explorer.next_run() {
        let (events, end) = needs_a_later_receive(run.guidance.as_ref());
        let (events, unmatched) = record(&mut explorer, run.guidance.as_ref(), events, end);
        assert!(unmatched.is_empty(), "{unmatched:?} in {:?}", run.guidance);
        if explorer.last_run_infeasible() {
            retries += 1;
            continue;
        }
        let mut o: Vec<_> = events
            .iter()
            .map(|e| (e.rank, e.event, e.matched))
            .collect();
        o.sort();
        // Runs may repeat a combination (the search has no sleep sets).
        outcomes.insert(o);
        assert!(explorer.runs() < 1000, "the search does not end");
    }
    // Rank 0 takes an ordered pair of distinct senders of 3 (6 ways) and
    // rank 1 takes those two in either order.
    assert_eq!(outcomes.len(), 12, "{outcomes:?}");
    assert!(retries > 0, "the shape needs a retry");
    assert!(explorer.is_complete());
    // Exact counts: a retry's added forcings stay open choice points below
    // it (`PathFacts::reopened`); fixing them as the runtime's record has
    // them runs 22 runs with 5 retries and explores less below retries.
    assert_eq!((explorer.runs(), retries), (25, 6), "runs, retries");
}
