//! An IO movie, as iowatcher makes them for blktrace data: the device's
//! sector range laid out as a grid of cells (left to right, top to bottom),
//! one frame per time window, each frame lighting the cells that saw IO in
//! that window. Seed 000 used such movies to show where on a 100 TiB
//! sparse device each filesystem's IO went.
//!
//! The frames play in a loop through SVG's declarative animation (`<set>`
//! elements), which needs no script, so the page's
//! Content-Security-Policy stays `default-src 'none'`. Under the frames,
//! always visible, is the whole run's IO in grey: the still picture.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Grid columns and rows: each cell is 1/(COLS*ROWS) of the device.
pub const COLS: u32 = 64;
pub const ROWS: u32 = 32;
const CW: f64 = 8.0;
const CH: f64 = 6.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 10.0;
/// Seconds each frame stays on screen.
const FRAME_SHOW_S: f64 = 0.25;

/// One completed request: when (seconds from the start), where, how much.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Io {
    pub t_s: f64,
    pub sector: u64,
    pub sectors: u64,
    pub write: bool,
}

/// One time window: per cell, the write and read requests that touched it.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub t0_s: f64,
    /// cell index -> (writes, reads)
    pub cells: BTreeMap<u32, (u32, u32)>,
}

/// The movie of one device.
#[derive(Debug, Clone)]
pub struct Movie {
    pub title: String,
    /// Sectors the grid spans (the device's size).
    pub span_sectors: u64,
    pub frame_s: f64,
    pub frames: Vec<Frame>,
    /// The whole run: requests per cell.
    pub total: BTreeMap<u32, u32>,
}

fn cell_of(sector: u64, span: u64) -> u32 {
    let n = (COLS * ROWS) as u128;
    ((sector as u128 * n / span.max(1) as u128) as u32).min(COLS * ROWS - 1)
}

impl Movie {
    /// Bins `ios` into at most `max_frames` frames of whole-second or
    /// longer windows over a grid spanning `span_sectors` (or the highest
    /// sector seen, if larger).
    pub fn new(title: &str, ios: &[Io], span_sectors: u64, max_frames: usize) -> Movie {
        let end = ios.iter().map(|i| i.t_s).fold(0.0, f64::max);
        let top = ios.iter().map(|i| i.sector + i.sectors).max().unwrap_or(0);
        let span = span_sectors.max(top).max(1);
        let frames_n = max_frames.max(1);
        // Whole seconds, or more when the run is longer than max_frames s.
        let frame_s = (end / frames_n as f64).ceil().max(1.0);
        let mut frames: Vec<Frame> = Vec::new();
        let mut total = BTreeMap::new();
        for io in ios {
            let k = ((io.t_s / frame_s) as usize).min(frames_n - 1);
            while frames.len() <= k {
                frames.push(Frame {
                    t0_s: frames.len() as f64 * frame_s,
                    cells: BTreeMap::new(),
                });
            }
            // A request lights every cell it covers.
            let first = cell_of(io.sector, span);
            let last = cell_of(io.sector + io.sectors.max(1) - 1, span);
            for c in first..=last {
                let e = frames[k].cells.entry(c).or_insert((0, 0));
                if io.write {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
                *total.entry(c).or_insert(0) += 1;
            }
        }
        Movie {
            title: title.to_string(),
            span_sectors: span,
            frame_s,
            frames,
            total,
        }
    }

    /// The animated SVG.
    pub fn svg(&self) -> String {
        let gw = COLS as f64 * CW;
        let gh = ROWS as f64 * CH;
        let (w, h) = (LEFT + gw + 160.0, TOP + gh + 50.0);
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-size="11" font-family="sans-serif">"##
        );
        let _ = write!(
            s,
            r##"<rect class="frame" x="{LEFT}" y="{TOP}" width="{gw}" height="{gh}" fill="#fafafa" stroke="#999"/>"##
        );
        let xy = |c: u32| (LEFT + (c % COLS) as f64 * CW, TOP + (c / COLS) as f64 * CH);
        // The still picture: every cell the run touched, grey by count.
        let most = self.total.values().copied().max().unwrap_or(1).max(1) as f64;
        for (&c, &n) in &self.total {
            let (x, y) = xy(c);
            let o = 0.15 + 0.35 * (n as f64).ln_1p() / most.ln_1p();
            let _ = write!(
                s,
                r##"<rect class="mark" x="{x}" y="{y}" width="{CW}" height="{CH}" fill="#888" fill-opacity="{o:.2}"/>"##
            );
        }
        // Axis words: where the device starts and ends.
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end">sector 0</text><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            LEFT - 4.0,
            TOP + CH,
            LEFT - 4.0,
            TOP + gh,
            self.span_sectors
        );
        let n = self.frames.len();
        if n > 0 {
            let dur = n as f64 * FRAME_SHOW_S;
            // One clock drives the loop; every frame is shown for its slot.
            let _ = write!(
                s,
                r##"<rect x="0" y="0" width="0" height="0"><animate id="clock" attributeName="width" from="0" to="0" dur="{dur}s" begin="0s;clock.end"/></rect>"##
            );
            for (k, f) in self.frames.iter().enumerate() {
                let most = f
                    .cells
                    .values()
                    .map(|(w, r)| w + r)
                    .max()
                    .unwrap_or(1)
                    .max(1) as f64;
                let _ = write!(
                    s,
                    r##"<g visibility="hidden"><set attributeName="visibility" to="visible" begin="clock.begin+{:.2}s" dur="{FRAME_SHOW_S}s"/>"##,
                    k as f64 * FRAME_SHOW_S
                );
                for (&c, &(wr, rd)) in &f.cells {
                    let (x, y) = xy(c);
                    let colour = if wr >= rd {
                        super::svg::WRITE
                    } else {
                        super::svg::READ
                    };
                    let o = 0.45 + 0.55 * ((wr + rd) as f64).ln_1p() / most.ln_1p();
                    let _ = write!(
                        s,
                        r##"<rect class="mark" x="{x}" y="{y}" width="{CW}" height="{CH}" fill="{colour}" fill-opacity="{o:.2}"/>"##
                    );
                }
                let _ = write!(
                    s,
                    r##"<text x="{LEFT}" y="{}">{:.0}-{:.0} s</text></g>"##,
                    TOP + gh + 18.0,
                    f.t0_s,
                    f.t0_s + self.frame_s
                );
            }
        }
        // Legend.
        let lx = LEFT + gw + 12.0;
        for (i, (colour, what)) in [
            (super::svg::WRITE, "writes (this window)"),
            (super::svg::READ, "reads (this window)"),
            ("#888", "all IO of the run"),
        ]
        .iter()
        .enumerate()
        {
            let y = TOP + 12.0 + i as f64 * 16.0;
            let _ = write!(
                s,
                r##"<rect x="{lx}" y="{}" width="10" height="8" fill="{colour}"/><text x="{}" y="{y}">{what}</text>"##,
                y - 8.0,
                lx + 14.0
            );
        }
        let _ = write!(
            s,
            r##"<text x="{lx}" y="{}">{} frames of {} s</text><text x="{lx}" y="{}">cell = 1/{} of the device</text>"##,
            TOP + 72.0,
            n,
            self.frame_s,
            TOP + 88.0,
            COLS * ROWS
        );
        s.push_str("</svg>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(t_s: f64, sector: u64, sectors: u64, write: bool) -> Io {
        Io {
            t_s,
            sector,
            sectors,
            write,
        }
    }

    #[test]
    fn requests_light_the_cells_of_their_window() {
        let span = (COLS * ROWS) as u64 * 1000; // 1000 sectors a cell
        let ios = [
            io(0.2, 0, 8, true),
            io(0.9, 999, 2, true), // crosses into cell 1
            io(1.5, span - 1, 1, false),
            io(2.5, 5000, 8, true),
        ];
        let m = Movie::new("t", &ios, span, 100);
        assert_eq!(m.frame_s, 1.0);
        assert_eq!(m.frames.len(), 3);
        assert_eq!(m.frames[0].cells[&0], (2, 0));
        assert_eq!(m.frames[0].cells[&1], (1, 0));
        assert_eq!(m.frames[1].cells[&(COLS * ROWS - 1)], (0, 1));
        assert_eq!(m.frames[2].t0_s, 2.0);
        assert_eq!(m.frames[2].cells[&5], (1, 0));
        assert_eq!(m.total.values().sum::<u32>(), 5);
    }

    #[test]
    fn a_long_run_gets_longer_windows_and_the_grid_grows_to_what_was_seen() {
        let ios: Vec<Io> = (0..1000).map(|i| io(i as f64, i * 10, 8, true)).collect();
        let m = Movie::new("t", &ios, 100, 40);
        assert!(m.frames.len() <= 40);
        assert_eq!(m.frame_s, 25.0);
        assert_eq!(m.span_sectors, 999 * 10 + 8);
        let svg = m.svg();
        assert_eq!(
            svg.matches("<set attributeName=\"visibility\"").count(),
            m.frames.len()
        );
        assert!(svg.contains("begin=\"0s;clock.end\""));
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn no_io_is_a_still_empty_grid() {
        let m = Movie::new("t", &[], 0, 10);
        assert!(m.frames.is_empty());
        let svg = m.svg();
        assert!(svg.contains("class=\"frame\"") && !svg.contains("<set"));
    }
}
