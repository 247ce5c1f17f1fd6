//! What `fslab run` prints when the experiment is over: the summary, the
//! tools' tables, the findings and the runs that failed.

use std::fmt::Write as _;

use fslab_analysis::{Explainer, ExplanationKind};
use fslab_experiment::runner::ExperimentOutcome;
use fslab_experiment::spec::Experiment;
use fslab_experiment::summary;
use fslab_store::Store;

/// The closing text of `exp`'s run, `outcome`, at `scale`. With the
/// store its runs are in, `explainers` explain the cells first: their
/// machines are checked before the summary's verdicts (each verdict the
/// machines may have made says so), what limited each phase follows them,
/// and the findings say first when they compare cells whose machines
/// differ.
pub fn text(
    exp: &Experiment,
    outcome: &ExperimentOutcome,
    scale: f64,
    explained_from: Option<(&Store, &[&dyn Explainer])>,
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
    let policy = summary::policy(exp, outcome);
    let mut a = summary::analysis(exp, outcome, policy);
    if let Some((store, explainers)) = explained_from {
        if let Err(e) = fslab_analysis::add_explanations(&mut a, store, explainers) {
            let _ = writeln!(out, "the runs could not be explained: {e}\n");
        }
    }
    out += &crate::export::text::before_verdicts(&a);
    out += &super::summary::table(&a);
    out += &crate::export::text::after_verdicts(&a);
    if let Some(r) = &outcome.resolution {
        let _ = writeln!(out, "{r}");
    }
    out += &super::summary::outputs(&cells, &outcome.outputs());
    out += &kernels(exp, outcome);
    let differ: Vec<String> = a
        .explanations
        .iter()
        .filter(|e| e.kind == ExplanationKind::Confounder && e.before_verdicts())
        .map(|e| format!("{}: {}", e.about.words(), e.says))
        .collect();
    if !outcome.findings.is_empty() && !differ.is_empty() {
        let _ = writeln!(
            out,
            "\nthe findings below compare cells whose machines differ: {}",
            differ.join("; ")
        );
    }
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

/// Which cells ran on other kernels, and (under TCG) what of their
/// numbers carries over: said before the findings, which may compare them.
fn kernels(exp: &Experiment, outcome: &ExperimentOutcome) -> String {
    let mut out = String::new();
    for c in exp.cells.iter() {
        let Some(k) = &c.kernel else { continue };
        let accel = outcome
            .runs
            .iter()
            .find(|r| r.cell == c.index && r.guest_accel.is_some())
            .and_then(|r| r.guest_accel.clone());
        let _ = write!(out, "\nkernel: {:?} ran in a guest on {}", c.label, k.name);
        match accel.as_deref() {
            Some("tcg") => {
                let _ = writeln!(
                    out,
                    " under TCG (QEMU's software emulation): its times, rates and CPU figures are \
                     emulated; {}",
                    fslab_analysis::kernels::COUNTS_CARRY_OVER
                );
            }
            Some(a) => {
                let _ = writeln!(out, " under {}", a.to_uppercase());
            }
            None => out.push('\n'),
        }
    }
    out
}
