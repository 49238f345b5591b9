//! The calls and messages of one interleaving as the HTML report's
//! space-time diagram draws them: built by `mbh-verdict` from a run's
//! traces, carried by the session, rendered by `mbh-diagnostics`. Data
//! only; what the boxes and arrows look like is the renderer's.

/// The calls and messages of one interleaving, for the space-time diagram
/// of a finding. Built by the caller from the rank traces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeline {
    /// Per rank (index = rank), its MPI calls in program order.
    pub ranks: Vec<Vec<TimelineCall>>,
    /// Messages between calls.
    pub messages: Vec<TimelineMessage>,
}

/// One MPI call on one rank.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineCall {
    /// The call (`MPI_Recv`); shown without its `MPI_` prefix.
    pub label: String,
    /// Its source line (0 when unknown).
    pub line: u32,
    /// The rank was blocked in this call when the run ended.
    pub blocked: bool,
    /// A wildcard receive (or probe) whose match mbhybrid forced in this
    /// interleaving.
    pub forced: bool,
}

/// A call of a [`Timeline`]: `call` indexes `ranks[rank]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallRef {
    /// The rank.
    pub rank: usize,
    /// The index of the call in the rank's list.
    pub call: usize,
}

/// A message from a send to a receive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimelineMessage {
    /// The sending call.
    pub from: CallRef,
    /// The receiving call; for [`MessageKind::Unreceived`] only `to.rank`
    /// (the destination) counts.
    pub to: CallRef,
    /// What became of it.
    pub kind: MessageKind,
}

/// What became of a message in the interleaving.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MessageKind {
    /// `to` received it.
    #[default]
    Matched,
    /// It was sent to `to.rank` and never received.
    Unreceived,
    /// It could have matched the wildcard receive `to` (which took another
    /// message): the race mbhybrid explores.
    Potential,
}
