//! One finding of every kind, on the erroneous example of its code page:
//! the report mbhybrid gives (or will give) for that program. The snapshot
//! tests render them in every format and the code pages quote them.

use mbh_diagnostics::explain;
use mbh_trace::{Finding, FindingKind, Location, Report, Role, Severity};
use serde_json::json;
use std::path::Path;

/// The run id the fixtures' replay commands name.
pub const RUN_ID: &str = "20260105-101500-4242";

/// The fenced blocks of `lang` in a page, in order.
pub fn blocks<'a>(page: &'a str, lang: &str) -> Vec<&'a str> {
    let open = format!("```{lang}\n");
    let mut found = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find(&open) {
        let body = &rest[start + open.len()..];
        let end = body.find("```").expect("an unclosed code block");
        found.push(&body[..end]);
        rest = &body[end + 3..];
    }
    found
}

/// The erroneous example of a kind's page: its first C block.
pub fn example(kind: FindingKind) -> &'static str {
    let page = explain::page_of(kind).expect("every kind has a page");
    blocks(page, "c")[0]
}

/// A place in `source`: the `nth` (0-based) occurrence of `needle`, as a
/// 1-based line and column.
pub fn position(source: &str, needle: &str, nth: usize) -> (u32, u32) {
    let offset = source
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` (#{nth}) is not in the example"))
        .0;
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line as u32, column as u32)
}

struct Builder {
    source: &'static str,
    finding: Finding,
}

impl Builder {
    fn new(kind: FindingKind, severity: Severity, message: &str) -> Self {
        Builder {
            source: example(kind),
            finding: Finding::new(kind, severity, message),
        }
    }

    fn line(&self, needle: &str) -> u32 {
        position(self.source, needle, 0).0
    }

    fn at(mut self, needle: &str, rank: i32, call: Option<&str>, role: Role, label: &str) -> Self {
        let (line, column) = position(self.source, needle, 0);
        self.finding.locations.push(Location {
            file: "app.c".into(),
            line,
            column,
            rank,
            call: call.map(str::to_string),
            function: None,
            role,
            label: label.into(),
        });
        self
    }

    fn primary(self, needle: &str, rank: i32, call: Option<&str>, label: &str) -> Self {
        self.at(needle, rank, call, Role::Primary, label)
    }

    fn secondary(self, needle: &str, rank: i32, call: Option<&str>, label: &str) -> Self {
        self.at(needle, rank, call, Role::Secondary, label)
    }

    fn note(mut self, note: &str) -> Self {
        self.finding.notes.push(note.into());
        self
    }

    fn help(mut self, help: &str) -> Self {
        self.finding.help = Some(help.into());
        self
    }

    fn run(mut self, interleaving: u32, ranks: &[i32]) -> Self {
        self.finding.interleaving = interleaving;
        self.finding.ranks = ranks.to_vec();
        self.finding.replay = Some(format!(
            "mbhybrid replay {RUN_ID} --interleaving {interleaving}"
        ));
        self
    }
}

/// The finding of `kind` for its page's example.
pub fn finding(kind: FindingKind) -> Finding {
    use FindingKind as K;
    use Severity::{Error, Warning};
    let b = |severity, message: &str| Builder::new(kind, severity, message);
    let built = match kind {
        K::Deadlock => {
            let b = b(
                Error,
                "deadlock: rank 0 waits for messages from ranks that already finished",
            );
            let wildcard = b.line("MPI_Recv(&x");
            b.primary(
                "MPI_Recv(&y",
                0,
                Some("MPI_Recv"),
                "(2) then blocked in `MPI_Recv` waiting for rank 1",
            )
            .secondary(
                "MPI_Recv(&x",
                0,
                Some("MPI_Recv"),
                "(1) this wildcard receive took rank 1's message",
            )
            .secondary(
                "MPI_Send",
                2,
                Some("MPI_Send"),
                "rank 2's message is never received",
            )
            .note("ranks 1 and 2 had already ended (finalized)")
            .note(&format!(
                "in this interleaving rank 0's `MPI_Recv` at app.c:{wildcard} took rank 1's message (rank 2 could match it too)"
            ))
            .help("receive the second message from the rank the first did not match (`status.MPI_SOURCE`), or with `MPI_ANY_SOURCE` too")
            .run(2, &[0])
        }
        K::Assertion => {
            let b = b(Error, "assertion `first == 1` failed on rank 0");
            let line = b.line("assert(first");
            b.primary("assert(first", 0, Some("main"), "this assertion failed")
                .secondary(
                    "MPI_Recv(&first",
                    0,
                    Some("MPI_Recv"),
                    "this wildcard receive took rank 2's message",
                )
                .note(&format!(
                    "rank 0 printed:\napp: app.c:{line}: main: Assertion `first == 1' failed."
                ))
                .run(2, &[0])
        }
        K::Crash => b(Error, "rank 1 crashed with SIGSEGV")
            .primary("printf(", 1, Some("main"), "the rank crashed here")
            .note("the invalid address was 0x4")
            .help("rebuild with `-- -fsanitize=address -g` or run the rank under a debugger to see the invalid access")
            .run(1, &[1]),
        K::Exit => b(Error, "rank 0 exited with status 2")
            .primary("return errors", 0, Some("main"), "the rank exited from here")
            .secondary(
                "MPI_Recv(&value",
                0,
                Some("MPI_Recv"),
                "this wildcard receive took rank 2's message first",
            )
            .help("a nonzero exit status makes MPI launchers report the job as failed; check the error path that exits")
            .run(2, &[0]),
        K::MpiError => b(
            Error,
            "`MPI_Recv` failed on rank 0 with `MPI_ERR_TRUNCATE`: the message is longer than the receive buffer",
        )
        .primary(
            "MPI_Recv(&one",
            0,
            Some("MPI_Recv"),
            "this wildcard receive has room for 1 `MPI_INT` and took rank 2's message",
        )
        .secondary("MPI_Send(four", 2, Some("MPI_Send"), "rank 2 sent 4 `MPI_INT`")
        .note("interleaving 2 forced this receive to take rank 2's message; interleaving 1 took rank 1's")
        .help("give messages of different sizes different tags, or receive from a specific rank")
        .run(2, &[0, 2]),
        K::InvalidArgument => b(
            Error,
            "rank 2 passed an invalid rank to `MPI_Send` (MPI error 873089542)",
        )
        .primary(
            "MPI_Send(&token",
            2,
            Some("MPI_Send"),
            "MPI rejected the rank argument of this call",
        )
        .note("MPI's message: Invalid rank has value 3 but must be nonnegative and less than 3")
        .note("under `MPI_ERRORS_ARE_FATAL` (the default handler) the error stopped the job, as MPI would have")
        .help("ranks must be between 0 and the communicator's size - 1 (or `MPI_PROC_NULL`); only receives and probes may use `MPI_ANY_SOURCE`")
        .run(1, &[2]),
        K::TypeMismatch => b(
            Error,
            "rank 1 receives `MPI_FLOAT` from a send of `MPI_DOUBLE` on rank 0",
        )
        .primary(
            "MPI_Recv(received",
            1,
            Some("MPI_Recv"),
            "(2) received as 8 `MPI_FLOAT`",
        )
        .secondary(
            "MPI_Send(values",
            0,
            Some("MPI_Send"),
            "(1) sent as 4 `MPI_DOUBLE`",
        )
        .note("the sizes agree (32 bytes), so MPI reports no error: the receiver reinterprets the bytes")
        .help("receive with the datatype that was sent, or a datatype with the same type signature")
        .run(1, &[0, 1]),
        K::CollectiveMismatch => b(
            Error,
            "ranks call different collectives at the same point: rank 0 `MPI_Bcast`, rank 1 `MPI_Allreduce`",
        )
        .primary(
            "MPI_Bcast(",
            0,
            Some("MPI_Bcast"),
            "collective number 1 here is `MPI_Bcast`",
        )
        .secondary(
            "MPI_Allreduce(",
            1,
            Some("MPI_Allreduce"),
            "collective number 1 here is `MPI_Allreduce`",
        )
        .help("call the same collectives, in the same order and with the same root, on every rank of `MPI_COMM_WORLD`")
        .run(1, &[0, 1]),
        K::BufferingHazard => b(
            Warning,
            "`MPI_Send` on ranks 0 and 1 completes only because MPI buffers the messages",
        )
        .primary(
            "MPI_Send(&mine",
            0,
            Some("MPI_Send"),
            "rank 0 sends to rank 1 before receiving",
        )
        .secondary(
            "MPI_Send(&mine",
            1,
            Some("MPI_Send"),
            "rank 1 sends to rank 0 before receiving",
        )
        .note("without buffering (`--buffering zero`, which the MPI standard allows) these sends deadlock")
        .help("exchange with `MPI_Sendrecv`, or post the receives with `MPI_Irecv` before the sends")
        .run(1, &[0, 1]),
        K::ResourceLeak => b(
            Warning,
            "communicator created by `MPI_Comm_split` is never freed",
        )
        .primary("MPI_Comm_split(", 0, Some("MPI_Comm_split"), "created here")
        .secondary(
            "MPI_Finalize",
            0,
            Some("MPI_Finalize"),
            "still allocated at `MPI_Finalize`",
        )
        .note("ranks 1 and 2 leak it too")
        .help("free it with `MPI_Comm_free` once it is no longer needed")
        .run(1, &[0, 1, 2]),
        K::RequestLeak => b(
            Warning,
            "the request of `MPI_Isend` on rank 0 is never completed or freed",
        )
        .primary("MPI_Isend(", 0, Some("MPI_Isend"), "this request is never completed")
        .secondary(
            "MPI_Finalize",
            0,
            Some("MPI_Finalize"),
            "still pending at `MPI_Finalize`",
        )
        .help("complete it with `MPI_Wait` (or `MPI_Test` until it succeeds) before reusing its buffer and before `MPI_Finalize`")
        .run(1, &[0]),
        K::MissingStart => b(
            Warning,
            "`MPI_Wait` on rank 0 waits on a persistent request that was never started",
        )
        .primary(
            "MPI_Wait(",
            0,
            Some("MPI_Wait"),
            "(2) this request is inactive: no `MPI_Start` since it was created",
        )
        .secondary(
            "MPI_Send_init(",
            0,
            Some("MPI_Send_init"),
            "(1) the persistent request is created here",
        )
        .note("the wait returns at once and nothing is sent")
        .help("waiting on an inactive request is legal and returns at once with an empty status; if the program meant to communicate, call `MPI_Start` (or `MPI_Startall`) on the request before each wait")
        .run(1, &[0]),
        K::BufferReuse => b(
            Error,
            "rank 0 wrote to the buffer of `MPI_Isend` before the send completed",
        )
        .primary("= 3;", 0, None, "(2) written here")
        .secondary(
            "MPI_Isend(",
            0,
            Some("MPI_Isend"),
            "(1) `MPI_Isend` started here",
        )
        .note("the receiver may get the old contents, the new ones, or a mix")
        .help("write to a send buffer only after `MPI_Wait` or a successful `MPI_Test` completes its request")
        .run(1, &[0]),
        K::AfterFinalize => b(Error, "rank 0 called `MPI_Comm_free` after `MPI_Finalize`")
            .primary(
                "MPI_Comm_free(",
                0,
                Some("cleanup"),
                "called after `MPI_Finalize`",
            )
            .secondary(
                "MPI_Finalize",
                0,
                Some("MPI_Finalize"),
                "`MPI_Finalize` returned here",
            )
            .note("ranks 1 and 2 did the same")
            .help("finish communication and free MPI objects before `MPI_Finalize`")
            .run(1, &[0, 1, 2]),
        K::Timeout => b(Error, "the run did not finish within 120 s")
            .primary(
                "MPI_Finalize",
                1,
                Some("MPI_Finalize"),
                "rank 1 was waiting in `MPI_Finalize`",
            )
            .note("rank 0 was not in an MPI call (computing, or waiting outside MPI)")
            .help("if the program needs more time, raise `--timeout` (now 120 s); a hang in MPI calls is a deadlock the run could not confirm")
            .run(1, &[0, 1]),
        K::BeforeInit => b(Error, "rank 0 called `MPI_Send` before `MPI_Init`")
            .primary(
                "MPI_Send(",
                0,
                Some("announce"),
                "called before `MPI_Init`",
            )
            .help("call `MPI_Init` (or `MPI_Init_thread`) first; before it only `MPI_Initialized`, `MPI_Finalized` and the version queries are allowed")
            .run(1, &[0, 1]),
        K::BufferType => b(
            Error,
            "`MPI_Bcast` buffer: `steps` is an `int` (4 bytes) but the datatype is `MPI_DOUBLE` (8 bytes)",
        )
        .primary(
            "MPI_Bcast(",
            0,
            Some("MPI_Bcast"),
            "(1) the buffer is read and written as `MPI_DOUBLE`",
        )
        .secondary("int rank, steps", 0, None, "(2) `steps` is declared here")
        .note("found by `mbhybrid build`'s static analysis of the call's arguments")
        .help("use the MPI datatype of the buffer's C type (`MPI_INT` for `int`, `MPI_DOUBLE` for `double`, ...), or `MPI_BYTE` with a count in bytes for raw data")
        .run(1, &[0, 1]),
        K::BufferOverflow => b(
            Error,
            "`MPI_Recv` receive buffer: `buf` holds 4000 bytes but 2000 elements of `MPI_INT` need 8000",
        )
        .primary(
            "MPI_Recv(",
            1,
            Some("MPI_Recv"),
            "(1) the receive buffer is written past the end of `buf`",
        )
        .secondary("int rank, buf", 1, None, "(2) `buf` is declared here")
        .note("found by `mbhybrid build`'s static analysis of the call's arguments")
        .help("make the count at most the buffer's size in elements, or the buffer as large as the count")
        .run(1, &[1]),
        K::CollectiveDivergence => b(
            Error,
            "`MPI_Barrier` may not be made alike by every rank (some may skip it, or make it in another order): the branch at app.c:10 depends on the rank",
        )
        .primary(
            "MPI_Barrier(",
            0,
            Some("MPI_Barrier"),
            "every rank of the communicator must make this call",
        )
        .secondary(
            "if (work",
            0,
            None,
            "this branch decides whether the call runs",
        )
        .note("confirmed in this run: the ranks made this call rank 0 1 time, rank 1 0 times")
        .note("found by `mbhybrid build`'s analysis of the program's control flow")
        .help("make every rank of the communicator reach the collective, and let the condition decide only the work around it")
        .run(1, &[0]),
        K::UnreceivedMessage => b(
            Error,
            "a message that rank 0 sent to rank 1 with tag 7 was never received",
        )
        .primary(
            "MPI_Send(",
            0,
            Some("MPI_Send"),
            "sent to rank 1, tag 7; no receive took it before `MPI_Finalize`",
        )
        .help("receive every message a rank sends before `MPI_Finalize` (MPI-4.0 §11.2.2): add the matching receive, or do not send it")
        .run(1, &[0]),
        K::ThreadLevel => b(
            Error,
            "rank 0 called `MPI_Barrier` from a thread other than the main one (thread 4243), which MPI_THREAD_FUNNELED does not allow",
        )
        .primary(
            "MPI_Barrier(",
            0,
            Some("MPI_Barrier"),
            "called from thread 4243, not the thread that initialised MPI",
        )
        .help("make MPI calls from the main thread only (in OpenMP: inside `#pragma omp master` or outside parallel regions), or initialise MPI with `MPI_Init_thread` asking for `MPI_THREAD_SERIALIZED` or `MPI_THREAD_MULTIPLE` and check the level `provided`")
        .run(1, &[0, 1]),
        K::RmaEpoch => b(
            Error,
            "window 1 (made by `MPI_Win_allocate` at app.c:9) freed while rank 1's exclusive lock of rank 0 is still open",
        )
        .primary(
            "MPI_Win_free(",
            1,
            Some("MPI_Win_free"),
            "`MPI_Win_free` with an epoch of rank 1 still open on window 1",
        )
        .secondary(
            "MPI_Win_lock(",
            1,
            Some("MPI_Win_lock"),
            "exclusive lock of rank 0 opened here, never closed",
        )
        .help("close every epoch before `MPI_Win_free` (MPI-4.0 §12.2.5): `MPI_Win_unlock`/`MPI_Win_unlock_all` after a lock, `MPI_Win_complete` after `MPI_Win_start`, `MPI_Win_wait` after `MPI_Win_post`")
        .run(1, &[1]),
        K::RmaRace => b(
            Error,
            "`MPI_Put` by rank 1 and `MPI_Put` by rank 2 race on bytes 0..4 of rank 0's window 1 (made by `MPI_Win_allocate` at app.c:9)",
        )
        .primary(
            "MPI_Put(&two",
            2,
            Some("MPI_Put"),
            "(2) `MPI_Put` by rank 2 to rank 0, bytes 0..4 of its window",
        )
        .secondary(
            "MPI_Put(&one",
            1,
            Some("MPI_Put"),
            "(1) `MPI_Put` by rank 1 to rank 0, bytes 0..4 of its window",
        )
        .note("both write them; both are in the same fence epoch: nothing completes either before the next `MPI_Win_fence`")
        .help("separate the two operations by a `MPI_Win_fence`, or make them touch different bytes (MPI-4.0 §12.7)")
        .run(1, &[1, 2]),
    };
    built.finding
}

/// The number of processes each page's example runs on.
pub fn np(kind: FindingKind) -> u32 {
    use FindingKind as K;
    match kind {
        K::Deadlock | K::Assertion | K::Exit | K::MpiError | K::InvalidArgument => 3,
        K::ResourceLeak | K::AfterFinalize | K::RmaRace => 3,
        _ => 2,
    }
}

/// A report with `findings`, from a verification of `./app` on `np`
/// processes that ran `interleavings` interleavings. Built from the JSON
/// contract (docs/json.md), so fields trace/ adds with a default do not
/// break the fixtures.
pub fn report(findings: Vec<Finding>, np: u32, interleavings: u32) -> Report {
    let runs: Vec<serde_json::Value> = (1..=interleavings)
        .map(|interleaving| {
            let ranks: Vec<serde_json::Value> = (0..np)
                .map(|rank| {
                    json!({"rank": rank, "state": "finalized", "exit_status": 0, "operations": 12})
                })
                .collect();
            json!({"interleaving": interleaving, "launcher_exit": 0, "ranks": ranks, "seconds": 0.25})
        })
        .collect();
    serde_json::from_value(json!({
        "tool": "mbhybrid",
        "version": "0.1.0",
        "program": "./app",
        "args": [],
        "np": np,
        "clocks": "lamport",
        "buffering": "infinite",
        "interleavings": interleavings,
        "complete": true,
        "choice_points": {"found": 1, "explored": 1, "abstracted": 0, "mixing_bounded": 0},
        "findings": findings,
        "wildcards": [],
        "barriers": [],
        "run_id": RUN_ID,
        "run_dir": format!(".mbhybrid/runs/{RUN_ID}"),
        "runs": runs,
        "warnings": [],
        "seconds": 0.5,
    }))
    .expect("the fixture report follows docs/json.md")
}

/// The report of one kind's example, with its finding.
pub fn report_of(kind: FindingKind) -> Report {
    let finding = finding(kind);
    let interleavings = finding.interleaving;
    report(vec![finding], np(kind), interleavings)
}

/// Writes the example of `kind` as `app.c` in `dir`.
pub fn write_example(dir: &Path, kind: FindingKind) {
    std::fs::write(dir.join("app.c"), example(kind)).unwrap();
}
