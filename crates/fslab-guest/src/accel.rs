//! Which accelerator a guest runs under: KVM where it boots a kernel,
//! TCG (QEMU's software emulation) otherwise. Having /dev/kvm is not
//! enough (on some hosts KVM runs a guest's firmware but never its
//! kernel), so the first guest of a host's boot tries KVM once with a
//! tiny initramfs, and the answer is kept in the cache for that boot.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{GuestError, Kernel};

/// The accelerator, and why it was chosen (kept with every guest run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accel {
    /// `kvm` or `tcg`.
    pub name: String,
    pub why: String,
}

impl Accel {
    pub fn tcg(why: impl Into<String>) -> Accel {
        Accel {
            name: "tcg".into(),
            why: why.into(),
        }
    }

    /// Times measured under it are the host's (KVM) or emulated (TCG).
    pub fn emulated(&self) -> bool {
        self.name == "tcg"
    }
}

/// How long KVM has to bring a tiny guest to its init.
const KVM_PROBE_LIMIT: Duration = Duration::from_secs(20);

/// The accelerator for guests of `kernel`: `$FSLAB_GUEST_ACCEL` (`kvm` or
/// `tcg`) when set, else KVM if it has booted a guest on this host since
/// it booted (tried once), else TCG.
pub fn choose(kernel: &Kernel, cache: &Path, scratch: &Path) -> Result<Accel, GuestError> {
    match std::env::var("FSLAB_GUEST_ACCEL").as_deref() {
        Ok("tcg") => return Ok(Accel::tcg("FSLAB_GUEST_ACCEL=tcg")),
        Ok("kvm") => {
            return Ok(Accel {
                name: "kvm".into(),
                why: "FSLAB_GUEST_ACCEL=kvm".into(),
            })
        }
        Ok("") | Ok("auto") | Err(_) => {}
        Ok(other) => {
            return Err(GuestError::BadName(format!(
                "FSLAB_GUEST_ACCEL={other} (use kvm, tcg or auto)"
            )))
        }
    }
    let kvm = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm");
    if let Err(e) = kvm {
        return Ok(Accel::tcg(format!("no usable /dev/kvm ({e})")));
    }
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .unwrap_or_default()
        .trim()
        .to_string();
    let memo = cache.join(format!("accel-{boot_id}.json"));
    if let Some(a) = std::fs::read(&memo)
        .ok()
        .and_then(|b| serde_json::from_slice::<Accel>(&b).ok())
    {
        return Ok(a);
    }
    let booted = crate::qemu::probe_kvm(kernel, scratch, KVM_PROBE_LIMIT)?;
    let a = if booted {
        Accel {
            name: "kvm".into(),
            why: "KVM booted a test guest on this host".into(),
        }
    } else {
        Accel::tcg(format!(
            "KVM did not bring a test guest's kernel up within {} s on this host",
            KVM_PROBE_LIMIT.as_secs()
        ))
    };
    let _ = std::fs::create_dir_all(cache);
    let _ = std::fs::write(&memo, serde_json::to_vec(&a).unwrap_or_default());
    Ok(a)
}
