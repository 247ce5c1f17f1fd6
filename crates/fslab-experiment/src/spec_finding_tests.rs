//! `[[finding]]` parsing, and the built-ins' findings gated on their mechanisms.

use super::{Claim, FindingKind, Reference, Threshold};
use crate::spec::{parse, Defaults};

const HEAD: &str = "name = \"x\"\n[workload]\nkind = \"alloctest\"\nargs = [\"{dir}/big\", \"1G\"]\n[[target]]\nfs = \"ext3\"\n[[target]]\nfs = \"ext4\"\n";

fn with(findings: &str) -> Result<crate::spec::Experiment, String> {
    parse("x.toml", &format!("{HEAD}{findings}"), &Defaults::default()).map_err(|e| e.to_string())
}

#[test]
fn findings_parse_into_their_kinds_with_mechanisms_they_rest_on() {
    let e = with(
        "[[finding]]\nid = \"9-m1\"\nkind = \"mechanism\"\nsays = \"writeback\"\nmetric = \"mem touched dirty written (MiB)\"\ncell = \"ext3\"\nat_least = 1\n\
         [[finding]]\nid = \"9-a\"\nkind = \"value\"\nsays = \"s\"\nauthor = \"50,435\"\nmetric = \"m\"\nper = \"p\"\ncell = \"ext3\"\nreference = 1\nauthor_value = 5604\nrests_on = [\"9-m1\"]\n\
         [[finding]]\nid = \"9-b\"\nkind = \"ratio\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext4\"\nthan = \"ext3\"\nauthor_values = [35, 50435]\n",
    )
    .unwrap();
    assert_eq!(
        e.findings[0].kind,
        FindingKind::Mechanism {
            cell: 0,
            metric: "mem touched dirty written (MiB)".into(),
            per: None,
            than: None,
            threshold: Threshold::AtLeast(1.0)
        }
    );
    assert!(matches!(
        &e.findings[1].kind,
        FindingKind::Value { reference: Reference::Constant(r), author_value, per: Some(p), .. }
            if *r == 1.0 && *author_value == 5604.0 && p == "p"
    ));
    assert_eq!(e.findings[1].rests_on, vec!["9-m1".to_string()]);
    assert!(matches!(
        e.findings[2].kind,
        FindingKind::Ratio { cell: 1, than_cell: 0, claim: Claim::Effect(a), .. } if (a - 35.0 / 50435.0).abs() < 1e-12
    ));
}

#[test]
fn bad_findings_are_refused_naming_the_line_and_field() {
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"bound\"\nsays = \"s\"\nauthor = \"a\"\n")
        .unwrap_err();
    assert!(
        e.starts_with("x.toml:11: finding.kind: unknown kind \"bound\""),
        "{e}"
    );
    // A per-finding bound is not the rule's: refused.
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"ratio\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nabove = 10\n").unwrap_err();
    assert!(e.contains("unknown field `above`"), "{e}");
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"ratio\"\nsays = \"s\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nauthor_ratio = 2\n").unwrap_err();
    assert!(
        e.contains("finding.author: 9-a: give the author's numbers"),
        "{e}"
    );
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"untestable\"\nsays = \"s\"\nauthor = \"a\"\nwhy = \"8 CPUs\"\nrests_on = [\"9-z\"]\n").unwrap_err();
    assert!(
        e.contains("finding.rests_on: \"9-z\" is not the id of a mechanism"),
        "{e}"
    );
    // A value against another cell of fslab's: no number of the author's.
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"value\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nauthor_value = 2\n").unwrap_err();
    assert!(
        e.contains("finding.than: 9-a: a \"value\" finding's reference is the author's"),
        "{e}"
    );
    // An author's number that is not arithmetic over numbers.
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"value\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nauthor_value = \"about 2\"\n").unwrap_err();
    assert!(
        e.contains("x.toml:16: finding.author_value: \"about 2\": unexpected 'a'"),
        "{e}"
    );
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"ratio\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"ext3\"\nthan = \"ext4\"\nclaim = \"bigger\"\n").unwrap_err();
    assert!(e.contains("finding.claim: unknown claim \"bigger\""), "{e}");
    let e = with(
        "[[finding]]\nid = \"9-m\"\nkind = \"kernel\"\nsays = \"s\"\nsymbols = []\npath = \"p\"\n",
    )
    .unwrap_err();
    assert!(
        e.contains("finding.symbols: name at least one kernel symbol"),
        "{e}"
    );
    let e = with("[[finding]]\nid = \"9-a\"\nkind = \"paired\"\nsays = \"s\"\nauthor = \"a\"\nmetric = \"m\"\ncell = \"xfs\"\nthan_metric = \"n\"\nauthor_ratio = 2\n").unwrap_err();
    assert!(
        e.contains("no cell labelled \"xfs\" (cells: ext3, ext4)"),
        "{e}"
    );
    let two = "[[finding]]\nid = \"9-a\"\nkind = \"untestable\"\nsays = \"s\"\nauthor = \"a\"\nwhy = \"w\"\n";
    let e = with(&format!("{two}{two}")).unwrap_err();
    assert!(e.contains("\"9-a\" is the id of an earlier finding"), "{e}");
}

mod builtin_gates {
    use crate::findings::{evaluate_all, Runs};
    use crate::spec::{parse, Defaults};
    use crate::summary::{Direction, RepetitionValue};
    use fslab_model::FindingOutcome;

    /// Seed 001's walk and unlink claims rest on the caches being reclaimed
    /// (its memory cgroup hit in both ext4 cells' stat and unlink phases):
    /// without that in every run, they are not judged, naming it.
    #[test]
    fn seed001s_walk_and_unlink_claims_are_not_judged_when_a_cell_did_not_reclaim() {
        let text = include_str!("../../../experiments/seed001-crc-overhead.toml");
        let e = parse("seed001.toml", text, &Defaults::default()).unwrap();
        let labels: Vec<String> = e.cells.iter().map(|c| c.label.clone()).collect();
        let cell = |l: &str| labels.iter().position(|x| x == l).unwrap() as u32;
        let (on, off) = (
            cell("ext4 -O metadata_csum"),
            cell("ext4 -O ^metadata_csum,uninit_bg"),
        );
        let judge = |off_stat_hits: [f64; 3]| {
            let mut v = Vec::new();
            let mut put = |c: u32, r: u32, m: &str, x: f64| {
                v.push(RepetitionValue {
                    cell: c,
                    repetition: r,
                    metric: m.into(),
                    direction: Direction::Cost,
                    value: x,
                    headline: false,
                    exact: false,
                });
            };
            for r in 1..=3 {
                let i = r as usize - 1;
                put(on, r, "stat time (s)", [494.0, 490.0, 498.0][i]);
                put(off, r, "stat time (s)", [339.0, 341.0, 337.0][i]);
                put(on, r, "unlink time (s)", [959.0, 955.0, 962.0][i]);
                put(off, r, "unlink time (s)", [692.0, 690.0, 695.0][i]);
                put(on, r, "mem stat limit hits", 500.0);
                put(off, r, "mem stat limit hits", off_stat_hits[i]);
                put(on, r, "mem unlink limit hits", 50.0);
                put(off, r, "mem unlink limit hits", 40.0);
            }
            let runs = Runs {
                labels: &labels,
                samples: &v,
                evidence: &[],
                facts: &crate::findings::Facts::default(),
            };
            let out = evaluate_all(&e.findings, &runs);
            let of = |id: &str| out[e.findings.iter().position(|f| f.id == id).unwrap()].clone();
            (of("001-c"), of("001-d"))
        };
        let (walk, unlink) = judge([100.0, 80.0, 90.0]);
        assert_eq!(walk.outcome, FindingOutcome::Reproduced, "{walk:?}");
        assert_eq!(unlink.outcome, FindingOutcome::Reproduced, "{unlink:?}");
        // The cell without checksums kept its caches in one walk.
        let (walk, unlink) = judge([100.0, 0.0, 90.0]);
        assert_eq!(walk.outcome, FindingOutcome::NotJudged, "{walk:?}");
        assert!(walk.why.contains("001-m2 did not happen"), "{}", walk.why);
        assert_eq!(unlink.outcome, FindingOutcome::Reproduced, "{unlink:?}");
    }
}
