//! README.md and `docs/` checked against the code, so that they cannot
//! drift: every list of controllers, flags, workqueues and health checks in
//! them is compared with the controller table ([`TABLE`]), the command line
//! ([`Flags::command`], read through clap's introspection) and the drivers'
//! queue names.
//!
//! The lists are the docs' own prose, bullets and tables, delimited by HTML
//! comments that do not show when the Markdown is rendered:
//!
//! ```text
//! <!-- checked: controllers -->  every controller's name, none other
//! <!-- checked: flags -->        every flag `kcm-rs --help` shows, none other,
//!                                and its default where one follows it
//! <!-- checked: controller-table --> a table: a controller's name, then its queues
//! <!-- /checked -->              ends the list
//! ```
//!
//! A paragraph outside such a list that names several controllers, flags
//! or queues is a list nobody checks, and fails too; so does a count of
//! controllers spelled out ("twenty controllers") that is not the table's.

use std::collections::BTreeSet;

use kcm_runtime::leader::LeaderHealth;

use crate::config::{Flags, parse_go_duration};
use crate::controllers::{TABLE, flags, implemented};
use crate::drivers::{
    clusterroleaggregation, cronjob, daemonset, deployment, endpoint, endpointslice, endpointslicemirroring,
    garbagecollector, job, legacytokencleaner, namespace, nodelifecycle, podgc, replicaset, rootcacertpublisher,
    serviceaccount, serviceaccounttoken, statefulset, tainteviction, ttlafterfinished,
};

/// The workqueues with `workqueue_*` series (label `name`) that a
/// controller's driver creates: the drivers' own constants. A controller
/// added to the table fails the tests until it is added here (`None`).
fn queues_of(controller: &str) -> Option<&'static [&'static str]> {
    let queues: &[&str] = match controller {
        serviceaccounttoken::CONTROLLER_NAME => {
            &[serviceaccounttoken::SERVICE_QUEUE_NAME, serviceaccounttoken::SECRET_QUEUE_NAME]
        }
        deployment::CONTROLLER_NAME => &[deployment::QUEUE_NAME],
        replicaset::CONTROLLER_NAME => &[replicaset::QUEUE_NAME],
        statefulset::CONTROLLER_NAME => &[statefulset::QUEUE_NAME],
        daemonset::CONTROLLER_NAME => &[daemonset::QUEUE_NAME],
        job::CONTROLLER_NAME => &[job::QUEUE_NAME, job::ORPHAN_QUEUE_NAME],
        cronjob::CONTROLLER_NAME => &[cronjob::QUEUE_NAME],
        namespace::CONTROLLER_NAME => &[namespace::QUEUE_NAME],
        // Its deletion timers' queue has no metrics.
        tainteviction::CONTROLLER_NAME => &[tainteviction::NODE_QUEUE_NAME, tainteviction::POD_QUEUE_NAME],
        nodelifecycle::CONTROLLER_NAME => &[nodelifecycle::NODE_QUEUE_NAME, nodelifecycle::POD_QUEUE_NAME],
        serviceaccount::CONTROLLER_NAME => &[serviceaccount::QUEUE_NAME],
        rootcacertpublisher::CONTROLLER_NAME => &[rootcacertpublisher::QUEUE_NAME],
        clusterroleaggregation::CONTROLLER_NAME => &[clusterroleaggregation::QUEUE_NAME],
        endpoint::CONTROLLER_NAME => &[endpoint::QUEUE_NAME],
        endpointslicemirroring::CONTROLLER_NAME => &[endpointslicemirroring::QUEUE_NAME],
        // One pass a day, one every 20 s: no queue.
        legacytokencleaner::CONTROLLER_NAME | podgc::CONTROLLER_NAME => &[],
        // Its topology queue has no metrics.
        endpointslice::CONTROLLER_NAME => &[endpointslice::QUEUE_NAME],
        ttlafterfinished::CONTROLLER_NAME => &[ttlafterfinished::QUEUE_NAME],
        garbagecollector::CONTROLLER_NAME => {
            &[garbagecollector::ATTEMPT_TO_DELETE_QUEUE, garbagecollector::ATTEMPT_TO_ORPHAN_QUEUE]
        }
        _ => return None,
    };
    Some(queues)
}

/// README.md, then every `docs/*.md`, with their paths.
fn markdown_files() -> Vec<(String, String)> {
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
enum Kind {
    /// `controllers`: controllers by their table names.
    Controllers,
    /// `flags`: the command's flags, with their defaults.
    Flags,
    /// `controller-table`: a table of the controllers and their queues.
    ControllerTable,
}

/// One delimited list: its kind, where it starts, its text.
struct Checked {
    kind: Kind,
    line: usize,
    text: String,
}

/// A file's checked lists, and its text outside them.
fn split(file: &str, text: &str) -> (Vec<Checked>, String) {
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
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
        .map(|w| if w.starts_with("--") { w } else { w.trim_start_matches('-') })
        .filter(|w| !w.is_empty())
}

/// The controller names `text` mentions.
fn controllers_in(text: &str) -> BTreeSet<String> {
    words(text).filter(|w| w.ends_with("-controller")).map(str::to_owned).collect()
}

/// The flags `text` mentions (`-v` is the one without a long name in
/// upstream's spelling).
fn flags_in(text: &str) -> BTreeSet<String> {
    words(text)
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_owned)
        .chain(text.contains("`-v`").then(|| "-v".to_owned()))
        .collect()
}

/// The words of `text` between backticks.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The defaults a flags list gives (`` `--kube-api-qps` 20 ``: the word
/// after the flag, when it is not a parenthesis or another flag) that are
/// not the command's. Go durations compare by value (`5m` is `5m0s`);
/// `text|json` gives the default first.
fn wrong_defaults(text: &str) -> Vec<String> {
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

/// Every flag `kcm-rs --help` shows, as written on a command line (the
/// upstream flags kcm-rs refuses are hidden, and not its flags).
fn command_flags() -> BTreeSet<String> {
    Flags::command(&flags())
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| arg.get_long())
        .map(|long| if long == "v" { "-v".to_owned() } else { format!("--{long}") })
        .collect()
}

fn table_names() -> BTreeSet<String> {
    implemented().into_iter().map(str::to_owned).collect()
}

fn every_queue() -> BTreeSet<String> {
    TABLE.iter().flat_map(|row| queues_of(row.name()).unwrap_or_default()).map(|q| (*q).to_owned()).collect()
}

/// What `want` lacks and what it does not have, if they differ.
fn compare(what: &str, found: &BTreeSet<String>, want: &BTreeSet<String>) -> Option<String> {
    let missing: Vec<_> = want.difference(found).collect();
    let extra: Vec<_> = found.difference(want).collect();
    (!missing.is_empty() || !extra.is_empty()).then(|| format!("{what}: missing {missing:?}, unknown {extra:?}"))
}

/// The body rows of a Markdown table, split into cells.
fn table_rows(text: &str) -> Vec<Vec<&str>> {
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|line| line.trim_start().starts_with('|'))
        .map(|line| line.trim().trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    // The header and the `|---|` line.
    rows.into_iter().skip(2).collect()
}

/// A controller table: one row per controller, its name (backticked) in the
/// first cell and its queues (backticked) in the second.
fn check_controller_table(text: &str, wrong: &mut Vec<String>) {
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
fn missing_paths(file: &str, text: &str) -> Vec<String> {
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

/// Numbers as the docs spell counts of controllers.
fn spelled(n: usize) -> String {
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

/// What is wrong with one checked list.
fn check_list(list: &Checked) -> Vec<String> {
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
fn unchecked_lists(file: &str, outside: &str) -> Vec<String> {
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
fn wrong_counts(file: &str, text: &str) -> Vec<String> {
    let count = spelled(TABLE.len());
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

/// Runs every check on every file; each problem is one line, prefixed by
/// its place.
fn problems() -> Vec<String> {
    let mut problems: Vec<String> = TABLE
        .iter()
        .filter(|row| queues_of(row.name()).is_none())
        .map(|row| format!("src/docs.rs: say in queues_of which queues {}'s driver creates", row.name()))
        .collect();
    let mut tables = 0;
    for (file, text) in markdown_files() {
        let (lists, outside) = split(&file, &text);
        for list in &lists {
            tables += usize::from(matches!(list.kind, Kind::ControllerTable));
            let wrong = check_list(list);
            problems.extend(wrong.into_iter().map(|w| format!("{file}:{} ({:?} list): {w}", list.line, list.kind)));
            problems.extend(missing_paths(&file, &list.text));
        }
        problems.extend(unchecked_lists(&file, &outside));
        problems.extend(missing_paths(&file, &outside));
        problems.extend(wrong_counts(&file, &text));
        if file == "docs/controllers.md" {
            let sections = text.lines().filter(|l| l.starts_with("## The ")).count();
            if sections != TABLE.len() {
                problems.push(format!("{file}: {sections} controller sections, but the table has {}", TABLE.len()));
            }
        }
    }
    if tables == 0 {
        problems.push("no controller table (`<!-- checked: controller-table -->`) in README.md or docs/".to_owned());
    }
    problems
}

#[test]
fn the_readme_and_docs_list_exactly_the_controllers_flags_queues_and_health_checks() {
    let problems = problems();
    assert!(problems.is_empty(), "README.md and docs/ have drifted from the code:\n{}", problems.join("\n"));
}

#[test]
fn the_health_checks_are_ping_leader_election_and_the_controllers_by_their_table_names() {
    let operations = markdown_files().into_iter().find(|(file, _)| file == "docs/operations.md").expect("operations");
    let healthz = operations.1.lines().find(|line| line.starts_with("| `/healthz`")).expect("the /healthz row");
    for check in ["ping", LeaderHealth::NAME] {
        assert!(quoted(healthz).contains(&check), "the /healthz row lacks `{check}`: {healthz}");
    }
    assert!(healthz.contains("#the-controllers"), "the /healthz row names the controllers' checks by the table");
}

#[test]
fn the_docs_checks_catch_a_missing_controller_flag_and_queue() {
    let names: Vec<&str> = implemented().into_iter().skip(1).collect();
    assert!(compare("controllers", &controllers_in(&names.join(", ")), &table_names()).is_some());
    let flags: BTreeSet<String> = command_flags().into_iter().skip(1).collect();
    assert!(compare("flags", &flags, &command_flags()).is_some());
    let mut wrong = Vec::new();
    check_controller_table(
        "| controller | queues |\n|---|---|\n| `deployment-controller` | `deployment` |\n",
        &mut wrong,
    );
    assert!(!wrong.is_empty());
    assert_eq!(spelled(20), "twenty");
    assert_eq!(spelled(21), "twenty-one");
}
