//! What one run of the job ended with: each rank's end read from its trace,
//! turned into findings (`assertion`, `crash`, `exit`, `timeout`).
//!
//! The launcher's view (its exit status, what it printed) is only used when
//! the ranks' own traces cannot tell: a rank's trace records its signal,
//! exit status or `MPI_Abort` from inside the process, which is exact.

use crate::local_checks::local_check_findings;
use crate::no_verdict::{no_rank_started, NoVerdict};
use crate::printed::{tail, without_launcher_banner};
use crate::rank_end::{before_init_findings, killed_finding, rank_finding, timeout_finding};
use crate::symbolize::Symbolizer;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::outcome::{ToolStop, TraceGap};
use mbh_trace::rank_trace::{Decoded, RankState, RankTrace, TraceError};
use mbh_trace::report::JobEnd;
use mbh_trace::report::{RankOutcome, RunOutcome};
use mbh_trace::{Finding, SiteTable};
use rayon::prelude::*;

/// Everything `analyze` needs about one finished run.
pub struct RunContext<'a> {
    /// The program as the user named it (for messages).
    pub program: &'a str,
    /// 1-based interleaving number.
    pub interleaving: u32,
    /// Its directory.
    pub dir: &'a InterleavingDir,
    /// How the launcher ended.
    pub ended: &'a JobEnd,
    /// Call sites, for programs built by `mbhybrid build`.
    pub sites: Option<&'a SiteTable>,
    /// Debug information of the executable.
    pub symbolizer: &'a Symbolizer,
    /// The run's timeout, for the message.
    pub timeout_secs: u64,
    /// Ranks in the order their processes exited (the binary's death watch
    /// sees them go).
    pub exit_order: &'a [i32],
}

/// The outcome and the findings of one run.
pub struct Analysis {
    /// Per-rank ends.
    pub outcome: RunOutcome,
    /// Problems found.
    pub findings: Vec<Finding>,
    /// The traces that could be read, by rank.
    pub traces: Vec<Option<RankTrace>>,
    /// Gaps in the traces: unreadable, cut short, records lost. Each one
    /// keeps the verdict from being complete.
    pub warnings: Vec<TraceGap>,
    /// The ranks the runtime stopped (a call it cannot handle, or its own
    /// failure), with what it said. A limit of the tool, never a finding
    /// against the program.
    pub tool_stops: Vec<ToolStop>,
    /// The calls of MPI functions the runtime does not model the ranks
    /// made ([`crate::not_modelled`]): the run is partial.
    pub not_modelled: Vec<mbh_trace::outcome::UnverifiedCall>,
}

/// Reads every rank's trace of `dir` (`None`: missing or unreadable), and
/// the warnings about the unreadable ones and the ones cut short.
///
/// The ranks' files are read and decoded in parallel (rayon): at 1,024
/// ranks of 10^4 calls they are 1.6 GiB decoded (BENCHMARKS.md,
/// "Post-run analysis at scale"). The warnings come in rank order.
pub fn read_traces(dir: &InterleavingDir, np: u32) -> (Vec<Option<RankTrace>>, Vec<TraceGap>) {
    let read: Vec<Option<Result<Decoded, TraceError>>> = (0..np as i32)
        .into_par_iter()
        .map(|rank| {
            let path = dir.trace(rank);
            path.exists().then(|| RankTrace::read_decoded(&path))
        })
        .collect();
    let mut traces = Vec::new();
    let mut warnings = Vec::new();
    for (rank, read) in (0..).zip(read) {
        traces.push(match read {
            Some(Ok(decoded)) => {
                if let Some(cut) = decoded.truncated {
                    // A rank killed while its trace was being copied
                    // or a full disk: what the file holds is kept, and
                    // the report says what is missing.
                    warnings.push(TraceGap::CutShort {
                        rank,
                        counted: cut.counted,
                        kept: cut.kept,
                    });
                }
                if let Some(damage) = &decoded.damaged {
                    warnings.push(TraceGap::Damaged {
                        rank,
                        damage: damage.to_string(),
                        kept: decoded.trace.ops.len(),
                    });
                }
                let lost = decoded.trace.end.lost_records;
                if lost > 0 {
                    warnings.push(TraceGap::Lost {
                        rank,
                        records: lost,
                    });
                }
                Some(decoded.trace)
            }
            Some(Err(e)) => {
                warnings.push(TraceGap::Unreadable {
                    rank,
                    error: e.to_string(),
                });
                None
            }
            None => None,
        });
    }
    (traces, warnings)
}

/// Tells what happened in a finished run from its traces ([`read_traces`]
/// gives them and the `warnings` about them).
pub fn analyze(
    ctx: &RunContext<'_>,
    traces: Vec<Option<RankTrace>>,
    warnings: Vec<TraceGap>,
) -> Result<Analysis, NoVerdict> {
    let launcher_stderr = std::fs::read_to_string(ctx.dir.launcher_stderr()).unwrap_or_default();
    let before_init = before_init_findings(ctx);
    if traces.iter().all(Option::is_none)
        && !ctx.ended.timed_out
        && !ctx.ended.stopped_by_monitor
        && before_init.is_empty()
    {
        // Traces written but unreadable (a format version mismatch) are
        // not "no process reached MPI_Init": the report must name the real cause.
        // With no trace read, every gap is an unreadable trace.
        if let Some((rank, reason)) = warnings.iter().find_map(|gap| match gap {
            TraceGap::Unreadable { rank, error } => Some((*rank, error.clone())),
            _ => None,
        }) {
            return Err(NoVerdict::UnreadableTraces {
                program: ctx.program.to_string(),
                rank,
                reason,
                run: ctx.dir.path.display().to_string(),
            });
        }
        return Err(no_rank_started(ctx, &launcher_stderr));
    }

    let mut findings = before_init;
    let overlaps = crate::thread_overlap::overlaps(ctx);
    let unchecked = run_findings(ctx, &traces, &overlaps, &mut findings);
    let (ranks, tool_stops) = rank_outcomes(ctx, &traces, &mut findings);

    let launcher_stdout = std::fs::read_to_string(ctx.dir.launcher_stdout()).unwrap_or_default();
    if ctx.ended.timed_out {
        findings.push(timeout_finding(ctx, &traces));
    } else if findings.is_empty()
        && tool_stops.is_empty()
        && !ctx.ended.stopped_by_monitor
        && !ctx.ended.status.is_some_and(|s| s.success())
        && !all_finished(&traces)
    {
        // Nothing inside the processes explains the failure: they were
        // killed from outside (the launcher, the OOM killer, a user).
        findings.push(killed_finding(
            ctx,
            &ranks,
            &traces,
            &launcher_stdout,
            &launcher_stderr,
        ));
    }

    let mut not_modelled = crate::not_modelled::calls(ctx, &traces, &unchecked);
    not_modelled.extend(crate::thread_overlap::stops(ctx, &overlaps));
    Ok(Analysis {
        outcome: RunOutcome {
            interleaving: ctx.interleaving,
            launcher_exit: ctx.ended.status.and_then(|s| s.code()),
            ranks,
            seconds: ctx.ended.elapsed.as_secs_f64(),
            stdout: tail(without_launcher_banner(&launcher_stdout)),
            dir: Some(ctx.dir.path.display().to_string()),
            infeasible: false,
        },
        findings,
        traces,
        warnings,
        tool_stops,
        not_modelled,
    })
}

/// The findings of the whole run's checks (threads, buffers, messages
/// never received, RMA epochs and races, collectives some ranks skip),
/// into `findings`; the operations the race check could not check.
fn run_findings(
    ctx: &RunContext<'_>,
    traces: &[Option<RankTrace>],
    overlaps: &[mbh_trace::layout::ThreadOverlap],
    findings: &mut Vec<Finding>,
) -> Vec<(i32, mbh_trace::rank_trace::Op, &'static str)> {
    findings.extend(crate::thread_overlap::findings(ctx, overlaps));
    findings.extend(crate::buffers::buffer_findings(ctx.sites, traces));
    findings.extend(crate::unreceived::unreceived_findings(ctx.sites, traces));
    findings.extend(crate::rma_epochs::rma_epoch_findings(ctx.sites, traces));
    let races = crate::rma_races::rma_race_check(ctx.sites, traces);
    findings.extend(races.findings);
    findings.extend(crate::divergence::divergence_findings(
        ctx.sites,
        traces,
        ctx.ended.stopped_by_monitor,
    ));
    races.unchecked
}

/// Each rank's outcome, with its own findings (local checks, how it
/// ended) into `findings`, and the messages of the ranks the runtime
/// stopped (`tool_stops`).
fn rank_outcomes(
    ctx: &RunContext<'_>,
    traces: &[Option<RankTrace>],
    findings: &mut Vec<Finding>,
) -> (Vec<RankOutcome>, Vec<ToolStop>) {
    let mut ranks = Vec::new();
    let mut tool_stops = Vec::new();
    for (rank, trace) in traces.iter().enumerate() {
        let rank = rank as i32;
        let stderr = tail(&std::fs::read_to_string(ctx.dir.stderr(rank)).unwrap_or_default());
        if let Some(t) = trace
            .as_ref()
            .filter(|t| t.end.state == RankState::ToolStopped)
        {
            tool_stops.push(ToolStop {
                rank,
                site: t
                    .end
                    .abort
                    .and_then(|(_, site)| ctx.sites.and_then(|s| s.get(site)))
                    .cloned(),
                said: t.end.tool_stop.clone(),
            });
        }
        let (state, exit_status, signal, operations) = match trace {
            None => ("never-started".to_string(), None, None, 0),
            Some(t) => {
                findings.extend(local_check_findings(ctx, t, traces, &stderr));
                if let Some(finding) = rank_finding(ctx, t, &stderr) {
                    findings.push(finding);
                }
                let state = state_name(ctx, t);
                (
                    state.to_string(),
                    t.end.exit_status,
                    t.end.signal,
                    t.ops.len() as u64,
                )
            }
        };
        ranks.push(RankOutcome {
            rank,
            state,
            exit_status,
            signal,
            operations,
            stderr,
        });
    }
    (ranks, tool_stops)
}

/// The state a rank's outcome names.
fn state_name(ctx: &RunContext<'_>, t: &RankTrace) -> &'static str {
    match t.end.state {
        RankState::Exited => "exited",
        RankState::Finalized => "finalized",
        RankState::Signaled => "signaled",
        RankState::Aborted => "aborted",
        RankState::ToolStopped => "stopped-by-mbhybrid",
        // mbhybrid stopped the job after confirming it could
        // never finish.
        RankState::Starting | RankState::Running if ctx.ended.stopped_by_monitor => "deadlocked",
        RankState::Starting | RankState::Running if ctx.ended.timed_out => "timed-out",
        RankState::Starting | RankState::Running => "killed",
    }
}

/// Whether every rank finalized and exited with status 0: a launcher that
/// still failed failed on its own (Debian's `mpiexec` of Open MPI 4.1.4
/// can segfault in `PMIx_Finalize`), which says nothing about the program.
fn all_finished(traces: &[Option<RankTrace>]) -> bool {
    traces.iter().all(|t| {
        t.as_ref()
            .is_some_and(|t| t.end.state == RankState::Finalized && t.end.exit_status == Some(0))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::{RawOp, TraceWriter};

    /// A trace file of `records` `MPI_Barrier` records, written as the
    /// runtime writes it.
    fn trace_bytes(records: u64) -> Vec<u8> {
        let mut buf = vec![0u64; TraceWriter::file_len(records) as usize / 8];
        let len = buf.len() * 8;
        // SAFETY: `buf` is 8-aligned, `len` bytes long, and outlives `w`.
        let mut w = unsafe { TraceWriter::from_raw(buf.as_mut_ptr().cast(), len) }.unwrap();
        w.init_header(0, 1, 1, 0);
        for _ in 0..records {
            w.append(RawOp {
                kind: mbh_trace::OpKind::Barrier as u16,
                ..RawOp::default()
            });
        }
        w.set_state(RankState::Finalized);
        buf.iter().flat_map(|word| word.to_le_bytes()).collect()
    }

    #[test]
    fn a_damaged_record_keeps_the_records_before_it_and_says_so() {
        let run = tempfile::tempdir().unwrap();
        let dir = InterleavingDir::new(run.path(), 1);
        std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
        let mut bytes = trace_bytes(3);
        // Record 2's kind (after its 8-byte index) becomes one no runtime
        // writes.
        let record_2 = TraceWriter::file_len(2) as usize;
        bytes[record_2 + 8..record_2 + 10].copy_from_slice(&0xfffeu16.to_le_bytes());
        std::fs::write(dir.trace(0), &bytes).unwrap();
        let (traces, warnings) = read_traces(&dir, 1);
        assert_eq!(traces[0].as_ref().map(|t| t.ops.len()), Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            matches!(
                warnings[0],
                TraceGap::Damaged {
                    rank: 0,
                    kept: 2,
                    ..
                }
            ),
            "{warnings:?}"
        );
    }

    #[test]
    fn traces_of_another_format_version_are_named_as_such() {
        let error = crate::fixtures::with_run(
            1,
            None,
            |dir| {
                std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
                let mut bytes = trace_bytes(1);
                // The version word follows the 8-byte magic.
                bytes[8..12].copy_from_slice(&99u32.to_le_bytes());
                std::fs::write(dir.trace(0), &bytes).unwrap();
            },
            |ctx| {
                let (traces, warnings) = read_traces(ctx.dir, 1);
                analyze(ctx, traces, warnings)
                    .err()
                    .expect("an error")
                    .to_string()
            },
        );
        assert!(error.contains("no rank's trace could be read"), "{error}");
        assert!(error.contains("another mbhybrid version"), "{error}");
    }

    #[test]
    fn a_trace_cut_short_keeps_its_records_and_says_so() {
        let run = tempfile::tempdir().unwrap();
        let dir = InterleavingDir::new(run.path(), 1);
        std::fs::create_dir_all(dir.trace(0).parent().unwrap()).unwrap();
        // Two whole records and 5 bytes of the third.
        let cut = TraceWriter::file_len(2) as usize + 5;
        std::fs::write(dir.trace(0), &trace_bytes(3)[..cut]).unwrap();
        let (traces, warnings) = read_traces(&dir, 1);
        assert_eq!(traces[0].as_ref().map(|t| t.ops.len()), Some(2));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(
            warnings[0],
            TraceGap::CutShort {
                rank: 0,
                counted: 3,
                kept: 2
            }
        );
    }
}
