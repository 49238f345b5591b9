//! Fixtures for the unit tests: site tables and the context of a run, as
//! the binary would give them, without MPI.

use crate::outcome::RunContext;
use crate::symbolize::Symbolizer;
use mbh_trace::layout::InterleavingDir;
use mbh_trace::report::JobEnd;
use mbh_trace::{Site, SiteTable};

/// A table of `calls` in `main` of `app.c`, with ids 1.. at lines
/// `line_step`, `2 * line_step`, ...
pub fn site_table(calls: &[&str], line_step: u32) -> SiteTable {
    let mut table = SiteTable::new("app", vec!["app.c".into()]);
    for (id, call) in (1..).zip(calls) {
        table.sites.push(Site {
            id,
            function: "main".into(),
            call: (*call).into(),
            file: "app.c".into(),
            line: id * line_step,
            column: 1,
        });
    }
    table
}

/// Calls `judge` with the context of interleaving `interleaving` of `./app`,
/// whose job ended by itself, in a fresh run directory `dir` that the
/// caller may fill first (`prepare`).
pub fn with_run<T>(
    interleaving: u32,
    sites: Option<&SiteTable>,
    prepare: impl FnOnce(&InterleavingDir),
    judge: impl FnOnce(&RunContext<'_>) -> T,
) -> T {
    let run = tempfile::tempdir().unwrap();
    let dir = InterleavingDir::new(run.path(), interleaving);
    prepare(&dir);
    let ended = JobEnd {
        status: None,
        timed_out: false,
        stopped_by_monitor: false,
        elapsed: std::time::Duration::ZERO,
    };
    let symbolizer = Symbolizer::new(std::path::Path::new("/nonexistent"), run.path());
    judge(&RunContext {
        program: "./app",
        interleaving,
        dir: &dir,
        ended: &ended,
        sites,
        symbolizer: &symbolizer,
        timeout_secs: 10,
        exit_order: &[],
    })
}
