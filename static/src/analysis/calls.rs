//! Phases 2, 4, 6 and 7: who calls whom. Function names resolved as the
//! linker would, the direct calls and the callers of internal functions
//! (what resolving a parameter follows), the call graph, and the
//! functions that reach a wildcard site through it.

use std::collections::{HashMap, HashSet};

use petgraph::graph::{DiGraph, NodeIndex};

use super::SiteFact;
use crate::ir::{Callee, Function, InstId, Op, Val};

/// Phase 2: the defined functions by name. An internal (`static`)
/// function is known only in its module, and hides an external one of
/// the same name there; among external ones of the same name, the first
/// defined wins.
pub(super) struct Names<'a> {
    internal: HashMap<(usize, &'a str), usize>,
    external: HashMap<&'a str, usize>,
}

impl<'a> Names<'a> {
    pub(super) fn new(fns: &'a [Function]) -> Self {
        let mut internal: HashMap<(usize, &str), usize> = HashMap::new();
        let mut external: HashMap<&str, usize> = HashMap::new();
        for (i, f) in fns.iter().enumerate() {
            if f.internal {
                internal.insert((f.module, f.name.as_str()), i);
            } else {
                external.entry(f.name.as_str()).or_insert(i);
            }
        }
        Names { internal, external }
    }

    /// The function `name` means in `module`, if it is defined.
    pub(super) fn resolve(&self, module: usize, name: &str) -> Option<usize> {
        self.internal
            .get(&(module, name))
            .or_else(|| self.external.get(name))
            .copied()
    }
}

/// Phase 4: the direct calls between defined functions, and what may
/// call a function without a direct call.
pub(super) struct Calls {
    /// Per function: its direct calls to defined functions, as
    /// `(instruction, callee)`.
    pub calls: Vec<Vec<(InstId, usize)>>,
    /// Functions whose address is taken (an operand, or a global's
    /// initializer): they may be called through pointers.
    pub address_taken: HashSet<usize>,
    /// Per function: whether it calls through a pointer.
    pub calls_unknown: Vec<bool>,
    /// The direct callers `(function, instruction)` of each internal
    /// function whose address is not taken, by `(module, name)`: every
    /// call it can get.
    pub callers: HashMap<(usize, String), Vec<(usize, InstId)>>,
}

impl Calls {
    /// The calls of `fns`, with `referenced` the functions each module's
    /// globals refer to.
    pub(super) fn new(fns: &[Function], names: &Names<'_>, referenced: &[HashSet<String>]) -> Self {
        let resolve_fn = |module: usize, name: &str| names.resolve(module, name);
        let mut calls: Vec<Vec<(InstId, usize)>> = vec![Vec::new(); fns.len()];
        let mut address_taken: HashSet<usize> = HashSet::new();
        let mut calls_unknown = vec![false; fns.len()];
        for (i, f) in fns.iter().enumerate() {
            for (k, inst) in f.insts.iter().enumerate() {
                if let Op::Call(callee) = &inst.op {
                    match callee {
                        Callee::Named(name) => {
                            if let Some(g) = resolve_fn(f.module, name) {
                                calls[i].push((k as InstId, g));
                            }
                        }
                        Callee::Indirect => calls_unknown[i] = true,
                        Callee::Asm => {}
                    }
                }
                for v in &inst.ops {
                    if let Val::Global(name) = v {
                        if let Some(g) = resolve_fn(f.module, name) {
                            address_taken.insert(g);
                        }
                    }
                }
            }
        }
        for (m, names) in referenced.iter().enumerate() {
            for name in names {
                if let Some(g) = resolve_fn(m, name) {
                    address_taken.insert(g);
                }
            }
        }
        let mut callers: HashMap<(usize, String), Vec<(usize, InstId)>> = HashMap::new();
        for (i, f) in fns.iter().enumerate() {
            if f.internal && !address_taken.contains(&i) {
                callers.entry((f.module, f.name.clone())).or_default();
            }
        }
        for (i, list) in calls.iter().enumerate() {
            for &(k, g) in list {
                if let Some(slot) = callers.get_mut(&(fns[g].module, fns[g].name.clone())) {
                    if fns[g].internal {
                        slot.push((i, k));
                    }
                }
            }
        }
        Calls {
            calls,
            address_taken,
            calls_unknown,
            callers,
        }
    }

    /// Phase 6: the call graph, one node per function (node `i` is
    /// function `i`) and one edge per caller and callee, however many
    /// calls there are. Calls through pointers have no edge.
    pub(super) fn graph(&self) -> DiGraph<usize, ()> {
        let n = self.calls.len();
        let mut graph = DiGraph::<usize, ()>::with_capacity(n, n * 2);
        for i in 0..n {
            graph.add_node(i);
        }
        for (i, list) in self.calls.iter().enumerate() {
            let mut seen = HashSet::new();
            for &(_, g) in list {
                if seen.insert(g) {
                    graph.add_edge(NodeIndex::new(i), NodeIndex::new(g), ());
                }
            }
        }
        graph
    }
}

/// Phase 7: per function, whether it contains wildcard sites, directly or
/// through the functions it calls (its callers' loops and zones then
/// hold them too).
pub(super) fn contains_wildcards(graph: &DiGraph<usize, ()>, sites: &[Vec<SiteFact>]) -> Vec<bool> {
    let direct: Vec<bool> = sites
        .iter()
        .map(|s| s.iter().any(|s| s.wildcard.is_some()))
        .collect();
    with_callers(graph, direct)
}

/// `direct` widened to every function that calls one of them, directly
/// or through other defined functions.
fn with_callers(graph: &DiGraph<usize, ()>, direct: Vec<bool>) -> Vec<bool> {
    let mut reached = vec![false; direct.len()];
    let mut stack: Vec<usize> = (0..direct.len()).filter(|&i| direct[i]).collect();
    while let Some(g) = stack.pop() {
        if reached[g] {
            continue;
        }
        reached[g] = true;
        for caller in graph.neighbors_directed(NodeIndex::new(g), petgraph::Direction::Incoming) {
            if !reached[caller.index()] {
                stack.push(caller.index());
            }
        }
    }
    reached
}

/// Phase 10b's question: per function, whether calling it can reach an
/// MPI call (directly, through defined callees, or through a function
/// pointer).
pub(super) fn reaches_mpi(
    graph: &DiGraph<usize, ()>,
    sites: &[Vec<SiteFact>],
    calls_unknown: &[bool],
) -> Vec<bool> {
    let direct = (0..sites.len())
        .map(|i| !sites[i].is_empty() || calls_unknown[i])
        .collect();
    with_callers(graph, direct)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Inst;

    /// A function of `module` whose instructions call `callees` (a name,
    /// or `None` for a call through a pointer).
    fn function(name: &str, module: usize, internal: bool, callees: &[Option<&str>]) -> Function {
        let inst = |op, ops| Inst {
            op,
            ops,
            loc: None,
            block: 0,
            is_ptr: false,
        };
        Function {
            name: name.to_owned(),
            module,
            internal,
            blocks: Vec::new(),
            insts: callees
                .iter()
                .map(|c| match c {
                    Some(n) => inst(Op::Call(Callee::Named((*n).to_owned())), Vec::new()),
                    None => inst(Op::Call(Callee::Indirect), Vec::new()),
                })
                .collect(),
            vars: HashMap::new(),
        }
    }

    #[test]
    fn a_static_function_hides_an_external_one_in_its_module_only() {
        let fns = [
            function("log", 0, false, &[]),
            function("log", 1, true, &[]),
            function("log", 2, false, &[]),
        ];
        let names = Names::new(&fns);
        assert_eq!(names.resolve(0, "log"), Some(0));
        assert_eq!(names.resolve(1, "log"), Some(1));
        // The first external definition wins.
        assert_eq!(names.resolve(2, "log"), Some(0));
        assert_eq!(names.resolve(0, "other"), None);
    }

    #[test]
    fn callers_are_known_for_static_functions_whose_address_is_not_taken() {
        let mut fns = vec![
            function("main", 0, false, &[Some("a"), Some("b"), None, Some("a")]),
            function("a", 0, true, &[]),
            function("b", 0, true, &[]),
            function("c", 0, true, &[Some("b")]),
            function("d", 0, false, &[]),
        ];
        // `main` passes `c`'s address; a global refers to `b`.
        fns[0].insts[2].ops.push(Val::Global("c".to_owned()));
        let names = Names::new(&fns);
        let referenced = [HashSet::from(["b".to_owned()])];
        let calls = Calls::new(&fns, &names, &referenced);
        assert_eq!(calls.calls[0], [(0, 1), (1, 2), (3, 1)]);
        assert_eq!(calls.calls_unknown, [true, false, false, false, false]);
        assert_eq!(calls.address_taken, HashSet::from([2, 3]));
        assert_eq!(
            calls.callers,
            HashMap::from([((0, "a".to_owned()), vec![(0, 0), (0, 3)])])
        );
        // One edge per caller and callee.
        let graph = calls.graph();
        assert_eq!(graph.node_count(), 5);
        assert_eq!(graph.edge_count(), 3);
    }

    #[test]
    fn wildcards_reach_every_caller() {
        let fns = [
            function("main", 0, false, &[Some("mid"), Some("leaf")]),
            function("mid", 0, false, &[Some("leaf")]),
            function("leaf", 0, false, &[]),
            function("other", 0, false, &[Some("main")]),
            function("alone", 0, false, &[]),
        ];
        let names = Names::new(&fns);
        let graph = Calls::new(&fns, &names, &[HashSet::new()]).graph();
        let mut sites = vec![Vec::new(); fns.len()];
        sites[2].push(SiteFact {
            id: 1,
            inst: 0,
            name: "MPI_Recv".to_owned(),
            func: crate::mpi::lookup("MPI_Recv").unwrap(),
            wildcard: Some((
                mbh_trace::static_report::WildcardKind::AnySource,
                String::new(),
                String::new(),
            )),
            on_comm_self: false,
            on_comm_world: false,
        });
        assert_eq!(
            contains_wildcards(&graph, &sites),
            [true, true, true, true, false]
        );
    }
}
