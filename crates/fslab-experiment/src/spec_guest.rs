//! `[guest]` and a target's `kernel`: cells that run on another kernel,
//! inside a virtual machine fslab boots for them (see `runner::guest`).
//!
//! ```toml
//! [[target]]
//! fs = "ext4"
//! kernel = ["running", "debian:6.1.0-50-cloud-amd64"]   # an axis: one cell each
//! # an entry may be a table: { image = "PATH/vmlinuz", append = "...", label = "..." }
//!
//! [guest]                 # the virtual machine of those cells
//! memory = "1G"           # its memory (default 1G)
//! cpus = 2                # its CPUs (default 2)
//! append = ""             # added to every guest kernel's command line
//! ```

use fslab_lab::parse_bytes;
use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, SpecError};

/// `"running"`: the kernel fslab runs on, no guest.
pub const RUNNING: &str = "running";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GuestSpec {
    memory: Option<Spanned<String>>,
    cpus: Option<Spanned<i64>>,
    #[serde(default)]
    append: String,
}

/// A target's `kernel`: one, or a list (an axis).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(super) enum KernelAxis {
    One(KernelEntry),
    Many(Vec<KernelEntry>),
}

/// One kernel: its name, or a table with its own command line and label.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum KernelEntry {
    Name(String),
    Table {
        image: String,
        #[serde(default)]
        append: String,
        label: Option<String>,
    },
}

/// The kernel a cell runs on when it is not the running one, and the
/// virtual machine it boots in.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GuestKernel {
    /// As written: `debian:RELEASE` or the path of a kernel image.
    pub name: String,
    /// What the cell's label says of it.
    pub label: String,
    /// The guest kernel's command line beyond fslab's own (`[guest]
    /// append`, then the entry's).
    pub append: String,
    pub memory_bytes: u64,
    pub cpus: u32,
}

/// `[guest]`, validated.
pub(super) struct Guest {
    memory_bytes: u64,
    cpus: u32,
    append: String,
}

pub(super) fn guest(ctx: &Ctx, g: &GuestSpec) -> Result<Guest, SpecError> {
    let memory_bytes = match &g.memory {
        None => 1 << 30,
        Some(m) => match parse_bytes(m.get_ref()) {
            Some(b) if b >= 128 << 20 => b,
            _ => {
                return ctx.err(
                    m.span(),
                    "guest.memory",
                    format!("{:?} is not a size of at least 128M", m.get_ref()),
                )
            }
        },
    };
    let cpus = match &g.cpus {
        None => 2,
        Some(c) if *c.get_ref() < 1 || *c.get_ref() > 64 => {
            return ctx.err(
                c.span(),
                "guest.cpus",
                format!("{} is not from 1 to 64", c.get_ref()),
            )
        }
        Some(c) => *c.get_ref() as u32,
    };
    Ok(Guest {
        memory_bytes,
        cpus,
        append: g.append.trim().to_string(),
    })
}

/// A target's kernels (None: the running kernel), checked as written; the
/// images and packages themselves are checked before the run (preflight).
pub(super) fn kernels(
    ctx: &Ctx,
    field: &str,
    axis: Option<&Spanned<KernelAxis>>,
    guest: &Guest,
) -> Result<Vec<Option<GuestKernel>>, SpecError> {
    let Some(axis) = axis else {
        return Ok(vec![None]);
    };
    let entries = match axis.get_ref() {
        KernelAxis::One(e) => vec![e.clone()],
        KernelAxis::Many(v) if v.is_empty() => {
            return ctx.err(
                axis.span(),
                field,
                "an empty list: name at least one kernel",
            )
        }
        KernelAxis::Many(v) => v.clone(),
    };
    let mut out = Vec::new();
    for e in entries {
        let (name, append, label) = match e {
            KernelEntry::Name(n) => (n, String::new(), None),
            KernelEntry::Table {
                image,
                append,
                label,
            } => (image, append, label),
        };
        let name = name.trim().to_string();
        if name == RUNNING {
            out.push(None);
            continue;
        }
        if name.is_empty() {
            return ctx.err(axis.span(), field, "an empty kernel name");
        }
        if let Err(e) = fslab_guest::package::debian_release(&name) {
            return ctx.err(axis.span(), field, e.to_string());
        }
        let label = label.unwrap_or_else(|| short_name(&name));
        out.push(Some(GuestKernel {
            name,
            label,
            append: [guest.append.as_str(), append.trim()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
            memory_bytes: guest.memory_bytes,
            cpus: guest.cpus,
        }));
    }
    Ok(out)
}

/// Cells on another kernel get a virtual disk made from an image, run one
/// process and no cluster.
pub(super) fn fits(
    ctx: &Ctx,
    cells: &[super::Cell],
    device: &super::Device,
    workload: &super::Workload,
    cluster: bool,
) -> Result<(), SpecError> {
    let Some(c) = cells.iter().find(|c| c.in_guest()) else {
        return Ok(());
    };
    let why = if !matches!(device, super::Device::Image { .. }) {
        "a cell on another kernel gets its own virtual disk, made from an image: [device] kind must be image"
    } else if cluster {
        "a cell on another kernel runs in one guest: remove [cluster]"
    } else if workload.ranks > 1 {
        "a cell on another kernel runs its workload as one process: remove workload.ranks"
    } else {
        return Ok(());
    };
    ctx.err(0..0, "target.kernel", format!("{}: {why}", c.label))
}

/// What a cell's label says of a kernel: a package's release, an image's
/// file name (`vmlinuz-R`: R).
fn short_name(name: &str) -> String {
    if let Ok(Some(r)) = fslab_guest::package::debian_release(name) {
        return r.to_string();
    }
    let f = std::path::Path::new(name)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    f.strip_prefix("vmlinuz-").map(String::from).unwrap_or(f)
}

#[cfg(test)]
mod tests {
    use super::short_name;

    #[test]
    fn a_kernel_is_named_by_its_release_or_file() {
        assert_eq!(
            short_name("debian:6.1.0-50-cloud-amd64"),
            "6.1.0-50-cloud-amd64"
        );
        assert_eq!(short_name("/boot/vmlinuz-6.18.4"), "6.18.4");
        assert_eq!(short_name("/k/bzImage"), "bzImage");
    }
}
