//! What `fslab run` (and its dry run) checks before anything is touched:
//! the tools, root, the image directory and whether the images fit, the
//! sysctls this kernel has.

use crate::image_host;
use crate::machine::read_sysctl;
use crate::plan::missing_tools;
pub use crate::safety::Preflight;
use crate::spec::{Device, Experiment, ImageHost};

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
    if !matches!(exp.device, Device::Directory { .. }) && !root {
        return Err(Preflight::Machine(
            "fslab run makes filesystems (loop devices, mkfs, mount): run it as root".into(),
        ));
    }
    if let Device::Image {
        size, dir, host, ..
    } = &exp.device
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
    guests(exp)?;
    // A guest cell's sysctls are its guest kernel's.
    for c in exp.cells.iter().filter(|c| !c.in_guest()) {
        for name in c.sysctl.keys() {
            read_sysctl(name).map_err(|e| Preflight::Input(format!("cell {:?}: {e}", c.label)))?;
        }
    }
    Ok(())
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
