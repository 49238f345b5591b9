//! Prints rank traces, for looking at what the runtime recorded.
//!
//! ```text
//! cargo run -p mbh-runtime --example dump_trace -- [--json] DIR|FILE...
//! ```
//!
//! A directory stands for every `rank-*.trace` in it, in rank order. After
//! the records come the rank's wildcard events
//! ([`mbh_trace::RankTrace::wildcard_events`]).

use mbh_trace::op::flags;
use mbh_trace::RankTrace;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut json = false;
    let mut files = Vec::new();
    for arg in std::env::args_os().skip(1) {
        if arg == "--json" {
            json = true;
            continue;
        }
        let path = PathBuf::from(arg);
        if path.is_dir() {
            match traces_in(&path) {
                Ok(found) => files.extend(found),
                Err(e) => {
                    eprintln!("dump_trace: {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        } else {
            files.push(path);
        }
    }
    if files.is_empty() {
        eprintln!("usage: dump_trace [--json] DIR|FILE...");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for file in files {
        match RankTrace::read(&file) {
            Ok(trace) if json => match serde_json::to_string(&trace) {
                Ok(line) => println!("{line}"),
                Err(e) => {
                    eprintln!("dump_trace: {e}");
                    status = ExitCode::from(2);
                }
            },
            Ok(trace) => print_trace(&file, &trace),
            Err(e) => {
                eprintln!("dump_trace: {e}");
                status = ExitCode::from(2);
            }
        }
    }
    status
}

/// `rank-*.trace` files of `dir`, by rank.
fn traces_in(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found: Vec<(i64, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(rank) = name
            .strip_prefix("rank-")
            .and_then(|rest| rest.strip_suffix(".trace"))
            .and_then(|r| r.parse().ok())
        {
            found.push((rank, path));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

fn flag_names(bits: u16) -> String {
    let names = [
        (flags::RETURNED, "returned"),
        (flags::ANY_SOURCE, "any-source"),
        (flags::ANY_TAG, "any-tag"),
        (flags::HAS_STATUS, "status"),
        (flags::FAILED, "failed"),
        (flags::PROC_NULL, "proc-null"),
    ];
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    set.join(",")
}

fn print_trace(file: &Path, t: &RankTrace) {
    println!(
        "{}: rank {}/{} pid {} state {:?}",
        file.display(),
        t.rank,
        t.size,
        t.pid,
        t.end.state
    );
    if let Some(status) = t.end.exit_status {
        println!("  exit status {status}");
    }
    if let Some(signal) = t.end.signal {
        println!("  signal {signal} at {:#x}", t.end.fault_addr);
    }
    if let Some((code, site)) = t.end.abort {
        println!("  MPI_Abort({code}) at site {site}");
    }
    if !t.end.frames.is_empty() {
        let frames: Vec<String> = t.end.frames.iter().map(|pc| format!("{pc:#x}")).collect();
        println!(
            "  exe_base {:#x} frames {}",
            t.end.exe_base,
            frames.join(" ")
        );
    }
    if let Some(blocking) = t.blocking {
        println!("  blocked in op {blocking}");
    }
    for op in &t.ops {
        let mut line = format!(
            "  {:>4} {:<16} site {:<3} peer {:<3} tag {:<3} count {:<3} comm {:#x} aux {:#x}",
            op.index,
            op.kind.mpi_name(),
            op.site,
            op.peer,
            op.tag,
            op.count,
            op.comm,
            op.aux
        );
        if op.request != 0 {
            line += &format!(" req {:#x}", op.request);
        }
        if let Some((source, tag)) = op.matched {
            line += &format!(" matched ({source},{tag})");
        }
        if op.error != 0 {
            line += &format!(" error {}", op.error);
        }
        line += &format!(" [{}]", flag_names(op.flags));
        println!("{line}");
    }
    for e in t.wildcard_events() {
        println!(
            "  event {} ({} op {}): clocks {}..{} matched {} tag {} potential {:?}",
            e.event,
            e.kind.mpi_name(),
            e.op_index,
            e.start_clock,
            e.final_clock,
            e.matched,
            e.matched_tag,
            e.potential
        );
    }
}
