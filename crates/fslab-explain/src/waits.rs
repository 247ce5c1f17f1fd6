//! Wait classes: what a blocked (D) thread waits for, read from its kernel
//! stack. A class is a set of patterns; a pattern is a chain of functions
//! written caller first, matched within one stack: each function is found
//! below (inside) the one before it, and the last is the stack's innermost
//! frame, where the thread sleeps (or `*`: whatever it sleeps in below the
//! chain). Nothing is matched by a name found anywhere in a stack.
//!
//! The built-in table covers old and new kernels: seed 004's 3.10 stack
//! sleeps in `sleep_on_shadow_bh` under `do_get_write_access`; on 6.x the
//! same wait is `do_get_write_access` itself as the innermost frame (the
//! bit wait below it, `bit_wait_io`, is a scheduler function that
//! /proc/PID/stack leaves out), and sleeping locks (`down_write`,
//! `mutex_lock`) show as the function that took them (`path_openat`,
//! `filename_create`). An experiment file extends it with `[[wait_class]]`
//! entries, tried before the built-ins.

use serde::{Deserialize, Serialize};

/// The classes fslab names, in the order the built-in patterns are tried:
/// reclaim first (a reclaiming thread waits on writeback or the journal
/// because memory ran out), the device queue last (every wait ends at the
/// device).
pub const CLASSES: [&str; 6] = [
    "memory reclaim",
    "journal",
    "directory-block read",
    "page writeback",
    "lock",
    "device queue",
];

/// The built-in patterns: (class, chain written caller first).
const BUILTIN: &[(&str, &[&str])] = &[
    // Memory reclaim: direct reclaim, the cgroup's limit, throttling.
    ("memory reclaim", &["try_to_free_mem_cgroup_pages", "*"]),
    ("memory reclaim", &["try_to_free_pages", "*"]),
    ("memory reclaim", &["mem_cgroup_handle_over_high", "*"]),
    ("memory reclaim", &["shrink_node", "*"]),
    ("memory reclaim", &["throttle_direct_reclaim", "*"]),
    ("memory reclaim", &["reclaim_throttle"]),
    ("memory reclaim", &["__alloc_pages_slowpath", "*"]),
    // The journal: a buffer being committed (3.x: sleep_on_shadow_bh; 6.x:
    // the bit wait is hidden), a commit waited for (fsync), a handle that
    // waits for a locked transaction or for log space (checkpoint), the
    // commit thread itself; XFS's log and btrfs's transaction.
    ("journal", &["do_get_write_access", "sleep_on_shadow_bh"]),
    ("journal", &["do_get_write_access"]),
    ("journal", &["jbd2_log_wait_commit"]),
    ("journal", &["wait_transaction_locked"]),
    ("journal", &["start_this_handle", "*"]),
    ("journal", &["jbd2_journal_commit_transaction", "*"]),
    ("journal", &["xlog_wait_on_iclog"]),
    ("journal", &["xlog_grant_head_wait"]),
    ("journal", &["xfs_log_force_seq", "*"]),
    ("journal", &["xfs_log_force", "*"]),
    ("journal", &["wait_current_trans"]),
    ("journal", &["btrfs_commit_transaction", "*"]),
    // Reading a directory's blocks to look a name up or insert one
    // (seed 004's lookup under ldiskfs_dx_find_entry).
    ("directory-block read", &["__ldiskfs_read_dirblock", "*"]),
    ("directory-block read", &["ldiskfs_dx_find_entry", "*"]),
    ("directory-block read", &["__ext4_read_dirblock", "*"]),
    ("directory-block read", &["ext4_dx_find_entry", "*"]),
    ("directory-block read", &["dx_probe", "*"]),
    ("directory-block read", &["xfs_da_read_buf", "*"]),
    ("directory-block read", &["xfs_dir3_data_read", "*"]),
    ("directory-block read", &["btrfs_lookup_dir_item", "*"]),
    // Waiting for pages to be written back: fsync, and writers throttled
    // for dirtying too fast.
    ("page writeback", &["folio_wait_writeback", "*"]),
    ("page writeback", &["wait_on_page_writeback", "*"]),
    ("page writeback", &["__filemap_fdatawait_range", "*"]),
    ("page writeback", &["filemap_fdatawait_range", "*"]),
    ("page writeback", &["balance_dirty_pages"]),
    (
        "page writeback",
        &["balance_dirty_pages_ratelimited_flags", "*"],
    ),
    // Sleeping locks: the lock calls are scheduler functions on 6.x, so
    // the innermost frame is the caller that took the lock.
    ("lock", &["rwsem_down_write_slowpath"]),
    ("lock", &["rwsem_down_read_slowpath"]),
    ("lock", &["__mutex_lock"]),
    ("lock", &["__mutex_lock_slowpath"]),
    ("lock", &["mutex_lock"]),
    ("lock", &["path_openat"]),
    ("lock", &["open_last_lookups"]),
    ("lock", &["filename_create"]),
    ("lock", &["do_unlinkat"]),
    ("lock", &["do_rmdir"]),
    ("lock", &["lock_rename"]),
    ("lock", &["lookup_slow"]),
    ("lock", &["iterate_dir"]),
    ("lock", &["xfs_ilock"]),
    ("lock", &["xfs_buf_lock"]),
    ("lock", &["btrfs_tree_lock"]),
    ("lock", &["btrfs_tree_read_lock"]),
    ("lock", &["__btrfs_tree_lock"]),
    ("lock", &["__btrfs_tree_read_lock"]),
    // Waiting for the device: a full queue, a synchronous bio or flush,
    // a buffer or page being read.
    ("device queue", &["blk_mq_get_tag"]),
    ("device queue", &["rq_qos_wait"]),
    ("device queue", &["submit_bio_wait"]),
    ("device queue", &["blkdev_issue_flush", "*"]),
    ("device queue", &["__wait_on_buffer"]),
    ("device queue", &["__wait_on_buffer", "sleep_on_buffer"]),
    ("device queue", &["__iomap_dio_rw"]),
    ("device queue", &["dio_await_completion"]),
    ("device queue", &["__blkdev_direct_IO_simple"]),
    ("device queue", &["folio_wait_bit"]),
    ("device queue", &["folio_wait_bit_common"]),
    ("device queue", &["io_schedule"]),
];

/// One `[[wait_class]]` entry of an experiment file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitClassEntry {
    /// One of [`CLASSES`].
    pub class: String,
    /// Functions, caller first; the last is the innermost frame (or `*`).
    pub stack: Vec<String>,
}

/// The `[[wait_class]]` entries of an experiment file's text (a stored
/// experiment's, to class its runs' stacks as it did); none when the text
/// has none or no longer parses.
pub fn entries_of_text(text: &str) -> Vec<WaitClassEntry> {
    #[derive(Deserialize)]
    struct Only {
        #[serde(default)]
        wait_class: Vec<WaitClassEntry>,
    }
    toml::from_str::<Only>(text)
        .map(|o| o.wait_class)
        .unwrap_or_default()
}

/// Why a `[[wait_class]]` entry is refused (one line, naming it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WaitClassError {
    #[error("[[wait_class]] {index}: unknown class {class:?} (classes: {})", CLASSES.join(", "))]
    UnknownClass { index: usize, class: String },
    #[error("[[wait_class]] {index} ({class}): stack names no function")]
    Empty { index: usize, class: String },
    #[error("[[wait_class]] {index} ({class}): {name:?} is not a kernel function name (letters, digits, '_' and '.'; '*' only last)")]
    BadName {
        index: usize,
        class: String,
        name: String,
    },
}

/// One pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    class: &'static str,
    chain: Vec<String>,
}

/// The classes' patterns, in the order they are tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitTable {
    patterns: Vec<Pattern>,
}

/// A stack's class and the function that decided it (the chain's last
/// named function).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub class: &'static str,
    pub function: String,
}

fn valid_name(name: &str, last: bool) -> bool {
    (name == "*" && last)
        || (!name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
}

impl WaitTable {
    /// The built-in table.
    pub fn builtin() -> WaitTable {
        WaitTable {
            patterns: BUILTIN
                .iter()
                .map(|(class, chain)| Pattern {
                    class,
                    chain: chain.iter().map(|f| f.to_string()).collect(),
                })
                .collect(),
        }
    }

    /// The built-in table with an experiment's entries tried first; the
    /// first bad entry refused.
    pub fn with(entries: &[WaitClassEntry]) -> Result<WaitTable, WaitClassError> {
        let mut patterns = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let index = i + 1;
            let class = CLASSES
                .iter()
                .copied()
                .find(|c| *c == e.class)
                .ok_or_else(|| WaitClassError::UnknownClass {
                    index,
                    class: e.class.clone(),
                })?;
            if e.stack.iter().all(|f| f == "*") {
                return Err(WaitClassError::Empty {
                    index,
                    class: e.class.clone(),
                });
            }
            let n = e.stack.len();
            if let Some(bad) = e
                .stack
                .iter()
                .enumerate()
                .find(|(j, f)| !valid_name(f, *j + 1 == n))
            {
                return Err(WaitClassError::BadName {
                    index,
                    class: e.class.clone(),
                    name: bad.1.clone(),
                });
            }
            patterns.push(Pattern {
                class,
                chain: e.stack.clone(),
            });
        }
        patterns.extend(WaitTable::builtin().patterns);
        Ok(WaitTable { patterns })
    }

    /// The class of a stack (frames innermost first, offsets stripped),
    /// by the first pattern that matches it; None when none does.
    pub fn classify(&self, frames: &[String]) -> Option<Matched> {
        self.patterns.iter().find_map(|p| {
            matches(&p.chain, frames).then(|| Matched {
                class: p.class,
                function: p
                    .chain
                    .iter()
                    .rev()
                    .find(|f| *f != "*")
                    .cloned()
                    .unwrap_or_default(),
            })
        })
    }
}

impl WaitTable {
    /// The share (%) of a phase's blocked workload samples in wait class
    /// `class` (of all blocked samples, kept stacks or not); None when
    /// the workload never blocked.
    pub fn share(&self, st: &fslab_probe::notes::StacksTop, class: &str) -> Option<f64> {
        let mine: Vec<_> = st
            .stacks
            .iter()
            .filter(|s| s.thread == "workload")
            .collect();
        let kept: u64 = mine.iter().map(|s| s.samples).sum();
        let total = st.workload_blocked.max(kept);
        let hit: u64 = mine
            .iter()
            .filter(|s| self.classify(&s.frames).is_some_and(|m| m.class == class))
            .map(|s| s.samples)
            .sum();
        (total > 0).then(|| hit as f64 * 100.0 / total as f64)
    }
}

/// Whether `chain` (caller first) matches `frames` (innermost first): its
/// last function is the innermost frame (`*`: any), and each function
/// before it is found further out than the one after it.
fn matches(chain: &[String], frames: &[String]) -> bool {
    let Some((last, callers)) = chain.split_last() else {
        return false;
    };
    if frames.is_empty() {
        return false;
    }
    let mut at = if last == "*" {
        None
    } else if frames[0] == *last {
        Some(0)
    } else {
        return false;
    };
    // Walk outwards: each caller must sit above the callee found last.
    for f in callers.iter().rev() {
        let from = at.map_or(0, |i| i + 1);
        match frames[from..].iter().position(|x| x == f) {
            Some(p) => at = Some(from + p),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
