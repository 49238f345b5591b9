//! The runtime's configuration for one run, written by `verify` into the
//! interleaving directory as `runtime.json` and read by the runtime in
//! `MPI_Init`:
//!
//! ```json
//! {"format": "mbhybrid-runtime", "version": 1,
//!  "clocks": "lamport", "buffering": "infinite",
//!  "guidance": {"last_guided_clock": 3,
//!               "forced": [{"rank": 1, "event": 0, "source": 2}]}}
//! ```
//!
//! Without the file the runtime uses the defaults: Lamport clocks, the MPI
//! library's own buffering, and a free (SELF_RUN) execution. With
//! `guidance` the run is a GUIDED_RUN (seed 000 Fig 5.15): each wildcard
//! receive or probe whose per-rank event number is listed is posted with
//! the listed source instead of `MPI_ANY_SOURCE`, and each listed choice
//! among requests (`MPI_Waitany`, `MPI_Testany`, `MPI_Waitsome`,
//! `MPI_Testsome`; seed 001 §4) waits for the request at the listed index
//! and returns it, until the rank's clock passes `last_guided_clock`; from
//! then on the run is free.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` tag of the file.
pub const RUNTIME_CONFIG_FORMAT: &str = "mbhybrid-runtime";
/// The file's name inside an interleaving directory.
pub const RUNTIME_CONFIG_FILE: &str = "runtime.json";

/// Which logical clocks track matches-before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clocks {
    /// Lazy Lamport clocks (LLCP, seed 000 §5.1): one integer per message.
    #[default]
    Lamport,
    /// Lazy vector clocks (LVCP, §5.2): complete, `np` integers per message.
    Vector,
}

/// How standard-mode sends are buffered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Buffering {
    /// Whatever the MPI library does (small messages are sent eagerly).
    #[default]
    Infinite,
    /// Every standard send behaves as synchronous (`MPI_Ssend`), so
    /// deadlocks that need zero buffering happen.
    Zero,
}

/// One wildcard receive (or probe) forced to a sender, or one choice among
/// requests (`MPI_Waitany`, ...; seed 001 §4) forced to an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ForcedMatch {
    /// The receiving rank.
    pub rank: i32,
    /// Its per-rank wildcard event number (0-based, in issue order; choices
    /// among requests are numbered with the wildcard receives).
    pub event: u32,
    /// The sender to take; for a choice among requests, the index into the
    /// call's array of the request to complete (first).
    pub source: i32,
}

/// Which matches a guided run forces.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Guidance {
    /// Past this clock a rank runs free (seed 000 Fig 5.15, line 1).
    pub last_guided_clock: u64,
    /// The forced matches, all ranks.
    pub forced: Vec<ForcedMatch>,
}

impl Guidance {
    /// The forced matches indexed by (rank, event), for looking many up.
    pub fn index(&self) -> ForcedIndex {
        ForcedIndex::new(&self.forced)
    }
}

/// The forced matches of a [`Guidance`] by (rank, event): sorted once, then
/// each lookup is a binary search. The runtime builds it in `MPI_Init` and
/// asks it at every wildcard event, where a scan of the whole guidance
/// (one entry per forced event of every rank) would cost each receive time
/// proportional to the run's wildcard events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForcedIndex {
    /// Ascending by (rank, event), one entry per event.
    sorted: Vec<ForcedMatch>,
}

impl ForcedIndex {
    /// The index of `forced`. Should an event be listed twice (mbhybrid
    /// never writes that), the first listed wins, as a scan would have it.
    pub fn new(forced: &[ForcedMatch]) -> Self {
        let mut sorted = forced.to_vec();
        // Stable: among entries of one event, the first listed stays first.
        sorted.sort_by_key(|f| (f.rank, f.event));
        sorted.dedup_by_key(|f| (f.rank, f.event));
        ForcedIndex { sorted }
    }

    /// The sender (or request index) forced for `rank`'s wildcard event
    /// `event`, if any.
    pub fn source_for(&self, rank: i32, event: u32) -> Option<i32> {
        self.sorted
            .binary_search_by_key(&(rank, event), |f| (f.rank, f.event))
            .ok()
            .map(|at| self.sorted[at].source)
    }

    /// Whether nothing is forced.
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }
}

/// Why a runtime configuration (`runtime.json`, or the `replay.json` of a
/// recorded interleaving) could not be read. mbhybrid writes both files
/// itself, so either was damaged after it did, or another version wrote
/// it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The text is not the JSON of a configuration: a syntax error, a
    /// missing or unknown value, or a number out of range (the message
    /// gives the line and column).
    #[error("not a valid mbhybrid runtime configuration: {0}")]
    Json(#[from] serde_json::Error),
    /// The file is of another format or version.
    #[error("format {format:?} version {version}, expected {RUNTIME_CONFIG_FORMAT:?} version 1")]
    Version {
        /// The `format` the file gives.
        format: String,
        /// The `version` the file gives.
        version: u32,
    },
}

impl ConfigError {
    /// What to do about it, in one line.
    pub fn help(&self) -> &'static str {
        match self {
            ConfigError::Json(_) => {
                "mbhybrid writes this file itself, so it was damaged or edited after: \
                 run `mbhybrid verify` again"
            }
            ConfigError::Version { .. } => {
                "another version of mbhybrid wrote this file: run `mbhybrid verify` again \
                 with this one"
            }
        }
    }
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeConfig {
    /// Always [`RUNTIME_CONFIG_FORMAT`].
    pub format: String,
    /// Always 1.
    pub version: u32,
    /// The clocks.
    pub clocks: Clocks,
    /// The buffering of standard sends.
    pub buffering: Buffering,
    /// Forced matches; `None` for a free run.
    pub guidance: Option<Guidance>,
    /// The room each buffer has in its object at the calls the static
    /// analysis could not check itself (a datatype or count known only at
    /// run time), for the runtime's check;
    /// ordered by site and access.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buffer_rooms: Vec<RoomAtCall>,
    /// Whether the program checks its loads and stores against the
    /// buffers of pending nonblocking calls (its site table's
    /// `access_checks`): only then does the runtime keep those buffers,
    /// so a program built without the checks pays nothing
    /// per nonblocking call.
    #[serde(default)]
    pub watch_buffers: bool,
    /// `mbhybrid run`: every wildcard receive takes the sender seed 002's
    /// logical time chooses (`None`: the first message to arrive, or the
    /// guidance's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deterministic: Option<crate::determinism::Deterministic>,
}

/// The room of one buffer of one call, as the runtime needs it: a
/// [`crate::static_report::BufferRoom`] without the names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RoomAtCall {
    /// The call's site id.
    pub site: u32,
    /// Which of its buffers.
    pub access: crate::static_report::BufferAccess,
    /// Bytes from the buffer's address to the end of its object.
    pub bytes: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            format: RUNTIME_CONFIG_FORMAT.into(),
            version: 1,
            clocks: Clocks::default(),
            buffering: Buffering::default(),
            guidance: None,
            buffer_rooms: Vec::new(),
            watch_buffers: false,
            deterministic: None,
        }
    }
}

impl RuntimeConfig {
    /// The file's path in interleaving directory `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(RUNTIME_CONFIG_FILE)
    }

    /// Parses the file's text; an error says what is wrong. Never panics.
    ///
    /// The format and version are checked first, so a file of another
    /// version says so rather than naming the first field it lacks.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        /// The fields every version has.
        #[derive(Deserialize)]
        struct Tag {
            format: String,
            version: u32,
        }
        let tag: Tag = serde_json::from_str(text)?;
        if tag.format != RUNTIME_CONFIG_FORMAT || tag.version != 1 {
            return Err(ConfigError::Version {
                format: tag.format,
                version: tag.version,
            });
        }
        Ok(serde_json::from_str(text)?)
    }

    /// The file's text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_finds_forced_sources() {
        let config = RuntimeConfig {
            clocks: Clocks::Vector,
            buffering: Buffering::Zero,
            guidance: Some(Guidance {
                last_guided_clock: 3,
                forced: vec![ForcedMatch {
                    rank: 1,
                    event: 0,
                    source: 2,
                }],
            }),
            ..RuntimeConfig::default()
        };
        let back = RuntimeConfig::parse(&config.to_json()).unwrap();
        assert_eq!(back, config);
        let index = back.guidance.unwrap().index();
        assert_eq!(index.source_for(1, 0), Some(2));
        assert_eq!(index.source_for(1, 1), None);
        assert!(matches!(
            RuntimeConfig::parse(
                r#"{"format":"x","version":1,"clocks":"lamport","buffering":"zero","guidance":null}"#
            ),
            Err(ConfigError::Version { .. })
        ));
    }

    /// The index answers what a scan of the list would, for events listed
    /// in any order, on every rank, and for events not listed.
    #[test]
    fn the_forced_index_finds_what_a_scan_finds() {
        let forced: Vec<ForcedMatch> = [(2, 5, 0), (0, 3, 1), (2, 0, 1), (1, 7, 2), (0, 1, 2)]
            .into_iter()
            .map(|(rank, event, source)| ForcedMatch {
                rank,
                event,
                source,
            })
            .collect();
        let index = ForcedIndex::new(&forced);
        for rank in -1..4 {
            for event in 0..9 {
                let scan = forced
                    .iter()
                    .find(|f| f.rank == rank && f.event == event)
                    .map(|f| f.source);
                assert_eq!(index.source_for(rank, event), scan, "({rank}, {event})");
            }
        }
        assert_eq!(index.source_for(2, 5), Some(0));
        assert_eq!(index.source_for(2, 4), None);
        assert!(ForcedIndex::default().is_empty() && !index.is_empty());
        // An event listed twice keeps its first listing.
        let twice = [
            forced[1],
            ForcedMatch {
                source: 9,
                ..forced[1]
            },
        ];
        assert_eq!(ForcedIndex::new(&twice).source_for(0, 3), Some(1));
    }
}
