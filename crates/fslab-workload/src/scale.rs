//! How `fslab run --scale` changes a count: the helpers the workloads'
//! [`crate::Workload::scale`] share, so every workload rounds alike.

/// `n` times `f`, rounded, at least `min`; 0 (none, as in `-r 0` or
/// `--warmup 0`) stays 0.
pub fn count(n: u64, f: f64, min: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    ((n as f64 * f).round() as u64).max(min)
}

/// [`count`] of an optional signed count: unset and negative values (which
/// validation refuses) stay as they are.
pub fn signed(v: Option<i64>, f: f64, min: u64) -> Option<i64> {
    match v {
        Some(n) if n >= 0 => Some(i64::try_from(count(n as u64, f, min)).unwrap_or(i64::MAX)),
        other => other,
    }
}

/// [`count`] of a count written as text (a positional argument): text that
/// is not a whole number stays as written, for validation to refuse.
pub fn text(v: &str, f: f64, min: u64) -> String {
    match v.parse::<u64>() {
        Ok(n) => count(n, f, min).to_string(),
        Err(_) => v.to_string(),
    }
}

/// A fake [`crate::plugin::RankPlace`] for the workloads' unit tests: rank
/// `rank` of `size`, making nothing.
#[cfg(test)]
pub(crate) struct FakeRank {
    pub rank: usize,
    pub size: usize,
}

#[cfg(test)]
impl crate::plugin::RankPlace for FakeRank {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn dir(&self, dir: &std::path::Path) -> crate::Result<std::path::PathBuf> {
        Ok(if self.size == 1 {
            dir.to_path_buf()
        } else {
            dir.join(format!("rank{:04}", self.rank))
        })
    }
    fn file(&self, path: &std::path::Path) -> crate::Result<std::path::PathBuf> {
        if self.size == 1 {
            return Ok(path.to_path_buf());
        }
        let name = path.file_name().unwrap_or_default();
        let parent = path.parent().unwrap_or(std::path::Path::new("."));
        Ok(self.dir(parent)?.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_keep_their_minimum_and_zero_stays_none() {
        assert_eq!(count(10000, 0.01, 1), 100);
        assert_eq!(count(10, 0.01, 1), 1);
        assert_eq!(count(10, 0.01, 2), 2);
        assert_eq!(count(0, 0.01, 2), 0);
        assert_eq!(count(15, 0.1, 1), 2);
        assert_eq!(signed(Some(-3), 0.5, 1), Some(-3));
        assert_eq!(signed(None, 0.5, 1), None);
        assert_eq!(signed(Some(400), 0.5, 1), Some(200));
        assert_eq!(text("20000000", 0.001, 1), "20000");
        assert_eq!(text("abc", 0.001, 1), "abc");
        assert_eq!(text("-5", 0.001, 1), "-5");
    }
}
