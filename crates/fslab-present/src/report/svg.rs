//! Charts as inline SVG: lines, points and bars, with axes, ticks, units
//! and a legend. No script and no external resource: the page works offline.

use std::fmt::Write as _;

const W: f64 = 680.0;
const H: f64 = 300.0;
const L: f64 = 70.0;
const R: f64 = 150.0;
const T: f64 = 20.0;
const B: f64 = 45.0;
const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
/// Writes are this red and reads this blue in every chart and the movie.
pub const WRITE: &str = "#d62728";
pub const READ: &str = "#1f77b4";
/// Cells' colours: one per cell, the same in every chart, none of them
/// the read or write colour.
const CELLS: [&str; 8] = [
    "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
];

/// The colour of cell `i` (its position in the comparison).
pub fn cell_colour(i: usize) -> &'static str {
    CELLS[i % CELLS.len()]
}
/// The width of a wide chart (the overview's).
const WIDE: f64 = 1300.0;

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    Points,
}

/// One named series of (x, y) values.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
    /// A fixed colour (a cell's, reads', writes'); None: by position.
    pub colour: Option<&'static str>,
}

/// A vertical line at `x` with a label (a phase boundary).
#[derive(Debug, Clone)]
pub struct Marker {
    pub x: f64,
    pub label: String,
    pub colour: &'static str,
}

/// An x-y chart.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Logarithmic x axis (latency CDFs).
    pub log_x: bool,
    /// Logarithmic y axis (rates that differ by orders of magnitude).
    pub log_y: bool,
    /// Vertical lines (phase boundaries).
    pub markers: Vec<Marker>,
    /// As wide as the page (the overview's charts).
    pub wide: bool,
    /// Extents the axes cover besides the data's (x lo, x hi, y lo, y hi):
    /// charts side by side share their axes ([`share_axes`]).
    pub extent: Option<(f64, f64, f64, f64)>,
}

impl Chart {
    /// A linear chart of `series`, its axes fitted to them.
    pub fn new(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            series,
            log_x: false,
            log_y: false,
            markers: Vec::new(),
            wide: false,
            extent: None,
        }
    }

    /// Whether any series has something to draw.
    pub fn drawable(&self) -> bool {
        self.series.iter().any(Series::drawable)
    }
}

impl Series {
    /// A line of two points or more, or a point: something to draw (a
    /// line of one point is a run too short to draw over time).
    pub fn drawable(&self) -> bool {
        let finite = self
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .count();
        match self.style {
            Style::Line => finite >= 2,
            Style::Points => finite >= 1,
        }
    }
}

/// The data's extent (x lo, x hi, y lo, y hi) of every chart together.
fn extent_of<'a>(charts: impl Iterator<Item = &'a Chart>) -> Option<(f64, f64, f64, f64)> {
    let mut e: Option<(f64, f64, f64, f64)> = None;
    for c in charts {
        let pts = c.series.iter().flat_map(|s| s.points.iter());
        let own = c.extent.map(|(a, b, c, d)| [(a, c), (b, d)]);
        for &(x, y) in pts.chain(own.iter().flatten()) {
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            e = Some(match e {
                None => (x, x, y, y),
                Some((a, b, c, d)) => (a.min(x), b.max(x), c.min(y), d.max(y)),
            });
        }
    }
    e
}

/// Charts drawn side by side get the same axes: the extent of all of them.
pub fn share_axes(charts: &mut [&mut Chart]) {
    let e = extent_of(charts.iter().map(|c| &**c));
    for c in charts.iter_mut() {
        c.extent = e;
    }
}

/// Each group's mean with its interval and its values, on one axis.
#[derive(Debug, Clone)]
pub struct Intervals {
    pub title: String,
    pub x_label: String,
    pub rows: Vec<IntervalRow>,
}

/// One group of an [`Intervals`] chart.
#[derive(Debug, Clone)]
pub struct IntervalRow {
    pub label: String,
    pub colour: &'static str,
    pub mean: f64,
    /// The 95% interval of the mean, when there are two values or more.
    pub interval: Option<(f64, f64)>,
    pub values: Vec<f64>,
}

/// A bar chart of labelled values.
#[derive(Debug, Clone)]
pub struct Bars {
    pub title: String,
    pub y_label: String,
    pub bars: Vec<(String, f64)>,
    /// The top of the y axis, when bar charts side by side share it.
    pub y_max: Option<f64>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// About five round tick values covering [lo, hi].
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Also when either is NaN.
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

fn label(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{:.3}G", x / 1e9)
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
            .replace(".G", "G")
    } else if a >= 1e6 {
        format!("{}M", trim(x / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(x / 1e3))
    } else {
        trim(x)
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The x axis under a plot `ph` high: at each (pixel, value) a grid line
/// and the value, and the axis title centred at `title_at`.
fn x_axis(s: &mut String, marks: &[(f64, f64)], ph: f64, title_at: (f64, f64), title: &str) {
    for (x, v) in marks {
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{T}" y2="{}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle" font-size="11">{}</text>"##,
            T + ph,
            T + ph + 15.0,
            label(*v)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle" font-size="12">{}</text>"#,
        title_at.0,
        title_at.1,
        esc(title)
    );
}

/// A series' points `p` (already in pixels) as a path or as dots, named
/// by `data-series` (the cell or run it is of).
fn draw_marks(s: &mut String, (style, name): (Style, &str), c: &str, p: &[(f64, f64)]) {
    let name = esc(name);
    match style {
        Style::Line if p.len() > 1 => {
            let d: Vec<String> = p
                .iter()
                .enumerate()
                .map(|(k, (x, y))| format!("{}{x:.1},{y:.1}", if k == 0 { "M" } else { "L" }))
                .collect();
            let _ = write!(
                *s,
                r#"<path class="mark" data-series="{name}" d="{}" fill="none" stroke="{c}" stroke-width="1.5"/>"#,
                d.join("")
            );
        }
        _ => {
            let _ = write!(*s, r#"<g class="mark" data-series="{name}" fill="{c}">"#);
            // A 2-pixel square at the same half pixel is the same mark:
            // draw it once (dense scatters shrink many times over).
            let mut seen = std::collections::HashSet::new();
            for (x, y) in p {
                if !seen.insert(((x * 2.0).round() as i64, (y * 2.0).round() as i64)) {
                    continue;
                }
                let _ = write!(
                    s,
                    r#"<rect x="{:.1}" y="{:.1}" width="2" height="2"/>"#,
                    x - 1.0,
                    y - 1.0
                );
            }
            s.push_str("</g>");
        }
    }
}

impl Chart {
    /// The chart as an `<svg class="chart">`; data marks have class `mark`.
    /// The axes' ranges (after the log transforms `tx`, `ty`): every
    /// point's and marker's, from 0 on a linear y axis, 5% headroom.
    fn ranges(&self, tx: &dyn Fn(f64) -> f64, ty: &dyn Fn(f64) -> f64) -> (f64, f64, f64, f64) {
        let shared = self.extent.map(|(a, b, c, d)| [(a, c), (b, d)]);
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter())
            .chain(shared.iter().flatten())
            .map(|&(x, y)| (tx(x), ty(y)))
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        // The markers (phase starts) are on the axis too.
        let (mut x0, mut x1) = pts
            .iter()
            .map(|p| p.0)
            .chain(self.markers.iter().map(|m| tx(m.x)))
            .filter(|x| x.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                (a.min(x), b.max(x))
            });
        let (mut y0, mut y1) = pts
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                (a.min(p.1), b.max(p.1))
            });
        if pts.is_empty() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        if self.log_y && !pts.is_empty() {
            (y0, y1) = (y0.floor(), y1.ceil());
        } else {
            y0 = y0.min(0.0);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        if y1 <= y0 {
            y1 = y0 + 1.0;
        }
        if !self.log_y {
            y1 *= 1.05;
        }
        (x0, x1, y0, y1)
    }

    pub fn svg(&self) -> String {
        let tx = |x: f64| if self.log_x { x.max(1e-12).log10() } else { x };
        let ty = |y: f64| match (self.log_y, y > 0.0) {
            (false, _) => y,
            (true, true) => y.log10(),
            (true, false) => f64::NAN,
        };
        let (x0, x1, y0, y1) = self.ranges(&tx, &ty);
        let w = if self.wide { WIDE } else { W };
        let (pw, ph) = (w - L - R, H - T - B);
        let sx = |x: f64| L + (x - x0) / (x1 - x0) * pw;
        let sy = |y: f64| T + ph - (y - y0) / (y1 - y0) * ph;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="chart{}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {H}" width="{w}" height="{H}" role="img" aria-label="{}">"#,
            if self.wide { " wide" } else { "" },
            esc(&self.title)
        );
        let _ = write!(
            s,
            r##"<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>"##
        );
        for t in ticks(y0, y1) {
            let y = sy(t);
            let v = if self.log_y { 10f64.powf(t) } else { t };
            let _ = write!(
                s,
                r##"<line x1="{L}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                L + pw,
                L - 4.0,
                y + 4.0,
                label(v)
            );
        }
        let marks: Vec<(f64, f64)> = ticks(x0, x1)
            .into_iter()
            .map(|t| (sx(t), if self.log_x { 10f64.powf(t) } else { t }))
            .collect();
        x_axis(&mut s, &marks, ph, (L + pw / 2.0, H - 8.0), &self.x_label);
        let _ = write!(
            s,
            r#"<text transform="translate(14,{}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
            T + ph / 2.0,
            esc(&self.y_label)
        );
        for m in &self.markers {
            let x = sx(tx(m.x));
            if !x.is_finite() {
                continue;
            }
            let _ = write!(
                s,
                r#"<line class="marker" x1="{x:.1}" x2="{x:.1}" y1="{T}" y2="{}" stroke="{}" stroke-dasharray="4 3"/><text x="{:.1}" y="{}" font-size="10" fill="{}">{}</text>"#,
                T + ph,
                m.colour,
                x + 3.0,
                T + 10.0,
                m.colour,
                esc(&m.label)
            );
        }
        let mut shown = 0;
        for (i, ser) in self.series.iter().enumerate() {
            // A line of one point is no line: neither drawn nor in the legend.
            if !ser.drawable() {
                continue;
            }
            let c = ser.colour.unwrap_or(PALETTE[i % PALETTE.len()]);
            let p: Vec<(f64, f64)> = ser
                .points
                .iter()
                .map(|&(x, y)| (sx(tx(x)), sy(ty(y))))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            draw_marks(&mut s, (ser.style, &ser.name), c, &p);
            let ly = T + 12.0 + shown as f64 * 16.0;
            shown += 1;
            let _ = write!(
                s,
                r#"<rect x="{}" y="{}" width="10" height="10" fill="{c}"/><text x="{}" y="{}" font-size="11">{}</text>"#,
                w - R + 10.0,
                ly - 9.0,
                w - R + 24.0,
                ly,
                esc(&ser.name)
            );
        }
        s.push_str("</svg>");
        s
    }
}

impl Intervals {
    /// One row per group: its values as small marks, its mean as a dot and
    /// its 95% interval as a bar, all on one shared x axis.
    pub fn svg(&self) -> String {
        let row_h = 26.0;
        let left = 260.0;
        let h = T + B + row_h * self.rows.len().max(1) as f64;
        let pw = WIDE - left - 40.0;
        let all: Vec<f64> = self
            .rows
            .iter()
            .flat_map(|r| {
                let mut v = r.values.clone();
                v.push(r.mean);
                if let Some((lo, hi)) = r.interval {
                    v.extend([lo, hi]);
                }
                v
            })
            .filter(|x| x.is_finite())
            .collect();
        let mut x0 = all.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
        let mut x1 = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !x1.is_finite() || x1 <= x0 {
            (x0, x1) = (0.0, 1.0);
        }
        x1 *= 1.05;
        let sx = |x: f64| left + (x - x0) / (x1 - x0) * pw;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="chart wide" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDE} {h}" width="{WIDE}" height="{h}" role="img" aria-label="{}">"#,
            esc(&self.title)
        );
        let ph = h - T - B;
        let _ = write!(
            s,
            r##"<rect x="{left}" y="{T}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>"##
        );
        let marks: Vec<(f64, f64)> = ticks(x0, x1).into_iter().map(|t| (sx(t), t)).collect();
        x_axis(
            &mut s,
            &marks,
            ph,
            (left + pw / 2.0, h - 8.0),
            &self.x_label,
        );
        for (i, r) in self.rows.iter().enumerate() {
            let y = T + row_h * (i as f64 + 0.5);
            let c = r.colour;
            let _ = write!(
                s,
                r#"<text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text><g class="mark" fill="{c}" stroke="{c}">"#,
                left - 6.0,
                y + 4.0,
                esc(&r.label)
            );
            if let Some((lo, hi)) = r.interval {
                let _ = write!(
                    s,
                    r#"<line x1="{:.1}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke-width="3"/>"#,
                    sx(lo),
                    sx(hi)
                );
            }
            for v in &r.values {
                let _ = write!(
                    s,
                    r#"<rect x="{:.1}" y="{:.1}" width="2" height="8" fill-opacity="0.5" stroke="none"/>"#,
                    sx(*v) - 1.0,
                    y - 10.0
                );
            }
            if r.mean.is_finite() {
                let _ = write!(s, r#"<circle cx="{:.1}" cy="{y:.1}" r="4"/>"#, sx(r.mean));
            }
            s.push_str("</g>");
        }
        s.push_str("</svg>");
        s
    }
}

impl Bars {
    pub fn svg(&self) -> String {
        let max = self
            .bars
            .iter()
            .map(|b| b.1)
            .chain(self.y_max)
            .fold(0.0f64, f64::max)
            .max(1e-12)
            * 1.05;
        let (pw, ph) = (W - L - R, H - T - B);
        let bw = pw / self.bars.len().max(1) as f64;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{}">"#,
            esc(&self.title)
        );
        let _ = write!(
            s,
            r##"<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>"##
        );
        for t in ticks(0.0, max) {
            let y = T + ph - t / max * ph;
            let _ = write!(
                s,
                r##"<line x1="{L}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##,
                L + pw,
                L - 4.0,
                y + 4.0,
                label(t)
            );
        }
        s.push_str(r#"<g class="mark">"#);
        for (i, (name, v)) in self.bars.iter().enumerate() {
            let h = v / max * ph;
            let x = L + i as f64 * bw;
            let _ = write!(
                s,
                r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#1f77b4"/><text x="{:.1}" y="{}" text-anchor="middle" font-size="10">{}</text>"##,
                x + bw * 0.1,
                T + ph - h,
                bw * 0.8,
                x + bw / 2.0,
                T + ph + 15.0,
                esc(name)
            );
        }
        s.push_str("</g>");
        let _ = write!(
            s,
            r#"<text transform="translate(14,{}) rotate(-90)" text-anchor="middle" font-size="12">{}</text>"#,
            T + ph / 2.0,
            esc(&self.y_label)
        );
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(
            ticks(0.0, 1.0),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(ticks(5.0, 5.0), vec![5.0]);
    }

    #[test]
    fn a_line_chart_has_axes_labels_and_marks() {
        let c = Chart::new(
            "rate",
            "time (s)",
            "ops/s",
            vec![Series {
                name: "run 1".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0), (3.0, 15.0)],
                style: Style::Line,
                colour: None,
            }],
        );
        insta::assert_snapshot!("line_chart", c.svg());
    }

    #[test]
    fn a_line_of_one_point_is_not_drawn() {
        let one = |name: &str, points: Vec<(f64, f64)>| Series {
            name: name.into(),
            points,
            style: Style::Line,
            colour: None,
        };
        let c = Chart::new("t", "x", "y", vec![one("short", vec![(1.0, 2.0)])]);
        assert!(!c.drawable());
        assert!(!c.svg().contains("class=\"mark\"") && !c.svg().contains(">short<"));
        let c = Chart::new(
            "t",
            "x",
            "y",
            vec![
                one("short", vec![(1.0, 2.0)]),
                one("long", vec![(1.0, 2.0), (2.0, 3.0)]),
            ],
        );
        assert!(c.drawable());
        assert_eq!(c.svg().matches("class=\"mark\"").count(), 1);
        assert!(c.svg().contains(">long<") && !c.svg().contains(">short<"));
    }

    #[test]
    fn points_on_the_same_half_pixel_are_drawn_once() {
        let chart = |points: Vec<(f64, f64)>| {
            Chart::new(
                "t",
                "x",
                "y",
                vec![Series {
                    name: "s".into(),
                    points,
                    style: Style::Points,
                    colour: None,
                }],
            )
        };
        // 10,000 points over an x range of 1000 on a 460-pixel plot: at most
        // two columns of half pixels per unit, and one y value.
        let dense: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64 / 10.0, 5.0)).collect();
        let svg = chart(dense).svg();
        let marks = svg.matches("width=\"2\" height=\"2\"").count();
        assert!((900..=1000).contains(&marks), "{marks}");
        // Points apart stay apart.
        let svg = chart(vec![(0.0, 0.0), (1.0, 1.0), (2.0, 2.0)]).svg();
        assert_eq!(svg.matches("width=\"2\" height=\"2\"").count(), 3);
    }
}
