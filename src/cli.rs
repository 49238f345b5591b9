//! The command line as the user types it (clap derive). `commands/` turns
//! these into the library crates' configurations.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Verifies MPI programs in C over the space of MPI nondeterminism.
#[derive(Debug, Parser)]
#[command(name = "mbhybrid", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile C/C++ sources with clang, record and instrument every MPI call
    /// site, and link against the mbhybrid runtime.
    ///
    /// Writes OUT and OUT.mbh.json (the table of MPI call sites). Flags after
    /// `--` reach clang (compile and link): `mbhybrid build -o app app.c -- -O1 -lm`.
    Build(BuildArgs),
    /// Run an MPI program under the mbhybrid runtime and report what went wrong.
    ///
    /// Exit status: 0 when nothing was found and the search covered every
    /// interleaving, 1 when there are findings, 2 for usage errors and tool
    /// failures (also after the report), 3 when nothing was found but the
    /// coverage is partial (a budget stopped the search, or a bound skipped
    /// choice points).
    Verify(VerifyArgs),
    /// Re-run one recorded interleaving of an earlier `verify`, with every
    /// wildcard receive forced to the sender it took then.
    ///
    /// `mbhybrid replay 20261121-233015-12345 --interleaving 2`
    ///
    /// Exit status: 0 nothing found, 1 findings, 2 errors (a forced match
    /// that did not happen included).
    Replay(ReplayArgs),
    /// Run an MPI program once with every wildcard receive deterministic:
    /// each takes the sender logical time chooses (Zhou et al., Deterministic Message Passing), the same on
    /// every run, at any speed, without a recording.
    ///
    /// `mbhybrid run -n 4 ./app input.dat`
    ///
    /// The program's output is its own. Exit status: the program's, or 1
    /// when the job was stopped (a deadlock the wait-for graph confirmed,
    /// or `--timeout`), 2 for usage errors.
    Run(RunArgs),
    /// Verify, then tell which `MPI_Barrier` calls can be deleted without
    /// changing what any wildcard receive can match (Sharma et al.'s Fib algorithm).
    ///
    /// Exit status as for `verify` (0, 1, 2, or 3 for partial coverage).
    AuditBarriers(AuditArgs),
    /// The static report alone: functions, loops and their abstraction
    /// decisions, zones, wildcard sites, calls the runtime cannot handle.
    Analyze(AnalyzeArgs),
    /// Print the page of a finding code: what it means, an example, the fix.
    ///
    /// `mbhybrid explain MBH0001` (or `0001`, or `1`).
    Explain(ExplainArgs),
    /// Print the folder of MPI compiler wrapper names (mpicc, mpicxx, mpic++,
    /// mpiCC) for the compiler drivers; put it first on PATH to build any
    /// project through them, with no file edited.
    ///
    /// `PATH="$(mbhybrid wrappers):$PATH" make` (Makefiles that call `$(MPICC)`
    /// or set `CXX = mpicxx`, `./configure` scripts; with CMake, give
    /// `-DCMAKE_CXX_COMPILER=mpicxx` too). The names are links to mbhybrid,
    /// made beside it on first use; the drivers find the MPI's own wrappers
    /// for its flags further on the PATH.
    Wrappers,
}

/// `mbhybrid audit-barriers`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Write a unified diff deleting the irrelevant barriers (apply with
    /// `patch -p1`).
    #[arg(long, value_name = "FILE")]
    pub patch: Option<PathBuf>,
    /// The directory the patch is meant to be applied in (`patch -p1` or
    /// `git apply` run there); its paths are relative to it [default: the
    /// deepest directory holding the sources, the directory the program was
    /// built in and the current one, as the command says when it writes
    /// the patch].
    #[arg(long, value_name = "DIR", requires = "patch")]
    pub patch_root: Option<PathBuf>,
    /// Everything `verify` takes.
    #[command(flatten)]
    pub verify: VerifyArgs,
}

/// `mbhybrid analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// C or C++ sources, or LLVM IR (`.ll`, `.bc`).
    #[arg(required = true, value_name = "FILES")]
    pub sources: Vec<PathBuf>,
    /// Flags for clang, after `--`.
    #[arg(last = true, value_name = "CC_FLAGS", allow_hyphen_values = true)]
    pub cc_flags: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = AnalyzeFormat::Human)]
    pub format: AnalyzeFormat,
    /// A mixing bound for the zone opened by the collective at FILE:LINE.
    #[arg(long, value_name = "FILE:LINE=K", value_parser = parse_zone_bound)]
    pub zone_bound: Vec<mbh_instrument::ZoneBound>,
    /// The MPI whose mpi.h to compile with (default: MBHYBRID_MPI, else the
    /// MPI of the mpicc on PATH).
    #[arg(long, value_enum, value_name = "MPI")]
    pub mpi: Option<MpiArg>,
}

/// An MPI implementation (`--mpi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MpiArg {
    /// MPICH (and MPIs that keep its ABI).
    Mpich,
    /// Open MPI.
    Openmpi,
}

impl MpiArg {
    /// The family it names.
    pub fn family(self) -> mbh_instrument::MpiFamily {
        match self {
            MpiArg::Mpich => mbh_instrument::MpiFamily::Mpich,
            MpiArg::Openmpi => mbh_instrument::MpiFamily::OpenMpi,
        }
    }
}

/// `mbhybrid explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The code (`MBH0001`, `0001` or `1`).
    #[arg(value_name = "CODE")]
    pub code: String,
}

/// `mbhybrid replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run id a finding's replay command names (a directory of the run
    /// root), or the run directory itself.
    #[arg(value_name = "RUN_ID")]
    pub run: String,
    /// The interleaving to replay (1-based).
    #[arg(long, short = 'i', value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub interleaving: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The run root the run id is looked up in.
    #[arg(long, value_name = "DIR", default_value = mbh_trace::layout::DEFAULT_RUN_ROOT)]
    pub run_dir: PathBuf,
}

/// Which logical clocks track causality (`--clocks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClocksArg {
    /// Lazy Lamport clocks (LLCP): cheapest; may miss a potential match
    /// when several sources of nondeterminism interact (DAMPI: Vo's dissertation, Fig 5.3).
    Lamport,
    /// Lazy vector clocks (LVCP): finds every potential match, at np
    /// integers per message.
    Vector,
}

/// How standard-mode sends are buffered (`--buffering`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BufferingArg {
    /// As the MPI library does (small sends complete eagerly); runs that
    /// complete only thanks to buffering are reported as `buffering-hazard`.
    Infinite,
    /// Every standard send is synchronous, so deadlocks that need zero
    /// buffering happen.
    Zero,
    /// Explore under both.
    Both,
}

/// Which search explores the wildcard outcomes (`--search`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchArg {
    /// Depth first over the choice points the clocks find.
    Guided,
    /// Every sender the traces show, trusting no clock (a reference for
    /// small programs; `--mixing-bound` and `--loop-abstraction` do not
    /// apply).
    Exhaustive,
}

/// A level of findings that fails the run (`--deny`, `-D`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DenyArg {
    /// Warnings (leaks, buffering hazards, collective divergence, ...)
    /// make the exit status 1, as errors do.
    Warnings,
}

/// Loop-iteration abstraction (`--loop-abstraction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoopAbstractionArg {
    /// Explore every wildcard outcome inside loops.
    Off,
    /// Keep the first outcome of wildcard receives inside loops marked with
    /// `MPI_Pcontrol(7301, id)` (by hand, or by `build`'s analysis).
    Auto,
    /// Also inside loops marked `MPI_Pcontrol(7304, id)`: every loop with
    /// wildcard receives.
    All,
}

/// `mbhybrid build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The executable to write (its site table goes to OUT.mbh.json).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "OUT",
        default_value = "a.out"
    )]
    pub output: PathBuf,
    /// C or C++ sources, or LLVM IR (`.ll`, `.bc`).
    #[arg(required = true, value_name = "FILES")]
    pub sources: Vec<PathBuf>,
    /// Flags for clang, after `--` (for example `-O1 -DN=64 -lm`).
    #[arg(last = true, value_name = "CC_FLAGS", allow_hyphen_values = true)]
    pub cc_flags: Vec<String>,
    /// The directory holding libmbhybrid_rt.so, or a subdirectory per MPI
    /// holding it (default: beside the mbhybrid executable).
    #[arg(long, value_name = "DIR")]
    pub runtime_dir: Option<PathBuf>,
    /// The MPI to build with (default: MBHYBRID_MPI, else the MPI of the
    /// mpicc on PATH).
    #[arg(long, value_enum, value_name = "MPI")]
    pub mpi: Option<MpiArg>,
    /// A mixing bound for the zone opened by the collective at FILE:LINE
    /// (repeatable; overrides `mbhybrid.toml`'s `[zones]`). K < 0: unbounded.
    #[arg(long, value_name = "FILE:LINE=K", value_parser = parse_zone_bound)]
    pub zone_bound: Vec<mbh_instrument::ZoneBound>,
    /// Do not check loads and stores against the buffers of pending
    /// nonblocking calls: a buffer written or read before its `MPI_Wait`
    /// goes unseen (but for small packed sends), and compute loops run at
    /// full speed. `mbhybrid-cc` takes MBHYBRID_ACCESS_CHECKS=off instead.
    #[arg(long)]
    pub no_access_checks: bool,
}

fn parse_zone_bound(spec: &str) -> Result<mbh_instrument::ZoneBound, String> {
    mbh_instrument::ZoneBound::parse(spec)
}

/// How to print the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people: findings with source snippets of every rank's lines.
    Human,
    /// One `file:line:col: error: [MBHxxxx] message` line per location, for editors.
    Short,
    /// The JSON object of the documentation (docs/json.md).
    Json,
    /// SARIF 2.1.0, for code-scanning viewers (VS Code, GitHub).
    Sarif,
}

/// How to print the static report: it holds no findings, so the
/// findings' `short` and `sarif` forms do not apply (and are refused,
/// rather than silently printed as `human`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AnalyzeFormat {
    /// For people: a summary, then wildcard sites, loops and zones.
    Human,
    /// The `StaticReport` object (docs/formats.md).
    Json,
}

/// The MPI job a command launches, as `verify`, `audit-barriers` and `run`
/// take it.
#[derive(Debug, Args)]
pub struct JobArgs {
    /// Number of MPI processes.
    #[arg(short = 'n', long = "np", value_name = "NP", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub np: u32,
    /// Launcher command template; `{np}` is replaced by the number of
    /// processes and the program and its arguments are appended (default:
    /// the MPI's `mpiexec -n {np}`).
    #[arg(long, value_name = "TEMPLATE")]
    pub launcher: Option<String>,
    /// The MPI to run on (default: the one the program is linked against;
    /// for a program that does not say, MBHYBRID_MPI, else the MPI of the
    /// mpicc on PATH).
    #[arg(long, value_enum, value_name = "MPI")]
    pub mpi: Option<MpiArg>,
    /// Where run directories (traces, outputs) go.
    #[arg(long, value_name = "DIR", default_value = mbh_trace::layout::DEFAULT_RUN_ROOT)]
    pub run_dir: PathBuf,
    /// The runtime library to preload for programs not built by `mbhybrid
    /// build` (default: libmbhybrid_rt.so beside the mbhybrid executable).
    #[arg(long, value_name = "FILE")]
    pub runtime: Option<PathBuf>,
}

/// `mbhybrid verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The job: processes, launcher, MPI, run directory, runtime.
    #[command(flatten)]
    pub job: JobArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Make warnings fail the run (exit status 1), as `-D warnings` does
    /// for rustc. Without it only errors do: warnings are reported (and
    /// kept in JSON and SARIF) and never change the exit status.
    #[arg(long = "deny", short = 'D', value_enum, value_name = "LEVEL")]
    pub deny: Vec<DenyArg>,
    /// Seconds one run may take before it is stopped and reported as `timeout`.
    #[arg(long, value_name = "SECS", default_value_t = 120,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Logical clocks for causality tracking.
    #[arg(long, value_enum, default_value_t = ClocksArg::Lamport)]
    pub clocks: ClocksArg,
    /// Buffering of standard-mode sends.
    #[arg(long, value_enum, default_value_t = BufferingArg::Infinite)]
    pub buffering: BufferingArg,
    /// After forcing an alternative match, explore only the next K choice
    /// points below it (bounded mixing, Vo's dissertation §5.3.5.2).
    #[arg(long, value_name = "K")]
    pub mixing_bound: Option<u32>,
    /// Loop-iteration abstraction (Vo's dissertation §5.3.5.1).
    #[arg(long, value_enum, default_value_t = LoopAbstractionArg::Off)]
    pub loop_abstraction: LoopAbstractionArg,
    /// The search: `guided` follows the clocks' potential matches (Vo's dissertation
    /// Fig 5.23); `exhaustive` forces every sender the traces show could
    /// have matched, trusting no clock: a slow reference for small programs.
    #[arg(long, value_enum, default_value_t = SearchArg::Guided)]
    pub search: SearchArg,
    /// Stop after this many interleavings (the report then says coverage is
    /// partial).
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_interleavings: u32,
    /// Stop starting new interleavings after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub time_budget: Option<u64>,
    /// Run up to N interleavings at once, each its own MPI job: the search
    /// launches ahead of time the runs it will ask for next. It gains only
    /// where the machine has N times the ranks in free cores.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,
    /// Run the first interleaving as `mbhybrid run` does: every wildcard
    /// receive takes the sender logical time chooses (Zhou et al., Deterministic Message Passing), so the
    /// first interleaving, and the numbering of the ones after it, are
    /// the same on every machine and at any load.
    #[arg(long)]
    pub deterministic: bool,
    /// Keep every interleaving's traces in the run directory (by default
    /// only those of interleavings that showed a new finding are kept).
    #[arg(long)]
    pub keep_traces: bool,
    /// Also write a self-contained HTML report, with a space-time diagram
    /// of each finding's interleaving.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The MPI program.
    #[arg(value_name = "EXE")]
    pub program: PathBuf,
    /// Its arguments.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

/// `mbhybrid run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job: processes, launcher, MPI, run directory, runtime.
    #[command(flatten)]
    pub job: JobArgs,
    /// Stop the job after this many seconds (default: no limit).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: Option<u64>,
    /// Milliseconds every rank a wildcard decision (or a test at its DTP)
    /// waits for must have been stalled, blocked in MPI at one logical
    /// clock, before the deadlock breaker takes the earliest message there
    /// is (Zhou et al. §4.2.3).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub patience: u32,
    /// The MPI program.
    #[arg(value_name = "EXE")]
    pub program: PathBuf,
    /// Its arguments.
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn build_passes_flags_after_double_dash_to_clang() {
        let cli = Cli::try_parse_from([
            "mbhybrid", "build", "-o", "app", "a.c", "b.c", "--", "-O1", "-lm",
        ])
        .unwrap();
        let Command::Build(b) = cli.command else {
            panic!("not build")
        };
        assert_eq!(b.output, PathBuf::from("app"));
        assert_eq!(b.sources.len(), 2);
        assert_eq!(b.cc_flags, ["-O1", "-lm"]);
    }

    #[test]
    fn verify_keeps_program_arguments_that_look_like_flags() {
        let cli = Cli::try_parse_from(["mbhybrid", "verify", "-n", "4", "./app", "--size", "64"])
            .unwrap();
        let Command::Verify(v) = cli.command else {
            panic!("not verify")
        };
        assert_eq!(v.job.np, 4);
        assert_eq!(v.program, PathBuf::from("./app"));
        assert_eq!(v.args, ["--size", "64"]);
        assert_eq!(v.format, Format::Human);
    }

    #[test]
    fn exploration_options_parse() {
        let cli = Cli::try_parse_from([
            "mbhybrid",
            "verify",
            "--clocks",
            "vector",
            "--buffering",
            "both",
            "--mixing-bound",
            "2",
            "--loop-abstraction",
            "auto",
            "--max-interleavings",
            "5",
            "--time-budget",
            "60",
            "./app",
        ])
        .unwrap();
        let Command::Verify(v) = cli.command else {
            panic!("not verify")
        };
        assert_eq!(v.clocks, ClocksArg::Vector);
        assert_eq!(v.buffering, BufferingArg::Both);
        assert_eq!(v.mixing_bound, Some(2));
        assert_eq!(v.loop_abstraction, LoopAbstractionArg::Auto);
        assert_eq!((v.max_interleavings, v.time_budget), (5, Some(60)));
    }

    #[test]
    fn analyze_refuses_the_finding_formats() {
        for format in ["short", "sarif"] {
            let parsed = Cli::try_parse_from(["mbhybrid", "analyze", "--format", format, "a.c"]);
            assert!(parsed.is_err(), "analyze accepted --format {format}");
        }
        let cli = Cli::try_parse_from(["mbhybrid", "analyze", "--format", "json", "a.c"]).unwrap();
        let Command::Analyze(a) = cli.command else {
            panic!("not analyze")
        };
        assert_eq!(a.format, AnalyzeFormat::Json);
    }

    #[test]
    fn replay_takes_a_run_and_an_interleaving() {
        let cli = Cli::try_parse_from(["mbhybrid", "replay", "20261121-1", "--interleaving", "2"])
            .unwrap();
        let Command::Replay(r) = cli.command else {
            panic!("not replay")
        };
        assert_eq!((r.run.as_str(), r.interleaving), ("20261121-1", 2));
    }

    #[test]
    fn verify_rejects_zero_processes() {
        assert!(Cli::try_parse_from(["mbhybrid", "verify", "-n", "0", "./app"]).is_err());
    }
}
