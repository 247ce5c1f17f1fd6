//! compilebench's unit tests.

use super::*;

#[test]
fn kinds_index_their_results_in_table_order() {
    for (i, k) in Kind::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i, "{k:?}");
    }
    assert_eq!(Kind::ALL[0].label(), "intial create");
}

#[test]
fn a_kind_averages_its_runs_rates_as_compilebench() {
    let mut r = KindResult {
        test: "create".into(),
        unit: fslab_model::Unit::MibPerSec,
        ..Default::default()
    };
    assert_eq!(r.line(), "no runs for create");
    let mib = 1u64 << 20;
    // 10 MiB in 1 s, then 10 MiB in 4 s: compilebench averages 10 and 2.5.
    r.add(
        &Took {
            bytes: 10 * mib,
            seconds: 1.0,
            usr_s: 0.5,
            sys_s: 1.0,
        },
        Kind::Create,
    );
    r.add(
        &Took {
            bytes: 10 * mib,
            seconds: 4.0,
            usr_s: 0.5,
            sys_s: 3.0,
        },
        Kind::Create,
    );
    assert_eq!(
        r.line(),
        "create total runs 2 avg 6.25 MB/s (user 0.50s sys 2.00s)"
    );
}
