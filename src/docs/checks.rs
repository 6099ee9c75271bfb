//! The checks: one checked list against the code, a file's text outside
//! its lists for lists nobody checks, dead paths and wrong counts.

use std::collections::BTreeSet;

use super::code::{command_flags, every_queue, queues_of, table_names};
use super::markdown::{Checked, Kind, controllers_in, flags_in, quoted, spelled, table_rows};
use crate::config::{Flags, parse_go_duration};
use crate::controllers::{flags, table};

/// The defaults a flags list gives (`` `--kube-api-qps` 20 ``: the word
/// after the flag, when it is not a parenthesis or another flag) that are
/// not the command's. Go durations compare by value (`5m` is `5m0s`);
/// `text|json` gives the default first.
pub(super) fn wrong_defaults(text: &str) -> Vec<String> {
    let command = Flags::command(&flags());
    let default_of = |flag: &str| {
        let long = flag.strip_prefix("--").unwrap_or("v");
        let arg = command.get_arguments().find(|arg| arg.get_long() == Some(long))?;
        Some(arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect::<Vec<_>>().join(","))
    };
    let same = |written: &str, default: &str| {
        written == default
            || matches!((parse_go_duration(written), parse_go_duration(default)), (Ok(a), Ok(b)) if a == b)
    };
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut wrong = Vec::new();
    for (flag, after) in text.split(" `").filter_map(|part| part.split_once("` ")) {
        let Some(default) = default_of(flag.trim_start_matches('`')) else { continue };
        let written = after.split(' ').next().unwrap_or_default().trim_end_matches([',', ';', '.']);
        let written = written.split('|').next().unwrap_or_default().trim_matches('`');
        if written.starts_with(['(', '-']) || written == "and" || flag.starts_with('*') {
            continue;
        }
        if !same(written, &default) {
            wrong.push(format!("{flag} {written}: its default is {default}"));
        }
    }
    wrong
}

/// What `want` lacks and what it does not have, if they differ.
pub(super) fn compare(what: &str, found: &BTreeSet<String>, want: &BTreeSet<String>) -> Option<String> {
    let missing: Vec<_> = want.difference(found).collect();
    let extra: Vec<_> = found.difference(want).collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| format!("{what}: missing {missing:?}, unknown {extra:?}"))
}

/// A controller table: one row per controller, its name (backticked) in the
/// first cell and its queues (backticked) in the second.
pub(super) fn check_controller_table(text: &str, wrong: &mut Vec<String>) {
    let mut names = BTreeSet::new();
    for cells in table_rows(text) {
        let [name, queues, ..] = cells.as_slice() else {
            wrong.push(format!("a row without a queues cell: {cells:?}"));
            continue;
        };
        let name = quoted(name).first().map(|n| (*n).to_owned()).unwrap_or_default();
        if !table_names().contains(&name) {
            wrong.push(format!("row {name:?}: not a controller of the table"));
            continue;
        }
        let found: BTreeSet<String> = quoted(queues).into_iter().map(str::to_owned).collect();
        let want: BTreeSet<String> = queues_of(&name).unwrap_or_default().iter().map(|q| (*q).to_owned()).collect();
        wrong.extend(compare(&format!("{name}'s queues"), &found, &want));
        names.insert(name);
    }
    wrong.extend(compare("controllers", &names, &table_names()));
}

/// The repository paths `text` names in backticks (`src/drivers/job/`,
/// `runtime/src/server.rs`) that do not exist.
pub(super) fn missing_paths(file: &str, text: &str) -> Vec<String> {
    const TOP: [&str; 10] = [
        "src/",
        "controllers/",
        "runtime/",
        "objects/",
        "gotime/",
        "sim/",
        "tests/",
        "deploy/",
        "examples/",
        "benches/",
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    quoted(text)
        .into_iter()
        .filter(|q| TOP.iter().any(|top| q.starts_with(top)))
        .filter(|q| !q.contains(|c: char| c.is_whitespace() || "<>{}*,".contains(c)))
        .filter(|q| !root.join(q).exists())
        .map(|q| format!("{file}: `{q}` does not exist"))
        .collect()
}

/// What is wrong with one checked list.
pub(super) fn check_list(list: &Checked) -> Vec<String> {
    let mut wrong = Vec::new();
    match list.kind {
        Kind::Controllers => wrong.extend(compare("controllers", &controllers_in(&list.text), &table_names())),
        Kind::Flags => {
            wrong.extend(compare("flags", &flags_in(&list.text), &command_flags()));
            wrong.extend(wrong_defaults(&list.text));
        }
        Kind::ControllerTable => check_controller_table(&list.text, &mut wrong),
    }
    wrong
}

/// The paragraphs of `outside` (a file's text outside its checked lists)
/// that list several controllers, flags or queues: lists nobody checks.
pub(super) fn unchecked_lists(file: &str, outside: &str) -> Vec<String> {
    let flags = command_flags();
    let queues = every_queue();
    // Queues named like a controller's module (`job`, `namespace`) are
    // also test modules and resources: only the unmistakable ones count.
    let unmistakable = |q: &&str| queues.contains(*q) && q.contains(|c: char| c == '_' || c.is_uppercase());
    let mut wrong = Vec::new();
    for paragraph in outside.split("\n\n") {
        let start = paragraph.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        let start: String = start.chars().take(60).collect();
        let named = controllers_in(paragraph).intersection(&table_names()).count();
        if named >= 3 {
            wrong.push(format!("{file}: {named} controllers listed outside a checked list: {start:?}"));
        }
        let named = flags_in(paragraph).intersection(&flags).count();
        if named >= 8 {
            wrong.push(format!("{file}: {named} flags listed outside a checked list: {start:?}"));
        }
        let named: BTreeSet<&str> = quoted(paragraph).into_iter().filter(unmistakable).collect();
        if named.len() >= 3 {
            wrong.push(format!("{file}: queues {named:?} listed outside a checked list: {start:?}"));
        }
    }
    wrong
}

/// Counts of controllers spelled out in `text` ("twenty … controllers")
/// that are not the table's.
pub(super) fn wrong_counts(file: &str, text: &str) -> Vec<String> {
    let count = spelled(table().count());
    let counts: Vec<String> = (11..100).map(spelled).collect();
    let lower = text.to_lowercase();
    let words: Vec<&str> =
        lower.split(|c: char| !c.is_ascii_alphabetic() && c != '-').filter(|w| !w.is_empty()).collect();
    let mut wrong = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let counted = words[i + 1..].iter().take(4).any(|w| w.starts_with("controller"));
        if counted && counts.iter().any(|c| c == word) && *word != count {
            wrong.push(format!("{file}: \"{word} … controllers\", but the table has {count}"));
        }
    }
    wrong
}
