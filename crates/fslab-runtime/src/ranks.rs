//! A workload command run as one of many MPI ranks (`mpirun -np N fslab
//! fsmark ...`), as IOR and mdtest run.
//!
//! Every rank runs the workload in its own directory (`rankNNNN` under the
//! directories given; see [`crate::rank::Rank`]) and records into
//! memory. Before each phase the ranks meet at a [`Gate`], so phases start
//! together. At the end rank 0 gathers every rank's results, merges them
//! ([`fslab_cluster::merge`]), keeps the merged run in the store and prints
//! the aggregate and per-rank rates. The first rank of each host runs the
//! probes on it (recorded per host, [`fslab_cluster::HostFacts::probes`]);
//! rank 0 alone opens the store; the ranks' own tool output is not printed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fslab_cluster::rescue::{Spool, SpoolMeta};
use fslab_cluster::{ClockOffset, Gate, RankRecorder, RankRun};
use fslab_model::protocol::DropCaches;
use fslab_model::RunStatus;
use fslab_workload::{Hooks, Job, Start};

use crate::harness::{cache_dropper, ending, finished, start_probes, ProgressLines};
use crate::rank::Rank;
use crate::{Context, Error, Harness, Result};

/// Runs `job` as this process's rank (see the module's text).
pub fn run(
    job: &Job,
    harness: &Harness,
    cx: &Context<'_>,
    kinds: &[fslab_probe::ProbeRef],
    dir: &Path,
    place: &Rank,
) -> Result<()> {
    let name = job.kind().name();
    let db = cx.db;
    let cluster = place.cluster();
    let rank = cluster.rank();
    let (_, host) = fslab_model::host_facts();
    // Rank 0 checks that it can keep the results before anyone starts.
    let opened = if rank == 0 {
        Some(crate::open_store(db))
    } else {
        None
    };
    let store_ok = u64::from(!matches!(opened, Some(Err(_))));
    if cluster.sum(store_ok) != cluster.size() as u64 {
        return match opened {
            Some(Err(e)) => Err(e),
            _ => Err(Error::RankStore { name: name.into() }),
        };
    }
    // Some on rank 0 only.
    let store = opened.and_then(Result::ok);
    let (spool, hosts) = agree(cluster, db, &host);
    // Every host's clock against rank 0's, before and after the run.
    let clock_start = fslab_cluster::clock::measure(cluster, &fslab_cluster::clock::now_ns);
    let stop = crate::stop_on_signals()?;
    describe(
        &spool,
        name,
        harness,
        hosts.as_deref(),
        clock_start.as_deref(),
    );
    let gate = Gate::new(cluster);
    // Set when the gate, not a signal, stopped this rank.
    let gated = AtomicBool::new(false);
    let mut rec = RankRecorder::new(rank, &host);
    // The first rank of each host runs the probes on it, beside its ranks.
    let mut probes = host_leader(cluster, hosts.as_deref())
        .then(|| start_probes(name, harness, kinds, dir))
        .flatten();
    let result = {
        let mut hooks = Hooks::default();
        let mut drop_caches = (harness.drop_caches == DropCaches::EachPhase)
            .then(|| cache_dropper(format!("{name}: rank {rank}")));
        let stop_ref = &*stop;
        let gated_ref = &gated;
        let gate_ref = &gate;
        hooks.before_phase = Some(Box::new(move |_| {
            if let Some(drop_caches) = drop_caches.as_mut() {
                drop_caches();
            }
            if !gate_ref.before_phase() {
                // Another rank's run is over: this one stops too.
                gated_ref.store(true, Ordering::Relaxed);
                stop_ref.store(true, Ordering::Relaxed);
            }
        }));
        if harness.progress && rank == 0 {
            // Rank 0's own rate: the others' come with the merged run.
            hooks.watch = Some(Box::new(ProgressLines::default()));
        }
        hooks.monitor = probes.as_mut().map(|p| p as &mut dyn fslab_model::Monitor);
        // The ranks print nothing of their own, unless rank 0's text is
        // the workload's account of every rank (mdtest's SUMMARY).
        let mut stdout = std::io::stdout();
        let mut sink = std::io::sink();
        let out: &mut dyn std::io::Write = if rank == 0 && job.speaks_for_ranks() && !harness.json {
            &mut stdout
        } else {
            &mut sink
        };
        job.run(Start {
            argv: &harness.command_line,
            cluster,
            stop: &stop,
            out,
            rec: &mut rec,
            hooks: &mut hooks,
        })
    };
    drop(probes);
    let mut mine = ended_as(rec.run, &result);
    // Only a host's first rank has any: they are its host's.
    mine.set_probes_apart(&kinds.iter().map(|k| k.name()).collect::<Vec<_>>());
    let state = Arc::new(AtomicU8::new(OPEN));
    let rescue = hosts
        .clone()
        .zip(clock_start.clone())
        .map(|(hosts, clock_start)| Rescue {
            name: name.into(),
            harness: harness.clone(),
            db: db.to_path_buf(),
            hosts,
            clock_start,
        });
    let stopped = stop.load(Ordering::Relaxed) && !gated.load(Ordering::Relaxed);
    keep_part(&mine, &spool, stopped, rescue, &state);
    gate.finish();
    let clock_end = fslab_cluster::clock::measure(cluster, &fslab_cluster::clock::now_ns);
    let parts = cluster.gather(&mine.to_bytes());
    place.settle();
    let own_status = mine.status;
    let (Some(parts), Some(mut store)) = (parts, store) else {
        // Rank 0 speaks for the run, and its exit status is the run's. The
        // others say how they ended and exit 0: a rank exiting with an
        // error makes mpirun kill every rank, rank 0 too before it is done.
        if own_status == RunStatus::Failed {
            eprintln!(
                "fslab: {name}: rank {rank}: {}",
                mine.error.as_deref().unwrap_or("failed")
            );
        }
        return Ok(());
    };
    let mut runs = vec![mine];
    for (r, bytes) in parts.iter().enumerate().skip(1) {
        runs.push(
            RankRun::from_bytes(bytes).unwrap_or_else(|e| RankRun::failed(r, "?", e.to_string())),
        );
    }
    let clocks = fslab_cluster::Clocks {
        start: clock_start.unwrap_or_default(),
        end: clock_end.unwrap_or_default(),
    };
    let merged = fslab_cluster::merge_clocked(runs, &clocks);
    if state
        .compare_exchange(OPEN, GATHERED, Ordering::SeqCst, Ordering::SeqCst)
        .is_err()
    {
        // The rescue is reporting the run, and will end the process.
        std::thread::sleep(Duration::from_secs(60));
    }
    spool.remove();
    report_merged(name, harness, &mut store, &merged)
}

/// On rank 0 (the one with every rank's host): keeps the run's description
/// in the spool, so that whoever merges it after a signal (rank 0's rescue,
/// or `fslab rescue` after mpirun) knows the run.
fn describe(
    spool: &Spool,
    name: &str,
    harness: &Harness,
    hosts: Option<&[String]>,
    clock_start: Option<&[ClockOffset]>,
) {
    let (Some(hosts), Some(start)) = (hosts, clock_start) else {
        return;
    };
    let meta = SpoolMeta {
        workload: name.into(),
        hosts: hosts.to_vec(),
        clock_start: start.to_vec(),
        harness: harness.clone(),
    };
    if let Err(e) = spool.keep_meta(&meta) {
        eprintln!("fslab: {name}: {e}");
    }
}

/// Keeps this rank's part in the spool before the gather: a peer that dies
/// while the others wait in it would otherwise take their results along.
/// After a signal (`stopped`) a host may be gone, and the gather with it:
/// rank 0 (the one with a `rescue`) then merges the spool if the gather does
/// not end soon, unless `fslab run` does so once mpirun has ended (every
/// surviving rank has kept its part then).
fn keep_part(
    mine: &RankRun,
    spool: &Spool,
    stopped: bool,
    rescue: Option<Rescue>,
    state: &Arc<AtomicU8>,
) {
    let kept = spool.keep(mine);
    if !stopped {
        // Said only when it matters.
        return;
    }
    if let Err(e) = kept {
        eprintln!("fslab: {e}");
    }
    if let (Some(r), false) = (rescue, fslab_cluster::rescue::launcher_rescues()) {
        start_rescue(r, spool.clone(), Arc::clone(state));
    }
}

/// This rank's run, with how its workload ended.
fn ended_as(
    mut mine: RankRun,
    result: &fslab_workload::Result<Box<dyn fslab_workload::Report>>,
) -> RankRun {
    match result {
        Ok(report) => {
            mine.status = report.status();
            mine.error = report.error().map(String::from);
        }
        Err(e) => {
            mine.status = RunStatus::Failed;
            mine.error = Some(e.to_string());
        }
    }
    mine
}

/// Keeps the merged run in the store, prints it, and says how it ended.
fn report_merged(
    name: &str,
    harness: &Harness,
    store: &mut fslab_store::Store,
    merged: &fslab_cluster::MergedRun,
) -> Result<()> {
    let id = merged.record(store).map_err(|source| Error::Record {
        name: name.into(),
        source,
    })?;
    let summary = summary_text(name, merged);
    match &harness.text_to {
        Some(p) => std::fs::write(p, &summary).map_err(|source| Error::Io {
            name: name.into(),
            what: format!("its text file {}", p.display()),
            source,
        })?,
        None if !harness.json => crate::say(name, &summary)?,
        None => {}
    }
    if let (true, Some(id)) = (harness.json, id) {
        // The run's one JSON shape, as `results export` prints it (the
        // ranks' own numbers are in its params' `mpi`).
        let doc = store.run_json(id).map_err(|source| Error::ReadBack {
            name: name.into(),
            source,
        })?;
        crate::say(name, &doc)?;
    }
    if let Some(id) = id {
        crate::harness::write_output(name, harness, store, id)?;
    }
    if harness.progress {
        finished(
            id,
            merged.run.status,
            merged.run.error.as_deref(),
            &merged.run.phases,
            &[],
        );
    }
    let kept = match id {
        Some(id) => format!("run {id} in {}", store.path().display()),
        None => "nothing (no rank started its run)".into(),
    };
    ending(name, merged.run.status, merged.run.error.as_deref(), &kept)
}

/// The spool a rank stopped by a signal keeps its results in (rank 0
/// picks its name), and, on rank 0, every rank's host (for naming the
/// lost ones). A collective.
fn agree(
    cluster: &dyn fslab_cluster::Cluster,
    db: &Path,
    host: &str,
) -> (Spool, Option<Vec<String>>) {
    let token = if cluster.rank() == 0 {
        fslab_cluster::clock::now_ns() as u64 ^ u64::from(std::process::id())
    } else {
        0
    };
    let spool = Spool::new(db, cluster.sum(token));
    let hosts = cluster.gather(host.as_bytes()).map(|all| {
        all.iter()
            .map(|h| String::from_utf8_lossy(h).into_owned())
            .collect()
    });
    (spool, hosts)
}

/// Whether this rank is the first on its host, the one that runs the
/// host's probes. Rank 0 knows every rank's host (`hosts`) and tells each
/// rank; a collective.
fn host_leader(cluster: &dyn fslab_cluster::Cluster, hosts: Option<&[String]>) -> bool {
    match hosts {
        Some(hosts) => {
            let mut seen: std::collections::HashSet<&str> =
                hosts.first().map(String::as_str).into_iter().collect();
            for r in 1..cluster.size() {
                let first = hosts.get(r).is_some_and(|h| seen.insert(h.as_str()));
                cluster.send_to(r, i64::from(first));
            }
            true
        }
        None => cluster.recv_from(0) == 1,
    }
}

/// Who reports the merged run: the main thread once the gather is done,
/// or rank 0's rescue when, after a signal, it is not done in time.
const OPEN: u8 = 0;
const GATHERED: u8 = 1;
const RESCUED: u8 = 2;

/// How long rank 0, stopped by a signal, waits for the gather before it
/// merges the spool instead: within the 6 s between SIGTERM and SIGKILL
/// that `fslab_cluster::netns::mpirun_args` asks of Open MPI
/// (`odls_base_sigkill_timeout`), with room for the ranks signalled with
/// it to keep theirs. Open MPI 4.1 signals the hosts one after another, so
/// a third host's ranks may come too late (docs/scale-out.md).
const RESCUE_AFTER: Duration = Duration::from_secs(2);

/// What rank 0's rescue needs to report a run without the other ranks.
struct Rescue {
    name: String,
    harness: Harness,
    db: PathBuf,
    hosts: Vec<String>,
    clock_start: Vec<ClockOffset>,
}

/// On rank 0: waits up to [`RESCUE_AFTER`] for the gather; if it has not
/// ended, merges what the spool holds (the ranks that kept nothing, and
/// their hosts, named as lost), keeps and prints it, and ends the process.
fn start_rescue(r: Rescue, spool: Spool, state: Arc<AtomicU8>) {
    std::thread::spawn(move || {
        let t = Instant::now();
        while t.elapsed() < RESCUE_AFTER {
            if state.load(Ordering::SeqCst) == GATHERED {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if state
            .compare_exchange(OPEN, RESCUED, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return;
        }
        let ended = merge_spool(&r.name, &r.harness, &r.db, &r.hosts, r.clock_start, &spool);
        let code = match ended {
            Ok(()) => 0,
            Err(e) => {
                if !e.is_interrupted() {
                    eprintln!("fslab: {e}");
                }
                e.exit_code()
            }
        };
        std::process::exit(i32::from(code));
    });
}

/// Merges what the spool holds (the ranks that kept nothing named with
/// their hosts as lost, the run failed), keeps and reports it, and removes
/// the spool.
fn merge_spool(
    name: &str,
    harness: &Harness,
    db: &Path,
    hosts: &[String],
    clock_start: Vec<ClockOffset>,
    spool: &Spool,
) -> Result<()> {
    let rescued = spool.collect(hosts);
    let clocks = fslab_cluster::Clocks {
        start: clock_start,
        end: Vec::new(),
    };
    let lost = rescued.lost_hosts();
    let mut merged = fslab_cluster::merge_clocked(rescued.runs, &clocks);
    if let Some(lost) = lost {
        merged.run.status = RunStatus::Failed;
        merged.run.error = Some(lost);
    }
    let ended = crate::open_store(db)
        .and_then(|mut store| report_merged(name, harness, &mut store, &merged));
    spool.remove();
    ended
}

/// `fslab rescue DIR`: merges a spool that ranks stopped by a signal left
/// beside the store (`STORE.ranks-TOKEN`), as rank 0's rescue would have:
/// what `fslab run` does once mpirun has ended, when every surviving
/// rank has kept its part; by hand after a run whose rank 0 died too.
pub fn rescue(db: &Path, dir: &Path) -> Result<()> {
    let spool = Spool {
        dir: dir.to_path_buf(),
    };
    let meta = spool.meta().map_err(Error::Spool)?;
    let not = |why: String| {
        Error::Spool(fslab_cluster::rescue::RescueError::NotASpool {
            path: dir.to_path_buf(),
            why,
        })
    };
    if fslab_workload::WorkloadRef::of(&meta.workload).is_none() {
        return Err(not(format!("no workload named {:?}", meta.workload)));
    }
    merge_spool(
        &meta.workload,
        &meta.harness,
        db,
        &meta.hosts,
        meta.clock_start,
        &spool,
    )
}

/// The merged run's text: its rates and latency, and for a workload that
/// ran in loops (fs_mark) its table of all ranks.
fn summary_text(name: &str, merged: &fslab_cluster::MergedRun) -> String {
    let mut summary = merged.summary(name);
    // What the workload adds from the ranks' loop rows (fs_mark's table).
    if let Some(text) = fslab_workload::WorkloadRef::of(name).and_then(|k| {
        k.workload()
            .merged_text(merged.ranks, &merged.metrics(name))
    }) {
        summary += &text;
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_cluster::{Cluster, LocalCluster};

    #[test]
    fn the_first_rank_of_each_host_runs_its_probes() {
        let hosts: Vec<String> = ["a", "a", "b", "a", "b", "c"].map(String::from).to_vec();
        let leaders = LocalCluster::run(hosts.len(), |c| {
            let known = (c.rank() == 0).then_some(hosts.as_slice());
            host_leader(c, known)
        });
        assert_eq!(leaders, [true, false, true, false, false, true]);
    }
}
