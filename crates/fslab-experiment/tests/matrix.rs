//! Experiment files into cells, orders and scaled commands (no root needed).

use std::path::Path;

use fslab_experiment::plan::{
    cell_job, child_spec, describe, mount_options, scaled, schedule, shown_command_line, CellPlaces,
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
    let argv = shown_command_line(&e, &e.cells[1], Path::new("/m"));
    assert_eq!(argv[0], "fsmark");
    assert!(argv.windows(2).any(|w| w == ["-s", "4096"]));
    assert_eq!(argv.iter().filter(|a| *a == "-d").count(), 8);
    assert!(argv.windows(2).any(|w| w == ["-d", "/m/7"]), "{argv:?}");
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
    // A warm-up: every cell once, first, as repetition 0, in every order.
    e.warm_up = true;
    for order in [Order::Interleaved, Order::Sequential, Order::Shuffled] {
        e.order = order;
        let s = schedule(&e);
        assert_eq!(s.len(), (n * 3) as usize);
        let first: Vec<(u32, u32)> = (0..n).map(|c| (c, 0)).collect();
        assert_eq!(s[..n as usize], first[..], "{order:?}");
        assert!(s[n as usize..].iter().all(|&(_, r)| r > 0));
    }
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
    let m = Path::new("/m");
    let o = |e: &fslab_experiment::spec::Experiment, k: &str| {
        cell_job(e, &e.cells[0], m).unwrap().to_json()["options"][k].clone()
    };
    assert_eq!(
        (o(&e, "files"), o(&e, "subdirs")),
        (1000.into(), 100.into())
    );
    assert_eq!((o(&e, "loops"), o(&e, "sync")), (63.into(), 0.into()));
    let tiny = scaled(&parse("m.toml", FILE, &Default::default()).unwrap(), 1e-9);
    assert_eq!(
        (o(&tiny, "files"), o(&tiny, "subdirs")),
        (1.into(), 2.into())
    );
    if let Device::Image { size, .. } = tiny.device {
        assert_eq!(size, 512 << 20, "images stay mountable");
    }
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let typed = |kind: &str, args: &[&str], f: f64| {
        let mut job = fslab_workload::WorkloadRef::of(kind)
            .unwrap()
            .parse(&v(args))
            .unwrap();
        job.scale(f);
        job.to_json()["options"].clone()
    };
    let fs = typed("fsmark", &["-n500", "-D8", "-d", "/m"], 0.5);
    assert_eq!((&fs["files"], &fs["subdirs"]), (&250.into(), &4.into()));
    assert!(describe(&e, 0.01).contains("1 TiB"));
    let db = typed("dbench", &["-t", "120", "--warmup", "0", "8"], 0.01);
    assert_eq!(
        (&db["time"], &db["warmup"], &db["nprocs"]),
        (&1.into(), &0.into(), &8.into()),
        "at least 1 s, and no warm-up stays none"
    );
    let cb = typed("compilebench", &["-D", "/m", "-i", "30", "-r", "0"], 0.1);
    assert_eq!((&cb["initial"], &cb["runs"]), (&3.into(), &0.into()));
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

/// Every built-in experiment's cells, at several scales: the command line
/// people are shown parses back to the job that runs.
#[test]
fn every_built_in_cells_shown_command_line_is_the_job_that_runs() {
    let mnt = Path::new("/run/fslab/mnt-x");
    let mut checked = 0;
    for exp in built_in_experiments() {
        for f in [1.0, 0.01, 0.001, 0.5, 2.0] {
            let e = scaled(&exp, f);
            for c in &e.cells {
                let job = cell_job(&e, c, mnt).unwrap();
                let argv = shown_command_line(&e, c, mnt);
                let back = e.workload.kind.parse(&argv[1..]).unwrap();
                assert_eq!(
                    back.to_json(),
                    job.to_json(),
                    "{} cell {} at {f}: {argv:?}",
                    e.name,
                    c.index
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
    let exp = built_in_experiments()
        .into_iter()
        .find(|e| e.name == "seed000-fsmark-sparse")
        .unwrap();
    let dirs: Vec<String> = (0..8)
        .map(|i| format!("-d {}/{i}", mnt.display()))
        .collect();
    let argv = shown_command_line(&exp, &exp.cells[0], mnt).join(" ");
    assert_eq!(
        argv,
        format!(
            "fsmark {} -n 100000 -s 0 -S 0 -D 10000 -L 63 -l /dev/null",
            dirs.join(" ")
        ),
        "the job as it runs, in the workload's order, its defaults left out"
    );
    let small = scaled(&exp, 0.01);
    let argv = shown_command_line(&small, &small.cells[0], mnt);
    assert!(
        argv.join(" ")
            .ends_with("-n 1000 -s 0 -S 0 -D 100 -L 63 -l /dev/null"),
        "the scaled values: {argv:?}"
    );
    let text = describe(&small, 0.01);
    assert!(
        text.contains("scaled:   -n 100000 -> 1000, -D 10000 -> 100"),
        "{text}"
    );
    let seed004 = built_in_experiments()
        .into_iter()
        .find(|e| e.name == "seed004-large-dir")
        .unwrap();
    let s4 = scaled(&seed004, 0.001);
    let job = cell_job(&s4, &s4.cells[0], mnt).unwrap();
    assert_eq!(
        job.to_json()["options"]["numbers"],
        serde_json::json!(["20000"])
    );
}

/// The options `fslab run` adds to what a person would type, which the
/// child's harness carries and no shown command line holds.
const HARNESS_FLAGS: [&str; 7] = [
    "--text-to",
    "--progress",
    "--die-with-parent",
    "--phase-acks",
    "--cgroup",
    "--json",
    "--probes",
];

#[test]
fn the_child_gets_its_job_typed_and_its_harness_beside_it() {
    let text = "name = \"c\"\n[device]\nkind = \"directory\"\npath = \"/srv/x\"\n\
                [machine]\ndrop_caches = true\n\
                [workload]\nkind = \"dbench\"\nargs = [\"-t\", \"1\", \"-D\", \"{dir}\", \"8\"]\n";
    let exp = parse("c.toml", text, &Default::default()).unwrap();
    let mnt = Path::new("/m");
    let places = CellPlaces {
        text_to: Some("/run/x.txt".into()),
        cgroup: Some("/sys/fs/cgroup/memory/x".into()),
    };
    let spec = child_spec(&exp, &exp.cells[0], mnt, places).unwrap();
    let h = &spec.harness;
    assert!(h.json && h.progress && h.die_with_parent && h.acks);
    assert_eq!(h.probes, "none", "fslab run runs them beside the workload");
    assert_eq!(h.drop_caches, fslab_model::protocol::DropCaches::EachPhase);
    assert_eq!(
        h.cgroup.as_deref(),
        Some(Path::new("/sys/fs/cgroup/memory/x"))
    );
    assert_eq!(h.text_to.as_deref(), Some(Path::new("/run/x.txt")));
    assert_eq!(h.command_line, ["dbench", "-t", "1", "-D", "/m/0", "8"]);
    assert_eq!(h.command_line, shown_command_line(&exp, &exp.cells[0], mnt));
    // Serialized once, read back once: the same job and harness.
    let json = serde_json::to_string(&spec).unwrap();
    let back: fslab_workload::ChildSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back.job.to_json(), spec.job.to_json());
    assert_eq!(&back.harness, h);
    let parsed = fslab_workload::WorkloadRef::of("dbench")
        .unwrap()
        .parse(&h.command_line[1..])
        .unwrap();
    assert_eq!(back.job.to_json(), parsed.to_json());
    let bad = serde_json::from_str::<fslab_workload::ChildSpec>(
        &json.replace("\"workload\":\"dbench\"", "\"workload\":\"nosuch\""),
    )
    .unwrap_err();
    assert!(
        bad.to_string().contains("unknown workload \"nosuch\""),
        "{bad}"
    );
    // On MPI ranks each rank runs the experiment's probes itself, and no
    // phase waits for an answer.
    let ranks = parse(
        "r.toml",
        &text.replace(
            "[workload]\n",
            "[workload]\nranks = 2\nprobes = [\"cpu\"]\n",
        ),
        &Default::default(),
    )
    .unwrap();
    let spec = child_spec(&ranks, &ranks.cells[0], mnt, CellPlaces::default()).unwrap();
    assert_eq!(
        (spec.harness.probes.as_str(), spec.harness.acks),
        ("cpu", false)
    );
}

#[test]
fn no_shown_command_line_holds_what_fslab_run_adds() {
    let mnt = Path::new("/run/fslab/mnt-x");
    for exp in built_in_experiments() {
        let dry = describe(&exp, 1.0);
        for c in &exp.cells {
            let shown = shown_command_line(&exp, c, mnt);
            for flag in HARNESS_FLAGS {
                assert!(
                    !shown.iter().any(|a| a.starts_with(flag)),
                    "{} cell {}: {flag} in {shown:?}",
                    exp.name,
                    c.index
                );
            }
        }
        for line in dry.lines().filter(|l| l.contains("workload: ")) {
            for flag in HARNESS_FLAGS {
                assert!(!line.contains(flag), "{}: {line}", exp.name);
            }
        }
    }
}
