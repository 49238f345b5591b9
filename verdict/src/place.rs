//! Where a finding points: sites of the site table and stack frames
//! turned into labelled source locations.

use crate::outcome::RunContext;
use crate::symbolize::SourcePos;
use mbh_trace::rank_trace::RankTrace;
use mbh_trace::{Finding, Location, Role};

/// Frames of the program's own code shown in a crash's notes.
pub(crate) const STACK_FRAMES: usize = 6;

/// Adds the rank's own stack, innermost first, when it has more than the
/// one frame the location already shows.
pub(crate) fn push_stack(f: &mut Finding, ctx: &RunContext<'_>, trace: &RankTrace) {
    let end = &trace.end;
    let stack = ctx
        .symbolizer
        .user_stack(&end.frames, end.exe_base, true, STACK_FRAMES);
    if stack.len() < 2 {
        return;
    }
    let frames: Vec<String> = stack
        .iter()
        .map(|pos| {
            let function = pos.function.as_deref().unwrap_or("?");
            format!(
                "{function} ({})",
                mbh_trace::place(&pos.file, pos.line, 0, None)
            )
        })
        .collect();
    f.notes.push(format!(
        "stack of rank {}, innermost first: {}",
        trace.rank,
        frames.join(" <- ")
    ));
}

/// A location where the rank's recorded frames stopped in the program: the
/// first with a source line; without debug information, the function and
/// offset of the first in the executable's code (the location names the
/// executable, line 0).
pub(crate) fn push_frame(
    ctx: &RunContext<'_>,
    f: &mut Finding,
    end: &mbh_trace::rank_trace::RankEnd,
    first_is_ip: bool,
    rank: i32,
    label: &str,
) {
    let symbolizer = ctx.symbolizer;
    let pos = symbolizer.first_user_frame(&end.frames, end.exe_base, first_is_ip);
    if pos.is_none() {
        if let Some((function, offset)) =
            symbolizer.first_exe_function(&end.frames, end.exe_base, first_is_ip)
        {
            f.locations.push(Location {
                file: symbolizer.exe().to_string(),
                line: 0,
                column: 0,
                rank,
                call: Some(function.clone()),
                label: format!("{label} (in `{function}`, at offset {offset:#x})"),
                function: Some(function),
                role: Role::Primary,
            });
            return;
        }
    }
    push_pos(f, pos, rank, label);
}

pub(crate) fn push_pos(f: &mut Finding, pos: Option<SourcePos>, rank: i32, label: &str) {
    match pos {
        Some(pos) => f.locations.push(Location {
            file: pos.file,
            line: pos.line,
            column: pos.column,
            rank,
            call: pos.function.clone(),
            function: pos.function,
            role: Role::Primary,
            label: label.to_string(),
        }),
        None => f.notes.push(format!(
            "no source line is known for rank {rank}: build the program with `-g` (as `mbhybrid build` does)"
        )),
    }
}

pub(crate) fn push_last_call(
    ctx: &RunContext<'_>,
    f: &mut Finding,
    trace: &RankTrace,
    label: &str,
) {
    // The program's calls, not the runtime's records about them (the leak
    // checks a rank exiting without `MPI_Finalize` writes come last and
    // carry the site of the call that made the leaked request).
    let site = trace
        .ops
        .iter()
        .rev()
        .filter(|op| op.kind.class() != mbh_trace::op::OpClass::Clock)
        .find_map(|op| ctx.sites.and_then(|s| s.get(op.site)));
    if let Some(site) = site {
        f.locations
            .push(site_location(site, trace.rank, Role::Primary, label));
    }
}

pub use mbh_trace::place::site_place;

/// A location at call site `site` on `rank`. A site the runtime made from
/// a return address in code without debug information (line 0) has only
/// its function and its return address's offset in the executable (the
/// instruction after the call, as `objdump -d` shows it) to show: the
/// label says them (renderers that show no `function` still do).
pub fn site_location(site: &mbh_trace::Site, rank: i32, role: Role, label: &str) -> Location {
    let label = match mbh_trace::site::offset_of_site(site.id) {
        Some(offset) if site.line == 0 && !site.function.is_empty() => format!(
            "{label} (in `{}`, the call returning to offset {offset:#x})",
            site.function
        ),
        Some(offset) if site.line == 0 => {
            format!("{label} (the call returning to offset {offset:#x})")
        }
        _ => label.to_string(),
    };
    Location {
        file: site.file.clone(),
        line: site.line,
        column: site.column,
        rank,
        call: Some(site.call.clone()),
        function: (!site.function.is_empty()).then(|| site.function.clone()),
        role,
        label,
    }
}
