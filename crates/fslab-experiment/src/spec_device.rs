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
