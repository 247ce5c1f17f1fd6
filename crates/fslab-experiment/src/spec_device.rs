//! `[device]`: what the filesystems are made on (an image, a block device,
//! a directory) and where an image goes.

use std::path::{Path, PathBuf};

use fslab_lab::parse_bytes;
use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, Defaults, SpecError};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeviceSpec {
    kind: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    image_dir: Option<String>,
    direct_io: Option<bool>,
    image_host: Option<Spanned<String>>,
    scheduler: Option<Spanned<String>>,
    path: Option<Spanned<String>>,
}

/// What the filesystems are made on.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Device {
    /// A sparse image file created by fslab for each repetition.
    Image {
        size: u64,
        dir: PathBuf,
        direct_io: bool,
        /// Whether the images go on a host XFS that fslab makes in `dir`.
        host: ImageHost,
        /// The loop device's IO scheduler for the cell (None: as found).
        scheduler: Option<String>,
    },
    /// An existing block device, formatted only with `--format-device`.
    Block { path: PathBuf },
    /// An existing directory: no mkfs, no mount.
    Directory { path: PathBuf },
}

impl DeviceSpec {
    /// No `[device]` key given.
    pub(super) fn is_empty(&self) -> bool {
        self.kind.is_none() && self.path.is_none() && image_only(self).is_none()
    }
}

/// The first image-only field set in a device section, by name.
fn image_only(d: &DeviceSpec) -> Option<&'static str> {
    [
        ("size", d.size.is_some()),
        ("image_dir", d.image_dir.is_some()),
        ("direct_io", d.direct_io.is_some()),
        ("image_host", d.image_host.is_some()),
        ("scheduler", d.scheduler.is_some()),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name))
}

/// Where a cell's sparse image file is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImageHost {
    /// In `image_dir` itself.
    #[default]
    None,
    /// On a host XFS only when `image_dir` cannot hold a file of the
    /// image's size (an ext4 host holds 16 TiB at most).
    Auto,
    /// Always on a host XFS: fslab makes it once per experiment on a
    /// sparse image in `image_dir`, behind its own loop device.
    Xfs,
}

/// `[device]`.
pub(super) fn device(ctx: &Ctx, d: &DeviceSpec, defaults: &Defaults) -> Result<Device, SpecError> {
    let kind = d.kind.as_ref().map(|k| (k.get_ref().as_str(), k.span()));
    Ok(match kind {
        None | Some(("image", _)) => image_device(ctx, d, defaults)?,
        Some((other @ ("block" | "directory"), span)) if image_only(d).is_some() => {
            return ctx.err(
                span,
                &format!("device.{}", image_only(d).unwrap_or_default()),
                format!("applies to kind = \"image\" only, not to kind = \"{other}\""),
            )
        }
        Some(("block", span)) => match &d.path {
            Some(p) if p.get_ref().starts_with("/dev/") => Device::Block {
                path: PathBuf::from(p.get_ref()),
            },
            Some(p) => {
                return ctx.err(
                    p.span(),
                    "device.path",
                    format!("{:?} is not a device under /dev", p.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    span,
                    "device.path",
                    "a block device needs path = \"/dev/...\"",
                )
            }
        },
        Some(("directory", span)) => match &d.path {
            Some(p) if Path::new(p.get_ref()).is_absolute() => Device::Directory {
                path: PathBuf::from(p.get_ref()),
            },
            Some(p) => {
                return ctx.err(
                    p.span(),
                    "device.path",
                    format!("{:?} is not an absolute path", p.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    span,
                    "device.path",
                    "a directory device needs path = \"/...\"",
                )
            }
        },
        Some((k, span)) => {
            return ctx.err(
                span,
                "device.kind",
                format!("unknown device kind {k:?} (use image, block or directory)"),
            )
        }
    })
}

/// `[device]` of kind "image".
fn image_device(ctx: &Ctx, d: &DeviceSpec, defaults: &Defaults) -> Result<Device, SpecError> {
    let size = match &d.size {
        None => 1 << 30,
        Some(s) => match parse_bytes(s.get_ref()) {
            Some(b) if b >= 16 << 20 => b,
            Some(_) => {
                return ctx.err(
                    s.span(),
                    "device.size",
                    format!("{:?} is too small (at least 16M)", s.get_ref()),
                )
            }
            None => {
                return ctx.err(
                    s.span(),
                    "device.size",
                    format!("{:?} is not a size (like 100G or 100T)", s.get_ref()),
                )
            }
        },
    };
    let dir = d
        .image_dir
        .as_ref()
        .map(PathBuf::from)
        .unwrap_or_else(|| defaults.image_dir.clone());
    let host = match &d.image_host {
        None => ImageHost::None,
        Some(h) => match h.get_ref().as_str() {
            "none" => ImageHost::None,
            "auto" => ImageHost::Auto,
            "xfs" => ImageHost::Xfs,
            other => {
                return ctx.err(
                    h.span(),
                    "device.image_host",
                    format!("{other:?} is not one of none, auto, xfs"),
                )
            }
        },
    };
    if let Some(n) = &d.scheduler {
        if let Some(e) = fslab_lab::scheduler::loop_scheduler_error(n.get_ref()) {
            return ctx.err(n.span(), "device.scheduler", e);
        }
    }
    Ok(Device::Image {
        size,
        dir,
        direct_io: d.direct_io.unwrap_or(false),
        host,
        scheduler: d.scheduler.as_ref().map(|n| n.get_ref().clone()),
    })
}

/// `[first_pass]`: the workload runs once on the cell's image before the
/// judged run, whose filesystem is then made again on the same image,
/// without discard (seed 000: the author's image had been fragmented by
/// small IOs before the runs he judged on it).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FirstPassSpec {
    scheduler: Option<Spanned<String>>,
    region: Option<Spanned<String>>,
}

/// A first pass over the cell's image.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FirstPass {
    /// The loop device's IO scheduler during the first pass (None: the
    /// judged run's).
    pub scheduler: Option<String>,
    /// The image's first bytes whose extents are told from the rest after
    /// the first pass (`first pass image extents past the first region`;
    /// scaled with the image).
    pub region: Option<u64>,
}

/// The mkfs option of `fs` that makes it without discarding the device,
/// and whether it is among `options`.
fn nodiscard_mkfs(fs: &str) -> Option<&'static str> {
    match fs {
        "btrfs" | "xfs" => Some("-K"),
        "ext2" | "ext3" | "ext4" => Some("nodiscard"),
        _ => None,
    }
}

/// `[first_pass]` if given: on one machine's image only, with every cell on
/// the running kernel (a guest's disk is not an image fslab counts).
pub(super) fn first_pass_of(
    ctx: &Ctx,
    spec: Option<&Spanned<FirstPassSpec>>,
    device: &Device,
    cells: &[super::Cell],
    cluster: bool,
) -> Result<Option<FirstPass>, SpecError> {
    match spec {
        Some(f) if cluster => ctx.err(
            f.span(),
            "first_pass",
            "applies to one machine's cells, not to a [cluster]",
        ),
        Some(f) => match cells.iter().find(|c| c.in_guest()) {
            Some(c) => ctx.err(
                f.span(),
                "first_pass",
                format!(
                    "cell {:?} runs in a guest on another kernel: a first pass runs on the \
                     running kernel's image only",
                    c.label
                ),
            ),
            None => first_pass(ctx, f, device, cells).map(Some),
        },
        None => Ok(None),
    }
}

/// `[first_pass]`: on an image only, and every target made and mounted
/// without discard (a discard would punch the first pass's blocks out of
/// the image before the judged run).
fn first_pass(
    ctx: &Ctx,
    spec: &Spanned<FirstPassSpec>,
    device: &Device,
    cells: &[super::Cell],
) -> Result<FirstPass, SpecError> {
    let Device::Image { size, .. } = device else {
        return ctx.err(
            spec.span(),
            "first_pass",
            "a first pass needs [device] kind = \"image\" (it runs on the cell's own image)",
        );
    };
    let f = spec.get_ref();
    if let Some(n) = &f.scheduler {
        if let Some(e) = fslab_lab::scheduler::loop_scheduler_error(n.get_ref()) {
            return ctx.err(n.span(), "first_pass.scheduler", e);
        }
    }
    let region = match &f.region {
        None => None,
        Some(r) => match parse_bytes(r.get_ref()) {
            Some(b) if b > 0 && b < *size => Some(b),
            _ => {
                return ctx.err(
                    r.span(),
                    "first_pass.region",
                    format!(
                        "{:?} is not a size above 0 and below the image's",
                        r.get_ref()
                    ),
                )
            }
        },
    };
    for c in cells {
        let Some(fs) = &c.fs else { continue };
        let mkfs = c.mkfs_options.join(" ");
        let flag = nodiscard_mkfs(fs.name());
        let made = flag.is_none_or(|f| mkfs.split([' ', ',', '=']).any(|w| w == f));
        let mounted = c.mount_options.split(',').any(|o| o == "nodiscard");
        if !(made && mounted) {
            return ctx.err(
                spec.span(),
                "first_pass",
                format!(
                    "cell {:?}: the judged run is made on the first pass's image without discard: \
                     give its target mkfs {} and mount option nodiscard",
                    c.label,
                    flag.map_or("its nodiscard option".into(), |f| match f {
                        "nodiscard" => "-E nodiscard".to_string(),
                        f => f.to_string(),
                    })
                ),
            );
        }
    }
    Ok(FirstPass {
        scheduler: f.scheduler.as_ref().map(|n| n.get_ref().clone()),
        region,
    })
}

#[cfg(test)]
mod tests {
    use crate::spec::{parse, Defaults};

    const HEAD: &str = "name = \"x\"\n[workload]\nkind = \"fsmark\"\n[device]\nsize = \"1T\"\n";

    fn with(rest: &str) -> Result<crate::spec::Experiment, String> {
        parse("x.toml", &format!("{HEAD}{rest}"), &Defaults::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_first_pass_needs_every_target_made_and_mounted_without_discard() {
        let e = with("[first_pass]\nscheduler = \"none\"\nregion = \"100G\"\n[[target]]\nfs = \"btrfs\"\nmkfs_options = [\"-K -n 4096\"]\nmount_options = [\"commit=1,nodiscard\"]\n[[target]]\nfs = \"ext4\"\nmkfs_options = [\"-E nodiscard\"]\nmount_options = [\"nodiscard\"]\n").unwrap();
        let p = e.first_pass.clone().unwrap();
        assert_eq!(p.scheduler.as_deref(), Some("none"));
        assert_eq!(p.region, Some(100 << 30));
        // Scaled with the image.
        let s = crate::plan::scaled(&e, 0.01);
        assert_eq!(s.first_pass.unwrap().region, Some(1 << 30));
        // A target that would discard the first pass's blocks.
        let err =
            with("[first_pass]\n[[target]]\nfs = \"btrfs\"\nmount_options = [\"nodiscard\"]\n")
                .unwrap_err();
        assert!(
            err.contains("first_pass: cell \"btrfs -o nodiscard\": the judged run is made on the first pass's image without discard: give its target mkfs -K and mount option nodiscard"),
            "{err}"
        );
        let err =
            with("[first_pass]\n[[target]]\nfs = \"ext4\"\nmkfs_options = [\"-E nodiscard\"]\n")
                .unwrap_err();
        assert!(
            err.contains("mkfs -E nodiscard and mount option nodiscard"),
            "{err}"
        );
        let err = with("[first_pass]\nregion = \"2T\"\n[[target]]\nfs = \"xfs\"\nmkfs_options = [\"-K\"]\nmount_options = [\"nodiscard\"]\n").unwrap_err();
        assert!(
            err.contains("first_pass.region: \"2T\" is not a size above 0 and below the image's"),
            "{err}"
        );
        let err = with("[first_pass]\nscheduler = \"cfq\"\n[[target]]\nfs = \"xfs\"\nmkfs_options = [\"-K\"]\nmount_options = [\"nodiscard\"]\n").unwrap_err();
        assert!(err.contains("first_pass.scheduler"), "{err}");
        // A guest's disk is not the host's image.
        let err = with("[first_pass]\n[[target]]\nfs = \"xfs\"\nkernel = [\"running\", \"debian:6.1.0-50-cloud-amd64\"]\nmkfs_options = [\"-K\"]\nmount_options = [\"nodiscard\"]\n").unwrap_err();
        assert!(
            err.contains("runs in a guest on another kernel: a first pass runs on the running kernel's image only"),
            "{err}"
        );
    }
}
