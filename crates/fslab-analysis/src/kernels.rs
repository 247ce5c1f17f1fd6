//! Which kernel each group of a comparison ran on: named when the groups
//! differ in it, and a warning when a group ran in a guest under TCG
//! (QEMU's software emulation), whose times are emulated.

use fslab_store::Store;

use crate::select::GroupRun;
use crate::Result;

/// What carries over from an emulated guest to a real machine.
pub const COUNTS_CARRY_OVER: &str =
    "only counts carry over (extents, IO sizes and counts, htree levels, calls, journal commits)";

/// One group's kernel: its runs' `uname -r`, and the guest it ran in.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupKernel {
    pub label: String,
    pub release: String,
    /// `kvm` or `tcg` for a group that ran in a guest.
    pub accel: Option<String>,
}

impl GroupKernel {
    fn describe(&self) -> String {
        match &self.accel {
            Some(a) => format!(
                "{:?} ran on {} (in a guest, {})",
                self.label,
                self.release,
                a.to_uppercase()
            ),
            None => format!("{:?} ran on {}", self.label, self.release),
        }
    }
}

/// Each group's kernel, from its first run.
pub fn group_kernels(
    store: &Store,
    labels: &[String],
    runs: &[Vec<GroupRun>],
) -> Result<Vec<GroupKernel>> {
    let mut out = Vec::new();
    for (label, runs) in labels.iter().zip(runs) {
        let Some(first) = runs.first() else { continue };
        let release = store.run(first.id)?.run.kernel;
        let accel = store
            .run_origin(first.id)?
            .and_then(|o| o.cell_run.guest)
            .map(|f| f.accel);
        out.push(GroupKernel {
            label: label.clone(),
            release,
            accel,
        });
    }
    Ok(out)
}

/// The lines a comparison shows about kernels: the kernels named when
/// the groups differ in them, and the TCG warning. Empty when every group
/// ran natively on one kernel.
pub fn lines(kernels: &[GroupKernel]) -> Vec<String> {
    let mut out = Vec::new();
    let differ = kernels.iter().any(|k| k.release != kernels[0].release);
    let guests = kernels.iter().any(|k| k.accel.is_some());
    if differ || guests {
        let list: Vec<String> = kernels.iter().map(GroupKernel::describe).collect();
        let head = if differ {
            "kernel: the groups differ in kernel"
        } else {
            "kernel: the groups ran on one kernel"
        };
        out.push(format!("{head}: {}", list.join("; ")));
    }
    let emulated: Vec<&str> = kernels
        .iter()
        .filter(|k| k.accel.as_deref() == Some("tcg"))
        .map(|k| k.label.as_str())
        .collect();
    if !emulated.is_empty() {
        out.push(format!(
            "warning: {} ran under TCG (QEMU's software emulation): its times, rates and CPU \
             figures are emulated, not the kernel's; {COUNTS_CARRY_OVER}",
            emulated.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(label: &str, release: &str, accel: Option<&str>) -> GroupKernel {
        GroupKernel {
            label: label.into(),
            release: release.into(),
            accel: accel.map(String::from),
        }
    }

    #[test]
    fn groups_on_different_kernels_are_named_and_tcg_is_warned_of() {
        let l = lines(&[
            k("ext4", "6.18.4", None),
            k("ext4 on 6.1.0-50", "6.1.0-50-cloud-amd64", Some("tcg")),
        ]);
        assert_eq!(
            l[0],
            "kernel: the groups differ in kernel: \"ext4\" ran on 6.18.4; \"ext4 on 6.1.0-50\" ran \
             on 6.1.0-50-cloud-amd64 (in a guest, TCG)"
        );
        assert!(
            l[1].starts_with("warning: ext4 on 6.1.0-50 ran under TCG"),
            "{}",
            l[1]
        );
        assert!(l[1].contains("htree levels"));
    }

    #[test]
    fn one_native_kernel_says_nothing_and_kvm_guests_are_not_warned_of() {
        assert!(lines(&[k("a", "6.18", None), k("b", "6.18", None)]).is_empty());
        let l = lines(&[k("a", "6.1", Some("kvm")), k("b", "6.2", Some("kvm"))]);
        assert_eq!(l.len(), 1, "{l:?}");
    }
}
