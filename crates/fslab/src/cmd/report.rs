//! `fslab report -o FILE.html`: the analysis (fslab-analysis, as `compare`
//! makes it) as fslab-present's HTML page; this writes it.

use std::path::Path;

use fslab_present::report::page;

use crate::Failure;
use fslab_present::select_args::SelectArgs;

pub fn run(sel: SelectArgs, output: &Path, db: &Path) -> Result<(), Failure> {
    super::check_output(Some(output))?;
    let store = super::open_store_read(db)?;
    let a = fslab_analysis::from_store(&store, &sel.choice(fslab_explain::EXPLAINERS))
        .map_err(super::analysis_failure)?;
    let p = page::build(&store, &a).map_err(super::results_failure)?;
    // `-o -`: the page on stdout (the line about it on stderr).
    if output == Path::new("-") {
        super::print_all(p.html.as_bytes())?;
        remark!("fslab: report: {} charts, {} cells", p.charts, p.cells);
        return Ok(());
    }
    std::fs::write(output, p.html)
        .map_err(|e| Failure::Failed(format!("report: cannot write {}: {e}", output.display())))?;
    super::say(format!(
        "wrote {} ({} charts, {} cells)\n",
        output.display(),
        p.charts,
        p.cells
    ))?;
    Ok(())
}
