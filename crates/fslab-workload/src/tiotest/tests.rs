//! tiotest's unit tests.

use super::*;

#[test]
fn table_rows_have_tiotests_widths() {
    let o = TioArgs {
        threads: 8,
        mb: 1,
        random_ops: 1,
        block: 4096,
        dirs: vec!["/tmp".into()],
        skip: vec![],
        no_latency: false,
        terse: false,
        mmap: false,
        sequential_writers: false,
        sync: false,
        direct: false,
        drop: false,
        common: CommonArgs {
            json: false,
            output: None,
            probes: "none".into(),
            drop_caches: false,
            drop_caches_once: false,
        },
    }
    .validate()
    .unwrap();
    let mut w = TestResult {
        item: "Write".into(),
        bytes: 9000 << 20,
        seconds: 189.1,
        mb_per_s: 47.599,
        usr_cpu_pct: 0.8,
        sys_cpu_pct: 12.3,
        ..Default::default()
    };
    w.avg_latency_ms = 0.077;
    w.max_latency_ms = 2569.866;
    w.pct_over_2s = 0.00009;
    let rw = TestResult {
        item: "Random Write".into(),
        bytes: 59 << 20,
        seconds: 17.6,
        mb_per_s: 3.327,
        usr_cpu_pct: 0.2,
        sys_cpu_pct: 89.1,
        ..Default::default()
    };
    let t = tables(&o, &[w, rw]);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[0], "Tiotest results for 8 concurrent io threads:");
    assert_eq!(
        lines[4],
        "| Write        9000 MBs |  189.1 s |  47.599 MB/s |   0.8 %  |  12.3 % |"
    );
    assert_eq!(
        lines[5],
        "| Random Write   59 MBs |   17.6 s |   3.327 MB/s |   0.2 %  |  89.1 % |"
    );
    assert_eq!(
        lines[11],
        "| Write        |        0.077 ms |     2569.866 ms |  0.00009 |   0.00000 |"
    );
    assert_eq!(
        lines[13],
        "|--------------+-----------------+-----------------+----------+-----------|"
    );
    assert!(lines[14].starts_with("| Total        |"));
}
