//! The HTML report of a real small experiment, rendered by headless
//! Chromium: the cells overlaid in one chart and side by side, each series
//! named by its cell, no chart empty (a phase too short for one is left
//! out, with a line saying why), nothing loaded from outside; and
//! screenshots kept in the target directory, wherever CARGO_TARGET_DIR
//! puts it: fslab-report-screenshot.png (the page) and
//! fslab-report-compared.png (its comparison, docs/images/report-compared.png).

use std::path::PathBuf;
use std::process::Command;

use crate::support::*;

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            fslab_lab::mkfs::find_tool(n).or_else(|| {
                let p = PathBuf::from("/usr/bin").join(n);
                p.exists().then_some(p)
            })
        })
}

fn headless(browser: &PathBuf, profile: &std::path::Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

#[test]
fn the_report_renders_every_chart_and_loads_nothing() {
    if !privileged("a real experiment on loop devices") {
        return;
    }
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing, and CI=true: failing instead of skipping"
        );
        eprintln!("skipping: chromium is not installed");
        return;
    };
    let lab = Lab::new();
    let f = lab.experiment(
        "rep.toml",
        r#"
name = "report"
repetitions = 3
[device]
size = "512M"
image_dir = "IMAGES"
[workload]
kind = "fsmark"
args = ["-n", "1500", "-s", "4096", "-S1", "-t", "2", "--phases", "create,stat"]
dirs = 2
[[target]]
fs = "ext4"
[[target]]
fs = "ext4"
label = "ext4 nojournal"
mkfs_options = ["-O ^has_journal"]
[[target]]
fs = "xfs"
"#,
    );
    let o = lab.run_cmd().arg("run").arg(&f).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let html = lab.path("report.html");
    let o = lab
        .fslab()
        .args(["report", "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(
        text.contains("default-src 'none'"),
        "the page forbids loading anything"
    );
    for bad in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "@import",
        "url(http",
    ] {
        assert!(
            !text.contains(bad),
            "the page refers to something outside: {bad}"
        );
    }

    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", html.display());
    let dom = headless(&browser, profile.path())
        .args(["--virtual-time-budget=3000", "--dump-dom", &url])
        .output()
        .unwrap();
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout).into_owned();
    no_chart_is_empty(&dom);
    assert!(
        dom.contains("<td>ext4 nojournal</td>"),
        "the comparison table is there"
    );
    overview_holds_every_cell(&dom);
    cells_overlaid(&dom);
    cells_side_by_side(&dom);
    words_a_user_reads(&dom);
    // The page uses the window's width: wide charts scale to it.
    assert!(dom.contains("svg.chart.wide { width: 100%; height: auto; }"));
    assert!(!dom.contains("max-width: 1500px"));
    // The header: kernel, version, file, scale, commands, date.
    for fact in ["experiment", "kernel", "fslab", "commands", "runs"] {
        assert!(
            dom.contains(&format!("<dt>{fact}</dt>")),
            "the header has {fact}"
        );
    }
    assert!(dom.contains("rep.toml, scale 1, 3 repetition(s)"));
    // Each cell says how its filesystem was made.
    assert!(
        dom.contains("mkfs:        mkfs.ext4 -F -q -O ^has_journal /dev/loop"),
        "the nojournal cell's mkfs line"
    );

    screenshots(&browser, profile.path(), &lab, &url);
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

/// The whole page, and its comparison as docs/report.md shows it, kept in
/// the target directory (the fslab binary's `debug/`'s parent: the
/// workspace's `target/` does not exist when CARGO_TARGET_DIR is elsewhere).
fn screenshots(browser: &PathBuf, profile: &std::path::Path, lab: &Lab, url: &str) {
    let target = PathBuf::from(env!("CARGO_BIN_EXE_fslab"))
        .parent()
        .and_then(|d| d.parent())
        .expect("the target directory")
        .to_path_buf();
    // Headless Chromium's screenshot is of the top of a page: the
    // comparison's is of a frame of it, opened at its section.
    let frame = lab.path("compared.html");
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><body style=\"margin:0\"><iframe src=\"{url}#cells-compared\" \
             style=\"border:0;width:1600px;height:1700px\"></iframe></body>"
        ),
    )
    .unwrap();
    for (name, size, at) in [
        ("fslab-report-screenshot.png", "1600,6000", url.to_string()),
        (
            "fslab-report-compared.png",
            "1600,1700",
            format!("file://{}", frame.display()),
        ),
    ] {
        let shot = target.join(name);
        let o = headless(browser, profile)
            .arg(format!("--screenshot={}", shot.display()))
            .args([&format!("--window-size={size}"), &at])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            std::fs::metadata(&shot).unwrap().len() > 50_000,
            "a real screenshot: {name}"
        );
    }
}

/// Each chart (an `<svg class="chart...">`) of the page with its caption:
/// a row's charts are named "ROW / CELL" (the row's title, then each
/// chart's caption, its cell's label).
fn charts(dom: &str) -> Vec<(String, &str)> {
    let caption = |from: &str| {
        let c = &from[from.find("<figcaption>").unwrap() + 12..];
        c[..c.find("</figcaption>").unwrap()].to_string()
    };
    dom.match_indices("<svg class=\"chart")
        .map(|(at, _)| {
            let (before, rest) = dom.split_at(at);
            let svg = &rest[..rest.find("</svg>").unwrap()];
            let own = caption(&rest[svg.len()..]);
            let in_row = before.rfind("<div class=\"cells\">") > before.rfind("</div>");
            let name = match before.rfind("<figure class=\"row\">") {
                Some(r) if in_row => format!("{} / {own}", caption(&before[r..])),
                _ => own,
            };
            (name, svg)
        })
        .collect()
}

/// Whether an SVG chart draws data: a line of two points or more, or a
/// group of marks with something in it (dots, bars, a mean, a movie's cells).
fn drawn(svg: &str) -> bool {
    let lines = svg
        .split("<path class=\"mark\"")
        .skip(1)
        .any(|p| path_points(p) >= 2);
    let groups = svg.split("<g class=\"mark\"").skip(1).any(|g| {
        let g = &g[..g.find("</g>").unwrap()];
        g.contains("<rect") || g.contains("<circle")
    });
    lines || groups || svg.contains("<rect class=\"mark\"")
}

/// The points of the path whose opening tag starts `tag`.
fn path_points(tag: &str) -> usize {
    let tag = &tag[..tag.find('>').unwrap()];
    tag.find(" d=\"").map_or(0, |d| {
        let d = &tag[d + 4..];
        d[..d.find('"').unwrap()].matches(['M', 'L']).count()
    })
}

/// The series of one chart (marks named by `data-series`), each with the
/// points it draws.
fn series(svg: &str) -> Vec<(&str, usize)> {
    svg.split("data-series=\"")
        .skip(1)
        .map(|s| {
            let name = &s[..s.find('"').unwrap()];
            let points = match path_points(s) {
                0 => s[..s.find("</g>").unwrap_or(0)].matches("<rect").count(),
                n => n,
            };
            (name, points)
        })
        .collect()
}

const CELLS: [&str; 3] = ["ext4", "ext4 nojournal", "xfs"];

/// The chart captioned `name` (in a row, "ROW / name").
fn chart<'a>(all: &'a [(String, &'a str)], name: &str) -> &'a str {
    all.iter()
        .find(|(n, _)| n == name || n.ends_with(&format!(" / {name}")))
        .map(|(_, s)| *s)
        .unwrap_or_else(|| {
            let names: Vec<&String> = all.iter().map(|(n, _)| n).collect();
            panic!("no chart {name:?} among {names:?}")
        })
}

/// Every cell's series on each overlaid chart, drawn as a line; the stat
/// phase, 0.01 s long, left out of the per-second charts with its reason.
fn cells_overlaid(dom: &str) {
    let all = charts(dom);
    let mut overlaid = vec![
        "create: operations per second, every cell".to_string(),
        "workload CPU (user + system), every cell".to_string(),
    ];
    let cdfs: Vec<&String> = all
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.ends_with("latency, every cell (CDF)"))
        .collect();
    for want in ["create creat", "create fsync", "stat stat"] {
        assert!(
            cdfs.iter()
                .any(|n| n.contains(&format!(" / {want} latency"))),
            "no {want} latency CDF among {cdfs:?}"
        );
    }
    overlaid.extend(
        cdfs.into_iter()
            .map(|n| n.split(" / ").nth(1).unwrap().to_string()),
    );
    for name in &overlaid {
        let got = series(chart(&all, name));
        let cells: Vec<&str> = got.iter().map(|s| s.0).collect();
        assert_eq!(cells, CELLS, "{name}: one series per cell, named by it");
        for (cell, points) in got {
            assert!(points >= 2, "{name}: {cell} draws {points} point(s)");
        }
    }
    assert!(
        !all.iter()
            .any(|(n, _)| n.starts_with("stat: operations per second")),
        "a 0.01 s phase has no per-second chart"
    );
    for note in [
        "stat: operations per second, every cell: left out, run too short for a per-second chart in every cell (the phase lasted at most 0.0",
        "stat: operations per second, each run: left out, run too short for a per-second chart in every cell",
        "fsmark Files/sec against loop: left out, one point only: nothing to draw against loop in every cell",
    ] {
        assert!(dom.contains(&format!("<p class=\"note\">{note}")), "no note {note:?}");
    }
}

/// Each probe's chart, the IO pattern and movie and each run's rates: a
/// row with every cell's chart, captioned with its cell, drawn; a cell
/// without one says so.
fn cells_side_by_side(dom: &str) {
    let all = charts(dom);
    for row in [
        "create: operations per second, each run",
        "IO pattern",
        "IO movie",
        "CPU",
        "memory",
        "IOPS",
        "MB/s",
        "IO sizes",
        "backing image extents",
    ] {
        let beside: Vec<&(String, &str)> = all
            .iter()
            .filter(|(n, _)| n.starts_with(&format!("{row} / ")))
            .collect();
        let cells: Vec<&str> = beside
            .iter()
            .map(|(n, _)| n[row.len() + 3..].split(':').next().unwrap())
            .collect();
        assert_eq!(cells, CELLS, "{row}: every cell side by side");
        for (n, svg) in beside {
            assert!(drawn(svg), "{n} is drawn empty");
        }
    }
    // Each run of a cell on its chart.
    for cell in CELLS {
        let svg = chart(
            &all,
            &format!("create: operations per second, each run / {cell}"),
        );
        let runs = series(svg);
        assert_eq!(runs.len(), 3, "{cell}: {runs:?}");
        assert!(runs.iter().all(|r| r.1 >= 2), "{cell}: {runs:?}");
    }
    // Only ext4 with its journal commits through jbd2: the others say so.
    let jbd2: Vec<&String> = all
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("journal commits (jbd2) / "))
        .collect();
    assert_eq!(jbd2, ["journal commits (jbd2) / ext4"]);
    assert!(dom.contains("<p class=\"note\">xfs: none recorded</p>"));
}

/// Numbers in plain notation, changes as a user reads them, commands as
/// typed: no exponent, no four-digit percentage, no internal flag.
fn words_a_user_reads(dom: &str) {
    let text: String = dom
        .split('<')
        .filter_map(|t| t.split_once('>').map(|(_, text)| text))
        .collect::<Vec<_>>()
        .join(" ");
    // A change is a percentage; an interval's bounds (in brackets) may be
    // far wider than the change they bound.
    let mut in_interval = false;
    for w in text.split_whitespace() {
        let exponent = w.contains("e+") || w.contains("e-0");
        assert!(
            !(exponent && w.starts_with(|c: char| c.is_ascii_digit() || c == '-')),
            "a number in exponent notation: {w:?}"
        );
        in_interval |= w.contains('[');
        let p = w.trim_matches(|c: char| "()[],;:".contains(c));
        if let (false, Some(p)) = (in_interval, p.strip_suffix('%')) {
            let p: f64 = p.trim_start_matches(['+', '-', '±']).parse().unwrap_or(0.0);
            assert!(
                p < 1000.0,
                "a change from a near-zero baseline as a percentage: {w:?}"
            );
        }
        in_interval &= !w.contains(']');
    }
    for flag in [
        "--text-to",
        "--json",
        "--progress",
        "--die-with-parent",
        "--phase-acks",
    ] {
        assert!(!text.contains(flag), "{flag} in what the user reads");
    }
    let commands = &dom[dom.find("<dt>commands</dt><dd>").unwrap()..];
    let commands = &commands[..commands.find("</dd>").unwrap()];
    assert!(
        commands.contains("ext4 nojournal: fsmark -d "),
        "each cell's command as it ran: {commands}"
    );
}

/// Every chart is drawn with data: none is an empty frame.
fn no_chart_is_empty(dom: &str) {
    let all = charts(dom);
    assert!(all.len() >= 30, "{} charts", all.len());
    for (name, svg) in &all {
        assert!(drawn(svg), "chart {name:?} is empty");
    }
}

/// The overview comes first and holds every cell: the verdict table, one
/// axis per headline metric with each cell's mean and interval, and every
/// cell's rate over time on shared axes with phase starts.
fn overview_holds_every_cell(dom: &str) {
    let at = |h: &str| dom.find(&format!("<h2 id=\"{}\">{h}</h2>", h.replace(' ', "-")));
    let overview = &dom[at("overview").expect("an overview")..];
    let overview = &overview[..overview.find("<h2 id=\"cells-compared\">").unwrap()];
    assert!(at("overview") < at("cells compared"));
    assert!(at("cells compared") < at("every metric"));
    assert!(at("every metric") < dom.find("<h2 id=\"cell-ext4\">"));
    assert!(overview
        .contains("<th>headline metric</th><th>ext4</th><th>ext4 nojournal</th><th>xfs</th>"));
    let wide: Vec<&str> = overview
        .split("<svg class=\"chart wide\"")
        .skip(1)
        .map(|c| c.split("</svg>").next().unwrap())
        .collect();
    assert!(
        wide.len() >= 3,
        "intervals per headline metric and the rates"
    );
    let create = wide
        .iter()
        .find(|c| c.contains("aria-label=\"create rate (ops/s)"))
        .expect("the create rate on one axis");
    for cell in ["ext4", "ext4 nojournal", "xfs"] {
        assert!(
            create.contains(&format!(">{cell}</text>")),
            "{cell} on the axis"
        );
    }
    assert_eq!(create.matches("<circle").count(), 3, "a mean per cell");
    assert_eq!(
        create.matches("stroke-width=\"3\"").count(),
        3,
        "an interval per cell"
    );
    let rates = wide
        .iter()
        .find(|c| c.contains("aria-label=\"operations per second over the run"))
        .expect("the rates of every cell overlaid");
    assert_eq!(
        rates.matches("<path class=\"mark\"").count(),
        3,
        "one line per cell"
    );
    assert_eq!(
        rates.matches("class=\"marker\"").count(),
        6,
        "two phase starts per cell"
    );
}
