//! The JSON report (`--format json`): DESIGN.md's object, documented field by
//! field in `docs/json.md`.

use mbh_trace::Report;

/// The report as pretty JSON, with a final newline.
pub fn render(report: &Report) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}
