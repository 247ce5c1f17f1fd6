//! An explanation as people read it: the confounder check (printed before
//! any verdict), each phase's limiter, the differential profiles and where
//! mixed workloads' time went. Plain text, one block each, empty when the
//! block has nothing to say.

use std::fmt::Write as _;

use fslab_record::table::{Align, Table};

use crate::explain::{Explanation, Side};
use crate::profile::SymbolDelta;

/// A clock change smaller than this (%) is not worth a word per phase.
const CLOCK_NOTED_PCT: f64 = 1.0;

fn run_clock(s: &Side) -> Option<String> {
    let c = s.clocks.iter().find(|c| c.clock.phase.is_none())?;
    let mut t = format!("CPU clock {:.0} MHz", c.clock.mhz);
    if let Some(m) = c.moved_pct {
        let _ = write!(t, " ({m:+.1}%)");
    }
    let moved: Vec<String> = s
        .clocks
        .iter()
        .filter_map(|c| {
            let p = c.clock.phase.as_deref()?;
            let m = c.moved_pct.filter(|m| m.abs() >= CLOCK_NOTED_PCT)?;
            Some(format!("{p} {m:+.1}%"))
        })
        .collect();
    if !moved.is_empty() {
        let _ = write!(t, "; by phase: {}", moved.join(", "));
    }
    Some(t)
}

/// The machines checked before any verdict: per group, the facts that
/// differ from the baseline's (and between its own runs) and its CPU clock.
pub fn confounders(e: &Explanation) -> String {
    let mut s = String::new();
    if e.sides.is_empty() {
        return s;
    }
    let _ = writeln!(
        s,
        "Confounders (the machines, checked before any verdict; baseline {}):",
        e.baseline
    );
    for side in &e.sides {
        let mut parts = Vec::new();
        if !side.has_facts {
            parts.push("no machine facts recorded (a run from before they were kept)".to_string());
        } else if side.group == e.baseline {
            parts.push("the baseline".to_string());
        } else if side.confounders.is_empty() {
            parts.push("no fact differs".to_string());
        } else {
            let d: Vec<String> = side
                .confounders
                .iter()
                .map(|d| format!("{} {} vs {}", d.name, d.base, d.other))
                .collect();
            parts.push(format!("differs in {}", d.join("; ")));
        }
        if !side.within.is_empty() {
            let d: Vec<String> = side
                .within
                .iter()
                .map(|d| format!("{} {} vs {}", d.name, d.base, d.other))
                .collect();
            parts.push(format!("its own runs differ in {}", d.join("; ")));
        }
        parts.extend(run_clock(side));
        let _ = writeln!(s, "  {}: {}", side.group, parts.join("; "));
    }
    let sources: Vec<&str> = e
        .sides
        .iter()
        .flat_map(|s| &s.clocks)
        .map(|c| c.clock.source.as_str())
        .fold(Vec::new(), |mut v, x| {
            if !v.contains(&x) {
                v.push(x);
            }
            v
        });
    match sources.as_slice() {
        [] => {
            let _ = writeln!(s, "  CPU clock: not measured (runs from before it was)");
        }
        [one] => {
            let _ = writeln!(s, "  CPU clock measured by: {one}");
        }
        many => {
            let _ = writeln!(s, "  CPU clock measured by: {}", many.join(" | "));
        }
    }
    s
}

/// Each group's limiter of each phase, one line each.
pub fn limiters(e: &Explanation) -> String {
    let mut s = String::new();
    if e.sides.iter().all(|x| x.limiters.is_empty()) {
        return s;
    }
    let _ = writeln!(
        s,
        "Limiters (what each phase waited on, from its instruments):"
    );
    for side in &e.sides {
        for l in &side.limiters {
            let _ = writeln!(s, "  {} {}", side.group, l.line());
        }
    }
    s
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "<0.5".into(), |p| format!("{p:.2}"))
}

fn profile_table(base: &str, other: &str, syms: &[SymbolDelta]) -> String {
    let mut t = Table::new(&[
        ("symbol", Align::Left),
        (base, Align::Right),
        (other, Align::Right),
        ("delta", Align::Right),
        ("ratio", Align::Right),
    ])
    .indent(4);
    for d in syms {
        t.row([
            if d.kernel {
                d.symbol.clone()
            } else {
                format!("{} ({})", d.symbol, d.dso)
            },
            pct(d.base_pct),
            pct(d.other_pct),
            format!("{:+.2}", d.delta_pp),
            d.ratio.map_or_else(|| "-".into(), |r| format!("{r:.2}")),
        ]);
    }
    t.render()
}

/// The differential profiles: per group and phase, the symbols whose
/// share of the samples changed most against the baseline.
pub fn profiles(e: &Explanation) -> String {
    let mut s = String::new();
    for side in e.sides.iter().filter(|x| !x.profiles.is_empty()) {
        let _ = writeln!(
            s,
            "Differential profile, {} against {} (perf: share of samples, %; delta in points; <0.5: below what the probe keeps):",
            side.group, e.baseline
        );
        for p in &side.profiles {
            let _ = writeln!(s, "  {}:", p.phase);
            s.push_str(&profile_table(&e.baseline, &side.group, &p.symbols));
        }
    }
    s
}

/// Where mixed workloads' time went: each operation's share of a phase's
/// call time, per group.
pub fn shares(e: &Explanation) -> String {
    let mut s = String::new();
    if e.sides.iter().all(|x| x.shares.is_empty()) {
        return s;
    }
    let _ = writeln!(
        s,
        "Where the time went (each operation's share of the phase's call time: a verdict on the total moves with the operations that hold it):"
    );
    for side in &e.sides {
        for p in &side.shares {
            let ops: Vec<String> = p
                .ops
                .iter()
                .map(|o| format!("{} {:.1}%", o.op, o.share_pct))
                .collect();
            let _ = writeln!(s, "  {} {}: {}", side.group, p.phase, ops.join(", "));
        }
    }
    s
}

/// Everything after the verdicts: limiters, profiles, shares.
pub fn after_verdicts(e: &Explanation) -> String {
    [limiters(e), profiles(e), shares(e)]
        .into_iter()
        .filter(|b| !b.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
