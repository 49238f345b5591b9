//! Collectives some ranks may skip: `build`'s static analysis
//! lists the collectives a rank-dependent branch decides; a run that
//! reaches one reports it, *confirmed* when the run shows the members of
//! its communicator calling it a different number of times.
//!
//! What a run shows decides what is said:
//!
//! * the members of the call's communicator made different sequences of
//!   collectives on it: *confirmed*, an error;
//! * they made the same sequence, and this call equally often: the branch
//!   went the same way on every rank this time; a warning, since another
//!   input or rank count may send it otherwise (on `MPI_COMM_WORLD` only: a
//!   communicator only some ranks belong to is usually guarded by the very
//!   condition that made it);
//! * they made the same sequence but this call unequally (`if (rank == 0)
//!   MPI_Reduce(..., buf, ...); else MPI_Reduce(..., NULL, ...)`): the
//!   other ranks made the same collective elsewhere, as the program
//!   intends; nothing is said (the run checks the path sensitivity the
//!   static analysis lacks);
//! * no rank made the call, every rank ran to its end, and a branch
//!   deciding it depends on the rank and on an input the user gives (an
//!   argument, the environment, a file; not a clock or a random number):
//!   another input may take the branch on some ranks only. A
//!   warning with the call and the branches, where `build` warned and the
//!   run alone cannot tell; an error when every path to the call passes
//!   tests of the rank that only some ranks of this run pass (`if (rank ==
//!   0 && argc > 2)`): whenever an input reaches the call, the others
//!   cannot make it ([`DivergentCollective::rank_tests`]).

use crate::place::site_location;
use mbh_trace::op::OpClass;
use mbh_trace::rank_trace::{RankState, WORLD_COMM};
use mbh_trace::static_report::{
    ranks_passing, Dependence, DivergentCollective, GuardingBranch, RankTest,
};
use mbh_trace::{Finding, FindingKind, Location, OpKind, RankTrace, Role, Severity, SiteTable};
use std::collections::BTreeMap;

/// The most input branches named before the rest are counted.
const INPUT_BRANCHES_SHOWN: usize = 5;

/// What a verdict depends on beyond the run: one line per
/// branch on the program's input that decides whether MPI calls run ("this
/// verdict holds for the input it ran with: control flow at app.c:12
/// depends on `argv[1]`"), so that "no errors" never reads as "correct for
/// every input".
pub fn input_dependence(sites: Option<&SiteTable>) -> Vec<String> {
    let Some(analysis) = sites.and_then(|t| t.analysis.as_ref()) else {
        return Vec::new();
    };
    let branches = &analysis.input_branches;
    let mut lines: Vec<String> = branches
        .iter()
        .take(INPUT_BRANCHES_SHOWN)
        .map(|b| {
            format!(
                "this verdict holds for the input it ran with: control flow at {} depends on {}",
                b.span,
                b.inputs.join(" and ")
            )
        })
        .collect();
    if branches.len() > INPUT_BRANCHES_SHOWN {
        lines.push(format!(
            "and {} more branches on the program's input decide MPI calls (`mbhybrid analyze` lists them)",
            branches.len() - INPUT_BRANCHES_SHOWN
        ));
    }
    lines
}

/// Folds each confirmed divergence into the deadlock or collective
/// mismatch of the same run that already points at its call: one problem,
/// one finding, which now also names the branch that decided it (as a
/// location and a note).
pub fn fold_into_hangs(findings: &mut Vec<Finding>) {
    let mut kept = Vec::with_capacity(findings.len());
    let mut divergences = Vec::new();
    for finding in findings.drain(..) {
        let confirmed = finding.kind == FindingKind::CollectiveDivergence
            && finding.severity == Severity::Error;
        if confirmed {
            divergences.push(finding);
        } else {
            kept.push(finding);
        }
    }
    for divergence in divergences {
        let Some(call) = divergence.locations.first() else {
            kept.push(divergence);
            continue;
        };
        let hang = kept.iter_mut().find(|f| {
            matches!(
                f.kind,
                FindingKind::Deadlock | FindingKind::CollectiveMismatch
            ) && f
                .locations
                .iter()
                .any(|l| l.file == call.file && l.line == call.line)
        });
        match hang {
            Some(hang) => {
                hang.notes.push(format!(
                    "{} (collective-divergence, MBH0019; {})",
                    divergence.message,
                    divergence.notes.first().map_or("", String::as_str)
                ));
                hang.locations
                    .extend(divergence.locations.iter().skip(1).cloned());
            }
            None => kept.push(divergence),
        }
    }
    *findings = kept;
}

/// The findings of one run's traces; `deadlocked` when the deadlock
/// monitor stopped the run (its blocked ranks ended there, not early).
pub fn divergence_findings(
    sites: Option<&SiteTable>,
    traces: &[Option<RankTrace>],
    deadlocked: bool,
) -> Vec<Finding> {
    let Some(table) = sites else {
        return Vec::new();
    };
    let Some(analysis) = &table.analysis else {
        return Vec::new();
    };
    analysis
        .divergent_collectives
        .iter()
        .filter_map(|collective| {
            let site = table.get(collective.site)?;
            match members(collective.site, traces, deadlocked) {
                Some(members) => finding(collective, site, &members),
                None if all_finalized(traces) => unreached(collective, site, traces.len()),
                None => None,
            }
        })
        .collect()
}

/// Whether every rank of the run finalized (a run cut short says nothing
/// about the calls it did not reach).
fn all_finalized(traces: &[Option<RankTrace>]) -> bool {
    traces.iter().all(|t| {
        t.as_ref()
            .is_some_and(|t| t.end.state == RankState::Finalized)
    })
}

/// The finding for a collective no rank of the `size` ranks reached in
/// this run, though a branch on the rank and on a given input decides it:
/// an error when only some of the ranks could ever make it, else a warning.
fn unreached(
    collective: &DivergentCollective,
    site: &mbh_trace::Site,
    size: usize,
) -> Option<Finding> {
    let on_rank_and_input = |b: &&GuardingBranch| {
        b.depends_on.contains(&Dependence::Rank)
            && b.depends_on.iter().any(Dependence::is_given_input)
    };
    collective.branches.iter().find(on_rank_and_input)?;
    let reasons: Vec<String> = collective
        .branches
        .iter()
        .map(GuardingBranch::reason)
        .collect();
    let mut finding = match only_some_ranks(collective, size) {
        Some(ranks) => certain(collective, &ranks, size, &reasons),
        None => Finding::new(
            FindingKind::CollectiveDivergence,
            Severity::Warning,
            format!(
                "`{}` was not reached with this input, and another input may make some ranks skip it: {}",
                collective.call,
                reasons.join("; ")
            ),
        ),
    };
    finding.locations.push(site_location(
        site,
        0,
        Role::Primary,
        "every rank of the communicator must make this call",
    ));
    for branch in &collective.branches {
        finding.locations.push(branch_location(branch, 0));
    }
    for test in &collective.rank_tests {
        let known = finding
            .locations
            .iter()
            .any(|l| l.file == test.span.file && l.line == test.span.line);
        if !known {
            finding.locations.push(test_location(test));
        }
    }
    finding.notes.push(
        "no rank made this call in this run; the program's input decides which MPI calls run, so this verdict does not cover it"
            .into(),
    );
    finding
        .notes
        .push("found by `mbhybrid build`'s analysis of the program's control flow".into());
    finding.help = Some(
        "run `verify` with an input that reaches the call, or make every rank of the communicator reach it"
            .into(),
    );
    Some(finding)
}

/// What one run shows of a collective's members.
struct Members {
    /// The call's communicator.
    comm: u64,
    /// How many times each member made this call.
    calls: BTreeMap<i32, usize>,
    /// Whether every member made the same collectives on the communicator,
    /// in the same order.
    same_sequence: bool,
    /// Whether every member ran as far as it could: it finalized, or it
    /// was blocked in the deadlock that stopped the run. A rank that
    /// crashed, aborted, exited early or was killed made fewer calls for
    /// that reason alone, which confirms nothing.
    ran_to_the_end: bool,
}

/// The members of the communicator of the call at `site`, as the run
/// shows them; `None` when no rank made the call.
fn members(site: u32, traces: &[Option<RankTrace>], deadlocked: bool) -> Option<Members> {
    let comm = traces
        .iter()
        .flatten()
        .flat_map(|t| &t.ops)
        .find(|op| op.site == site)?
        .comm;
    let members: Vec<&RankTrace> = traces
        .iter()
        .flatten()
        .filter(|t| comm == WORLD_COMM || t.ops.iter().any(|op| op.comm == comm))
        .collect();
    let sequence = |t: &RankTrace| -> Vec<OpKind> {
        t.ops
            .iter()
            .filter(|op| op.comm == comm)
            .filter(|op| op.kind.class() == OpClass::Collective || op.kind == OpKind::CommMade)
            .map(|op| op.kind)
            .collect()
    };
    let first = members.first().map(|t| sequence(t));
    Some(Members {
        comm,
        calls: members
            .iter()
            .map(|t| (t.rank, t.ops.iter().filter(|op| op.site == site).count()))
            .collect(),
        same_sequence: members.iter().all(|t| Some(sequence(t)) == first),
        ran_to_the_end: members.iter().all(|t| match t.end.state {
            RankState::Finalized => true,
            RankState::Running | RankState::Starting => deadlocked,
            _ => false,
        }),
    })
}

fn finding(
    collective: &DivergentCollective,
    site: &mbh_trace::Site,
    members: &Members,
) -> Option<Finding> {
    let calls = &members.calls;
    let alike = calls.values().min() == calls.values().max();
    let confirmed = !members.same_sequence && members.ran_to_the_end;
    if !(confirmed || (alike && members.same_sequence && members.comm == WORLD_COMM)) {
        return None;
    }
    let reached: Vec<i32> = calls
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(&r, _)| r)
        .collect();
    let first = *reached.first()?;
    let mut finding = Finding::new(
        FindingKind::CollectiveDivergence,
        Severity::Warning,
        collective.message(),
    );
    finding.ranks = reached;
    finding.locations.push(site_location(
        site,
        first,
        Role::Primary,
        "every rank of the communicator must make this call",
    ));
    for branch in &collective.branches {
        finding.locations.push(branch_location(branch, first));
    }
    if confirmed {
        let counts: Vec<String> = calls
            .iter()
            .map(|(rank, n)| format!("rank {rank} {n} time{}", if *n == 1 { "" } else { "s" }))
            .collect();
        finding.severity = Severity::Error;
        finding.notes.push(format!(
            "confirmed in this run: the ranks made this call {}",
            counts.join(", ")
        ));
        finding.confirmation = Some(finding.notes.len() - 1);
    }
    finding
        .notes
        .push("found by `mbhybrid build`'s analysis of the program's control flow".into());
    finding.help = Some(
        "make every rank of the communicator reach the collective, and let the condition decide only the work around it"
            .into(),
    );
    Some(finding)
}

/// The ranks of `0..size` that pass every test on the paths to the call,
/// when they are some of the ranks but not all (none can make it at this
/// size otherwise, or all can).
fn only_some_ranks(collective: &DivergentCollective, size: usize) -> Option<Vec<i64>> {
    if collective.rank_tests.is_empty() {
        return None;
    }
    let ranks = ranks_passing(&collective.rank_tests, size);
    (!ranks.is_empty() && ranks.len() < size).then_some(ranks)
}

/// The error for a collective only `ranks` of `size` can make.
fn certain(
    collective: &DivergentCollective,
    ranks: &[i64],
    size: usize,
    reasons: &[String],
) -> Finding {
    let tests: Vec<String> = collective
        .rank_tests
        .iter()
        .map(|t| format!("`{}` at {}", t.describe(), t.span))
        .collect();
    let listed: Vec<String> = ranks.iter().map(i64::to_string).collect();
    let who = match ranks {
        [_] => format!("only rank {}", listed[0]),
        _ => format!("only ranks {}", listed.join(", ")),
    };
    let mut finding = Finding::new(
        FindingKind::CollectiveDivergence,
        Severity::Error,
        format!(
            "{who} of the {size} can make `{}`, so whenever an input reaches it the other ranks skip it: every path to it passes {}; {}",
            collective.call,
            tests.join(" and "),
            reasons.join("; ")
        ),
    );
    finding.ranks = ranks.iter().map(|&r| r as i32).collect();
    finding
}

fn test_location(test: &RankTest) -> Location {
    Location {
        file: test.span.file.clone(),
        line: test.span.line,
        column: test.span.column,
        rank: 0,
        call: None,
        function: None,
        role: Role::Secondary,
        label: format!("only ranks with `{}` pass here", test.describe()),
    }
}

fn branch_location(branch: &GuardingBranch, rank: i32) -> Location {
    Location {
        file: branch.span.file.clone(),
        line: branch.span.line,
        column: branch.span.column,
        rank,
        call: None,
        function: None,
        role: Role::Secondary,
        label: "this branch decides whether the call runs".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::Op;
    use mbh_trace::static_report::{Dependence, Span, StaticReport};
    use mbh_trace::Site;

    fn table() -> SiteTable {
        let site = Site {
            id: 4,
            file: "app.c".into(),
            line: 11,
            column: 9,
            call: "MPI_Barrier".into(),
            function: "main".into(),
        };
        let span = |line| Span {
            file: "app.c".into(),
            line,
            column: 5,
        };
        let mut table = SiteTable::new("app", vec!["app.c".into()]);
        table.sites.push(site);
        table.analysis = Some(StaticReport {
            divergent_collectives: vec![DivergentCollective {
                site: 4,
                call: "MPI_Barrier".into(),
                function: "main".into(),
                span: span(11),
                branches: vec![GuardingBranch {
                    span: span(10),
                    depends_on: vec![Dependence::Rank, Dependence::Input("argv[1]".into())],
                }],
                rank_tests: Vec::new(),
            }],
            ..StaticReport::default()
        });
        table
    }

    fn trace(rank: i32, barriers: usize) -> Option<RankTrace> {
        let ops = (0..barriers)
            .map(|i| {
                let mut op = Op::new(i as u64, OpKind::Barrier);
                op.site = 4;
                op.comm = WORLD_COMM;
                op
            })
            .collect();
        Some(RankTrace::finalized(rank, 2, ops))
    }

    /// Issue 38: a run whose input does not reach a collective that a
    /// rank- and input-dependent branch decides warns with both lines.
    #[test]
    fn a_collective_no_rank_reached_is_a_warning_when_the_input_decides() {
        let findings = divergence_findings(Some(&table()), &[trace(0, 0), trace(1, 0)], false);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.message.starts_with("`MPI_Barrier` was not reached with this input, and another input may make some ranks skip it: the branch at app.c:10 depends on the rank and argv[1]"),
            "{}",
            f.message
        );
        let lines: Vec<u32> = f.locations.iter().map(|l| l.line).collect();
        assert_eq!(lines, [11, 10]);
        // In a run cut short, nothing is said.
        let mut cut = trace(1, 0);
        if let Some(t) = cut.as_mut() {
            t.end.state = RankState::Signaled;
        }
        assert!(divergence_findings(Some(&table()), &[trace(0, 0), cut], false).is_empty());
    }

    /// Issue 38: when every path to the call passes `rank == 0`, the
    /// ranks cannot agree on it whenever an input reaches it: an error,
    /// with the test's line; at one rank there is nobody to disagree.
    #[test]
    fn a_collective_only_some_ranks_can_make_is_an_error() {
        let mut table = table();
        if let Some(analysis) = table.analysis.as_mut() {
            analysis.divergent_collectives[0].rank_tests = vec![RankTest {
                span: Span {
                    file: "app.c".into(),
                    line: 10,
                    column: 9,
                },
                op: mbh_trace::static_report::RankCmp::Eq,
                value: 0,
            }];
        }
        let findings = divergence_findings(Some(&table), &[trace(0, 0), trace(1, 0)], false);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.ranks, [0]);
        assert!(
            f.message.starts_with("only rank 0 of the 2 can make `MPI_Barrier`, so whenever an input reaches it the other ranks skip it: every path to it passes `rank == 0` at app.c:10"),
            "{}",
            f.message
        );
        let alone = divergence_findings(Some(&table), &[trace(0, 0)], false);
        assert_eq!(alone[0].severity, Severity::Warning, "one rank: {alone:?}");
    }

    /// A branch on the rank and the clock is no input a user gives: an
    /// unreached call behind it is left to `build`.
    #[test]
    fn a_collective_behind_the_rank_and_a_clock_is_left_to_build() {
        let mut table = table();
        if let Some(analysis) = table.analysis.as_mut() {
            analysis.divergent_collectives[0].branches[0].depends_on = vec![
                Dependence::Rank,
                Dependence::clock("time"),
                Dependence::Received,
            ];
        }
        assert!(divergence_findings(Some(&table), &[trace(0, 0), trace(1, 0)], false).is_empty());
    }

    #[test]
    fn a_collective_every_rank_made_is_a_warning_naming_its_branch() {
        let findings = divergence_findings(Some(&table()), &[trace(0, 1), trace(1, 1)], false);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.message,
            "`MPI_Barrier` may not be made alike by every rank (some may skip it, or make it in another order): the branch at app.c:10 depends on the rank and argv[1]"
        );
        assert_eq!(f.locations[1].line, 10);
        assert_eq!(f.notes.len(), 1, "{:?}", f.notes);
    }

    #[test]
    fn a_rank_that_skipped_it_confirms_it() {
        let findings = divergence_findings(Some(&table()), &[trace(0, 1), trace(1, 0)], false);
        assert_eq!(findings[0].severity, Severity::Error);
        assert_eq!(findings[0].ranks, [0]);
        assert_eq!(
            findings[0].notes[0],
            "confirmed in this run: the ranks made this call rank 0 1 time, rank 1 0 times"
        );
        assert_eq!(findings[0].confirmation, Some(0), "the note is marked");
    }

    #[test]
    fn a_collective_the_other_ranks_made_elsewhere_is_not_reported() {
        // `if (rank == 0) MPI_Barrier(...); else MPI_Barrier(...);`: rank 1
        // made its barrier at another site.
        let mut other = trace(1, 1).unwrap();
        other.ops[0].site = 5;
        assert!(divergence_findings(Some(&table()), &[trace(0, 1), Some(other)], false).is_empty());
    }

    #[test]
    fn a_rank_that_crashed_before_it_confirms_nothing() {
        let mut crashed = trace(1, 0).unwrap();
        crashed.end.state = RankState::Signaled;
        assert!(
            divergence_findings(Some(&table()), &[trace(0, 1), Some(crashed)], false).is_empty()
        );
        let mut killed = trace(1, 0).unwrap();
        killed.end.state = RankState::Running;
        assert!(
            divergence_findings(Some(&table()), &[trace(0, 1), Some(killed.clone())], false)
                .is_empty()
        );
        let confirmed = divergence_findings(Some(&table()), &[trace(0, 1), Some(killed)], true);
        assert_eq!(
            confirmed[0].severity,
            Severity::Error,
            "blocked in the deadlock"
        );
    }

    #[test]
    fn a_confirmed_divergence_joins_the_deadlock_at_its_call() {
        let mut findings = divergence_findings(Some(&table()), &[trace(0, 1), trace(1, 0)], false);
        let mut deadlock = Finding::new(FindingKind::Deadlock, Severity::Error, "deadlock");
        deadlock.locations.push(findings[0].locations[0].clone());
        findings.insert(0, deadlock);
        fold_into_hangs(&mut findings);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].kind, FindingKind::Deadlock);
        assert!(
            findings[0].notes[0].contains("(collective-divergence, MBH0019; confirmed in this run")
        );
        assert_eq!(findings[0].locations[1].line, 10, "the branch");
    }
}
