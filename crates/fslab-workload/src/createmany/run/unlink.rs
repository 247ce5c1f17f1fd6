//! -u and -r: each name unlinked right after its create, and why that
//! failed.

use rustix::fs::{AtFlags, CWD};
use rustix::io::Errno;

use super::super::{CreateManyOptions, NameFmt, Op};

/// Why -u/-r's unlink of a name failed, in createmany's words
/// ("unlink(NAME) error: ..."). Made only when it fails.
#[derive(Debug, thiserror::Error)]
pub(super) enum UnlinkError {
    #[error("name {0} holds a NUL byte")]
    Nul(String),
    #[error("unlink({name}) error: {source}")]
    Unlink {
        name: String,
        #[source]
        source: Errno,
    },
}

/// -u and -r: unlinks name `number` of `uf` right after its create. In
/// the timed loop, once a name: inlined, so the `unlinkat` is made in the
/// loop's own body (docs/speed.md: a system call inside a function that
/// returns costs more on this kind of machine).
#[inline(always)]
pub(super) fn unlink_now(
    o: &CreateManyOptions,
    uf: &NameFmt,
    number: i64,
    ubuf: &mut Vec<u8>,
) -> Result<(), UnlinkError> {
    uf.render(number, ubuf);
    let Ok(uname) = std::ffi::CStr::from_bytes_with_nul(ubuf) else {
        return Err(UnlinkError::Nul(uf.name(number)));
    };
    let flags = if o.op == Op::Mkdir {
        AtFlags::REMOVEDIR
    } else {
        AtFlags::empty()
    };
    rustix::fs::unlinkat(CWD, uname, flags).map_err(|source| UnlinkError::Unlink {
        name: uf.name(number),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlink_that_fails_says_createmanys_words_and_keeps_the_errno() {
        let e = UnlinkError::Unlink {
            name: "d/f7".into(),
            source: Errno::NOENT,
        };
        assert_eq!(
            e.to_string(),
            "unlink(d/f7) error: No such file or directory (os error 2)"
        );
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(
            UnlinkError::Nul("a\0b".into()).to_string(),
            "name a\0b holds a NUL byte"
        );
    }
}
