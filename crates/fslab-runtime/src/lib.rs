//! What runs around a workload in its process. `fslab WORKLOAD ...` and
//! the child `fslab run` starts (`fslab job JSON`) both hand a
//! [`ChildSpec`] (the job and its [`Harness`]) to [`run`], which does the
//! rest:
//!
//! - what the harness asks: die with the parent, join a memory cgroup,
//!   drop the caches, progress lines and phase acknowledgements
//!   ([`harness`]);
//! - SIGINT and SIGTERM, the results store, the probes, the count on a
//!   terminal, the JSON report, the closing words and the exit status
//!   ([`single`], [`Error::exit_code`]);
//! - under MPI, each rank's place ([`rank`], the job's `on_rank`), the
//!   gate before each phase and rank 0's merge of every rank's results
//!   ([`ranks`]).

pub mod error;
pub mod harness;
pub mod rank;
pub mod ranks;
pub mod single;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub use error::{Error, Result};
pub use fslab_model::protocol::Harness;
use fslab_workload::plugin::RankPlace;
use fslab_workload::{ChildSpec, Job};

/// What a workload's process is given besides its job and harness.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The results store.
    pub db: &'a Path,
    /// `--quiet`: no remarks on stderr.
    pub quiet: bool,
}

/// Runs the spec's job on the MPI ranks this process was started with (one process
/// when no MPI launcher started it), or prints what it prints instead
/// ([`fslab_workload::plugin::AnyJob::instead`]): each rank's paths placed
/// ([`fslab_workload::plugin::AnyJob::on_rank`]), the options validated, the run
/// with everything around it. A rank that fails before the ranks have
/// settled their results ends them all, since the others would wait for
/// it forever. MPI ends when the cluster is dropped.
pub fn run(spec: ChildSpec, cx: &Context<'_>) -> Result<()> {
    let ChildSpec { mut job, harness } = spec;
    // What the command prints instead of running (dbench --print-loadfile).
    if let Some(text) = job.instead() {
        return say(job.kind().name(), &text);
    }
    // The per-call timer's calibration (2 ms) overlaps the start-up.
    std::thread::spawn(fslab_workload::measure::start_timebase);
    let name = job.kind().name();
    let cluster = fslab_cluster::join().map_err(|source| Error::Cluster {
        name: name.into(),
        source,
    })?;
    let place = rank::Rank::new(&*cluster);
    let r = placed(&mut job, &harness, cx, &place);
    if cluster.size() > 1 && !place.settled() {
        if let Err(e) = &r {
            // One write(2) of the whole line: every rank says it at once,
            // and pieces of two ranks' lines interleaved on mpirun's stderr.
            let line = format!(
                "fslab: {e} (rank {} of {}: ending every rank)\n",
                cluster.rank(),
                cluster.size()
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
            // Open MPI forwards a rank's stderr through its daemon, which
            // drops what it has not read yet when the abort kills the job
            // (the message was lost in 2 of 5 runs on a loaded machine).
            std::thread::sleep(std::time::Duration::from_millis(250));
            cluster.abort(i32::from(e.exit_code()));
        }
    }
    r
}

/// [`run`] on one rank.
fn placed(job: &mut Job, harness: &Harness, cx: &Context<'_>, place: &rank::Rank) -> Result<()> {
    let name = job.kind().name();
    let workload = |source| Error::Workload {
        name: name.into(),
        source,
    };
    let kinds = single::prepare(name, harness)?;
    job.on_rank(place as &dyn RankPlace).map_err(workload)?;
    // The options are validated by the run itself, first thing (once: a
    // second check here would add its calls, a stat of the directory, to
    // the workload's own); nothing is made for it here, since what a
    // workload finds already made changes its calls (mdtest removes only
    // the directory it made).
    let dir = job.workdir();
    single::run(job, harness, cx, &kinds, &dir, place)
}

/// Writes `text` on stdout, all of it: an error when it cannot (a reader
/// that went away is [`fslab_model::ErrorKind::Closed`]).
pub fn say(name: &str, text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| Error::Output {
            name: name.into(),
            source,
        })
}

/// A flag set by SIGINT or SIGTERM; a second signal exits at once (130).
pub fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
            .map_err(Error::Signals)?;
    }
    Ok(stop)
}

/// Opens the results store to write.
pub fn open_store(db: &Path) -> Result<fslab_store::Store> {
    fslab_store::Store::open(db).map_err(Error::Store)
}
