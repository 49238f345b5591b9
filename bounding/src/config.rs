//! The bounds of an exploration: typed, documented, and all in one place
//! ([`ExploreConfig`]).

use mbh_trace::rank_trace::WildcardEvent;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// `MPI_Pcontrol` level opening a loop chosen for abstraction.
pub const LOOP_ABSTRACTED: u32 = mbh_trace::static_report::PCONTROL_ABSTRACT_ENTER as u32;
/// `MPI_Pcontrol` level opening any other loop that contains wildcard sites.
pub const LOOP_OTHER: u32 = mbh_trace::static_report::PCONTROL_LOOP_ENTER as u32;

/// Loop-iteration abstraction (seed 000 §5.3.5.1): which loops keep the
/// outcome of their first run instead of being explored.
///
/// A choice point inside an abstracted loop is never forced to another
/// sender, in any run: its outcome is whatever the MPI library picks (in
/// the first run, and in every later run where it is not part of a forced
/// prefix). Every iteration is abstracted, the first one included, as in
/// DAMPI ("pursues only the matches it discovers during `SELF_RUN`").
///
/// It is a heuristic that can hide bugs (a message race inside a loop whose
/// outcome decides a later match), hence the default [`LoopAbstraction::Off`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum LoopAbstraction {
    /// Explore every choice point (`--loop-abstraction off`).
    #[default]
    Off,
    /// Abstract choice points inside loops opened by `MPI_Pcontrol(7301, id)`
    /// (chosen by static analysis or written by hand).
    Auto,
    /// Also abstract those inside loops opened by `MPI_Pcontrol(7304, id)`:
    /// every loop that contains a wildcard site.
    All,
}

impl LoopAbstraction {
    /// Whether `event` is inside a loop this setting abstracts.
    pub fn abstracts(self, event: &WildcardEvent) -> bool {
        match self {
            LoopAbstraction::Off => false,
            LoopAbstraction::Auto => event.loops.iter().any(|m| m.level == LOOP_ABSTRACTED),
            LoopAbstraction::All => event
                .loops
                .iter()
                .any(|m| m.level == LOOP_ABSTRACTED || m.level == LOOP_OTHER),
        }
    }

    /// The command-line spelling: `off`, `auto` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoopAbstraction::Off => "off",
            LoopAbstraction::Auto => "auto",
            LoopAbstraction::All => "all",
        }
    }
}

impl fmt::Display for LoopAbstraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoopAbstraction {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(LoopAbstraction::Off),
            "auto" => Ok(LoopAbstraction::Auto),
            "all" => Ok(LoopAbstraction::All),
            _ => Err(format!(
                "unknown loop abstraction `{s}` (expected `off`, `auto` or `all`)"
            )),
        }
    }
}

/// Everything that bounds an exploration.
///
/// `Default` is the unbounded search of seed 000 Fig 5.23: no loop
/// abstraction, no mixing bound, no limit on runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExploreConfig {
    /// Loop-iteration abstraction.
    pub loop_abstraction: LoopAbstraction,
    /// Bounded mixing (seed 000 §5.3.5.2, Fig 5.31), `--mixing-bound k`:
    /// after a run forces an alternative at a choice point, only the next
    /// `k` choice points above it (by clock; abstracted ones are not
    /// counted) are explored in the runs below it, and a choice made at the
    /// `j`-th of those leaves `k - j` for the runs below that one. Past the
    /// window the MPI library decides. `None`: unbounded.
    ///
    /// A choice point inside a zone (`MPI_Pcontrol(7303, zone, k)`) uses the
    /// zone's `k` instead (`k < 0`: unbounded); a window inherited from a
    /// choice made further up is never widened by a zone.
    pub mixing_bound: Option<u32>,
    /// The sites of `MPI_Waitany`, `MPI_Testany` and the `some` forms
    /// whose completion order the static analysis showed to decide
    /// nothing ([`CompletionOrder::Irrelevant`]), each with the id of the
    /// innermost loop around it. Which request such a call returns first
    /// is no choice point, under every setting, when the run shows that
    /// loop completed every request the call had active
    /// ([`WildcardEvent::settled_in_loop`]); skipping it leaves the search
    /// complete (which message each request takes does not depend on the
    /// order it is returned in).
    ///
    /// [`CompletionOrder::Irrelevant`]: mbh_trace::static_report::CompletionOrder::Irrelevant
    pub orderless_sites: BTreeMap<u32, u32>,
}

impl ExploreConfig {
    /// The unbounded configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`ExploreConfig::loop_abstraction`].
    pub fn loop_abstraction(mut self, value: LoopAbstraction) -> Self {
        self.loop_abstraction = value;
        self
    }

    /// Sets [`ExploreConfig::mixing_bound`].
    pub fn mixing_bound(mut self, k: Option<u32>) -> Self {
        self.mixing_bound = k;
        self
    }

    /// Sets [`ExploreConfig::orderless_sites`].
    pub fn orderless_sites(mut self, sites: BTreeMap<u32, u32>) -> Self {
        self.orderless_sites = sites;
        self
    }

    /// Whether `event` is an index choice at a site whose order decides
    /// nothing ([`ExploreConfig::orderless_sites`]).
    pub fn is_orderless(&self, event: &WildcardEvent) -> bool {
        let innermost = event.loops.last().map(|m| m.loop_id as u32);
        event.is_index_choice()
            && event.settled_in_loop
            && innermost.is_some()
            && self.orderless_sites.get(&event.site).copied() == innermost
    }

    /// The mixing bound that applies to a choice made at `event`: its
    /// zone's `k` when it is in a zone, else the global bound.
    pub fn mixing_bound_for(&self, event: &WildcardEvent) -> Option<u32> {
        match event.zone {
            Some((_, k)) if k < 0 => None,
            Some((_, k)) => Some(k as u32),
            None => self.mixing_bound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_abstraction_parses_and_prints() {
        for value in [
            LoopAbstraction::Off,
            LoopAbstraction::Auto,
            LoopAbstraction::All,
        ] {
            assert_eq!(value.to_string().parse::<LoopAbstraction>(), Ok(value));
        }
        assert!("some".parse::<LoopAbstraction>().is_err());
        assert_eq!(LoopAbstraction::default(), LoopAbstraction::Off);
    }
}
