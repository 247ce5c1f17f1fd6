//! `until_resolved`: after the planned repetitions, which cells run once
//! more, and what to say about the comparisons still open.

use crate::outcome::ExperimentOutcome;
use crate::spec::Experiment;

/// For `until_resolved`: the cells to run once more (the first cell, the
/// baseline, with every cell whose headline comparison with it is
/// unresolved), and what to say about it after `reps` repetitions.
pub(super) fn resolution(
    exp: &Experiment,
    o: &ExperimentOutcome,
    reps: u32,
    max: u32,
) -> (Vec<u32>, String) {
    use fslab_stats::verdict::Verdict;
    // Every metric of every cell is one analysis, as in the summary and
    // `fslab compare`; this look tests at its sequential level.
    let a = crate::summary::analysis(exp, o, crate::summary::policy_at(exp, reps));
    let mut open: Vec<u32> = Vec::new();
    let mut unresolved = Vec::new();
    for r in a
        .rows
        .iter()
        .filter(|r| r.verdict == Some(Verdict::Unresolved) && a.is_headline(&r.metric))
    {
        let cell = a.labels.iter().position(|l| *l == r.group).unwrap_or(0) as u32;
        // More runs cannot settle some (a ratio at the threshold, a
        // baseline of 0): no repetition is spent on those.
        let hopeless = r
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with(fslab_stats::compare::NO_MORE_RUNS));
        if !open.contains(&cell) && !hopeless {
            open.push(cell);
        }
        unresolved.push(format!("{}: {}", r.group, r.metric));
    }
    if unresolved.is_empty() {
        return (
            Vec::new(),
            format!(
                "until resolved: every headline comparison is resolved after {reps} repetitions"
            ),
        );
    }
    let said = format!(
        "until resolved: after {reps} repetitions {} headline comparison(s) unresolved ({}){}",
        unresolved.len(),
        unresolved.join("; "),
        if reps >= max {
            format!("; stopped at the maximum, {max}")
        } else if open.is_empty() {
            format!("; stopped: {}", fslab_stats::compare::NO_MORE_RUNS)
        } else {
            String::new()
        }
    );
    if reps >= max || open.is_empty() {
        return (Vec::new(), said);
    }
    open.sort_unstable();
    let mut more = vec![0];
    more.extend(open.into_iter().filter(|c| *c != 0));
    (more, said)
}
