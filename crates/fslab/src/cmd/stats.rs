//! `fslab stats [--trim-outliers]`: the `stats --trim-outliers | tail -1` of
//! seed 000 over the numbers on stdin (see `fslab_stats::columns`).

use std::io::Read;

use crate::Failure;

pub fn run(trim: bool) -> Result<(), Failure> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Failure::Failed(format!("stats: reading stdin: {e}")))?;
    match fslab_stats::columns::stats_line(&text, trim) {
        Some(line) => super::print_all(format!("{line}\n").as_bytes()),
        None => Err(Failure::Usage("stats: no lines of numbers on stdin".into())),
    }
}
