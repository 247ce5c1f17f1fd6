//! `[[wait_class]]` entries of an experiment file: kept in order, checked
//! when the file is read (so `fslab run --dry-run` refuses them too), each
//! bad one a line naming the file, its line and the entry.

use fslab_experiment::spec::{parse, Defaults};
use fslab_explain::waits::entries_of_text as wait_classes_of;

fn file(entries: &str) -> String {
    format!(
        "name = \"w\"\n[workload]\nkind = \"fsmark\"\nargs = [\"-n\", \"10\"]\n[[target]]\nfs = \"ext4\"\n{entries}"
    )
}

#[test]
fn an_experiments_wait_classes_are_kept_and_read_back_from_its_text() {
    let text = file(
        "[[wait_class]]\nclass = \"journal\"\nstack = [\"jbd2_journal_get_write_access\", \"do_get_write_access\"]\n[[wait_class]]\nclass = \"lock\"\nstack = [\"my_lock\", \"*\"]\n",
    );
    let e = parse("w.toml", &text, &Defaults::default()).unwrap();
    assert_eq!(e.wait_classes.len(), 2);
    assert_eq!(e.wait_classes[1].class, "lock");
    assert_eq!(wait_classes_of(&text), e.wait_classes);
    assert!(wait_classes_of("not toml [").is_empty());
    let none = parse("w.toml", &file(""), &Defaults::default()).unwrap();
    assert!(none.wait_classes.is_empty());
}

#[test]
fn a_bad_wait_class_is_one_line_at_its_entry() {
    let err = |entries: &str| {
        parse("w.toml", &file(entries), &Defaults::default())
            .unwrap_err()
            .to_string()
    };
    let ok = "[[wait_class]]\nclass = \"journal\"\nstack = [\"a\"]\n";
    // The second entry, on line 10, names an unknown class.
    let unknown = err(&format!(
        "{ok}[[wait_class]]\nclass = \"jornal\"\nstack = [\"a\"]\n"
    ));
    assert!(
        unknown.starts_with("w.toml:10: wait_class: [[wait_class]] 2: unknown class \"jornal\""),
        "{unknown}"
    );
    assert_eq!(
        err("[[wait_class]]\nclass = \"lock\"\nstack = []\n"),
        "w.toml:7: wait_class: [[wait_class]] 1 (lock): stack names no function"
    );
    let bad_name = err("[[wait_class]]\nclass = \"lock\"\nstack = [\"*\", \"x\"]\n");
    assert!(
        bad_name.contains("\"*\" is not a kernel function name"),
        "{bad_name}"
    );
    // Malformed: not a list, a field it does not know, no class.
    for m in [
        "[[wait_class]]\nclass = \"lock\"\nstack = \"x\"\n",
        "[[wait_class]]\nclass = \"lock\"\nstack = [\"x\"]\nwhere = 1\n",
        "[[wait_class]]\nstack = [\"x\"]\n",
    ] {
        let e = err(m);
        assert!(e.starts_with("w.toml:") && !e.contains('\n'), "{e}");
    }
}
