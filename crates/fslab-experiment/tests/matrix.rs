//! Experiment files into cells, orders and scaled commands (no root needed).

use std::path::Path;

use fslab_experiment::plan::{
    describe, mount_options, scale_args, scale_fsmark_args, scaled, schedule, workload_argv,
};
use fslab_experiment::spec::{parse, Device, ImageHost, Order};

const FILE: &str = r#"
name = "m"
repetitions = 2
[device]
size = "100T"
image_dir = "/srv"
[machine]
sysctl = { "vm.dirty_ratio" = 20 }
[workload]
kind = "fsmark"
args = ["-n", "100000", "-D", "10000", "-S0", "-L", "63"]
dirs = 8
[[target]]
fs = "ext4"
mkfs_options = ["-O metadata_csum", "-O ^metadata_csum"]
[[target]]
fs = "btrfs"
mount_options = ["", "nodatacow", "ssd"]
sysctl = { "vm.dirty_ratio" = 10 }
[[variant]]
name = "plain"
[[variant]]
name = "dirty5"
sysctl = { "vm.dirty_ratio" = "5" }
workload_args = ["-s", "4096"]
"#;

#[test]
fn axes_expand_into_cells_with_overrides() {
    let e = parse("m.toml", FILE, &Default::default()).unwrap();
    let labels: Vec<&str> = e.cells.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "ext4 -O metadata_csum [plain]",
            "ext4 -O metadata_csum [dirty5]",
            "ext4 -O ^metadata_csum [plain]",
            "ext4 -O ^metadata_csum [dirty5]",
            "btrfs [plain]",
            "btrfs [dirty5]",
            "btrfs -o nodatacow [plain]",
            "btrfs -o nodatacow [dirty5]",
            "btrfs -o ssd [plain]",
            "btrfs -o ssd [dirty5]",
        ]
    );
    assert_eq!(e.cells[2].mkfs_options, ["-O", "^metadata_csum"]);
    // Machine < target < variant for sysctls.
    assert_eq!(e.cells[0].sysctl["vm.dirty_ratio"], "20");
    assert_eq!(e.cells[4].sysctl["vm.dirty_ratio"], "10");
    assert_eq!(e.cells[5].sysctl["vm.dirty_ratio"], "5");
    assert_eq!(e.cells[6].mount_options, "nodatacow");
    assert_eq!(
        e.device,
        Device::Image {
            size: 100 << 40,
            dir: "/srv".into(),
            direct_io: false,
            host: ImageHost::None,
            scheduler: None,
        }
    );
    let argv = workload_argv(&e, &e.cells[1], Path::new("/m"));
    assert_eq!(argv[0], "fsmark");
    assert!(argv.windows(2).any(|w| w == ["-s", "4096"]));
    assert_eq!(argv.iter().filter(|a| *a == "-d").count(), 8);
    assert_eq!(argv.last().unwrap(), "/m/7");
}

#[test]
fn orders_cover_every_pair_once() {
    let mut e = parse("m.toml", FILE, &Default::default()).unwrap();
    let n = e.cells.len() as u32;
    let inter = schedule(&e);
    assert_eq!(inter.len(), (n * 2) as usize);
    assert_eq!(inter[0], (0, 1));
    assert_eq!(
        inter[n as usize],
        (0, 2),
        "interleaved: all cells once before any repeats"
    );
    e.order = Order::Sequential;
    assert_eq!(schedule(&e)[1], (0, 2));
    e.order = Order::Shuffled;
    let a = schedule(&e);
    assert_eq!(a, schedule(&e), "the same seed gives the same order");
    let mut sorted = a.clone();
    sorted.sort();
    let mut want = inter.clone();
    want.sort();
    assert_eq!(sorted, want);
    assert_ne!(a, inter);
}

#[test]
fn scale_keeps_the_memory_limit_unless_told_to_scale_it() {
    let with = |extra: &str| {
        format!(
            "name = \"m\"\n[machine]\nmemory_limit = \"4G\"\n{extra}[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"1000\"]\n[[target]]\nfs = \"xfs\"\n"
        )
    };
    let fixed = scaled(
        &parse("m.toml", &with(""), &Default::default()).unwrap(),
        0.01,
    );
    assert_eq!(fixed.machine.memory_limit, Some(4 << 30));
    let e = parse(
        "m.toml",
        &with("memory_limit_scales = true\n"),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(
        scaled(&e, 0.5).machine.memory_limit,
        Some(2 << 30),
        "4 GiB / 2"
    );
    assert_eq!(
        scaled(&e, 0.01).machine.memory_limit,
        Some(256 << 20),
        "never below 256 MiB"
    );
    assert_eq!(scaled(&e, 1.0).machine.memory_limit, Some(4 << 30));
}

#[test]
fn scale_shrinks_counts_and_sizes() {
    let e = scaled(&parse("m.toml", FILE, &Default::default()).unwrap(), 0.01);
    assert_eq!(
        e.device,
        Device::Image {
            size: 1 << 40,
            dir: "/srv".into(),
            direct_io: false,
            host: ImageHost::None,
            scheduler: None,
        }
    );
    assert_eq!(
        e.workload.args,
        ["-n", "1000", "-D", "100", "-S0", "-L", "63"]
    );
    let tiny = scaled(&parse("m.toml", FILE, &Default::default()).unwrap(), 1e-9);
    assert_eq!(tiny.workload.args[..4], ["-n", "1", "-D", "2"]);
    if let Device::Image { size, .. } = tiny.device {
        assert_eq!(size, 512 << 20, "images stay mountable");
    }
    assert_eq!(
        scale_fsmark_args(&["-n500".into(), "-D8".into()], 0.5),
        ["-n250", "-D4"]
    );
    assert!(describe(&e, 0.01).contains("1 TiB"));
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        scale_args(
            fslab_record::WorkloadKind::of("dbench").unwrap(),
            &v(&["-t", "120", "--warmup", "0", "8"]),
            0.01
        ),
        ["-t", "1", "--warmup", "0", "8"],
        "at least 1 s, and no warm-up stays none"
    );
    assert_eq!(
        scale_args(
            fslab_record::WorkloadKind::of("compilebench").unwrap(),
            &v(&["-i", "30", "-r", "0"]),
            0.1
        ),
        ["-i", "3", "-r", "0"]
    );
}

#[test]
fn ext4_gets_noinit_itable_unless_the_user_chose() {
    let e = parse("m.toml", FILE, &Default::default()).unwrap();
    assert_eq!(mount_options(&e.cells[0]), "noinit_itable");
    let mut c = e.cells[0].clone();
    c.mount_options = "init_itable=10".into();
    assert_eq!(mount_options(&c), "init_itable=10");
    assert_eq!(
        mount_options(&e.cells[6]),
        "nodatacow",
        "btrfs gets nothing added"
    );
}

#[test]
fn the_image_directory_comes_from_the_file_else_from_the_defaults() {
    use fslab_experiment::spec::{Defaults, Device};
    let text = |dir: &str| {
        format!("name = \"d\"\n[device]\nsize = \"1G\"\n{dir}[workload]\nkind = \"fsmark\"\n[[target]]\nfs = \"ext4\"\n")
    };
    let defaults = Defaults {
        image_dir: "/srv/images".into(),
    };
    let dir_of = |t: &str| match parse("d.toml", t, &defaults).unwrap().device {
        Device::Image { dir, .. } => dir,
        other => panic!("{other:?}"),
    };
    assert_eq!(dir_of(&text("")), std::path::Path::new("/srv/images"));
    assert_eq!(
        dir_of(&text("image_dir = \"/var/tmp/x\"\n")),
        std::path::Path::new("/var/tmp/x")
    );
    assert_eq!(
        Defaults::default().image_dir,
        std::path::Path::new("/var/tmp")
    );
}

#[test]
fn drop_caches_once_drops_before_the_run_only_and_a_bad_word_is_named() {
    let with = |v: &str| {
        format!(
            "name = \"m\"\n[machine]\ndrop_caches = {v}\n[workload]\nkind = \"tiotest\"\nargs = [\"-f\", \"10\"]\n[[target]]\nfs = \"ext4\"\n"
        )
    };
    let d = fslab_experiment::spec::Defaults::default();
    let once = parse("m.toml", &with("\"once\""), &d).unwrap();
    assert!(once.machine.drop_caches_once && !once.machine.drop_caches);
    let each = parse("m.toml", &with("true"), &d).unwrap();
    assert!(each.machine.drop_caches && !each.machine.drop_caches_once);
    assert!(describe(&once, 1.0).contains("drop caches before each phase: once, before the run"));
    let bad = parse("m.toml", &with("\"twice\""), &d)
        .unwrap_err()
        .to_string();
    assert!(
        bad.contains("machine.drop_caches") && bad.contains("twice"),
        "{bad}"
    );
}

/// Every built-in experiment in `experiments/`, parsed.
fn built_in_experiments() -> Vec<fslab_experiment::spec::Experiment> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 7, "{files:?}");
    files
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            parse(&p.display().to_string(), &text, &Default::default()).unwrap()
        })
        .collect()
}

#[test]
fn typed_scale_gives_every_built_in_cell_the_options_the_argv_scale_gave() {
    let mnt = Path::new("/run/fslab/mnt-x");
    let mut checked = 0;
    for exp in built_in_experiments() {
        for f in [0.01, 0.001, 0.5, 2.0] {
            let old = scaled(&exp, f);
            for (c, c_old) in exp.cells.iter().zip(&old.cells) {
                let kind = fslab_workload::Kind::of(exp.workload.kind.name()).unwrap();
                let argv = workload_argv(&old, c_old, mnt);
                let by_argv = kind.parse(&argv[1..]).unwrap();
                let mut typed = kind.parse(&workload_argv(&exp, c, mnt)[1..]).unwrap();
                typed.scale(f);
                assert_eq!(
                    typed.to_json(),
                    by_argv.to_json(),
                    "{} cell {} at {f}",
                    exp.name,
                    c.index
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 40, "{checked}");
}
