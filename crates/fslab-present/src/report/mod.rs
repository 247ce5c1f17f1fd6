//! `fslab report`: one self-contained HTML page (inline CSS and SVG, no
//! script, a Content-Security-Policy that forbids loading anything) with
//! the analysis, per-cell charts and tables.
//!
//! - [`page`]: what goes on the page, from an analysis and the store;
//! - [`overview`]: its opening (the header, the comparison at a glance);
//! - [`cell`]: one cell's charts, keyed alike in every cell, and what it
//!   gives the overlaid charts; [`compared`]: the cells overlaid in one
//!   chart or side by side on shared axes;
//! - [`svg`]: line, point, interval and bar charts; [`movie`]: iowatcher's
//!   movie of where on the device each window's IO went;
//! - here: the page's [`Block`]s and their HTML ([`html`]).

pub mod cell;
pub mod compared;
pub mod movie;
pub mod overview;
pub mod page;
pub mod svg;

use std::fmt::Write as _;

pub use movie::{Io, Movie};
pub use svg::{
    cell_colour, share_axes, Bars, Chart, IntervalRow, Intervals, Marker, Series, Style,
};

/// A block of the page.
#[derive(Debug, Clone)]
pub enum Block {
    Heading(String),
    Text(String),
    Chart(Chart),
    Bars(Bars),
    /// Groups' means and intervals on one axis.
    Intervals(Intervals),
    /// `name: value` lines (the page's header: kernel, version, commands).
    Facts(Vec<(String, String)>),
    /// An iowatcher-style movie of a device's IO.
    Movie(Movie),
    /// A table: header cells, rows.
    Table(Vec<String>, Vec<Vec<String>>),
    /// Preformatted text (the compare table).
    Pre(String),
    /// Charts side by side, one per cell, on shared axes.
    Row(Row),
    /// A chart left out, and why, in one line.
    Note(String),
}

/// Charts side by side under one caption: each with its own caption (its
/// cell's label), then a line per cell not drawn, saying why.
#[derive(Debug, Clone)]
pub struct Row {
    pub title: String,
    pub items: Vec<(String, Block)>,
    pub notes: Vec<String>,
}

impl Block {
    /// A drawn chart's SVG (None for a block that is not one).
    fn svg(&self) -> Option<String> {
        match self {
            Block::Chart(c) => Some(c.svg()),
            Block::Intervals(c) => Some(c.svg()),
            Block::Bars(b) => Some(b.svg()),
            Block::Movie(m) => Some(m.svg()),
            _ => None,
        }
    }

    /// Charts it draws (a row's each).
    pub fn charts(&self) -> usize {
        match self {
            Block::Row(r) => r.items.iter().map(|(_, b)| b.charts()).sum(),
            b => usize::from(b.svg().is_some()),
        }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A heading's id, for a link to it (`report.html#cells-compared`).
pub fn anchor(heading: &str) -> String {
    let words: Vec<String> = heading
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.join("-")
}

/// One block's HTML.
fn block(s: &mut String, b: &Block) {
    match b {
        Block::Heading(h) => {
            let _ = writeln!(s, "<h2 id=\"{}\">{}</h2>", anchor(h), esc(h));
        }
        Block::Text(t) => {
            let _ = writeln!(s, "<p>{}</p>", esc(t));
        }
        Block::Note(t) => {
            let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(t));
        }
        Block::Chart(c) => {
            let _ = writeln!(
                s,
                "<figure{}>{}<figcaption>{}</figcaption></figure>",
                if c.wide { " class=\"wide\"" } else { "" },
                c.svg(),
                esc(&c.title)
            );
        }
        Block::Intervals(Intervals { title, .. })
        | Block::Bars(Bars { title, .. })
        | Block::Movie(Movie { title, .. }) => {
            let wide = matches!(b, Block::Intervals(_));
            let _ = writeln!(
                s,
                "<figure{}>{}<figcaption>{}</figcaption></figure>",
                if wide { " class=\"wide\"" } else { "" },
                b.svg().unwrap_or_default(),
                esc(title)
            );
        }
        Block::Row(r) => row(s, r),
        Block::Facts(facts) => {
            s.push_str("<dl class=\"facts\">");
            for (k, v) in facts {
                let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
            }
            s.push_str("</dl>\n");
        }
        Block::Table(head, rows) => {
            s.push_str("<table><tr>");
            for h in head {
                let _ = write!(s, "<th>{}</th>", esc(h));
            }
            s.push_str("</tr>\n");
            for r in rows {
                s.push_str("<tr>");
                for c in r {
                    let _ = write!(s, "<td>{}</td>", esc(c));
                }
                s.push_str("</tr>\n");
            }
            s.push_str("</table>\n");
        }
        Block::Pre(t) => {
            let _ = writeln!(s, "<pre>{}</pre>", esc(t));
        }
    }
}

/// Charts side by side: a grid as wide as the page, a column per cell
/// (fewer on a narrow window), each chart captioned with its cell.
fn row(s: &mut String, r: &Row) {
    let _ = write!(
        s,
        "<figure class=\"row\"><figcaption>{}</figcaption><div class=\"cells\">",
        esc(&r.title)
    );
    for (caption, b) in &r.items {
        let _ = write!(
            s,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            b.svg().unwrap_or_default(),
            esc(caption)
        );
    }
    s.push_str("</div>");
    for n in &r.notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    s.push_str("</figure>\n");
}

/// The whole page.
pub fn html(title: &str, blocks: &[Block]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{}</title>
<style>
body {{ font-family: sans-serif; margin: 1em 2em; color: #222; }}
svg.chart.wide {{ width: 100%; height: auto; }}
figure.wide {{ display: block; margin: 0.5em 0; }}
dl.facts {{ display: grid; grid-template-columns: max-content auto; gap: 2px 1em; font-size: 0.9em; }}
dl.facts dt {{ font-weight: bold; }} dl.facts dd {{ margin: 0; font-family: monospace; white-space: pre-wrap; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 2em; }} h3 {{ font-size: 1.05em; }}
figure {{ display: inline-block; margin: 0.5em; vertical-align: top; }}
figcaption {{ font-size: 0.9em; text-align: center; }}
table {{ border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }}
td, th {{ border: 1px solid #ccc; padding: 2px 6px; text-align: right; }}
td:first-child, th:first-child {{ text-align: left; }}
pre {{ font-size: 0.8em; background: #f7f7f7; padding: 0.5em; overflow-x: auto; }}
figure.row {{ display: block; margin: 1em 0; }}
figure.row > figcaption {{ font-weight: bold; text-align: left; }}
div.cells {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(440px, 1fr)); gap: 0 1em; }}
div.cells figure {{ display: block; margin: 0; }}
div.cells svg.chart {{ width: 100%; height: auto; }}
p.note {{ color: #555; font-style: italic; margin: 0.3em 0; }}
</style></head><body>
<h1>{}</h1>
"#,
        esc(title),
        esc(title)
    );
    for b in blocks {
        block(&mut s, b);
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_nothing_from_outside() {
        let p = html(
            "t <x>",
            &[
                Block::Text("a & b".into()),
                Block::Bars(Bars {
                    title: "sizes".into(),
                    y_label: "requests".into(),
                    bars: vec![("4k".into(), 3.0)],
                    y_max: None,
                }),
            ],
        );
        assert!(p.contains("default-src 'none'"));
        assert!(p.contains("t &lt;x&gt;") && p.contains("a &amp; b"));
        assert_eq!(anchor("cell: ext4 nojournal"), "cell-ext4-nojournal");
        assert!(!p.contains("src=\"http") && !p.contains("href=\"http"));
        assert_eq!(p.matches("<svg class=\"chart\"").count(), 1);
    }
}
