//! `verify --jobs N`: up to `N - 1` interleavings the search
//! will ask for next run at the same time as the one it asked for, each
//! its own MPI job.
//!
//! The search itself stays one depth-first walk in one thread
//! (`mbh_bounding::Explorer`): it decides the next run only from the runs
//! before it, and the report, the numbering and the replay commands come
//! from it alone. What runs ahead are the guidances its policy would give
//! next if no run before them opened new choice points
//! ([`mbh_bounding::Explorer::upcoming`]): the remaining alternatives of
//! the current path, deepest first. When the search asks for a guidance
//! that ran ahead, it takes that job's directory (renamed to its
//! interleaving number) instead of launching it again; a job the search
//! never asks for (a run before it opened choice points the search takes
//! first, a budget stopped the search) is waited for and deleted.
//!
//! Why taking a run made earlier is sound: a run is a function of its
//! guidance up to the last forced match, and the search treats whatever
//! the free part after it did as one possible execution, as it does for a
//! run it launches itself (`bounding/src/explore.rs`, "Why the search is
//! complete"). So a search with `--jobs` is as complete as one without;
//! like two searches without it, it may run different (equally valid)
//! interleavings where free events race.
//!
//! On a machine with fewer cores than `N` times the ranks, the jobs share
//! the cores: every run is slower, a `--timeout` may need raising, and
//! nothing is gained (BENCHMARKS.md, "verify --jobs").

use crate::error::{Result, SessionError};
use crate::interleaving::{self, LaunchSpec, Launched};
use mbh_trace::config::{Guidance, RuntimeConfig};
use mbh_trace::layout::InterleavingDir;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Runs made ahead more than this many times the jobs, unclaimed, are
/// dropped oldest first: the disk holds at most that many extra traces.
const KEPT_PER_JOB: usize = 4;

/// The jobs running ahead of one pass of the search, and those done.
pub struct RunAhead {
    spec: Arc<LaunchSpec>,
    run_dir: PathBuf,
    /// Jobs at once, the search's own included.
    jobs: usize,
    /// Directories made so far (`ahead-K`).
    launched: u64,
    running: Vec<(Option<Guidance>, JoinHandle<Result<Launched>>)>,
    done: Vec<(Option<Guidance>, Result<Launched>)>,
    /// Runs made ahead that the search took.
    pub taken: u32,
    /// Runs made ahead that it never asked for.
    pub wasted: u32,
}

impl RunAhead {
    /// `jobs` jobs at once for the program of `spec`, in `run_dir`.
    pub fn new(spec: LaunchSpec, run_dir: PathBuf, jobs: usize) -> RunAhead {
        RunAhead {
            spec: Arc::new(spec),
            run_dir,
            jobs: jobs.max(1),
            launched: 0,
            running: Vec::new(),
            done: Vec::new(),
            taken: 0,
            wasted: 0,
        }
    }

    /// Jobs at once, the search's own included.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// Jobs running ahead now.
    pub fn running(&self) -> usize {
        self.running.len()
    }

    /// Starts jobs for the first of `upcoming` that neither run nor ran,
    /// while fewer than `jobs - 1` run ahead. `base` is the configuration
    /// of the search's own runs (clocks, buffering); each gets its
    /// guidance.
    pub fn start(&mut self, upcoming: Vec<Guidance>, base: &RuntimeConfig) {
        self.collect_finished();
        for guidance in upcoming.into_iter().map(Some) {
            if self.running.len() + 1 >= self.jobs {
                break;
            }
            if self.running.iter().any(|(g, _)| *g == guidance)
                || self.done.iter().any(|(g, _)| *g == guidance)
            {
                continue;
            }
            self.launched += 1;
            let dir = InterleavingDir {
                path: self.run_dir.join(format!("ahead-{}", self.launched)),
            };
            let config = RuntimeConfig {
                guidance: guidance.clone(),
                ..base.clone()
            };
            let spec = Arc::clone(&self.spec);
            let job = std::thread::Builder::new()
                .name("mbhybrid-ahead".into())
                .spawn(move || interleaving::launch(&spec, dir, config));
            match job {
                Ok(handle) => self.running.push((guidance, handle)),
                // No thread: the search launches it itself when it comes.
                Err(_) => break,
            }
        }
        self.drop_oldest();
    }

    /// The job made ahead under `guidance`, waited for, if there is one.
    pub fn take(&mut self, guidance: &Option<Guidance>) -> Option<Result<Launched>> {
        if let Some(at) = self.running.iter().position(|(g, _)| g == guidance) {
            let (_, handle) = self.running.swap_remove(at);
            self.taken += 1;
            return Some(joined(handle));
        }
        let at = self.done.iter().position(|(g, _)| g == guidance)?;
        self.taken += 1;
        Some(self.done.remove(at).1)
    }

    /// Launches `config`'s run itself, in `dir`.
    pub fn launch(&self, dir: InterleavingDir, config: RuntimeConfig) -> Result<Launched> {
        interleaving::launch(&self.spec, dir, config)
    }

    /// Waits for every job still running and deletes what the search never
    /// took (also when the search stops early: see [`Drop`]).
    pub fn finish(&mut self) {
        for (guidance, handle) in std::mem::take(&mut self.running) {
            self.done.push((guidance, joined(handle)));
        }
        for (_, run) in std::mem::take(&mut self.done) {
            self.discard(run);
        }
        // A job that failed to launch returned no directory to delete:
        // whatever `ahead-K` is left was never taken (those taken were
        // renamed to their interleaving).
        for k in 1..=self.launched {
            let _ = std::fs::remove_dir_all(self.run_dir.join(format!("ahead-{k}")));
        }
    }

    fn collect_finished(&mut self) {
        let mut still = Vec::new();
        for (guidance, handle) in std::mem::take(&mut self.running) {
            if handle.is_finished() {
                self.done.push((guidance, joined(handle)));
            } else {
                still.push((guidance, handle));
            }
        }
        self.running = still;
    }

    fn drop_oldest(&mut self) {
        while self.done.len() > KEPT_PER_JOB * self.jobs {
            let (_, run) = self.done.remove(0);
            self.discard(run);
        }
    }

    fn discard(&mut self, run: Result<Launched>) {
        self.wasted += 1;
        if let Ok(run) = run {
            let _ = std::fs::remove_dir_all(&run.dir().path);
        }
    }
}

impl Drop for RunAhead {
    /// No job outlives the search, whichever way it ends.
    fn drop(&mut self) {
        self.finish();
    }
}

fn joined(handle: JoinHandle<Result<Launched>>) -> Result<Launched> {
    handle.join().unwrap_or(Err(SessionError::RunAheadPanicked))
}
