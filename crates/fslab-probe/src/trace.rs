//! What the trace reader makes of tracefs lines: per-device block IO
//! accounting, the completions spooled (compressed, to an unnamed file) for
//! `fslab trace show`, jbd2 commits and writeback starts. Memory stays
//! bounded whatever the number of events: completions go to the spool as
//! they come, and only its compressor's window is held.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use fslab_model::Blob;

use crate::blockio::{self, DevTracker};
use crate::devices::Targets;
use crate::journal;
use crate::needs::{Filter, Needs};
use crate::tracefs;
use crate::ProbeError;

/// Completions kept for `fslab trace show`, at most (about 9 bytes each
/// once compressed).
pub const KEEP_EVENTS: u64 = 20_000_000;

/// Completions, encoded and compressed, in an unnamed file.
pub struct Spool {
    enc: flate2::write::DeflateEncoder<std::io::BufWriter<std::fs::File>>,
    record: Vec<u8>,
    error: Option<String>,
}

impl Spool {
    /// A spool in directory `dir` (its file has no name: nothing to clean up).
    pub fn new(dir: &Path) -> Result<Spool, ProbeError> {
        let f = tempfile::tempfile_in(dir)
            .map_err(|e| ProbeError::Spool(format!("cannot make one in {}: {e}", dir.display())))?;
        Ok(Spool {
            enc: flate2::write::DeflateEncoder::new(
                std::io::BufWriter::with_capacity(1 << 20, f),
                flate2::Compression::fast(),
            ),
            record: Vec::with_capacity(blockio::RECORD),
            error: None,
        })
    }

    pub fn push(&mut self, c: &blockio::Completion) {
        if self.error.is_some() {
            return;
        }
        self.record.clear();
        blockio::encode(c, &mut self.record);
        if let Err(e) = self.enc.write_all(&self.record) {
            self.error = Some(e.to_string());
        }
    }

    /// The compressed completions, as a note's blob.
    pub fn finish(self) -> Result<Blob, ProbeError> {
        if let Some(e) = self.error {
            return Err(ProbeError::Spool(e));
        }
        let spool = |e: &dyn std::fmt::Display| ProbeError::Spool(e.to_string());
        let w = self.enc.finish().map_err(|e| spool(&e))?;
        let mut f = w.into_inner().map_err(|e| spool(e.error()))?;
        f.flush().map_err(|e| spool(&e))?;
        let len = f.metadata().map_err(|e| spool(&e))?.len();
        Ok(Blob::Spooled {
            file: Arc::new(Mutex::new(f)),
            len,
        })
    }
}

/// What the trace reader gathered.
#[derive(Default)]
pub struct TraceState {
    pub devs: HashMap<u32, DevTracker>,
    pub spool: Option<Spool>,
    pub kept: u64,
    pub not_kept: u64,
    /// (time, fields) of jbd2 commits since the last second.
    pub commits: Vec<(u64, Vec<(&'static str, f64)>)>,
    /// Raw jbd2 lines of the phase, as seed 004 quotes them.
    pub commit_lines: Vec<String>,
    pub wb_second: BTreeMap<String, u64>,
    pub wb_phase: BTreeMap<String, u64>,
}

impl TraceState {
    /// Keeps completions in `spool` (None: counts them only).
    pub fn new(spool: Option<Spool>) -> TraceState {
        TraceState {
            spool,
            ..Default::default()
        }
    }

    /// Takes one line of trace_pipe.
    pub fn line(&mut self, line: &str) {
        let Some((ev, cpu, pid, t, body)) = blockio::split_line(line) else {
            return;
        };
        match ev {
            "block_rq_issue" => {
                if let Some((dev, sector)) = blockio::parse_issue(body) {
                    self.devs.entry(dev).or_default().issue(sector, t);
                }
            }
            "block_rq_complete" => {
                if let Some(mut c) = blockio::parse_complete(body, t, cpu, pid) {
                    self.devs.entry(c.dev).or_default().complete(&mut c);
                    match self.spool.as_mut() {
                        Some(s) if self.kept < KEEP_EVENTS => {
                            s.push(&c);
                            self.kept += 1;
                        }
                        _ => self.not_kept += 1,
                    }
                }
            }
            "jbd2_run_stats" => {
                if let Some(f) = journal::parse_jbd2(body) {
                    self.commits.push((t, f));
                    if self.commit_lines.len() < 10_000 {
                        self.commit_lines
                            .push(format!("{:.6}: jbd2_run_stats: {body}", t as f64 / 1e9));
                    }
                }
            }
            "writeback_start" => {
                if let Some(r) = body
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("reason="))
                {
                    *self.wb_second.entry(r.to_string()).or_insert(0) += 1;
                    *self.wb_phase.entry(r.to_string()).or_insert(0) += 1;
                }
            }
            _ => {}
        }
    }
}

/// A private tracefs instance and the thread reading its pipe into a
/// [`TraceState`].
pub struct Tracer {
    pub instance: tracefs::Instance,
    pub state: Arc<Mutex<TraceState>>,
    stop: Arc<AtomicBool>,
    sync: Arc<Sync>,
    reader: Option<std::thread::JoinHandle<()>>,
}

/// How the sampler waits for the reader to catch up: (asked, done) rounds.
#[derive(Default)]
struct Sync {
    rounds: Mutex<(u64, u64)>,
    caught_up: std::sync::Condvar,
}

/// Traces the events probes with `needs` read on the targets' devices,
/// completions spooled in `scratch` when one of them keeps them.
pub fn start_tracer(needs: &[Needs], t: &Targets, scratch: &Path) -> Result<Tracer, ProbeError> {
    let dev = t.device.as_ref().ok_or(ProbeError::NoDevice)?;
    let name = format!("fslab-{}-{}", std::process::id(), dev.name);
    let inst = tracefs::Instance::create(&name, scratch, 4096)?;
    let mut devs = vec![dev.trace_dev()];
    if let Some(h) = &t.host {
        devs.push(h.trace_dev());
    }
    let with_host = devs
        .iter()
        .map(|d| format!("dev == {d}"))
        .collect::<Vec<_>>()
        .join(" || ");
    for e in needs.iter().flat_map(|n| n.trace) {
        if !e.applies_to(&t.fs_type) || (e.optional && !inst.has_event(e.event)) {
            continue;
        }
        let filter = match e.filter {
            Filter::DeviceAndHost => with_host.clone(),
            Filter::Device => format!("dev == {}", dev.trace_dev()),
            Filter::DeviceName => format!("name == \"{}:{}\"", dev.major, dev.minor),
        };
        inst.enable(e.event, Some(&filter))?;
    }
    let spool = if needs.iter().any(|n| n.spool) {
        Some(Spool::new(scratch)?)
    } else {
        None
    };
    let state = Arc::new(Mutex::new(TraceState::new(spool)));
    let stop = Arc::new(AtomicBool::new(false));
    let pipe = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(inst.pipe_path())
        .map_err(|e| {
            ProbeError::Tracefs(format!("cannot open {}: {e}", inst.pipe_path().display()))
        })?;
    inst.set_on(true)?;
    let sync = Arc::new(Sync::default());
    let (st, sp, sy) = (Arc::clone(&state), Arc::clone(&stop), Arc::clone(&sync));
    let reader = std::thread::Builder::new()
        .name(crate::stacks::PROBE_THREADS[1].into())
        .spawn(move || read_pipe(pipe, st, sp, sy))
        .map_err(|e| ProbeError::Tracefs(format!("cannot start the trace reader: {e}")))?;
    Ok(Tracer {
        instance: inst,
        state,
        stop,
        sync,
        reader: Some(reader),
    })
}

fn read_pipe(
    mut pipe: std::fs::File,
    state: Arc<Mutex<TraceState>>,
    stop: Arc<AtomicBool>,
    sync: Arc<Sync>,
) {
    let mut buf = vec![0u8; 1 << 20];
    let mut carry = String::new();
    loop {
        // Once told to stop (tracing is already off), drain what is left without waiting.
        let stopping = stop.load(Ordering::Relaxed);
        if !stopping {
            let mut fds = [rustix::event::PollFd::new(
                &pipe,
                rustix::event::PollFlags::IN,
            )];
            let _ = rustix::event::poll(
                &mut fds,
                Some(&rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: 50_000_000,
                }),
            );
        }
        match pipe.read(&mut buf) {
            Ok(n) if n > 0 => {
                carry.push_str(&String::from_utf8_lossy(&buf[..n]));
                let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
                let last_nl = carry.rfind('\n').map(|i| i + 1).unwrap_or(0);
                for line in carry[..last_nl].lines() {
                    st.line(line);
                }
                carry.drain(..last_nl);
            }
            _ if stopping => return,
            // The pipe is empty: whoever waits for what was traced so far has it.
            _ => {
                let mut r = sync.rounds.lock().unwrap_or_else(|e| e.into_inner());
                if r.1 < r.0 {
                    r.1 = r.0;
                    sync.caught_up.notify_all();
                }
            }
        }
    }
}

impl Tracer {
    /// Waits (at most `limit`) until the reader has read everything traced
    /// until now: a phase's summary then holds its last IOs.
    pub fn catch_up(&self, limit: std::time::Duration) {
        let mut r = self.sync.rounds.lock().unwrap_or_else(|e| e.into_inner());
        r.0 += 1;
        let want = r.0;
        let _ = self
            .sync
            .caught_up
            .wait_timeout_while(r, limit, |r| r.1 < want);
    }

    /// Switches tracing off and reads what is left: the state is complete after this.
    pub fn stop(&mut self) {
        let _ = self.instance.set_on(false);
        self.stop.store(true, Ordering::Relaxed);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.stop();
        // Dropping the instance switches tracing off and removes it.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(t_us: u64, sector: u64) -> String {
        format!(
            "  kworker/0:1-42 [001] ..... {}.{:06}: block_rq_complete: 7,3 WS () {sector} + 8 [0]",
            t_us / 1_000_000,
            t_us % 1_000_000
        )
    }

    #[test]
    fn completions_go_to_the_spool_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut st = TraceState::new(Some(Spool::new(dir.path()).unwrap()));
        for i in 0..10_000u64 {
            st.line(&complete(1_000_000 + i, 8 * i));
        }
        st.line("not a trace line");
        assert_eq!((st.kept, st.not_kept), (10_000, 0));
        let blob = st.spool.take().unwrap().finish().unwrap();
        assert!(matches!(blob, Blob::Spooled { .. }));
        // Compressed well below the raw 44 bytes a completion.
        assert!(blob.len() < 10_000 * 44 / 4, "{}", blob.len());
        let raw = blockio::decompress(&blob.to_vec().unwrap()).unwrap();
        let back = blockio::decode(&raw);
        assert_eq!(back.len(), 10_000);
        assert_eq!(back[9_999].sector, 8 * 9_999);
        assert_eq!(back[0].t_ns, 1_000_000_000);
        // The spool's file has no name in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn without_a_spool_completions_are_counted_not_kept() {
        let mut st = TraceState::new(None);
        st.line(&complete(5, 0));
        assert_eq!((st.kept, st.not_kept), (0, 1));
        assert_eq!(st.devs.len(), 1);
    }
}
