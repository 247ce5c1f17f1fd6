//! IO500's result lines, its MD score and its validity rules (src/main.c):
//! what it prints after each phase and at the end, and why a phase is
//! INVALID.

use serde::Serialize;

use super::Phase;

/// One phase as IO500 reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseScore {
    /// IO500's name (`mdtest-easy-write`).
    pub phase: String,
    /// Its score, kIOPS (mdtest's rate of the phase's operation / 1000; the
    /// find's files looked at / its runtime / 1000; 0 for the timestamp).
    pub score_kiops: f64,
    /// The phase's time as IO500 measures it (around the whole phase), s.
    pub time_s: f64,
    /// Whether it counts in the MD score.
    pub scored: bool,
    /// Why IO500's rules find it INVALID (its words), if they do.
    pub invalid: Vec<String>,
}

impl PhaseScore {
    pub fn valid(&self) -> bool {
        self.invalid.is_empty()
    }
}

/// IO500's checks after a phase (src/main.c, in its order): a write phase
/// shorter than the stonewall, a score of 0, a write phase shorter than the
/// minimum write time. `stonewall_s` and `minwrite_s` as the run has them
/// (scaled or not).
pub fn rules(
    phase: Phase,
    time_s: f64,
    score: f64,
    stonewall_s: u64,
    minwrite_s: u64,
) -> Vec<String> {
    let mut v = Vec::new();
    let checked = phase.verifies_stonewall();
    if checked && time_s < stonewall_s as f64 {
        v.push(format!(
            "Runtime of phase ({time_s:.6}) is below stonewall time. This shouldn't happen!"
        ));
    } else if score == 0.0 && phase != Phase::Timestamp {
        v.push("Resulting score shouldn't be 0.0".into());
    }
    if checked && time_s < minwrite_s as f64 {
        v.push("Runtime is smaller than expected minimum runtime".into());
    }
    v
}

/// IO500's check of its settings before any phase (src/phase_dbg.c): the
/// stonewall time must be the minimum write time.
pub fn settings_rule(stonewall_s: u64, minwrite_s: u64) -> Option<String> {
    (stonewall_s != minwrite_s).then(|| format!("stonewall-time {stonewall_s}s != {minwrite_s}s"))
}

/// IO500's line for a phase: `[RESULT]` for a scored phase, `[      ]`
/// for a dummy one, the score with `%f`, `[INVALID]` when a rule failed.
pub fn result_line(p: &PhaseScore) -> String {
    format!(
        "{} {:>20} {:>15} kIOPS : time {:.3} seconds{}",
        if p.scored { "[RESULT]" } else { "[      ]" },
        p.phase,
        format!("{:.6}", p.score_kiops),
        p.time_s,
        if p.valid() { "" } else { " [INVALID]" }
    )
}

/// IO500's ERROR INVALID line (on stdout, before the phase's result line).
pub fn invalid_line(phase: &str, why: &str) -> String {
    format!("ERROR INVALID ({phase}) {why}")
}

/// The MD score: the geometric mean of the scored phases' kIOPS, those of
/// 0 or less left out as IO500's calc_score leaves them; 0 when none is
/// left.
pub fn md_score(phases: &[PhaseScore]) -> f64 {
    let s: Vec<f64> = phases
        .iter()
        .filter(|p| p.scored && p.score_kiops > 0.0)
        .map(|p| p.score_kiops)
        .collect();
    if s.is_empty() {
        return 0.0;
    }
    // The mean of the logarithms: IO500's product of hundreds of kIOPS
    // over eight phases stays in range either way, this one at any count.
    (s.iter().map(|v| v.ln()).sum::<f64>() / s.len() as f64).exp()
}

/// IO500's `[SCORE ]` line for a run of its metadata phases alone: the
/// bandwidth 0 (no ior phase ran) and so the total, `sqrt(BW * MD)`, 0.
pub fn score_line(score: f64, valid: bool) -> String {
    format!(
        "[SCORE ] Bandwidth {:.6} GiB/s : IOPS {score:.6} kiops : TOTAL {:.6}{}",
        0.0,
        0.0,
        if valid { "" } else { " [INVALID]" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io500::PHASES;

    fn p(phase: &str, score: f64, scored: bool, invalid: &[&str]) -> PhaseScore {
        PhaseScore {
            phase: phase.into(),
            score_kiops: score,
            time_s: 301.5,
            scored,
            invalid: invalid.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn result_lines_are_io500s() {
        assert_eq!(
            result_line(&p("mdtest-easy-write", 12.5, true, &[])),
            "[RESULT]    mdtest-easy-write       12.500000 kIOPS : time 301.500 seconds"
        );
        assert_eq!(
            result_line(&p("timestamp", 0.0, false, &["x"])),
            "[      ]            timestamp        0.000000 kIOPS : time 301.500 seconds [INVALID]"
        );
        assert_eq!(
            score_line(3.0, false),
            "[SCORE ] Bandwidth 0.000000 GiB/s : IOPS 3.000000 kiops : TOTAL 0.000000 [INVALID]"
        );
    }

    #[test]
    fn the_score_is_the_geometric_mean_of_the_scored_phases_above_zero() {
        let v = [
            p("a", 2.0, true, &[]),
            p("b", 8.0, true, &[]),
            p("timestamp", 1000.0, false, &[]),
            p("c", 0.0, true, &[]),
        ];
        assert!((md_score(&v) - 4.0).abs() < 1e-12);
        assert_eq!(md_score(&v[2..]), 0.0);
    }

    #[test]
    fn a_write_phase_shorter_than_the_stonewall_or_the_minimum_is_invalid() {
        let write = PHASES[0];
        let stat = PHASES[4];
        assert_eq!(rules(write, 3.5, 1.0, 3, 3), Vec::<String>::new());
        let short = rules(write, 2.0, 1.0, 3, 3);
        assert_eq!(short.len(), 2);
        assert!(short[0].starts_with("Runtime of phase (2.000000) is below stonewall time"));
        assert_eq!(short[1], "Runtime is smaller than expected minimum runtime");
        // A stat phase has no minimum; a score of 0 is invalid anywhere but
        // the timestamp.
        assert!(rules(stat, 0.1, 1.0, 3, 3).is_empty());
        assert_eq!(
            rules(stat, 0.1, 0.0, 3, 3),
            ["Resulting score shouldn't be 0.0"]
        );
        assert!(rules(PHASES[1], 0.0, 0.0, 3, 3).is_empty());
        assert_eq!(settings_rule(3, 4).unwrap(), "stonewall-time 3s != 4s");
        assert_eq!(settings_rule(300, 300), None);
    }
}
