//! README.md and `docs/` checked against the code, so that they cannot
//! drift: every list of controllers, flags, workqueues and health checks in
//! them is compared with the controller table ([`table`]), the command line
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

mod checks;
mod code;
mod markdown;

use std::collections::BTreeSet;

use kcm_runtime::leader::LeaderHealth;

use crate::controllers::{implemented, table};
use checks::{check_controller_table, check_list, compare, missing_paths, unchecked_lists, wrong_counts};
use code::{command_flags, queues_of, table_names};
use markdown::{Kind, controllers_in, markdown_files, quoted, spelled, split};

/// Runs every check on every file; each problem is one line, prefixed by
/// its place.
fn problems() -> Vec<String> {
    let mut problems: Vec<String> = table()
        .filter(|row| queues_of(row.name()).is_none())
        .map(|row| format!("src/docs/code.rs: say in queues_of which queues {}'s driver creates", row.name()))
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
            if sections != table().count() {
                problems.push(format!("{file}: {sections} controller sections, but the table has {}", table().count()));
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
