//! What `fslab run` (and its dry run) checks before anything is touched:
//! the tools, root, the image directory and whether the images fit, the
//! sysctls this kernel has.

use crate::image_host;
use crate::plan::missing_tools;
pub use crate::safety::Preflight;
use crate::spec::{Device, Experiment, ImageHost};
use fslab_lab::machine::read_sysctl;

/// Checks what can be checked before anything is touched.
pub fn preflight(exp: &Experiment) -> Result<(), Preflight> {
    preflight_as(exp, rustix::process::geteuid().is_root())
}

/// [`preflight`] as a user who is root or not: the dry run checks
/// everything else as the run (as root) would.
pub fn preflight_as(exp: &Experiment, root: bool) -> Result<(), Preflight> {
    let missing = missing_tools(exp);
    if !missing.is_empty() {
        return Err(Preflight::Machine(missing.join("; ")));
    }
    // Targets that are all existing directories use no device.
    let no_device = crate::spec::Cell::all_in_paths(&exp.cells);
    if !matches!(exp.device, Device::Directory { .. }) && !no_device && !root {
        return Err(Preflight::Machine(
            "fslab run makes filesystems (loop devices, mkfs, mount): run it as root".into(),
        ));
    }
    if let (
        false,
        Device::Image {
            size, dir, host, ..
        },
    ) = (no_device, &exp.device)
    {
        if !dir.is_dir() {
            return Err(Preflight::Input(format!(
                "device.image_dir {} does not exist",
                dir.display()
            )));
        }
        crate::safety::writable(dir, root)?;
        if image_host::needed(&exp.device)? {
            image_host::preflight(dir)?;
        } else if !fslab_lab::image::fits(dir, *size)? {
            // The host cannot hold a sparse file this large at all.
            let why = fslab_lab::image::too_large(dir, *size);
            return Err(Preflight::Input(match host {
                ImageHost::None => format!("{why} (or set device.image_host = \"auto\")"),
                _ => why,
            }));
        }
    }
    if (exp.machine.memory_limit.is_some()
        || !exp.cells.iter().all(|c| c.sysctl.is_empty())
        || exp.machine.drop_caches
        || exp.machine.drop_caches_once)
        && !root
    {
        return Err(Preflight::Machine(
            "sysctls, drop_caches and memory limits need root".into(),
        ));
    }
    memory_limit(exp.machine.memory_limit, mem_total())?;
    guests(exp)?;
    // A guest cell's sysctls are its guest kernel's.
    for c in exp.cells.iter().filter(|c| !c.in_guest()) {
        for name in c.sysctl.keys() {
            read_sysctl(name).map_err(|e| Preflight::Input(format!("cell {:?}: {e}", c.label)))?;
        }
    }
    Ok(())
}

/// This machine's memory (MemTotal, bytes), when /proc/meminfo says.
pub(crate) fn mem_total() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = m
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// A memory limit above the machine's memory limits nothing: refused, as
/// the run would be no different without it.
fn memory_limit(limit: Option<u64>, total: Option<u64>) -> Result<(), Preflight> {
    match (limit, total) {
        (Some(l), Some(t)) if l > t => Err(Preflight::Input(format!(
            "machine.memory_limit {} is more than this machine's memory ({}): it would limit \
             nothing (leave it out, or say less)",
            fslab_model::units::human_bytes(l),
            fslab_model::units::human_bytes(t)
        ))),
        _ => Ok(()),
    }
}

/// An experiment on several MPI ranks needs MPI in this build
/// (`built_with_mpi`) and its launcher (mpirun, or Slurm's srun); a program
/// that starts its own ranks needs the launcher, not fslab's MPI.
pub fn preflight_mpi(exp: &Experiment, built_with_mpi: bool) -> Result<(), Preflight> {
    let needs = match (&exp.cluster, exp.workload.ranks) {
        (Some(c), _) => format!("[cluster] ({} hosts)", c.hosts.len()),
        (None, r) if r > 1 => format!("workload.ranks = {r}"),
        _ => return Ok(()),
    };
    if !built_with_mpi && !exp.workload.kind.launches_ranks() {
        return Err(Preflight::Input(format!(
            "{needs} needs MPI, and this fslab was built without it: \
             build it with `cargo build --release -p fslab --features mpi`"
        )));
    }
    let launcher = match &exp.cluster {
        Some(c) => c.workload_mpirun().swap_remove(0),
        None => "mpirun".to_string(),
    };
    if fslab_lab::mkfs::find_tool(&launcher).is_none() {
        return Err(Preflight::Input(match (&exp.cluster, launcher.as_str()) {
            (Some(_), "srun") => {
                "[cluster] launch = \"srun\" needs Slurm's srun: run fslab inside \
                 a Slurm job (sbatch or salloc) on a machine with Slurm's tools"
                    .to_string()
            }
            (Some(_), _) => {
                "[cluster] needs mpirun: install Open MPI (apt-get install openmpi-bin)".to_string()
            }
            (None, _) => {
                format!("{needs} needs mpirun: install Open MPI (apt-get install openmpi-bin)")
            }
        }));
    }
    Ok(())
}

/// What `--dry-run` prints: the plan, what the command line allowed, and
/// whether the run needs root (`root`: whether this user is).
pub fn dry_run(exp: &Experiment, scale: f64, allowed: &[String], root: bool) -> String {
    let mut text = crate::plan::describe(exp, scale);
    for a in allowed {
        text += &format!("allowed on the command line: {a}\n");
    }
    if !root && preflight_as(exp, false).is_err() {
        text += "note: fslab run needs root for this experiment\n";
    }
    text
}

/// The cells on other kernels: each kernel an image or a package that
/// exists (not fetched here), and what a guest needs to start (QEMU,
/// virtiofsd, a static busybox, its memory free now).
fn guests(exp: &Experiment) -> Result<(), Preflight> {
    let cache = fslab_guest::package::cache_dir();
    let mut checked = std::collections::BTreeSet::new();
    for c in exp
        .cells
        .iter()
        .filter_map(|c| c.kernel.as_ref().map(|k| (c, k)))
    {
        let (cell, k) = c;
        let input =
            |e: fslab_guest::GuestError| Preflight::Input(format!("cell {:?}: {e}", cell.label));
        if checked.insert(k.name.clone()) {
            fslab_guest::check(&k.name, &cache).map_err(input)?;
        }
        if let Some(e) = fslab_guest::missing_tool() {
            return Err(input(e));
        }
        fslab_guest::qemu::check_memory(k.memory_bytes).map_err(input)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_memory_limit_above_the_machines_memory_is_refused() {
        let e = super::memory_limit(Some(1 << 60), Some(24 << 30)).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("1 EiB") && e.contains("24 GiB"), "{e}");
        assert!(super::memory_limit(Some(1 << 30), Some(24 << 30)).is_ok());
        assert!(super::memory_limit(None, Some(24 << 30)).is_ok());
        assert!(super::mem_total().is_some_and(|t| t > 0));
    }
}
