//! Deleting the bulky files of the interleavings that showed nothing
//! ([`interleaving::prune`]) on a thread of its own, while the search runs
//! the next one: unlinking a run's trace files took up to 10 ms on ext4,
//! on the path from one run to the next. The files are gone when
//! the pruner is dropped, before the exploration returns.

use crate::interleaving;
use mbh_trace::layout::InterleavingDir;
use std::sync::mpsc::{channel, Sender};
use std::thread::JoinHandle;

/// The thread that prunes, and the way to hand it directories.
pub struct Pruner {
    /// `None` when the thread could not start: directories are then pruned
    /// by the caller.
    sender: Option<Sender<InterleavingDir>>,
    thread: Option<JoinHandle<()>>,
}

impl Pruner {
    /// Starts the thread.
    pub fn start() -> Pruner {
        let (sender, receiver) = channel::<InterleavingDir>();
        let thread = std::thread::Builder::new()
            .name("mbhybrid-prune".into())
            .spawn(move || {
                for dir in receiver {
                    interleaving::prune(&dir);
                }
            })
            .ok();
        Pruner {
            sender: thread.is_some().then_some(sender),
            thread,
        }
    }

    /// Prunes `dir`, soon.
    pub fn prune(&self, dir: &InterleavingDir) {
        let handed = self
            .sender
            .as_ref()
            .is_some_and(|sender| sender.send(dir.clone()).is_ok());
        if !handed {
            interleaving::prune(dir);
        }
    }
}

impl Drop for Pruner {
    /// Waits until every directory handed over is pruned.
    fn drop(&mut self) {
        drop(self.sender.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_directory_handed_over_is_pruned_when_the_pruner_is_dropped() {
        let root = tempfile::tempdir().unwrap();
        let dirs: Vec<InterleavingDir> = (1..=3)
            .map(|n| InterleavingDir::new(root.path(), n))
            .collect();
        for dir in &dirs {
            std::fs::create_dir_all(&dir.path).unwrap();
            for name in ["rank-0.trace", "rank-0.stderr", "runtime.json"] {
                std::fs::write(dir.path.join(name), b"x").unwrap();
            }
        }
        let pruner = Pruner::start();
        for dir in &dirs {
            pruner.prune(dir);
        }
        drop(pruner);
        for dir in &dirs {
            assert!(!dir.path.join("rank-0.trace").exists());
            assert!(!dir.path.join("rank-0.stderr").exists());
            assert!(
                dir.path.join("runtime.json").exists(),
                "the configuration stays: the run is still replayable"
            );
        }
    }
}
