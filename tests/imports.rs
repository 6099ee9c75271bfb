//! No two production files of the workspace import each other, directly or
//! through others: every crate of Cargo.toml's `members` is read from its
//! roots (`src/lib.rs`, `src/main.rs`), its module tree followed through
//! `mod` declarations (skipping everything under `#[cfg(test)]`), and a
//! file-to-file graph built from its imports; the test fails naming the files
//! of every cycle.
//!
//! An edge A -> B: file A names an item defined in file B, through `use`
//! (`crate::`, `super::`, `self::` or a child module's name) or a path in code
//! (`crate::…`, `super::…`, `self::…`, `$crate::…`). A path is resolved by the
//! module tree (`foo.rs` or `foo/mod.rs`, inline `mod foo { … }`), and through
//! the `use` items of the module it lands in, so a re-export leads to the file
//! that defines the item. A module naming its own descendants is containment,
//! not an import; a child naming its parent's items is an import.
//!
//! The sources are read as text: comments and literals blanked, then split
//! into identifiers and punctuation, which is all a `use` tree, a path and an
//! item's braces need.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The driver modules every controller's driver may use (`src/drivers/`):
/// every other module there is one controller's driver.
const SHARED_DRIVER_MODULES: &[&str] = &[
    "api_errors",
    "certificates",
    "execute",
    "expectations",
    "mod.rs",
    "namespace_keys",
    "nodes",
    "owners",
    "parts",
    "service_pods",
];

/// The file-to-file imports of every crate of the workspace.
fn workspace_edges() -> BTreeSet<(PathBuf, PathBuf)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &Path| std::fs::read_to_string(root.join(path)).ok();
    let mut edges = BTreeSet::new();
    for member in members(&read(Path::new("Cargo.toml")).expect("Cargo.toml")) {
        for target in ["lib.rs", "main.rs"] {
            let file = Path::new(member.trim_start_matches('.')).join("src").join(target);
            if read(&file).is_some() {
                edges.extend(Tree::load(&file, &read).edges());
            }
        }
    }
    assert!(edges.len() > 100, "the import graph is suspiciously small: {edges:?}");
    edges
}

/// The controller whose module holds `file`, if any: a module of
/// `controllers/src/` other than `common/` and the crate's own files, or a
/// module of `src/drivers/` other than the shared ones.
fn controller_of(file: &Path) -> Option<String> {
    let parts: Vec<String> = file.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    let (module, nested) = match parts.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["controllers", "src", module, rest @ ..] if *module != "common" => (module.to_string(), !rest.is_empty()),
        ["src", "drivers", module, rest @ ..] if !SHARED_DRIVER_MODULES.contains(&module.trim_end_matches(".rs")) => {
            (format!("drivers/{module}"), !rest.is_empty())
        }
        _ => return None,
    };
    // A file directly under the crate's `src/` is a module only if it is a
    // folder or a controller's single file (`drivers/<name>.rs`).
    let single_file_core = !nested && parts[0] == "controllers";
    (!single_file_core).then(|| module.trim_end_matches(".rs").to_owned())
}

/// No controller's core or driver names another controller's module: what
/// two controllers share lives one layer down (`controllers/src/common/`,
/// the shared driver modules, kcm-runtime, kcm-objects).
#[test]
fn no_controller_module_imports_another_controllers() {
    let crossings: Vec<String> = workspace_edges()
        .into_iter()
        .filter(|(from, to)| matches!((controller_of(from), controller_of(to)), (Some(a), Some(b)) if a != b))
        .map(|(from, to)| format!("  {} -> {}", from.display(), to.display()))
        .collect();
    assert!(
        crossings.is_empty(),
        "controller modules that import another controller's (move what they share one layer down):\n{}",
        crossings.join("\n")
    );
}

/// The plan every plan-returning core builds names no controller: a
/// controller's own writes are its plan's type parameter.
#[test]
fn the_plan_names_no_controller() {
    let plan = Path::new("controllers/src/plan.rs");
    let named: Vec<String> = workspace_edges()
        .into_iter()
        .filter(|(from, to)| from == plan && controller_of(to).is_some())
        .map(|(_, to)| to.display().to_string())
        .collect();
    assert!(named.is_empty(), "controllers/src/plan.rs names controller modules: {named:?}");
}

#[test]
fn no_import_cycles_between_production_files() {
    let cycles = cycles(&workspace_edges());
    assert!(cycles.is_empty(), "files that import each other (move what they share into a leaf module):\n{}", {
        cycles.iter().map(describe).collect::<Vec<_>>().join("\n")
    });
}

/// The graph logic on a tiny crate: containment is no edge, a child naming its
/// parent is, re-exports lead to the defining file, test code is skipped.
#[test]
fn import_graph_of_a_tiny_crate() {
    let files: BTreeMap<PathBuf, &str> = [
        ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\npub use self::b::Shared;\npub struct Root;\n"),
        (
            "a.rs",
            "//! Names `crate::c` in a comment only.\nuse crate::{\n    Shared,\n    b::{self as bee},\n};\n\
             mod inner {\n    pub fn f() -> u8 { super::super::Root; 1 }\n}\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::*;\n}\npub fn g() {}\n",
        ),
        ("b.rs", "pub struct Shared;\nfn h() { let _ = \"crate::a::g\"; crate::a::g(); }\n"),
        ("tests.rs", "use crate::a::g;\n"),
    ]
    .into_iter()
    .map(|(path, text)| (PathBuf::from(path), text))
    .collect();
    let read = |path: &Path| files.get(path).map(|text| text.to_string());
    let edges = Tree::load(Path::new("lib.rs"), &read).edges();
    let named = |from: &str, to: &str| (PathBuf::from(from), PathBuf::from(to));
    assert_eq!(edges, BTreeSet::from([named("a.rs", "b.rs"), named("a.rs", "lib.rs"), named("b.rs", "a.rs")]));
    let cycles = cycles(&edges);
    assert_eq!(cycles.len(), 1);
    assert_eq!(describe(&cycles[0]), "a.rs, b.rs:\n  a.rs -> b.rs\n  b.rs -> a.rs");
}

// === the module tree ===

/// A `use` binding or a path in code, as written: `["super", "plan", "Step"]`.
type Segments = Vec<String>;

/// What one module's source declares and names.
#[derive(Default)]
struct Source {
    /// `mod name;`: children in files of their own.
    declared: Vec<String>,
    /// `mod name { … }`: children written inside this file.
    inline: Vec<(String, Source)>,
    /// `use` items: the name bound (none for `*` and `_`) and the path.
    uses: Vec<(Option<String>, Segments)>,
    /// Paths in code that start with `crate`, `super` or `self`.
    paths: Vec<Segments>,
}

/// A module of the tree: its file and what it says.
struct Module {
    /// The file it is written in (inline modules share their parent's).
    file: PathBuf,
    /// The module path of that file's top module.
    file_module: Segments,
    /// Names of its child modules.
    children: BTreeSet<String>,
    /// Its `use` items (not counting test code).
    uses: Vec<(Option<String>, Segments)>,
    /// Its paths in code.
    paths: Vec<Segments>,
}

/// One crate's modules, by module path (the root is `[]`).
struct Tree {
    modules: BTreeMap<Segments, Module>,
}

impl Tree {
    /// The crate whose root is `file`, reading files with `read`.
    fn load(file: &Path, read: &dyn Fn(&Path) -> Option<String>) -> Tree {
        let mut tree = Tree { modules: BTreeMap::new() };
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        tree.add_file(file, &dir, Vec::new(), read);
        tree
    }

    fn add_file(&mut self, file: &Path, dir: &Path, path: Segments, read: &dyn Fn(&Path) -> Option<String>) {
        let text = read(file).unwrap_or_else(|| panic!("cannot read {}", file.display()));
        let tokens = tokens(&code_only(&text));
        let source = parse(&tokens, &mut 0);
        self.add(source, file, dir, path.clone(), &path, read);
    }

    /// Adds the module at `path` written in `file`, whose out-of-line children live in `dir`.
    fn add(
        &mut self,
        source: Source,
        file: &Path,
        dir: &Path,
        path: Segments,
        file_module: &[String],
        read: &dyn Fn(&Path) -> Option<String>,
    ) {
        let children = source.declared.iter().chain(source.inline.iter().map(|(name, _)| name)).cloned().collect();
        for name in &source.declared {
            let (flat, nested) = (dir.join(format!("{name}.rs")), dir.join(name).join("mod.rs"));
            let child = if read(&flat).is_some() { flat } else { nested };
            self.add_file(&child, &dir.join(name), [path.clone(), vec![name.clone()]].concat(), read);
        }
        for (name, inner) in source.inline {
            let child = [path.clone(), vec![name.clone()]].concat();
            self.add(inner, file, &dir.join(&name), child, file_module, read);
        }
        let module = Module {
            file: file.to_path_buf(),
            file_module: file_module.to_vec(),
            children,
            uses: source.uses,
            paths: source.paths,
        };
        self.modules.insert(path, module);
    }

    /// `written` (in `module`) as a path from the crate root; `None` for another crate's.
    fn absolute(&self, module: &[String], written: &[String]) -> Option<Segments> {
        let mut base = module.to_vec();
        let mut rest = written;
        match rest.first().map(String::as_str) {
            Some("crate") => base.clear(),
            Some("self") => {}
            Some("super") => {
                base.pop();
            }
            Some(first) if self.modules[module].children.contains(first) => {
                return Some([base, rest.to_vec()].concat());
            }
            _ => return None,
        }
        rest = &rest[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        Some([base, rest.to_vec()].concat())
    }

    /// The module that defines what `path` (from the root) names, following `use` re-exports.
    fn defining_module(&self, path: &[String], hops: usize) -> Segments {
        let mut module = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            if self.modules[&module].children.contains(segment) {
                module.push(segment.clone());
                continue;
            }
            let imported = self.modules[&module].uses.iter().find(|(name, _)| name.as_ref() == Some(segment));
            if let Some(target) = imported.and_then(|(_, written)| self.absolute(&module, written))
                && hops < 16
            {
                return self.defining_module(&[target, path[i + 1..].to_vec()].concat(), hops + 1);
            }
            break;
        }
        module
    }

    /// The file-to-file imports of this crate.
    fn edges(&self) -> BTreeSet<(PathBuf, PathBuf)> {
        let mut edges = BTreeSet::new();
        for (path, module) in &self.modules {
            let named = module.uses.iter().map(|(_, written)| written).chain(&module.paths);
            for target in named.filter_map(|written| self.absolute(path, written)) {
                let defining = self.defining_module(&target, 0);
                if !defining.starts_with(&module.file_module) {
                    edges.insert((module.file.clone(), self.modules[&defining].file.clone()));
                }
            }
        }
        edges
    }
}

// === reading sources ===

/// `source` with comments and string and character literals blanked, lines kept.
fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let ident_before = i > 0 && (at(i - 1).is_alphanumeric() || at(i - 1) == '_');
        let hashes = (i + 1..).take_while(|&j| at(j) == '#').count();
        let end = match (at(i), at(i + 1)) {
            ('/', '/') => (i..chars.len()).find(|&j| at(j) == '\n').unwrap_or(chars.len()),
            ('/', '*') => block_comment_end(&chars, i),
            ('"', _) => string_end(&chars, i + 1),
            ('r', '"' | '#') if !ident_before && at(i + 1 + hashes) == '"' => {
                let closing: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                let body: String = chars[i + 2 + hashes..].iter().collect();
                let rest = body.find(&closing).map_or(body.len(), |n| n + closing.len());
                i + 2 + hashes + body[..rest].chars().count()
            }
            ('\'', '\\') => (i + 3..chars.len()).find(|&j| at(j) == '\'').map_or(chars.len(), |j| j + 1),
            ('\'', _) if at(i + 2) == '\'' => i + 3,
            (c, _) => {
                out.push(c);
                i += 1;
                continue;
            }
        };
        out.extend(chars[i..end].iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
        i = end;
    }
    out
}

/// Where the block comment opening at `start` ends (they nest).
fn block_comment_end(chars: &[char], start: usize) -> usize {
    let (mut depth, mut i) = (0, start);
    while i + 1 < chars.len() {
        match (chars[i], chars[i + 1]) {
            ('/', '*') => (depth, i) = (depth + 1, i + 2),
            ('*', '/') if depth == 1 => return i + 2,
            ('*', '/') => (depth, i) = (depth - 1, i + 2),
            _ => i += 1,
        }
    }
    chars.len()
}

/// Where the string whose body starts at `start` ends, past its closing quote.
fn string_end(chars: &[char], start: usize) -> usize {
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// The identifiers and punctuation of code (`::` as one token).
fn tokens(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let mut token = c.to_string();
        if c.is_alphanumeric() || c == '_' {
            while let Some(&next) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                token.push(next);
                chars.next();
            }
        } else if c == ':' && chars.peek() == Some(&':') {
            token.push(chars.next().unwrap_or(':'));
        }
        tokens.push(token);
    }
    tokens
}

/// A module's items from `tokens[*at..]`, up to the `}` closing it (or the end).
fn parse(tokens: &[String], at: &mut usize) -> Source {
    let token = |i: usize| tokens.get(i).map_or("", String::as_str);
    let mut source = Source::default();
    let (mut depth, mut test_only) = (0usize, false);
    while *at < tokens.len() {
        let i = *at;
        *at += 1;
        match token(i) {
            "#" if token(i + 1) == "[" => {
                test_only |= group(tokens, at).concat() == "[cfg(test)]";
                continue;
            }
            _ if test_only => {
                *at = i;
                skip_item(tokens, at);
            }
            "mod" if token(i + 2) == ";" => source.declared.push(token(i + 1).to_string()),
            "mod" if token(i + 2) == "{" => {
                *at = i + 3;
                source.inline.push((token(i + 1).to_string(), parse(tokens, at)));
            }
            "use" => {
                let end = tokens[i..].iter().position(|t| t == ";").map_or(tokens.len(), |n| i + n);
                use_tree(&tokens[i + 1..end], &[], &mut source.uses);
                *at = end;
            }
            first @ ("crate" | "super" | "self") if token(i + 1) == "::" && token(i.wrapping_sub(1)) != "in" => {
                let mut path = vec![first.to_string()];
                while token(*at) == "::" && token(*at + 1).starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    path.push(token(*at + 1).to_string());
                    *at += 2;
                }
                source.paths.push(path);
            }
            "{" => depth += 1,
            "}" if depth == 0 => return source,
            "}" => depth -= 1,
            _ => {}
        }
        test_only = false;
    }
    source
}

/// The bracketed group opening at `tokens[*at]`, which it steps past.
fn group<'a>(tokens: &'a [String], at: &mut usize) -> &'a [String] {
    let start = *at;
    let mut depth = 0;
    while let Some(token) = tokens.get(*at) {
        *at += 1;
        match token.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" if depth <= 1 => break,
            ")" | "]" | "}" => depth -= 1,
            _ => {}
        }
    }
    &tokens[start..*at]
}

/// Steps past one item (a `mod`, `fn`, `use`, field …): to its `;` or `,`, or past its block.
fn skip_item(tokens: &[String], at: &mut usize) {
    while let Some(token) = tokens.get(*at) {
        match token.as_str() {
            "(" | "[" => {
                group(tokens, at);
            }
            "{" => {
                group(tokens, at);
                return;
            }
            ";" | "," => {
                *at += 1;
                return;
            }
            ")" | "]" | "}" => return,
            _ => *at += 1,
        }
    }
}

/// The bindings of a `use` tree (the tokens between `use` and `;`), below `prefix`.
fn use_tree(tokens: &[String], prefix: &[String], uses: &mut Vec<(Option<String>, Segments)>) {
    let mut path = prefix.to_vec();
    let mut i = 0;
    while let Some(token) = tokens.get(i) {
        match token.as_str() {
            "::" => {}
            "{" => {
                let mut at = i;
                let inner = group(tokens, &mut at);
                let inner = &inner[1..inner.len() - 1];
                let (mut depth, mut start) = (0, 0);
                for j in 0..=inner.len() {
                    match inner.get(j).map_or(",", String::as_str) {
                        "{" => depth += 1,
                        "}" => depth -= 1,
                        "," if depth == 0 => {
                            if start < j {
                                use_tree(&inner[start..j], &path, uses);
                            }
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            "*" => {
                uses.push((None, path));
                return;
            }
            "as" => {
                let name = tokens.get(i + 1).filter(|n| *n != "_").cloned();
                uses.push((name, bound(path)));
                return;
            }
            segment => path.push(segment.to_string()),
        }
        i += 1;
    }
    if path.len() > prefix.len() {
        let path = bound(path);
        uses.push((path.last().cloned(), path));
    }
}

/// A `use` path without its trailing `self` (`a::{self}` binds `a`).
fn bound(mut path: Segments) -> Segments {
    if path.len() > 1 && path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    path
}

// === the graph ===

/// The members of the workspace in Cargo.toml.
fn members(manifest: &str) -> Vec<String> {
    let list = manifest.split_once("members = [").and_then(|(_, rest)| rest.split_once(']')).expect("members");
    list.0.split(',').map(|m| m.trim().trim_matches('"').to_string()).filter(|m| !m.is_empty()).collect()
}

/// The files reachable from `from`, itself included.
fn reachable(edges: &BTreeSet<(PathBuf, PathBuf)>, from: &Path) -> BTreeSet<PathBuf> {
    let mut seen = BTreeSet::from([from.to_path_buf()]);
    let mut todo = vec![from.to_path_buf()];
    while let Some(file) = todo.pop() {
        for (_, to) in edges.range((file.clone(), PathBuf::new())..).take_while(|(f, _)| *f == file) {
            if seen.insert(to.clone()) {
                todo.push(to.clone());
            }
        }
    }
    seen
}

/// A set of files that all reach each other, with the edges among them.
struct Cycle {
    files: BTreeSet<PathBuf>,
    edges: Vec<(PathBuf, PathBuf)>,
}

/// The strongly connected sets of more than one file: every cycle lies in one.
fn cycles(edges: &BTreeSet<(PathBuf, PathBuf)>) -> Vec<Cycle> {
    let files: BTreeSet<&PathBuf> = edges.iter().map(|(from, _)| from).collect();
    let reach: BTreeMap<&PathBuf, BTreeSet<PathBuf>> = files.iter().map(|&f| (f, reachable(edges, f))).collect();
    let mut cycles: Vec<Cycle> = Vec::new();
    for &file in &files {
        if cycles.iter().any(|c| c.files.contains(file)) {
            continue;
        }
        let knot: BTreeSet<PathBuf> =
            reach[file].iter().filter(|&other| reach.get(other).is_some_and(|r| r.contains(file))).cloned().collect();
        if knot.len() > 1 {
            let inside = edges.iter().filter(|(f, t)| knot.contains(f) && knot.contains(t)).cloned().collect();
            cycles.push(Cycle { files: knot, edges: inside });
        }
    }
    cycles
}

/// A cycle's files, then its edges, one a line.
fn describe(cycle: &Cycle) -> String {
    let files: Vec<_> = cycle.files.iter().map(|f| f.display().to_string()).collect();
    let edges = cycle.edges.iter().map(|(f, t)| format!("\n  {} -> {}", f.display(), t.display()));
    format!("{}:{}", files.join(", "), edges.collect::<String>())
}
