//! The code pages, checked like rustc's tidy checks its error codes: every
//! kind has a page, every page a kind, each page has the sections in order,
//! its C examples compile, and the report it quotes is what mbhybrid
//! prints for that example.

use crate::fixtures;
use mbh_diagnostics::{explain, human};
use mbh_trace::FindingKind;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn codes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("codes")
}

#[test]
fn every_kind_has_a_page_and_every_page_a_kind() {
    let kinds: BTreeSet<&str> = FindingKind::ALL.iter().map(|k| k.code()).collect();
    let compiled: BTreeSet<&str> = explain::pages().map(|(code, _)| code).collect();
    let mut on_disk = BTreeSet::new();
    for entry in std::fs::read_dir(codes_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let code = name
            .strip_suffix(".md")
            .unwrap_or_else(|| panic!("codes/{name} is not a code page"));
        on_disk.insert(code.to_string());
    }
    let on_disk: BTreeSet<&str> = on_disk.iter().map(String::as_str).collect();
    assert_eq!(kinds, compiled, "FindingKind codes vs pages in explain.rs");
    assert_eq!(kinds, on_disk, "FindingKind codes vs files in codes/");
    for &kind in FindingKind::ALL {
        let page = explain::page(kind.code()).unwrap();
        assert_eq!(explain::page_of(kind), Some(page));
        let title = format!("# {}: {}\n", kind.code(), kind.name());
        assert!(
            page.starts_with(&title),
            "{} must start with {title:?}",
            kind.code()
        );
    }
}

#[test]
fn pages_have_the_sections_in_order() {
    let sections = [
        "## What it means",
        "## Example",
        "## How to fix it",
        "## What mbhybrid reports",
    ];
    for (code, page) in explain::pages() {
        let headings: Vec<&str> = page.lines().filter(|l| l.starts_with("## ")).collect();
        assert_eq!(headings, sections, "{code}");
        assert!(!explain::summary(page).is_empty(), "{code} has no summary");
        assert!(
            explain::summary(page).ends_with('.'),
            "{code}: the summary is a sentence"
        );
        let example = explain::section(page, "Example").unwrap();
        let fix = explain::section(page, "How to fix it").unwrap();
        let reports = explain::section(page, "What mbhybrid reports").unwrap();
        assert_eq!(
            fixtures::blocks(example, "c").len(),
            1,
            "{code}: one example"
        );
        assert_eq!(
            fixtures::blocks(fix, "c").len(),
            1,
            "{code}: one fixed example"
        );
        assert_eq!(
            fixtures::blocks(reports, "text").len(),
            1,
            "{code}: one report"
        );
        assert_ne!(
            fixtures::blocks(example, "c"),
            fixtures::blocks(fix, "c"),
            "{code}"
        );
        let mut in_code = false;
        for line in page.lines() {
            in_code ^= line.starts_with("```");
            let prose = !in_code && !line.starts_with("```");
            assert!(
                !prose || line.chars().count() <= 80,
                "{code}: prose line too long: {line}"
            );
        }
    }
}

/// The examples are real MPI C: each compiles with `mpicc -Wall -Wextra
/// -Werror` (skipped, saying so, where there is no `mpicc`).
#[test]
fn examples_compile() {
    let Some(mpicc) = ["/usr/bin/mpicc", "/usr/local/bin/mpicc"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.exists())
    else {
        // A missing tool is a failure with its reason, never a pass.
        panic!("no mpicc here: install MPICH (scripts/install-deps.sh)");
    };
    let dir = tempfile::tempdir().unwrap();
    for (code, page) in explain::pages() {
        for (i, source) in fixtures::blocks(page, "c").into_iter().enumerate() {
            let file = dir.path().join(format!("{code}_{i}.c"));
            std::fs::write(&file, source).unwrap();
            let out = std::process::Command::new(mpicc)
                .args(["-Wall", "-Wextra", "-Werror", "-c", "-o"])
                .arg(dir.path().join(format!("{code}_{i}.o")))
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{code} example {i} does not compile:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The text under "What mbhybrid reports" is the human rendering of the
/// fixture finding for the page's example. `MBH_BLESS=1` rewrites it.
#[test]
fn pages_quote_what_the_renderer_prints() {
    let bless = std::env::var_os("MBH_BLESS").is_some();
    let mut stale = Vec::new();
    for &kind in FindingKind::ALL {
        let dir = tempfile::tempdir().unwrap();
        fixtures::write_example(dir.path(), kind);
        let rendered = human::render_finding(&fixtures::finding(kind), dir.path(), false).unwrap();
        let rendered = rendered.trim_end();
        let path = codes_dir().join(format!("{}.md", kind.code()));
        let page = std::fs::read_to_string(&path).unwrap();
        let section_start = page.find("\n## What mbhybrid reports\n").unwrap();
        let block_start = section_start + page[section_start..].find("```text\n").unwrap() + 8;
        let block_end = block_start + page[block_start..].find("```").unwrap();
        let quoted = page[block_start..block_end].trim_end();
        if quoted != rendered {
            if bless {
                let updated = format!("{}{rendered}\n{}", &page[..block_start], &page[block_end..]);
                std::fs::write(&path, updated).unwrap();
            } else {
                stale.push(format!(
                    "{}: the page quotes\n{quoted}\n\nbut the renderer prints\n{rendered}\n",
                    kind.code()
                ));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nrun `MBH_BLESS=1 cargo test -p mbh-diagnostics --test diagnostics codes` to update the pages (and rebuild: they are compiled in)",
        stale.join("\n")
    );
}

/// docs/formats.md lists every code with its kind and default severity.
#[test]
fn the_formats_document_lists_every_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/formats.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let log: serde_json::Value =
        serde_json::from_str(&mbh_diagnostics::sarif::render(&fixtures::report(
            FindingKind::ALL
                .iter()
                .map(|&k| fixtures::finding(k))
                .collect(),
            3,
            1,
        )))
        .unwrap();
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for (kind, rule) in FindingKind::ALL.iter().zip(rules) {
        let level = rule["defaultConfiguration"]["level"].as_str().unwrap();
        let row = format!(
            "| {code} | `{}` | {level} | [{code}](../diagnostics/codes/{code}.md) |",
            kind.name(),
            code = kind.code()
        );
        assert!(doc.contains(&row), "docs/formats.md lacks the row {row}");
    }
}

/// README's table of finding kinds is generated from the pages
/// ([`explain::codes_markdown`]): the part between its markers equals it.
/// `MBH_BLESS=1` rewrites it.
#[test]
fn readme_lists_every_code_as_its_page_says() {
    const BEGIN: &str = "<!-- begin: generated from diagnostics/codes -->\n";
    const END: &str = "<!-- end: generated from diagnostics/codes -->";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let start = readme.find(BEGIN).expect("README has the begin marker") + BEGIN.len();
    let end = readme.find(END).expect("README has the end marker");
    let generated = explain::codes_markdown();
    if std::env::var_os("MBH_BLESS").is_some_and(|v| v == "1") {
        let rewritten = format!("{}{generated}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, rewritten).expect("rewrite README.md");
        return;
    }
    assert!(
        readme[start..end] == generated,
        "README.md's table of finding codes differs from the code pages \
         (rerun with MBH_BLESS=1 to rewrite it)"
    );
}
