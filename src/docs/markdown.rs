//! What the docs say: README.md and `docs/*.md` read, their checked lists
//! split out, and the words, flags, backticked names and table rows in a
//! text.

use std::collections::BTreeSet;

/// README.md, then every `docs/*.md`, with their paths.
pub(super) fn markdown_files() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut names: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("docs/ entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    names.sort();
    std::iter::once("README.md".to_owned()).chain(names).map(|name| (name.clone(), read(&name))).collect()
}

/// What a delimited list lists.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// `controllers`: controllers by their table names.
    Controllers,
    /// `flags`: the command's flags, with their defaults.
    Flags,
    /// `controller-table`: a table of the controllers and their queues.
    ControllerTable,
}

/// One delimited list: its kind, where it starts, its text.
pub(super) struct Checked {
    pub(super) kind: Kind,
    pub(super) line: usize,
    pub(super) text: String,
}

/// A file's checked lists, and its text outside them.
pub(super) fn split(file: &str, text: &str) -> (Vec<Checked>, String) {
    let mut lists = Vec::new();
    let mut outside = String::new();
    let mut open: Option<Checked> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(kind) = trimmed.strip_prefix("<!-- checked: ").and_then(|rest| rest.strip_suffix(" -->")) {
            assert!(open.is_none(), "{file}:{}: a checked list inside another", i + 1);
            let kind = match kind {
                "controllers" => Kind::Controllers,
                "flags" => Kind::Flags,
                "controller-table" => Kind::ControllerTable,
                other => panic!("{file}:{}: unknown kind of checked list {other:?}", i + 1),
            };
            open = Some(Checked { kind, line: i + 1, text: String::new() });
        } else if trimmed == "<!-- /checked -->" {
            lists.push(open.take().unwrap_or_else(|| panic!("{file}:{}: /checked without checked", i + 1)));
            // The list is a paragraph of its own.
            outside.push('\n');
        } else if let Some(list) = open.as_mut() {
            list.text.push_str(line);
            list.text.push('\n');
        } else {
            outside.push_str(line);
            outside.push('\n');
        }
    }
    assert!(open.is_none(), "{file}: a checked list is never closed");
    (lists, outside)
}

/// The words of `text` made of lower-case letters, digits and `-`, with a
/// leading `-` dropped unless it is a flag's `--` (`-job-controller` in
/// `--controllers=*,-job-controller` is the controller).
pub(super) fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
        .map(|w| if w.starts_with("--") { w } else { w.trim_start_matches('-') })
        .filter(|w| !w.is_empty())
}

/// The controller names `text` mentions.
pub(super) fn controllers_in(text: &str) -> BTreeSet<String> {
    words(text).filter(|w| w.ends_with("-controller")).map(str::to_owned).collect()
}

/// The flags `text` mentions (`-v` is the one without a long name in
/// upstream's spelling).
pub(super) fn flags_in(text: &str) -> BTreeSet<String> {
    words(text)
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_owned)
        .chain(text.contains("`-v`").then(|| "-v".to_owned()))
        .collect()
}

/// The words of `text` between backticks.
pub(super) fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The body rows of a Markdown table, split into cells.
pub(super) fn table_rows(text: &str) -> Vec<Vec<&str>> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|line| line.trim_start().starts_with('|'))
        .map(|line| line.trim().trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    // The header and the `|---|` line.
    rows.into_iter().skip(2).collect()
}

/// Numbers as the docs spell counts of controllers.
pub(super) fn spelled(n: usize) -> String {
    const ONES: &str = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen \
                        fifteen sixteen seventeen eighteen nineteen";
    const TENS: &str = "_ _ twenty thirty forty fifty sixty seventy eighty ninety";
    let ones = |n: usize| ONES.split_whitespace().nth(n).unwrap_or_default();
    let tens = |n: usize| TENS.split(' ').nth(n).unwrap_or_default();
    match n {
        0..20 => ones(n).to_owned(),
        _ if n.is_multiple_of(10) => tens(n / 10).to_owned(),
        _ => format!("{}-{}", tens(n / 10), ones(n % 10)),
    }
}
