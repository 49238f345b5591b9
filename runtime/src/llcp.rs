//! Lazy Lamport and lazy vector clocks (LLCP and LVCP, seed 000 §5.1-5.2):
//! the matches-before state machine of one rank, independent of MPI.
//!
//! # Terms
//!
//! * An **event** is a wildcard receive or probe (source `MPI_ANY_SOURCE`),
//!   numbered per rank in issue order (0, 1, 2, ...). Events are what the
//!   search explores. Choices among requests (`MPI_Waitany`, ...; seed 001
//!   §4, `choice.rs`) take numbers in the same sequence and a final clock
//!   from [`Llcp::choose`]; they are never pending and never matched here.
//! * The **clock** is one counter (Lamport, LLCP) or one counter per rank
//!   (vector, LVCP). Every comparison uses the rank's **own component**
//!   ([`Llcp::now`]): the single counter for LLCP, `VC[i]` for LVCP on rank
//!   `i`. Merges are element-wise maxima.
//! * **Pending** events are nonblocking wildcard receives that may not have
//!   matched yet (rule R2): they have a start clock and no final clock.
//! * **Done** events have their final clock, assigned in increasing order,
//!   so the done list is sorted by final clock.
//!
//! # Rules
//!
//! * R1: the clock starts at 0 ([`Llcp::new`]).
//! * R2: a nonblocking wildcard receive becomes pending with the current
//!   clock as its start ([`Llcp::post`]).
//! * R3: sends carry [`Llcp::clock`].
//! * R4: a receive (or probe) completing first completes, in issue order,
//!   every pending event that must have matched before it (`CompleteNow`,
//!   Figs 5.17/5.21: same communicator, issued before, source and tag
//!   accepting the envelope it matched; transitively through events whose
//!   own envelope is learned from the resolver, which is how `MPI_ANY_TAG`
//!   receives are handled, Fig 5.22), each taking the clock and advancing
//!   it; then, if it is itself an event, takes the clock and advances it
//!   ([`Llcp::complete`]); then the message it received is checked for
//!   late-ness and its clock merged ([`Llcp::incoming`], Figs 5.19/5.20).
//! * R5: collectives merge the maximum of the clocks of the ranks whose data
//!   reaches this one ([`Llcp::merge`]).
//!
//! A message `m` received by `r'` is a **potential match** of a done event
//! `r` (Theorem 5.3, Definition 5.1) when `r` was issued before `r'` on the
//! same communicator with a tag accepting `m`'s, `r` matched another sender,
//! and `m.clock <= r.final < r'.clock` (own components). A synchronous-send
//! acknowledgement sent before an event's final clock was known marks the
//! event (`MatchedWithSsend`, §5.2.1): messages with a clock above its start
//! are then not counted for it.

/// A rank in `MPI_COMM_WORLD`.
pub type Rank = i32;

/// What a receive was posted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    /// Communicator handle bits.
    pub comm: u64,
    /// Source (world rank); `None` for `MPI_ANY_SOURCE`.
    pub source: Option<Rank>,
    /// Tag; `None` for `MPI_ANY_TAG`.
    pub tag: Option<i32>,
}

impl Pattern {
    /// Whether a receive posted with this pattern accepts a message with
    /// `envelope` on `comm`.
    pub fn accepts(&self, comm: u64, envelope: Envelope) -> bool {
        self.comm == comm
            && self.source.is_none_or(|s| s == envelope.source)
            && self.tag.is_none_or(|t| t == envelope.tag)
    }
}

/// Source (world rank) and tag of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// Sender, world rank.
    pub source: Rank,
    /// Tag.
    pub tag: i32,
}

/// A nonblocking wildcard receive that has a start clock only (rule R2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEvent {
    /// Per-rank event number.
    pub event: u32,
    /// Per-rank issue order of receives and probes.
    pub seq: u64,
    /// What it was posted for (a forced source in a guided run).
    pub pattern: Pattern,
    /// Clock when it was issued.
    pub start: u64,
    /// Opaque id of the issuing call's record.
    pub record: u64,
    /// Opaque id the caller's resolver uses (the request slot).
    pub token: u32,
    /// Its synchronous sender was acknowledged before its final clock.
    pub ssend: bool,
}

/// Potential senders remembered per event to avoid repeated reports.
const REPORTED: usize = 4;

/// A wildcard event with its final clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoneEvent {
    /// Per-rank event number.
    pub event: u32,
    /// Per-rank issue order.
    pub seq: u64,
    /// What it was posted for.
    pub pattern: Pattern,
    /// Clock when issued (own component).
    pub start: u64,
    /// Final clock (own component).
    pub end: u64,
    /// Its place in a Lamport order ([`Llcp::order`] when it completed).
    pub order: u64,
    /// The message it matched, when known.
    pub matched: Option<Envelope>,
    /// Opaque id of the issuing call's record.
    pub record: u64,
    /// See [`PendingEvent::ssend`].
    pub ssend: bool,
    reported: [Rank; REPORTED],
    reported_len: u8,
}

impl DoneEvent {
    /// Remembers `sender` as reported; false when it was already.
    fn first_report(&mut self, sender: Rank) -> bool {
        let len = usize::from(self.reported_len);
        if self.reported[..len].contains(&sender) {
            return false;
        }
        if len < REPORTED {
            self.reported[len] = sender;
            self.reported_len += 1;
        }
        true
    }
}

/// A blocking wildcard receive or probe, as an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockingEvent {
    /// Per-rank event number.
    pub event: u32,
    /// What it was posted for.
    pub pattern: Pattern,
    /// Clock when issued.
    pub start: u64,
    /// Opaque id of its record.
    pub record: u64,
}

/// Which receive completed, for [`Llcp::complete`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receive {
    /// A blocking receive, `Sendrecv` or probe; an event when wildcard.
    Blocking(Option<BlockingEvent>),
    /// A nonblocking receive at its completion; the event number when it
    /// was a wildcard receive (pending, or completed earlier by
    /// `CompleteNow`).
    Nonblocking(Option<u32>),
}

/// What [`Llcp`] reports as it runs.
pub trait Sink {
    /// `event` got its final clock.
    fn final_clock(&mut self, event: &DoneEvent);
    /// `sender`'s message, carrying clock `message_clock` (own component)
    /// and received by the call recorded as `receiver`, could have matched
    /// `event`.
    fn potential(&mut self, event: u32, sender: Rank, message_clock: u64, receiver: u64);
}

/// The clocks and events of one rank.
#[derive(Debug, Clone)]
pub struct Llcp {
    clock: Vec<u64>,
    me: usize,
    pending: Vec<PendingEvent>,
    done: Vec<DoneEvent>,
    next_event: u32,
    /// The guidance's `last_guided_clock`, when the run is guided.
    last_guided: Option<u64>,
    // Scratch for `complete`, kept to avoid allocating per call.
    chosen: Vec<bool>,
    resolved: Vec<Option<Envelope>>,
    spare: Vec<PendingEvent>,
}

impl Llcp {
    /// Rule R1. `width` is 1 for Lamport clocks, the world size for vector
    /// clocks; `me` is the own component (0, or the world rank).
    /// `last_guided` is the guidance's last guided clock in a replay.
    pub fn new(width: usize, me: usize, last_guided: Option<u64>) -> Self {
        let width = width.max(1);
        Llcp {
            clock: vec![0; width],
            me: me.min(width - 1),
            pending: Vec::with_capacity(64),
            done: Vec::with_capacity(1024),
            next_event: 0,
            last_guided,
            chosen: Vec::with_capacity(64),
            resolved: Vec::with_capacity(64),
            spare: Vec::with_capacity(64),
        }
    }

    /// The whole clock (what messages carry).
    pub fn clock(&self) -> &[u64] {
        &self.clock
    }

    /// The own component.
    pub fn now(&self) -> u64 {
        self.clock[self.me]
    }

    /// This rank's place in a Lamport order of events: the clock itself for
    /// Lamport clocks, the sum of the components for vector clocks. An
    /// event causally after another has a larger one (every step that
    /// carries causality merges the clocks and a wildcard event ticks its
    /// own component, rule R4), which the explorer's order of choice points
    /// needs (`bounding/src/explore.rs`); the own component of a vector
    /// clock does not give that across ranks (a receive after an
    /// `MPI_Bcast` from the flipped rank keeps own component 0, and would
    /// be taken to come before the flip).
    pub fn order(&self) -> u64 {
        self.clock
            .iter()
            .fold(0u64, |sum, c| sum.saturating_add(*c))
    }

    /// Element-wise maximum with `other` (collectives, acknowledgements;
    /// extra or missing components are ignored).
    pub fn merge(&mut self, other: &[u64]) {
        for (mine, theirs) in self.clock.iter_mut().zip(other) {
            *mine = (*mine).max(*theirs);
        }
    }

    fn tick(&mut self) -> u64 {
        let at = self.clock[self.me];
        self.clock[self.me] = at + 1;
        at
    }

    /// Whether the run is guided: the guidance names the events to force,
    /// and each is forced whenever it comes.
    ///
    /// Fig 5.15 (lines 1-3) stops guiding for good once the clock passes
    /// the last guided clock, since its decision database holds every
    /// event of the run replayed. Ours holds only the forced events, and a
    /// forced event can come at a later clock than it had in the run that
    /// chose it: a flip earlier in the rank's past moves its clocks (under
    /// `--buffering zero`, for one, synchronous sends merge the receivers'
    /// clocks back into the senders'). Stopping there would leave it free
    /// and the replay would diverge.
    pub fn guiding(&self) -> bool {
        self.last_guided.is_some()
    }

    /// The number the next event will get.
    pub fn peek_event(&self) -> u32 {
        self.next_event
    }

    /// Takes the next event number.
    pub fn next_event(&mut self) -> u32 {
        let event = self.next_event;
        self.next_event += 1;
        event
    }

    /// A choice among requests (`MPI_Waitany`, ...; seed 001 §4, module
    /// `choice`) returned: like a wildcard event at R4 it takes the clock
    /// as its final clock and advances it, so what is causally after the
    /// call carries a larger clock. Returns the final clock.
    pub fn choose(&mut self) -> u64 {
        self.tick()
    }

    /// Rule R2: a nonblocking wildcard receive was posted. Returns its
    /// start clock.
    pub fn post(&mut self, event: u32, seq: u64, pattern: Pattern, record: u64, token: u32) -> u64 {
        let start = self.now();
        self.pending.push(PendingEvent {
            event,
            seq,
            pattern,
            start,
            record,
            token,
            ssend: false,
        });
        start
    }

    /// The pending event `event`, if it is pending.
    pub fn pending(&self, event: u32) -> Option<&PendingEvent> {
        self.pending.iter().find(|p| p.event == event)
    }

    /// Pending events, in issue order.
    pub fn pending_events(&self) -> &[PendingEvent] {
        &self.pending
    }

    /// Done events, by final clock.
    pub fn done_events(&self) -> &[DoneEvent] {
        &self.done
    }

    /// Marks pending `event` as acknowledged to its synchronous sender
    /// before its final clock (`MatchedWithSsend`, §5.2.1). False when it
    /// is not pending.
    pub fn mark_ssend(&mut self, event: u32) -> bool {
        match self.pending.iter_mut().find(|p| p.event == event) {
            Some(p) => {
                p.ssend = true;
                true
            }
            None => false,
        }
    }

    /// `MatchedWithSsend` for an acknowledgement sent before the final
    /// clocks are known: marks every pending event issued up to `seq` on
    /// `comm` (the receive acknowledged and those that may have matched
    /// before it). True when one was marked.
    pub fn mark_ssend_upto(&mut self, seq: u64, comm: u64) -> bool {
        let mut marked = false;
        for p in self
            .pending
            .iter_mut()
            .filter(|p| p.seq <= seq && p.pattern.comm == comm)
        {
            p.ssend = true;
            marked = true;
        }
        marked
    }

    /// Forgets pending `event` without a final clock (its request was
    /// cancelled or lost).
    pub fn drop_pending(&mut self, event: u32) {
        self.pending.retain(|p| p.event != event);
    }

    /// Rule R4 for a receive or probe, issued `seq`-th, that matched
    /// `envelope` on `comm`: `CompleteNow` (for a probe only the first
    /// pending event, Fig 5.21), then the receive's own clock. `resolve`
    /// gives the envelope a pending event matched (the runtime waits for its
    /// request; `None` when unknown): it carries the matches-before order
    /// through `MPI_ANY_TAG` receives (Fig 5.22) and names the sender in the
    /// final-clock report.
    ///
    /// Returns the clock of the receive (`posted_clock` of Fig 5.19): its
    /// final clock when it is an event, the current clock otherwise.
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &mut self,
        seq: u64,
        comm: u64,
        envelope: Envelope,
        receive: Receive,
        probe: bool,
        mut resolve: impl FnMut(&PendingEvent) -> Option<Envelope>,
        sink: &mut impl Sink,
    ) -> u64 {
        self.complete_now(seq, comm, envelope, probe, &mut resolve, sink);
        match receive {
            Receive::Blocking(None) | Receive::Nonblocking(None) => self.now(),
            Receive::Blocking(Some(b)) => {
                let order = self.order();
                let end = self.tick();
                let done = DoneEvent {
                    event: b.event,
                    seq,
                    pattern: b.pattern,
                    start: b.start,
                    end,
                    order,
                    matched: Some(envelope),
                    record: b.record,
                    ssend: false,
                    reported: [0; REPORTED],
                    reported_len: 0,
                };
                sink.final_clock(&done);
                self.done.push(done);
                end
            }
            Receive::Nonblocking(Some(event)) => {
                if let Some(at) = self.pending.iter().position(|p| p.event == event) {
                    let p = self.pending.remove(at);
                    let order = self.order();
                    let end = self.tick();
                    let done = Self::finish(p, (end, order), Some(envelope));
                    sink.final_clock(&done);
                    self.done.push(done);
                    return end;
                }
                match self.done.iter_mut().rev().find(|d| d.event == event) {
                    Some(d) => {
                        d.matched.get_or_insert(envelope);
                        d.end
                    }
                    None => self.now(),
                }
            }
        }
    }

    /// `at`: the final clock and order.
    fn finish(p: PendingEvent, at: (u64, u64), matched: Option<Envelope>) -> DoneEvent {
        DoneEvent {
            event: p.event,
            seq: p.seq,
            pattern: p.pattern,
            start: p.start,
            end: at.0,
            order: at.1,
            matched,
            record: p.record,
            ssend: p.ssend,
            reported: [0; REPORTED],
            reported_len: 0,
        }
    }

    /// `CompleteNow` (Figs 5.17, 5.21, with Fig 5.22's transitive step).
    fn complete_now(
        &mut self,
        seq: u64,
        comm: u64,
        envelope: Envelope,
        probe: bool,
        resolve: &mut impl FnMut(&PendingEvent) -> Option<Envelope>,
        sink: &mut impl Sink,
    ) {
        let n = self.pending.len();
        if n == 0 {
            return;
        }
        self.chosen.clear();
        self.chosen.resize(n, false);
        self.resolved.clear();
        self.resolved.resize(n, None);
        // Direct: issued before the receive and accepting what it matched.
        let direct = |p: &PendingEvent| p.seq < seq && p.pattern.accepts(comm, envelope);
        if probe {
            match self.pending.iter().position(direct) {
                Some(first) => self.chosen[first] = true,
                None => return,
            }
        } else {
            for (chosen, p) in self.chosen.iter_mut().zip(&self.pending) {
                *chosen = direct(p);
            }
            // Transitive: an event that matched before the receive orders
            // the earlier events that accept what it matched. Pending is in
            // issue order, so one backward sweep reaches the fixpoint.
            for i in (0..n).rev() {
                if !self.chosen[i] {
                    continue;
                }
                let Some(env) = resolve(&self.pending[i]) else {
                    continue;
                };
                self.resolved[i] = Some(env);
                let (later_seq, later_comm) = (self.pending[i].seq, self.pending[i].pattern.comm);
                for j in 0..i {
                    let p = &self.pending[j];
                    if !self.chosen[j] && p.seq < later_seq && p.pattern.accepts(later_comm, env) {
                        self.chosen[j] = true;
                    }
                }
            }
        }
        if probe {
            // The probe's one event still gets its sender when it can.
            if let Some(i) = self.chosen.iter().position(|&c| c) {
                self.resolved[i] = resolve(&self.pending[i]);
            }
        }
        if !self.chosen.contains(&true) {
            return;
        }
        // Assign in issue order (nonovertaking orders them that way).
        let mut old = std::mem::replace(&mut self.pending, std::mem::take(&mut self.spare));
        for (i, p) in old.drain(..).enumerate() {
            if self.chosen[i] {
                let order = self.order();
                let end = self.tick();
                let done = Self::finish(p, (end, order), self.resolved[i]);
                sink.final_clock(&done);
                self.done.push(done);
            } else {
                self.pending.push(p);
            }
        }
        self.spare = old;
    }

    /// `ProcessIncomingMessage` (Fig 5.19) and `FindPotentialMatches`
    /// (Fig 5.20): the message with `envelope` and `clock`, received on
    /// `comm` by the receive issued `seq`-th whose clock is `posted` (from
    /// [`Llcp::complete`]) and whose record is `receiver`. Then merges the
    /// message's clock.
    #[allow(clippy::too_many_arguments)]
    pub fn incoming(
        &mut self,
        seq: u64,
        comm: u64,
        envelope: Envelope,
        clock: &[u64],
        posted: u64,
        receiver: u64,
        sink: &mut impl Sink,
    ) {
        let message = clock.get(self.me).copied().unwrap_or(0);
        // Pending receives issued before that could have taken the message
        // but were posted for another source (forced in a guided run).
        let tag_ok = |p: &Pattern| p.comm == comm && p.tag.is_none_or(|t| t == envelope.tag);
        if let Some(p) = self.pending.iter().find(|p| {
            p.seq < seq && tag_ok(&p.pattern) && p.pattern.source != Some(envelope.source)
        }) {
            sink.potential(p.event, envelope.source, message, receiver);
        }
        if self.now() > message {
            self.find_potential_matches(seq, comm, envelope, message, posted, receiver, sink);
        }
        self.merge(clock);
    }

    #[allow(clippy::too_many_arguments)]
    fn find_potential_matches(
        &mut self,
        seq: u64,
        comm: u64,
        envelope: Envelope,
        message: u64,
        posted: u64,
        receiver: u64,
        sink: &mut impl Sink,
    ) {
        let from = self.done.partition_point(|d| d.end < message);
        // Fig 5.15 reports no potential matches for events at or below the
        // last guided clock: in the seed's one total order of choice points
        // they all belong to the forced prefix. They do not: an event of
        // another rank with the same (or a lower) clock that the guidance
        // does not force is concurrent with the flipped choice point, free
        // in this run, and its alternatives must be explored under the flip
        // (two ranks' first wildcard receives, for one, are both at clock 0).
        // Only a forced event (posted for one source) stays silent; the
        // explorer decides which free events are open.
        let last_guided = self.last_guided;
        for d in &mut self.done[from..] {
            if d.end >= posted {
                break;
            }
            let eligible = d.seq < seq
                && d.pattern.comm == comm
                && d.pattern.tag.is_none_or(|t| t == envelope.tag)
                && (d.pattern.source.is_none() || last_guided.is_none_or(|last| d.order > last))
                && d.matched.is_none_or(|m| m.source != envelope.source)
                && !(d.ssend && message > d.start);
            if eligible && d.first_report(envelope.source) {
                sink.potential(d.event, envelope.source, message, receiver);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const WORLD: u64 = 0x4400_0000;

    /// Records what the machine reports.
    #[derive(Default)]
    struct Log {
        /// event -> (start, end, matched source)
        clocks: BTreeMap<u32, (u64, u64, Option<Rank>)>,
        /// (event, sender)
        potential: Vec<(u32, Rank)>,
    }

    impl Sink for Log {
        fn final_clock(&mut self, e: &DoneEvent) {
            let old = self
                .clocks
                .insert(e.event, (e.start, e.end, e.matched.map(|m| m.source)));
            assert!(old.is_none(), "event {} got two final clocks", e.event);
        }
        fn potential(&mut self, event: u32, sender: Rank, _clock: u64, _receiver: u64) {
            self.potential.push((event, sender));
        }
    }

    impl Log {
        fn finals(&self) -> Vec<u64> {
            self.clocks.values().map(|c| c.1).collect()
        }
    }

    fn any(tag: Option<i32>) -> Pattern {
        Pattern {
            comm: WORLD,
            source: None,
            tag,
        }
    }

    fn from(source: Rank, tag: i32) -> Envelope {
        Envelope { source, tag }
    }

    /// What a pending event's request turns out to have matched (`None`
    /// when resolving is off, as if `MPI_Request_get_status` were not used).
    fn resolver(outcome: &BTreeMap<u32, Envelope>, on: bool, p: &PendingEvent) -> Option<Envelope> {
        if on {
            outcome.get(&p.event).copied()
        } else {
            None
        }
    }

    /// One rank's process: a machine, a log, an issue counter, and what
    /// each pending request will turn out to have matched.
    struct Rank1 {
        m: Llcp,
        log: Log,
        seq: u64,
        /// event -> what its request matched (the resolver's answer)
        outcome: BTreeMap<u32, Envelope>,
        /// pending event -> its issue seq
        seq_of: BTreeMap<u32, u64>,
        resolve: bool,
    }

    impl Rank1 {
        fn new(width: usize, me: usize) -> Self {
            Rank1 {
                m: Llcp::new(width, me, None),
                log: Log::default(),
                seq: 0,
                outcome: BTreeMap::new(),
                seq_of: BTreeMap::new(),
                resolve: true,
            }
        }

        fn next_seq(&mut self) -> u64 {
            self.seq += 1;
            self.seq
        }

        /// `Irecv(*, tag)` that will match `outcome`; returns the event.
        fn irecv_any(&mut self, tag: Option<i32>, outcome: Envelope) -> u32 {
            let seq = self.next_seq();
            let event = self.m.next_event();
            self.m.post(event, seq, any(tag), u64::from(event), event);
            self.outcome.insert(event, outcome);
            self.seq_of.insert(event, seq);
            event
        }

        /// A blocking receive (wildcard or from a source) that got `env`
        /// with message clock `clock`.
        fn recv(&mut self, source: Option<Rank>, tag: Option<i32>, env: Envelope, clock: &[u64]) {
            self.recv_or_probe(source, tag, env, Some(clock))
        }

        fn probe(&mut self, source: Option<Rank>, tag: Option<i32>, env: Envelope) {
            self.recv_or_probe(source, tag, env, None)
        }

        fn recv_or_probe(
            &mut self,
            source: Option<Rank>,
            tag: Option<i32>,
            env: Envelope,
            clock: Option<&[u64]>,
        ) {
            let seq = self.next_seq();
            let event = source.is_none().then(|| BlockingEvent {
                event: self.m.next_event(),
                pattern: Pattern {
                    comm: WORLD,
                    source,
                    tag,
                },
                start: self.m.now(),
                record: 1000 + seq,
            });
            let (outcome, on) = (&self.outcome, self.resolve);
            let posted = self.m.complete(
                seq,
                WORLD,
                env,
                Receive::Blocking(event),
                clock.is_none(),
                |p| resolver(outcome, on, p),
                &mut self.log,
            );
            if let Some(clock) = clock {
                self.m
                    .incoming(seq, WORLD, env, clock, posted, seq, &mut self.log);
            }
        }

        /// `Wait` on the request of `event`, whose message has `clock`.
        fn wait(&mut self, event: u32, clock: &[u64]) {
            let seq = self.seq_of[&event];
            let env = self.outcome[&event];
            let (outcome, on) = (&self.outcome, self.resolve);
            let posted = self.m.complete(
                seq,
                WORLD,
                env,
                Receive::Nonblocking(Some(event)),
                false,
                |p| resolver(outcome, on, p),
                &mut self.log,
            );
            self.m
                .incoming(seq, WORLD, env, clock, posted, 2000 + seq, &mut self.log);
        }
    }

    impl Rank1 {
        /// `MPI_Mprobe(source, *)` that took `env`, as `engine/matched.rs`
        /// makes it: R4 as a receive (not a probe). Returns its issue seq
        /// and clock, for [`Rank1::mrecv`].
        fn mprobe(&mut self, source: Option<Rank>, env: Envelope) -> (u64, u64) {
            let seq = self.next_seq();
            let event = source.is_none().then(|| BlockingEvent {
                event: self.m.next_event(),
                pattern: Pattern {
                    comm: WORLD,
                    source,
                    tag: None,
                },
                start: self.m.now(),
                record: 1000 + seq,
            });
            let (outcome, on) = (&self.outcome, self.resolve);
            let clock = self.m.complete(
                seq,
                WORLD,
                env,
                Receive::Blocking(event),
                false,
                |p| resolver(outcome, on, p),
                &mut self.log,
            );
            (seq, clock)
        }

        /// `MPI_Mrecv` of the message a matched probe (`probed`) took: its
        /// clock arrives now and is checked as of the probe.
        fn mrecv(&mut self, probed: (u64, u64), env: Envelope, clock: &[u64]) {
            let (seq, posted) = probed;
            self.m
                .incoming(seq, WORLD, env, clock, posted, 3000 + seq, &mut self.log);
        }
    }

    /// S9 with matched probes: the second sender's message, received after
    /// the first probe's final clock, is a potential match of it; neither
    /// probe is reported for its own message.
    #[test]
    fn matched_probes_find_the_late_sender_at_the_receive() {
        let mut p0 = Rank1::new(1, 0);
        let first = p0.mprobe(None, from(1, 0));
        p0.mrecv(first, from(1, 0), &[0]);
        assert!(p0.log.potential.is_empty());
        let second = p0.mprobe(None, from(2, 0));
        p0.mrecv(second, from(2, 0), &[0]);
        assert_eq!(p0.log.finals(), vec![0, 1]);
        assert_eq!(p0.log.potential, vec![(0, 2)]);
    }

    /// A matched probe takes the message, so every pending wildcard
    /// receive issued before it that accepts the message matched before it
    /// (a plain probe completes only the first, Fig 5.21).
    #[test]
    fn a_matched_probe_completes_every_earlier_accepting_receive() {
        let mut p0 = Rank1::new(1, 0);
        p0.irecv_any(Some(0), from(1, 0));
        p0.irecv_any(Some(0), from(1, 0));
        p0.mprobe(Some(1), from(1, 0));
        assert_eq!(p0.log.finals(), vec![0, 1], "both receives got clocks");
        assert!(p0.m.pending_events().is_empty());
        let mut probe = Rank1::new(1, 0);
        probe.irecv_any(Some(0), from(1, 0));
        probe.irecv_any(Some(0), from(1, 0));
        probe.probe(Some(1), Some(0), from(1, 0));
        assert_eq!(probe.m.pending_events().len(), 1, "a probe completes one");
    }

    /// Fig 5.1 / S4: P1 `Recv(*); Recv(*)`, P0's message first, P2's late.
    #[test]
    fn fig_5_1_late_message() {
        let mut p1 = Rank1::new(1, 0);
        p1.recv(None, Some(0), from(0, 0), &[0]);
        p1.recv(None, Some(0), from(2, 0), &[0]);
        assert_eq!(p1.log.finals(), vec![0, 1]);
        assert_eq!(p1.log.potential, vec![(0, 2)]);
        assert_eq!(p1.m.now(), 2);
    }

    /// The other order of Fig 5.1: still found, symmetrically.
    #[test]
    fn fig_5_1_other_order() {
        let mut p1 = Rank1::new(1, 0);
        p1.recv(None, Some(0), from(2, 0), &[0]);
        p1.recv(None, Some(0), from(0, 0), &[0]);
        assert_eq!(p1.log.potential, vec![(0, 0)]);
    }

    /// Fig 5.2 / S1, the crooked barrier: P1 `Irecv(*); Barrier; Recv(*);
    /// Wait` with P0's message in the `Irecv` and P2's (sent after the
    /// barrier, clock 0) in the `Recv`.
    #[test]
    fn fig_5_2_crooked_barrier() {
        let mut p1 = Rank1::new(1, 0);
        let e0 = p1.irecv_any(Some(0), from(0, 0));
        p1.m.merge(&[0]); // barrier: max of all clocks, 0
        p1.recv(None, Some(0), from(2, 0), &[0]);
        assert_eq!(
            p1.log.clocks.get(&0),
            Some(&(0, 0, Some(0))),
            "CompleteNow gave the Irecv clock 0 with its sender"
        );
        assert_eq!(p1.log.clocks.get(&1).map(|c| c.1), Some(1));
        p1.wait(e0, &[0]);
        assert_eq!(p1.log.potential, vec![(0, 2)]);
        assert_eq!(p1.m.now(), 2);
    }

    /// Without the barrier's `CompleteNow` the Irecv would be completed
    /// only at its wait, after the Recv: P2 must then not be found for the
    /// Recv (it matched it) and the Irecv gets a later clock. Checks that a
    /// deterministic receive does not consume an event number.
    #[test]
    fn deterministic_receive_checks_earlier_events() {
        // E4: P1 `Recv(*); Recv(from 2)`; P0's message in the first.
        let mut p1 = Rank1::new(1, 0);
        p1.recv(None, Some(0), from(0, 0), &[0]);
        p1.recv(Some(2), Some(0), from(2, 0), &[0]);
        assert_eq!(p1.m.peek_event(), 1);
        assert_eq!(p1.log.potential, vec![(0, 2)]);
    }

    /// Fig 5.3 / S6: omission under LLCP, found under LVCP.
    #[test]
    fn fig_5_3_llcp_omits_lvcp_finds() {
        // Lamport. P0: Recv(*) from P3 (clock 0), then sends with clock 1.
        let mut p0 = Rank1::new(1, 0);
        p0.recv(None, Some(0), from(3, 0), &[0]);
        let p0_send = p0.m.clock().to_vec();
        assert_eq!(p0_send, vec![1]);
        // P2: Recv(*) from P1 (clock 0), Recv(*) from P0 (clock 1).
        let mut p2 = Rank1::new(1, 0);
        p2.recv(None, Some(0), from(1, 0), &[0]);
        p2.recv(None, Some(0), from(0, 0), &p0_send);
        assert!(p2.log.potential.is_empty(), "LLCP misses it (Fig 5.3)");

        // Vector clocks over 4 ranks.
        let mut p0 = Rank1::new(4, 0);
        p0.recv(None, Some(0), from(3, 0), &[0, 0, 0, 0]);
        let p0_send = p0.m.clock().to_vec();
        assert_eq!(p0_send, vec![1, 0, 0, 0]);
        let mut p2 = Rank1::new(4, 2);
        p2.recv(None, Some(0), from(1, 0), &[0, 0, 0, 0]);
        p2.recv(None, Some(0), from(0, 0), &p0_send);
        assert_eq!(p2.log.potential, vec![(0, 0)], "LVCP finds P0");
        assert_eq!(p2.m.clock(), &[1, 0, 2, 0]);
    }

    /// Fig 5.14 / S5: final clocks of P0's four events, in issue order,
    /// are 0, 2, 1, 3 when the receives complete in the figure's order.
    #[test]
    fn fig_5_14_final_clocks() {
        let mut p0 = Rank1::new(1, 0);
        let h0 = p0.irecv_any(Some(2), from(1, 2));
        let h1 = p0.irecv_any(Some(3), from(1, 3));
        p0.recv(None, Some(2), from(2, 2), &[0]);
        p0.recv(None, Some(3), from(2, 3), &[0]);
        p0.wait(h0, &[0]);
        p0.wait(h1, &[0]);
        assert_eq!(p0.log.finals(), vec![0, 2, 1, 3]);
        // Each event has the other sender as a potential match: the
        // Irecvs through the Recvs' late messages, the Recvs not at all in
        // this run (their alternatives arrive earlier, in the Irecvs).
        let mut found = p0.log.potential.clone();
        found.sort_unstable();
        assert_eq!(found, vec![(0, 2), (1, 2)]);
    }

    /// Fig 5.22 / S7: an `MPI_ANY_TAG` Irecv completed by nonovertaking.
    /// P0: `Irecv(*, 3, h0); Irecv(*, *, h1); Recv(*, 2); Send(to 2);
    /// Wait(h0); Wait(h1); Recv(*, 3)`. P1 sends tags 3, 3, 2; P2 sends
    /// tag 3 after P0's message. Deterministic: no potential match.
    #[test]
    fn fig_5_22_any_tag_no_false_match() {
        let run = |resolve: bool| {
            let mut p0 = Rank1::new(1, 0);
            p0.resolve = resolve;
            let h0 = p0.irecv_any(Some(3), from(1, 3));
            let h1 = p0.irecv_any(None, from(1, 3));
            p0.recv(None, Some(2), from(1, 2), &[0]);
            let to_p2 = p0.m.clock().to_vec();
            p0.wait(h0, &[0]);
            p0.wait(h1, &[0]);
            p0.recv(None, Some(3), from(2, 3), &to_p2);
            p0.log
        };
        let log = run(true);
        assert_eq!(log.finals(), vec![0, 1, 2, 3]);
        assert!(log.potential.is_empty(), "{:?}", log.potential);
        // Without learning h1's tag, h0 keeps pending until its wait and P2
        // looks like a potential match of it: the false match of Fig 5.22.
        let log = run(false);
        assert!(log.potential.contains(&(0, 2)), "{:?}", log.potential);
    }

    /// Fig 5.21 / S9: `Probe(*); Recv(from src)` twice; both senders found
    /// for the first probe.
    #[test]
    fn fig_5_21_probes() {
        let mut p0 = Rank1::new(1, 0);
        p0.probe(None, Some(0), from(1, 0));
        p0.recv(Some(1), Some(0), from(1, 0), &[0]);
        p0.probe(None, Some(0), from(2, 0));
        p0.recv(Some(2), Some(0), from(2, 0), &[0]);
        assert_eq!(p0.log.finals(), vec![0, 1]);
        assert_eq!(p0.log.potential, vec![(0, 2)]);
    }

    /// A probe completes only the first pending event it orders (Fig 5.21).
    #[test]
    fn probe_completes_one_pending_event() {
        let mut p = Rank1::new(1, 0);
        p.irecv_any(Some(0), from(1, 0));
        p.irecv_any(Some(0), from(2, 0));
        p.probe(None, Some(0), from(3, 0));
        assert_eq!(p.log.clocks.keys().copied().collect::<Vec<_>>(), vec![0, 2]);
        assert_eq!(p.m.pending_events().len(), 1);
    }

    /// S11 (seed 003 Fig 4): P0 `Send(to 1); Reduce(root 1)`; P1 `Recv(*);
    /// Reduce(root 1); Recv(*)`; P2 `Reduce(root 1); Send(to 1)`. The root
    /// takes the maximum; P2, a non-root, keeps its clock 0.
    #[test]
    fn s11_reduce_to_root_only() {
        let mut p1 = Rank1::new(1, 0);
        p1.recv(None, Some(0), from(0, 0), &[0]);
        p1.m.merge(&[0]); // P0's and P2's clocks reach the root
        let p2_clock = [0]; // P2 is not the root: unchanged
        p1.recv(None, Some(0), from(2, 0), &p2_clock);
        assert_eq!(p1.log.potential, vec![(0, 2)]);
    }

    /// A message sent after the sender saw the event's completion is not a
    /// potential match (the send is ordered after the receive).
    #[test]
    fn causally_later_message_is_not_late() {
        let mut p1 = Rank1::new(1, 0);
        p1.recv(None, Some(0), from(0, 0), &[0]);
        // P2 got a message from P1 (clock 1) before sending.
        p1.recv(None, Some(0), from(2, 0), &[1]);
        assert!(p1.log.potential.is_empty());
    }

    /// Tags and communicators must agree for a potential match.
    #[test]
    fn tags_and_communicators_filter() {
        let mut p = Rank1::new(1, 0);
        p.recv(None, Some(5), from(0, 5), &[0]);
        p.recv(None, Some(6), from(2, 6), &[0]);
        assert!(p.log.potential.is_empty());
        let mut p = Rank1::new(1, 0);
        p.recv(None, None, from(0, 5), &[0]);
        p.recv(None, Some(6), from(2, 6), &[0]);
        assert_eq!(p.log.potential, vec![(0, 2)], "ANY_TAG accepts tag 6");
    }

    /// A receive issued after the late message's receiver is not a
    /// candidate, and repeated late messages are reported once.
    #[test]
    fn issue_order_and_deduplication() {
        let mut p = Rank1::new(1, 0);
        p.recv(None, Some(0), from(0, 0), &[0]);
        p.recv(None, Some(0), from(2, 0), &[0]);
        p.recv(None, Some(0), from(2, 0), &[0]);
        // Event 0 found once for P2; event 1 (matched P2) gets nothing.
        assert_eq!(p.log.potential, vec![(0, 2)]);
    }

    /// §5.2.1: an event acknowledged to its synchronous sender before its
    /// final clock ignores messages with a clock above its start.
    #[test]
    fn matched_with_ssend_filters_later_clocks() {
        let mut p = Rank1::new(1, 0);
        let e = p.irecv_any(Some(0), from(0, 0));
        p.m.merge(&[3]);
        assert!(p.m.mark_ssend(e));
        p.wait(e, &[0]);
        // Final clock 3, start 0: a message with clock 2 is excluded...
        p.recv(Some(2), Some(0), from(2, 0), &[2]);
        assert!(p.log.potential.is_empty());
        // ...one with clock 0 is not.
        p.recv(Some(1), Some(0), from(1, 0), &[0]);
        assert_eq!(p.log.potential, vec![(0, 1)]);
    }

    /// Guided runs stay guided past the last guided clock (forced events
    /// are named, not dated). A forced event at or below it gets no
    /// potential matches (Fig 5.20): it is part of the forced prefix.
    #[test]
    fn guided_mode_and_filter() {
        let mut m = Llcp::new(1, 0, Some(0));
        assert!(m.guiding());
        let mut log = Log::default();
        let forced = Pattern {
            comm: WORLD,
            source: Some(2),
            tag: Some(0),
        };
        let e = m.next_event();
        let event = BlockingEvent {
            event: e,
            pattern: forced,
            start: 0,
            record: 0,
        };
        let posted = m.complete(
            1,
            WORLD,
            from(2, 0),
            Receive::Blocking(Some(event)),
            false,
            |_| None,
            &mut log,
        );
        m.incoming(1, WORLD, from(2, 0), &[0], posted, 1, &mut log);
        assert!(m.guiding(), "still guided at clock 1 > last guided 0");
        let e = m.next_event();
        let b = Receive::Blocking(Some(BlockingEvent {
            event: e,
            pattern: any(Some(0)),
            start: 1,
            record: 0,
        }));
        let posted = m.complete(2, WORLD, from(0, 0), b, false, |_| None, &mut log);
        m.incoming(2, WORLD, from(0, 0), &[0], posted, 2, &mut log);
        assert!(log.potential.is_empty(), "event 0 was forced");
        assert!(m.guiding());
    }

    /// Issue 11: a free wildcard event at or below the last guided clock
    /// (another rank's choice point was flipped at the same clock) is
    /// concurrent with the flip, not part of the forced prefix: it reports
    /// its potential senders like any free event.
    #[test]
    fn free_event_at_the_guided_clock_reports_its_senders() {
        let mut m = Llcp::new(1, 0, Some(0));
        let mut log = Log::default();
        let e = m.next_event();
        let b = Receive::Blocking(Some(BlockingEvent {
            event: e,
            pattern: any(Some(0)),
            start: 0,
            record: 0,
        }));
        let posted = m.complete(1, WORLD, from(2, 0), b, false, |_| None, &mut log);
        m.incoming(1, WORLD, from(2, 0), &[0], posted, 1, &mut log);
        let posted = m.complete(
            2,
            WORLD,
            from(3, 0),
            Receive::Blocking(None),
            false,
            |_| None,
            &mut log,
        );
        m.incoming(2, WORLD, from(3, 0), &[0], posted, 2, &mut log);
        assert_eq!(log.potential, vec![(0, 3)]);
    }

    /// In a guided run a forced pending receive posted for another source
    /// learns the sender of a later receive's message (Fig 5.19 lines 2-12).
    #[test]
    fn forced_pending_receive_gets_later_senders() {
        let mut m = Llcp::new(1, 0, Some(5));
        let mut log = Log::default();
        let forced = Pattern {
            comm: WORLD,
            source: Some(2),
            tag: Some(0),
        };
        let e = m.next_event();
        m.post(e, 1, forced, 0, 0);
        let posted = m.complete(
            2,
            WORLD,
            from(0, 0),
            Receive::Blocking(None),
            false,
            |_| None,
            &mut log,
        );
        m.incoming(2, WORLD, from(0, 0), &[0], posted, 2, &mut log);
        assert_eq!(log.potential, vec![(0, 0)]);
        assert!(m.pending(0).is_some(), "still pending: it waits for P2");
    }
}
