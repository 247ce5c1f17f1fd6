//! Property tests over everything an experiment file feeds fslab: the
//! file's parser, the safety check and every workload's argument parser
//! never panic, and every refusal is one line.

use fslab_experiment::safety::{check, Permissions};
use fslab_experiment::spec::{parse, WorkloadRef};
use proptest::prelude::*;

/// Words that hostile and careless files use, mixed with anything at all.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("/dev/loop0".to_string()),
        Just("{dir}".to_string()),
        Just("{dir}/../..".to_string()),
        Just("{device}".to_string()),
        Just("..".to_string()),
        Just("-d".to_string()),
        Just("-n".to_string()),
        Just("--db".to_string()),
        Just("--json".to_string()),
        Just("-l".to_string()),
        Just("-D".to_string()),
        Just("1".to_string()),
        Just("-1".to_string()),
        Just("1E".to_string()),
        Just("abc".to_string()),
        "[ -~]{0,12}",
        "\\PC{0,8}",
    ]
}

fn toml_str(s: &str) -> String {
    format!("{s:?}")
}

fn list(words: &[String]) -> String {
    words
        .iter()
        .map(|w| toml_str(w))
        .collect::<Vec<_>>()
        .join(", ")
}

fn one_line(e: &str) {
    assert!(!e.contains('\n'), "a refusal spans lines: {e:?}");
    assert!(!e.trim().is_empty(), "an empty refusal");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_text_parses_or_is_refused_in_one_line(text in "\\PC{0,400}") {
        if let Err(e) = parse("x.toml", &text, &Default::default()) {
            one_line(&e.to_string());
        }
    }

    #[test]
    fn any_experiment_is_checked_without_panic(
        kind in prop::sample::select(fslab_workload::plugin::all().into_iter().map(WorkloadRef::name).collect::<Vec<_>>()),
        fs in prop::sample::select(vec!["ext4", "xfs", "btrfs", "ext3", "nosuchfs", "ext4", "a b"]),
        args in prop::collection::vec(word(), 0..8),
        mkfs in prop::collection::vec(word(), 0..3),
        mount in prop::collection::vec(word(), 0..3),
        after in prop::collection::vec(word(), 0..4),
        sysctl_name in prop_oneof![
            4 => Just("vm.dirty_ratio".to_string()),
            1 => Just("kernel.core_pattern".to_string()),
            1 => Just(".tmp.x".to_string()),
            1 => "[a-z._-]{0,20}",
        ],
        sysctl_value in prop_oneof![3 => "[0-9]{1,3}", 1 => "[ -~]{0,10}"],
        dirs in 0i64..4,
    ) {
        let text = format!(
            "name = \"f\"\n[device]\nsize = \"1G\"\nimage_dir = \"/var/tmp\"\n[machine]\nsysctl = {{ {} = {} }}\n\
             [workload]\nkind = {}\nargs = [{}, \"{{dir}}/f\"]\ndirs = {}\n\
             [[target]]\nfs = {}\nmkfs_options = [{}]\nmount_options = [{}]\nafter_mkfs = [{}]\n",
            toml_str(&sysctl_name),
            toml_str(&sysctl_value),
            toml_str(kind),
            list(&args),
            dirs.max(1),
            toml_str(fs),
            toml_str(&mkfs.join(" ")),
            toml_str(&mount.join(",")),
            toml_str(&after.join(" ")),
        );
        match parse("f.toml", &text, &Default::default()) {
            Err(e) => one_line(&e.to_string()),
            Ok(exp) => {
                if let Err(e) = check(&exp, &Permissions::default()) {
                    one_line(&e.to_string());
                }
            }
        }
    }

    #[test]
    fn every_workload_parser_refuses_in_one_line(
        kind in prop::sample::select(fslab_workload::plugin::all().into_iter().map(WorkloadRef::name).collect::<Vec<_>>()),
        args in prop::collection::vec(word(), 0..10),
    ) {
        let dir = std::env::temp_dir();
        if let Err(e) = fslab_workload::args::check_experiment_args(WorkloadRef::of(kind).unwrap(), &args, 0, &dir) {
            prop_assert!(e.is_usage(), "{e:?}");
            one_line(&e.to_string());
        }
    }
}
