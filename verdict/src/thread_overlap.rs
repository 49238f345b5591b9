//! Two threads of a rank in MPI at once, at a thread level that forbids it
//! (`MPI_THREAD_SERIALIZED` or lower; MPI-4.0 §11.6: "the user must
//! ensure that only one thread calls MPI at a time"): the runtime notes
//! the second call in the interleaving directory
//! ([`mbh_trace::layout::ThreadOverlap`]) and stops the job
//! ([`mbh_trace::op::THREAD_OVERLAP_EXIT`]). Each note is a `thread-level`
//! finding at the second call, naming the call the other thread was
//! inside, and a place where the run stopped: what the program would have
//! done next is not verified, so the report is partial.

use crate::outcome::RunContext;
use crate::place::site_location;
use mbh_trace::layout::ThreadOverlap;
use mbh_trace::outcome::{Unverified, UnverifiedCall};
use mbh_trace::{Finding, FindingKind, Location, Role, Severity};

/// The overlaps the runtime noted in this run.
pub fn overlaps(ctx: &RunContext<'_>) -> Vec<ThreadOverlap> {
    ctx.dir.thread_overlaps()
}

/// Whether `rank` stopped for an overlap it noted.
pub fn stopped(overlaps: &[ThreadOverlap], rank: i32) -> bool {
    overlaps.iter().any(|o| o.rank == rank)
}

fn level_name(level: i32) -> &'static str {
    match level {
        0 => "MPI_THREAD_SINGLE",
        1 => "MPI_THREAD_FUNNELED",
        _ => "MPI_THREAD_SERIALIZED",
    }
}

/// The finding of each overlap.
pub fn findings(ctx: &RunContext<'_>, overlaps: &[ThreadOverlap]) -> Vec<Finding> {
    overlaps.iter().map(|o| finding(ctx, o)).collect()
}

fn finding(ctx: &RunContext<'_>, o: &ThreadOverlap) -> Finding {
    let rank = o.rank;
    let site = ctx.sites.and_then(|s| s.get(o.site));
    let other_site = ctx.sites.and_then(|s| s.get(o.other_site));
    let call = site.map_or(o.call.as_str(), |s| s.call.as_str());
    let thread = if o.on_main {
        format!("the main thread (thread {})", o.thread)
    } else {
        format!("thread {}", o.thread)
    };
    let other_thread = if o.other_on_main {
        "the main thread"
    } else {
        "another thread"
    };
    let other_place = other_site.map_or(String::new(), |s| {
        if s.line == 0 {
            String::new()
        } else {
            format!(" (line {})", s.line)
        }
    });
    let level = level_name(o.level);
    // Under `FUNNELED` or `SINGLE` the root of it is a call off the main
    // thread: said first when it is this one (the other's is its own
    // finding, recorded when it entered).
    let rule = match o.level {
        0 | 1 if !o.on_main => {
            format!("a call from a thread other than the main one, which {level} does not allow")
        }
        0 | 1 => {
            format!("a thread other than the main one was in MPI, which {level} does not allow")
        }
        _ => format!("two threads in MPI at once, which {level} does not allow"),
    };
    let mut f = Finding::new(
        FindingKind::ThreadLevel,
        Severity::Error,
        format!(
            "rank {rank} called `{call}` on {thread} while {other_thread} was inside `{}`{other_place}: {rule}",
            o.other_call
        ),
    );
    f.interleaving = ctx.interleaving;
    f.ranks = vec![rank];
    match site {
        Some(site) => f.locations.push(site_location(
            site,
            rank,
            Role::Primary,
            &format!(
                "called on {thread} while {other_thread} was inside `{}`",
                o.other_call
            ),
        )),
        None => f
            .notes
            .push(format!("rank {rank}: the second call's line is unknown")),
    }
    if let Some(other) = other_site {
        f.locations.push(site_location(
            other,
            rank,
            Role::Secondary,
            &format!("{other_thread} was inside this call"),
        ));
    }
    f.notes.push(
        "the run stopped at the second call: mbhybrid cannot run it without breaking the other thread's call, so what the program does after it is not verified".into(),
    );
    f.help = Some(match o.level {
        0 | 1 => "make MPI calls from the main thread only (in OpenMP: inside `#pragma omp master` or outside parallel regions), or initialise MPI with `MPI_Init_thread` asking for `MPI_THREAD_MULTIPLE` and check the level `provided`".into(),
        _ => "make the threads' MPI calls one at a time (in OpenMP: inside one `#pragma omp critical`, or from one thread), or initialise MPI with `MPI_Init_thread` asking for `MPI_THREAD_MULTIPLE` and check the level `provided`".into(),
    });
    f
}

/// The second calls, as places the verdict does not cover past.
pub fn stops(ctx: &RunContext<'_>, overlaps: &[ThreadOverlap]) -> Vec<UnverifiedCall> {
    overlaps
        .iter()
        .map(|o| {
            let label = Unverified::ThreadStopped.label();
            let mut location = match ctx.sites.and_then(|s| s.get(o.site)) {
                Some(site) => site_location(site, o.rank, Role::Primary, &label),
                None => Location {
                    file: ctx.program.to_owned(),
                    line: 0,
                    column: 0,
                    rank: o.rank,
                    call: None,
                    function: None,
                    role: Role::Primary,
                    label,
                },
            };
            location.call = Some(o.call.clone());
            UnverifiedCall {
                location,
                what: Unverified::ThreadStopped,
            }
        })
        .collect()
}
