//! Every kind of finding on fake samples, through the one rule, with
//! mechanism gating.

use super::*;
use crate::summary::Direction;
use fslab_probe::notes::{BlockedStack, Note, StacksTop};

fn s(cell: u32, repetition: u32, metric: &str, value: f64) -> RepetitionValue {
    RepetitionValue {
        cell,
        repetition,
        metric: metric.into(),
        direction: Direction::Cost,
        value,
        headline: false,
        exact: false,
    }
}

fn labels() -> Vec<String> {
    vec!["btrfs".into(), "xfs".into(), "ext4".into()]
}

fn finding(id: &str, kind: FindingKind) -> Finding {
    Finding {
        id: id.into(),
        says: format!("claim {id}"),
        author: "the author's number".into(),
        author_numbers: Vec::new(),
        stand_in: None,
        rests_on: Vec::new(),
        kind,
    }
}

/// btrfs's image extents over xfs's, against the author's ratio.
fn extents_ratio(id: &str, author_ratio: f64) -> Finding {
    finding(
        id,
        FindingKind::Ratio {
            cell: 0,
            metric: EXT.into(),
            than_cell: 1,
            than_metric: EXT.into(),
            claim: Claim::Effect(author_ratio),
        },
    )
}

/// btrfs's image extents per file created, against the author's value.
fn per_file(author_value: f64) -> Finding {
    finding(
        "000-a",
        FindingKind::Value {
            cell: 0,
            metric: EXT.into(),
            per: Some(FILES.into()),
            reference: Reference::Author,
            author_value,
        },
    )
}

/// `findings` judged on `samples` (no probe evidence), on `facts`.
fn judge(findings: &[Finding], samples: &[RepetitionValue], facts: &Facts) -> Vec<FindingResult> {
    let l = labels();
    let runs = Runs {
        labels: &l,
        samples,
        evidence: &[],
        facts,
    };
    evaluate_all(findings, &runs)
}

fn judge_one(f: &Finding, samples: &[RepetitionValue]) -> FindingResult {
    judge(std::slice::from_ref(f), samples, &Facts::default()).remove(0)
}

const EXT: &str = "image extents";
const FILES: &str = "fsmark files created";

/// btrfs: 0.3 extents per file created, xfs: 0.002; three runs each, of
/// different sizes (so that a value per file must pair run by run).
fn fragmented() -> Vec<RepetitionValue> {
    let mut v = Vec::new();
    for (rep, (files, b, x)) in [
        (100_000.0, 30_000.0, 190.0),
        (200_000.0, 66_000.0, 400.0),
        (80_000.0, 24_800.0, 156.0),
    ]
    .into_iter()
    .enumerate()
    {
        let rep = rep as u32 + 1;
        v.push(s(0, rep, EXT, b));
        v.push(s(0, rep, FILES, files));
        v.push(s(1, rep, EXT, x));
        v.push(s(1, rep, FILES, files));
    }
    v
}

/// btrfs: 30k extents, xfs: 200, runs of equal size.
fn equal_runs() -> Vec<RepetitionValue> {
    let mut v = Vec::new();
    for (rep, (b, x)) in [(30_000.0, 190.0), (33_000.0, 200.0), (31_000.0, 195.0)]
        .into_iter()
        .enumerate()
    {
        v.push(s(0, rep as u32 + 1, EXT, b));
        v.push(s(1, rep as u32 + 1, EXT, x));
    }
    v
}

#[test]
fn a_ratio_of_two_cells_is_judged_against_the_authors_ratio() {
    let ratio = |author_ratio| extents_ratio("000-x", author_ratio);
    // 157x against the author's 200x: reproduced.
    let r = judge_one(&ratio(200.0), &equal_runs());
    assert_eq!(r.outcome, FindingOutcome::Reproduced, "{r:?}");
    assert!(
        r.detail
            .starts_with("btrfs 31333 (n=3) over xfs 195 (n=3): "),
        "{}",
        r.detail
    );
    assert!(r
        .from
        .contains("\"image extents\" of btrfs over \"image extents\" of xfs"));
    // Against 1,000,000x: e = 0.37, weaker.
    assert_eq!(
        judge_one(&ratio(1e6), &equal_runs()).outcome,
        FindingOutcome::Weaker
    );
    // Two runs a side: not judged, saying so.
    let two: Vec<RepetitionValue> = equal_runs()
        .into_iter()
        .filter(|x| x.repetition < 3)
        .collect();
    let r = judge_one(&ratio(200.0), &two);
    assert_eq!(r.outcome, FindingOutcome::NotJudged);
    assert!(
        r.why.contains("fewer than 3 runs a side (n=2 and 2)"),
        "{}",
        r.why
    );
    // A side missing: not judged, naming the metric and cell.
    let r = judge_one(&ratio(200.0), &equal_runs()[..1]);
    assert_eq!(r.outcome, FindingOutcome::NotJudged);
    assert!(
        r.why.contains("no value of \"image extents\" of xfs"),
        "{}",
        r.why
    );
}

#[test]
fn a_paired_ratio_within_a_cell_pairs_run_by_run() {
    let (last, first) = ("last tenth (ops/s)", "first tenth (ops/s)");
    // Runs of very different speeds, each's last tenth 0.6x its first.
    let mut v = Vec::new();
    for (rep, base) in [(1, 100.0), (2, 300.0), (3, 50.0)] {
        v.push(s(0, rep, first, base));
        v.push(s(0, rep, last, base * 0.6 * (1.0 + 0.01 * f64::from(rep))));
    }
    let f = finding(
        "004-x",
        FindingKind::Paired {
            cell: 0,
            metric: last.into(),
            than_metric: first.into(),
            claim: Claim::Effect(11.0 / 60.0),
        },
    );
    let r = judge_one(&f, &v);
    // 0.6x against the author's 0.18x: e = 0.30, confidently below 1: weaker.
    assert_eq!(r.outcome, FindingOutcome::Weaker, "{r:?}");
    assert!(
        r.detail.contains("(n=3 runs)") && r.detail.contains("paired t on logs"),
        "{}",
        r.detail
    );
    // Unpaired, the runs' spread (50 to 300) would leave even the author's
    // effect below what three runs resolve: pairing matters.
    let unpaired = finding(
        "004-y",
        FindingKind::Ratio {
            cell: 0,
            metric: last.into(),
            than_cell: 0,
            than_metric: first.into(),
            claim: Claim::Effect(11.0 / 60.0),
        },
    );
    assert_eq!(
        judge_one(&unpaired, &v).outcome,
        FindingOutcome::BelowResolution
    );
}

#[test]
fn a_value_per_unit_of_work_against_the_authors_number() {
    // btrfs's extents per file created (0.31) against the author's 1.42
    // (his number has no reference of no effect: judged as a value within
    // a factor of 2).
    let f = per_file(1.42);
    let r = judge_one(&f, &fragmented());
    assert_eq!(r.outcome, FindingOutcome::NotReproduced, "{r:?}");
    assert!(r.why.contains("wholly outside a factor of 2"), "{}", r.why);
    // Paired run by run, the runs' different sizes cancel: a narrow interval.
    let (lo, hi) = r.ci.unwrap();
    assert!(hi / lo < 1.3, "{r:?}");
    assert!(
        r.detail
            .contains("btrfs 0.3133 (n=3) against the author's 1.42"),
        "{}",
        r.detail
    );
    assert!(
        r.from
            .contains("\"image extents\" per \"fsmark files created\""),
        "{}",
        r.from
    );
    // Within a factor 2 of the author's 0.4: reproduced.
    let near = per_file(0.4);
    assert_eq!(
        judge_one(&near, &fragmented()).outcome,
        FindingOutcome::Reproduced
    );
    // A constant reference (1 backend IO per guest IO): the author's 100x.
    let per = "blockio create backend IOs per guest IO";
    let v: Vec<RepetitionValue> = [1.02, 1.01, 1.03]
        .iter()
        .enumerate()
        .map(|(i, x)| s(2, i as u32 + 1, per, *x))
        .collect();
    let g = finding(
        "000-e",
        FindingKind::Value {
            cell: 2,
            metric: per.into(),
            per: None,
            reference: Reference::Constant(1.0),
            author_value: 100.0,
        },
    );
    let r = judge_one(&g, &v);
    assert_eq!(r.outcome, FindingOutcome::NotReproduced, "{r:?}");
    // The per-unit metric missing: not judged, naming it.
    let no_files: Vec<RepetitionValue> = fragmented()
        .into_iter()
        .filter(|x| x.metric == EXT)
        .collect();
    let r = judge_one(&f, &no_files);
    assert_eq!(r.outcome, FindingOutcome::NotJudged);
    assert!(r.why.contains("\"fsmark files created\""), "{}", r.why);
}

#[test]
fn a_claim_resting_on_a_mechanism_that_did_not_happen_is_not_judged() {
    let hits = "mem create limit hits (count)";
    let mech = finding(
        "000-m1",
        FindingKind::Mechanism {
            cell: 0,
            metric: hits.into(),
            per: None,
            than: None,
            threshold: Threshold::AtLeast(1.0),
        },
    );
    let mut claim = per_file(0.4);
    claim.rests_on = vec!["000-m1".into()];
    let judge_with = |hit_counts: &[f64]| {
        let mut v = fragmented();
        // Named as the summary names a count: without "(count)".
        for (i, h) in hit_counts.iter().enumerate() {
            v.push(s(0, i as u32 + 1, "mem create limit hits", *h));
        }
        judge(&[claim.clone(), mech.clone()], &v, &Facts::default())
    };
    let ok = judge_with(&[12.0, 30.0, 7.0]);
    assert_eq!(ok[1].outcome, FindingOutcome::Happened);
    assert_eq!(ok[0].outcome, FindingOutcome::Reproduced, "{:?}", ok[0]);
    // One run never hit its limit: the mechanism did not happen, and the
    // claim is not judged, naming it.
    let bad = judge_with(&[12.0, 0.0, 7.0]);
    assert_eq!(bad[1].outcome, FindingOutcome::DidNotHappen);
    assert_eq!(bad[1].why, "2 of 3 runs at least 1");
    assert_eq!(bad[0].outcome, FindingOutcome::NotJudged);
    assert!(
        bad[0]
            .why
            .starts_with("the mechanism it rests on is not shown by this run: 000-m1 did not happen (claim 000-m1: 2 of 3 runs at least 1)"),
        "{}",
        bad[0].why
    );
    // Not measured at all: the same.
    let none = judge_with(&[]);
    assert_eq!(none[1].outcome, FindingOutcome::NotJudged);
    assert!(none[1].why.contains("not measured"), "{}", none[1].why);
    assert_eq!(none[0].outcome, FindingOutcome::NotJudged);
}

#[test]
fn wait_stacks_and_untestable_claims() {
    let stack = |frames: &[&str]| StacksTop {
        rounds: 10,
        stacks: vec![BlockedStack {
            thread: "workload".into(),
            frames: frames.iter().map(|f| f.to_string()).collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let phases = vec!["create".to_string()];
    let ev = |st: &StacksTop| {
        let v = st.to_value();
        Evidence::of(&phases, [(Some(0), "stacks", "top", &v)], [])
    };
    let yes = ev(&stack(&["__wait_on_buffer", "ext4_dx_find_entry"]));
    let no = ev(&stack(&["io_schedule"]));
    let f = finding(
        "004-c",
        FindingKind::Stacks {
            cell: 2,
            phase: "create".into(),
            functions: vec!["__wait_on_buffer".into(), "dx_find_entry".into()],
        },
    );
    let l = labels();
    let with = |e: &[(u32, u32, &Evidence)]| {
        let runs = Runs {
            labels: &l,
            samples: &[],
            evidence: e,
            facts: &Facts::default(),
        };
        evaluate_all(std::slice::from_ref(&f), &runs).remove(0)
    };
    let all = with(&[(2, 1, &yes), (2, 2, &yes), (2, 3, &yes)]);
    assert_eq!(all.outcome, FindingOutcome::Reproduced, "{all:?}");
    assert_eq!(
        with(&[(2, 1, &no), (2, 2, &no), (2, 3, &no)]).outcome,
        FindingOutcome::NotReproduced
    );
    assert_eq!(
        with(&[(2, 1, &yes), (2, 2, &no), (2, 3, &yes)]).outcome,
        FindingOutcome::Unresolved
    );
    let r = with(&[]);
    assert_eq!(r.outcome, FindingOutcome::NotJudged);
    assert!(r.why.contains("stacks probe"), "{}", r.why);
    // A claim this machine cannot test says why, and its text says all.
    let u = finding(
        "000-g",
        FindingKind::Untestable {
            why: "not testable here: 8 CPUs; this machine has 2".into(),
            cell: None,
            shows: None,
        },
    );
    let r = judge_one(&u, &[]);
    assert_eq!(r.outcome, FindingOutcome::NotJudged);
    assert_eq!(r.why, "not testable here: 8 CPUs; this machine has 2");
    let t = text(&[r, all]);
    assert!(t.contains("  000-g not judged: claim 000-g\n    author: the author's number\n    why:    not testable here: 8 CPUs"), "{t}");
    assert!(t.contains("  004-c reproduced: claim 004-c\n"), "{t}");
}

#[test]
fn every_outcome_printed_is_the_rules() {
    // Whatever the numbers, "reproduced" is never printed beside an
    // interval that holds no effect.
    for (a, b) in [
        (vec![100.0, 140.0, 70.0], vec![160.0, 90.0, 220.0]),
        (vec![100.0, 101.0], vec![300.0, 301.0]),
    ] {
        let mut v = Vec::new();
        for (i, x) in a.iter().enumerate() {
            v.push(s(0, i as u32, "m", *x));
        }
        for (i, x) in b.iter().enumerate() {
            v.push(s(1, i as u32, "m", *x));
        }
        let f = finding(
            "x",
            FindingKind::Ratio {
                cell: 1,
                metric: "m".into(),
                than_cell: 0,
                than_metric: "m".into(),
                claim: Claim::Effect(2.0),
            },
        );
        let r = judge_one(&f, &v);
        assert_ne!(r.outcome, FindingOutcome::Reproduced, "{r:?}");
        assert!(!text(&[r]).contains("reproduced"));
    }
}

#[test]
fn a_claim_resting_on_a_kernel_path_this_kernel_lacks_is_not_judgeable_here() {
    let path = finding(
        "000-m9",
        FindingKind::Kernel {
            symbols: vec!["btree_writepage".into()],
            path: "3.9's reclaim writing btrfs btree pages one at a time".into(),
        },
    );
    let mut claim = extents_ratio("000-d", 200.0);
    claim.rests_on = vec!["000-m9".into()];
    let judge_on = |has: bool| {
        let facts = Facts {
            machine: MachineFacts {
                kernel: "6.18.44".into(),
                kallsyms: true,
                symbols: vec![("btree_writepage".into(), has)],
                ..Default::default()
            },
            cells: Vec::new(),
        };
        let v = equal_runs();
        judge(&[path.clone(), claim.clone()], &v, &facts)
    };
    let gone = judge_on(false);
    assert_eq!(gone[0].outcome, FindingOutcome::DidNotHappen);
    assert_eq!(gone[1].outcome, FindingOutcome::NotJudged);
    assert!(
        gone[1].why.starts_with("not judgeable on this kernel: 000-m9 (3.9's reclaim writing btrfs btree pages one at a time: this kernel (6.18.44) has no btree_writepage (/proc/kallsyms))"),
        "{}",
        gone[1].why
    );
    let there = judge_on(true);
    assert_eq!(there[0].outcome, FindingOutcome::Happened);
    assert_eq!(
        there[1].outcome,
        FindingOutcome::Reproduced,
        "{:?}",
        there[1]
    );
    // Unreadable symbols: the path is not judged, and neither is the claim.
    let facts = Facts::default();
    let v = equal_runs();
    let r = judge(&[path.clone(), claim.clone()], &v, &facts);
    assert_eq!(r[0].outcome, FindingOutcome::NotJudged);
    assert!(r[0].why.contains("could not be read"), "{}", r[0].why);
    assert_eq!(r[1].outcome, FindingOutcome::NotJudged);
    // A cell on a guest's kernel: this machine's symbols say nothing of it,
    // though they have the path.
    let facts = Facts {
        machine: MachineFacts {
            kernel: "6.18.44".into(),
            kallsyms: true,
            symbols: vec![("btree_writepage".into(), true)],
            ..Default::default()
        },
        cells: vec![CellFacts {
            guest: Some("debian:6.1.0-50-cloud-amd64".into()),
            ..Default::default()
        }],
    };
    let r = judge(&[path.clone(), claim.clone()], &v, &facts);
    assert_eq!(r[0].outcome, FindingOutcome::NotJudged, "{:?}", r[0]);
    assert!(
        r[0].why
            .contains("a cell runs on kernel debian:6.1.0-50-cloud-amd64 in a guest"),
        "{}",
        r[0].why
    );
    assert_eq!(r[1].outcome, FindingOutcome::NotJudged);
}

#[test]
fn a_judged_finding_names_the_stand_ins_of_the_cells_it_reads() {
    let f = extents_ratio("000-x", 200.0);
    let mut f_named = f.clone();
    f_named.stand_in = Some("ext4 stands in for XFS V4".into());
    let facts = Facts {
        machine: MachineFacts {
            cpus: 2,
            ..Default::default()
        },
        cells: vec![
            CellFacts {
                threads: 8,
                loop_image: true,
                ..Default::default()
            },
            CellFacts::default(),
        ],
    };
    let v = equal_runs();
    let r = judge(&[f, f_named], &v, &facts);
    let s = r[0].stand_in.clone().unwrap();
    assert!(
        s.contains("8 threads on 2 CPUs") && s.contains("loop device"),
        "{s}"
    );
    // The file's own stand-in first.
    let s = r[1].stand_in.clone().unwrap();
    assert!(
        s.starts_with("ext4 stands in for XFS V4; a loop device"),
        "{s}"
    );
}

#[test]
fn a_mechanism_between_two_cells_needs_its_whole_interval_past_the_threshold() {
    let mech = |at_least: f64| {
        finding(
            "003-m1",
            FindingKind::Mechanism {
                cell: 0,
                metric: EXT.into(),
                per: None,
                than: Some(1),
                threshold: Threshold::AtLeast(at_least),
            },
        )
    };
    // btrfs about 160x xfs, a narrow interval.
    let r = judge_one(&mech(10.0), &equal_runs());
    assert_eq!(r.outcome, FindingOutcome::Happened, "{r:?}");
    assert!(
        r.detail.contains("btrfs 31333 (n=3) over xfs 195 (n=3)"),
        "{}",
        r.detail
    );
    let r = judge_one(&mech(1000.0), &equal_runs());
    assert_eq!(r.outcome, FindingOutcome::DidNotHappen, "{r:?}");
    assert!(
        r.why
            .contains("the whole interval at least 1000: it is not"),
        "{}",
        r.why
    );
    // Its cells' stand-ins are both cells'.
    assert_eq!(mech(1.0).cells(), vec![0, 1]);
}
