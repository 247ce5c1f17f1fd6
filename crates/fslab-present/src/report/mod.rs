//! `fslab report`: one self-contained HTML page (inline CSS and SVG, no
//! script, a Content-Security-Policy that forbids loading anything) with
//! the analysis, per-cell charts and tables.
//!
//! - [`page`]: what goes on the page, from an analysis and the store;
//! - [`overview`]: its opening (the header, the comparison at a glance);
//! - [`svg`]: line, point, interval and bar charts; [`movie`]: iowatcher's
//!   movie of where on the device each window's IO went;
//! - here: the page's [`Block`]s and their HTML ([`html`]).

pub mod movie;
pub mod overview;
pub mod page;
pub mod svg;

use std::fmt::Write as _;

pub use movie::{Io, Movie};
pub use svg::{cell_colour, Bars, Chart, IntervalRow, Intervals, Marker, Series, Style};

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
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
</style></head><body>
<h1>{}</h1>
"#,
        esc(title),
        esc(title)
    );
    for b in blocks {
        match b {
            Block::Heading(h) => {
                let _ = writeln!(s, "<h2>{}</h2>", esc(h));
            }
            Block::Text(t) => {
                let _ = writeln!(s, "<p>{}</p>", esc(t));
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
            Block::Intervals(c) => {
                let _ = writeln!(
                    s,
                    "<figure class=\"wide\">{}<figcaption>{}</figcaption></figure>",
                    c.svg(),
                    esc(&c.title)
                );
            }
            Block::Facts(facts) => {
                s.push_str("<dl class=\"facts\">");
                for (k, v) in facts {
                    let _ = write!(s, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
                }
                s.push_str("</dl>\n");
            }
            Block::Bars(b) => {
                let _ = writeln!(
                    s,
                    "<figure>{}<figcaption>{}</figcaption></figure>",
                    b.svg(),
                    esc(&b.title)
                );
            }
            Block::Movie(m) => {
                let _ = writeln!(
                    s,
                    "<figure>{}<figcaption>{}</figcaption></figure>",
                    m.svg(),
                    esc(&m.title)
                );
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
                }),
            ],
        );
        assert!(p.contains("default-src 'none'"));
        assert!(p.contains("t &lt;x&gt;") && p.contains("a &amp; b"));
        assert!(!p.contains("src=\"http") && !p.contains("href=\"http"));
        assert_eq!(p.matches("<svg class=\"chart\"").count(), 1);
    }
}
