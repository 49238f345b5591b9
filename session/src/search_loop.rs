//! The search loop (seed 000 §5.3.2.4): run the job, hand its
//! wildcard events to the engine of `mbh-bounding`, run again with the
//! matches it forces, until the engine says the space is covered or a
//! budget is spent. Findings are deduplicated across interleavings by kind
//! and sites, each keeping the first interleaving that showed it.

use crate::error::{Result, SessionError};
use crate::interleaving::{self, LaunchSpec};
use crate::progress::{Progress, Snapshot};
use crate::pruner::Pruner;
use crate::run_ahead::RunAhead;
use crate::session::Session;
use mbh_trace::config::{Buffering, Clocks, Guidance, RuntimeConfig};
use mbh_trace::determinism::Deterministic;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::outcome::{
    BoundOption, Divergence, ForcedCall, ForcedMiss, ForcedStall, Partial, ToolStop,
    UnverifiedCall, Warning,
};
use mbh_trace::rank_trace::WildcardEvent;
use mbh_trace::report::{ChoicePointStats, RunAheadStats, RunOutcome, WildcardReport};
use mbh_trace::{Finding, FindingKind};
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

/// How to explore.
pub struct Settings {
    /// The clocks the runtime tracks causality with.
    pub clocks: Clocks,
    /// One exploration per buffering mode, in order.
    pub bufferings: Vec<Buffering>,
    /// The engine's bounds.
    pub bounds: mbh_bounding::ExploreConfig,
    /// Run the exhaustive reference search instead of the guided one.
    pub exhaustive: bool,
    /// Stop after this many interleavings in all.
    pub max_interleavings: u32,
    /// Start no interleaving after this much time.
    pub time_budget: Option<Duration>,
    /// Keep the traces of interleavings that showed nothing new.
    pub keep_traces: bool,
    /// MPI jobs at once: the search's own run and up to `jobs - 1` runs it
    /// will ask for next (run_ahead.rs).
    pub jobs: usize,
    /// `--deterministic`: the first run takes the matches `mbhybrid run`
    /// takes (seed 002), the same on every machine.
    pub deterministic: bool,
}

/// What an exploration found.
pub struct Exploration {
    /// Interleavings run.
    pub interleavings: u32,
    /// Whether the engine covered the space within the bounds.
    pub complete: bool,
    /// Why it is not complete, when it is not: the first reason found.
    pub incomplete_because: Option<Partial>,
    /// The error that stopped the exploration after some interleavings
    /// ran: reported as an error after the report of what ran.
    pub failure: Option<SessionError>,
    /// Choice point counts.
    pub stats: ChoicePointStats,
    /// Findings, deduplicated, in order of discovery.
    pub findings: Vec<Finding>,
    /// Wildcard receives, as first seen.
    pub wildcards: Vec<WildcardReport>,
    /// Every interleaving's end.
    pub runs: Vec<RunOutcome>,
    /// What limited the search: gaps in traces, forced matches that did
    /// not happen.
    pub warnings: Vec<Warning>,
    /// Forced matches that took another sender: the search left the path
    /// it asked for, and its verdict cannot be trusted (an error, not a
    /// warning; also listed in `warnings` for the report).
    pub diverged: Vec<Divergence>,
    /// The ranks the runtime stopped (a call it cannot handle). The search
    /// stops there; the commands report it as an error after the report
    /// (a limit of the tool, not a finding).
    pub tool_stops: Vec<ToolStop>,
    /// The calls of MPI functions the runtime does not model, over every
    /// interleaving: the search is not complete when any.
    pub not_modelled: Vec<UnverifiedCall>,
    /// The traces of every interleaving, kept only when a caller asks (Fib).
    pub traces: Vec<Vec<mbh_trace::RankTrace>>,
    /// How the runs made ahead were used (`--jobs`, more than one).
    pub run_ahead: Option<RunAheadStats>,
    /// The space-time diagram of each finding's interleaving, by finding
    /// index.
    pub timelines: Vec<(usize, mbh_trace::timeline::Timeline)>,
}

/// Explores the program of `session`.
pub fn explore(
    session: &mut Session,
    settings: &Settings,
    keep_traces: bool,
) -> Result<Exploration> {
    let started = Instant::now();
    let pruner = Pruner::start();
    let progress = Progress::start(session.progress);
    let mut search = Search {
        session,
        settings,
        keep_traces,
        started,
        found: Exploration::empty(),
        seen_findings: HashSet::new(),
        seen_wildcards: BTreeMap::new(),
        progress,
        pruner,
    };
    for &buffering in &settings.bufferings {
        let mut engine = Engine::new(settings, buffering, orderless_sites(search.session));
        let mut ahead = (settings.jobs > 1 && !settings.exhaustive).then(|| {
            RunAhead::new(
                LaunchSpec::of(search.session),
                search.session.run_dir.clone(),
                settings.jobs,
            )
        });
        let stop_passes = search.pass(buffering, &mut engine, &mut ahead)?;
        if !search.found.end_pass(&engine, ahead.take(), settings) || stop_passes {
            break;
        }
    }
    Ok(search.finish())
}

/// One exploration in progress, across its passes (one per buffering
/// mode).
struct Search<'a> {
    session: &'a mut Session,
    settings: &'a Settings,
    keep_traces: bool,
    started: Instant,
    found: Exploration,
    seen_findings: HashSet<FindingKey>,
    seen_wildcards: BTreeMap<(i32, u32), SeenEvent>,
    /// Before the pruner: fields drop in order, and the progress line is
    /// finished before the wait for the pruning.
    progress: Progress,
    /// Dropped before `explore` returns: every pruned directory is pruned
    /// then.
    pruner: Pruner,
}

impl Search<'_> {
    /// Runs the interleavings `engine` asks for under `buffering`, until
    /// it asks for none or a budget is spent; whether a stop (a signal, a
    /// failed run, a tool stop) ends the whole search. A stop still ends
    /// the pass, so the report counts the choice points this pass found.
    fn pass(
        &mut self,
        buffering: Buffering,
        engine: &mut Engine,
        ahead: &mut Option<RunAhead>,
    ) -> Result<bool> {
        let settings = self.settings;
        while let Some(next) = engine.next_run() {
            if let Some(why) = budget_spent(&self.found, self.session, settings, self.started) {
                self.found.incomplete_because = Some(why);
                break;
            }
            let n = self.found.interleavings + 1;
            self.progress.interleaving(&Snapshot {
                interleaving: n,
                stats: &engine.stats(),
                findings: self.found.findings.len(),
                running_ahead: ahead.as_ref().map(RunAhead::running),
            });
            let config = RuntimeConfig {
                clocks: settings.clocks,
                buffering,
                guidance: next.guidance.clone(),
                deterministic: (settings.deterministic && next.guidance.is_none())
                    .then(Deterministic::default),
                ..RuntimeConfig::default()
            };
            let dir = InterleavingDir::new(&self.session.run_dir, n);
            let run = run_interleaving(self.session, ahead.as_mut(), engine, n, dir, config);
            if let Some(why) = stopped_by_signal(&self.found) {
                // The signal killed this run: what it shows is the kill,
                // not the program. The report covers the runs before it.
                self.found.incomplete_because = Some(why);
                if let Ok(run) = run {
                    self.pruner.prune(&run.dir);
                }
                return Ok(true);
            }
            let run = match run {
                Ok(run) => run,
                // What ran is still reported: a run directory
                // that became unwritable, a launcher that stopped working.
                Err(error) if n > 1 => {
                    self.found.incomplete_because = Some(Partial::RunFailed {
                        interleaving: n,
                        error: format!("{error:#}"),
                    });
                    self.found.failure = Some(error);
                    return Ok(true);
                }
                Err(error) => return Err(error),
            };
            self.found.interleavings = n;
            if !run.analysis.tool_stops.is_empty() {
                // Every other interleaving would stop at the same call.
                self.found.tool_stops = run.analysis.tool_stops.clone();
                self.found.runs.push(run.analysis.outcome.clone());
                self.found.incomplete_because = Some(Partial::ToolStop { interleaving: n });
                return Ok(true);
            }
            let shown = Shown { n, buffering };
            self.take_run(engine, run, &shown);
        }
        Ok(false)
    }

    /// Gives interleaving `shown.n`'s run to `engine`, and keeps what it
    /// shows that earlier runs did not; its directory is pruned unless it
    /// shows something or diverged.
    fn take_run(
        &mut self,
        engine: &mut Engine,
        mut run: interleaving::Interleaving,
        shown: &Shown,
    ) {
        let n = shown.n;
        let found = &mut self.found;
        let recorded = engine.record_run(&run);
        if !recorded.feasible {
            // Not an execution of the program: the reference forced a
            // sender that could not match. Nothing of it is reported.
            let mut outcome = run.analysis.outcome.clone();
            outcome.infeasible = true;
            outcome.dir = None;
            found.runs.push(outcome);
            self.pruner.prune(&run.dir);
            return;
        }
        if recorded.too_big {
            found
                .incomplete_because
                .get_or_insert(Partial::TooBigForExhaustive { interleaving: n });
        }
        found.add_not_modelled(&run.analysis.not_modelled);
        // Wildcards first: an unmatched forcing is told with its call.
        found.add_wildcards(self.session, &mut self.seen_wildcards, &run, n);
        let diverged = !recorded.unmatched.is_empty();
        let stalled = drop_forced_stalls(&mut run, &recorded.unmatched);
        found.note_unmatched(
            n,
            recorded.unmatched,
            &self.seen_wildcards,
            &run.dir.path,
            stalled,
        );
        let new_finding = found.add_findings(self.session, &mut self.seen_findings, &run, shown);
        found.add_outcome(&run, n, self.keep_traces);
        // A diverged run is kept: its error points at its directory.
        if !new_finding && !diverged && !self.settings.keep_traces {
            self.pruner.prune(&run.dir);
            if let Some(outcome) = found.runs.last_mut() {
                outcome.dir = None;
            }
        }
    }

    /// The exploration, once every pass is done.
    fn finish(self) -> Exploration {
        let Search {
            mut found,
            mut progress,
            pruner,
            ..
        } = self;
        progress.finish();
        if found.incomplete_because.is_none() {
            found.incomplete_because = (!found.not_modelled.is_empty())
                .then(|| Partial::NotModelled(found.not_modelled.clone()));
        }
        found.complete = found.incomplete_because.is_none();
        found.wildcards.sort_by_key(|w| (w.rank, w.event));
        // Findings stay in order of discovery: the timelines refer to them
        // by index.
        drop(progress);
        drop(pruner);
        found
    }
}

/// Why the search stopped, when SIGINT, SIGTERM or a batch system's time
/// limit asked it to (`mbh_launch::termination`).
fn stopped_by_signal(found: &Exploration) -> Option<Partial> {
    mbh_launch::termination::stop_requested().map(|signal| Partial::Signal {
        signal,
        interleavings: found.interleavings,
    })
}

/// Why the search must start no more runs, when a budget is spent or a
/// signal asked it to stop.
fn budget_spent(
    found: &Exploration,
    session: &Session,
    settings: &Settings,
    started: Instant,
) -> Option<Partial> {
    if let Some(why) = stopped_by_signal(found) {
        return Some(why);
    }
    if found.interleavings >= settings.max_interleavings {
        return Some(Partial::MaxInterleavings {
            max: settings.max_interleavings,
            advice: bounding_advice(session, settings),
        });
    }
    settings
        .time_budget
        .is_some_and(|budget| started.elapsed() >= budget)
        .then(|| Partial::TimeBudget {
            interleavings: found.interleavings,
            advice: bounding_advice(session, settings),
        })
}

/// The bounds that would shorten this program's search: only options
/// that change something for it. `--loop-abstraction auto` only
/// when `build` marked a loop it may abstract; `--mixing-bound` only when
/// none is set.
fn bounding_advice(session: &Session, settings: &Settings) -> Vec<BoundOption> {
    use mbh_bounding::LoopAbstraction;
    use mbh_trace::static_report::LoopMarker;
    let abstractable = session
        .sites
        .as_ref()
        .and_then(|sites| sites.analysis.as_ref())
        .is_some_and(|report| {
            report
                .loops
                .iter()
                .any(|l| l.marker == LoopMarker::Abstract)
        });
    let mut options = Vec::new();
    if settings.bounds.mixing_bound.is_none() {
        options.push(BoundOption::MixingBound);
    }
    if abstractable && settings.bounds.loop_abstraction == LoopAbstraction::Off {
        options.push(BoundOption::LoopAbstractionAuto);
    }
    options
}

/// Removes the deadlock (or timeout) of a run in which a forced receive
/// never completed, when that receive's rank is one of those it names:
/// the receive waited for the one sender it was forced to, and the
/// program's wildcard receive would have taken another's, so the hang is
/// the forcing's, not the program's (a sender the MPI library
/// kept inside a collective MPI lets it leave early). Returns whether it
/// removed one.
fn drop_forced_stalls(
    run: &mut interleaving::Interleaving,
    unmatched: &[mbh_bounding::UnmatchedForce],
) -> bool {
    let stuck: Vec<i32> = unmatched
        .iter()
        .filter(|u| u.observed.is_none())
        .map(|u| u.forced.rank)
        .collect();
    let findings = &mut run.analysis.findings;
    let before = findings.len();
    findings.retain(|f| {
        !(matches!(f.kind, FindingKind::Deadlock | FindingKind::Timeout)
            && f.ranks.iter().any(|r| stuck.contains(r)))
    });
    let dropped = findings.len() < before;
    if dropped {
        run.deadlocked = false;
    }
    dropped
}

/// A wildcard event some run recorded: its entry in
/// [`Exploration::wildcards`], and what kind of choice it is (as the first
/// run that made it saw it).
struct SeenEvent {
    report: usize,
    index_choice: bool,
}

/// What makes two findings the same ([`Finding::dedup_key`]).
type FindingKey = (FindingKind, Vec<(String, u32)>);

/// Which interleaving a run is, for what it shows.
struct Shown {
    n: u32,
    buffering: Buffering,
}

impl Exploration {
    /// Adds the unmodelled calls of a run not seen before (by function,
    /// line and what is said of them: an RMA call and its races not
    /// checked are two).
    fn add_not_modelled(&mut self, calls: &[UnverifiedCall]) {
        for call in calls {
            let same = |other: &UnverifiedCall| {
                let (l, c) = (&other.location, &call.location);
                (&l.call, &l.file, l.line, &l.label) == (&c.call, &c.file, c.line, &c.label)
            };
            if !self.not_modelled.iter().any(same) {
                self.not_modelled.push(call.clone());
            }
        }
    }

    fn empty() -> Exploration {
        Exploration {
            interleavings: 0,
            complete: true,
            incomplete_because: None,
            failure: None,
            stats: ChoicePointStats::default(),
            findings: Vec::new(),
            wildcards: Vec::new(),
            runs: Vec::new(),
            warnings: Vec::new(),
            diverged: Vec::new(),
            tool_stops: Vec::new(),
            traces: Vec::new(),
            run_ahead: None,
            not_modelled: Vec::new(),
            timelines: Vec::new(),
        }
    }

    /// Adds a pass's counts (choice points, runs made ahead) and says
    /// whether the next pass may start: a budget stops every pass, and the
    /// counts still say how far this one got.
    fn end_pass(&mut self, engine: &Engine, ahead: Option<RunAhead>, settings: &Settings) -> bool {
        if let Some(mut ahead) = ahead {
            ahead.finish();
            let used = self.run_ahead.get_or_insert(RunAheadStats {
                jobs: settings.jobs as u32,
                ..RunAheadStats::default()
            });
            used.taken += ahead.taken;
            used.unused += ahead.wasted;
        }
        let stats = engine.stats();
        self.stats.found += stats.found;
        self.stats.explored += stats.explored;
        self.stats.abstracted += stats.abstracted;
        self.stats.mixing_bounded += stats.mixing_bounded;
        self.stats.orderless += stats.orderless;
        if engine.is_bounded() {
            self.incomplete_because.get_or_insert(Partial::Bounded);
        }
        self.incomplete_because.is_none() || engine.is_complete()
    }

    /// Forced matches the run did not make, each told with its call as an
    /// earlier run recorded it. Each makes the search partial: an outcome
    /// the clocks found was not run. One that took another sender is an
    /// error of the search (a forced receive names its sender, so it is a
    /// bug of mbhybrid); one that never completed (`stalled`: the run's
    /// hang was dropped for it) is a limit: the MPI library kept its sender
    /// from sending, which MPI would have allowed.
    fn note_unmatched(
        &mut self,
        n: u32,
        unmatched: Vec<mbh_bounding::UnmatchedForce>,
        seen: &BTreeMap<(i32, u32), SeenEvent>,
        run_dir: &std::path::Path,
        stalled: bool,
    ) {
        for unmatched in unmatched {
            let key = (unmatched.forced.rank, unmatched.forced.event);
            let call = seen.get(&key).map(|event| {
                let report = &self.wildcards[event.report];
                ForcedCall {
                    call: report.call.clone(),
                    file: report.file.clone(),
                    line: report.line,
                    index_choice: event.index_choice,
                }
            });
            let miss = ForcedMiss {
                forced: unmatched.forced,
                observed: unmatched.observed,
                call,
            };
            if miss.observed.is_none() {
                let stall = ForcedStall {
                    interleaving: n,
                    miss,
                    hung: stalled,
                };
                self.warnings.push(Warning::ForcedStall(stall.clone()));
                self.incomplete_because
                    .get_or_insert(Partial::ForcedStall(stall));
                continue;
            }
            let divergence = Divergence {
                interleaving: n,
                miss,
                run_dir: Some(run_dir.to_owned()),
            };
            self.warnings.push(Warning::Diverged(divergence.clone()));
            self.incomplete_because
                .get_or_insert_with(|| Partial::Diverged(divergence.clone()));
            self.diverged.push(divergence);
        }
    }

    /// The run's findings not seen before, with their replay command, the
    /// run's decisions and a timeline; returns whether there was one.
    fn add_findings(
        &mut self,
        session: &Session,
        seen: &mut HashSet<FindingKey>,
        run: &interleaving::Interleaving,
        shown: &Shown,
    ) -> bool {
        let n = shown.n;
        let decisions = decision_notes(session, &run.events);
        let mut new_finding = false;
        // Copied only for a run that shows something new.
        let mut run_traces: Option<Vec<mbh_trace::RankTrace>> = None;
        for mut finding in merge_ranks(run.analysis.findings.clone()) {
            if !seen.insert(finding.dedup_key()) {
                confirm_divergence(&mut self.findings, &finding, n);
                continue;
            }
            finding.replay = Some(session.replay_command(n));
            finding.notes.extend(decisions.iter().cloned());
            if shown.buffering == Buffering::Zero {
                finding
                    .notes
                    .push("found with `--buffering zero`: standard sends were synchronous".into());
            }
            self.timelines.push((
                self.findings.len(),
                mbh_verdict::timeline::build(
                    run_traces.get_or_insert_with(|| {
                        run.analysis.traces.iter().flatten().cloned().collect()
                    }),
                    session.sites.as_ref(),
                ),
            ));
            self.findings.push(finding);
            new_finding = true;
        }
        new_finding
    }

    /// Every wildcard receive of the run, with the senders it took or
    /// could have taken, merged with earlier runs'.
    fn add_wildcards(
        &mut self,
        session: &Session,
        seen: &mut BTreeMap<(i32, u32), SeenEvent>,
        run: &interleaving::Interleaving,
        n: u32,
    ) {
        for event in &run.events {
            let at = seen
                .entry((event.rank, event.event))
                .or_insert_with(|| {
                    self.wildcards.push(wildcard_report(session, event, n));
                    SeenEvent {
                        report: self.wildcards.len() - 1,
                        index_choice: event.is_index_choice(),
                    }
                })
                .report;
            let senders = &mut self.wildcards[at].senders;
            senders.extend(event.potential.iter().copied());
            if event.matched >= 0 {
                senders.push(event.matched);
            }
            senders.sort_unstable();
            senders.dedup();
        }
    }

    /// The run's outcome, its warnings, and its traces when kept.
    fn add_outcome(&mut self, run: &interleaving::Interleaving, n: u32, keep_traces: bool) {
        self.warnings
            .extend(run.analysis.warnings.iter().map(|gap| Warning::TraceGap {
                interleaving: n,
                gap: gap.clone(),
            }));
        // What a trace lacks was not checked: never a complete verdict.
        if let Some(gap) = run.analysis.warnings.first() {
            self.incomplete_because
                .get_or_insert_with(|| Partial::TraceGap {
                    interleaving: n,
                    gap: gap.clone(),
                });
        }
        self.runs.push(run.analysis.outcome.clone());
        if keep_traces {
            self.traces
                .push(run.analysis.traces.iter().flatten().cloned().collect());
        }
    }
}

/// Runs interleaving `n`: launched by the search itself, or taken from the
/// jobs running ahead (`--jobs`), which it first tops up with the runs the
/// engine will ask for next.
fn run_interleaving(
    session: &mut Session,
    ahead: Option<&mut RunAhead>,
    engine: &Engine,
    n: u32,
    dir: InterleavingDir,
    config: RuntimeConfig,
) -> Result<interleaving::Interleaving> {
    let Some(ahead) = ahead else {
        return interleaving::run(session, n, dir, config);
    };
    ahead.start(engine.upcoming(ahead.jobs()), &config);
    let launched = match ahead.take(&config.guidance) {
        Some(made) => {
            let mut made = made?;
            made.move_to(dir)?;
            made
        }
        None => ahead.launch(dir, config)?,
    };
    interleaving::analyze(session, n, launched)
}

/// Decisions a finding lists one by one; past this the others are
/// counted per call site (a message-driven loop makes hundreds: miniFE
/// gave 859 notes on one finding).
const DECISIONS_LISTED: usize = 8;

/// One wildcard decision of an interleaving, in words.
struct Decision {
    rank: i32,
    place: String,
    /// The search forced it (else MPI made it, and it had alternatives).
    forced: bool,
    text: String,
}

/// What the interleaving decided at its wildcard events, for a finding's
/// notes: the forced decisions first, then the others, at most
/// [`DECISIONS_LISTED`] listed; the rest counted per rank and call site.
fn decision_notes(session: &Session, events: &[WildcardEvent]) -> Vec<String> {
    let decisions: Vec<Decision> = events.iter().filter_map(|e| decision(session, e)).collect();
    summarise(decisions)
}

/// The notes of `decisions` (in event order): the forced ones first, at
/// most [`DECISIONS_LISTED`] listed, the rest counted per rank and site.
fn summarise(mut decisions: Vec<Decision>) -> Vec<String> {
    // Stable: each group keeps the order of the events.
    decisions.sort_by_key(|d| !d.forced);
    let listed = decisions.len().min(DECISIONS_LISTED);
    let mut notes: Vec<String> = decisions[..listed].iter().map(|d| d.text.clone()).collect();
    let mut rest: BTreeMap<(i32, &str), usize> = BTreeMap::new();
    for d in &decisions[listed..] {
        *rest.entry((d.rank, d.place.as_str())).or_default() += 1;
    }
    for ((rank, place), count) in rest {
        notes.push(format!(
            "and {count} more decision{} of rank {rank}'s {place} in this interleaving (`mbhybrid replay` makes them all)",
            if count == 1 { "" } else { "s" }
        ));
    }
    notes
}

/// Event `e` as a decision, if it was one: forced, or with alternatives.
fn decision(session: &Session, e: &WildcardEvent) -> Option<Decision> {
    // A forced match is a decision of this interleaving even when the run
    // (stopped by a deadlock, say) never saw its alternatives.
    let forced = e.forced;
    if e.potential.is_empty() && !forced {
        return None;
    }
    let place = match session.sites.as_ref().and_then(|s| s.get(e.site)) {
        Some(site) => format!(
            "`{}` at {}",
            site.call,
            mbh_verdict::place::site_place(site)
        ),
        None => format!("`{}` (wildcard event {})", e.kind.mpi_name(), e.event),
    };
    let text = if e.is_index_choice() {
        // seed 001 §4: which request completed first.
        let others = if e.potential.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = e.potential.iter().map(|p| format!("index {p}")).collect();
            format!(" ({} could complete too)", list.join(", "))
        };
        let how = if forced {
            "was made to return"
        } else {
            "returned"
        };
        format!(
            "in this interleaving rank {}'s {place} {how} index {}{others}",
            e.rank, e.matched
        )
    } else {
        let others = if e.potential.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = e.potential.iter().map(|p| format!("rank {p}")).collect();
            format!(" ({} could match it too)", list.join(", "))
        };
        let how = if forced { "was made to take" } else { "took" };
        format!(
            "in this interleaving rank {}'s {place} {how} rank {}'s message{others}",
            e.rank, e.matched
        )
    };
    Some(Decision {
        rank: e.rank,
        place,
        forced,
        text,
    })
}

/// A collective divergence an earlier run only warned about, confirmed by
/// run `n` (verdict/src/divergence.rs): the first report takes the confirmation,
/// which a person needs more than the first sighting.
fn confirm_divergence(findings: &mut [Finding], later: &Finding, n: u32) {
    if later.kind != mbh_trace::FindingKind::CollectiveDivergence
        || later.severity != mbh_trace::Severity::Error
    {
        return;
    }
    let key = later.dedup_key();
    if let Some(first) = findings
        .iter_mut()
        .find(|f| f.dedup_key() == key && f.severity != mbh_trace::Severity::Error)
    {
        first.severity = mbh_trace::Severity::Error;
        if let Some(note) = later.confirmation.and_then(|i| later.notes.get(i)) {
            first.notes.push(format!("{note} (interleaving {n})"));
            first.confirmation = Some(first.notes.len() - 1);
        }
    }
}

/// One finding per problem within a run: the same kind at the same lines
/// on several ranks (a leak every rank has) becomes one finding naming
/// every rank.
fn merge_ranks(findings: Vec<Finding>) -> Vec<Finding> {
    let mut merged: Vec<Finding> = Vec::new();
    // Which of `merged` took in another rank's finding.
    let mut grew: Vec<bool> = Vec::new();
    for finding in findings {
        match merged
            .iter_mut()
            .zip(grew.iter_mut())
            .find(|(m, _)| m.dedup_key() == finding.dedup_key())
        {
            Some((first, grew)) => {
                *grew = true;
                for rank in finding.ranks {
                    if !first.ranks.contains(&rank) {
                        first.ranks.push(rank);
                    }
                }
                for mut location in finding.locations {
                    if !first
                        .locations
                        .iter()
                        .any(|l| l.rank == location.rank && l.line == location.line)
                    {
                        location.role = mbh_trace::Role::Secondary;
                        first.locations.push(location);
                    }
                }
            }
            None => {
                merged.push(finding);
                grew.push(false);
            }
        }
    }
    // The ranks of a merged finding in order, as a reader scans them: the
    // traces come in the order the ranks ended. (A finding of one rank
    // keeps its order: a type mismatch names the receiver, then the
    // sender.)
    for (finding, _) in merged.iter_mut().zip(&grew).filter(|(_, &g)| g) {
        finding.ranks.sort_unstable();
        lowest_rank_first(&mut finding.locations);
    }
    merged
}

/// Puts the locations in rank order, the primary one first: the primary
/// moves to the lowest rank with the same line (a leak every rank has is
/// shown at rank 0's call, the other ranks' calls after it).
fn lowest_rank_first(locations: &mut [mbh_trace::Location]) {
    let Some(primary) = locations.first() else {
        return;
    };
    let place = (primary.file.clone(), primary.line);
    let lowest = (0..locations.len())
        .filter(|&i| (locations[i].file.as_str(), locations[i].line) == (place.0.as_str(), place.1))
        .min_by_key(|&i| locations[i].rank)
        .unwrap_or(0);
    if lowest != 0 {
        let role = locations[0].role;
        locations[0].role = locations[lowest].role;
        locations[lowest].role = role;
        locations.swap(0, lowest);
    }
    locations[1..].sort_by_key(|l| (l.rank, l.line));
}

fn wildcard_report(session: &Session, event: &WildcardEvent, n: u32) -> WildcardReport {
    let site = session.sites.as_ref().and_then(|s| s.get(event.site));
    WildcardReport {
        rank: event.rank,
        file: site.map_or_else(String::new, |s| s.file.clone()),
        line: site.map_or(0, |s| s.line),
        call: site.map_or_else(|| event.kind.mpi_name().to_string(), |s| s.call.clone()),
        matched: if event.matched >= 0 {
            vec![event.matched]
        } else {
            Vec::new()
        },
        potential: event.potential.clone(),
        event: event.event,
        interleaving: n,
        clock: event.final_clock,
        senders: Vec::new(),
    }
}

/// The search a pass runs: the guided one, or the exhaustive reference.
enum Engine {
    Guided(mbh_bounding::Explorer),
    Exhaustive(mbh_bounding::Exhaustive),
}

/// What the engine made of a run.
struct Recorded {
    /// Forced matches the clocks promised and the run did not make.
    unmatched: Vec<mbh_bounding::UnmatchedForce>,
    /// False for a run whose forcing could not happen: of the reference,
    /// or of the guided search trying a sender a flip revealed.
    feasible: bool,
    /// The reference could not expand the run (too many events).
    too_big: bool,
}

/// The any-completion sites whose completion order `build`'s analysis
/// showed to decide nothing, with the loop around each: no choice points
/// for the guided search where the run settled them in that loop (the
/// exhaustive reference still runs every order).
fn orderless_sites(session: &Session) -> BTreeMap<u32, u32> {
    use mbh_trace::static_report::CompletionOrder;
    let Some(analysis) = session.sites.as_ref().and_then(|s| s.analysis.as_ref()) else {
        return Default::default();
    };
    analysis
        .wildcards
        .iter()
        .filter(|w| matches!(w.completion_order, Some(CompletionOrder::Irrelevant { .. })))
        .filter_map(|w| Some((w.site, w.in_loop?)))
        .collect()
}

impl Engine {
    fn new(settings: &Settings, buffering: Buffering, orderless: BTreeMap<u32, u32>) -> Engine {
        if settings.exhaustive {
            Engine::Exhaustive(
                mbh_bounding::Exhaustive::new(None).zero_buffering(buffering == Buffering::Zero),
            )
        } else {
            Engine::Guided(mbh_bounding::Explorer::new(
                settings.bounds.clone().orderless_sites(orderless),
            ))
        }
    }

    fn next_run(&mut self) -> Option<mbh_bounding::NextRun> {
        match self {
            Engine::Guided(e) => e.next_run(),
            Engine::Exhaustive(e) => e.next_run(),
        }
    }

    fn record_run(&mut self, run: &interleaving::Interleaving) -> Recorded {
        let reach = run.reach();
        match self {
            Engine::Guided(e) => Recorded {
                unmatched: e.record_run(&run.events, run.end(), &reach),
                feasible: !e.last_run_infeasible(),
                too_big: false,
            },
            Engine::Exhaustive(e) => {
                let traces: Vec<mbh_trace::RankTrace> =
                    run.analysis.traces.iter().flatten().cloned().collect();
                let recorded = e.record_run(&run.events, &traces, &reach);
                Recorded {
                    feasible: recorded.feasible(),
                    too_big: recorded.too_big,
                    unmatched: Vec::new(),
                }
            }
        }
    }

    /// Up to `n` guidances the engine will ask for after the pending run
    /// (the reference search gives none: it is for testing).
    fn upcoming(&self, n: usize) -> Vec<Guidance> {
        match self {
            Engine::Guided(e) => e.upcoming(n),
            Engine::Exhaustive(_) => Vec::new(),
        }
    }

    fn stats(&self) -> ChoicePointStats {
        match self {
            Engine::Guided(e) => e.stats().choice_points,
            Engine::Exhaustive(_) => ChoicePointStats::default(),
        }
    }

    fn is_bounded(&self) -> bool {
        matches!(self, Engine::Guided(e) if e.is_bounded())
    }

    fn is_complete(&self) -> bool {
        match self {
            Engine::Guided(e) => e.is_complete(),
            Engine::Exhaustive(e) => e.is_complete(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::config::ForcedMatch;

    /// A leak every rank has is one finding, its ranks and their lines in
    /// rank order whatever order the ranks ended in.
    #[test]
    fn a_finding_of_several_ranks_lists_them_in_order() {
        let leak = |rank: i32| {
            let mut f = Finding::new(
                mbh_trace::FindingKind::ResourceLeak,
                mbh_trace::Severity::Warning,
                "a handle was never freed",
            );
            f.ranks = vec![rank];
            f.locations.push(mbh_trace::Location {
                file: "grid.c".into(),
                line: 13,
                column: 3,
                rank,
                call: Some("MPI_Cart_create".into()),
                function: None,
                role: mbh_trace::Role::Primary,
                label: "created here, never freed".into(),
            });
            f
        };
        let merged = merge_ranks([3, 0, 2, 1].map(leak).to_vec());
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].ranks, [0, 1, 2, 3]);
        let ranks: Vec<i32> = merged[0].locations.iter().map(|l| l.rank).collect();
        assert_eq!(ranks, [0, 1, 2, 3]);
        let roles: Vec<mbh_trace::Role> = merged[0].locations.iter().map(|l| l.role).collect();
        use mbh_trace::Role::{Primary, Secondary};
        assert_eq!(roles, [Primary, Secondary, Secondary, Secondary]);
    }

    /// The search's error names the call an earlier run recorded for the
    /// forced event, in that call's terms.
    #[test]
    fn an_unmatched_forcing_is_told_with_the_call_an_earlier_run_recorded() {
        let mut found = Exploration::empty();
        found.wildcards.push(WildcardReport {
            rank: 2,
            file: "manager.c".into(),
            line: 31,
            call: "MPI_Testany".into(),
            matched: vec![1],
            potential: vec![0],
            event: 5,
            interleaving: 1,
            clock: 9,
            senders: Vec::new(),
        });
        let seen = BTreeMap::from([(
            (2, 5),
            SeenEvent {
                report: 0,
                index_choice: true,
            },
        )]);
        let unmatched = mbh_bounding::UnmatchedForce {
            forced: ForcedMatch {
                rank: 2,
                event: 5,
                source: 0,
            },
            observed: Some(1),
        };
        found.note_unmatched(
            3,
            vec![unmatched],
            &seen,
            std::path::Path::new("runs/x/i3"),
            false,
        );
        let diverged = Divergence {
            interleaving: 3,
            miss: ForcedMiss {
                forced: unmatched.forced,
                observed: Some(1),
                call: Some(ForcedCall {
                    call: "MPI_Testany".into(),
                    file: "manager.c".into(),
                    line: 31,
                    index_choice: true,
                }),
            },
            run_dir: Some("runs/x/i3".into()),
        };
        assert_eq!(found.diverged, std::slice::from_ref(&diverged));
        assert_eq!(found.warnings, [Warning::Diverged(diverged.clone())]);
        assert_eq!(found.incomplete_because, Some(Partial::Diverged(diverged)));
    }

    /// A later run's confirmation of a collective divergence an earlier
    /// run only warned about is the note the finding marks as its
    /// confirmation, whatever its words, and only that one.
    #[test]
    fn a_confirmation_is_taken_by_its_mark_not_its_words() {
        let divergence = |severity| {
            let mut f = Finding::new(
                FindingKind::CollectiveDivergence,
                severity,
                "rank 1 may skip `MPI_Barrier`",
            );
            f.notes
                .push("confirmed by nothing: an unmarked note".into());
            f
        };
        let mut first = [divergence(mbh_trace::Severity::Warning)];
        let mut later = divergence(mbh_trace::Severity::Error);
        later
            .notes
            .push("the ranks made this call rank 0 1 time".into());
        later.confirmation = Some(1);
        confirm_divergence(&mut first, &later, 4);
        assert_eq!(first[0].severity, mbh_trace::Severity::Error);
        assert_eq!(
            first[0].notes,
            [
                "confirmed by nothing: an unmarked note",
                "the ranks made this call rank 0 1 time (interleaving 4)"
            ]
        );
        assert_eq!(first[0].confirmation, Some(1));
    }

    /// A run of hundreds of wildcard decisions gives a finding a few
    /// notes: the forced decision first, then a count per call site.
    #[test]
    fn many_decisions_are_listed_up_to_a_few_then_counted_per_site() {
        let decision = |rank, place: &str, forced, k| Decision {
            rank,
            place: place.into(),
            forced,
            text: format!("decision {k} of rank {rank}"),
        };
        let mut decisions: Vec<Decision> = (0..300)
            .map(|k| decision(0, "`MPI_Testany` at lib.c:40", false, k))
            .collect();
        decisions.push(decision(1, "`MPI_Recv` at lib.c:60", false, 300));
        decisions.insert(150, decision(0, "`MPI_Testany` at lib.c:40", true, 999));
        let notes = summarise(decisions);
        assert_eq!(notes.len(), DECISIONS_LISTED + 2, "{notes:#?}");
        assert_eq!(notes[0], "decision 999 of rank 0", "the forced one first");
        assert_eq!(notes[1], "decision 0 of rank 0");
        assert_eq!(
            notes[DECISIONS_LISTED],
            "and 293 more decisions of rank 0's `MPI_Testany` at lib.c:40 in this interleaving (`mbhybrid replay` makes them all)"
        );
        assert!(notes[DECISIONS_LISTED + 1].starts_with("and 1 more decision of rank 1's"));
        let few = summarise(vec![decision(2, "`MPI_Recv` at a.c:3", false, 1)]);
        assert_eq!(few, ["decision 1 of rank 2"]);
    }

    /// Issue 38: a forced receive that never completed is a limit of the
    /// run, not an error of the search: the search is partial, with the
    /// reason, and no exit-2 divergence.
    #[test]
    fn a_forced_receive_that_never_completed_makes_the_search_partial() {
        let mut found = Exploration::empty();
        let unmatched = mbh_bounding::UnmatchedForce {
            forced: ForcedMatch {
                rank: 0,
                event: 0,
                source: 2,
            },
            observed: None,
        };
        let seen = BTreeMap::new();
        found.note_unmatched(
            2,
            vec![unmatched],
            &seen,
            std::path::Path::new("runs/x/i2"),
            true,
        );
        assert!(found.diverged.is_empty(), "{:?}", found.diverged);
        let stall = ForcedStall {
            interleaving: 2,
            miss: ForcedMiss {
                forced: unmatched.forced,
                observed: None,
                call: None,
            },
            hung: true,
        };
        assert_eq!(
            found.incomplete_because,
            Some(Partial::ForcedStall(stall.clone()))
        );
        assert_eq!(found.warnings, [Warning::ForcedStall(stall)]);
    }
}
