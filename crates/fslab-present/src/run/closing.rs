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
    out += &kernels(exp, outcome);
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
