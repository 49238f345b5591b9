//! Findings: what verification reports, one per problem.

use serde::{Deserialize, Serialize};

/// The kind of a finding. The names are part of the JSON contract of
/// DESIGN.md: fields may be added, none renamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Every live rank blocked, confirmed on the wait-for graph.
    Deadlock,
    /// `assert`/`abort`/`MPI_Abort` in user code.
    Assertion,
    /// A rank died of a signal.
    Crash,
    /// A rank exited with a nonzero status.
    Exit,
    /// An MPI call returned an error code.
    MpiError,
    /// An MPI call got an invalid argument.
    InvalidArgument,
    /// Sender and receiver disagree on the datatype signature.
    TypeMismatch,
    /// Ranks called different collectives, or with different roots/types.
    CollectiveMismatch,
    /// A cycle of sends that completes only because MPI buffered them.
    BufferingHazard,
    /// A communicator, datatype, group or op never freed.
    ResourceLeak,
    /// A request never completed or freed.
    RequestLeak,
    /// A persistent request waited on without `MPI_Start`.
    MissingStart,
    /// A buffer touched while a nonblocking operation owns it.
    BufferReuse,
    /// An MPI call after `MPI_Finalize`.
    AfterFinalize,
    /// The run exceeded `--timeout` without being provably deadlocked.
    Timeout,
    /// An MPI call before `MPI_Init`.
    BeforeInit,
    /// A buffer whose C type is not the call's MPI datatype.
    BufferType,
    /// A count of elements that reaches past the buffer's object.
    BufferOverflow,
    /// A collective that some ranks may skip: a branch guarding it depends
    /// on the rank or on received data.
    CollectiveDivergence,
    /// A message sent and never received before `MPI_Finalize`.
    UnreceivedMessage,
    /// An MPI call the thread level does not allow: from a thread other
    /// than the main one under `MPI_THREAD_FUNNELED` or lower.
    ThreadLevel,
    /// A one-sided communication call outside the epoch it needs, or an
    /// epoch left open at `MPI_Win_free` or `MPI_Finalize`.
    RmaEpoch,
    /// Two one-sided operations on overlapping bytes of one target's
    /// window, at least one writing, that no synchronization orders.
    RmaRace,
}

impl FindingKind {
    /// Every kind, in code order.
    pub const ALL: &'static [FindingKind] = &[
        FindingKind::Deadlock,
        FindingKind::Assertion,
        FindingKind::Crash,
        FindingKind::Exit,
        FindingKind::MpiError,
        FindingKind::InvalidArgument,
        FindingKind::TypeMismatch,
        FindingKind::CollectiveMismatch,
        FindingKind::BufferingHazard,
        FindingKind::ResourceLeak,
        FindingKind::RequestLeak,
        FindingKind::MissingStart,
        FindingKind::BufferReuse,
        FindingKind::AfterFinalize,
        FindingKind::Timeout,
        FindingKind::BeforeInit,
        FindingKind::BufferType,
        FindingKind::BufferOverflow,
        FindingKind::CollectiveDivergence,
        FindingKind::UnreceivedMessage,
        FindingKind::ThreadLevel,
        FindingKind::RmaEpoch,
        FindingKind::RmaRace,
    ];

    /// The stable code (`MBH0001`). Append-only: never renumber.
    pub fn code(self) -> &'static str {
        match self {
            FindingKind::Deadlock => "MBH0001",
            FindingKind::Assertion => "MBH0002",
            FindingKind::Crash => "MBH0003",
            FindingKind::Exit => "MBH0004",
            FindingKind::MpiError => "MBH0005",
            FindingKind::InvalidArgument => "MBH0006",
            FindingKind::TypeMismatch => "MBH0007",
            FindingKind::CollectiveMismatch => "MBH0008",
            FindingKind::BufferingHazard => "MBH0009",
            FindingKind::ResourceLeak => "MBH0010",
            FindingKind::RequestLeak => "MBH0011",
            FindingKind::MissingStart => "MBH0012",
            FindingKind::BufferReuse => "MBH0013",
            FindingKind::AfterFinalize => "MBH0014",
            FindingKind::Timeout => "MBH0015",
            FindingKind::BeforeInit => "MBH0016",
            FindingKind::BufferType => "MBH0017",
            FindingKind::BufferOverflow => "MBH0018",
            FindingKind::CollectiveDivergence => "MBH0019",
            FindingKind::UnreceivedMessage => "MBH0020",
            FindingKind::ThreadLevel => "MBH0021",
            FindingKind::RmaEpoch => "MBH0022",
            FindingKind::RmaRace => "MBH0023",
        }
    }

    /// The JSON name (`deadlock`).
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Deadlock => "deadlock",
            FindingKind::Assertion => "assertion",
            FindingKind::Crash => "crash",
            FindingKind::Exit => "exit",
            FindingKind::MpiError => "mpi-error",
            FindingKind::InvalidArgument => "invalid-argument",
            FindingKind::TypeMismatch => "type-mismatch",
            FindingKind::CollectiveMismatch => "collective-mismatch",
            FindingKind::BufferingHazard => "buffering-hazard",
            FindingKind::ResourceLeak => "resource-leak",
            FindingKind::RequestLeak => "request-leak",
            FindingKind::MissingStart => "missing-start",
            FindingKind::BufferReuse => "buffer-reuse",
            FindingKind::AfterFinalize => "after-finalize",
            FindingKind::Timeout => "timeout",
            FindingKind::BeforeInit => "before-init",
            FindingKind::BufferType => "buffer-type",
            FindingKind::BufferOverflow => "buffer-overflow",
            FindingKind::CollectiveDivergence => "collective-divergence",
            FindingKind::UnreceivedMessage => "unreceived-message",
            FindingKind::ThreadLevel => "thread-level",
            FindingKind::RmaEpoch => "rma-epoch",
            FindingKind::RmaRace => "rma-race",
        }
    }
}

/// How bad a finding is, most severe first: `verify`'s exit status
/// compares severities by this order (`--deny warnings`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// A bug in the program.
    Error,
    /// Likely a bug, or a portability hazard.
    Warning,
    /// Information about the verification itself.
    Note,
}

/// What a location is to its finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Where the problem shows.
    Primary,
    /// Another rank's (or the same rank's) call involved.
    Secondary,
}

/// A place in the source, on one rank.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Location {
    /// Source file as the user knows it (relative to the working directory
    /// when below it).
    pub file: String,
    /// 1-based line (0 when unknown).
    pub line: u32,
    /// 1-based column (0 when unknown).
    pub column: u32,
    /// The rank whose call or instruction this is.
    pub rank: i32,
    /// The MPI call (or function) at the location, when there is one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub call: Option<String>,
    /// The function of the program the location is in, when known (from
    /// the site table, or from the executable's debug information or
    /// symbol table).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub function: Option<String>,
    /// Primary or secondary.
    pub role: Role,
    /// What happened here, in a few words.
    pub label: String,
}

/// One problem found. Its stable code (`MBH0002`) is its kind's
/// ([`FindingKind::code`]), written beside the kind in JSON
/// (`FindingJson`) and ignored when read back.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Finding {
    /// What kind of problem.
    pub kind: FindingKind,
    /// Error, warning or note.
    pub severity: Severity,
    /// One line: what happened.
    pub message: String,
    /// The interleaving (1-based) that first showed it.
    pub interleaving: u32,
    /// The ranks involved.
    pub ranks: Vec<i32>,
    /// The source locations, primary first.
    pub locations: Vec<Location>,
    /// Context: the wildcard decisions that lead here, the program's own
    /// message.
    #[serde(default)]
    pub notes: Vec<String>,
    /// What usually fixes it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub help: Option<String>,
    /// The command that replays the interleaving.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub replay: Option<String>,
    /// Which of `notes` says the run confirmed the problem, when one does
    /// (a collective divergence the ranks were seen to make): a later run's
    /// confirmation of a finding first only warned about is taken from it.
    /// Not part of the JSON: the note itself is.
    #[serde(skip)]
    pub confirmation: Option<usize>,
}

/// A [`Finding`] as JSON writes it: the fields in order, the kind's code
/// second (DESIGN.md's contract).
#[derive(Serialize)]
struct FindingJson<'a> {
    kind: FindingKind,
    code: &'static str,
    severity: Severity,
    message: &'a str,
    interleaving: u32,
    ranks: &'a [i32],
    locations: &'a [Location],
    notes: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a str>,
}

impl Serialize for Finding {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        FindingJson {
            kind: self.kind,
            code: self.kind.code(),
            severity: self.severity,
            message: &self.message,
            interleaving: self.interleaving,
            ranks: &self.ranks,
            locations: &self.locations,
            notes: &self.notes,
            help: self.help.as_deref(),
            replay: self.replay.as_deref(),
        }
        .serialize(serializer)
    }
}

impl Finding {
    /// A finding of `kind` with its code filled in.
    pub fn new(kind: FindingKind, severity: Severity, message: impl Into<String>) -> Self {
        Finding {
            kind,
            severity,
            message: message.into(),
            interleaving: 1,
            ranks: Vec::new(),
            locations: Vec::new(),
            notes: Vec::new(),
            help: None,
            replay: None,
            confirmation: None,
        }
    }

    /// The primary location, if any.
    pub fn primary(&self) -> Option<&Location> {
        self.locations.iter().find(|l| l.role == Role::Primary)
    }

    /// The key that makes two findings "the same" across interleavings:
    /// kind and the sites (file, line) involved.
    pub fn dedup_key(&self) -> (FindingKind, Vec<(String, u32)>) {
        let mut sites: Vec<_> = self
            .locations
            .iter()
            .map(|l| (l.file.clone(), l.line))
            .collect();
        sites.sort();
        sites.dedup();
        (self.kind, sites)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_serialise_to_design_names_and_codes_are_unique() {
        let mut codes = std::collections::HashSet::new();
        for &kind in FindingKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert!(codes.insert(kind.code()));
        }
        assert_eq!(FindingKind::ALL.len(), 23);
    }
}
