//! What a long search tells the person waiting for it, on standard error
//! (never standard output: `--format json/short/sarif` stay clean).
//!
//! On a terminal, one live line (an `indicatif` spinner) redrawn as each
//! interleaving starts: how many ran, the choice points found and those
//! whose alternatives all ran, findings, the mean time per interleaving.
//! Without a terminal (a batch job's log, a pipe), a plain line per
//! interleaving, but none in a search's first [`QUIET_START`] and at most
//! one per [`LINE_EVERY`]: a short run logs nothing, a long one shows it is
//! alive. No estimate of the end is given: a depth-first search learns its
//! choice points as it runs, so none would be honest.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mbh_trace::report::ChoicePointStats;
use std::time::{Duration, Instant};

/// No line without a terminal before the search has run this long.
pub const QUIET_START: Duration = Duration::from_secs(5);
/// At most one line without a terminal per this much time.
pub const LINE_EVERY: Duration = Duration::from_secs(5);

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Nowhere.
    Off,
    /// A live line on the terminal.
    Live,
    /// Plain, spaced lines (standard error is not a terminal).
    Lines,
}

impl ProgressMode {
    /// Live on a terminal, lines elsewhere.
    pub fn for_stderr() -> Self {
        use std::io::IsTerminal;
        if std::io::stderr().is_terminal() {
            ProgressMode::Live
        } else {
            ProgressMode::Lines
        }
    }
}

/// The state of a search, as shown.
pub struct Snapshot<'a> {
    /// The interleaving starting now (1-based).
    pub interleaving: u32,
    /// The engine's choice point counts.
    pub stats: &'a ChoicePointStats,
    /// Findings so far.
    pub findings: usize,
    /// Runs launched ahead and still running (`--jobs`).
    pub running_ahead: Option<usize>,
}

/// The progress of one search.
pub struct Progress {
    mode: ProgressMode,
    started: Instant,
    bar: Option<ProgressBar>,
    last_line: Option<Instant>,
}

impl Progress {
    /// Starts showing progress in `mode`.
    pub fn start(mode: ProgressMode) -> Self {
        let bar = (mode == ProgressMode::Live).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} mbhybrid: {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            mode,
            started: Instant::now(),
            bar,
            last_line: None,
        }
    }

    /// Shows that interleaving `now.interleaving` starts.
    pub fn interleaving(&mut self, now: &Snapshot<'_>) {
        match self.mode {
            ProgressMode::Off => {}
            ProgressMode::Live => {
                if let Some(bar) = &self.bar {
                    bar.set_message(self.line(now));
                }
            }
            ProgressMode::Lines => {
                let elapsed = self.started.elapsed();
                let due = match self.last_line {
                    None => elapsed >= QUIET_START,
                    Some(last) => last.elapsed() >= LINE_EVERY,
                };
                if due {
                    eprintln!("mbhybrid: {}", self.line(now));
                    self.last_line = Some(Instant::now());
                }
            }
        }
    }

    fn line(&self, now: &Snapshot<'_>) -> String {
        let ran = now.interleaving.saturating_sub(1);
        let elapsed = self.started.elapsed().as_secs_f64();
        let per_run = if ran > 0 {
            format!(", {:.2} s per interleaving", elapsed / f64::from(ran))
        } else {
            String::new()
        };
        let ahead = now
            .running_ahead
            .map_or(String::new(), |n| format!(", {n} more running"));
        format!(
            "interleaving {} ({} choice points, {} fully explored; {} findings; {elapsed:.0} s{per_run}{ahead})",
            now.interleaving, now.stats.found, now.stats.explored, now.findings
        )
    }

    /// Clears the live line (the report follows).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
