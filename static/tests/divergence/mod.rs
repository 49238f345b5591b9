//! Tests of the collective-divergence and input-branch analysis (issue 19)
//! on C compiled by clang-16 with the installed MPI's headers.

use mbh_trace::static_report::{Dependence, DivergentCollective, InputBranch, StaticReport};

use super::analysis::{report_of_c, report_of_c_flags};

/// `(call, function, line, [(branch line, dependences)])`.
type Row = (String, String, u32, Vec<(u32, Vec<Dependence>)>);

fn rows(found: &[DivergentCollective]) -> Vec<Row> {
    found
        .iter()
        .map(|d| {
            (
                d.call.clone(),
                d.function.clone(),
                d.span.line,
                d.branches
                    .iter()
                    .map(|b| (b.span.line, b.depends_on.clone()))
                    .collect(),
            )
        })
        .collect()
}

fn row(call: &str, function: &str, line: u32, branches: &[(u32, &[Dependence])]) -> Row {
    (
        call.into(),
        function.into(),
        line,
        branches.iter().map(|(l, d)| (*l, d.to_vec())).collect(),
    )
}

/// `(line, inputs, function)`.
fn inputs(found: &[InputBranch]) -> Vec<(u32, Vec<String>, String)> {
    found
        .iter()
        .map(|b| (b.span.line, b.inputs.clone(), b.function.clone()))
        .collect()
}

fn input(name: &str) -> Dependence {
    Dependence::Input(name.into())
}

fn report(name: &str, code: &str) -> StaticReport {
    let report = report_of_c(name, code);
    // Every span names the source, as the other entries do.
    for d in &report.divergent_collectives {
        assert_eq!(d.span.file, format!("{name}.c"));
        assert!(d.branches.iter().all(|b| b.span.file == d.span.file));
    }
    report
}

const RANK_GUARDS: &str = r#"#include <mpi.h>
#include <stdlib.h>
static void sync_all(void) {
  MPI_Barrier(MPI_COMM_WORLD);
}
int main(int argc, char **argv) {
  int rank, i, x = 1, y = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank % 2)
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (i = 0; i < rank; i++)
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    sync_all();
  if (atoi(argv[1]) > 3 && rank != 0)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// Issue 19: each collective under a rank test is reported with the test's
/// line: a plain `if`, a parity test, a loop whose trip count is the rank
/// (its exit test), a helper called only under a rank test (the caller's
/// branch), and a condition that mixes input and rank (one source
/// condition, both dependences). `MPI_Init`, `MPI_Comm_rank` and
/// `MPI_Finalize` are not.
#[test]
fn issue_19_rank_dependent_collectives_are_reported() {
    let report = report("rank_guards", RANK_GUARDS);
    let rank: &[Dependence] = &[Dependence::Rank];
    assert_eq!(
        rows(&report.divergent_collectives),
        [
            row("MPI_Barrier", "main", 11, &[(10, rank)]),
            row("MPI_Allreduce", "main", 13, &[(12, rank)]),
            row("MPI_Bcast", "main", 15, &[(14, rank)]),
            row(
                "MPI_Barrier",
                "main",
                19,
                &[(18, &[Dependence::Rank, input("argv[1]")])]
            ),
            row("MPI_Barrier", "sync_all", 4, &[(16, rank)]),
        ]
    );
    // Site ids are the site table's: MPI_Init is 1, MPI_Comm_rank 2.
    let sites: Vec<u32> = report
        .divergent_collectives
        .iter()
        .map(|d| d.site)
        .collect();
    assert_eq!(sites, [3, 4, 5, 6, 8]);
    for d in &report.divergent_collectives {
        let call = report.calls.iter().find(|c| c.site == d.site).unwrap();
        assert_eq!(call.class, mbh_trace::static_report::CallClass::Collective);
    }
    // The mixed condition is also an input branch; the rank-only ones are
    // not.
    assert_eq!(
        inputs(&report.input_branches),
        [(18, vec!["argv[1]".to_owned()], "main".to_owned())]
    );
}

const RANK_THROUGH_DATA: &str = r#"#include <mpi.h>
int my_rank;
static void step(int r, MPI_Comm comm) {
  if (r > 0)
    MPI_Barrier(comm);
}
static int is_root(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r == 0;
}
int main(int argc, char **argv) {
  int rank, go = 0, token = 0, sum;
  MPI_Comm half;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  step(rank, MPI_COMM_WORLD);
  if (is_root())
    MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &half);
  if (rank == 1)
    go = 1;
  if (go)
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
  if (my_rank == 0)
    MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (my_rank == 1)
    MPI_Send(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  if (token > 0)
    MPI_Reduce(&token, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// The rank reaches conditions through a parameter, a return value, a
/// global, a store under a rank test (`go`), and a received value
/// (`Received`); nonblocking collectives and communicator constructors
/// count as collectives.
#[test]
fn issue_19_rank_through_calls_memory_and_messages() {
    let report = report("rank_data", RANK_THROUGH_DATA);
    let rank: &[Dependence] = &[Dependence::Rank];
    assert_eq!(
        rows(&report.divergent_collectives),
        [
            row("MPI_Comm_split", "main", 21, &[(20, rank)]),
            row("MPI_Ibarrier", "main", 25, &[(24, rank)]),
            row(
                "MPI_Reduce",
                "main",
                31,
                &[(30, &[Dependence::Rank, Dependence::Received])]
            ),
            row("MPI_Barrier", "step", 5, &[(4, rank)]),
        ]
    );
    assert!(report.input_branches.is_empty());
}

const UNIFORM: &str = r#"#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int rank, size, n = 0, i, local_done, done = 0;
  double x = 1, sum;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (size > 1)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    n = 3 + rank;
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (i = 0; i < n; i++)
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  local_done = rank > 0;
  MPI_Allreduce(&local_done, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (!done)
    MPI_Barrier(MPI_COMM_WORLD);
  while (!done) {
    local_done = rank >= 0;
    MPI_Allreduce(&local_done, &done, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
"#;

/// Issue 19: uniform conditions say nothing: the size, a loop bound
/// received by `MPI_Bcast` (set under a rank test on the root), a flag
/// computed by `MPI_Allreduce` (tested after it, and as a loop condition
/// before it), and unconditional collectives.
#[test]
fn issue_19_uniform_conditions_are_silent() {
    let report = report("uniform", UNIFORM);
    assert_eq!(rows(&report.divergent_collectives), []);
    assert!(report.input_branches.is_empty());
}

/// A rank that fails an assertion, exits or aborts stops: it does not skip
/// the collectives after the branch, so they are not reported.
#[test]
fn issue_19_a_branch_to_the_programs_end_decides_no_collective() {
    let code = r#"#include <assert.h>
#include <mpi.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int rank, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    assert(v < 2);
  }
  if (rank == 1 && v > 5)
    exit(1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;
    let report = report("ends", code);
    assert_eq!(rows(&report.divergent_collectives), []);
}

const INPUTS: &str = r#"#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static void maybe_sync(int on) {
  if (on)
    MPI_Barrier(MPI_COMM_WORLD);
}
int main(int argc, char **argv) {
  int rank, n = 0, i, x = 0, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 2)
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_SELF);
  if (getenv("DEBUG"))
    MPI_Barrier(MPI_COMM_WORLD);
  if (rand() % 2)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    n = atoi(argv[1]);
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (i = 0; i < n; i++)
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (scanf("%d", &x) == 1 && x > 0)
    maybe_sync(1);
  if (n > 10)
    printf("big\n");
  MPI_Finalize();
  return 0;
}
"#;

/// Issue 19: branches on the program's input that decide MPI calls are
/// listed with the inputs they read, once per source condition; a
/// broadcast input keeps its name; a branch that decides no MPI call is
/// not listed; none of them is a divergence.
#[test]
fn issue_19_input_branches_name_their_inputs() {
    let report = report("inputs", INPUTS);
    assert_eq!(rows(&report.divergent_collectives), []);
    let main = |line: u32, names: &[&str]| {
        (
            line,
            names.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "main".to_owned(),
        )
    };
    assert_eq!(
        inputs(&report.input_branches),
        [
            main(12, &["argc"]),
            main(14, &["getenv(\"DEBUG\")"]),
            main(16, &["rand()"]),
            main(21, &["argv[1]"]),
            main(23, &["scanf"]),
        ]
    );
}

/// A program of the end-to-end suite, compiled as the other tests here.
fn program(name: &str) -> StaticReport {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/programs")
        .join(format!("{name}.c"));
    let code = std::fs::read_to_string(&path).unwrap();
    report(name, &code)
}

/// The end-to-end programs of issue 19 say what the static half finds:
/// v1's collective under a rank-and-input condition, nothing in v2, and
/// v3's two input branches without any divergence.
#[test]
fn issue_19_end_to_end_programs() {
    let v1 = program("v1_rank_collective");
    let mixed = [Dependence::Rank, input("argc"), input("argv[1]")];
    assert_eq!(
        rows(&v1.divergent_collectives),
        [row("MPI_Allreduce", "main", 20, &[(19, &mixed)])]
    );
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        inputs(&v1.input_branches),
        [(19, names(&["argc", "argv[1]"]), "main".to_owned())]
    );

    let v2 = program("v2_uniform_collectives");
    assert_eq!(rows(&v2.divergent_collectives), []);
    assert!(v2.input_branches.is_empty());

    let v3 = program("v3_input_branch");
    assert_eq!(rows(&v3.divergent_collectives), []);
    assert_eq!(
        inputs(&v3.input_branches),
        [
            (17, names(&["argc", "argv[1]"]), "main".to_owned()),
            (25, names(&["argc"]), "main".to_owned()),
        ]
    );
}

const SELF_GUARDS: &str = r#"#include <mpi.h>
int main(int argc, char **argv) {
  int rank, x = 1, y = 0;
  MPI_Request request;
  MPI_Comm alone = MPI_COMM_SELF;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Barrier(MPI_COMM_SELF);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, alone);
    MPI_Ibarrier(MPI_COMM_SELF, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
"#;

/// A collective on `MPI_COMM_SELF` (named, or through a local holding
/// it; blocking or not) has one member, which cannot disagree with itself:
/// a rank test around it decides nothing. The same test around a
/// collective on `MPI_COMM_WORLD` still does (SCENARIOS.md E14 made the
/// first a false alarm).
#[test]
fn issue_19_collectives_on_comm_self_are_never_divergent() {
    let report = report("self_guards", SELF_GUARDS);
    let rank: &[Dependence] = &[Dependence::Rank];
    assert_eq!(
        rows(&report.divergent_collectives),
        [row("MPI_Barrier", "main", 13, &[(8, rank)])]
    );
}

const STILL_DIVERGENT: &str = r#"#include <mpi.h>
struct params { int rank; int n; };
int main(int argc, char **argv) {
  int rank, nprocs, i, x = 1, y = 0;
  struct params p;
  MPI_Comm sub;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (rank + 1 < nprocs)
    MPI_Barrier(MPI_COMM_WORLD);
  p.rank = rank;
  p.n = 2;
  if (p.rank > 0)
    MPI_Barrier(MPI_COMM_WORLD);
  for (i = 0; i < p.n; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 0, rank, &sub);
  if (sub != MPI_COMM_NULL)
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sub != MPI_COMM_NULL)
    MPI_Barrier(sub);
  x = 0;
  if (rank == 1)
    x = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (x)
    MPI_Bcast(&y, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
  MPI_Allreduce(&rank, &y, 1, MPI_INT, MPI_SUM, sub);
  if (y > 1)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// Issue 37 made the analysis decide less, never by losing the rank: a
/// comparison of the rank with the size that is not constant (`rank + 1 <
/// nprocs`), the rank in one field of a struct whose other field (`p.n`)
/// stays uniform, a communicator handle from a split that left rank 0 out
/// (tested before a collective on the world; one on the split itself is
/// left to the run), a variable set under a rank test read after a
/// barrier, and a sum `MPI_Allreduce` made on each half of a split (the
/// same within a half, not between them) are all still reported.
#[test]
fn issue_37_rank_dependence_survives_the_refinements() {
    let report = report("still_divergent", STILL_DIVERGENT);
    let rank: &[Dependence] = &[Dependence::Rank];
    assert_eq!(
        rows(&report.divergent_collectives),
        [
            row("MPI_Barrier", "main", 11, &[(10, rank)]),
            row("MPI_Barrier", "main", 15, &[(14, rank)]),
            row("MPI_Allreduce", "main", 20, &[(19, rank)]),
            row("MPI_Bcast", "main", 28, &[(27, rank)]),
            row("MPI_Barrier", "main", 32, &[(31, rank)]),
        ]
    );
}

const PACKED_BROADCAST: &str = r#"#include <mpi.h>
struct params { int n; int m; };
static void read_params(struct params *p, int rank) {
  if (rank == 0) {
    p->n = 3;
    p->m = 2;
  }
}
int main(int argc, char **argv) {
  struct params p = {0, 0};
  int rank, i, x = 1, y = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  read_params(&p, rank);
  int packed[2] = {p.n, p.m};
  MPI_Bcast(&packed[0], 2, MPI_INT, 0, MPI_COMM_WORLD);
  p.n = packed[0];
  p.m = packed[1];
  for (i = 0; i < p.m; i++)
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
"#;

/// Issue 37 (miniFE's `broadcast_parameters`): parameters only rank 0
/// read, packed into an array broadcast whole (a constant count of a
/// predefined type), then unpacked: every element is the root's, so a
/// loop on the second is uniform.
#[test]
fn issue_37_a_buffer_broadcast_whole_replaces_every_element() {
    let report = report("packed_broadcast", PACKED_BROADCAST);
    assert_eq!(rows(&report.divergent_collectives), []);
}

/// The rank tests recorded for each divergent collective of `body` (the
/// inside of `main`, after `MPI_Comm_rank(MPI_COMM_WORLD, &rank)`), as
/// `(call line, ["rank OP value"])`.
fn rank_tests_of(name: &str, body: &str) -> Vec<(u32, Vec<String>)> {
    let code = format!(
        "#include <mpi.h>\n\
         int main(int argc, char **argv) {{\n\
         int rank, x = 0, y = 0;\n\
         MPI_Comm sub;\n\
         MPI_Init(&argc, &argv);\n\
         MPI_Comm_rank(MPI_COMM_WORLD, &rank);\n\
         {body}\n\
         MPI_Finalize();\n\
         return 0;\n\
         }}\n"
    );
    report(name, &code)
        .divergent_collectives
        .iter()
        .map(|d| {
            let tests = d.rank_tests.iter().map(|t| t.describe()).collect();
            (d.span.line, tests)
        })
        .collect()
}

/// Issue 38: the tests of the world rank every path to a collective
/// passes, read through `&&`, `||` and `!`, are recorded with the call:
/// they make the divergence certain whenever the call is reached.
#[test]
fn issue_38_rank_tests_on_every_path_are_recorded() {
    let one = |s: &str| vec![s.to_owned()];
    let cases: [(&str, &str, Vec<String>); 5] = [
        (
            "conjunction",
            "if (rank == 0 && argc > 2) MPI_Barrier(MPI_COMM_WORLD);",
            one("rank == 0"),
        ),
        (
            "swapped_and_negated",
            "if (argc > 2 && !(1 < rank)) MPI_Barrier(MPI_COMM_WORLD);",
            one("rank <= 1"),
        ),
        (
            "else_arm",
            "if (rank != 0) { x = 1; } else if (argc > 2) { MPI_Barrier(MPI_COMM_WORLD); }",
            one("rank == 0"),
        ),
        (
            "nested",
            "if (argc > 2) { if (rank > 0) { if (rank < 3) MPI_Barrier(MPI_COMM_WORLD); } }",
            vec!["rank > 0".to_owned(), "rank < 3".to_owned()],
        ),
        (
            "disjunction",
            "if (rank == 0 || argc > 2) MPI_Barrier(MPI_COMM_WORLD);",
            Vec::new(),
        ),
    ];
    for (name, body, expected) in cases {
        let found = rank_tests_of(name, body);
        assert_eq!(found.len(), 1, "{name}: {found:?}");
        let mut tests = found[0].1.clone();
        tests.sort();
        let mut expected = expected;
        expected.sort();
        assert_eq!(tests, expected, "{name}");
    }
}

/// Issue 38: no rank test is recorded where another site may make up for
/// the call on the other ranks, nor for a rank of another communicator or
/// a collective on one.
#[test]
fn issue_38_rank_tests_are_left_out_where_they_prove_nothing() {
    let halves = rank_tests_of(
        "halves",
        "if (rank == 0 && argc > 2) MPI_Barrier(MPI_COMM_WORLD);\n\
         if (rank != 0 && argc > 2) MPI_Barrier(MPI_COMM_WORLD);",
    );
    assert_eq!(halves.len(), 2, "{halves:?}");
    assert!(halves.iter().all(|(_, t)| t.is_empty()), "{halves:?}");
    let sub_rank = rank_tests_of(
        "sub_rank",
        "MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);\n\
         MPI_Comm_rank(sub, &x);\n\
         if (x == 0 && argc > 2) MPI_Barrier(MPI_COMM_WORLD);",
    );
    assert!(
        sub_rank.len() == 1 && sub_rank[0].1.is_empty(),
        "{sub_rank:?}"
    );
    let on_sub = rank_tests_of(
        "on_sub",
        "MPI_Comm_dup(MPI_COMM_WORLD, &sub);\n\
         if (rank == 0 && argc > 2) MPI_Barrier(sub);",
    );
    assert!(on_sub.len() == 1 && on_sub[0].1.is_empty(), "{on_sub:?}");
}

/// miniAMR's `main` in small: the rank that takes the `{cond}` side
/// (`root`) parses the command line into globals and a local, and the
/// other side (`other`) gets them from it; then collectives under
/// branches on each.
fn parse_and_broadcast(cond: &str, root: &str, other: &str) -> String {
    format!(
        r#"#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int my_pe;
int steps, perf, refine, change, calls;
static void count_call(void) {{ calls++; }}
static void bump_perf(void) {{ perf++; }}
int main(int argc, char **argv) {{
  int i, params[4], verbose = 0;
  double x = 1, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_pe);
  steps = 2; perf = 0; refine = 1; change = 0;
  if ({cond}) {{
{root}
  }} else {{
{other}
  }}
  for (i = 0; i < steps; i++)
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (perf > 0)
    MPI_Barrier(MPI_COMM_WORLD);
  if (change > 0 && verbose)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}}
"#
    )
}

const PARSE_ON_ROOT: &str = r#"    for (i = 1; i < argc; i++)
      if (!strcmp(argv[i], "--steps")) steps = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--perf")) perf = atoi(argv[++i]);
      else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    if (!change) change = refine;
    params[0] = steps; params[1] = perf; params[2] = change; params[3] = verbose;
    MPI_Bcast(params, 4, MPI_INT, 0, MPI_COMM_WORLD);"#;

const COPY_BACK: &str = r#"    MPI_Bcast(params, 4, MPI_INT, 0, MPI_COMM_WORLD);
    steps = params[0]; perf = params[1]; change = params[2]; verbose = params[3];"#;

/// The 1-based line of `code` that holds `marker`.
fn line_in(code: &str, marker: &str) -> u32 {
    code.lines().position(|l| l.contains(marker)).unwrap() as u32 + 1
}

/// The branch lines, with their dependences, of the collective at the
/// line after `marker`'s (the collective it guards).
fn branches_of_collective_after(report: &StaticReport, code: &str, marker: &str) -> Vec<Row> {
    let line = line_in(code, marker) + 1;
    rows(&report.divergent_collectives)
        .into_iter()
        .filter(|r| r.2 == line)
        .collect()
}

/// Issue 37 (miniAMR): values the root parses and broadcasts in an array
/// that the other ranks copy back are the same on every rank after the
/// branch: no collective under a branch on them is reported, and the
/// branches name the input they come from.
#[test]
fn issue_37_values_the_root_broadcasts_and_the_others_copy_back_agree() {
    let code = parse_and_broadcast("my_pe == 0", PARSE_ON_ROOT, COPY_BACK);
    let report = report("round_trip", &code);
    assert_eq!(rows(&report.divergent_collectives), []);
    let perf = line_in(&code, "if (perf > 0)");
    assert!(
        report
            .input_branches
            .iter()
            .any(|b| b.span.line == perf && b.inputs.contains(&"argv".to_owned())),
        "{:?}",
        inputs(&report.input_branches)
    );
    // `if (!my_pe)`, as miniAMR spells it, and calls after the broadcast
    // that write other globals (miniAMR's `ma_malloc` counts its calls).
    let code = parse_and_broadcast(
        "!my_pe",
        &format!("{PARSE_ON_ROOT}\n    count_call();"),
        &format!("{COPY_BACK}\n    count_call();"),
    );
    assert_eq!(
        rows(&report_of_c("round_trip_not", &code).divergent_collectives),
        []
    );
}

/// What makes a value differ between ranks keeps it rank-dependent: a
/// value the root parses while the others take a constant; a root that
/// broadcasts another value than the one it keeps, or changes it after
/// (itself or in a function it calls); a parsing side that is not the
/// broadcast's root's.
#[test]
fn issue_37_values_that_do_not_make_the_round_trip_stay_rank_dependent() {
    let cases = [
        (
            "different",
            parse_and_broadcast("my_pe == 0", "    perf = atoi(argv[1]);", "    perf = 0;"),
        ),
        (
            "sends_another",
            parse_and_broadcast(
                "my_pe == 0",
                &PARSE_ON_ROOT.replace("params[1] = perf;", "params[1] = steps;"),
                COPY_BACK,
            ),
        ),
        (
            "changes_after",
            parse_and_broadcast(
                "my_pe == 0",
                &format!("{PARSE_ON_ROOT}\n    perf = atoi(argv[1]);"),
                COPY_BACK,
            ),
        ),
        (
            "callee_changes_after",
            parse_and_broadcast(
                "my_pe == 0",
                &format!("{PARSE_ON_ROOT}\n    bump_perf();"),
                COPY_BACK,
            ),
        ),
        (
            "non_roots_parse",
            parse_and_broadcast("my_pe != 0", PARSE_ON_ROOT, COPY_BACK),
        ),
        (
            "other_root",
            parse_and_broadcast("my_pe == 1", PARSE_ON_ROOT, COPY_BACK),
        ),
    ];
    for (name, code) in cases {
        let report = report(name, &code);
        let found = branches_of_collective_after(&report, &code, "if (perf > 0)");
        let branch = line_in(&code, "if (perf > 0)");
        let on_the_rank: Vec<(u32, bool)> = found
            .iter()
            .flat_map(|r| r.3.iter().map(|(l, d)| (*l, d.contains(&Dependence::Rank))))
            .collect();
        assert_eq!(
            on_the_rank,
            [(branch, true)],
            "{name}: {:?}",
            rows(&report.divergent_collectives)
        );
    }
}

/// The sparse data exchange of Hoefler et al. (NBX): an `MPI_Ibarrier`
/// made once the rank's synchronous sends are done, in a loop that probes
/// for any sender. Built with `-O2`, clang ends the scope of the loop's
/// locals (their lifetimes) in a block whose `switch` has no line; a
/// finding names a line of the source for every branch, never line 0.
#[test]
fn branches_of_an_optimised_build_have_lines() {
    const NBX: &str = r#"#include <mpi.h>
int main(int argc, char **argv) {
  int rank, size, sent = 0, active = 0;
  MPI_Request sends[2], barrier;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int d = 0; d < 2; d++)
    MPI_Issend(&rank, 1, MPI_INT, (rank + d + 1) % size, 7, MPI_COMM_WORLD, &sends[d]);
  for (;;) {
    int flag, v, done, all;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &st);
    if (flag)
      MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (active) {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) break;
    } else {
      MPI_Testall(2, sends, &all, MPI_STATUSES_IGNORE);
      if (all) { MPI_Ibarrier(MPI_COMM_WORLD, &barrier); active = 1; }
    }
  }
  MPI_Finalize();
  return sent;
}
"#;
    let report = report_of_c_flags("nbx", NBX, &["-O2"]);
    let ibarrier = report
        .divergent_collectives
        .iter()
        .find(|d| d.call == "MPI_Ibarrier")
        .expect("the Ibarrier depends on MPI_Testall's flag");
    assert!(!ibarrier.branches.is_empty());
    for branch in &ibarrier.branches {
        assert!(
            (11..=25).contains(&branch.span.line),
            "a branch outside the loop's lines: {:?}",
            ibarrier.branches
        );
    }
}
