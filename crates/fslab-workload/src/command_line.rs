//! A job written back as its command line, from its typed options: what
//! `fslab run` records and prints for a cell whose options it changed
//! (`--scale`), so that what is shown is what runs. Generic over every
//! registered workload: clap's argument ids are the options' field names,
//! which serde writes.

use serde_json::{Map, Value};

use crate::plugin::Job;

/// The options' fields by name, the flattened ones (the common options)
/// beside the workload's own.
fn fields(options: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Value::Object(m) = options {
        for (k, v) in m {
            match v {
                Value::Object(_) => out.extend(fields(v)),
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// A value as the command line writes it (None for unset).
fn words(v: &Value) -> Vec<String> {
    match v {
        Value::Null => Vec::new(),
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(words).collect(),
        other => vec![other.to_string()],
    }
}

/// How the command line names an option: its letter, else its long name,
/// else (a positional) its value name.
pub fn spelling(a: &clap::Arg) -> String {
    if let Some(c) = a.get_short() {
        format!("-{c}")
    } else if let Some(l) = a.get_long() {
        format!("--{l}")
    } else {
        a.get_value_names()
            .and_then(|n| n.first())
            .map(|n| n.to_string())
            .unwrap_or_else(|| a.get_id().to_string())
    }
}

fn is_flag(a: &clap::Arg) -> bool {
    matches!(
        a.get_action(),
        clap::ArgAction::SetTrue | clap::ArgAction::SetFalse
    )
}

fn shown(a: &clap::Arg) -> bool {
    !matches!(
        a.get_action(),
        clap::ArgAction::Help
            | clap::ArgAction::HelpShort
            | clap::ArgAction::HelpLong
            | clap::ArgAction::Version
    )
}

/// The job's command line (its name first): every option that differs from
/// its default, in the order the workload declares them, then its
/// positional arguments.
pub fn render(job: &Job) -> Vec<String> {
    let kind = job.kind();
    let cmd = kind.workload().command();
    let f = fields(&job.to_json()["options"]);
    let mut v = vec![kind.name().to_string()];
    let mut positional = Vec::new();
    for a in cmd.get_arguments().filter(|a| shown(a)) {
        let Some(value) = f.get(a.get_id().as_str()) else {
            continue;
        };
        if a.is_positional() {
            positional.push((a.get_index().unwrap_or(usize::MAX), words(value)));
        } else if is_flag(a) {
            if value == &Value::Bool(true) {
                v.push(spelling(a));
            }
        } else if matches!(a.get_action(), clap::ArgAction::Count) {
            // A counted flag (`-v -v`): given as often as its count.
            for _ in 0..value.as_u64().unwrap_or(0) {
                v.push(spelling(a));
            }
        } else {
            let w = words(value);
            let default: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect();
            if w == default {
                continue;
            }
            for x in w {
                v.push(spelling(a));
                v.push(x);
            }
        }
    }
    positional.sort_by_key(|(i, _)| *i);
    v.extend(positional.into_iter().flat_map(|(_, w)| w));
    v
}

/// What differs between two jobs of one workload, option by option:
/// `(option, from, to)` (`("-n", "100000", "1000")`).
pub fn changes(before: &Job, after: &Job) -> Vec<(String, String, String)> {
    let cmd = after.kind().workload().command();
    let (b, a) = (
        fields(&before.to_json()["options"]),
        fields(&after.to_json()["options"]),
    );
    let text = |v: Option<&Value>| {
        let w = v.map(words).unwrap_or_default();
        if w.is_empty() {
            "(unset)".to_string()
        } else {
            w.join(" ")
        }
    };
    cmd.get_arguments()
        .filter(|x| shown(x))
        .filter_map(|x| {
            let id = x.get_id().as_str();
            (b.get(id) != a.get(id)).then(|| (spelling(x), text(b.get(id)), text(a.get(id))))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::all;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_workloads_rendered_command_line_parses_back_to_the_same_job() {
        let cases = [
            ("fsmark", "-S0 -n 100000 -D 10000 -s 0 -L 63 -t 8 --phases create,stat -l /dev/null --probes=none -d /a -d /b"),
            ("createmany", "-m -t 60 --threads 4 --shared-dir -r /m/g%d /m/f%08d 5 100"),
            ("createmany", "-o -k -x 100 /m/f -5"),
            ("tiotest", "-f 90 -r 15000 -b 4096 -t 2 -k 1 -k 3 -F -d /a"),
            ("alloctest", "--fallocate /m/big 11534336"),
            ("dbench", "-t 1 --warmup 0 -x -D /m 8"),
            ("dbench", "--print-loadfile"),
            ("compilebench", "-D /m -i 3 -r 0 --seed 7 -n"),
            ("mdtest", "-n 10 -v -v -F -d /m"),
        ];
        for (name, args) in cases {
            let kind = crate::WorkloadRef::of(name).unwrap();
            let job = kind.parse(&argv(args)).unwrap();
            let shown = render(&job);
            assert_eq!(shown[0], name);
            let back = kind.parse(&shown[1..]).unwrap();
            assert_eq!(back.to_json(), job.to_json(), "{name}: {shown:?}");
        }
        // The defaults are left out: the line says what was chosen.
        let plain = crate::WorkloadRef::of("dbench")
            .unwrap()
            .parse(&argv("-D /m 2"))
            .unwrap();
        assert_eq!(render(&plain), ["dbench", "-D", "/m", "2"]);
        assert!(all().len() >= 6);
    }

    #[test]
    fn the_changes_of_a_scale_are_named_by_option() {
        let kind = crate::WorkloadRef::of("fsmark").unwrap();
        let job = kind.parse(&argv("-n 100000 -D 10000 -L 63 -d /a")).unwrap();
        let mut scaled = job.clone();
        scaled.scale(0.01);
        assert_eq!(
            changes(&job, &scaled),
            [
                ("-n".to_string(), "100000".to_string(), "1000".to_string()),
                ("-D".to_string(), "10000".to_string(), "100".to_string())
            ]
        );
        let cm = crate::WorkloadRef::of("createmany").unwrap();
        let job = cm.parse(&argv("-m /m/f 20000000")).unwrap();
        let mut scaled = job.clone();
        scaled.scale(0.001);
        assert_eq!(
            changes(&job, &scaled),
            [(
                "NUMBERS".to_string(),
                "20000000".to_string(),
                "20000".to_string()
            )]
        );
        assert!(changes(&job, &job).is_empty());
    }
}
