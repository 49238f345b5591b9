//! What the ranks and the launcher printed, read for what the traces
//! cannot hold: MPI's and the C library's fatal messages, the launchers'
//! reports of a killed rank, and the tails of standard error kept in the
//! report. Each pattern is quoted from a real run in the tests below.

/// The most of a rank's standard error kept in the report.
pub(crate) const STDERR_TAIL: usize = 4000;

/// The call and MPI's words of the report Open MPI's own
/// `MPI_ERRORS_ARE_FATAL` handler prints (Open MPI 4.1.4's words; each line
/// after the process's `[host:pid] `):
///
/// ```text
/// *** An error occurred in MPI_Send
/// *** reported by process [267911169,1]
/// *** on communicator MPI_COMM_SELF
/// *** MPI_ERR_RANK: invalid rank
/// *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
/// ***    and potentially your MPI job)
/// ```
pub(crate) fn open_mpi_fatal_message(stderr: &str) -> Option<(String, String)> {
    let mut said = stderr
        .lines()
        .filter_map(|line| line.split_once("*** ").map(|(_, said)| said.trim()));
    let call = said.find_map(|l| l.strip_prefix("An error occurred in "))?;
    let words = said.find(|l| {
        ![
            "reported by process",
            "on communicator",
            "on file",
            "on win",
            "before MPI",
        ]
        .iter()
        .any(|context| l.starts_with(context))
    })?;
    (!words.is_empty() && !words.starts_with("MPI_ERRORS_ARE_FATAL"))
        .then(|| (call.trim().to_string(), words.to_string()))
}

/// MPI's own words for the error that stopped the rank, from what the
/// runtime printed under `MPI_ERRORS_ARE_FATAL` (`Fatal error in MPI_Xxx:
/// ...`, MPI's error string after it): MPICH's last, most specific line,
/// without its function prefix and the code; Open MPI's whole string
/// (`MPI_ERR_RANK: invalid rank`).
pub(crate) fn mpi_fatal_message(stderr: &str) -> Option<String> {
    let start = stderr.find("Fatal error in ")?;
    let text = &stderr[start..];
    let end = text.find(" (error code ").unwrap_or(text.len());
    let last = text[..end].lines().last()?;
    // `internal_Send(78).: Invalid rank ...` -> `Invalid rank ...`
    let words = match last.find(": ") {
        Some(at) => &last[at + 2..],
        None => last,
    };
    let words = words.trim();
    (!words.is_empty()).then(|| words.to_string())
}

/// A message the C library prints before it aborts a process whose memory
/// it found damaged (glibc's `malloc_printerr` and fortify checks).
pub(crate) fn glibc_fatal_message(line: &str) -> Option<&str> {
    let line = line.trim();
    const HEAP: [&str; 10] = [
        "free(): ",
        "malloc(): ",
        "realloc(): ",
        "calloc(): ",
        "munmap_chunk(): ",
        "malloc_consolidate(): ",
        "_int_free(): ",
        "_int_malloc(): ",
        "double free or corruption",
        "corrupted ",
    ];
    if HEAP.iter().any(|p| line.starts_with(p)) {
        return Some(line);
    }
    // `*** stack smashing detected ***: terminated`
    let fortified = line.strip_prefix("*** ")?;
    let (what, _) = fortified.split_once(" ***")?;
    what.ends_with("detected").then_some(what)
}

pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// glibc's message: `prog: file.c:25: main: Assertion `x != 33' failed.`
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GlibcAssertion {
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) function: String,
    pub(crate) expression: String,
}

pub(crate) fn parse_glibc_assertion(line: &str) -> Option<GlibcAssertion> {
    let marker = ": Assertion `";
    let at = line.find(marker)?;
    let expression = line[at + marker.len()..]
        .strip_suffix("' failed.")?
        .to_string();
    let (rest, function) = line[..at].rsplit_once(": ")?;
    let (_program, file_line) = rest.rsplit_once(": ")?;
    let (file, line_no) = file_line.rsplit_once(':')?;
    Some(GlibcAssertion {
        file: file.to_string(),
        line: line_no.parse().ok()?,
        function: function.to_string(),
        expression,
    })
}

/// The rank and signal of Open MPI's notice on the launcher's standard
/// error: `mpiexec noticed that process rank 1 with PID 0 on node vm exited
/// on signal 6 (Aborted).` (the launcher's name is its `argv[0]`).
pub(crate) fn open_mpi_noticed(stderr: &str) -> Option<(i32, i32)> {
    stderr.lines().find_map(|line| {
        let rest = line.split(" noticed that process rank ").nth(1)?;
        let rank = rest.split_whitespace().next()?.parse::<i32>().ok()?;
        let signal = rest.split(" exited on signal ").nth(1)?;
        let signal = signal
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse::<i32>()
            .ok()?;
        Some((rank, signal))
    })
}

/// The pid and signal of MPICH's Hydra "BAD TERMINATION" banner.
pub(crate) fn hydra_bad_termination(stdout: &str) -> Option<(u32, Option<i32>)> {
    let pid = stdout.lines().find_map(|l| {
        let rest = l.split("PID ").nth(1)?;
        rest.split_whitespace().next()?.parse::<u32>().ok()
    })?;
    let signal = stdout.lines().find_map(|l| {
        let rest = l.split("(signal ").nth(1)?;
        rest.trim_end_matches(')').trim().parse::<i32>().ok()
    });
    Some((pid, signal))
}

/// What the program printed, without the banner MPICH's Hydra appends to
/// its standard output when a rank fails ("BAD TERMINATION OF ONE OF YOUR
/// APPLICATION PROCESSES" between lines of `=`): the launcher's words, not
/// the program's, which a report shows under a finding.
pub(crate) fn without_launcher_banner(stdout: &str) -> &str {
    let Some(title) = stdout.find("BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES") else {
        return stdout;
    };
    // The banner starts at the line of `=` before its title.
    let before = &stdout[..title];
    let rule = before
        .trim_end_matches(|c: char| c != '\n')
        .trim_end_matches('\n')
        .rfind('\n')
        .map_or(0, |at| at + 1);
    let starts_with_rule = stdout[rule..].starts_with("=====");
    if starts_with_rule {
        &stdout[..rule]
    } else {
        &stdout[..before.rfind('\n').map_or(0, |at| at + 1)]
    }
}

pub(crate) fn tail(text: &str) -> String {
    if text.len() <= STDERR_TAIL {
        return text.to_string();
    }
    let mut start = text.len() - STDERR_TAIL;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// The last `n` lines the program printed, without the backtraces MPI
/// libraries print on a fatal signal (the finding already has the line).
pub(crate) fn last_lines(text: &str, n: usize) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_library_backtrace(l))
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(lines[lines.len().saturating_sub(n)..].join("\n"))
}

/// Lines of the backtraces UCX, MPICH and Open MPI print when a rank dies.
pub(crate) fn is_library_backtrace(line: &str) -> bool {
    let t = line.trim();
    t.contains(" [0x")
        || t.chars().all(|c| c == '=')
        || t.contains("==== backtrace")
        || t.contains("Caught signal")
        || is_open_mpi_report(t)
}

/// A line of the reports Open MPI 4.1.4 prints about a process, each after
/// its `[host:pid] `: its `MPI_ERRORS_ARE_FATAL` handler's
/// ([`open_mpi_fatal_message`]) and its signal handler's (MCA
/// `opal_signal`), on a fatal signal:
///
/// ```text
/// [vm:13385] *** Process received signal ***
/// [vm:13385] Signal: Aborted (6)
/// [vm:13385] Signal code:  (-6)
/// [vm:16294] Failing at address: (nil)
/// [vm:13385] [ 6] /tmp/prog(+0x1424)[0x560fc3dcc424]
/// [vm:13385] *** End of error message ***
/// ```
///
/// The runtime records the signal and the frames itself and then lets the
/// handler that was there before run, Open MPI's included: the rank dies
/// as it would without mbhybrid (the report's stack, symbolized, says more
/// than these addresses).
pub(crate) fn is_open_mpi_report(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else {
        return false;
    };
    // `host:pid]`: the host may hold anything but `]`, the pid is digits.
    let Some((process, said)) = rest.split_once("] ") else {
        return false;
    };
    let pid_only = process
        .rsplit_once(':')
        .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
    if !pid_only {
        return false;
    }
    let said = said.trim_start();
    // `*** `: the signal report's first and last lines, and every line of
    // the report of its `MPI_ERRORS_ARE_FATAL` handler (the finding has
    // its words).
    const HEADS: [&str; 5] = [
        "*** ",
        "Signal: ",
        "Signal code:",
        "Failing at address:",
        "Associated errno:",
    ];
    if said.starts_with('[') {
        open_mpi_frame(said)
    } else {
        HEADS.iter().any(|head| said.starts_with(head))
    }
}

/// `[ 6] /tmp/prog(+0x1424)[0x560fc3dcc424]`: a frame of Open MPI's
/// backtrace (its number, then the object, offset and address).
pub(crate) fn open_mpi_frame(said: &str) -> bool {
    said.strip_prefix('[')
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(number, frame)| {
            number.trim().bytes().all(|b| b.is_ascii_digit())
                && !number.trim().is_empty()
                && frame.trim_end().ends_with(']')
                && frame.contains("[0x")
        })
}

/// What the launcher printed, without what says nothing about the program:
/// the rules around Open MPI's banners, its runtime's internal errors
/// (`ORTE_ERROR_LOG`, as when a message it relays is cut by the abort), and
/// the report of Open MPI's own signal handler when `mpiexec` itself
/// crashes. Debian's `mpiexec` of Open
/// MPI 4.1.4 sometimes segfaults in `PMIx_Finalize` while it aborts a job
/// (once a rank failed, or when mbhybrid stops the job): that crash is the
/// launcher's, after the ranks' ends were decided, and is never a finding.
pub(crate) fn launcher_said(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| {
            let t = l.trim();
            let rule = t.len() > 3 && t.bytes().all(|b| b == b'-');
            let noise = is_open_mpi_report(t)
                || t.contains("ORTE_ERROR_LOG: ")
                || t.ends_with(
                    "abort is already in progress...hit ctrl-c again to forcibly terminate",
                );
            !rule && !noise
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `SIGSEGV (segmentation fault)`.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV (segmentation fault)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic exception)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGABRT => "SIGABRT (abort)",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hydra_banner_names_pid_and_signal() {
        let banner = "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n\
                      =   PID 4242 RUNNING AT host\n\
                      =   EXIT CODE: 9\n\
                      YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n";
        assert_eq!(hydra_bad_termination(banner), Some((4242, Some(9))));
        assert_eq!(hydra_bad_termination("nothing"), None);
    }

    #[test]
    fn the_c_library_s_fatal_messages_are_recognised() {
        for line in [
            "double free or corruption (fasttop)",
            "free(): double free detected in tcache 2",
            "malloc(): corrupted top size",
            "corrupted size vs. prev_size",
        ] {
            assert_eq!(glibc_fatal_message(line), Some(line));
        }
        assert_eq!(
            glibc_fatal_message("*** stack smashing detected ***: terminated"),
            Some("stack smashing detected")
        );
        assert_eq!(glibc_fatal_message("the program said free(): hello"), None);
        assert_eq!(glibc_fatal_message("*** not a message"), None);
    }

    #[test]
    fn mpich_fatal_messages_are_shortened_to_their_words() {
        let stderr = "Fatal error in MPI_Send: internal_Send(120): MPI_Send(buf=(nil), count=1, dtype=USER<struct>, 2, 0, MPI_COMM_WORLD) failed\ninternal_Send(78).: Invalid rank has value 2 but must be nonnegative and less than 2 (error code 67783174; MPI_ERRORS_ARE_FATAL)\nAbort(67783174) on node 1\n";
        assert_eq!(
            mpi_fatal_message(stderr).as_deref(),
            Some("Invalid rank has value 2 but must be nonnegative and less than 2")
        );
        assert_eq!(mpi_fatal_message("nothing here"), None);
    }

    #[test]
    fn parses_glibc_assertion_messages() {
        let a = parse_glibc_assertion(
            "crooked: tests/programs/s1.c:31: main: Assertion `x != 33' failed.",
        )
        .unwrap();
        assert_eq!(
            a,
            GlibcAssertion {
                file: "tests/programs/s1.c".into(),
                line: 31,
                function: "main".into(),
                expression: "x != 33".into()
            }
        );
        assert!(parse_glibc_assertion("some other line").is_none());
        // An expression containing the marker's pieces still parses.
        let b = parse_glibc_assertion("a.out: /x/y.c:7: f: Assertion `s[0] == ':' && n' failed.")
            .unwrap();
        assert_eq!(
            (b.file.as_str(), b.line, b.expression.as_str()),
            ("/x/y.c", 7, "s[0] == ':' && n")
        );
    }

    #[test]
    fn hydras_banner_is_not_the_programs_output() {
        let stdout = "read the input\nfirst message from rank 2\n\n\
            ===================================================================================\n\
            =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n\
            =   RANK 0 PID 12 RUNNING AT vm\n\
            ===================================================================================\n";
        assert_eq!(
            without_launcher_banner(stdout),
            "read the input\nfirst message from rank 2\n\n"
        );
        assert_eq!(without_launcher_banner("plain\n"), "plain\n");
    }

    #[test]
    fn tails_keep_the_end_on_char_boundaries() {
        let long = "é".repeat(STDERR_TAIL);
        let t = tail(&long);
        assert!(t.len() <= STDERR_TAIL + 1 && t.ends_with('é'));
        assert_eq!(last_lines("a\nb\n\nc\n", 2).as_deref(), Some("b\nc"));
        assert_eq!(last_lines("\n \n", 2), None);
        let ucx = "bad input\n[host:1:0:1] Caught signal 11 (Segmentation fault)\n==== backtrace ====\n 0  /lib/libucs.so(+0x1) [0x7f00]\n=================\n";
        assert_eq!(last_lines(ucx, 3).as_deref(), Some("bad input"));
    }

    /// Open MPI 4.1.4's words (Debian 12), captured from real runs.
    mod open_mpi {
        pub const ASSERTION_STDERR: &str = "crooked_barrier: examples/crooked_barrier.c:45: int main(int, char **): Assertion `x != 33' failed.
[vm:13385] *** Process received signal ***
[vm:13385] Signal: Aborted (6)
[vm:13385] Signal code:  (-6)
[vm:13385] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f17b065a050]
[vm:13385] [ 1] /lib/x86_64-linux-gnu/libc.so.6(+0x8aeec)[0x7f17b06a8eec]
[vm:13385] [ 2] /lib/x86_64-linux-gnu/libc.so.6(gsignal+0x12)[0x7f17b0659fb2]
[vm:13385] [ 3] /lib/x86_64-linux-gnu/libc.so.6(abort+0xd3)[0x7f17b0644472]
[vm:13385] [ 6] /tmp/hompi/crooked_barrier(+0x1424)[0x560fc3dcc424]
[vm:13385] [ 9] /tmp/hompi/crooked_barrier(+0x1121)[0x560fc3dcc121]
[vm:13385] *** End of error message ***
";
        pub const SEGFAULT_STDERR: &str = "bad input
[vm:16294] *** Process received signal ***
[vm:16294] Signal: Segmentation fault (11)
[vm:16294] Signal code: Address not mapped (1)
[vm:16294] Failing at address: (nil)
[vm:16294] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f0ec4c5a050]
[vm:16294] [ 1] /tmp/hompi/cmp/ompi/segfault_rank1(+0x1264)[0x5635191d9264]
[vm:16294] *** End of error message ***
";
        /// `mpiexec` segfaulting in `PMIx_Finalize` while it aborts a job.
        pub const LAUNCHER_CRASH: &str = "--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
mpiexec: abort is already in progress...hit ctrl-c again to forcibly terminate

[vm:13377] *** Process received signal ***
[vm:13377] Signal: Segmentation fault (11)
[vm:13377] Signal code: Address not mapped (1)
[vm:13377] Failing at address: (nil)
[vm:13377] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f1abd322050]
[vm:13377] [ 1] /lib/x86_64-linux-gnu/libpmix.so.2(PMIx_Finalize+0x703)[0x7f1aba250e83]
[vm:13377] [ 7] mpiexec(+0x13b9)[0x5585196083b9]
[vm:13377] [10] mpiexec(+0x1131)[0x558519608131]
[vm:13377] *** End of error message ***
[vm:28409] [[519,0],0] ORTE_ERROR_LOG: Out of resource in file ../../../orte/util/show_help.c at line 507
";
        pub const NOTICED: &str =
            "--------------------------------------------------------------------------
Primary job  terminated normally, but 1 process returned
a non-zero exit code. Per user-direction, the job has been aborted.
--------------------------------------------------------------------------
--------------------------------------------------------------------------
mpiexec noticed that process rank 0 with PID 0 on node vm exited on signal 9 (Killed).
--------------------------------------------------------------------------
";
        pub const FATAL_ERROR: &str = "[vm:25364] *** An error occurred in MPI_Send
[vm:25364] *** reported by process [267911169,1]
[vm:25364] *** on communicator MPI_COMM_SELF
[vm:25364] *** MPI_ERR_RANK: invalid rank
[vm:25364] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[vm:25364] ***    and potentially your MPI job)
";
        /// What the runtime prints under `MPI_ERRORS_ARE_FATAL`, with Open
        /// MPI's error string.
        pub const RUNTIME_FATAL: &str =
            "Fatal error in MPI_Send: MPI_ERR_RANK: invalid rank (error code 6; MPI_ERRORS_ARE_FATAL)\n";
    }

    #[test]
    fn open_mpi_s_signal_report_is_not_what_the_rank_printed() {
        let printed: String = open_mpi::ASSERTION_STDERR
            .lines()
            .filter(|l| parse_glibc_assertion(l).is_none())
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(last_lines(&printed, 3), None);
        assert_eq!(
            last_lines(open_mpi::SEGFAULT_STDERR, 3).as_deref(),
            Some("bad input")
        );
        // The program's own lines that merely look alike stay.
        for kept in [
            "[rank 1] Signal: 3 received",
            "[vm:12x] Signal: Aborted (6)",
            "[vm:1] [ 0] no address here",
        ] {
            assert!(!is_library_backtrace(kept), "{kept}");
        }
    }

    #[test]
    fn the_launcher_s_own_crash_and_rules_are_not_shown() {
        assert_eq!(
            last_lines(&launcher_said(open_mpi::LAUNCHER_CRASH), 5).as_deref(),
            Some("Primary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.")
        );
    }

    #[test]
    fn open_mpi_names_the_rank_it_noticed() {
        assert_eq!(open_mpi_noticed(open_mpi::NOTICED), Some((0, 9)));
        assert_eq!(
            open_mpi_noticed("mpirun noticed that process rank 12 with PID 4242 on node n3 exited on signal 15 (Terminated)."),
            Some((12, 15))
        );
        assert_eq!(open_mpi_noticed(open_mpi::LAUNCHER_CRASH), None);
    }

    #[test]
    fn open_mpi_fatal_messages_give_the_call_and_its_words() {
        assert_eq!(
            open_mpi_fatal_message(open_mpi::FATAL_ERROR),
            Some((
                "MPI_Send".to_string(),
                "MPI_ERR_RANK: invalid rank".to_string()
            ))
        );
        assert_eq!(open_mpi_fatal_message("nothing here"), None);
        assert_eq!(
            mpi_fatal_message(open_mpi::RUNTIME_FATAL).as_deref(),
            Some("MPI_ERR_RANK: invalid rank")
        );
        // Its lines are left out of what the rank printed: the finding
        // has the words.
        assert_eq!(last_lines(open_mpi::FATAL_ERROR, 3), None);
    }

    #[test]
    fn signals_have_readable_names() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV (segmentation fault)");
        assert_eq!(signal_name(64), "signal 64");
    }
}
