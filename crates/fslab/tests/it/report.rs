//! The HTML report of a real small experiment, rendered by headless
//! Chromium: every chart present and drawn, nothing loaded from outside,
//! and a screenshot kept (fslab-report-screenshot.png in the target
//! directory, wherever CARGO_TARGET_DIR puts it).

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
    every_chart_is_drawn(&dom);
    assert!(
        dom.contains("<td>ext4 nojournal</td>"),
        "the comparison table is there"
    );
    overview_holds_every_cell(&dom);
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

    // In the target directory (the fslab binary's `debug/`'s parent): the
    // workspace's `target/` does not exist when CARGO_TARGET_DIR is elsewhere.
    let shot = PathBuf::from(env!("CARGO_BIN_EXE_fslab"))
        .parent()
        .and_then(|d| d.parent())
        .expect("the target directory")
        .join("fslab-report-screenshot.png");
    let o = headless(&browser, profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .args(["--window-size=1600,6000", &url])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 20_000,
        "a real screenshot"
    );
    assert_eq!(lab.leftovers(), Vec::<String>::new());
}

/// Every chart the page should have has a caption, and data drawn.
fn every_chart_is_drawn(dom: &str) {
    let charts: Vec<&str> = dom
        .split("<svg class=\"chart")
        .skip(1)
        .map(|c| c.split("</svg>").next().unwrap())
        .collect();
    let captions: Vec<String> = dom
        .split("<figcaption>")
        .skip(1)
        .map(|c| c.split("</figcaption>").next().unwrap().to_string())
        .collect();
    assert_eq!(charts.len(), captions.len());
    for want in [
        "create: operations per second",
        "stat: operations per second",
        "fsmark Files/sec against loop",
        "IO pattern on loop",
        "IO movie of loop",
        "IOPS",
        "MB/s",
        "IO sizes",
        "backing image extents",
        "CPU",
        "memory",
        "journal commits (jbd2)",
        "latency CDF",
    ] {
        assert!(
            captions.iter().any(|c| c.starts_with(want)),
            "no {want:?} chart among {captions:?}"
        );
    }
    for (c, cap) in charts.iter().zip(&captions) {
        assert!(
            c.contains("class=\"mark\""),
            "chart {cap:?} has no data drawn"
        );
        assert!(
            c.contains(" d=\"M") || c.contains("<rect x="),
            "chart {cap:?} is empty"
        );
    }
}

/// The overview comes first and holds every cell: the verdict table, one
/// axis per headline metric with each cell's mean and interval, and every
/// cell's rate over time on shared axes with phase starts.
fn overview_holds_every_cell(dom: &str) {
    let overview = &dom[dom.find("<h2>overview</h2>").expect("an overview")..];
    let overview = &overview[..overview.find("<h2>every metric</h2>").unwrap()];
    assert!(dom.find("<h2>overview</h2>") < dom.find("<h2>cell: "));
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
