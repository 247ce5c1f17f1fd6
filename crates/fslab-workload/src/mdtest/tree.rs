//! mdtest's directory tree and its names: which directory a task works in
//! during each phase, what its items are called, where item number K
//! lives, and the order in which create and remove walk the tree.
//!
//! Directory number D's children are D x b + 1 .. D x b + b (the root is
//! 0); each directory holds the items D x I .. D x I + I - 1 (I items per
//! directory). Directories are named `BASE.D` and nested as numbered, all
//! under the tree's root `BASE.0`, where BASE is `mdtest_tree` (one tree
//! shared by all tasks) or `mdtest_tree.R` (-u: task R's own tree).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::options::Options;
use fslab_sys::item_path::ItemPath;

/// The operations, in mdtest's order of phases within an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Create,
    Stat,
    Read,
    Rename,
    Remove,
}

impl Op {
    /// The task shift of the items' names: -N x this (mdtest's mk, stat,
    /// read and rm names; rename uses the stat name).
    fn name_shift(self) -> u64 {
        match self {
            Op::Create => 0,
            Op::Stat | Op::Rename => 1,
            Op::Read => 2,
            Op::Remove => 3,
        }
    }

    /// The task shift of the working tree with -u: mdtest's "chdir" (used
    /// to create), stat, read and rm directories.
    fn dir_shift(self) -> u64 {
        self.name_shift() + 1
    }
}

/// The two kinds of items.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Dir,
    File,
}

impl Kind {
    /// The item's name before its task's and number: `dir.` / `file.`.
    fn prefix(self) -> &'static str {
        match self {
            Kind::Dir => "dir.",
            Kind::File => "file.",
        }
    }
}

/// One task's view of the tree in one iteration.
#[derive(Debug, Clone)]
pub struct Tree<'o> {
    pub o: &'o Options,
    pub rank: u64,
    pub size: u64,
    /// `DIR/test-dir.ITER-0`.
    pub testdir: PathBuf,
}

impl<'o> Tree<'o> {
    pub fn new(o: &'o Options, rank: usize, size: usize, iteration: u64) -> Tree<'o> {
        Tree {
            o,
            rank: rank as u64,
            size: size as u64,
            testdir: o.dir.join(format!("test-dir.{iteration}-0")),
        }
    }

    /// The directories' base name: `mdtest_tree` or, with -u, this task's
    /// `mdtest_tree.R` (also inside a neighbour's tree, as mdtest names them).
    pub fn base(&self) -> String {
        if self.o.unique_dir {
            format!("mdtest_tree.{}", self.rank)
        } else {
            "mdtest_tree".into()
        }
    }

    fn shifted(&self, shift: u64) -> u64 {
        (self.rank + shift * self.o.nstride) % self.size
    }

    /// The root of the tree this task works in during `op`.
    pub fn work_dir(&self, op: Op) -> PathBuf {
        self.testdir.join(self.root_name(op))
    }

    /// The name of the tree's root this task works in during `op`.
    fn root_name(&self, op: Op) -> String {
        if self.o.unique_dir {
            format!("mdtest_tree.{}.0", self.shifted(op.dir_shift()))
        } else {
            "mdtest_tree.0".into()
        }
    }

    /// Item `num`'s name during `op`: `file.mdtest.T.K` with T the task
    /// whose items `op` works on.
    pub fn item_name(&self, op: Op, kind: Kind, num: u64) -> String {
        format!(
            "{}mdtest.{}.{num}",
            kind.prefix(),
            self.shifted(op.name_shift())
        )
    }

    /// Directory `d`'s path under the tree's root ("" for the root).
    pub fn dir_path(&self, d: u64) -> PathBuf {
        let base = self.base();
        let mut parts = Vec::new();
        if d > 0 {
            let mut p = d;
            parts.push(p);
            while p > self.o.branch {
                p = (p - 1) / self.o.branch;
                parts.push(p);
            }
        }
        parts.iter().rev().map(|p| format!("{base}.{p}")).collect()
    }

    /// Sets `path`'s stem to what every name of `op`'s items of `kind` in
    /// directory `rel` (under the tree's root) starts with:
    /// `TESTDIR/ROOT/REL/file.mdtest.T.`; the item's number follows
    /// ([`ItemPath::numbered`]).
    pub fn item_stem(&self, op: Op, kind: Kind, rel: &Path, path: &mut ItemPath) {
        path.stem(&self.testdir)
            .dir(self.root_name(op).as_bytes())
            .dir(rel.as_os_str().as_bytes())
            .text(kind.prefix().as_bytes())
            .text(b"mdtest.")
            .number(self.shifted(op.name_shift()))
            .text(b".");
    }

    /// The directory (under the tree's root) that holds item `num` of the
    /// stat, read and rename phases (its number already moved to the
    /// leaves with -L).
    pub fn item_parent(&self, num: u64) -> u64 {
        num / self.o.items_per_dir
    }

    /// Where item `num` of the stat, read and rename phases lives (its
    /// number already moved to the leaves with -L).
    pub fn item_path(&self, op: Op, kind: Kind, num: u64) -> PathBuf {
        let mut p = ItemPath::new();
        self.item_stem(op, kind, &self.dir_path(self.item_parent(num)), &mut p);
        p.numbered(num);
        p.last().to_path_buf()
    }

    /// The directories that hold items, in create and remove's walk
    /// (depth first, each directory before its children), with their
    /// first item's number.
    pub fn item_dirs(&self) -> Vec<(PathBuf, u64)> {
        let mut out = Vec::new();
        for (d, depth) in self.walk() {
            let holds = !self.o.leaf_only || depth == self.o.depth;
            if holds {
                out.push((self.dir_path(d), d * self.o.items_per_dir));
            }
        }
        out
    }

    /// Every directory number with its depth, depth first.
    pub fn walk(&self) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        self.walk_from(0, 0, &mut out);
        out
    }

    fn walk_from(&self, d: u64, depth: u32, out: &mut Vec<(u64, u32)>) {
        out.push((d, depth));
        if depth < self.o.depth {
            for i in 0..self.o.branch {
                self.walk_from(d * self.o.branch + 1 + i, depth + 1, out);
            }
        }
    }

    /// The tree's own directories, as tree creation makes them (each
    /// before its children), under the test directory.
    pub fn tree_dirs(&self) -> Vec<PathBuf> {
        let root = self.testdir.join(format!("{}.0", self.base()));
        self.walk()
            .into_iter()
            .map(|(d, _)| root.join(self.dir_path(d)))
            .collect()
    }
}

/// The -x file's count, as mdtest writes it (a bare number).
pub fn read_count(path: &Path) -> crate::Result<u64> {
    // A -x file that is not there is bad input (exit 2), named.
    let text = std::fs::read_to_string(path).map_err(|e| {
        crate::opt(
            "-x",
            path.display(),
            format!("cannot read the stonewall status: {e}"),
        )
    })?;
    text.trim().parse().map_err(|_| {
        crate::opt(
            "-x",
            path.display(),
            format!("holds {:?}, not a count of items", text.trim()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        a: super::super::options::MdtestArgs,
    }

    fn opts(args: &str) -> Options {
        let argv = std::iter::once("mdtest").chain(args.split_whitespace());
        Cli::try_parse_from(argv).unwrap().a.validate().unwrap()
    }

    #[test]
    fn directories_nest_as_numbered_and_items_follow_them() {
        let o = opts("-I 2 -z 2 -b 2 -d /m");
        let t = Tree::new(&o, 0, 1, 0);
        assert_eq!(t.dir_path(0), PathBuf::new());
        assert_eq!(t.dir_path(2), Path::new("mdtest_tree.2"));
        assert_eq!(t.dir_path(5), Path::new("mdtest_tree.2/mdtest_tree.5"));
        let walk: Vec<u64> = t.walk().iter().map(|w| w.0).collect();
        assert_eq!(walk, [0, 1, 3, 4, 2, 5, 6]);
        assert_eq!(
            t.item_path(Op::Stat, Kind::File, 7),
            Path::new("/m/test-dir.0-0/mdtest_tree.0/mdtest_tree.1/mdtest_tree.3/file.mdtest.0.7")
        );
        let chain = opts("-I 2 -z 2 -d /m");
        let t = Tree::new(&chain, 0, 1, 0);
        assert_eq!(t.dir_path(2), Path::new("mdtest_tree.1/mdtest_tree.2"));
    }

    #[test]
    fn with_u_and_n_each_phase_works_on_a_neighbours_tree_and_names() {
        let o = opts("-n 4 -u -N 1 -d /m");
        let t = Tree::new(&o, 0, 3, 1);
        // Create in tree 1 with own names; stat tree 2 holding task 1's.
        assert_eq!(
            t.work_dir(Op::Create),
            Path::new("/m/test-dir.1-0/mdtest_tree.1.0")
        );
        assert_eq!(t.item_name(Op::Create, Kind::File, 3), "file.mdtest.0.3");
        assert_eq!(
            t.item_path(Op::Stat, Kind::Dir, 3),
            Path::new("/m/test-dir.1-0/mdtest_tree.2.0/dir.mdtest.1.3")
        );
        assert_eq!(t.item_name(Op::Remove, Kind::File, 0), "file.mdtest.0.0");
        assert_eq!(
            t.work_dir(Op::Remove),
            Path::new("/m/test-dir.1-0/mdtest_tree.1.0")
        );
        let shared = opts("-n 4 -N 1 -d /m");
        let t = Tree::new(&shared, 2, 3, 0);
        assert_eq!(
            t.work_dir(Op::Read),
            Path::new("/m/test-dir.0-0/mdtest_tree.0")
        );
        assert_eq!(t.item_name(Op::Read, Kind::File, 1), "file.mdtest.1.1");
    }

    #[test]
    fn leaf_only_puts_items_in_the_leaves_alone() {
        let o = opts("-I 3 -z 1 -b 2 -L -d /m");
        let t = Tree::new(&o, 0, 1, 0);
        let dirs = t.item_dirs();
        assert_eq!(
            dirs,
            vec![
                (PathBuf::from("mdtest_tree.1"), 3),
                (PathBuf::from("mdtest_tree.2"), 6)
            ]
        );
        assert_eq!(o.leaf_offset(), 3);
        assert_eq!(t.tree_dirs().len(), 3);
    }
}
