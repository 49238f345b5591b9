//! The HTML page: self-contained, escaped, and drawn by a real browser.
//! The browser test runs headless Chromium (`/usr/bin/chromium`, installed
//! by `scripts/install-deps.sh`) and looks for the diagram's colours in
//! the screenshot; without Chromium it is skipped, saying so.

use crate::fixtures;
use mbh_diagnostics::html;
use mbh_trace::timeline::{CallRef, MessageKind, Timeline, TimelineCall, TimelineMessage};
use mbh_trace::FindingKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn call(label: &str, line: u32) -> TimelineCall {
    TimelineCall {
        label: label.into(),
        line,
        ..Default::default()
    }
}

fn message(from: (usize, usize), to: (usize, usize), kind: MessageKind) -> TimelineMessage {
    TimelineMessage {
        from: CallRef {
            rank: from.0,
            call: from.1,
        },
        to: CallRef {
            rank: to.0,
            call: to.1,
        },
        kind,
    }
}

/// The deadlock of MBH0001 on 3 ranks: rank 0's wildcard receive forced
/// to take rank 1's message, then blocked; rank 2's message never received.
fn deadlock_timeline() -> Timeline {
    let mut forced = call("MPI_Recv", 9);
    forced.forced = true;
    let mut blocked = call("MPI_Recv", 10);
    blocked.blocked = true;
    let mut finalize1 = call("MPI_Finalize", 14);
    finalize1.blocked = true;
    let mut finalize2 = finalize1.clone();
    finalize2.line = 14;
    Timeline {
        ranks: vec![
            vec![
                call("MPI_Init", 6),
                call("MPI_Comm_rank", 7),
                forced,
                blocked,
            ],
            vec![
                call("MPI_Init", 6),
                call("MPI_Comm_rank", 7),
                call("MPI_Send", 12),
                finalize1,
            ],
            vec![
                call("MPI_Init", 6),
                call("MPI_Comm_rank", 7),
                call("MPI_Send", 12),
                finalize2,
            ],
        ],
        messages: vec![
            message((1, 2), (0, 2), MessageKind::Matched),
            message((2, 2), (0, 2), MessageKind::Potential),
            message((2, 2), (0, 0), MessageKind::Unreceived),
        ],
    }
}

/// A ring on `n` ranks: each receives from its left and sends right.
fn ring(n: usize) -> Timeline {
    let mut ranks = Vec::new();
    let mut messages = Vec::new();
    for rank in 0..n {
        let mut recv = call("MPI_Recv", 20);
        recv.forced = rank == 0;
        ranks.push(vec![
            call("MPI_Init", 5),
            call("MPI_Send", 19),
            recv,
            call("MPI_Barrier", 22),
        ]);
        messages.push(message(
            (rank, 1),
            ((rank + 1) % n, 2),
            MessageKind::Matched,
        ));
    }
    ranks[n - 1][3].blocked = true;
    Timeline { ranks, messages }
}

fn deadlock_page(dir: &Path) -> String {
    fixtures::write_example(dir, FindingKind::Deadlock);
    let mut report = fixtures::report_of(FindingKind::Deadlock);
    report.findings[0]
        .message
        .push_str(" <script>alert(1)</script>");
    report
        .warnings
        .push("`./app` was not built by `mbhybrid build` & <friends>".into());
    html::render(&report, dir, &[(0, deadlock_timeline())])
}

#[test]
fn the_page_is_self_contained_and_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let page = deadlock_page(dir.path());
    for external in ["<script", "<link", " src=", "url(http", "@import", "://"] {
        assert!(
            !page.contains(external),
            "the page must not contain {external:?}"
        );
    }
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("&amp; &lt;friends&gt;"));
    // The finding, its snippet (escaped C), its diagram and its code page.
    assert!(page.contains("<code>MPI_Recv</code>"));
    assert!(
        page.contains("MPI_Recv(&amp;y, 1, MPI_INT, 1, 0"),
        "the snippet quotes the source"
    );
    assert_eq!(page.matches("<g class=\"call").count(), 12);
    assert_eq!(page.matches("<g class=\"call forced\"").count(), 1);
    assert_eq!(page.matches("<g class=\"call blocked\"").count(), 3);
    assert_eq!(page.matches("class=\"msg").count(), 3);
    assert!(page.contains("<details id=\"MBH0001\">"));
    assert!(
        page.contains("href=\"#MBH0015\""),
        "links between code pages stay inside"
    );
}

#[test]
fn diagrams_scale_to_64_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixtures::report_of(FindingKind::Deadlock);
    for n in [2, 8, 64] {
        let page = html::render(&report, dir.path(), &[(0, ring(n))]);
        assert_eq!(page.matches("<g class=\"lane\"").count(), n);
        assert_eq!(page.matches("<g class=\"call").count(), 4 * n);
        let height: f64 = page
            .split("<svg class=\"timeline\"")
            .nth(1)
            .and_then(|s| s.split("height=\"").nth(1))
            .and_then(|s| s.split('"').next())
            .unwrap()
            .parse()
            .unwrap();
        assert!(height <= 800.0, "{n} ranks: {height} px high");
        assert!(height >= 12.0 * n as f64, "{n} ranks: lanes at least 12 px");
    }
}

/// The diagrams (`<figure class="diagram">` ... `</figure>`) of a page.
fn figures(page: &str) -> Vec<&str> {
    page.match_indices("<figure class=\"diagram\">")
        .map(|(at, _)| {
            let rest = &page[at..];
            let end = rest.find("</figure>").unwrap() + "</figure>".len();
            &rest[..end]
        })
        .collect()
}

/// A timeline longer than [`html::MAX_COLUMNS`] whose messages cross the
/// cut: rank 1 receives from a send that is not shown, rank 2 never
/// receives a send that is not shown, and rank 1's wildcard receive could
/// also have taken a shown send.
fn cut_timeline() -> Timeline {
    let extra = 5;
    let sends = (0..html::MAX_COLUMNS + extra)
        .map(|i| call("MPI_Send", i as u32 + 1))
        .collect();
    let mut rank1: Vec<TimelineCall> = (0..2 * extra)
        .map(|i| call("MPI_Comm_rank", i as u32 + 1))
        .collect();
    rank1.push(call("MPI_Recv", 40));
    let mut forced = call("MPI_Recv", 41);
    forced.forced = true;
    rank1.push(forced);
    let mut blocked = call("MPI_Recv", 42);
    blocked.blocked = true;
    Timeline {
        ranks: vec![sends, rank1, vec![blocked]],
        messages: vec![
            message((0, 0), (1, 2 * extra), MessageKind::Matched),
            message((0, 1), (2, 0), MessageKind::Unreceived),
            message((0, 2 * extra + 1), (1, 2 * extra + 1), MessageKind::Matched),
            message(
                (0, 2 * extra + 2),
                (1, 2 * extra + 1),
                MessageKind::Potential,
            ),
        ],
    }
}

/// The drawing itself, exactly: the deadlock's diagram whole (lanes,
/// every kind of call and message, labels, caption), and of a cut
/// timeline its frame, messages and caption. Accept a deliberate change
/// with `cargo insta review`.
#[test]
fn diagrams_are_drawn_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let page = deadlock_page(dir.path());
    let deadlock = figures(&page);
    assert_eq!(deadlock.len(), 1);
    let report = fixtures::report_of(FindingKind::Deadlock);
    let page = html::render(&report, dir.path(), &[(0, cut_timeline())]);
    let cut = figures(&page);
    assert_eq!(cut.len(), 1);
    assert!(cut[0].contains("the first 5 steps are not shown"));
    assert_eq!(cut[0].matches("<g class=\"lane\"").count(), 3);
    assert_eq!(cut[0].matches("class=\"msg").count(), 4);
    assert!(
        cut[0].contains("<line class=\"msg\" x1=\"64\""),
        "a send not shown starts at the labels"
    );
    let cut_lines: Vec<&str> = cut[0]
        .lines()
        .filter(|l| !l.starts_with("<g class=\"call"))
        .collect();
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings.bind(|| {
        insta::assert_snapshot!("html_diagram_deadlock", deadlock[0]);
        insta::assert_snapshot!("html_diagram_cut", cut_lines.join("\n"));
    });
}

fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin/chromium");
    path.exists().then_some(path)
}

/// Runs headless Chromium on `page`, writing a screenshot; `None` if it
/// did not finish in time.
fn screenshot(chromium: &Path, page: &Path, out: &Path, profile: &Path, size: &str) -> bool {
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--force-color-profile=srgb",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", out.display()))
        .arg(format!("--window-size={size}"))
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success() && out.exists();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The pixels of a PNG as RGB triples.
fn pixels(path: &Path) -> (u32, u32, Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

fn hex(colour: &str) -> [u8; 3] {
    let c = u32::from_str_radix(colour.trim_start_matches('#'), 16).unwrap();
    [(c >> 16) as u8, (c >> 8) as u8, c as u8]
}

fn count(pixels: &[[u8; 3]], colour: &str) -> usize {
    let want = hex(colour);
    pixels
        .iter()
        .filter(|p| p.iter().zip(want).all(|(a, b)| a.abs_diff(b) <= 3))
        .count()
}

#[test]
fn chromium_draws_the_diagram() {
    // A missing tool fails the test with its reason, never passes it.
    let Some(chromium) = chromium() else {
        panic!("/usr/bin/chromium is missing (scripts/install-deps.sh installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    std::fs::write(&page, deadlock_page(dir.path())).unwrap();
    let shot = dir.path().join("shot.png");
    assert!(
        screenshot(
            &chromium,
            &page,
            &shot,
            &dir.path().join("profile"),
            "1200,1400"
        ),
        "chromium did not write a screenshot"
    );
    let (width, height, pixels) = pixels(&shot);
    assert_eq!((width, height), (1200, 1400));
    // The lanes, the forced receive and the blocked calls are on screen,
    // in areas of a real size (not a stray pixel).
    let lanes = count(&pixels, "#dce8f8") + count(&pixels, "#eef4fc");
    let forced = count(&pixels, "#ffb300");
    let blocked = count(&pixels, "#f28b82");
    assert!(lanes > 20_000, "lane pixels: {lanes}");
    assert!(forced > 1_000, "forced-receive pixels: {forced}");
    assert!(blocked > 3_000, "blocked-call pixels: {blocked}");
    if let Some(keep) = std::env::var_os("MBH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

#[test]
fn chromium_draws_64_ranks() {
    // A missing tool fails the test with its reason, never passes it.
    let Some(chromium) = chromium() else {
        panic!("/usr/bin/chromium is missing (scripts/install-deps.sh installs it)");
    };
    let dir = tempfile::tempdir().unwrap();
    fixtures::write_example(dir.path(), FindingKind::Deadlock);
    let report = fixtures::report_of(FindingKind::Deadlock);
    let page = dir.path().join("report.html");
    std::fs::write(&page, html::render(&report, dir.path(), &[(0, ring(64))])).unwrap();
    let shot = dir.path().join("shot.png");
    assert!(screenshot(
        &chromium,
        &page,
        &shot,
        &dir.path().join("profile"),
        "1200,1400"
    ));
    let (_, _, pixels) = pixels(&shot);
    // Both lane colours, so lanes are told apart, and the one forced receive.
    assert!(count(&pixels, "#dce8f8") > 10_000);
    assert!(count(&pixels, "#eef4fc") > 10_000);
    assert!(count(&pixels, "#ffb300") > 100);
    if let Some(keep) = std::env::var_os("MBH_KEEP_SCREENSHOT_64") {
        std::fs::copy(&shot, keep).unwrap();
    }
}
