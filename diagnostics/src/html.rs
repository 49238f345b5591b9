//! The HTML report (`--html FILE`): one self-contained page, readable in any
//! browser without a network or JavaScript (inline CSS and SVG, nothing
//! fetched).
//!
//! The page has the verdict and the verification's parameters, then per
//! finding its message, a space-time diagram of the interleaving when the
//! caller gives one, each location with a snippet of its source, the notes,
//! the help and the replay command; then how each run ended, the wildcard
//! receives, the barrier verdicts, and the code page of every code used.
//!
//! The diagram comes from a [`Timeline`] the caller builds from the traces
//! (the report itself has no event timeline): ranks are horizontal lanes,
//! MPI calls boxes labelled `call:line`, matched messages solid arrows,
//! messages that could also have matched a wildcard receive dashed grey
//! arrows, messages never received dashed red arrows; a wildcard receive
//! whose match mbhybrid forced is amber, with its incoming message in
//! amber, and a call a rank was blocked in when the run ended is red. Lane
//! height and label length shrink with the number of ranks, so 64 ranks fit
//! a screen; hovering over a box shows its full label.

use crate::explain;
use crate::human::verdict;
use mbh_trace::timeline::{CallRef, MessageKind, Timeline, TimelineCall};
use mbh_trace::{Finding, FindingKind, Location, Report, Role, Severity};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write;
use std::path::Path;

/// The most steps (columns) a diagram shows; a longer timeline shows its
/// last `MAX_COLUMNS` steps, where findings usually are, and says how many
/// it left out.
pub const MAX_COLUMNS: usize = 160;

/// The report as one HTML page. Source snippets are read relative to
/// `base_dir` (where mbhybrid ran); `timelines` pairs an index into
/// `report.findings` with the timeline of the interleaving that showed it
/// (several per finding are drawn one after the other, none is fine).
pub fn render(report: &Report, base_dir: &Path, timelines: &[(usize, Timeline)]) -> String {
    let mut sources = Sources::new(base_dir);
    let mut out = String::with_capacity(16 * 1024);
    let title = format!("mbhybrid: {}", command_line(report));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    header(&mut out, report);
    out.push_str("<main>\n");
    for (index, finding) in report.findings.iter().enumerate() {
        let diagrams: Vec<&Timeline> = timelines
            .iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, t)| t)
            .collect();
        finding_section(&mut out, index, finding, &diagrams, &mut sources);
    }
    runs_section(&mut out, report);
    wildcards_section(&mut out, report);
    barriers_section(&mut out, report);
    codes_section(&mut out, report);
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

fn command_line(report: &Report) -> String {
    std::iter::once(report.program.as_str())
        .chain(report.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

fn header(out: &mut String, report: &Report) {
    let class = if report.findings.is_empty() {
        "good"
    } else if report
        .findings
        .iter()
        .any(|f| f.severity == Severity::Error)
    {
        "bad"
    } else {
        "warn"
    };
    let _ = writeln!(
        out,
        "<header>\n<h1>mbhybrid report: <code>{}</code></h1>\n<p class=\"verdict {class}\">{}</p>",
        escape(&command_line(report)),
        escape(&verdict(report))
    );
    let cp = &report.choice_points;
    let facts = [
        ("processes", report.np.to_string()),
        ("clocks", report.clocks.clone()),
        ("buffering", report.buffering.clone()),
        (
            "choice points",
            format!(
                "{} found, {} explored, {} abstracted, {} skipped by the mixing bound",
                cp.found, cp.explored, cp.abstracted, cp.mixing_bounded
            ),
        ),
        ("run", format!("{} in {}", report.run_id, report.run_dir)),
        ("time", format!("{:.2} s", report.seconds)),
        ("mbhybrid", report.version.clone()),
    ];
    out.push_str("<dl class=\"facts\">\n");
    for (name, value) in facts {
        let _ = writeln!(out, "<dt>{name}</dt><dd>{}</dd>", escape(&value));
    }
    out.push_str("</dl>\n");
    notes(out, "warnings", "warning", &report.warnings);
    notes(out, "limits", "note", &report.limits);
    if !report.findings.is_empty() {
        out.push_str("<nav>\n<ol>\n");
        for (index, finding) in report.findings.iter().enumerate() {
            let severity = severity_word(finding.severity);
            let _ = writeln!(
                out,
                "<li><a href=\"#finding-{}\"><span class=\"sev {severity}\">{severity}</span> [{}] {}</a></li>",
                index + 1,
                escape(finding.kind.code()),
                inline(&finding.message)
            );
        }
        out.push_str("</ol>\n</nav>\n");
    }
    out.push_str("</header>\n");
}

/// A list of the report's `lines` (warnings, limits), each led by `label`,
/// in a `<ul>` of `class`; nothing when there are none.
fn notes(out: &mut String, class: &str, label: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "<ul class=\"{class}\">");
    for line in lines {
        let _ = writeln!(
            out,
            "<li><b>{label}:</b> <span class=\"pre\">{}</span></li>",
            inline(line)
        );
    }
    out.push_str("</ul>\n");
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

fn finding_section(
    out: &mut String,
    index: usize,
    finding: &Finding,
    diagrams: &[&Timeline],
    sources: &mut Sources,
) {
    let severity = severity_word(finding.severity);
    let code = escape(finding.kind.code());
    let _ = writeln!(
        out,
        "<section class=\"finding {severity}\" id=\"finding-{}\">\n\
         <h2><span class=\"sev {severity}\">{severity}</span><a class=\"code\" href=\"#{code}\">[{code}]</a> {}</h2>",
        index + 1,
        inline(&finding.message)
    );
    let ranks: Vec<String> = finding.ranks.iter().map(i32::to_string).collect();
    let _ = writeln!(
        out,
        "<p class=\"meta\">{} · interleaving {}{}</p>",
        escape(finding.kind.name()),
        finding.interleaving,
        if ranks.is_empty() {
            String::new()
        } else {
            format!(
                " · rank{} {}",
                if ranks.len() == 1 { "" } else { "s" },
                ranks.join(", ")
            )
        }
    );
    for timeline in diagrams {
        diagram(out, timeline, finding.interleaving);
    }
    for location in &finding.locations {
        location_block(out, location, sources);
    }
    if !finding.notes.is_empty() || finding.help.is_some() || finding.replay.is_some() {
        out.push_str("<ul class=\"notes\">\n");
        for note in &finding.notes {
            let _ = writeln!(
                out,
                "<li><b>note:</b> <span class=\"pre\">{}</span></li>",
                inline(note)
            );
        }
        if let Some(help) = &finding.help {
            let _ = writeln!(
                out,
                "<li class=\"help\"><b>help:</b> <span class=\"pre\">{}</span></li>",
                inline(help)
            );
        }
        if let Some(replay) = &finding.replay {
            let _ = writeln!(
                out,
                "<li class=\"replay\"><b>replay:</b> <code>{}</code></li>",
                escape(replay)
            );
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn location_block(out: &mut String, location: &Location, sources: &mut Sources) {
    let role = match location.role {
        Role::Primary => "primary",
        Role::Secondary => "secondary",
    };
    let place = escape(&location.place());
    let call = location
        .call
        .as_deref()
        .map(|c| format!(" · <code>{}</code>", escape(c)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<div class=\"loc {role}\">\n<div class=\"where\"><code>{place}</code> · rank {}{call} — <span class=\"label\">{}</span></div>",
        location.rank,
        inline(&location.label)
    );
    match sources.snippet(&location.file, location.line, location.column) {
        Some(snippet) => out.push_str(&snippet),
        None if location.line > 0 => {
            out.push_str("<p class=\"nosrc\">the source is not readable from here</p>\n")
        }
        None => {}
    }
    out.push_str("</div>\n");
}

fn runs_section(out: &mut String, report: &Report) {
    if report.runs.is_empty() {
        return;
    }
    out.push_str("<section class=\"runs\">\n<h2>Runs</h2>\n<table>\n<thead><tr><th>interleaving</th><th>time</th><th>launcher exit</th><th>ranks</th></tr></thead>\n<tbody>\n");
    for run in &report.runs {
        let ranks: Vec<String> = run
            .ranks
            .iter()
            .map(|r| {
                let detail = match (r.exit_status, r.signal) {
                    (_, Some(signal)) => format!(" (signal {signal})"),
                    (Some(status), _) if status != 0 => format!(" (status {status})"),
                    _ => String::new(),
                };
                let class = if r.state == "finalized" { "ok" } else { "bad" };
                format!(
                    "<span class=\"state {class}\">{} {}{}</span>",
                    r.rank,
                    escape(&r.state),
                    escape(&detail)
                )
            })
            .collect();
        let exit = run
            .launcher_exit
            .map_or("stopped".to_string(), |e| e.to_string());
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{:.2} s</td><td>{}</td><td>{}</td></tr>",
            run.interleaving,
            run.seconds,
            escape(&exit),
            ranks.join(" ")
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn wildcards_section(out: &mut String, report: &Report) {
    if report.wildcards.is_empty() {
        return;
    }
    out.push_str("<section class=\"wildcards\">\n<h2>Wildcard receives and request choices</h2>\n<table>\n<thead><tr><th>rank</th><th>where</th><th>call</th><th>matched</th><th>could also match</th></tr></thead>\n<tbody>\n");
    let list = |ranks: &[i32]| {
        ranks
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    for w in &report.wildcards {
        // A choice among requests (seed 001 §4) lists indices, not ranks.
        let indices = matches!(
            w.call.as_str(),
            "MPI_Waitany" | "MPI_Testany" | "MPI_Waitsome" | "MPI_Testsome"
        );
        let show = |values: &[i32]| {
            if indices && !values.is_empty() {
                format!("index {}", list(values))
            } else {
                list(values)
            }
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td><code>{}:{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            w.rank,
            escape(&w.file),
            w.line,
            escape(&w.call),
            show(&w.matched),
            show(&w.potential)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn barriers_section(out: &mut String, report: &Report) {
    if report.barriers.is_empty() {
        return;
    }
    out.push_str("<section class=\"barriers\">\n<h2>Barriers</h2>\n<table>\n<thead><tr><th>where</th><th>verdict</th></tr></thead>\n<tbody>\n");
    for b in &report.barriers {
        let _ = writeln!(
            out,
            "<tr><td><code>{}:{}</code></td><td class=\"{}\">{}</td></tr>",
            escape(&b.file),
            b.line,
            escape(&b.verdict),
            escape(&b.verdict)
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
}

fn codes_section(out: &mut String, report: &Report) {
    let kinds: Vec<FindingKind> = FindingKind::ALL
        .iter()
        .copied()
        .filter(|k| report.findings.iter().any(|f| f.kind == *k))
        .collect();
    if kinds.is_empty() {
        return;
    }
    out.push_str("<section class=\"codes\">\n<h2>Codes</h2>\n");
    for kind in kinds {
        let Some(page) = explain::page_of(kind) else {
            continue;
        };
        let _ = writeln!(
            out,
            "<details id=\"{code}\">\n<summary><b>{code}</b> {name}: {}</summary>\n{}</details>",
            inline(&explain::summary(page)),
            markdown(page),
            code = kind.code(),
            name = kind.name(),
        );
    }
    out.push_str("</section>\n");
}

/// The small Markdown of the code pages (headings, paragraphs, fenced code,
/// inline code, links to other pages) as HTML; the page's own title is
/// dropped (the `<summary>` has it).
fn markdown(page: &str) -> String {
    let mut out = String::new();
    let mut paragraph: Vec<&str> = Vec::new();
    let mut code: Option<Vec<&str>> = None;
    let flush = |out: &mut String, paragraph: &mut Vec<&str>| {
        if !paragraph.is_empty() {
            let _ = writeln!(out, "<p>{}</p>", inline_markdown(&paragraph.join(" ")));
            paragraph.clear();
        }
    };
    for line in page.lines() {
        if let Some(lines) = code.as_mut() {
            if line.starts_with("```") {
                let _ = writeln!(out, "<pre><code>{}</code></pre>", escape(&lines.join("\n")));
                code = None;
            } else {
                lines.push(line);
            }
            continue;
        }
        if line.starts_with("```") {
            flush(&mut out, &mut paragraph);
            code = Some(Vec::new());
        } else if line.starts_with("# ") {
            flush(&mut out, &mut paragraph);
        } else if let Some(heading) = line.strip_prefix("## ") {
            flush(&mut out, &mut paragraph);
            let _ = writeln!(out, "<h3>{}</h3>", inline_markdown(heading));
        } else if line.trim().is_empty() {
            flush(&mut out, &mut paragraph);
        } else {
            paragraph.push(line.trim());
        }
    }
    flush(&mut out, &mut paragraph);
    out
}

/// Inline Markdown: code spans and links (`[MBH0015](MBH0015.md)` goes to
/// that page's section of this document).
fn inline_markdown(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('[') {
        out.push_str(&inline(before));
        match explain::parse_link(after) {
            Some((label, target, tail)) => {
                let anchor = target.trim_end_matches(".md");
                let _ = write!(out, "<a href=\"#{}\">{}</a>", escape(anchor), inline(label));
                rest = tail;
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(&inline(rest));
    out
}

/// Text with `` `code` `` spans, escaped, the spans as `<code>`.
fn inline(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        let unbalanced = i == parts.len() - 1 && parts.len().is_multiple_of(2);
        if unbalanced {
            out.push('`');
            out.push_str(&escape(part));
        } else if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&escape(part));
        }
    }
    out
}

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Source files read for snippets, each once.
struct Sources {
    base: std::path::PathBuf,
    files: HashMap<String, Option<Vec<String>>>,
}

/// Lines shown before and after the line of a location.
const CONTEXT: u32 = 2;

impl Sources {
    fn new(base: &Path) -> Self {
        Sources {
            base: base.to_owned(),
            files: HashMap::new(),
        }
    }

    /// A `<pre>` with the lines around `line`, that line marked and the
    /// code from `column` (or its first non-blank) underlined.
    fn snippet(&mut self, file: &str, line: u32, column: u32) -> Option<String> {
        if line == 0 || file.is_empty() {
            return None;
        }
        let base = &self.base;
        let lines = self
            .files
            .entry(file.to_string())
            .or_insert_with(|| {
                std::fs::read_to_string(base.join(file))
                    .ok()
                    .map(|text| text.lines().map(str::to_string).collect())
            })
            .as_ref()?;
        if line as usize > lines.len() {
            return None;
        }
        let first = line.saturating_sub(CONTEXT).max(1);
        let last = (line + CONTEXT).min(lines.len() as u32);
        let width = last.to_string().len();
        let mut out = String::from("<pre class=\"snippet\">");
        for n in first..=last {
            let text = &lines[n as usize - 1];
            if n == line {
                let indent = text.len() - text.trim_start().len();
                let from = if column > 0 {
                    (column as usize - 1).min(text.len())
                } else {
                    indent
                };
                let from = floor_char_boundary(text, from);
                let to = text.trim_end().len().max(from);
                let _ = writeln!(
                    out,
                    "<span class=\"hl\"><span class=\"ln\">{n:>width$}</span> {}<u>{}</u>{}</span>",
                    escape(&text[..from]),
                    escape(&text[from..to]),
                    escape(&text[to..])
                );
            } else {
                let _ = writeln!(
                    out,
                    "<span class=\"ln\">{n:>width$}</span> {}",
                    escape(text)
                );
            }
        }
        out.push_str("</pre>\n");
        Some(out)
    }
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

// --- the space-time diagram -------------------------------------------

/// Colours of the diagram; the rendering test looks for them in a
/// screenshot, so they are distinct from everything else on the page.
pub(crate) mod colour {
    /// Even lanes.
    pub const LANE_EVEN: &str = "#dce8f8";
    /// Odd lanes.
    pub const LANE_ODD: &str = "#eef4fc";
    /// A forced wildcard receive.
    pub const FORCED: &str = "#ffb300";
    /// A call a rank was blocked in.
    pub const BLOCKED: &str = "#f28b82";
}

const LABEL_WIDTH: f64 = 64.0;
const DIAGRAM_WIDTH: f64 = 1080.0;

/// Where each call goes: columns such that every call is right of the one
/// before it on its rank and right of the send of every message it
/// received. Kahn's algorithm over program order and matched messages; a
/// cycle (a timeline that is not causal) is broken at the earliest call
/// whose predecessor on its rank is placed, ignoring its messages.
fn layout(timeline: &Timeline) -> Vec<Vec<usize>> {
    let offsets: Vec<usize> = timeline
        .ranks
        .iter()
        .scan(0, |next, calls| {
            let start = *next;
            *next += calls.len();
            Some(start)
        })
        .collect();
    let total: usize = timeline.ranks.iter().map(Vec::len).sum();
    let id = |c: CallRef| offsets[c.rank] + c.call;
    let valid = |c: CallRef| c.rank < timeline.ranks.len() && c.call < timeline.ranks[c.rank].len();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); total];
    let mut indegree = vec![0usize; total];
    let mut rank_of = vec![0usize; total];
    for (rank, calls) in timeline.ranks.iter().enumerate() {
        for call in 0..calls.len() {
            rank_of[offsets[rank] + call] = rank;
            if call > 0 {
                successors[offsets[rank] + call - 1].push(offsets[rank] + call);
                indegree[offsets[rank] + call] += 1;
            }
        }
    }
    for m in &timeline.messages {
        if m.kind == MessageKind::Matched && valid(m.from) && valid(m.to) && m.from != m.to {
            successors[id(m.from)].push(id(m.to));
            indegree[id(m.to)] += 1;
        }
    }
    let mut column = vec![0usize; total];
    let mut placed = vec![false; total];
    let mut queue: VecDeque<usize> = (0..total).filter(|&v| indegree[v] == 0).collect();
    let mut done = 0;
    while done < total {
        let v = match queue.pop_front() {
            Some(v) => v,
            None => {
                // A cycle: release the first unplaced call whose
                // predecessor on its rank is placed.
                match (0..total)
                    .find(|&v| !placed[v] && (v == offsets[rank_of[v]] || placed[v - 1]))
                {
                    Some(v) => v,
                    None => break,
                }
            }
        };
        if placed[v] {
            continue;
        }
        placed[v] = true;
        done += 1;
        for &w in &successors[v] {
            if placed[w] {
                continue;
            }
            column[w] = column[w].max(column[v] + 1);
            indegree[w] = indegree[w].saturating_sub(1);
            if indegree[w] == 0 {
                queue.push_back(w);
            }
        }
    }
    timeline
        .ranks
        .iter()
        .enumerate()
        .map(|(rank, calls)| {
            (0..calls.len())
                .map(|c| column[offsets[rank] + c])
                .collect()
        })
        .collect()
}

/// Fixed-point coordinates for the SVG: at most one decimal.
fn px(value: f64) -> String {
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded:.1}")
    }
}

/// The label of a call in a box `chars` characters wide: `Recv:12`, else
/// the line, else the name cut with an ellipsis, else nothing.
fn box_label(call: &TimelineCall, chars: usize) -> String {
    let name = call.label.strip_prefix("MPI_").unwrap_or(&call.label);
    let full = if call.line > 0 {
        format!("{name}:{}", call.line)
    } else {
        name.to_string()
    };
    if full.chars().count() <= chars {
        return full;
    }
    if call.line > 0 && call.line.to_string().len() < chars {
        return format!(":{}", call.line);
    }
    if chars >= 2 {
        let cut: String = name.chars().take(chars - 1).collect();
        return format!("{cut}…");
    }
    String::new()
}

/// The space-time diagram of `timeline` (interleaving `interleaving`) as
/// an SVG figure with its legend: lanes, then messages under the calls so
/// boxes stay readable, then calls. Nothing for a timeline of no ranks.
fn diagram(out: &mut String, timeline: &Timeline, interleaving: u32) {
    let nranks = timeline.ranks.len();
    if nranks == 0 {
        return;
    }
    let geometry = Geometry::new(timeline);
    svg_start(out, &geometry, interleaving, nranks);
    lanes(out, &geometry, nranks);
    // Messages under the calls, so boxes stay readable.
    messages(out, &geometry, timeline);
    calls(out, &geometry, timeline);
    out.push_str("</svg>\n</div>\n<figcaption>\n");
    caption(out, interleaving, geometry.first);
}

/// Where a diagram's parts go, in SVG pixels: lanes share about 480 px
/// (12 to 44 each), columns the diagram's width (22 to 150 each), and
/// only the last [`MAX_COLUMNS`] columns are shown.
#[derive(Debug)]
struct Geometry {
    /// Each call's column, per rank ([`layout`]).
    columns: Vec<Vec<usize>>,
    /// The first column shown.
    first: usize,
    /// The height of a rank's lane.
    lane: f64,
    /// The width of a column.
    column: f64,
    /// The whole drawing's width.
    width: f64,
    /// The whole drawing's height.
    height: f64,
    /// The height of a call's box.
    box_h: f64,
    /// The width of a call's box.
    box_w: f64,
    /// The size of the labels in boxes.
    font: f64,
    /// The size of the rank names.
    rank_font: f64,
}

impl Geometry {
    /// The layout of `timeline` (at least one rank) and the sizes it
    /// needs.
    fn new(timeline: &Timeline) -> Self {
        let nranks = timeline.ranks.len();
        let columns = layout(timeline);
        let ncolumns = columns.iter().flatten().max().map_or(0, |&c| c + 1);
        let first = ncolumns.saturating_sub(MAX_COLUMNS);
        let shown = (ncolumns - first).max(1);

        let lane = (480.0 / nranks as f64).clamp(12.0, 44.0);
        let column = ((DIAGRAM_WIDTH - LABEL_WIDTH - 24.0) / shown as f64).clamp(22.0, 150.0);
        let width = LABEL_WIDTH + column * shown as f64 + 24.0;
        let height = lane * nranks as f64 + 4.0;
        // Boxes leave room between lanes and, for the arrows, between columns.
        let box_h = lane - (lane * 0.14).max(2.0);
        let box_w = (column * 0.72).max(14.0);
        let font = (box_h - 2.0).clamp(0.0, 11.0);
        let rank_font = (lane - 3.0).clamp(8.0, 12.0);
        Geometry {
            columns,
            first,
            lane,
            column,
            width,
            height,
            box_h,
            box_w,
            font,
            rank_font,
        }
    }

    /// The left edge of a box in column `col` (shown).
    fn x_of(&self, col: usize) -> f64 {
        LABEL_WIDTH + (col - self.first) as f64 * self.column + (self.column - self.box_w) / 2.0
    }

    /// The top edge of a box on `rank`.
    fn y_of(&self, rank: usize) -> f64 {
        2.0 + rank as f64 * self.lane + (self.lane - self.box_h) / 2.0
    }

    /// `c` names a call of the timeline.
    fn exists(&self, c: CallRef) -> bool {
        c.rank < self.columns.len() && c.call < self.columns[c.rank].len()
    }

    /// `c` names a call of the timeline that is drawn.
    fn shown(&self, c: CallRef) -> bool {
        self.exists(c) && self.columns[c.rank][c.call] >= self.first
    }

    /// How many characters of a label fit in a box.
    fn label_chars(&self) -> usize {
        ((self.box_w - 4.0) / (self.font * 0.6).max(1.0))
            .floor()
            .max(0.0) as usize
    }
}

/// Opens the figure and its SVG (sized by `geometry`, labelled for screen
/// readers) and defines the arrow heads of the four kinds of message line.
fn svg_start(out: &mut String, geometry: &Geometry, interleaving: u32, nranks: usize) {
    let (width, height) = (geometry.width, geometry.height);
    let _ = writeln!(
        out,
        "<figure class=\"diagram\">\n<div class=\"scroll\">\n<svg class=\"timeline\" role=\"img\" aria-label=\"space-time diagram of interleaving {interleaving}: {nranks} ranks\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">",
        px(width),
        px(height),
        px(width),
        px(height)
    );
    out.push_str(
        "<defs>\
         <marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#37474f\"/></marker>\
         <marker id=\"arrow-forced\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#e65100\"/></marker>\
         <marker id=\"arrow-potential\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#9e9e9e\"/></marker>\
         <marker id=\"arrow-lost\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c62828\"/></marker>\
         </defs>\n",
    );
}

/// One lane per rank, the full width, alternating colours so that lanes
/// are told apart, named on the left.
fn lanes(out: &mut String, geometry: &Geometry, nranks: usize) {
    let (lane, rank_font) = (geometry.lane, geometry.rank_font);
    for rank in 0..nranks {
        let fill = if rank % 2 == 0 {
            colour::LANE_EVEN
        } else {
            colour::LANE_ODD
        };
        let top = 2.0 + rank as f64 * lane;
        let _ = writeln!(
            out,
            "<g class=\"lane\"><rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/><text class=\"rank\" x=\"6\" y=\"{}\" font-size=\"{}\">rank {rank}</text></g>",
            px(top),
            px(geometry.width),
            px(lane),
            px(top + lane / 2.0 + rank_font * 0.35),
            px(rank_font)
        );
    }
}

/// A line per message from its send's box (the labels' edge when the
/// send is not shown) to its receive's box; a message never received
/// runs to the right edge. Messages with a call outside the timeline,
/// or to a receive not shown, are left out.
fn messages(out: &mut String, geometry: &Geometry, timeline: &Timeline) {
    let nranks = timeline.ranks.len();
    let (columns, box_w, box_h) = (&geometry.columns, geometry.box_w, geometry.box_h);
    for m in &timeline.messages {
        if !geometry.exists(m.from) || m.to.rank >= nranks {
            continue;
        }
        let from_y = geometry.y_of(m.from.rank) + box_h / 2.0;
        let from_x = if geometry.shown(m.from) {
            geometry.x_of(columns[m.from.rank][m.from.call]) + box_w
        } else {
            LABEL_WIDTH
        };
        let to_y = geometry.y_of(m.to.rank) + box_h / 2.0;
        match m.kind {
            MessageKind::Unreceived => {
                let to_x = geometry.width - 6.0;
                let _ = writeln!(
                    out,
                    "<line class=\"msg lost\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#c62828\" stroke-width=\"1.6\" stroke-dasharray=\"5 3\" marker-end=\"url(#arrow-lost)\"><title>message from rank {} never received by rank {}</title></line>",
                    px(from_x), px(from_y), px(to_x), px(to_y), m.from.rank, m.to.rank
                );
            }
            MessageKind::Matched | MessageKind::Potential => {
                if !geometry.shown(m.to) {
                    continue;
                }
                let to_x = geometry.x_of(columns[m.to.rank][m.to.call]);
                let forced = timeline.ranks[m.to.rank][m.to.call].forced;
                let (class, style, marker) = message_style(m.kind, forced);
                let what = if m.kind == MessageKind::Potential {
                    "could also have matched"
                } else {
                    "matched"
                };
                let _ = writeln!(
                    out,
                    "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {style} marker-end=\"url(#{marker})\"><title>message from rank {} {what} the receive on rank {}</title></line>",
                    px(from_x), px(from_y), px(to_x), px(to_y), m.from.rank, m.to.rank
                );
            }
        }
    }
}

/// The class, stroke attributes and arrow head of a received message's
/// line: grey and dashed for a potential match, thick orange into a
/// forced receive, else plain.
fn message_style(kind: MessageKind, forced: bool) -> (&'static str, &'static str, &'static str) {
    match (kind, forced) {
        (MessageKind::Potential, _) => (
            "msg potential",
            "stroke=\"#9e9e9e\" stroke-width=\"1.4\" stroke-dasharray=\"4 3\"",
            "arrow-potential",
        ),
        (_, true) => (
            "msg forced",
            "stroke=\"#e65100\" stroke-width=\"2.6\"",
            "arrow-forced",
        ),
        _ => ("msg", "stroke=\"#37474f\" stroke-width=\"1.3\"", "arrow"),
    }
}

/// A box per call shown, coloured when forced or blocked, with its
/// description as a tooltip and a label ([`box_label`]) when the font is
/// big enough to read.
fn calls(out: &mut String, geometry: &Geometry, timeline: &Timeline) {
    let (box_w, box_h, font) = (geometry.box_w, geometry.box_h, geometry.font);
    let chars = geometry.label_chars();
    for (rank, calls) in timeline.ranks.iter().enumerate() {
        for (index, call) in calls.iter().enumerate() {
            let col = geometry.columns[rank][index];
            if col < geometry.first {
                continue;
            }
            let x = geometry.x_of(col);
            let y = geometry.y_of(rank);
            let (class, fill, stroke, stroke_width) = match (call.blocked, call.forced) {
                (true, _) => ("call blocked", colour::BLOCKED, "#b71c1c", 2.4),
                (false, true) => ("call forced", colour::FORCED, "#b26a00", 2.0),
                _ => ("call", "#ffffff", "#4a5d7e", 1.0),
            };
            let _ = write!(
                out,
                "<g class=\"{class}\"><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"3\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{stroke_width}\"/>",
                escape(&call_title(call, rank)),
                px(x),
                px(y),
                px(box_w),
                px(box_h)
            );
            let label = if font >= 7.0 {
                box_label(call, chars)
            } else {
                String::new()
            };
            if !label.is_empty() {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\">{}</text>",
                    px(x + box_w / 2.0),
                    px(y + box_h / 2.0 + font * 0.36),
                    px(font),
                    escape(&label)
                );
            }
            out.push_str("</g>\n");
        }
    }
}

/// The tooltip of a call on `rank`: the call, its line, and whether its
/// match was forced or the rank was blocked in it (not escaped).
fn call_title(call: &TimelineCall, rank: usize) -> String {
    let mut what = format!("{} on rank {rank}", call.label);
    if call.line > 0 {
        let _ = write!(what, ", line {}", call.line);
    }
    if call.forced {
        what.push_str(": wildcard match forced by mbhybrid");
    }
    if call.blocked {
        what.push_str(": blocked here when the run ended");
    }
    what
}

/// The legend under the diagram, and how many steps were left out
/// (`first`) when the timeline was cut.
fn caption(out: &mut String, interleaving: u32, first: usize) {
    let _ = write!(
        out,
        "<span>interleaving {interleaving}, time flows right</span>\
         <span><i class=\"sw\" style=\"background:{}\"></i>wildcard receive forced by mbhybrid</span>\
         <span><i class=\"sw\" style=\"background:{}\"></i>blocked when the run ended</span>\
         <span><i class=\"ln-solid\"></i>message</span>\
         <span><i class=\"ln-potential\"></i>could also have matched</span>\
         <span><i class=\"ln-lost\"></i>never received</span>",
        colour::FORCED,
        colour::BLOCKED
    );
    if first > 0 {
        let _ = write!(
            out,
            "<span class=\"cut\">the first {first} steps are not shown</span>"
        );
    }
    out.push_str("\n</figcaption>\n</figure>\n");
}

const CSS: &str = r#"
:root { --fg: #1f2328; --muted: #59636e; --border: #d1d9e0; --code-bg: #f6f8fa;
        --error: #cf222e; --warning: #9a6700; --note: #0969da; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 12px 20px 40px; color: var(--fg); background: #fff;
       font: 14px/1.5 system-ui, -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", sans-serif; }
code, pre, .pre { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
code { background: var(--code-bg); padding: 0 3px; border-radius: 3px; }
h1 { font-size: 20px; margin: 4px 0; }
h1 code { font-size: 18px; }
h2 { font-size: 16px; margin: 0 0 4px; }
h3 { font-size: 14px; margin: 14px 0 4px; }
.verdict { font-weight: 600; margin: 2px 0 6px; }
.verdict.bad { color: var(--error); } .verdict.warn { color: var(--warning); } .verdict.good { color: #1a7f37; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0 12px; margin: 0 0 8px; color: var(--muted); font-size: 13px; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
nav ol { margin: 4px 0; padding-left: 22px; } nav a { color: inherit; text-decoration: none; } nav a:hover { text-decoration: underline; }
ul.warnings { color: var(--warning); padding-left: 18px; }
ul.limits { padding-left: 18px; }
.sev { font-weight: 700; margin-right: 4px; }
.sev.error { color: var(--error); } .sev.warning { color: var(--warning); } .sev.note { color: var(--note); }
a.code { color: inherit; margin-right: 6px; }
section { margin: 18px 0; }
section.finding { border: 1px solid var(--border); border-left: 5px solid var(--error); border-radius: 6px; padding: 10px 14px; }
section.finding.warning { border-left-color: #d4a72c; } section.finding.note { border-left-color: var(--note); }
.meta { color: var(--muted); margin: 0 0 8px; font-size: 13px; }
.loc { margin: 8px 0; }
.loc .where { font-size: 13px; }
.loc.primary .label { font-weight: 600; color: var(--error); }
section.warning .loc.primary .label { color: var(--warning); }
.loc.secondary .label { color: var(--note); }
pre.snippet { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; margin: 3px 0; padding: 4px 0; overflow-x: auto; }
pre.snippet > span, pre.snippet { white-space: pre; }
pre.snippet .ln { color: var(--muted); display: inline-block; padding: 0 8px 0 10px; user-select: none; }
pre.snippet .hl { background: #fff8c5; display: inline-block; min-width: 100%; }
pre.snippet u { text-decoration: underline wavy var(--error); text-underline-offset: 3px; }
.nosrc { color: var(--muted); font-style: italic; margin: 2px 0; }
ul.notes { list-style: none; padding-left: 0; margin: 8px 0 0; }
ul.notes li { margin: 2px 0; }
.pre { white-space: pre-wrap; font-family: inherit; font-size: inherit; }
li.help b { color: #1a7f37; }
figure.diagram { margin: 8px 0 12px; }
figure.diagram .scroll { overflow-x: auto; border: 1px solid var(--border); border-radius: 4px; }
svg.timeline { display: block; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
svg.timeline text.rank { fill: #24364f; font-weight: 600; }
svg.timeline g.call text { fill: #1f2328; }
svg.timeline g.call:hover rect { stroke-width: 3; }
figcaption { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12px; color: var(--muted); margin-top: 4px; }
figcaption i { display: inline-block; vertical-align: middle; margin-right: 5px; }
figcaption .sw { width: 14px; height: 10px; border: 1px solid #555; border-radius: 2px; }
figcaption .ln-solid { width: 22px; border-top: 2px solid #37474f; }
figcaption .ln-potential { width: 22px; border-top: 2px dashed #9e9e9e; }
figcaption .ln-lost { width: 22px; border-top: 2px dashed #c62828; }
figcaption .cut { font-style: italic; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid var(--border); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--code-bg); }
.state { margin-right: 8px; white-space: nowrap; } .state.bad { color: var(--error); }
td.relevant { color: #1a7f37; } td.irrelevant { color: var(--warning); }
details { border: 1px solid var(--border); border-radius: 4px; padding: 4px 10px; margin: 6px 0; }
details summary { cursor: pointer; }
details pre { background: var(--code-bg); padding: 6px 10px; border-radius: 4px; overflow-x: auto; }
details pre code { background: none; padding: 0; }
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use mbh_trace::timeline::TimelineMessage;

    fn call(label: &str, line: u32) -> TimelineCall {
        TimelineCall {
            label: label.into(),
            line,
            ..Default::default()
        }
    }

    #[test]
    fn layout_puts_receives_right_of_their_sends() {
        // rank 0: Recv(any) Recv(1); rank 1: Send; rank 2: Compute, Send
        let timeline = Timeline {
            ranks: vec![
                vec![call("MPI_Recv", 9), call("MPI_Recv", 10)],
                vec![call("MPI_Send", 12)],
                vec![
                    call("MPI_Barrier", 5),
                    call("MPI_Barrier", 6),
                    call("MPI_Send", 12),
                ],
            ],
            messages: vec![
                TimelineMessage {
                    from: CallRef { rank: 2, call: 2 },
                    to: CallRef { rank: 0, call: 0 },
                    kind: MessageKind::Matched,
                },
                TimelineMessage {
                    from: CallRef { rank: 1, call: 0 },
                    to: CallRef { rank: 0, call: 0 },
                    kind: MessageKind::Potential,
                },
            ],
        };
        let columns = layout(&timeline);
        assert_eq!(columns, vec![vec![3, 4], vec![0], vec![0, 1, 2]]);
    }

    #[test]
    fn layout_survives_a_cycle_and_bad_references() {
        let timeline = Timeline {
            ranks: vec![
                vec![call("MPI_Recv", 1), call("MPI_Send", 2)],
                vec![call("MPI_Recv", 1), call("MPI_Send", 2)],
            ],
            messages: vec![
                TimelineMessage {
                    from: CallRef { rank: 0, call: 1 },
                    to: CallRef { rank: 1, call: 0 },
                    kind: MessageKind::Matched,
                },
                TimelineMessage {
                    from: CallRef { rank: 1, call: 1 },
                    to: CallRef { rank: 0, call: 0 },
                    kind: MessageKind::Matched,
                },
                TimelineMessage {
                    from: CallRef { rank: 7, call: 0 },
                    to: CallRef { rank: 0, call: 9 },
                    kind: MessageKind::Matched,
                },
            ],
        };
        let columns = layout(&timeline);
        assert_eq!(columns.len(), 2);
        assert!(columns[0][1] > columns[0][0]);
        assert!(columns[1][1] > columns[1][0]);
        let mut out = String::new();
        diagram(&mut out, &timeline, 1);
        assert!(out.contains("<svg"));
    }

    #[test]
    fn geometry_fits_lanes_and_columns_and_keeps_the_last_columns() {
        let two = Timeline {
            ranks: vec![vec![call("MPI_Send", 1)], vec![call("MPI_Recv", 2)]],
            messages: vec![],
        };
        let g = Geometry::new(&two);
        assert_eq!((g.first, g.lane, g.column), (0, 44.0, 150.0));
        assert_eq!((g.width, g.height), (LABEL_WIDTH + 150.0 + 24.0, 92.0));
        assert_eq!(g.x_of(0), LABEL_WIDTH + (150.0 - g.box_w) / 2.0);
        assert_eq!(g.y_of(1), 2.0 + 44.0 + (44.0 - g.box_h) / 2.0);
        assert!(g.label_chars() > "Recv:2".len());
        let many = Timeline {
            ranks: vec![(0..MAX_COLUMNS + 7)
                .map(|i| call("MPI_Send", i as u32))
                .collect()],
            messages: vec![],
        };
        let g = Geometry::new(&many);
        assert_eq!((g.first, g.column), (7, 22.0));
        assert!(g.shown(CallRef { rank: 0, call: 7 }));
        assert!(!g.shown(CallRef { rank: 0, call: 6 }));
        assert!(!g.exists(CallRef { rank: 1, call: 0 }));
        assert!(!g.exists(CallRef {
            rank: 0,
            call: MAX_COLUMNS + 7
        }));
    }

    #[test]
    fn message_lines_say_what_became_of_them() {
        assert_eq!(message_style(MessageKind::Matched, false).0, "msg");
        assert_eq!(message_style(MessageKind::Matched, true).2, "arrow-forced");
        // A potential match stays grey even into a forced receive.
        assert_eq!(
            message_style(MessageKind::Potential, true).0,
            "msg potential"
        );
        let mut recv = call("MPI_Recv", 9);
        recv.forced = true;
        recv.blocked = true;
        assert_eq!(
            call_title(&recv, 2),
            "MPI_Recv on rank 2, line 9: wildcard match forced by mbhybrid: blocked here when the run ended"
        );
        assert_eq!(call_title(&call("MPI_Init", 0), 0), "MPI_Init on rank 0");
    }

    #[test]
    fn labels_shrink_to_fit() {
        let recv = call("MPI_Recv", 120);
        assert_eq!(box_label(&recv, 20), "Recv:120");
        assert_eq!(box_label(&recv, 5), ":120");
        assert_eq!(box_label(&call("MPI_Allreduce", 0), 5), "Allr…");
        assert_eq!(box_label(&recv, 1), "");
    }

    #[test]
    fn text_is_escaped_and_code_spans_kept() {
        assert_eq!(
            inline("a <b> & `x < y` \"q\""),
            "a &lt;b&gt; &amp; <code>x &lt; y</code> &quot;q&quot;"
        );
        assert_eq!(inline("one ` tick"), "one ` tick");
        assert_eq!(
            inline_markdown("see [MBH0001](MBH0001.md) and a[0]"),
            "see <a href=\"#MBH0001\">MBH0001</a> and a[0]"
        );
    }

    #[test]
    fn long_timelines_show_their_end() {
        let timeline = Timeline {
            ranks: vec![
                (0..MAX_COLUMNS + 40)
                    .map(|i| call("MPI_Send", i as u32 + 1))
                    .collect(),
                vec![call("MPI_Recv", 3)],
            ],
            messages: vec![],
        };
        let mut out = String::new();
        diagram(&mut out, &timeline, 1);
        assert!(out.contains("the first 40 steps are not shown"), "{out}");
        assert_eq!(out.matches("<g class=\"call").count(), MAX_COLUMNS);
    }
}
