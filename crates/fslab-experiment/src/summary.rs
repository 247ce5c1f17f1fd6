//! What a run's repetitions give the analysis and the findings: their
//! samples (the metric catalogue's), the analysis of the run (every metric
//! of every cell against the first: `fslab run`'s summary, which
//! fslab-present prints, and `--until-resolved`'s looks), and the policy
//! of each look.

use fslab_analysis::{analyse, Analysis, GroupRun, Input, RunSamples, Settings};
use fslab_model::catalogue;
pub use fslab_stats::compare::Direction;
use fslab_stats::sequential;
use fslab_stats::verdict::Policy;

use crate::outcome::{ExperimentOutcome, RepOutcome};
use crate::spec::Experiment;

/// One measured value of one repetition.
#[derive(Debug, Clone, PartialEq)]
pub struct RepetitionValue {
    pub cell: u32,
    /// The repetition it came from (findings pair metrics run by run).
    pub repetition: u32,
    pub metric: String,
    pub direction: Direction,
    pub value: f64,
    /// A headline metric: each phase's rate and the tool's own headline
    /// number (what `until_resolved` waits on).
    pub headline: bool,
    /// Declared exact by construction by its workload
    /// (`fslab_model::Metric::exact`).
    pub exact: bool,
}

/// Every metric `fslab compare` compares for these runs, as samples: the
/// metric catalogue's samples of each successful run
/// (`fslab_model::catalogue::samples`, which `fslab compare`, the report
/// and `results history` read too) without its detail rows, so that the
/// summary, the findings and `--until-resolved` correct over the same
/// family as `compare` and the report, under the same names.
pub fn family(outcome: &ExperimentOutcome) -> Vec<RepetitionValue> {
    let mut v = Vec::new();
    for r in outcome.runs.iter().filter(|r| r.ok) {
        v.extend(
            catalogue::samples(&numbers(r))
                .into_iter()
                .filter(catalogue::Sample::compared)
                .map(|s| RepetitionValue {
                    cell: r.cell,
                    repetition: r.repetition,
                    headline: s.role == catalogue::Role::Headline,
                    metric: s.name,
                    direction: s.direction,
                    value: s.value,
                    exact: s.exact,
                }),
        );
    }
    v
}

/// The analysis of a run's successful repetitions (`fslab_analysis`, as
/// `fslab compare` makes one from the store): every metric of every cell
/// against the first, the p-values corrected together under `policy`.
pub fn analysis(exp: &Experiment, outcome: &ExperimentOutcome, policy: Policy) -> Analysis {
    let input = Input {
        labels: exp.cells.iter().map(|c| c.label.clone()).collect(),
        runs: outcome
            .runs
            .iter()
            .filter(|r| r.ok)
            .filter_map(|r| {
                let group = exp.cells.iter().position(|c| c.index == r.cell)?;
                Some(RunSamples {
                    group,
                    run: r.run_id.map(|id| GroupRun {
                        id,
                        unmount_s: r.unmount_s,
                        remount_s: r.remount_s,
                        image_extents: r.image_extents,
                    }),
                    samples: catalogue::samples(&numbers(r)),
                })
            })
            .collect(),
    };
    analyse(
        &input,
        &Settings {
            baseline: 0,
            policy,
            thresholds: Vec::new(),
        },
    )
}

/// What the metric catalogue reads of a repetition.
fn numbers(r: &RepOutcome) -> catalogue::RunNumbers<'_> {
    catalogue::RunNumbers {
        phases: &r.phases,
        metrics: &r.metrics,
        unmount_s: r.unmount_s,
        remount_s: r.remount_s,
        image_extents: r.image_extents,
    }
}

/// The policy of an experiment's verdicts after `reps` repetitions: with
/// `until_resolved = MAX`, the level of that look of the sequential
/// design (`fslab_stats::sequential`), so that the looks together keep
/// the chance of a false "faster/slower" at or below 5%; else the default.
pub fn policy_at(exp: &Experiment, reps: u32) -> Policy {
    let base = Policy::default();
    match exp.until_resolved {
        Some(max) => Policy {
            alpha: sequential::look_alpha(base.alpha, exp.repetitions, reps, max),
            ..base
        },
        None => base,
    }
}

/// [`policy_at`] for a finished run: the look after its last repetition.
pub fn policy(exp: &Experiment, outcome: &ExperimentOutcome) -> Policy {
    let reps = outcome
        .runs
        .iter()
        .map(|r| r.repetition)
        .max()
        .unwrap_or(exp.repetitions);
    policy_at(exp, reps.max(exp.repetitions))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_resolved_looks_test_at_their_spent_level() {
        let exp = |until: &str| {
            let text = format!(
                "name = \"t\"\nrepetitions = 3\n{until}[device]\nkind = \"directory\"\npath = \"/tmp\"\n[workload]\nkind = \"createmany\"\nargs = [\"-o\", \"{{dir}}/f\", \"10\"]\n"
            );
            crate::spec::parse("t.toml", &text, &Default::default()).unwrap()
        };
        let plain = exp("");
        assert_eq!(policy_at(&plain, 3).alpha, 0.05);
        let seq = exp("until_resolved = 10\n");
        let first = policy_at(&seq, 3).alpha;
        // 0.05 ln(1 + (e - 1) 0.3) = 0.0208
        assert!((first - 0.020_77).abs() < 1e-4, "{first}");
        let levels: f64 = (3..=10).map(|r| policy_at(&seq, r).alpha).sum();
        assert!((levels - 0.05).abs() < 1e-12, "{levels}");
    }
}
