//! Prints what the offline matches-before oracle says each wildcard event
//! and choice of a run could have matched, beside the clocks' potentials:
//! for looking at a soak finding by hand.
//!
//! ```text
//! cargo run -p mbh-analysis --example oracle_dump -- [--zero] RUN_DIR
//! ```

use mbh_trace::RankTrace;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut zero = false;
    let mut dir = None;
    for arg in std::env::args_os().skip(1) {
        if arg == "--zero" {
            zero = true;
        } else {
            dir = Some(PathBuf::from(arg));
        }
    }
    let Some(dir) = dir else {
        eprintln!("usage: oracle_dump [--zero] RUN_DIR");
        return ExitCode::from(2);
    };
    let mut traces = Vec::new();
    for rank in 0.. {
        let path = dir.join(format!("rank-{rank}.trace"));
        if !path.exists() {
            break;
        }
        match RankTrace::read(&path) {
            Ok(trace) => traces.push(trace),
            Err(e) => {
                eprintln!("oracle_dump: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        }
    }
    for trace in &traces {
        for e in trace.wildcard_events() {
            println!(
                "rank {} event {}: matched {} clock {} runtime potential {:?} enablers {:?}",
                e.rank, e.event, e.matched, e.final_clock, e.potential, e.enablers
            );
        }
    }
    for found in mbh_analysis::potential_senders_and_indices(&traces, zero) {
        println!(
            "oracle: rank {} event {}: senders {:?} unreceived {:?} enablers {:?}",
            found.rank, found.event, found.senders, found.unreceived, found.enablers
        );
    }
    ExitCode::SUCCESS
}
