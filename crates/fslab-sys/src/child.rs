//! Children that must not outlive fslab.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child started by `cmd` receive SIGKILL when this process dies,
/// kill -9 included (PR_SET_PDEATHSIG, set between fork and exec). For
/// programs that are not fslab, such as mpirun, which cannot be asked to do
/// it themselves. If this process is already gone by then, the child does
/// not start.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child before exec and makes
    // only async-signal-safe system calls (prctl, getppid), touching no
    // memory beyond its captured integer.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other("the parent fslab is gone"));
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dead(pid: u32) -> bool {
        // Gone, or a zombie waiting for its new parent to reap it.
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(s) => s
                .rsplit(") ")
                .next()
                .is_some_and(|rest| rest.starts_with('Z')),
        }
    }

    #[test]
    fn the_child_dies_with_its_parent() {
        if std::env::var_os("FSLAB_SYS_MIDDLE").is_some() {
            // The middle process: start a sleeper that must die with us, say
            // which it is, and exit at once.
            let mut s = Command::new("sleep");
            // Not holding our output open: the test reads it to its end.
            s.arg("30")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            die_with_parent(&mut s);
            let c = s.spawn().unwrap();
            println!("sleeper {}", c.id());
            std::process::exit(0);
        }
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child::tests::the_child_dies_with_its_parent"])
            .args(["--nocapture", "--test-threads", "1"])
            .env("FSLAB_SYS_MIDDLE", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let pid: u32 = text
            .lines()
            .find_map(|l| l.split("sleeper ").nth(1))
            .unwrap_or_else(|| panic!("no sleeper in {text:?}"))
            .trim()
            .parse()
            .unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !dead(pid) && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(
            dead(pid),
            "sleeper {pid} outlived the process that started it"
        );
    }
}
