//! Tests of the buffer check (issue 18) on C compiled by clang-16 with the
//! installed MPI's headers.

use mbh_trace::static_report::{BufferAccess, BufferError, BufferErrorKind, Span};

use super::analysis::{report_of_c, report_of_c_with};

/// `(line, kind, argument, object, declared line, datatype, message)`.
type Row = (
    u32,
    BufferErrorKind,
    &'static str,
    &'static str,
    u32,
    &'static str,
    &'static str,
);

fn rows(errors: &[BufferError]) -> Vec<(u32, BufferErrorKind, &str, &str, u32, &str, &str)> {
    errors
        .iter()
        .map(|b| {
            (
                b.span.line,
                b.kind,
                b.argument.as_str(),
                b.object.as_str(),
                b.declared.as_ref().map_or(0, |d| d.line),
                b.datatype.as_str(),
                b.message.as_str(),
            )
        })
        .collect()
}

const TYPES: &str = r#"#include <mpi.h>
#include <stdlib.h>
double table[16];
void f(int rank) {
  int x = 0;
  double d[8];
  long l = 0;
  float fl = 0;
  double *p = malloc(8 * sizeof(double));
  MPI_Send((void *)&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Recv(d, 8, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Bcast(&l, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&fl, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Isend(p, 8, MPI_INT, 1, 0, MPI_COMM_WORLD, 0);
  MPI_Sendrecv(table, 16, MPI_LONG, 1, 0, d, 8, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
"#;

const TYPE_ROWS: [Row; 7] =
    {
        use BufferErrorKind::Type;
        [
        (10, Type, "send buffer", "x", 5, "MPI_DOUBLE",
         "`x` is an `int` (4 bytes) but the datatype is `MPI_DOUBLE` (8 bytes)"),
        (11, Type, "receive buffer", "d", 6, "MPI_INT",
         "`d` is an array of `double` (8 bytes each) but the datatype is `MPI_INT` (4 bytes)"),
        (12, Type, "buffer", "l", 7, "MPI_INT",
         "`l` is a `long` (8 bytes) but the datatype is `MPI_INT` (4 bytes)"),
        (13, Type, "send buffer", "fl", 8, "MPI_DOUBLE",
         "`fl` is a `float` (4 bytes) but the datatype is `MPI_DOUBLE` (8 bytes)"),
        (13, Type, "receive buffer", "x", 5, "MPI_DOUBLE",
         "`x` is an `int` (4 bytes) but the datatype is `MPI_DOUBLE` (8 bytes)"),
        (14, Type, "send buffer", "p", 9, "MPI_INT",
         "`p` points to a `double` (8 bytes) but the datatype is `MPI_INT` (4 bytes)"),
        (15, Type, "send buffer", "table", 3, "MPI_LONG",
         "`table` is an array of `double` (8 bytes each, floating point) but the datatype is \
             `MPI_LONG` (8 bytes, integer)"),
    ]
    };

/// Each planted type bug once, at its call, naming the object where it is
/// declared; the correct receive half of the `MPI_Sendrecv` says nothing.
#[test]
fn issue_18_type_mismatches_are_reported_once_each() {
    let report = report_of_c("types", TYPES);
    assert_eq!(rows(&report.buffer_errors), TYPE_ROWS);
    let first = &report.buffer_errors[0];
    assert_eq!(first.call, "MPI_Send");
    assert_eq!(first.function, "f");
    assert_eq!(
        first.span,
        Span {
            file: "types.c".into(),
            line: 10,
            column: 3
        }
    );
    assert_eq!(
        first.declared,
        Some(Span {
            file: "types.c".into(),
            line: 5,
            column: 0
        })
    );
    // The site is the call's: the report's call list has it as MPI_Send.
    let sites: Vec<u32> = report.calls.iter().map(|c| c.site).collect();
    assert_eq!(sites, [1, 2, 3, 4, 5, 6]);
    assert_eq!(first.site, 1);
    assert_eq!(report.buffer_errors[6].site, 6);
    assert_eq!(
        report.warnings()[0],
        "types.c:10:3: warning: `MPI_Send` send buffer: `x` is an `int` (4 bytes) but the \
         datatype is `MPI_DOUBLE` (8 bytes) (`x` is declared at types.c:5)"
    );
}

/// The same handles are the addresses of globals under Open MPI: the
/// datatypes come from its header, and the findings are the same.
#[test]
fn issue_18_type_mismatches_under_open_mpi() {
    let report = report_of_c_with("types", TYPES, &["mpicc.openmpi", "-showme:compile"]);
    assert_eq!(rows(&report.buffer_errors), TYPE_ROWS);
}

const OVERFLOWS: &str = r#"#include <mpi.h>
#include <stdlib.h>
static double row[4];
void f(void) {
  int buf[1000];
  double g[10][10];
  double *p = malloc(10 * sizeof(double));
  char bytes[16];
  int x;
  MPI_Recv(buf, 2000, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(g, 100, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(g, 101, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&buf[10], 990, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&buf[10], 991, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Irecv(p, 20, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, 0);
  MPI_Recv(p + 5, 5, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Allreduce(MPI_IN_PLACE, row, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Recv(bytes, 17, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(bytes, 16, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Recv(&x, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&x + 1, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
}
"#;

/// Each planted overflow once; the calls that fit (a whole 2-D array,
/// `&buf[10]` with the rest of it, the end of a heap block) say nothing.
#[test]
fn issue_18_overflows_are_reported_once_each() {
    use BufferErrorKind::Overflow;
    let report = report_of_c("overflows", OVERFLOWS);
    let expected: [Row; 8] = [
        (
            10,
            Overflow,
            "receive buffer",
            "buf",
            5,
            "MPI_INT",
            "`buf` holds 4000 bytes but 2000 elements of `MPI_INT` need 8000",
        ),
        (
            12,
            Overflow,
            "send buffer",
            "g",
            6,
            "MPI_DOUBLE",
            "`g` holds 800 bytes but 101 elements of `MPI_DOUBLE` need 808",
        ),
        (
            14,
            Overflow,
            "send buffer",
            "buf",
            5,
            "MPI_INT",
            "`buf` holds 4000 bytes and the buffer starts 40 bytes in, but 991 elements of \
          `MPI_INT` need 3964",
        ),
        (
            15,
            Overflow,
            "receive buffer",
            "p",
            7,
            "MPI_DOUBLE",
            "`p` points to 80 bytes but 20 elements of `MPI_DOUBLE` need 160",
        ),
        (
            17,
            Overflow,
            "receive buffer",
            "row",
            3,
            "MPI_DOUBLE",
            "`row` holds 32 bytes but 5 elements of `MPI_DOUBLE` need 40",
        ),
        (
            18,
            Overflow,
            "receive buffer",
            "bytes",
            8,
            "MPI_BYTE",
            "`bytes` holds 16 bytes but 17 elements of `MPI_BYTE` need 17",
        ),
        (
            20,
            Overflow,
            "receive buffer",
            "x",
            9,
            "MPI_INT",
            "`x` holds 4 bytes but 2 elements of `MPI_INT` need 8",
        ),
        (
            21,
            Overflow,
            "send buffer",
            "x",
            9,
            "MPI_INT",
            "`x` holds 4 bytes and the buffer starts 4 bytes in, but 1 element of `MPI_INT` \
          needs 4",
        ),
    ];
    assert_eq!(rows(&report.buffer_errors), expected);
}

/// Correct code of every kind the check must not flag.
#[test]
fn issue_18_correct_buffers_are_silent() {
    let code = r#"#include <mpi.h>
#include <stdlib.h>
#include <complex.h>
struct particle { int id; double pos[3]; };
union word { int i; double d; };
static void helper(void *anything, double *values, int n) {
  MPI_Send(anything, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(values, n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
}
void f(int rank, int n, MPI_Datatype runtime_type) {
  int x = 0;
  unsigned u = 0;
  long l = 0;
  double a[20], g[10][10];
  char text[64];
  float _Complex z[4];
  struct particle parts[8];
  union word w;
  MPI_Datatype particle_type;
  void *vp = &x;
  int dummy;
  MPI_Datatype dt = rank ? MPI_INT : MPI_DOUBLE;
  MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&u, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&x, 1, MPI_UNSIGNED, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&l, 1, MPI_INT64_T, 1, 0, MPI_COMM_WORLD);
  MPI_Send(a, 20 * sizeof(double), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(vp, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&w, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&w, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(parts, 8, particle_type, 1, 0, MPI_COMM_WORLD);
  MPI_Send(parts, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, a, 20, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Send(&a[10], 10, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(g, 100, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Send(text, 16, MPI_INT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(text, 64, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
  MPI_Send(a, 20 * sizeof(double), MPI_CHAR, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&x, 4, MPI_UNSIGNED_CHAR, 1, 0, MPI_COMM_WORLD);
  MPI_Send(z, 8, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
  MPI_Send(z, 4, MPI_C_FLOAT_COMPLEX, 1, 0, MPI_COMM_WORLD);
  MPI_Send(a, 1, runtime_type, 1, 0, MPI_COMM_WORLD);
  MPI_Send(&x, 1, dt, 1, 0, MPI_COMM_WORLD);
  MPI_Send(a, n, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
  MPI_Reduce(a, rank == 0 ? (void *)g : (void *)&dummy, 20, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(a, &dummy, 20, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Gather(&x, 1, MPI_INT, &dummy, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Send(MPI_BOTTOM, 1, particle_type, 1, 0, MPI_COMM_WORLD);
  helper(&x, a, 20);
}
"#;
    let report = report_of_c("clean", code);
    assert_eq!(rows(&report.buffer_errors), []);
}

/// Where the datatype or the count is unknown before the run, the room the
/// buffer has in its object is left for the runtime to check (issue 18):
/// a derived datatype, and a count read from the command line.
#[test]
fn issue_18_unknown_datatypes_and_counts_leave_the_room_to_the_runtime() {
    let code = r#"#include <mpi.h>
#include <stdlib.h>
struct cell { double v[3]; int id; };
void f(int argc, char **argv, MPI_Datatype cell_type) {
  struct cell cells[10];
  double grid[64];
  int n = atoi(argv[argc - 1]);
  MPI_Send(cells, 10, cell_type, 1, 0, MPI_COMM_WORLD);
  MPI_Recv(&grid[8], n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(grid, 64, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
}
"#;
    let report = report_of_c("rooms", code);
    assert!(
        report.buffer_errors.is_empty(),
        "{:?}",
        report.buffer_errors
    );
    let rooms: Vec<(BufferAccess, u64, &str, u32)> = report
        .buffer_rooms
        .iter()
        .map(|r| {
            let line = r.declared.as_ref().map_or(0, |d| d.line);
            (r.access, r.bytes, r.object.as_str(), line)
        })
        .collect();
    assert_eq!(
        rooms,
        [
            (BufferAccess::Read, 320, "cells", 5),
            (BufferAccess::Write, 448, "grid", 6),
        ],
        "the constant, predefined send of `grid` is decided statically and needs no room"
    );
}
