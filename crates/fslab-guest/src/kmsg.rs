//! The kernel's log, read inside a guest from `/dev/kmsg` (every record
//! the ring buffer still holds, without waiting for more), as `dmesg`
//! prints it: `[SECONDS] MESSAGE`.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

/// The kernel log as text; empty when `/dev/kmsg` cannot be read.
pub fn read_all() -> String {
    let Ok(mut f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open("/dev/kmsg")
    else {
        return String::new();
    };
    let mut out = String::new();
    let mut buf = vec![0u8; 8192];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.push_str(&record(&String::from_utf8_lossy(&buf[..n]))),
            // EPIPE: records overwritten since; read on.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::PIPE.raw_os_error()) => {}
            Err(_) => break,
        }
    }
    out
}

/// One `/dev/kmsg` record (`PRI,SEQ,USEC,FLAGS;MESSAGE`, then
/// continuation lines) as a dmesg line.
pub fn record(r: &str) -> String {
    let Some((head, msg)) = r.split_once(';') else {
        return String::new();
    };
    let usec: u64 = head
        .split(',')
        .nth(2)
        .and_then(|u| u.parse().ok())
        .unwrap_or(0);
    let msg = msg.lines().next().unwrap_or("");
    format!("[{:>5}.{:06}] {msg}\n", usec / 1_000_000, usec % 1_000_000)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_record_reads_as_dmesg_prints_it() {
        assert_eq!(
            super::record("6,339,5140900,-;NET: Registered protocol family 10\n SUBSYSTEM=net\n"),
            "[    5.140900] NET: Registered protocol family 10\n"
        );
        assert_eq!(super::record("garbage"), "");
    }
}
