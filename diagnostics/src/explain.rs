//! The error code pages (`mbhybrid explain MBH0001`): one Markdown page per
//! finding code, written in `diagnostics/codes/MBH00NN.md` and compiled into
//! the binary.
//!
//! Every page has the same sections, in this order (after rustc's RFC 1567
//! error-code pages):
//!
//! ```text
//! # MBH0001: deadlock          <- code and FindingKind::name()
//! one paragraph: what the finding is   (the summary)
//! ## What it means
//! ## Example                   <- real MPI C that triggers it
//! ## How to fix it             <- the fixed example
//! ## What mbhybrid reports     <- the report of the example, as `human` prints it
//! ```
//!
//! Codes are append-only: a retired code keeps its page. The test suite checks
//! that every [`FindingKind`] has a page, every page a kind, that the examples
//! are real C and that the reported text is what the renderer prints.

use mbh_trace::FindingKind;

/// Every page, in code order.
const PAGES: &[(&str, &str)] = &[
    ("MBH0001", include_str!("../codes/MBH0001.md")),
    ("MBH0002", include_str!("../codes/MBH0002.md")),
    ("MBH0003", include_str!("../codes/MBH0003.md")),
    ("MBH0004", include_str!("../codes/MBH0004.md")),
    ("MBH0005", include_str!("../codes/MBH0005.md")),
    ("MBH0006", include_str!("../codes/MBH0006.md")),
    ("MBH0007", include_str!("../codes/MBH0007.md")),
    ("MBH0008", include_str!("../codes/MBH0008.md")),
    ("MBH0009", include_str!("../codes/MBH0009.md")),
    ("MBH0010", include_str!("../codes/MBH0010.md")),
    ("MBH0011", include_str!("../codes/MBH0011.md")),
    ("MBH0012", include_str!("../codes/MBH0012.md")),
    ("MBH0013", include_str!("../codes/MBH0013.md")),
    ("MBH0014", include_str!("../codes/MBH0014.md")),
    ("MBH0015", include_str!("../codes/MBH0015.md")),
    ("MBH0016", include_str!("../codes/MBH0016.md")),
    ("MBH0017", include_str!("../codes/MBH0017.md")),
    ("MBH0018", include_str!("../codes/MBH0018.md")),
    ("MBH0019", include_str!("../codes/MBH0019.md")),
    ("MBH0020", include_str!("../codes/MBH0020.md")),
    ("MBH0021", include_str!("../codes/MBH0021.md")),
    ("MBH0022", include_str!("../codes/MBH0022.md")),
    ("MBH0023", include_str!("../codes/MBH0023.md")),
];

/// Every code with its page, in code order.
pub fn pages() -> impl Iterator<Item = (&'static str, &'static str)> {
    PAGES.iter().copied()
}

/// README's table of the finding kinds, one row per page (its code, the
/// kind its title names, its summary): Markdown, generated so that README
/// never says what the pages do not (the code pages' test compares).
pub fn codes_markdown() -> String {
    let mut table = String::from("| code | kind | what it means |\n| --- | --- | --- |\n");
    for (code, page) in pages() {
        let title = page.lines().next().unwrap_or_default();
        let kind = title.split_once(": ").map_or("", |(_, kind)| kind.trim());
        let summary = summary(page).replace('|', "\\|");
        table.push_str(&format!("| {code} | `{kind}` | {summary} |\n"));
    }
    table
}

/// The canonical form (`MBH0001`) of a code as a user may type it:
/// `MBH0001`, `mbh0001`, `0001` or `1`. `None` when it is not of that shape
/// or no page has it.
pub fn canonical(code: &str) -> Option<&'static str> {
    let code = code.trim();
    let digits = match code.get(..3) {
        Some(prefix) if prefix.eq_ignore_ascii_case("mbh") => &code[3..],
        _ => code,
    };
    if digits.is_empty() || digits.len() > 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let wanted = format!("MBH{:04}", digits.parse::<u32>().ok()?);
    PAGES
        .iter()
        .map(|(code, _)| *code)
        .find(|code| *code == wanted)
}

/// The page of `code` (any form [`canonical`] accepts), as Markdown.
pub fn page(code: &str) -> Option<&'static str> {
    let code = canonical(code)?;
    PAGES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, page)| *page)
}

/// The page of a finding kind.
pub fn page_of(kind: FindingKind) -> Option<&'static str> {
    page(kind.code())
}

/// The page's summary: its first paragraph, on one line.
pub fn summary(page: &str) -> String {
    let body = page.split_once('\n').map_or("", |(_, rest)| rest);
    let paragraph: Vec<&str> = body
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(str::trim)
        .collect();
    paragraph.join(" ")
}

/// The text of section `## heading` of a page, without its heading, trimmed;
/// `None` when the page has no such section.
pub fn section<'a>(page: &'a str, heading: &str) -> Option<&'a str> {
    let marker = format!("\n## {heading}\n");
    let start = page.find(&marker)? + marker.len();
    let rest = &page[start..];
    let end = rest.find("\n## ").map_or(rest.len(), |i| i + 1);
    Some(rest[..end].trim())
}

/// The prose of some Markdown without its code blocks, links reduced to
/// their text, paragraphs joined into lines: the plain text of a page
/// section, for places that show no Markdown.
pub fn prose(markdown: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    strip_links(&paragraphs.join("\n\n"))
}

/// `[text](target)` becomes `text`.
pub(crate) fn strip_links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, after)) = rest.split_once('[') {
        out.push_str(before);
        match parse_link(after) {
            Some((label, _, tail)) => {
                out.push_str(label);
                rest = tail;
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// After a `[`: the link's text, its target and the text after it.
pub(crate) fn parse_link(after_bracket: &str) -> Option<(&str, &str, &str)> {
    let (label, tail) = after_bracket.split_once("](")?;
    if label.contains(['[', ']', '\n']) {
        return None;
    }
    let (target, tail) = tail.split_once(')')?;
    if target.contains([' ', '\n']) {
        return None;
    }
    Some((label, target, tail))
}

const BOLD: &str = "\x1b[1m";
const BOLD_UNDERLINE: &str = "\x1b[1;4m";
const CODE: &str = "\x1b[33m";
const BLOCK: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// A page as terminal text: headings underlined, code blocks indented by
/// four spaces, links reduced to their text. `color` adds ANSI styles
/// (bold headings, coloured code) and drops the backticks of inline code.
pub fn render_terminal(page: &str, color: bool) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in page.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            if line.is_empty() {
                out.push('\n');
            } else if color {
                out.push_str(&format!("    {BLOCK}{line}{RESET}\n"));
            } else {
                out.push_str(&format!("    {line}\n"));
            }
            continue;
        }
        let heading = line
            .strip_prefix("# ")
            .map(|h| (h, '='))
            .or_else(|| line.strip_prefix("## ").map(|h| (h, '-')));
        match heading {
            Some((text, _)) if color => {
                let style = if line.starts_with("# ") {
                    BOLD_UNDERLINE
                } else {
                    BOLD
                };
                out.push_str(&format!("{style}{text}{RESET}\n"));
            }
            Some((text, rule)) => {
                out.push_str(text);
                out.push('\n');
                out.extend(std::iter::repeat_n(rule, text.chars().count()));
                out.push('\n');
            }
            None => {
                let text = strip_links(line);
                if color {
                    out.push_str(&inline_code_ansi(&text));
                } else {
                    out.push_str(&text);
                }
                out.push('\n');
            }
        }
    }
    out
}

/// `` `x` `` becomes `x` in the code colour.
fn inline_code_ansi(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 1 {
            out.push_str(&format!("{CODE}{part}{RESET}"));
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_accepted_in_every_form_users_type() {
        for form in ["MBH0001", "mbh0001", "Mbh0001", "0001", "1", " 1 ", "MBH1"] {
            assert_eq!(canonical(form), Some("MBH0001"), "{form:?}");
        }
        assert_eq!(canonical("16"), Some("MBH0016"));
        for bad in [
            "", "MBH", "MBH00001", "E0001", "0", "99", "9999", "1a", "-1", "MBH-1",
        ] {
            assert_eq!(canonical(bad), None, "{bad:?}");
        }
        assert!(page("mbh0015").unwrap().starts_with("# MBH0015: timeout\n"));
        assert!(page("99").is_none());
    }

    #[test]
    fn summaries_and_sections_come_from_the_page() {
        let page = page_of(FindingKind::Deadlock).unwrap();
        assert_eq!(
            summary(page),
            "Every rank that is still running is blocked in an MPI call, and none of them can ever continue."
        );
        let fix = section(page, "How to fix it").unwrap();
        assert!(fix.starts_with("Make every receive"), "{fix}");
        assert!(fix.ends_with("```"), "{fix}");
        assert!(section(page, "Nonexistent").is_none());
        let text = prose(section(page, "What it means").unwrap());
        assert!(text.contains("(that is MBH0015)"), "{text}");
        assert!(!text.contains("```"));
    }

    #[test]
    fn terminal_rendering_underlines_headings_and_indents_code() {
        let page = "# MBH0009: x\n\nSee [MBH0001](MBH0001.md) and `MPI_Send`.\n\n## Example\n\n```c\nint x;\n\nint y;\n```\n";
        let plain = render_terminal(page, false);
        assert_eq!(
            plain,
            "MBH0009: x\n==========\n\nSee MBH0001 and `MPI_Send`.\n\nExample\n-------\n\n    int x;\n\n    int y;\n"
        );
        let coloured = render_terminal(page, true);
        assert!(
            coloured.contains("\x1b[1;4mMBH0009: x\x1b[0m"),
            "{coloured:?}"
        );
        assert!(coloured.contains("\x1b[33mMPI_Send\x1b[0m"), "{coloured:?}");
        assert!(!coloured.contains('`'));
    }

    #[test]
    fn links_reduce_to_their_text() {
        assert_eq!(strip_links("a [b](c.md) d"), "a b d");
        assert_eq!(strip_links("a[0] = [1]"), "a[0] = [1]");
        assert_eq!(strip_links("[x] (y)"), "[x] (y)");
    }
}
