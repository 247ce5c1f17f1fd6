//! What findings read from a run's probes beyond its metrics: what each
//! registered probe offers as evidence ([`fslab_probe::Plugin::evidence`]):
//! its notes by key and its series' values, per phase, kept with the run so
//! that findings can be judged at the end. The `stacks` probe offers its
//! top wait stacks per phase (`fslab_probe::notes::StacksTop`), the
//! `journal` probe its jbd2 commit times (its points `commit.logging`, ms).

use fslab_probe::notes::{Note, PerfTop, StacksTop};

/// One run's probe evidence, by phase name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evidence {
    /// (phase, probe, key, value) of every note a probe offers.
    pub notes: Vec<(String, String, String, serde_json::Value)>,
    /// (phase, probe, series, values) of every series a probe offers.
    pub series: Vec<(String, String, String, Vec<f64>)>,
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
    /// A stored run's probe evidence (a resumed experiment judges its
    /// earlier runs too; a guest's run is read back from its store).
    pub fn stored(
        store: &fslab_store::Store,
        run: i64,
        phases: &[String],
    ) -> Result<Evidence, fslab_store::StoreError> {
        let notes = store.probe_notes(run)?;
        let points = store.probe_points(run)?;
        Ok(Evidence::of(
            phases,
            notes
                .iter()
                .map(|n| (n.phase_index, n.probe.as_str(), n.key.as_str(), &n.value)),
            points
                .iter()
                .map(|p| (p.phase_index, p.probe.as_str(), p.metric.as_str(), p.value)),
        ))
    }

    /// From a run's phases (in order: a point's or note's phase index is
    /// its position), its probes' notes `(phase, probe, key, value)` and
    /// points `(phase, probe, metric, value)`: those the registered probes
    /// offer as evidence.
    pub fn of<'a>(
        phases: &[String],
        notes: impl IntoIterator<Item = (Option<u32>, &'a str, &'a str, &'a serde_json::Value)>,
        points: impl IntoIterator<Item = (u32, &'a str, &'a str, f64)>,
    ) -> Evidence {
        let offered: Vec<(&'static str, fslab_probe::plugin::Evidence)> = fslab_probe::all()
            .into_iter()
            .map(|k| (k.name(), k.plugin().evidence()))
            .collect();
        let offers = |probe: &str| offered.iter().find(|(p, _)| *p == probe).map(|o| &o.1);
        let name = |i: u32| phases.get(i as usize).cloned();
        let mut e = Evidence::default();
        for (phase, probe, key, value) in notes {
            let (Some(o), Some(p)) = (offers(probe), phase.and_then(name)) else {
                continue;
            };
            if o.notes.contains(&key) {
                e.notes
                    .push((p, probe.to_string(), key.to_string(), value.clone()));
            }
        }
        for (phase, probe, metric, value) in points {
            let (Some(o), Some(p)) = (offers(probe), name(phase)) else {
                continue;
            };
            if !o.series.iter().any(|m| m == metric) {
                continue;
            }
            match e
                .series
                .iter_mut()
                .find(|(q, pr, m, _)| *q == p && pr == probe && m == metric)
            {
                Some((_, _, _, v)) => v.push(value),
                None => e
                    .series
                    .push((p, probe.to_string(), metric.to_string(), vec![value])),
            }
        }
        e
    }

    /// The note of type `T` of `phase`.
    pub fn note<T: Note>(&self, phase: &str) -> Option<T> {
        self.notes
            .iter()
            .find(|(p, probe, key, _)| p == phase && T::is(probe, key))
            .map(|(_, _, _, v)| T::from_value(v))
    }

    /// Each phase's values of series `metric` of `probe`.
    pub fn series_of(&self, probe: &str, metric: &str) -> Vec<(&str, &[f64])> {
        self.series
            .iter()
            .filter(|(_, p, m, _)| p == probe && m == metric)
            .map(|(phase, _, _, v)| (phase.as_str(), v.as_slice()))
            .collect()
    }

    /// Whether the workload's top `top` stacks in `phase` hold a frame
    /// containing each of `functions` (None: no stacks of that phase).
    pub fn stacks_name(&self, phase: &str, functions: &[String], top: usize) -> Option<bool> {
        let st = self.note::<StacksTop>(phase)?;
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

    /// `symbol`'s share of `phase`'s profile, % (seed 001's 001-e:
    /// `__crc32c_le` 1.65% of the create profile); None without a profile
    /// of the phase, or below the 0.5% the perf probe keeps.
    pub fn symbol_share(&self, phase: &str, symbol: &str) -> Option<f64> {
        fslab_explain::profile::share(&self.note::<PerfTop>(phase)?, symbol)
    }

    /// The share (%) of `phase`'s blocked workload samples in wait class
    /// `class`, stacks classed by `waits` (seed 004's journal waits).
    pub fn wait_share(
        &self,
        phase: &str,
        class: &str,
        waits: &fslab_explain::WaitTable,
    ) -> Option<f64> {
        waits.share(&self.note::<StacksTop>(phase)?, class)
    }

    /// The median commit logging time of each phase that had commits.
    pub fn commit_medians(&self) -> Vec<(String, f64)> {
        self.series_of("journal", &commit_logging())
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(p, v)| {
                let mut s = v.to_vec();
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
        let perf = PerfTop(vec![fslab_probe::notes::PerfSymbol {
            percent: 1.65,
            samples: 33,
            dso: "[kernel.kallsyms]".into(),
            kernel: true,
            symbol: "__crc32c_le".into(),
        }])
        .to_value();
        let e = Evidence::of(
            &phases,
            [
                (Some(0), "stacks", "top", &v),
                (None, "stacks", "top", &v),
                (Some(0), "perf", "top", &perf),
            ],
            [
                (0, "journal", logging.as_str(), 30.0),
                (0, "journal", logging.as_str(), 10.0),
                (0, "journal", "commit.running", 5000.0),
                (0, "journal", logging.as_str(), 20.0),
            ],
        );
        assert_eq!(e.notes.len(), 2, "the run's own note is no phase's");
        assert_eq!(e.symbol_share("create", "__crc32c_le"), Some(1.65));
        assert_eq!(e.symbol_share("create", "memcpy"), None);
        assert_eq!(e.series.len(), 1, "commit.running is not offered: {e:?}");
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

    #[test]
    fn a_phases_share_of_blocked_samples_in_a_wait_class() {
        let stack = |frames: &[&str], samples: u64| BlockedStack {
            thread: "workload".into(),
            samples,
            frames: frames.iter().map(|f| f.to_string()).collect(),
            ..Default::default()
        };
        // Seed 004: the lookup reads directory blocks, the create waits on
        // the journal; 20 blocked samples were not kept.
        let top = StacksTop {
            rounds: 100,
            stacks: vec![
                stack(
                    &[
                        "__wait_on_buffer",
                        "ext4_bread",
                        "__ext4_read_dirblock",
                        "ext4_dx_find_entry",
                    ],
                    50,
                ),
                stack(
                    &["do_get_write_access", "jbd2_journal_get_write_access"],
                    30,
                ),
            ],
            workload_blocked: 100,
            ..Default::default()
        };
        let v = top.to_value();
        let e = Evidence::of(
            &["create".to_string()],
            [(Some(0), "stacks", "top", &v)],
            [],
        );
        let waits = fslab_explain::WaitTable::builtin();
        assert_eq!(
            e.wait_share("create", "directory-block read", &waits),
            Some(50.0)
        );
        assert_eq!(e.wait_share("create", "journal", &waits), Some(30.0));
        assert_eq!(e.wait_share("create", "lock", &waits), Some(0.0));
        assert_eq!(e.wait_share("unlink", "journal", &waits), None);
    }
}
