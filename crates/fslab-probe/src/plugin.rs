//! The probe seam. A probe is one module that implements [`Plugin`] (what
//! it is: its name, what it needs, whether it is on by default, the series
//! it records and how it describes what it kept) and [`crate::probe::Probe`]
//! (the instrument of one run, which [`Plugin::make`] makes), and one line
//! in the registry ([`crate::registry`]). Everything fslab does with a probe goes
//! through it: `--probes`, the sampler's checks before it starts one
//! (capability flags, never its name), `results show`'s lines, the report's
//! charts, bars and tables, and the evidence findings read.

pub use crate::needs::{Filter, Needs, TraceEvent};
use crate::notes::Note;

/// A probe fslab can run: the registered description of an instrument.
pub trait Plugin: Send + Sync + 'static {
    /// Its name, as `--probes` takes it and the store keeps it (`cpu`).
    fn name(&self) -> &'static str;
    /// What it needs to start (see [`Needs`]).
    fn needs(&self) -> Needs {
        Needs::default()
    }
    /// Whether `--probes default` runs it.
    fn default_on(&self) -> bool {
        true
    }
    /// A fresh instrument for one run.
    fn make(&self) -> Box<dyn crate::probe::Probe>;
    /// The series it samples: their stored names, units, and the charts
    /// the report draws them on.
    fn series(&self) -> Vec<Series> {
        Vec::new()
    }
    /// Its lines in `results show` about the whole run (its run notes).
    fn describe_run(&self, _run: &Described) -> Vec<String> {
        Vec::new()
    }
    /// Its lines in `results show` about one phase; by default one line a
    /// series it samples: its mean and maximum in the phase.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        series_lines(self.name(), &self.series(), phase)
    }
    /// Bar charts the report draws: each bar a series summed over the run.
    fn bars(&self) -> Vec<Bars> {
        Vec::new()
    }
    /// Tables the report shows from its notes.
    fn tables(&self, _run: &Described) -> Vec<Table> {
        Vec::new()
    }
    /// What findings may read of it beyond the run's metrics: note keys
    /// and series (see `fslab_experiment::evidence`).
    fn evidence(&self) -> Evidence {
        Evidence::default()
    }
}

/// A series a probe samples: one value a second (or at an event's time).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name as the store keeps it (`probe_points.metric`, see
    /// [`crate::names`]).
    pub metric: String,
    /// The unit of its values (`requests/s`, `%`, `bytes`).
    pub unit: &'static str,
    /// Its name on a chart and in a text line (`machine usr`).
    pub label: String,
    /// The chart it is drawn on; None: kept, not drawn.
    pub chart: Option<Placement>,
}

impl Series {
    /// A series kept, not drawn.
    pub fn new(metric: impl Into<String>, unit: &'static str, label: impl Into<String>) -> Series {
        Series {
            metric: metric.into(),
            unit,
            label: label.into(),
            chart: None,
        }
    }

    /// Drawn as a line on `chart`.
    pub fn on(mut self, chart: Chart) -> Series {
        self.chart = Some(Placement {
            chart,
            scale: 1.0,
            style: Style::Line,
            tone: Tone::Auto,
        });
        self
    }

    /// Multiplied by `scale` on its chart (bytes drawn as MB: 1e-6).
    pub fn scaled(mut self, scale: f64) -> Series {
        if let Some(p) = &mut self.chart {
            p.scale = scale;
        }
        self
    }

    /// Drawn as points (events at their own time), not a line.
    pub fn points(mut self) -> Series {
        if let Some(p) = &mut self.chart {
            p.style = Style::Points;
        }
        self
    }

    /// Drawn in the colour of writes or reads.
    pub fn tone(mut self, tone: Tone) -> Series {
        if let Some(p) = &mut self.chart {
            p.tone = tone;
        }
        self
    }
}

/// Where and how a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub chart: Chart,
    /// Its values are multiplied by this on the chart.
    pub scale: f64,
    pub style: Style,
    pub tone: Tone,
}

/// A chart of series over the run's time: the series placed on the same
/// chart are drawn together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chart {
    pub title: &'static str,
    /// The y axis' label, with its unit (`% of one CPU`).
    pub y_label: &'static str,
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    Points,
}

/// A series' colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The chart's next colour.
    Auto,
    /// The colour of writes.
    Write,
    /// The colour of reads.
    Read,
}

/// A bar chart: each bar a series summed over the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub title: &'static str,
    pub y_label: &'static str,
    /// (the bar's label, the series' stored name).
    pub bars: Vec<(String, String)>,
}

/// A table of a probe's notes: header cells and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What findings may read of a probe beyond the run's metrics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// Its notes by key (`top`), per phase.
    pub notes: Vec<&'static str>,
    /// Its series by stored name, every value of each phase.
    pub series: Vec<String>,
}

/// One stored note, as the describing functions see it.
#[derive(Debug, Clone, Copy)]
pub struct NoteRef<'a> {
    pub phase_index: Option<u32>,
    pub probe: &'a str,
    pub key: &'a str,
    pub value: &'a serde_json::Value,
}

/// One series' summary over a phase.
#[derive(Debug, Clone, Copy)]
pub struct SeriesSummary<'a> {
    pub phase_index: u32,
    pub probe: &'a str,
    pub metric: &'a str,
    pub mean: f64,
    pub max: f64,
}

/// What a probe describes: a run's stored notes and series summaries,
/// seen from one phase (or from the whole run).
#[derive(Debug, Clone, Copy)]
pub struct Described<'a> {
    pub run_id: i64,
    /// The phase described (None: the run as a whole).
    pub phase: Option<u32>,
    /// The run's phases: (index, name).
    pub phases: &'a [(u32, String)],
    /// Every note of the run, every probe's, in the order recorded.
    pub notes: &'a [NoteRef<'a>],
    /// Every series' summary of every phase.
    pub summaries: &'a [SeriesSummary<'a>],
}

impl Described<'_> {
    /// The note of type `T` of the phase described (or of the run).
    pub fn note<T: Note>(&self) -> Option<T> {
        self.notes
            .iter()
            .find(|n| n.phase_index == self.phase && T::is(n.probe, n.key))
            .map(|n| T::from_value(n.value))
    }

    /// Every note of type `T`, with its phase.
    pub fn notes_of<T: Note>(&self) -> Vec<(Option<u32>, T)> {
        self.notes
            .iter()
            .filter(|n| T::is(n.probe, n.key))
            .map(|n| (n.phase_index, T::from_value(n.value)))
            .collect()
    }

    /// (mean, max) of series `metric` of `probe` in the phase described.
    pub fn summary(&self, probe: &str, metric: &str) -> Option<(f64, f64)> {
        self.summaries
            .iter()
            .find(|s| Some(s.phase_index) == self.phase && s.probe == probe && s.metric == metric)
            .map(|s| (s.mean, s.max))
    }

    /// The name of phase `index`, or "" when the run has none such.
    pub fn phase_name(&self, index: Option<u32>) -> &str {
        self.phases
            .iter()
            .find(|(i, _)| Some(*i) == index)
            .map(|(_, n)| n.as_str())
            .unwrap_or_default()
    }
}

/// The default lines of a phase: one a series that has values in it,
/// `PROBE: LABEL MEAN UNIT average / MAX max`.
pub fn series_lines(probe: &str, series: &[Series], phase: &Described) -> Vec<String> {
    series
        .iter()
        .filter_map(|s| {
            let (mean, max) = phase.summary(probe, &s.metric)?;
            Some(format!(
                "{probe}: {} {} {} average / {} max",
                s.label,
                fslab_stats::fmt_g(mean, 6),
                s.unit,
                fslab_stats::fmt_g(max, 6)
            ))
        })
        .collect()
}
