//! What findings read from a run's probes beyond its metrics: the `stacks`
//! probe's top wait stacks per phase (`fslab_probe::notes::StacksTop`) and
//! the `journal` probe's jbd2 commit times (its points `commit.logging`,
//! ms), kept with the run so that findings can be judged at the end.

use fslab_probe::notes::{Note, StacksTop};

/// One run's probe evidence, by phase name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// The top wait stacks of each phase.
    pub stacks: Vec<(String, StacksTop)>,
    /// Each phase's jbd2 commits: their logging times (ms).
    pub commits: Vec<(String, Vec<f64>)>,
}

/// The journal probe's point of a commit's logging time.
pub fn commit_logging() -> String {
    fslab_probe::names::jbd2_commit(fslab_probe::names::JBD2_LOGGING)
}

/// The name findings give the median of a phase's commit logging times.
pub fn commit_median_metric(phase: &str) -> String {
    format!("journal {phase} commit logging, median (ms)")
}

impl Evidence {
    /// From a run's phases (in order: a point's or note's phase index is
    /// its position), its probes' notes `(phase, probe, key, value)` and
    /// points `(phase, probe, metric, value)`.
    pub fn of<'a>(
        phases: &[String],
        notes: impl IntoIterator<Item = (Option<u32>, &'a str, &'a str, &'a serde_json::Value)>,
        points: impl IntoIterator<Item = (u32, &'a str, &'a str, f64)>,
    ) -> Evidence {
        let name = |i: u32| phases.get(i as usize).cloned();
        let mut e = Evidence::default();
        for (phase, probe, key, value) in notes {
            if let (true, Some(p)) = (StacksTop::is(probe, key), phase.and_then(name)) {
                e.stacks.push((p, StacksTop::from_value(value)));
            }
        }
        let logging = commit_logging();
        for (phase, probe, metric, value) in points {
            if probe != "journal" || metric != logging {
                continue;
            }
            let Some(p) = name(phase) else { continue };
            match e.commits.iter_mut().find(|(q, _)| *q == p) {
                Some((_, v)) => v.push(value),
                None => e.commits.push((p, vec![value])),
            }
        }
        e
    }

    /// Whether the workload's top `top` stacks in `phase` hold a frame
    /// containing each of `functions` (None: no stacks of that phase).
    pub fn stacks_name(&self, phase: &str, functions: &[String], top: usize) -> Option<bool> {
        let (_, st) = self.stacks.iter().find(|(p, _)| p == phase)?;
        let workload: Vec<_> = st
            .stacks
            .iter()
            .filter(|s| s.thread == "workload")
            .take(top)
            .collect();
        Some(functions.iter().all(|f| {
            workload
                .iter()
                .any(|s| s.frames.iter().any(|fr| fr.contains(f.as_str())))
        }))
    }

    /// The median commit logging time of each phase that had commits.
    pub fn commit_medians(&self) -> Vec<(String, f64)> {
        self.commits
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(p, v)| {
                let mut s = v.clone();
                s.sort_by(f64::total_cmp);
                let m = if s.len() % 2 == 1 {
                    s[s.len() / 2]
                } else {
                    (s[s.len() / 2 - 1] + s[s.len() / 2]) / 2.0
                };
                (commit_median_metric(p), m)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_probe::notes::BlockedStack;

    #[test]
    fn stacks_and_commits_by_phase_name() {
        let top = StacksTop {
            rounds: 10,
            stacks: vec![
                BlockedStack {
                    thread: "kthread jbd2/loop3-8".into(),
                    frames: vec!["jbd2_journal_commit_transaction".into()],
                    ..Default::default()
                },
                BlockedStack {
                    thread: "workload".into(),
                    frames: vec![
                        "__wait_on_buffer".into(),
                        "ext4_dx_find_entry+0x12/0x300".into(),
                    ],
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let v = top.to_value();
        let phases = vec!["create".to_string()];
        let logging = commit_logging();
        let e = Evidence::of(
            &phases,
            [(Some(0), "stacks", "top", &v), (None, "stacks", "top", &v)],
            [
                (0, "journal", logging.as_str(), 30.0),
                (0, "journal", logging.as_str(), 10.0),
                (0, "journal", "commit.running", 5000.0),
                (0, "journal", logging.as_str(), 20.0),
            ],
        );
        assert_eq!(e.stacks.len(), 1);
        let f = |s: &str| vec![s.to_string()];
        assert_eq!(e.stacks_name("create", &f("dx_find_entry"), 5), Some(true));
        // A kthread's stack is not the workload's.
        assert_eq!(
            e.stacks_name("create", &f("jbd2_journal_commit_transaction"), 5),
            Some(false)
        );
        assert_eq!(e.stacks_name("unlink", &f("dx_find_entry"), 5), None);
        assert_eq!(
            e.commit_medians(),
            vec![(
                "journal create commit logging, median (ms)".to_string(),
                20.0
            )]
        );
    }
}
