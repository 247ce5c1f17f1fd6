//! compilebench's datasets: the names and sizes of the files of a Linux
//! 2.6.20 tree in four states (unpatched, patched, and each compiled),
//! embedded (gzip) from compilebench's own files, reduced and ordered as
//! compilebench does before it starts.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use fslab_stats::rng::{PyRandom, XorShift64};

/// One dataset: (path in the tree, size in bytes), in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dataset(pub Vec<(String, u64)>);

impl Dataset {
    /// Parses `path size` lines. A path given twice keeps its first place
    /// and its last size, as a Python dict does.
    pub fn parse(name: &str, text: &str) -> Result<Dataset, crate::LineError> {
        let mut v: Vec<(String, u64)> = Vec::new();
        let mut at: HashMap<String, usize> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let mut w = line.split_whitespace();
            let (Some(p), Some(s)) = (w.next(), w.next()) else {
                if line.trim().is_empty() {
                    continue;
                }
                return Err(line_error(name, i + 1, "not \"PATH SIZE\""));
            };
            let size: u64 = s
                .parse()
                .map_err(|_| line_error(name, i + 1, "the size is not a number of bytes"))?;
            match at.get(p) {
                Some(&k) => v[k].1 = size,
                None => {
                    at.insert(p.to_string(), v.len());
                    v.push((p.to_string(), size));
                }
            }
        }
        Ok(Dataset(v))
    }

    pub fn bytes(&self) -> u64 {
        self.0.iter().map(|f| f.1).sum()
    }

    fn sizes(&self) -> HashMap<&str, u64> {
        self.0.iter().map(|(p, s)| (p.as_str(), *s)).collect()
    }

    /// Keeps the entries for which `keep(path, size)` holds.
    fn retain(&mut self, mut keep: impl FnMut(&str, u64) -> bool) {
        self.0.retain(|(p, s)| keep(p, *s));
    }
}

/// The four datasets.
#[derive(Debug, Clone, Default)]
pub struct Datasets {
    pub unpatched: Dataset,
    pub patched: Dataset,
    pub unpatched_compiled: Dataset,
    pub compiled: Dataset,
}

const FILES: [&str; 4] = [
    "dataset-unpatched",
    "dataset-patched",
    "dataset-unpatched-compiled",
    "dataset-patched-compiled",
];

const EMBEDDED: [&[u8]; 4] = [
    include_bytes!("../../data/compilebench/dataset-unpatched.gz"),
    include_bytes!("../../data/compilebench/dataset-patched.gz"),
    include_bytes!("../../data/compilebench/dataset-unpatched-compiled.gz"),
    include_bytes!("../../data/compilebench/dataset-patched-compiled.gz"),
];

/// Line `line` of dataset `name` cannot be used, for `why`.
fn line_error(name: &str, line: usize, why: &str) -> crate::LineError {
    crate::LineError {
        file: name.into(),
        line,
        why: why.into(),
    }
}

fn from_texts(texts: [String; 4]) -> Result<Datasets, crate::LineError> {
    let [a, b, c, d] = texts;
    Ok(Datasets {
        unpatched: Dataset::parse(FILES[0], &a)?,
        patched: Dataset::parse(FILES[1], &b)?,
        unpatched_compiled: Dataset::parse(FILES[2], &c)?,
        compiled: Dataset::parse(FILES[3], &d)?,
    })
}

impl Datasets {
    /// compilebench's own datasets, as shipped with fslab.
    pub fn embedded() -> Datasets {
        let texts = EMBEDDED.map(|gz| {
            let mut s = String::new();
            flate2::read::GzDecoder::new(gz)
                .read_to_string(&mut s)
                .expect("the embedded datasets decompress");
            s
        });
        from_texts(texts).expect("the embedded datasets parse")
    }

    /// The four dataset files in `dir` (compilebench's `-s`).
    pub fn from_dir(dir: &Path) -> crate::Result<Datasets> {
        let mut texts: [String; 4] = Default::default();
        for (t, f) in texts.iter_mut().zip(FILES) {
            let p = dir.join(f);
            *t = std::fs::read_to_string(&p)
                .map_err(|e| crate::opt("-s", p.display(), e.to_string()))?;
        }
        Ok(from_texts(texts)?)
    }

    /// Datasets made from a real tree (`--tree-from`): the tree is the
    /// unpatched state; the patch resizes every tenth file by -10% to +10%
    /// and adds one new file in fifty; a compile writes an object of half
    /// the size (plus 64 bytes) next to every `.c` file.
    pub fn from_tree(unpatched: Dataset) -> Datasets {
        let mut rng = XorShift64(0x00c0_ffee);
        let mut patched = Vec::new();
        for (k, (p, s)) in unpatched.0.iter().enumerate() {
            if rng.below(10) == 0 {
                patched.push((p.clone(), s * (90 + rng.below(21)) / 100));
            } else {
                patched.push((p.clone(), *s));
            }
            if k % 50 == 0 {
                patched.push((format!("{p}.patch-new"), s / 2 + 1));
            }
        }
        let objects = |d: &[(String, u64)]| -> Vec<(String, u64)> {
            let mut v = d.to_vec();
            v.extend(d.iter().filter_map(|(p, s)| {
                p.strip_suffix(".c")
                    .map(|stem| (format!("{stem}.o"), s / 2 + 64))
            }));
            v
        };
        Datasets {
            unpatched_compiled: Dataset(objects(&unpatched.0)),
            compiled: Dataset(objects(&patched)),
            patched: Dataset(patched),
            unpatched,
        }
    }

    /// compilebench's reductions: a compiled dataset keeps only the files
    /// its clean state lacks; the patched dataset only the files whose size
    /// the patch changes (and the patched-compiled one likewise against the
    /// unpatched-compiled one).
    pub fn reduce(&mut self) {
        let unpatched = self.unpatched.sizes();
        self.unpatched_compiled
            .retain(|p, _| !unpatched.contains_key(p));
        let patched_names: std::collections::HashSet<String> =
            self.patched.0.iter().map(|f| f.0.clone()).collect();
        self.compiled.retain(|p, _| !patched_names.contains(p));
        self.patched
            .retain(|p, s| unpatched.get(p).is_none_or(|u| *u != s));
        let uc = self.unpatched_compiled.sizes();
        self.compiled
            .retain(|p, s| uc.get(p).is_none_or(|u| *u != s));
    }
}

/// compilebench's `random_order`: the dataset shuffled by its generator.
pub fn random_order(d: &mut Dataset, rnd: &mut PyRandom) {
    rnd.shuffle(&mut d.0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_datasets_are_compilebenchs() {
        let d = Datasets::embedded();
        assert_eq!(d.unpatched.0.len(), 21_280);
        assert_eq!(d.patched.0.len(), 21_624);
        assert_eq!(d.unpatched_compiled.0.len(), 24_543);
        assert_eq!(d.compiled.0.len(), 24_964);
        assert_eq!(d.unpatched.bytes(), 233_176_153, "{}", d.unpatched.bytes());
    }

    #[test]
    fn reduction_keeps_what_each_state_changes() {
        let ds = |s: &str| Dataset::parse("t", s).unwrap();
        let mut d = Datasets {
            unpatched: ds("a.c 10\nb.c 20\n"),
            patched: ds("a.c 10\nb.c 25\nn.c 5\n"),
            unpatched_compiled: ds("a.c 10\nb.c 20\na.o 3\nb.o 4\n"),
            compiled: ds("a.c 10\nb.c 25\nn.c 5\na.o 3\nb.o 6\nn.o 1\n"),
        };
        d.reduce();
        assert_eq!(d.unpatched_compiled, ds("a.o 3\nb.o 4\n"));
        assert_eq!(d.patched, ds("b.c 25\nn.c 5\n"));
        assert_eq!(d.compiled, ds("b.o 6\nn.o 1\n"));
    }

    #[test]
    fn a_repeated_path_keeps_its_place_and_its_last_size() {
        let d = Dataset::parse("t", "a 1\nb 2\na 3\n").unwrap();
        assert_eq!(d.0, [("a".to_string(), 3), ("b".to_string(), 2)]);
        assert!(Dataset::parse("t", "a x\n")
            .unwrap_err()
            .to_string()
            .contains("t:1"));
    }
}
