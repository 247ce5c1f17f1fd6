//! Kernels obtained as Debian packages: `debian:RELEASE` is the package
//! `linux-image-RELEASE`, fetched with `apt-get download` into fslab's
//! cache and unpacked there with `dpkg-deb -x` (nothing is installed on
//! the system), once.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{GuestError, Kernel};

/// The prefix of a packaged kernel's name in an experiment.
pub const DEBIAN: &str = "debian:";

/// fslab's cache: `$FSLAB_CACHE_DIR`, else `/var/cache/fslab` for root,
/// else `$XDG_CACHE_HOME/fslab`, else `~/.cache/fslab`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("FSLAB_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if rustix::process::geteuid().is_root() {
        return PathBuf::from("/var/cache/fslab");
    }
    match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
        (Some(x), _) if !x.is_empty() => PathBuf::from(x).join("fslab"),
        (_, Some(h)) => PathBuf::from(h).join(".cache/fslab"),
        _ => PathBuf::from("/var/tmp/fslab-cache"),
    }
}

/// The release a `debian:RELEASE` names, checked to be a package name.
pub fn debian_release(name: &str) -> Result<Option<&str>, GuestError> {
    let Some(r) = name.strip_prefix(DEBIAN) else {
        return Ok(None);
    };
    let ok = r.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && r.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b".+-".contains(&b));
    if ok {
        Ok(Some(r))
    } else {
        Err(GuestError::BadName(name.to_string()))
    }
}

/// Where `debian:RELEASE` is unpacked in `cache`.
pub fn unpacked_dir(cache: &Path, release: &str) -> PathBuf {
    cache.join("kernels").join(release)
}

/// The marker of a completely unpacked package.
const DONE: &str = ".unpacked";

/// The kernel `debian:RELEASE`, fetched and unpacked into `cache` unless it
/// is there already.
pub fn fetch(release: &str, cache: &Path) -> Result<Kernel, GuestError> {
    let dir = unpacked_dir(cache, release);
    if !dir.join(DONE).exists() {
        unpack(release, cache, &dir)?;
    }
    Kernel::open(
        &format!("{DEBIAN}{release}"),
        &dir.join("boot").join(format!("vmlinuz-{release}")),
    )
}

/// Whether `debian:RELEASE` can be had (cached, or in the package lists),
/// without fetching it: `apt-cache show`.
pub fn available(release: &str, cache: &Path) -> Result<(), GuestError> {
    if unpacked_dir(cache, release).join(DONE).exists() {
        return Ok(());
    }
    let pkg = format!("linux-image-{release}");
    let out = run(Command::new("apt-cache").args(["show", "--no-all-versions", &pkg]))?;
    if out.status.success() && !out.stdout.is_empty() {
        Ok(())
    } else {
        Err(GuestError::NoPackage {
            name: release.to_string(),
            why: last_line(&out.stderr, "apt-cache show found nothing"),
        })
    }
}

/// A number for each fetch this process starts (two threads may fetch the
/// same package at once).
fn next_fetch() -> u64 {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// `apt-get download` + `dpkg-deb -x` into a directory of this process,
/// moved into place when complete (a concurrent fetch of the same package
/// loses the race harmlessly).
fn unpack(release: &str, cache: &Path, dir: &Path) -> Result<(), GuestError> {
    let tmp = cache.join("kernels").join(format!(
        ".fetch-{release}-{}-{}",
        std::process::id(),
        next_fetch()
    ));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| GuestError::io(&tmp, e))?;
    let res = download_and_extract(release, &tmp, dir);
    let _ = std::fs::remove_dir_all(&tmp);
    res
}

fn download_and_extract(release: &str, tmp: &Path, dir: &Path) -> Result<(), GuestError> {
    let pkg = format!("linux-image-{release}");
    // apt's download user cannot write into root's directories: download as root.
    let out = run(Command::new("apt-get")
        .args(["-q", "-o", "APT::Sandbox::User=root", "download", &pkg])
        .current_dir(tmp))?;
    if !out.status.success() {
        return Err(GuestError::NoPackage {
            name: release.to_string(),
            why: last_line(&out.stderr, "apt-get download failed"),
        });
    }
    let deb = std::fs::read_dir(tmp)
        .map_err(|e| GuestError::io(tmp, e))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| GuestError::Command {
            command: format!("apt-get download {pkg}"),
            why: "it left no .deb".into(),
        })?;
    let root = tmp.join("root");
    let out = run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root))?;
    if !out.status.success() {
        return Err(GuestError::Command {
            command: format!("dpkg-deb -x {}", deb.display()),
            why: last_line(&out.stderr, "failed"),
        });
    }
    let deb_name = deb.file_name().map(|n| n.to_string_lossy().into_owned());
    std::fs::write(root.join(DONE), deb_name.unwrap_or_default())
        .map_err(|e| GuestError::io(&root, e))?;
    match std::fs::rename(&root, dir) {
        Ok(()) => Ok(()),
        // Another fetch finished first.
        Err(_) if dir.join(DONE).exists() => Ok(()),
        Err(e) => Err(GuestError::io(dir, e)),
    }
}

/// Runs a command, a missing program named as such.
fn run(cmd: &mut Command) -> Result<std::process::Output, GuestError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            GuestError::NoTool {
                tool: program,
                hint: "kernels named debian:RELEASE need Debian's apt-get and dpkg-deb".into(),
            }
        } else {
            GuestError::Command {
                command: program,
                why: e.to_string(),
            }
        }
    })
}

/// The last non-empty line of a command's output, else `default`.
fn last_line(out: &[u8], default: &str) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .unwrap_or_else(|| default.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_debian_name_is_a_package_release_or_refused() {
        assert_eq!(
            debian_release("debian:6.1.0-50-cloud-amd64").unwrap(),
            Some("6.1.0-50-cloud-amd64")
        );
        assert_eq!(debian_release("/boot/vmlinuz").unwrap(), None);
        for bad in [
            "debian:",
            "debian:cloud",
            "debian:6.1 x",
            "debian:6.1;rm",
            "debian:../6",
        ] {
            assert!(debian_release(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_cached_package_is_not_fetched_again() {
        let d = tempfile::tempdir().unwrap();
        let dir = unpacked_dir(d.path(), "6.1.0-99-test");
        std::fs::create_dir_all(dir.join("boot")).unwrap();
        std::fs::write(dir.join(DONE), "x.deb").unwrap();
        // Cached: available without apt-cache; the image is then checked.
        available("6.1.0-99-test", d.path()).unwrap();
        let e = fetch("6.1.0-99-test", d.path()).unwrap_err();
        assert!(matches!(e, GuestError::NoImage(_)), "{e}");
    }
}
