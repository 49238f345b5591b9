//! Buffer arguments that `mbhybrid build`'s static analysis proved wrong
//! for their datatype or count, made into findings of the runs
//! that reached them.
//!
//! The analysis (`mbh-static`, stored in the site table's `analysis`) knows
//! the call, the object and the datatype; a run adds which ranks made the
//! call. A call no run reaches stays a `build` warning only: `verify`
//! reports what the explored executions do.

use crate::place::site_location;
use mbh_trace::static_report::{BufferAccess, BufferError, BufferErrorKind, BufferRoom};
use mbh_trace::{Finding, FindingKind, Location, RankTrace, Role, Severity, SiteTable};

/// One finding per proven buffer error and rank whose trace made the call
/// (the caller merges the ranks of one problem).
pub fn buffer_findings(sites: Option<&SiteTable>, traces: &[Option<RankTrace>]) -> Vec<Finding> {
    let Some(table) = sites else {
        return Vec::new();
    };
    let Some(analysis) = &table.analysis else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for error in &analysis.buffer_errors {
        let Some(site) = table.get(error.site) else {
            continue;
        };
        for trace in traces.iter().flatten() {
            if trace.ops.iter().any(|op| op.site == error.site) {
                findings.push(finding(error, site, trace.rank));
            }
        }
    }
    findings
}

fn finding(error: &BufferError, site: &mbh_trace::Site, rank: i32) -> Finding {
    let (kind, label, help) = match error.kind {
        BufferErrorKind::Type => (
            FindingKind::BufferType,
            format!("the {} is {} as `{}`", error.argument, access(error), error.datatype),
            "use the MPI datatype of the buffer's C type (`MPI_INT` for `int`, `MPI_DOUBLE` for `double`, ...), or `MPI_BYTE` with a count in bytes for raw data",
        ),
        BufferErrorKind::Overflow => (
            FindingKind::BufferOverflow,
            format!("the {} is {} past the end of `{}`", error.argument, access(error), error.object),
            "make the count at most the buffer's size in elements, or the buffer as large as the count",
        ),
    };
    let mut finding = Finding::new(
        kind,
        Severity::Error,
        format!("`{}` {}: {}", error.call, error.argument, error.message),
    );
    finding.ranks = vec![rank];
    finding.locations.push(site_location(
        site,
        rank,
        Role::Primary,
        &format!("(1) {label}"),
    ));
    if let Some(declared) = &error.declared {
        finding.locations.push(Location {
            file: declared.file.clone(),
            line: declared.line,
            column: declared.column,
            rank,
            call: None,
            function: Some(error.function.clone()),
            role: Role::Secondary,
            label: format!("(2) `{}` is declared here", error.object),
        });
    }
    finding
        .notes
        .push("found by `mbhybrid build`'s static analysis of the call's arguments".into());
    finding.help = Some(help.into());
    finding
}

/// How the call uses its buffer.
fn access(error: &BufferError) -> &'static str {
    match error.argument.as_str() {
        "send buffer" => "read",
        "receive buffer" => "written",
        _ => "read and written",
    }
}

/// What reports call the buffer of `access`.
pub fn buffer_name(access: BufferAccess) -> &'static str {
    match access {
        BufferAccess::Read => "send buffer",
        BufferAccess::Write => "receive buffer",
        BufferAccess::ReadWrite => "buffer",
    }
}

/// What the call does to the buffer of `access`.
pub fn access_verb(access: BufferAccess) -> &'static str {
    match access {
        BufferAccess::Read => "read",
        BufferAccess::Write => "written",
        BufferAccess::ReadWrite => "read and written",
    }
}

/// The static room at `site` a runtime overflow check of `access` was
/// checked against, when its size came from the static analysis
/// (`from_room`, [`mbh_trace::check::Check::BufferOverflow`]).
pub fn room_of(
    sites: Option<&SiteTable>,
    site: u32,
    access: BufferAccess,
    from_room: bool,
) -> Option<&BufferRoom> {
    if !from_room {
        return None;
    }
    let analysis = sites?.analysis.as_ref()?;
    analysis
        .buffer_rooms
        .iter()
        .find(|room| room.site == site && room.access == access)
}

/// The declaration of a room's object, as a finding's second location.
pub fn declaration(room: &BufferRoom, rank: i32) -> Option<Location> {
    let declared = room.declared.as_ref()?;
    Some(Location {
        file: declared.file.clone(),
        line: declared.line,
        column: declared.column,
        rank,
        call: None,
        function: None,
        role: Role::Secondary,
        label: format!("`{}` is declared here", room.object),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::rank_trace::Op;
    use mbh_trace::static_report::{Span, StaticReport};
    use mbh_trace::{OpKind, Site};

    fn table(errors: Vec<BufferError>) -> SiteTable {
        let site = Site {
            id: 3,
            file: "app.c".into(),
            line: 12,
            column: 5,
            call: "MPI_Recv".into(),
            function: "main".into(),
        };
        let mut table = SiteTable::new("app", vec!["app.c".into()]);
        table.sites.push(site);
        table.analysis = Some(StaticReport {
            buffer_errors: errors,
            ..StaticReport::default()
        });
        table
    }

    fn overflow() -> BufferError {
        BufferError {
            site: 3,
            call: "MPI_Recv".into(),
            function: "main".into(),
            span: Span {
                file: "app.c".into(),
                line: 12,
                column: 5,
            },
            kind: BufferErrorKind::Overflow,
            argument: "receive buffer".into(),
            object: "buf".into(),
            declared: Some(Span {
                file: "app.c".into(),
                line: 4,
                column: 0,
            }),
            datatype: "MPI_INT".into(),
            message: "`buf` holds 4000 bytes but 2000 elements of `MPI_INT` need 8000".into(),
        }
    }

    fn trace_calling(rank: i32, site: u32) -> Option<RankTrace> {
        let mut op = Op::new(0, OpKind::Recv);
        op.site = site;
        Some(RankTrace::finalized(rank, 2, vec![op]))
    }

    #[test]
    fn a_proven_error_is_a_finding_of_each_rank_that_made_the_call() {
        let table = table(vec![overflow()]);
        let traces = [trace_calling(0, 9), trace_calling(1, 3)];
        let findings = buffer_findings(Some(&table), &traces);
        assert_eq!(findings.len(), 1);
        let f = &findings[0];
        assert_eq!(f.kind, FindingKind::BufferOverflow);
        assert_eq!(f.ranks, [1]);
        assert_eq!((f.locations[0].line, f.locations[0].rank), (12, 1));
        assert_eq!(f.locations[1].line, 4);
        assert!(f.locations[1].label.contains("`buf` is declared here"));
        assert!(f
            .message
            .starts_with("`MPI_Recv` receive buffer: `buf` holds 4000 bytes"));
    }

    #[test]
    fn a_call_no_rank_made_is_not_a_finding() {
        let table = table(vec![overflow()]);
        let traces = [trace_calling(0, 9), None];
        assert!(buffer_findings(Some(&table), &traces).is_empty());
        assert!(buffer_findings(None, &traces).is_empty());
    }
}
