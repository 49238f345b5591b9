//! Tests of the whole-program analysis on `.ll` fixtures.

use std::path::{Path, PathBuf};
use std::process::Command;

use inkwell::context::Context;
use mbh_static::{analyze, Analysis, AnalysisInput, ConstValue, Module, MpiConstants};
use mbh_trace::static_report::{CallClass, LoopDecision, LoopMarker, StaticReport, WildcardKind};

use super::fixture;

/// MPICH 4.0.2's values, which the fixtures were generated against (the
/// build reads them from the installed `mpi.h` instead).
pub fn mpich() -> MpiConstants {
    MpiConstants {
        any_source: ConstValue::Int(-2),
        any_tag: ConstValue::Int(-1),
        proc_null: ConstValue::Int(-1),
        undefined: ConstValue::Int(-32766),
        comm_world: ConstValue::Int(0x4400_0000),
        comm_self: ConstValue::Int(0x4400_0001),
        status_size: 20,
        status_source: 8,
        status_tag: 12,
        datatypes: Vec::new(),
    }
}

pub fn report_of(names: &[&str]) -> StaticReport {
    let context = Context::create();
    let modules: Vec<Module<'_>> = names
        .iter()
        .map(|n| Module::load(&context, &fixture(&format!("analysis/{n}"))).unwrap())
        .collect();
    let paths: Vec<std::path::PathBuf> = names.iter().map(|n| Path::new(n).to_owned()).collect();
    let inputs: Vec<AnalysisInput<'_, '_>> = modules
        .iter()
        .zip(&paths)
        .map(|(module, source)| AnalysisInput { module, source })
        .collect();
    let analysis: Analysis<'_> = analyze(&inputs, &mpich(), Path::new("/home/user/proj"));
    analysis.report
}

/// `(id, line, end line, depth, parent)` of each loop.
fn loop_shapes(report: &StaticReport) -> Vec<(u32, u32, u32, u32, Option<u32>)> {
    report
        .loops
        .iter()
        .map(|l| (l.id, l.span.line, l.end_line, l.depth, l.parent))
        .collect()
}

#[test]
fn natural_loops_nesting_and_exits() {
    let report = report_of(&["loops.ll"]);
    assert_eq!(
        loop_shapes(&report),
        [
            // nested: the for, the inner for and the while in it.
            (1, 6, 11, 1, None),
            (2, 7, 8, 2, Some(1)),
            (3, 9, 10, 2, Some(1)),
            // exits: `while (1)` left by break, return and goto.
            (4, 17, 25, 1, None),
            // do_while.
            (5, 44, 46, 1, None),
        ]
    );
    let names: Vec<(&str, &[u32])> = report
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.loops.as_slice()))
        .collect();
    assert_eq!(
        names,
        [
            ("nested", &[1, 2, 3][..]),
            ("exits", &[4][..]),
            ("irreducible", &[][..]),
            ("do_while", &[5][..]),
        ]
    );
    assert!(report
        .loops
        .iter()
        .all(|l| l.decision == LoopDecision::NoWildcards && l.marker == LoopMarker::None));
}

/// A cycle entered at two places (a `goto` into a loop) is no natural
/// loop: none is claimed, the function is flagged and a note says so.
#[test]
fn irreducible_control_flow_claims_no_loop() {
    let report = report_of(&["loops.ll"]);
    let f = report
        .functions
        .iter()
        .find(|f| f.name == "irreducible")
        .unwrap();
    assert!(f.irreducible && f.loops.is_empty());
    assert!(report
        .functions
        .iter()
        .filter(|f| f.name != "irreducible")
        .all(|f| !f.irreducible));
    assert_eq!(report.notes.len(), 1);
    assert_eq!(report.notes[0].span.file, "loops.c");
    assert!(
        report.notes[0].message.contains("irreducible"),
        "{}",
        report.notes[0].message
    );
}

/// The fixture's loops, by id: the collection loop is abstracted, the
/// others are not, each for the reason it states.
#[test]
fn abstraction_choice_and_reasons() {
    let report = report_of(&["mpi_app.ll"]);
    let loops: Vec<(&str, LoopDecision, LoopMarker, &str)> = report
        .loops
        .iter()
        .map(|l| (l.function.as_str(), l.decision, l.marker, l.reason.as_str()))
        .collect();
    assert_eq!(
        loops,
        [
            (
                "collect",
                LoopDecision::Abstract,
                LoopMarker::Abstract,
                "loop at mpi_app.c:7 abstracted: the sender only indexes `results`"
            ),
            (
                "first_negative",
                LoopDecision::Explore,
                LoopMarker::Explore,
                "loop at mpi_app.c:18 not abstracted: the received value decides the branch at \
                 mpi_app.c:22"
            ),
            (
                "through_local",
                LoopDecision::Explore,
                LoopMarker::Explore,
                "loop at mpi_app.c:33 not abstracted: the received value is returned from \
                 `through_local` at mpi_app.c:37"
            ),
            (
                "main",
                LoopDecision::Explore,
                LoopMarker::Explore,
                "loop at mpi_app.c:59 not abstracted: the outcome of a wildcard receive in \
                 `recv_from` leaves it: the received value is written to `out` at mpi_app.c:41, \
                 which the analysis does not follow"
            ),
        ]
    );
    assert_eq!(report.loops[3].through_calls, ["recv_from"]);
    assert!(report.loops[3].wildcard_sites.is_empty());
    assert_eq!(report.loops[0].wildcard_sites, [1]);
}

/// `MPI_ANY_SOURCE` stored in a local variable and loaded later, and
/// passed to a `static` function as an argument, are found.
#[test]
fn wildcard_sites_through_locals_and_arguments() {
    let report = report_of(&["mpi_app.ll"]);
    type Row<'a> = (
        u32,
        &'a str,
        u32,
        &'a str,
        &'a str,
        WildcardKind,
        Option<u32>,
    );
    let wild: Vec<Row<'_>> = report
        .wildcards
        .iter()
        .map(|w| {
            (
                w.site,
                w.function.as_str(),
                w.span.line,
                w.source.as_str(),
                w.tag.as_str(),
                w.kind,
                w.in_loop,
            )
        })
        .collect();
    assert_eq!(
        wild,
        [
            (
                1,
                "collect",
                10,
                "MPI_ANY_SOURCE",
                "0",
                WildcardKind::AnySource,
                Some(1)
            ),
            (
                2,
                "first_negative",
                20,
                "MPI_ANY_SOURCE",
                "1",
                WildcardKind::AnySource,
                Some(2)
            ),
            (
                3,
                "through_local",
                34,
                "MPI_ANY_SOURCE",
                "MPI_ANY_TAG",
                WildcardKind::AnySource,
                Some(3)
            ),
            (
                12,
                "recv_from",
                41,
                "MPI_ANY_SOURCE or 1",
                "2",
                WildcardKind::MaybeWildcard,
                None
            ),
        ]
    );
    let class = |site: u32| {
        report
            .calls
            .iter()
            .find(|c| c.site == site)
            .map(|c| (c.class, c.zone_boundary))
            .unwrap()
    };
    assert_eq!(class(1), (CallClass::Receive, false));
    assert_eq!(class(4), (CallClass::Other, true)); // MPI_Init
    assert_eq!(class(5), (CallClass::Communicator, false)); // MPI_Comm_rank
    assert_eq!(class(7), (CallClass::Send, false));
    assert_eq!(class(11), (CallClass::Collective, true)); // MPI_Barrier
    assert!(report.unsupported.is_empty());
}

/// Zones start after MPI_Init and after each call of `sync_all` (which
/// always reaches a barrier); MPI_Finalize ends a zone but opens none.
/// Zones collect the wildcard sites reachable before the next boundary,
/// through calls too.
#[test]
fn zones_between_collectives_and_through_calls() {
    let report = report_of(&["mpi_app.ll"]);
    let zones: Vec<(u32, &str, &str, &str, &[u32])> = report
        .zones
        .iter()
        .map(|z| {
            (
                z.id,
                z.name.as_str(),
                z.function.as_str(),
                z.opened_by.as_str(),
                z.wildcard_sites.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        zones,
        [
            (1, "mpi_app.c:50", "main", "MPI_Init", &[1][..]),
            (2, "mpi_app.c:56", "main", "sync_all", &[2, 12][..]),
            (3, "mpi_app.c:66", "main", "sync_all", &[][..]),
            (4, "mpi_app.c:45", "sync_all", "MPI_Barrier", &[][..]),
        ]
    );
    let always: Vec<&str> = report
        .functions
        .iter()
        .filter(|f| f.always_collective)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(always, ["main", "sync_all"]);
    assert!(report.zones.iter().all(|z| z.bound.is_none()));
}

/// Two modules: a call to a function of the other module is followed (its
/// wildcard sites and collectives count), and site ids continue across.
#[test]
fn whole_program_across_modules() {
    let report = report_of(&["loops.ll", "mpi_app.ll"]);
    assert_eq!(report.loops.len(), 9);
    assert_eq!(report.loops[5].id, 6);
    assert_eq!(report.loops[5].function, "collect");
    assert_eq!(report.wildcards[0].site, 1);
    assert_eq!(report.zones[0].name, "mpi_app.c:50");
}

/// Compiles C `code` with clang-16 and the installed MPI's flags, and
/// analyses it with the installed MPI's constants.
pub fn report_of_c(name: &str, code: &str) -> StaticReport {
    report_of_c_with(name, code, &["mpicc", "-show-compile-info"])
}

/// [`report_of_c`] with the compile flags `flags_command` prints (the
/// probe is compiled with them too).
pub fn report_of_c_with(name: &str, code: &str, flags_command: &[&str]) -> StaticReport {
    report_of_c_built(name, code, flags_command, &[])
}

/// [`report_of_c`] with `extra` compile flags after MPI's (`-O2`).
pub fn report_of_c_flags(name: &str, code: &str, extra: &[&str]) -> StaticReport {
    report_of_c_built(name, code, &["mpicc", "-show-compile-info"], extra)
}

fn report_of_c_built(
    name: &str,
    code: &str,
    flags_command: &[&str],
    extra_flags: &[&str],
) -> StaticReport {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join(format!("{name}.c"));
    std::fs::write(&c, code).unwrap();
    let flags = Command::new(flags_command[0])
        .args(&flags_command[1..])
        .output()
        .expect("mpicc is installed (scripts/install-deps.sh)");
    let flags = String::from_utf8(flags.stdout).unwrap();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    let compile = |src: &Path, out: &Path, extra: &[&str]| {
        let status = Command::new("clang-16")
            .current_dir(dir.path())
            .args(&flags)
            .args(extra)
            .arg(src)
            .arg("-o")
            .arg(out)
            .status()
            .expect("clang-16 is installed (scripts/install-deps.sh)");
        assert!(status.success());
    };
    let ll = dir.path().join(format!("{name}.ll"));
    let mut front_end = vec!["-g", "-S", "-emit-llvm", "-Xclang", "-disable-llvm-passes"];
    front_end.extend_from_slice(extra_flags);
    compile(&c, &ll, &front_end);
    let probe_c = dir.path().join("probe.c");
    std::fs::write(&probe_c, MpiConstants::PROBE_C).unwrap();
    let probe_ll = dir.path().join("probe.ll");
    compile(&probe_c, &probe_ll, &["-S", "-emit-llvm"]);
    let context = Context::create();
    let probe = Module::load(&context, &probe_ll).unwrap();
    let consts = MpiConstants::from_probe(&probe).unwrap();
    let module = Module::load(&context, &ll).unwrap();
    let source = PathBuf::from(format!("{name}.c"));
    let inputs = [AnalysisInput {
        module: &module,
        source: &source,
    }];
    analyze(&inputs, &consts, dir.path()).report
}

/// The installed MPI (MPICH 4 on the reference machine) has the values
/// the fixtures assume.
#[test]
fn constants_come_from_the_installed_mpi() {
    let dir = tempfile::tempdir().unwrap();
    let probe_c = dir.path().join("probe.c");
    std::fs::write(&probe_c, MpiConstants::PROBE_C).unwrap();
    let flags = Command::new("mpicc")
        .arg("-show-compile-info")
        .output()
        .unwrap();
    let flags = String::from_utf8(flags.stdout).unwrap();
    let out = dir.path().join("probe.ll");
    let status = Command::new("clang-16")
        .args(flags.split_whitespace())
        .args(["-S", "-emit-llvm"])
        .arg(&probe_c)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let context = Context::create();
    let consts = MpiConstants::from_probe(&Module::load(&context, &out).unwrap()).unwrap();
    // MPICH's datatype handles are integers (`MPI_INT` is 0x4c000405).
    let int = consts
        .datatypes
        .iter()
        .find(|d| d.name == "MPI_INT")
        .unwrap();
    assert_eq!((&int.value, int.size), (&ConstValue::Int(0x4c00_0405), 4));
    assert_eq!(consts.datatypes.len(), 33, "every datatype of the probe");
    let without_datatypes = MpiConstants {
        datatypes: Vec::new(),
        ..consts
    };
    assert_eq!(without_datatypes, mpich());
    // A module without the probe's globals is refused, naming the global.
    let empty = Module::parse(&context, "empty.ll", b"").unwrap();
    let err = MpiConstants::from_probe(&empty).unwrap_err();
    assert!(err.to_string().contains("mbh_any_source"), "{err}");
}

fn only_loop(report: &StaticReport) -> (LoopDecision, String) {
    let wild: Vec<_> = report
        .loops
        .iter()
        .filter(|l| l.decision != LoopDecision::NoWildcards)
        .collect();
    assert_eq!(wild.len(), 1, "{:#?}", report.loops);
    (wild[0].decision, wild[0].reason.clone())
}

const PROLOGUE: &str = "#include <mpi.h>\n#include <stdio.h>\n";

/// Indexing by tag is not indexing by sender: two senders may use the
/// same tag, so the array's contents depend on the order.
#[test]
fn tag_indexed_collection_that_decides_a_branch_is_explored() {
    let report = report_of_c(
        "tag",
        &format!(
            "{PROLOGUE}int f(int n) {{
  int results[8] = {{0}};
  for (int i = 0; i < n; i++) {{
    int v;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    results[st.MPI_TAG] = v;
  }}
  if (results[1] > 0)
    return 1;
  return 0;
}}
"
        ),
    );
    assert_eq!(
        only_loop(&report),
        (
            LoopDecision::Explore,
            "loop at tag.c:5 not abstracted: the received value decides the branch at tag.c:11"
                .into()
        )
    );
}

/// Indexed by sender, the collection may decide branches later: it is the
/// same whatever the order.
#[test]
fn sender_indexed_collection_may_decide_later_branches() {
    let report = report_of_c(
        "sender",
        &format!(
            "{PROLOGUE}int f(int n) {{
  int results[8] = {{0}}, done[8] = {{0}};
  for (int i = 0; i < n; i++) {{
    int v;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
    results[st.MPI_SOURCE] = v;
    done[st.MPI_SOURCE] = 1;
  }}
  if (results[1] > 0 && done[2])
    MPI_Send(results, 8, MPI_INT, 0, 0, MPI_COMM_WORLD);
  return 0;
}}
"
        ),
    );
    assert_eq!(
        only_loop(&report),
        (
            LoopDecision::Abstract,
            "loop at sender.c:5 abstracted: the sender only indexes `results` and `done`".into()
        )
    );
}

/// A received value sent on after the loop is an argument of a later MPI
/// call.
#[test]
fn received_value_sent_after_the_loop_is_explored() {
    let report = report_of_c(
        "forward",
        &format!(
            "{PROLOGUE}void f(int n) {{
  int last = 0, v;
  for (int i = 0; i < n; i++) {{
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    last = v;
  }}
  MPI_Send(&last, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}}
"
        ),
    );
    assert_eq!(
        only_loop(&report),
        (
            LoopDecision::Explore,
            "loop at forward.c:5 not abstracted: the received value reaches an argument of \
             `MPI_Send` at forward.c:9"
                .into()
        )
    );
}

/// `MPI_Waitany` is a wildcard site; storing each request's buffer by the
/// completed index is a collection.
#[test]
fn waitany_collection_is_abstracted() {
    let report = report_of_c(
        "any",
        &format!(
            "{PROLOGUE}void f(void) {{
  int bufs[4], results[4], idx;
  MPI_Request reqs[4];
  for (int i = 0; i < 4; i++)
    MPI_Irecv(&bufs[i], 1, MPI_INT, i, 0, MPI_COMM_WORLD, &reqs[i]);
  for (int i = 0; i < 4; i++) {{
    MPI_Waitany(4, reqs, &idx, MPI_STATUS_IGNORE);
    results[idx] = bufs[idx];
  }}
  printf(\"%d\\n\", results[0]);
}}
"
        ),
    );
    // The receives' source is not a constant: they may be wildcards too.
    let kinds: Vec<(&str, WildcardKind)> = report
        .wildcards
        .iter()
        .map(|w| (w.call.as_str(), w.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("MPI_Irecv", WildcardKind::MaybeWildcard),
            ("MPI_Waitany", WildcardKind::AnyCompletion)
        ]
    );
    let reasons: Vec<&str> = report.loops.iter().map(|l| l.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "loop at any.c:6 abstracted: the sender only indexes `results`",
            "loop at any.c:8 abstracted: the sender only indexes `results`"
        ]
    );
}

/// A receive into a global buffer: other functions may read it.
#[test]
fn receive_into_a_global_is_explored() {
    let report = report_of_c(
        "global",
        &format!(
            "{PROLOGUE}int inbox[4];
void f(int n) {{
  for (int i = 0; i < n; i++)
    MPI_Recv(inbox, 4, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}}
"
        ),
    );
    let (decision, reason) = only_loop(&report);
    assert_eq!(decision, LoopDecision::Explore);
    assert!(
        reason.contains("is written to `inbox` at global.c:6"),
        "{reason}"
    );
}

/// A receive into memory reached through a structure (miniFE's
/// `std::vector` elements): the reason names that write, not an earlier
/// read of unnamed memory that only counts as tainted because of it.
#[test]
fn a_receive_into_unnamed_memory_is_the_reason_given() {
    let report = report_of_c(
        "unnamed",
        &format!(
            "{PROLOGUE}struct box {{ int *slots; }};
void show(int *p);
void f(struct box *b, int n) {{
  show(b->slots);
  MPI_Request req[8];
  for (int i = 0; i < n; i++)
    MPI_Irecv(&b->slots[i], 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req[i]);
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}}
"
        ),
    );
    let (decision, reason) = only_loop(&report);
    assert_eq!(decision, LoopDecision::Explore);
    assert!(
        reason.contains("the received value is written to memory it cannot name at unnamed.c:9"),
        "{reason}"
    );
}

/// Unsupported calls are listed by name and line.
#[test]
fn unsupported_calls_are_listed() {
    let report = report_of_c(
        "persistent",
        &format!(
            "{PROLOGUE}void f(int *x) {{
  MPI_Request r;
  MPI_Send_init(x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
  MPI_Start(&r);
  MPI_Isendrecv(x, 1, MPI_INT, 0, 0, x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
}}
"
        ),
    );
    let calls: Vec<(&str, u32)> = report
        .unsupported
        .iter()
        .map(|u| (u.call.as_str(), u.span.line))
        .collect();
    // Persistent requests are supported; MPI-4's Isendrecv is not.
    assert_eq!(calls, [("MPI_Isendrecv", 7)]);
    assert_eq!(report.warnings().len(), 1);
}
