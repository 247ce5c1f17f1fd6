//! The option sets on which the originals that are not packaged are traced
//! once by hand (`record_reference`) and fslab is traced in every test run:
//! the original's arguments and fslab's, `{dir}` standing for the case's
//! directory.

use std::path::Path;

/// One option set: the same work for the original and for fslab.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub label: &'static str,
    pub original: &'static [&'static str],
    pub fslab: &'static [&'static str],
}

fn fill(args: &[&str], dir: &Path) -> Vec<String> {
    let d = dir.to_string_lossy();
    args.iter().map(|a| a.replace("{dir}", &d)).collect()
}

impl Case {
    pub fn original_args(&self, dir: &Path) -> Vec<String> {
        fill(self.original, dir)
    }

    pub fn fslab_args(&self, dir: &Path) -> Vec<String> {
        fill(self.fslab, dir)
    }
}

const TIOTEST: &[Case] = &[
    Case {
        label: "2 threads, 1 MiB each, 100 random, 4 KiB",
        original: &[
            "-t", "2", "-f", "1", "-r", "100", "-b", "4096", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-t", "2", "-f", "1", "-r", "100", "-b", "4096", "-d", "{dir}",
        ],
    },
    Case {
        label: "1 thread, 2 MiB, 50 random, 8 KiB",
        original: &[
            "-t", "1", "-f", "2", "-r", "50", "-b", "8192", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-t", "1", "-f", "2", "-r", "50", "-b", "8192", "-d", "{dir}",
        ],
    },
    Case {
        label: "3 threads, random write and random read skipped",
        original: &[
            "-t", "3", "-f", "1", "-r", "64", "-b", "4096", "-k", "1", "-k", "3", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-t", "3", "-f", "1", "-r", "64", "-b", "4096", "-k", "1", "-k", "3", "-d",
            "{dir}",
        ],
    },
];

/// tiotest 0.3.5 built with its Makefile's default `-DUSE_MMAP`: the
/// sequential tests go through a mapping, as fslab's `-M` does.
const TIOTEST_MMAP: &[Case] = &[
    Case {
        label: "2 threads, 1 MiB each, 100 random, 4 KiB, mapped",
        original: &[
            "-t", "2", "-f", "1", "-r", "100", "-b", "4096", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-M", "-t", "2", "-f", "1", "-r", "100", "-b", "4096", "-d", "{dir}",
        ],
    },
    Case {
        label: "1 thread, 2 MiB, 50 random, 8 KiB, mapped",
        original: &[
            "-t", "1", "-f", "2", "-r", "50", "-b", "8192", "-d", "{dir}",
        ],
        fslab: &[
            "tiotest", "-M", "-t", "1", "-f", "2", "-r", "50", "-b", "8192", "-d", "{dir}",
        ],
    },
];

const CREATEMANY: &[Case] = &[
    Case {
        label: "-m",
        original: &["-m", "{dir}/f", "300"],
        fslab: &["createmany", "-m", "{dir}/f", "300"],
    },
    Case {
        label: "-o",
        original: &["-o", "{dir}/f", "300"],
        fslab: &["createmany", "-o", "{dir}/f", "300"],
    },
    Case {
        label: "-d",
        original: &["-d", "{dir}/f", "300"],
        fslab: &["createmany", "-d", "{dir}/f", "300"],
    },
    Case {
        label: "-m -u",
        original: &["-m", "-u", "{dir}/f", "300"],
        fslab: &["createmany", "-m", "-u", "{dir}/f", "300"],
    },
    Case {
        label: "-o with a format, start and count",
        original: &["-o", "{dir}/x%05d.dat", "1000", "250"],
        fslab: &["createmany", "-o", "{dir}/x%05d.dat", "1000", "250"],
    },
];

const COMPILEBENCH: &[Case] = &[
    Case {
        label: "one initial tree, no runs",
        original: &["-D", "{dir}", "-i", "1", "-r", "0", "-n"],
        fslab: &["compilebench", "-D", "{dir}", "-i", "1", "-r", "0", "-n"],
    },
    Case {
        label: "two initial trees, 12 random operations",
        original: &["-D", "{dir}", "-i", "2", "-r", "12", "-n"],
        fslab: &["compilebench", "-D", "{dir}", "-i", "2", "-r", "12", "-n"],
    },
    Case {
        label: "one tree, 64 KiB buffer, 4 random operations",
        original: &["-D", "{dir}", "-i", "1", "-r", "4", "-n", "-b", "65536"],
        fslab: &[
            "compilebench",
            "-D",
            "{dir}",
            "-i",
            "1",
            "-r",
            "4",
            "-n",
            "-b",
            "65536",
        ],
    },
];

const ALLOCTEST: &[Case] = &[
    Case {
        label: "8 MiB, random writes",
        original: &["{dir}/big", "8388608"],
        fslab: &["alloctest", "--no-readback", "{dir}/big", "8M"],
    },
    Case {
        label: "4 MiB, touched first (-t)",
        original: &["-t", "{dir}/big", "4194304"],
        fslab: &["alloctest", "--no-readback", "-t", "{dir}/big", "4M"],
    },
    Case {
        label: "4 MiB, dirtied downwards first (-w -d)",
        original: &["-w", "-d", "{dir}/big", "4194304"],
        fslab: &["alloctest", "--no-readback", "-w", "-d", "{dir}/big", "4M"],
    },
];

/// hpc/ior's mdtest: every item kind and phase, the tree's shapes, the
/// syncs, create only over iterations, and both SUMMARY tables; one
/// process (the original as an MPI singleton).
const MDTEST: &[Case] = &[
    Case {
        label: "files and directories, every phase",
        original: &["-n", "20", "-d", "{dir}/m"],
        fslab: &["mdtest", "-n", "20", "-d", "{dir}/m"],
    },
    Case {
        label: "files, 100 bytes written and read",
        original: &["-n", "20", "-F", "-w", "100", "-e", "100", "-d", "{dir}/m"],
        fslab: &[
            "mdtest", "-n", "20", "-F", "-w", "100", "-e", "100", "-d", "{dir}/m",
        ],
    },
    Case {
        label: "directories only",
        original: &["-n", "20", "-D", "-d", "{dir}/m"],
        fslab: &["mdtest", "-n", "20", "-D", "-d", "{dir}/m"],
    },
    Case {
        label: "a tree of depth 2 and branching 2, 3 items a directory, -u",
        original: &["-I", "3", "-z", "2", "-b", "2", "-u", "-d", "{dir}/m"],
        fslab: &[
            "mdtest", "-I", "3", "-z", "2", "-b", "2", "-u", "-d", "{dir}/m",
        ],
    },
    Case {
        label: "files at the leaves only",
        original: &["-I", "4", "-z", "1", "-b", "3", "-L", "-F", "-d", "{dir}/m"],
        fslab: &[
            "mdtest", "-I", "4", "-z", "1", "-b", "3", "-L", "-F", "-d", "{dir}/m",
        ],
    },
    Case {
        label: "-y fsync and -Y sync",
        original: &["-n", "10", "-F", "-w", "10", "-y", "-Y", "-d", "{dir}/m"],
        fslab: &[
            "mdtest", "-n", "10", "-F", "-w", "10", "-y", "-Y", "-d", "{dir}/m",
        ],
    },
    Case {
        label: "create only, 2 iterations",
        original: &["-n", "10", "-F", "-C", "-i", "2", "-d", "{dir}/m"],
        fslab: &["mdtest", "-n", "10", "-F", "-C", "-i", "2", "-d", "{dir}/m"],
    },
    Case {
        label: "rate and time tables",
        original: &["-n", "10", "-P", "-d", "{dir}/m"],
        fslab: &["mdtest", "-n", "10", "-P", "-d", "{dir}/m"],
    },
];

/// The lines a workload prints when each operation ends, for the originals
/// whose calls are compared operation by operation
/// ([`crate::trace::Trace::by_line`]); empty for the others.
pub fn op_lines(name: &str) -> &'static [&'static str] {
    match name {
        "compilebench" => &[
            "using working directory",
            "native ",
            "create dir ",
            "patch dir ",
            "compile dir ",
            "clean ",
            "read dir ",
            "stat dir ",
            "delete ",
        ],
        _ => &[],
    }
}

/// The option sets of a workload, by the original's name.
pub fn cases(name: &str) -> Option<&'static [Case]> {
    match name {
        "tiotest" => Some(TIOTEST),
        "tiotest-mmap" => Some(TIOTEST_MMAP),
        "createmany" => Some(CREATEMANY),
        "compilebench" => Some(COMPILEBENCH),
        "alloctest" => Some(ALLOCTEST),
        "mdtest" => Some(MDTEST),
        _ => None,
    }
}

/// Per operation kind (the line's label), the compared counts of every
/// operation of that kind, summed.
pub fn per_op(
    t: &crate::trace::Trace,
    marker: &str,
    labels: &[&str],
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> {
    let mut out: std::collections::BTreeMap<String, crate::trace::Counts> = Default::default();
    if labels.is_empty() {
        return Default::default();
    }
    // compilebench's ordering trees (native-N) belong to no timed
    // operation; the original removes its tree after printing its line.
    let mut t = t.clone();
    for calls in t.tasks.values_mut() {
        calls.retain(|c| !c.rest.contains("/native-"));
    }
    for (label, c) in t.by_line(marker, labels) {
        out.entry(label.trim().to_string()).or_default().merge(&c);
    }
    out.into_iter().map(|(k, v)| (k, v.compared())).collect()
}
