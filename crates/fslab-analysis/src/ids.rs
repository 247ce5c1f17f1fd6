//! Run ids as a person types them, wherever run ids are taken (`compare
//! --runs`, `report --runs`, `results show`, `results export`, `trace
//! show`): a number (`7`), `latest` (the newest stored run), `latest~N`
//! (the Nth before it), a range of either (`7-12`, `latest~2-latest`: the
//! stored runs between them, both included), and comma-separated lists of
//! these. A group of `--runs` may carry a label: `ext4=7,9,11`.

use fslab_store::Store;

use crate::{Error, Result};

/// One run reference: a number, `latest` or `latest~N`.
fn one(ids: &[i64], w: &str, whole: &str) -> Result<i64> {
    let bad = |why: &str| Error::Selection(format!("{whole}: {w:?} {why}"));
    if let Some(rest) = w.strip_prefix("latest") {
        let back: usize = match rest.strip_prefix('~') {
            None if rest.is_empty() => 0,
            Some(n) => n
                .parse()
                .map_err(|_| bad("is not a run id (latest~N takes a count, say latest~2)"))?,
            None => return Err(bad("is not a run id (say 7, latest, latest~2 or 7-12)")),
        };
        let Some(i) = ids.len().checked_sub(1 + back) else {
            return Err(bad(&format!(
                "goes back further than the store's {} run{}",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" }
            )));
        };
        return Ok(ids[i]);
    }
    let id: i64 = w
        .parse()
        .map_err(|_| bad("is not a run id (say 7, latest, latest~2 or 7-12)"))?;
    if ids.binary_search(&id).is_err() {
        return Err(Error::Store(fslab_store::StoreError::NoSuchRun(id)));
    }
    Ok(id)
}

/// The run ids a list such as `7,9-11,latest` names, in the order written
/// (each range ascending), every one a stored run; `whole` is how the
/// argument is named in an error (`--runs 7,9`).
pub fn resolve_in(ids: &[i64], list: &str, whole: &str) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for w in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match w.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (one(ids, a.trim(), whole)?, one(ids, b.trim(), whole)?);
                if a > b {
                    return Err(Error::Selection(format!(
                        "{whole}: {w:?} is a range that runs backwards (say {b}-{a})"
                    )));
                }
                out.extend(ids.iter().copied().filter(|i| (a..=b).contains(i)));
            }
            None => out.push(one(ids, w, whole)?),
        }
    }
    if out.is_empty() {
        return Err(Error::Selection(format!("{whole}: names no run")));
    }
    Ok(out)
}

/// [`resolve_in`] against the store's runs.
pub fn resolve(store: &Store, list: &str, whole: &str) -> Result<Vec<i64>> {
    resolve_in(&store.run_ids()?, list, whole)
}

/// The one run `text` names (`7`, `latest`, `latest~1`).
pub fn resolve_one(store: &Store, text: &str) -> Result<i64> {
    let ids = store.run_ids()?;
    let t = text.trim();
    if t.contains(',') || t.trim_start_matches("latest").contains('-') {
        return Err(Error::Selection(format!(
            "{t:?}: one run id is wanted here (say 7, latest or latest~1)"
        )));
    }
    one(&ids, t, "run id")
}

/// A `--runs` group: its label (`ext4=7,9,11`: `ext4`; none: `runs
/// 7,9,11`) and its list of run references.
pub fn group(arg: &str) -> Result<(String, &str)> {
    match arg.split_once('=') {
        Some((label, list)) => {
            let label = label.trim();
            if label.is_empty() {
                return Err(Error::Selection(format!(
                    "--runs {arg}: the label before '=' is empty (say ext4=7,9,11)"
                )));
            }
            Ok((label.to_string(), list))
        }
        None => Ok((format!("runs {}", arg.trim()), arg)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDS: [i64; 7] = [3, 4, 5, 7, 8, 9, 12];

    fn r(list: &str) -> Result<Vec<i64>> {
        resolve_in(&IDS, list, "--runs")
    }

    #[test]
    fn latest_and_latest_tilde_n_count_back_over_stored_runs() {
        assert_eq!(r("latest").unwrap(), vec![12]);
        assert_eq!(r("latest~0").unwrap(), vec![12]);
        assert_eq!(r("latest~1").unwrap(), vec![9]);
        assert_eq!(r("latest~6").unwrap(), vec![3]);
        let e = r("latest~7").unwrap_err().to_string();
        assert!(e.contains("further than the store's 7 runs"), "{e}");
        let e = r("latest~x").unwrap_err().to_string();
        assert!(e.contains("\"latest~x\""), "{e}");
    }

    #[test]
    fn a_range_takes_the_stored_runs_between_its_ends() {
        assert_eq!(r("4-8").unwrap(), vec![4, 5, 7, 8]);
        assert_eq!(r("3, 9-12").unwrap(), vec![3, 9, 12]);
        assert_eq!(r("latest~2-latest").unwrap(), vec![8, 9, 12]);
        let e = r("8-4").unwrap_err().to_string();
        assert!(e.contains("runs backwards (say 4-8)"), "{e}");
        // An end that is not a stored run is named.
        let e = r("4-6").unwrap_err();
        assert!(e.is_usage() && e.to_string().contains('6'), "{e}");
    }

    #[test]
    fn a_bad_word_or_an_empty_list_is_named() {
        let e = r("7,x").unwrap_err().to_string();
        assert!(e.starts_with("--runs: \"x\" is not a run id"), "{e}");
        assert!(r(" , ").unwrap_err().to_string().contains("names no run"));
    }

    #[test]
    fn a_group_may_carry_a_label() {
        assert_eq!(group("ext4=7,9").unwrap(), ("ext4".into(), "7,9"));
        assert_eq!(group("7,9").unwrap(), ("runs 7,9".into(), "7,9"));
        assert!(group("=7").unwrap_err().is_usage());
    }
}
