//! The integration tests of mbh-diagnostics, one binary:
//!
//! * `codes`: the code pages against `FindingKind` (a page per kind, a kind
//!   per page), their examples compile, and the report they quote is what
//!   the renderer prints (`MBH_BLESS=1` rewrites it);
//! * `formats`: snapshots (insta) of every format for a finding of every
//!   kind (`cargo insta review`, or `INSTA_UPDATE=always`, to accept);
//! * `sarif`: SARIF logs validate against the OASIS SARIF 2.1.0 schema;
//! * `html`: the page is self-contained, and headless Chromium draws it.

#[path = "suite/codes.rs"]
mod codes;
#[path = "suite/fixtures.rs"]
mod fixtures;
#[path = "suite/formats.rs"]
mod formats;
#[path = "suite/html.rs"]
mod html;
#[path = "suite/sarif.rs"]
mod sarif;
