//! Slurm's side of a cluster: the hosts of the job fslab runs in, from
//! `SLURM_JOB_NODELIST`, which Slurm gives compressed (`node[01-04,07],
//! gpu[1-2]-ib`). `scontrol show hostnames` expands it where Slurm's
//! tools are installed; [`expand`] does the same without them (and is
//! what the tests check against Slurm's rules).

use std::process::Command;

/// The variable Slurm sets in a job to its hosts.
pub const NODELIST: &str = "SLURM_JOB_NODELIST";

/// Why a Slurm host list gives no hosts, naming the list as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlurmError {
    #[error("{list:?}: [{inner}] is not a list of numbers and ranges")]
    NotNumbers { list: String, inner: String },
    #[error("{list:?}: range {range} runs backwards or is too long")]
    BadRange { list: String, range: String },
    #[error("{0:?}: a ']' without its '['")]
    NotOpened(String),
    #[error("{0:?}: a '[' without its ']'")]
    NotClosed(String),
    #[error("{0:?} names no host")]
    NoHost(String),
    /// Not in a Slurm job.
    #[error("{NODELIST} is not set: run fslab inside a Slurm job (sbatch or salloc)")]
    NotInJob,
    /// The job's host list does not expand.
    #[error("{NODELIST}={0}")]
    NodeList(#[source] Box<SlurmError>),
}

/// One bracket's numbers: each range's numbers, zero-padded to the width
/// its first number was written with (`01-04`: `01` .. `04`).
fn bracket(inner: &str, list: &str) -> Result<Vec<String>, SlurmError> {
    let mut out = Vec::new();
    for part in inner.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let bad = || SlurmError::NotNumbers {
            list: list.to_string(),
            inner: inner.to_string(),
        };
        if a.is_empty()
            || !a.bytes().all(|c| c.is_ascii_digit())
            || !b.bytes().all(|c| c.is_ascii_digit())
        {
            return Err(bad());
        }
        let (lo, hi): (u64, u64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if hi < lo || hi - lo > 100_000 {
            return Err(SlurmError::BadRange {
                list: list.to_string(),
                range: part.to_string(),
            });
        }
        let width = a.len();
        out.extend((lo..=hi).map(|n| format!("{n:0width$}")));
    }
    Ok(out)
}

/// One host expression: text and bracket groups, every combination
/// (`rack[1-2]-n[1-2]`: rack1-n1, rack1-n2, rack2-n1, rack2-n2).
fn one(expr: &str, list: &str) -> Result<Vec<String>, SlurmError> {
    let mut names = vec![String::new()];
    let mut rest = expr;
    while !rest.is_empty() {
        match rest.find('[') {
            None => {
                if rest.contains(']') {
                    return Err(SlurmError::NotOpened(list.to_string()));
                }
                names.iter_mut().for_each(|n| n.push_str(rest));
                break;
            }
            Some(i) => {
                let text = &rest[..i];
                if text.contains(']') {
                    return Err(SlurmError::NotOpened(list.to_string()));
                }
                let close = rest[i..]
                    .find(']')
                    .map(|j| i + j)
                    .ok_or_else(|| SlurmError::NotClosed(list.to_string()))?;
                let nums = bracket(&rest[i + 1..close], list)?;
                names = names
                    .iter()
                    .flat_map(|n| nums.iter().map(move |x| format!("{n}{text}{x}")))
                    .collect();
                rest = &rest[close + 1..];
            }
        }
    }
    Ok(names)
}

/// A Slurm host list expanded, in its order: top-level commas separate
/// hosts, commas within brackets separate numbers and ranges.
pub fn expand(list: &str) -> Result<Vec<String>, SlurmError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = list.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(b',');
        match c {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                let expr = list[start..i].trim();
                if !expr.is_empty() {
                    out.extend(one(expr, list)?);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(SlurmError::NoHost(list.to_string()));
    }
    Ok(out)
}

/// The hosts of the Slurm job this process runs in: `scontrol show
/// hostnames` of `SLURM_JOB_NODELIST` where Slurm's tools are on PATH,
/// else [`expand`]; an error when the variable is not set (not in a job)
/// or does not expand.
pub fn job_hosts() -> Result<Vec<String>, SlurmError> {
    let list = std::env::var(NODELIST).map_err(|_| SlurmError::NotInJob)?;
    if let Ok(o) = Command::new("scontrol")
        .args(["show", "hostnames", &list])
        .output()
    {
        if o.status.success() {
            let hosts: Vec<String> = String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(String::from)
                .collect();
            if !hosts.is_empty() {
                return Ok(hosts);
            }
        }
    }
    expand(&list).map_err(|e| SlurmError::NodeList(Box::new(e)))
}

/// The ranks on each host the job asks for (`SLURM_NTASKS_PER_NODE`, when
/// it is one number).
pub fn tasks_per_node() -> Option<u32> {
    std::env::var("SLURM_NTASKS_PER_NODE")
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n >= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurms_compressed_host_lists_expand_as_scontrol_expands_them() {
        assert_eq!(expand("node1").unwrap(), ["node1"]);
        assert_eq!(
            expand("node[01-03,07],login").unwrap(),
            ["node01", "node02", "node03", "node07", "login"]
        );
        assert_eq!(
            expand("gpu[8-10]-ib").unwrap(),
            ["gpu8-ib", "gpu9-ib", "gpu10-ib"]
        );
        assert_eq!(
            expand("r[1-2]n[1,3]").unwrap(),
            ["r1n1", "r1n3", "r2n1", "r2n3"]
        );
        assert_eq!(
            expand("a,b[009-011]").unwrap(),
            ["a", "b009", "b010", "b011"]
        );
        assert_eq!(expand("10.0.0.[1-2]").unwrap(), ["10.0.0.1", "10.0.0.2"]);
        for bad in ["node[1-", "node]1", "node[a-b]", "node[3-1]", "", ","] {
            assert!(expand(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            expand("node[3-1]").unwrap_err().to_string(),
            "\"node[3-1]\": range 3-1 runs backwards or is too long"
        );
    }
}
