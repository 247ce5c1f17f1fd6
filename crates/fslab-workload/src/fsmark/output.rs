//! fs_mark 3.3's text output: the `#` header, the column header and one row
//! per loop, with fs_mark's printf widths, so scripts that read fs_mark
//! output read fslab's.

use std::fmt::Write as _;

use fslab_model::{LoopRow, PhaseResult};

use super::create::CALLS;
use super::options::{DirPolicy, FsMarkOptions};

/// The header as fs_mark prints it; `to_log` gives the log file's variant
/// (fs_mark writes one more `#` before the column header there).
pub fn header(argv: &[String], opts: &FsMarkOptions, start_ctime: &str, to_log: bool) -> String {
    let mut s = String::from("\n# ");
    for a in argv {
        let _ = write!(s, " {a} ");
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "#\tVersion 3.3, {} thread(s) starting at {start_ctime}",
        opts.threads
    );
    let _ = writeln!(s, "#\tSync method: {}", opts.sync.description());
    match opts.dir_policy {
        DirPolicy::NoSubdirs => s.push_str("#\tDirectories:  no subdirectories used\n"),
        DirPolicy::RoundRobin {
            subdirs,
            per_subdir,
        } => {
            let _ = writeln!(
                s,
                "#\tDirectories:  Round Robin between directories across {subdirs} subdirectories with {per_subdir} files per subdirectory."
            );
        }
        DirPolicy::TimeHash { subdirs, secs } => {
            let _ = writeln!(
                s,
                "#\tDirectories:  Time based hash between directories across {subdirs} subdirectories with {secs} seconds per subdirectory."
            );
        }
    }
    let _ = writeln!(s, "#\tFile names: {}", name_sentence(opts));
    let _ = writeln!(
        s,
        "#\tFiles info: size {} bytes, written with an IO size of {} bytes per write",
        opts.file_size, opts.io_size
    );
    s.push_str(
        "#\tApp overhead is time in microseconds spent in the test not doing file writing related system calls.\n",
    );
    if to_log {
        s.push('#');
    }
    if opts.verbose {
        s.push_str("#\tAll system call times are reported in microseconds.\n\n");
        s.push_str(columns().trim_end_matches('\n'));
        for c in CALLS {
            let _ = write!(s, " {:>26}", format!("{} (Min/Avg/Max)", c.to_uppercase()));
        }
        s.push('\n');
    } else {
        s.push('\n');
        s.push_str(&columns());
    }
    s
}

/// fs_mark's words for its loop rows' numbers, as column heads and as
/// the metrics' names.
pub const FILES_PER_SEC: &str = fslab_model::loop_metrics::FILES_PER_SEC;
pub const APP_OVERHEAD: &str = fslab_model::loop_metrics::APP_OVERHEAD;

/// fs_mark's column line (without `-v`'s per-call columns).
pub fn columns() -> String {
    format!(
        "{:>6} {:>12} {:>12} {:>12} {:>16}\n",
        "FSUse%", "Count", "Size", FILES_PER_SEC, APP_OVERHEAD
    )
}

/// fs_mark says "16 initial bytes of time stamp" where only 8 are the time
/// stamp and the rest is `~` padding; fslab says what the name holds.
fn name_sentence(opts: &FsMarkOptions) -> String {
    let seq = opts.name_len - opts.rand_len;
    let hex_digits = format!("{:x}", chrono::Utc::now().timestamp().max(0)).len() as u32;
    let stamp = if seq == 0 {
        "no time stamp".to_string()
    } else if seq <= hex_digits {
        format!("{seq} initial bytes: the last {seq} hex digits of the time stamp")
    } else {
        format!(
            "{seq} initial bytes: the time stamp in {hex_digits} hex digits padded with {} '~'",
            seq - hex_digits
        )
    };
    format!(
        "{} bytes long, ({stamp}, then {} random bytes at end of name)",
        opts.name_len, opts.rand_len
    )
}

/// One loop row: `%6u %12u %12u %12.1f %16llu`, plus 18 `%8llu` with `-v`.
pub fn row(r: &LoopRow, verbose: bool) -> String {
    let mut s = format!(
        "{:>6} {:>12} {:>12} {:>12.1} {:>16}",
        r.fs_use_pct, r.count, r.file_size, r.files_per_sec, r.app_overhead_us
    );
    if verbose {
        for name in CALLS {
            let c = r
                .calls
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, c)| *c)
                .unwrap_or_default();
            let _ = write!(s, " {:>8} {:>8} {:>8}", c.min_us, c.avg_us, c.max_us);
        }
    }
    s.push('\n');
    s
}

/// The phase summary fslab adds after the table when phases other than
/// create ran; `#` lines, so readers of fs_mark rows skip them.
pub fn phase_summary(phases: &[PhaseResult]) -> String {
    let mut s = String::from("#\n");
    let _ = writeln!(
        s,
        "#\t{:<8} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "Phase", "Files", "Time (s)", FILES_PER_SEC, "Usr CPU (s)", "Sys CPU (s)"
    );
    for p in phases {
        let _ = writeln!(
            s,
            "#\t{:<8} {:>12} {:>12.3} {:>12.1} {:>12.3} {:>12.3}{}",
            p.phase,
            p.ops,
            p.elapsed_s,
            p.ops_per_s,
            p.usr_cpu_s,
            p.sys_cpu_s,
            if p.complete { "" } else { "  (cut short)" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use fslab_model::CallStats;

    #[test]
    fn row_widths_match_seed_000() {
        let r = LoopRow {
            fs_use_pct: 0,
            count: 800000,
            file_size: 0,
            files_per_sec: 53498.9,
            app_overhead_us: 7898900,
            ..Default::default()
        };
        assert_eq!(
            row(&r, false),
            "     0       800000            0      53498.9          7898900\n"
        );
    }

    #[test]
    fn phase_summary_is_comment_lines() {
        let p = PhaseResult {
            phase: "stat".into(),
            ops: 10,
            elapsed_s: 0.5,
            ops_per_s: 20.0,
            complete: true,
            ..Default::default()
        };
        let s = phase_summary(&[p]);
        assert!(s.lines().all(|l| l.starts_with('#')));
        assert!(
            s.contains("#\tstat               10        0.500         20.0"),
            "{s}"
        );
    }

    #[test]
    fn verbose_row_has_eighteen_call_columns() {
        let r = LoopRow {
            calls: CALLS
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        CallStats {
                            min_us: 1,
                            avg_us: 2,
                            max_us: 3,
                        },
                    )
                })
                .collect(),
            ..Default::default()
        };
        let line = row(&r, true);
        assert_eq!(line.split_whitespace().count(), 5 + 18);
        assert!(line.ends_with("       1        2        3\n"));
    }
}
