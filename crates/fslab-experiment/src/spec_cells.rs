//! The matrix: `[[target]]`s (each one's mkfs options x mount options)
//! crossed with the `[[variant]]`s, one [`Cell`] each.

use std::collections::BTreeMap;

use fslab_lab::mkfs::FsType;
use serde::Deserialize;
use toml::Spanned;

use super::guest::{guest, kernels, KernelAxis};
use super::machine::{sysctls, Machine};
use super::{split_args, Cell, Ctx, FileSpec, SpecError};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TargetSpec {
    fs: Option<Spanned<String>>,
    /// An existing directory or mounted filesystem (no mkfs, no mount).
    path: Option<Spanned<String>>,
    label: Option<String>,
    #[serde(default)]
    mkfs_options: Vec<String>,
    #[serde(default)]
    mount_options: Vec<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    workload_args: Vec<String>,
    #[serde(default)]
    after_mkfs: Vec<String>,
    kernel: Option<Spanned<KernelAxis>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VariantSpec {
    name: Spanned<String>,
    #[serde(default)]
    sysctl: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    workload_args: Vec<String>,
    mkfs_options: Option<String>,
    mount_options: Option<String>,
    #[serde(default)]
    after_mkfs: Vec<String>,
}

pub(super) struct Variant {
    name: String,
    sysctl: BTreeMap<String, String>,
    workload_args: Vec<String>,
    mkfs_options: Option<String>,
    mount_options: Option<String>,
    after_mkfs: Vec<String>,
}

/// `[[variant]]`s (one unnamed variant when there are none).
pub(super) fn variants(ctx: &Ctx, specs: &[VariantSpec]) -> Result<Vec<Variant>, SpecError> {
    let mut variants = Vec::new();
    for (i, var) in specs.iter().enumerate() {
        let n = var.name.get_ref().trim();
        if n.is_empty() {
            return ctx.err(
                var.name.span(),
                &format!("variant[{i}].name"),
                "must not be empty",
            );
        }
        variants.push(Variant {
            name: n.to_string(),
            sysctl: sysctls(ctx, &format!("variant[{i}].sysctl"), &var.sysctl)?,
            workload_args: var.workload_args.clone(),
            mkfs_options: var.mkfs_options.clone(),
            mount_options: var.mount_options.clone(),
            after_mkfs: var.after_mkfs.clone(),
        });
    }
    if variants.is_empty() {
        variants.push(Variant {
            name: String::new(),
            sysctl: BTreeMap::new(),
            workload_args: vec![],
            mkfs_options: None,
            mount_options: None,
            after_mkfs: vec![],
        });
    }
    Ok(variants)
}

/// The cells on a directory device: one per variant.
pub(super) fn directory_cells(
    ctx: &Ctx,
    spec: &FileSpec,
    machine: &Machine,
    variants: &[Variant],
) -> Result<Vec<Cell>, SpecError> {
    let mut cells = Vec::new();
    if !spec.targets.is_empty() {
        return ctx.err(
            0..0,
            "target",
            "a directory device makes no filesystem: remove the [[target]] tables, or leave \
             [device] out and give each target the directory it runs in (path = \"/mnt/x\")",
        );
    }
    for v in variants {
        cells.push(Cell {
            index: cells.len() as u32,
            label: if v.name.is_empty() {
                "directory".into()
            } else {
                v.name.clone()
            },
            fs: None,
            mkfs_options: vec![],
            mount_options: String::new(),
            sysctl: machine
                .sysctl
                .iter()
                .chain(&v.sysctl)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            workload_args: v.workload_args.clone(),
            after_mkfs: vec![],
            kernel: None,
            path: None,
        });
    }
    Ok(cells)
}

/// The cells of the targets: each target's mkfs options x mount options
/// x the variants.
pub(super) fn target_cells(
    ctx: &Ctx,
    spec: &FileSpec,
    machine: &Machine,
    variants: &[Variant],
) -> Result<Vec<Cell>, SpecError> {
    let mut cells = Vec::new();
    if spec.targets.is_empty() {
        return ctx.err(
            0..0,
            "target",
            "no [[target]]: name at least one filesystem (fs = \"ext4\")",
        );
    }
    let guest = guest(ctx, &spec.guest)?;
    for (ti, t) in spec.targets.iter().enumerate() {
        let Some(fs) = target_fs(ctx, ti, t)? else {
            if let Some(p) = &t.path {
                path_cells(ctx, ti, t, p, machine, variants, &mut cells)?;
            }
            continue;
        };
        let kernel_axis = kernels(
            ctx,
            &format!("target[{ti}].kernel"),
            t.kernel.as_ref(),
            &guest,
        )?;
        let fsname = fs.get_ref().trim();
        if fsname.is_empty()
            || !fsname
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            return ctx.err(
                fs.span(),
                &format!("target[{ti}].fs"),
                format!("{fsname:?} is not a filesystem type"),
            );
        }
        let fs = FsType::parse(fsname);
        let tsys = sysctls(ctx, &format!("target[{ti}].sysctl"), &t.sysctl)?;
        let mkfs_axis = if t.mkfs_options.is_empty() {
            vec![String::new()]
        } else {
            t.mkfs_options.clone()
        };
        let mount_axis = if t.mount_options.is_empty() {
            vec![String::new()]
        } else {
            t.mount_options.clone()
        };
        for kernel in &kernel_axis {
            for mk in &mkfs_axis {
                for mo in &mount_axis {
                    for v in variants {
                        let mut mkfs_options = split_args(mk);
                        if let Some(x) = &v.mkfs_options {
                            mkfs_options.extend(split_args(x));
                        }
                        let mount_options: Vec<&str> =
                            [mo.as_str(), v.mount_options.as_deref().unwrap_or("")]
                                .into_iter()
                                .filter(|s| !s.trim().is_empty())
                                .collect();
                        let mount_options = mount_options.join(",");
                        let mut label = t.label.clone().unwrap_or_else(|| fs.name().to_string());
                        if (t.label.is_none() || mkfs_axis.len() > 1) && !mk.trim().is_empty() {
                            label.push(' ');
                            label.push_str(mk.trim());
                        }
                        if (t.label.is_none() || mount_axis.len() > 1) && !mo.trim().is_empty() {
                            label.push_str(" -o ");
                            label.push_str(mo.trim());
                        }
                        if let Some(k) = kernel {
                            label.push_str(" on ");
                            label.push_str(&k.label);
                        }
                        if !v.name.is_empty() {
                            label.push_str(" [");
                            label.push_str(&v.name);
                            label.push(']');
                        }
                        let (sysctl, workload_args) = settings(machine, &tsys, t, v);
                        cells.push(Cell {
                            index: cells.len() as u32,
                            label,
                            fs: Some(fs.clone()),
                            mkfs_options,
                            mount_options,
                            sysctl,
                            workload_args,
                            after_mkfs: t
                                .after_mkfs
                                .iter()
                                .chain(&v.after_mkfs)
                                .map(|c| split_args(c))
                                .collect(),
                            kernel: kernel.clone(),
                            path: None,
                        });
                    }
                }
            }
        }
    }
    Ok(cells)
}

/// A cell's sysctls (the machine's, the target's, the variant's, each over
/// the one before) and workload arguments (the target's, then the
/// variant's).
fn settings(
    machine: &Machine,
    target_sysctl: &BTreeMap<String, String>,
    t: &TargetSpec,
    v: &Variant,
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut sysctl = machine.sysctl.clone();
    sysctl.extend(target_sysctl.clone());
    sysctl.extend(v.sysctl.clone());
    let mut workload_args = t.workload_args.clone();
    workload_args.extend(v.workload_args.iter().cloned());
    (sysctl, workload_args)
}

/// A target's `fs`, or None for a directory that exists (`path`): one of
/// the two, never both.
fn target_fs<'t>(
    ctx: &Ctx,
    ti: usize,
    t: &'t TargetSpec,
) -> Result<Option<&'t Spanned<String>>, SpecError> {
    match (&t.fs, &t.path) {
        (Some(fs), None) => Ok(Some(fs)),
        (None, Some(_)) => Ok(None),
        (Some(fs), Some(_)) => ctx.err(
            fs.span(),
            &format!("target[{ti}]"),
            "give fs (a filesystem fslab makes) or path (a directory that exists), not both",
        ),
        (None, None) => ctx.err(
            0..0,
            &format!("target[{ti}]"),
            "give fs = \"ext4\" (a filesystem fslab makes) or path = \"/mnt/x\" (a directory that exists)",
        ),
    }
}

/// A target that is an existing directory (`path = "/mnt/ext4"`): one cell
/// per variant, each repetition in a fresh subdirectory of it. fslab makes
/// no filesystem there, so what would make or mount one is refused.
fn path_cells(
    ctx: &Ctx,
    ti: usize,
    t: &TargetSpec,
    p: &Spanned<String>,
    machine: &Machine,
    variants: &[Variant],
    cells: &mut Vec<Cell>,
) -> Result<(), SpecError> {
    let path = p.get_ref();
    let field = format!("target[{ti}].path");
    if !std::path::Path::new(path).is_absolute() {
        return ctx.err(
            p.span(),
            &field,
            format!("{path:?} is not an absolute path"),
        );
    }
    if std::path::Path::new(path).components().count() == 1 {
        return ctx.err(
            p.span(),
            &field,
            "\"/\" is the root directory: give a directory of its own",
        );
    }
    let made = [
        ("mkfs_options", !t.mkfs_options.is_empty()),
        ("mount_options", !t.mount_options.is_empty()),
        ("after_mkfs", !t.after_mkfs.is_empty()),
        ("kernel", t.kernel.is_some()),
    ];
    if let Some((key, _)) = made.iter().find(|(_, set)| *set) {
        return ctx.err(
            p.span(),
            &format!("target[{ti}].{key}"),
            format!("target {path:?} is a directory that exists: fslab makes no filesystem there, so it takes no {key}"),
        );
    }
    if let Some(v) = variants
        .iter()
        .find(|v| v.mkfs_options.is_some() || v.mount_options.is_some() || !v.after_mkfs.is_empty())
    {
        return ctx.err(
            p.span(),
            &field,
            format!("variant {:?} changes how a filesystem is made or mounted, and target {path:?} is a directory that exists", v.name),
        );
    }
    let tsys = sysctls(ctx, &format!("target[{ti}].sysctl"), &t.sysctl)?;
    for v in variants {
        let mut label = t.label.clone().unwrap_or_else(|| path.clone());
        if !v.name.is_empty() {
            label.push_str(&format!(" [{}]", v.name));
        }
        let (sysctl, workload_args) = settings(machine, &tsys, t, v);
        cells.push(Cell {
            index: cells.len() as u32,
            label,
            fs: None,
            mkfs_options: vec![],
            mount_options: String::new(),
            sysctl,
            workload_args,
            after_mkfs: vec![],
            kernel: None,
            path: Some(std::path::PathBuf::from(path)),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::spec::{parse, Defaults};

    fn with(targets: &str) -> Result<crate::spec::Experiment, String> {
        let text = format!("name = \"x\"\n[workload]\nkind = \"fsmark\"\n{targets}");
        parse("x.toml", &text, &Defaults::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn targets_that_exist_are_cells_of_their_own_beside_made_filesystems() {
        let e = with("[[target]]\npath = \"/mnt/ext4\"\n[[target]]\npath = \"/mnt/xfs\"\nlabel = \"xfs\"\n[[target]]\nfs = \"btrfs\"\n").unwrap();
        let cells: Vec<(&str, Option<&str>, bool)> = e
            .cells
            .iter()
            .map(|c| {
                (
                    c.label.as_str(),
                    c.path.as_ref().and_then(|p| p.to_str()),
                    c.fs.is_some(),
                )
            })
            .collect();
        assert_eq!(
            cells,
            [
                ("/mnt/ext4", Some("/mnt/ext4"), false),
                ("xfs", Some("/mnt/xfs"), false),
                ("btrfs", None, true)
            ]
        );
        assert!(!crate::spec::Cell::all_in_paths(&e.cells));
        assert!(crate::spec::Cell::all_in_paths(&e.cells[..2]));
    }

    #[test]
    fn a_target_that_exists_takes_nothing_that_makes_or_mounts_a_filesystem() {
        for (target, says) in [
            ("path = \"/mnt/a\"\nfs = \"ext4\"", "x.toml:6: target[0]: give fs (a filesystem fslab makes) or path (a directory that exists), not both"),
            ("label = \"a\"", "target[0]: give fs = \"ext4\""),
            ("path = \"mnt/a\"", "target[0].path: \"mnt/a\" is not an absolute path"),
            ("path = \"/\"", "target[0].path: \"/\" is the root directory"),
            ("path = \"/mnt/a\"\nmount_options = [\"noatime\"]", "target[0].mount_options: target \"/mnt/a\" is a directory that exists: fslab makes no filesystem there, so it takes no mount_options"),
            ("path = \"/mnt/a\"\n[first_pass]", "first_pass: target \"/mnt/a\" is a directory that exists on this machine"),
        ] {
            let e = with(&format!("[[target]]\n{target}\n")).unwrap_err();
            assert!(e.contains(says), "{target}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let e = with(
            "[device]\nkind = \"directory\"\npath = \"/mnt/d\"\n[[target]]\npath = \"/mnt/a\"\n",
        )
        .unwrap_err();
        assert!(
            e.contains("give each target the directory it runs in (path = \"/mnt/x\")"),
            "{e}"
        );
    }
}
