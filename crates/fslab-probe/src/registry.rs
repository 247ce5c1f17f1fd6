//! The registered probes: the built-in ones, one line each in [`BUILT_IN`],
//! then any a test adds with [`register`] before anything looks one up (as
//! tests add workloads). `--probes`, the sampler, `results show`, the
//! report and the findings' evidence all iterate [`all`].

use std::sync::{Mutex, OnceLock};

use crate::plugin::{Needs, Plugin};
use crate::probes;

/// The built-in probes, in the order `--probes default` and `all` run them
/// and `results show` and the report show them.
static BUILT_IN: [&dyn Plugin; 9] = [
    &probes::cpu::CpuPlugin,
    &probes::disk::DiskPlugin,
    &probes::mem::MemPlugin,
    &probes::blockio::BlockioPlugin,
    &probes::frag::FragPlugin,
    &probes::journal::JournalPlugin,
    &probes::writeback::WritebackPlugin,
    &probes::stacks::StacksPlugin,
    &probes::perf::PerfPlugin,
];

/// The probes that run beside whatever `--probes` asks for (not with
/// `--probes none`), not listed by it:
/// the machine's own measurements in each phase (part of the run's facts).
static ALWAYS: [&dyn Plugin; 1] = [&probes::machine::MachinePlugin];

/// The always-on probes (see [`ALWAYS`]).
pub fn always() -> Vec<ProbeRef> {
    ALWAYS.iter().copied().map(ProbeRef).collect()
}

/// A registered probe, by its plug-in. Equal when their names are.
#[derive(Clone, Copy)]
pub struct ProbeRef(&'static dyn Plugin);

impl ProbeRef {
    pub fn name(self) -> &'static str {
        self.0.name()
    }
    pub fn plugin(self) -> &'static dyn Plugin {
        self.0
    }
    /// [`Plugin::default_on`].
    pub fn default_on(self) -> bool {
        self.0.default_on()
    }
    /// [`Plugin::needs`].
    pub fn needs(self) -> Needs {
        self.0.needs()
    }
    /// The probe registered as `name` (an always-on one too).
    pub fn of(name: &str) -> Option<ProbeRef> {
        all().into_iter().chain(always()).find(|k| k.name() == name)
    }
}

impl PartialEq for ProbeRef {
    fn eq(&self, other: &ProbeRef) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ProbeRef {}

impl std::hash::Hash for ProbeRef {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name().hash(h);
    }
}

impl std::fmt::Debug for ProbeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProbeRef({})", self.name())
    }
}

fn extra() -> &'static Mutex<Vec<&'static dyn Plugin>> {
    static EXTRA: OnceLock<Mutex<Vec<&'static dyn Plugin>>> = OnceLock::new();
    EXTRA.get_or_init(|| Mutex::new(Vec::new()))
}

/// A probe's name taken already: refused by [`register`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("probe {0:?} is registered already")]
pub struct NameTaken(pub &'static str);

/// Adds a probe (a test's own) after the built-in ones; an error when its
/// name is taken.
pub fn register(p: &'static dyn Plugin) -> Result<(), NameTaken> {
    if ProbeRef::of(p.name()).is_some() {
        return Err(NameTaken(p.name()));
    }
    extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(p);
    Ok(())
}

/// Every registered probe: the built-in ones in [`BUILT_IN`]'s
/// order, then those registered since.
pub fn all() -> Vec<ProbeRef> {
    let extra = extra()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    BUILT_IN
        .iter()
        .copied()
        .chain(extra)
        .map(ProbeRef)
        .collect()
}

/// A `--probes` list naming a probe fslab does not have: "--probes:
/// unknown probe "bogus" (use cpu, disk, ..., default, all, none)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--probes: {}", self.what())]
pub struct UnknownProbe {
    /// The name as given.
    pub name: String,
}

impl UnknownProbe {
    /// What is wrong, without the option's name (an experiment file says
    /// it as `workload.probes`).
    pub fn what(&self) -> String {
        format!(
            "unknown probe {:?} (use {}, default, all, none)",
            self.name,
            all()
                .into_iter()
                .map(ProbeRef::name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Parses `--probes`: `default`, `all`, `none`, or a comma list in which
/// `default` and `all` may appear and `-NAME` removes one.
pub fn parse_list(s: &str) -> Result<Vec<ProbeRef>, UnknownProbe> {
    let mut on: Vec<ProbeRef> = Vec::new();
    for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match w {
            "none" => on.clear(),
            "default" => on.extend(all().into_iter().filter(|k| k.default_on())),
            "all" => on.extend(all()),
            _ => {
                let (remove, name) = match w.strip_prefix('-') {
                    Some(n) => (true, n),
                    None => (false, w),
                };
                let k = ProbeRef::of(name).ok_or_else(|| UnknownProbe {
                    name: name.to_string(),
                })?;
                if remove {
                    on.retain(|x| *x != k);
                } else {
                    on.push(k);
                }
            }
        }
    }
    let mut seen = Vec::new();
    on.retain(|k| {
        if seen.contains(k) {
            false
        } else {
            seen.push(*k);
            true
        }
    });
    Ok(on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_lists_parse() {
        // The built-in probes, all but perf on by default (a test may have
        // registered more after them).
        let names: Vec<&str> = all().into_iter().map(ProbeRef::name).collect();
        assert_eq!(
            names[..9],
            [
                "cpu",
                "disk",
                "mem",
                "blockio",
                "frag",
                "journal",
                "writeback",
                "stacks",
                "perf"
            ]
        );
        // Other tests register probes while this one runs: the built-ins
        // are checked by name, not the lists' lengths.
        let default = parse_list("default").unwrap();
        let every = parse_list("all").unwrap();
        for name in &names[..9] {
            let k = ProbeRef::of(name).unwrap();
            assert!(every.contains(&k), "{name}");
            assert_eq!(default.contains(&k), *name != "perf", "{name}");
        }
        assert!(parse_list("none").unwrap().is_empty());
        assert_eq!(
            parse_list("default,-blockio,perf")
                .unwrap()
                .iter()
                .filter(|k| k.name() == "blockio")
                .count(),
            0
        );
        assert_eq!(
            parse_list("cpu,cpu").unwrap(),
            vec![ProbeRef::of("cpu").unwrap()]
        );
        assert!(parse_list("cpu,bogus")
            .unwrap_err()
            .to_string()
            .starts_with("--probes: unknown probe \"bogus\" (use cpu, "));
    }
}
