//! Differential profiles: when the perf probe ran on both sides, the
//! symbols whose share of the samples changed most, as `perf diff` shows
//! them (the change in percentage points, and the ratio of the shares),
//! and a symbol's share of a phase (seed 001: `__crc32c_le` 1.65% of the
//! create profile).
//!
//! The probe keeps the symbols at or above 0.5% of a phase's samples; a
//! symbol missing on one side is below that there, and is shown so.

use fslab_probe::notes::{PerfSymbol, PerfTop};
use serde::Serialize;

/// The smallest share the perf probe keeps, %.
pub const KEPT_PCT: f64 = 0.5;

/// One symbol's change between two profiles of a phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SymbolDelta {
    pub symbol: String,
    pub dso: String,
    pub kernel: bool,
    /// Share of samples on each side, %; None: below [`KEPT_PCT`].
    pub base_pct: Option<f64>,
    pub other_pct: Option<f64>,
    /// other - base, percentage points (a missing share counts 0).
    pub delta_pp: f64,
    /// other / base; None when a side is missing.
    pub ratio: Option<f64>,
}

/// The mean share of each symbol over several runs' profiles of a phase
/// (a run without the symbol counts 0), most first.
pub fn pooled(tops: &[PerfTop]) -> PerfTop {
    let mut out: Vec<PerfSymbol> = Vec::new();
    for t in tops {
        for s in &t.0 {
            match out
                .iter_mut()
                .find(|o| o.symbol == s.symbol && o.dso == s.dso)
            {
                Some(o) => o.percent += s.percent,
                None => out.push(s.clone()),
            }
        }
    }
    let n = tops.len().max(1) as f64;
    for o in &mut out {
        o.percent /= n;
    }
    out.sort_by(|a, b| b.percent.total_cmp(&a.percent));
    PerfTop(out)
}

/// The `n` symbols whose share changed most from `base` to `other`.
pub fn diff(base: &PerfTop, other: &PerfTop, n: usize) -> Vec<SymbolDelta> {
    let key = |s: &PerfSymbol| (s.symbol.clone(), s.dso.clone());
    let mut keys: Vec<(String, String)> = base.0.iter().chain(&other.0).map(key).collect();
    keys.sort();
    keys.dedup();
    let find = |t: &PerfTop, k: &(String, String)| {
        t.0.iter()
            .find(|s| key(s) == *k)
            .map(|s| (s.percent, s.kernel))
    };
    let mut v: Vec<SymbolDelta> = keys
        .into_iter()
        .map(|k| {
            let (b, o) = (find(base, &k), find(other, &k));
            let kernel = b.or(o).map(|x| x.1).unwrap_or(false);
            let (b, o) = (b.map(|x| x.0), o.map(|x| x.0));
            SymbolDelta {
                symbol: k.0,
                dso: k.1,
                kernel,
                base_pct: b,
                other_pct: o,
                delta_pp: o.unwrap_or(0.0) - b.unwrap_or(0.0),
                ratio: match (b, o) {
                    (Some(b), Some(o)) if b > 0.0 => Some(o / b),
                    _ => None,
                },
            }
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta_pp
            .abs()
            .total_cmp(&a.delta_pp.abs())
            .then_with(|| a.symbol.cmp(&b.symbol))
    });
    v.truncate(n);
    v
}

/// `symbol`'s share of a profile, % (every DSO's entries of that name
/// together); None when it is below what the probe keeps.
pub fn share(top: &PerfTop, symbol: &str) -> Option<f64> {
    let v: Vec<f64> = top
        .0
        .iter()
        .filter(|s| s.symbol == symbol)
        .map(|s| s.percent)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(symbol: &str, percent: f64) -> PerfSymbol {
        PerfSymbol {
            percent,
            samples: 0,
            dso: "[kernel.kallsyms]".into(),
            kernel: true,
            symbol: symbol.into(),
        }
    }

    #[test]
    fn the_symbols_that_moved_most_with_perf_diffs_delta_and_ratio() {
        // Seed 001's create profiles, CRCs off and on.
        let off = PerfTop(vec![
            sym("_xfs_buf_find", 5.59),
            sym("memcpy", 4.58),
            sym("__crc32c_le", 1.25),
        ]);
        let on = PerfTop(vec![
            sym("_xfs_buf_find", 6.05),
            sym("__ticket_spin_trylock", 6.64),
            sym("__crc32c_le", 2.93),
        ]);
        let d = diff(&off, &on, 3);
        let names: Vec<&str> = d.iter().map(|x| x.symbol.as_str()).collect();
        assert_eq!(names, ["__ticket_spin_trylock", "memcpy", "__crc32c_le"]);
        assert_eq!((d[0].base_pct, d[0].other_pct), (None, Some(6.64)));
        assert_eq!(d[0].ratio, None);
        assert!((d[1].delta_pp + 4.58).abs() < 1e-9);
        assert!((d[2].delta_pp - 1.68).abs() < 1e-9);
        assert!((d[2].ratio.unwrap() - 2.344).abs() < 1e-3);
        assert_eq!(share(&off, "__crc32c_le"), Some(1.25));
        assert_eq!(share(&off, "absent"), None);
    }

    #[test]
    fn runs_pool_to_their_mean_share() {
        let p = pooled(&[
            PerfTop(vec![sym("a", 2.0), sym("b", 1.0)]),
            PerfTop(vec![sym("a", 4.0)]),
        ]);
        assert_eq!(p.0.len(), 2);
        assert_eq!((p.0[0].symbol.as_str(), p.0[0].percent), ("a", 3.0));
        assert_eq!((p.0[1].symbol.as_str(), p.0[1].percent), ("b", 0.5));
    }
}
