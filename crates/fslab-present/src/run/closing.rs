//! What `fslab run` prints when the experiment is over: the summary, the
//! tools' tables, the findings and the runs that failed.

use std::fmt::Write as _;

use fslab_experiment::runner::ExperimentOutcome;
use fslab_experiment::spec::Experiment;
use fslab_experiment::summary;

/// The closing text of `exp`'s run, `outcome`, at `scale`.
pub fn text(exp: &Experiment, outcome: &ExperimentOutcome, scale: f64) -> String {
    let cells: Vec<(u32, String)> = exp
        .cells
        .iter()
        .map(|c| (c.index, c.label.clone()))
        .collect();
    let ok = outcome.runs.iter().filter(|r| r.ok).count();
    let mut out = format!(
        "experiment {} (id {}): {} of {} runs completed{}, scale {}\n\n",
        exp.name,
        outcome.experiment_id,
        ok,
        outcome.runs.len(),
        if outcome.interrupted {
            ", interrupted"
        } else {
            ""
        },
        scale
    );
    let policy = summary::policy(exp, outcome);
    out += &super::summary::table(&summary::analysis(exp, outcome, policy));
    if let Some(r) = &outcome.resolution {
        let _ = writeln!(out, "{r}");
    }
    out += &super::summary::outputs(&cells, &outcome.outputs());
    out += &fslab_experiment::findings::text(&outcome.findings);
    let failed: Vec<_> = outcome.runs.iter().filter(|r| !r.ok).collect();
    if !failed.is_empty() {
        out.push('\n');
        for r in &failed {
            let _ = writeln!(
                out,
                "failed: cell {} {:?} repetition {}: {}",
                r.cell,
                exp.cells[r.cell as usize].label,
                r.repetition,
                r.error.as_deref().unwrap_or("did not complete")
            );
        }
    }
    out
}
