//! `journal`: every jbd2 commit of the filesystem's device (ext3/ext4, from
//! the trace: its times as points at the commit's own time, and the lines
//! seed 004 quotes), XFS's log counters per second, btrfs's commit_stats.

use crate::journal;
use crate::names;
use crate::notes::Jbd2Commits;
use crate::plugin::{Chart, Described, Evidence, Filter, Needs, Plugin, Series, TraceEvent};
use crate::probe::{Ctx, PhaseOut, Probe, Reading};

#[derive(Default)]
pub struct Journal {
    xfs_prev: Option<Vec<(&'static str, f64)>>,
    btrfs_dir: Option<Option<std::path::PathBuf>>,
}

impl Journal {
    fn xfs(ctx: &Ctx) -> Option<Vec<(&'static str, f64)>> {
        let d = ctx.targets.device.as_ref()?;
        journal::xfs_log_counters(&ctx.source.read(&journal::xfs_stats_path(&d.name))?)
    }
}

impl Probe for Journal {
    fn phase_start(&mut self, ctx: &Ctx) -> Vec<Reading> {
        self.xfs_prev = Journal::xfs(ctx);
        if self.btrfs_dir.is_none() {
            self.btrfs_dir = Some(
                ctx.targets
                    .device
                    .as_ref()
                    .and_then(|d| journal::btrfs_dir(ctx.source, &d.name)),
            );
        }
        if let Some(mut st) = ctx.trace_state() {
            st.commits.clear();
            st.commit_lines.clear();
        }
        Vec::new()
    }

    fn sample(&mut self, ctx: &Ctx, dt: f64) -> Vec<Reading> {
        let mut out = Vec::new();
        if let Some(mut st) = ctx.trace_state() {
            for (at, fields) in st.commits.drain(..) {
                let ts = at.saturating_sub(ctx.phase.start_mono_ns) as f64 / 1e9;
                for (k, v) in fields {
                    if k != "tid" {
                        out.push(Reading::at(names::jbd2_commit(k), v, ts));
                    }
                }
            }
        }
        if let (Some(prev), Some(cur)) = (&self.xfs_prev, Journal::xfs(ctx)) {
            for ((k, a), (_, b)) in cur.iter().zip(prev) {
                out.push(Reading::now(names::xfs_per_s(k), (a - b) / dt));
            }
            self.xfs_prev = Some(cur);
        }
        if let Some(Some(dir)) = &self.btrfs_dir {
            if let Some(text) = ctx.source.read(&dir.join("commit_stats")) {
                for (k, v) in journal::btrfs_commit_stats(&text) {
                    out.push(Reading::now(k, v));
                }
            }
        }
        out
    }

    fn phase_end(&mut self, ctx: &Ctx, _secs: f64) -> PhaseOut {
        let mut out = PhaseOut::default();
        if let Some(st) = ctx.trace_state() {
            if !st.commit_lines.is_empty() {
                out.notes
                    .push(ctx.phase_note(&Jbd2Commits(st.commit_lines.clone())));
            }
        }
        out
    }
}

/// The `journal` probe.
pub struct JournalPlugin;

/// jbd2's commit statistics (ext3, ext4 only).
const EVENTS: [TraceEvent; 1] = [TraceEvent {
    event: "jbd2/jbd2_run_stats",
    filter: Filter::Device,
    optional: true,
    fs_prefix: Some("ext"),
}];

impl Plugin for JournalPlugin {
    fn name(&self) -> &'static str {
        "journal"
    }

    fn needs(&self) -> Needs {
        Needs {
            trace: &EVENTS,
            ..Needs::default()
        }
    }

    fn make(&self) -> Box<dyn Probe> {
        Box::<Journal>::default()
    }

    fn series(&self) -> Vec<Series> {
        let commits = Chart {
            title: "journal commits (jbd2)",
            y_label: "ms",
        };
        let commit = |k: &str| {
            Series::new(names::jbd2_commit(k), "ms", k)
                .on(commits)
                .points()
        };
        vec![
            commit(names::JBD2_RUNNING),
            commit(names::JBD2_LOCKED),
            commit(names::JBD2_LOGGING),
            Series::new(
                names::xfs_per_s(names::XFS_LOG_WRITES),
                "writes/s",
                "xfs log writes",
            ),
            Series::new(names::BTRFS_COMMITS, "commits", "btrfs commits"),
        ]
    }

    /// The phase's jbd2 commits (with the first lines seed 004 quotes),
    /// else XFS's log writes, else btrfs's commits.
    fn describe_phase(&self, phase: &Described) -> Vec<String> {
        let pt = |m: &str| phase.summary(self.name(), m);
        if let Some(Jbd2Commits(lines)) = phase.note::<Jbd2Commits>() {
            let run = pt(&names::jbd2_commit(names::JBD2_RUNNING)).unwrap_or((0.0, 0.0));
            let log = pt(&names::jbd2_commit(names::JBD2_LOGGING)).unwrap_or((0.0, 0.0));
            let mut out = vec![format!(
                "journal: {} jbd2 commits, running {:.0} ms average / {:.0} max, logging {:.0} ms average / {:.0} max",
                lines.len(),
                run.0,
                run.1,
                log.0,
                log.1
            )];
            out.extend(lines.iter().take(3).map(|l| format!("  {l}")));
            out
        } else if let Some((mean, _)) = pt(&names::xfs_per_s(names::XFS_LOG_WRITES)) {
            vec![format!("journal: xfs log writes {mean:.0}/s average")]
        } else if let Some((_, commits)) = pt(names::BTRFS_COMMITS) {
            vec![format!(
                "journal: btrfs transaction commits {commits:.0} (mount total)"
            )]
        } else {
            Vec::new()
        }
    }

    /// Each phase's commit logging times (seed 004's mechanism).
    fn evidence(&self) -> Evidence {
        Evidence {
            notes: Vec::new(),
            series: vec![names::jbd2_commit(names::JBD2_LOGGING)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bed::*;
    use super::*;
    use crate::notes::Note;

    #[test]
    fn jbd2_commits_at_their_own_time() {
        let b = Bed::new();
        let mut p = Journal::default();
        p.phase_start(&b.ctx());
        b.trace_lines(&["  jbd2/loop3-8-812 [001] ..... 3.500000: jbd2_run_stats: dev 7,3 tid 2 wait 0 request_delay 0 running 5004 locked 1 flushing 0 logging 8 handle_count 1203 blocks 12 blocks_logged 13".to_string()]);
        let s = p.sample(&b.ctx(), 1.0);
        let run = s
            .iter()
            .find(|x| x.metric == names::jbd2_commit(names::JBD2_RUNNING))
            .unwrap();
        // The phase started at 1.0 s of the trace's clock.
        assert_eq!((run.value, run.at_s), (5004.0, Some(2.5)));
        assert!(s.iter().all(|x| !x.metric.ends_with("tid")));
        let out = p.phase_end(&b.ctx(), 3.0);
        let lines = Jbd2Commits::from_value(&out.notes[0].value);
        assert!(
            lines.0[0].starts_with("3.500000: jbd2_run_stats: dev 7,3"),
            "{lines:?}"
        );
    }

    #[test]
    fn xfs_log_writes_per_second_and_btrfs_commit_stats() {
        let b = Bed::new();
        b.source.set(
            "/sys/fs/xfs/loop3/stats/stats",
            "extent_alloc 1 2 3 4\nlog 10 100 0 5 0\n",
        );
        let mut p = Journal::default();
        p.phase_start(&b.ctx());
        b.source.set(
            "/sys/fs/xfs/loop3/stats/stats",
            "extent_alloc 1 2 3 4\nlog 30 500 0 7 0\n",
        );
        let s = p.sample(&b.ctx(), 2.0);
        assert_eq!(value(&s, &names::xfs_per_s(names::XFS_LOG_WRITES)), 10.0);
        assert_eq!(value(&s, &names::xfs_per_s("log_blocks")), 200.0);

        let b = Bed::new();
        b.source.set("/sys/fs/btrfs/0c1d/devices/loop3", "");
        b.source.set(
            "/sys/fs/btrfs/0c1d/commit_stats",
            "commits 7\nlast_commit_ms 3\nmax_commit_ms 9\ntotal_commit_ms 20\n",
        );
        b.source.set("/sys/fs/btrfs/ffff/devices/loop9", "");
        let mut p = Journal::default();
        p.phase_start(&b.ctx());
        let s = p.sample(&b.ctx(), 1.0);
        assert_eq!(value(&s, names::BTRFS_COMMITS), 7.0);
        assert_eq!(value(&s, &names::btrfs("max_commit_ms")), 9.0);
    }
}
