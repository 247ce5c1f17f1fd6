//! The one analysis: from runs and their samples (the metric catalogue's,
//! `fslab_model::catalogue::samples`) to every metric of every group with
//! its statistics, and each group's difference from the baseline with its
//! interval and verdict, the p-values corrected over the whole analysis.
//! [`analyse`] takes runs in memory (`fslab run`'s summary and
//! `--until-resolved`); [`from_store`] selects them in the store first
//! (`fslab compare`, `fslab report`), with the calibrations that fit them
//! and the explanations of the explainers it is given.

use fslab_model::catalogue;
use fslab_stats::compare::{self, Calibrated, Metric, Row};
use fslab_stats::verdict::Policy;
use fslab_store::{ExperimentRecord, RunRow, Store};

use crate::explain::{About, Explanation, ExplanationKind};
use crate::select::{self, GroupRun};
use crate::Result;

/// What an analysis compares: groups, by their labels, and runs of them,
/// each with its samples, in the order they are read (which orders the
/// metrics: first seen first).
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub labels: Vec<String>,
    pub runs: Vec<RunSamples>,
}

/// One run of a group and its samples.
#[derive(Debug, Clone)]
pub struct RunSamples {
    /// Its group's position in [`Input::labels`].
    pub group: usize,
    /// The stored run (None: not stored).
    pub run: Option<GroupRun>,
    pub samples: Vec<catalogue::Sample>,
}

/// How an analysis reaches its verdicts.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The group the others are compared with.
    pub baseline: usize,
    /// The significance level, the correction, a fixed noise threshold.
    pub policy: Policy,
    /// Noise thresholds from A/A calibrations: (metric, percent, where it
    /// came from). A metric without one takes its δ from the policy or
    /// from A/A splits of its runs.
    pub thresholds: Vec<(String, f64, String)>,
}

/// One analysis of a selection of runs: what every exporter, `fslab run`'s
/// summary and `--until-resolved` read.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// The groups' labels.
    pub labels: Vec<String>,
    /// Each group's stored runs.
    pub runs: Vec<Vec<GroupRun>>,
    /// The group the others are compared with.
    pub baseline: usize,
    pub policy: Policy,
    /// Every metric (first seen first), with its values in each group.
    pub metrics: Vec<Metric>,
    /// The headline metrics' names (each phase's rate, each tool's own
    /// headline number: the catalogue's `Role::Headline`).
    pub headlines: Vec<String>,
    /// Every metric in every group, metric-major (`metrics.len() x
    /// labels.len()` rows): statistics, difference, interval, verdict.
    pub rows: Vec<Row>,
    /// Each metric's threshold from a calibration, in `metrics` order.
    pub calibrated: Vec<Calibrated>,
    /// Groups left out (no completed run), a line each.
    pub warnings: Vec<String>,
    /// What the selection mixes, a line each.
    pub notes: Vec<String>,
    /// The experiments whose cells the groups are (none for groups of
    /// runs, or runs in memory).
    pub experiments: Vec<ExperimentRecord>,
    /// What the instruments say about it.
    pub explanations: Vec<Explanation>,
}

impl Analysis {
    /// The rows of metric `i`, one a group.
    pub fn rows_of(&self, i: usize) -> &[Row] {
        let n = self.labels.len();
        &self.rows[i * n..(i + 1) * n]
    }

    /// Whether metric `name` is a headline metric.
    pub fn is_headline(&self, name: &str) -> bool {
        self.headlines.iter().any(|h| h == name)
    }
}

/// Every compared metric of `input` (first seen first) with its values in
/// each group, and the headline metrics' names.
pub fn gather(input: &Input) -> (Vec<Metric>, Vec<String>) {
    let n = input.labels.len();
    let mut metrics: Vec<Metric> = Vec::new();
    let mut headlines: Vec<String> = Vec::new();
    for run in &input.runs {
        for s in run.samples.iter().filter(|s| s.compared()) {
            let m = match metrics.iter().position(|m| m.name == s.name) {
                Some(i) => &mut metrics[i],
                None => {
                    metrics.push(Metric {
                        name: s.name.clone(),
                        direction: s.direction,
                        exact: s.exact,
                        values: vec![Vec::new(); n],
                    });
                    metrics.last_mut().expect("just pushed")
                }
            };
            // `exact`: declared exact by construction by the run's
            // workload; the metric is exact only when every run that
            // recorded it said so.
            m.exact &= s.exact;
            m.values[run.group].push(s.value);
            if s.role == catalogue::Role::Headline && !headlines.contains(&s.name) {
                headlines.push(s.name.clone());
            }
        }
    }
    (metrics, headlines)
}

/// The analysis of `input` under `settings`.
pub fn analyse(input: &Input, settings: &Settings) -> Analysis {
    let mut runs: Vec<Vec<GroupRun>> = vec![Vec::new(); input.labels.len()];
    for run in &input.runs {
        if let Some(r) = run.run {
            runs[run.group].push(r);
        }
    }
    let (metrics, headlines) = gather(input);
    let calibrated: Vec<Calibrated> = metrics
        .iter()
        .map(|m| {
            settings
                .thresholds
                .iter()
                .find(|(name, _, _)| *name == m.name)
                .map(|(_, pct, from)| (*pct, from.clone()))
        })
        .collect();
    let rows = compare::compare_calibrated(
        &input.labels,
        &metrics,
        settings.baseline,
        settings.policy,
        &calibrated,
    );
    Analysis {
        labels: input.labels.clone(),
        runs,
        baseline: settings.baseline,
        policy: settings.policy,
        metrics,
        headlines,
        rows,
        calibrated,
        ..Analysis::default()
    }
}

/// What `fslab compare` and `fslab report` analyse: experiments (none: the
/// latest) or groups of run ids, against a baseline, under a policy.
#[derive(Default)]
pub struct Choice<'a> {
    /// Experiment ids (none, and no runs: the latest experiment).
    pub experiments: Vec<i64>,
    /// Groups of run ids, `ID,ID,...` each (instead of experiments).
    pub runs: Vec<String>,
    /// `--baseline`: a group's position or label (None: the first with a
    /// completed run).
    pub baseline: Option<String>,
    pub policy: Policy,
    /// `--calibration ID`: the thresholds of that calibration, which must
    /// fit the runs; None: per metric, the newest stored calibration that
    /// fits. No calibration is looked for when the policy fixes δ.
    pub calibration: Option<i64>,
    /// Fail when no group has a completed run (`compare`: a comparison of
    /// nothing is not printed as an empty table; the report still shows
    /// the runs that failed).
    pub refuse_empty: bool,
    /// What explains the analysis.
    pub explainers: &'a [&'a dyn Explainer],
}

/// Something that explains analyses from what the store holds about their
/// runs (their machines' facts, their probes' notes): it adds to
/// [`Analysis::explanations`] (and may qualify the rows it explains).
pub trait Explainer: Send + Sync {
    fn explain(&self, analysis: &mut Analysis, store: &Store) -> Result<()>;
}

/// The analysis of what `choice` selects in `store`: each run read once.
pub fn from_store(store: &Store, choice: &Choice) -> Result<Analysis> {
    let g = select::select(store, &choice.experiments, &choice.runs)?;
    if choice.refuse_empty {
        select::something_to_compare(&g)?;
    }
    let warnings = select::complete_runs(&g);
    let mut rows: Vec<Vec<RunRow>> = Vec::new();
    for group in &g.runs {
        rows.push(
            group
                .iter()
                .map(|r| store.run_row(r.id))
                .collect::<std::result::Result<_, _>>()?,
        );
    }
    let notes = select::check_mix(store, &g, &rows)?;
    let baseline = select::baseline_of(&g, choice.baseline.as_deref())?;
    let input = input_of(store, &g)?;
    let mut settings = Settings {
        baseline,
        policy: choice.policy,
        thresholds: Vec::new(),
    };
    if choice.policy.delta_pct.is_none() {
        let names = metric_names(&input);
        let found = crate::calibration::thresholds(store, &rows, &names, choice.calibration)?;
        settings.thresholds = names
            .iter()
            .zip(found)
            .filter_map(|(m, c)| c.map(|(pct, from)| (m.to_string(), pct, from)))
            .collect();
    }
    let mut a = analyse(&input, &settings);
    a.warnings = warnings;
    a.notes = notes;
    a.experiments = g
        .experiments
        .iter()
        .map(|&id| store.experiment(id))
        .collect::<std::result::Result<_, _>>()?;
    add_explanations(&mut a, store, choice.explainers)?;
    Ok(a)
}

/// Adds what `explainers` say about `a` (each may qualify the rows it
/// explains: see [`add_caveats`]).
pub fn add_explanations(
    a: &mut Analysis,
    store: &Store,
    explainers: &[&dyn Explainer],
) -> Result<()> {
    for e in explainers {
        e.explain(a, store)?;
    }
    Ok(())
}

/// Gives each comparison a confounder said about it as its row's caveat
/// (named before the verdict; a [`ExplanationKind::Confounded`] one in
/// place of faster/slower). An explainer calls it for the confounders it
/// added; one that does not leaves its confounders to be said before the
/// verdicts instead.
pub fn add_caveats(a: &mut Analysis) {
    for r in &mut a.rows {
        let about = |e: &&Explanation| {
            matches!(&e.about, About::Comparison { metric, group }
                if *metric == r.metric && *group == r.group)
        };
        let said: Vec<&Explanation> = a.explanations.iter().filter(about).collect();
        let pick = |k: ExplanationKind| said.iter().find(|e| e.kind == k);
        let caveat = pick(ExplanationKind::Confounded)
            .map(|e| (e, true))
            .or_else(|| pick(ExplanationKind::Confounder).map(|e| (e, false)))
            .map(|(e, replaces_verdict)| compare::Caveat {
                words: e.says.clone(),
                replaces_verdict,
            });
        if caveat.is_some() {
            r.caveat = caveat;
        }
    }
}

/// The runs of groups `g` with their samples, read from the store.
pub fn input_of(store: &Store, g: &select::Groups) -> Result<Input> {
    let mut input = Input {
        labels: g.labels.clone(),
        runs: Vec::new(),
    };
    for (group, runs) in g.runs.iter().enumerate() {
        for run in runs {
            input.runs.push(RunSamples {
                group,
                run: Some(*run),
                samples: select::run_samples(store, run)?,
            });
        }
    }
    Ok(input)
}

/// The compared metrics' names of `input`, first seen first.
fn metric_names(input: &Input) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for s in input.runs.iter().flat_map(|r| &r.samples) {
        if s.compared() && !names.contains(&s.name.as_str()) {
            names.push(&s.name);
        }
    }
    names
}
