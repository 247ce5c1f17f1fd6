//! What `fslab run` prints when the experiment is over: the summary, the
//! tools' tables, the findings and the runs that failed.

use std::fmt::Write as _;

use crate::runner::ExperimentOutcome;
use crate::spec::Experiment;
use crate::summary;

/// The closing text of `exp`'s run, `outcome`, at `scale`; with the
/// cells explained, their machines are checked before the summary's
/// verdicts and each phase's limiter follows them.
pub fn text(
    exp: &Experiment,
    outcome: &ExperimentOutcome,
    scale: f64,
    explained: Option<&fslab_explain::Explanation>,
) -> String {
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
    if let Some(e) = explained {
        out += &fslab_explain::text::confounders(e);
        out.push('\n');
    }
    let policy = summary::policy(exp, outcome);
    out += &summary::table_with(&cells, &summary::family(outcome), policy);
    if let Some(e) = explained.map(fslab_explain::text::after_verdicts) {
        if !e.is_empty() {
            out.push('\n');
            out += &e;
        }
    }
    if let Some(r) = &outcome.resolution {
        let _ = writeln!(out, "{r}");
    }
    out += &summary::outputs(&cells, &outcome.outputs());
    let differ: Vec<String> = explained
        .map(|e| {
            e.sides
                .iter()
                .filter(|s| !s.confounders.is_empty())
                .map(|s| {
                    let names: Vec<&str> = s.confounders.iter().map(|d| d.name.as_str()).collect();
                    format!("{} ({})", s.group, names.join(", "))
                })
                .collect()
        })
        .unwrap_or_default();
    if !outcome.findings.is_empty() && !differ.is_empty() {
        let _ = writeln!(
            out,
            "\nThe findings compare cells whose machines differ from {}'s: {}",
            explained.map(|e| e.baseline.as_str()).unwrap_or_default(),
            differ.join("; ")
        );
    }
    out += &crate::findings::text(&outcome.findings);
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
