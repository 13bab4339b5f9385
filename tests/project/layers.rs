//! The library's layers, kept by a test: every `crate::…` path in a module's files must name a
//! module its layer may use (ARCHITECTURE.md, "Folder map": error, clock, hash → index →
//! options → text → fingerprint / store → engine → reader, eval, explain → pipeline), and the files of one
//! module must not use each other in a cycle. Items re-exported at the crate root
//! (`crate::Document`) count as the module that defines them. No file is over 600 lines
//! unless it says why at its top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules it may use.
const MAY_USE: &[(&str, &[&str])] = &[
    ("error", &[]),
    ("clock", &["error"]),
    ("hash", &[]),
    ("index", &["error"]),
    ("options", &["error", "index"]),
    ("text", &["error", "options", "hash"]),
    ("fingerprint", &["error", "options", "text", "hash"]),
    ("store", &["error", "options", "clock", "hash"]),
    (
        "engine",
        &[
            "error",
            "clock",
            "hash",
            "index",
            "options",
            "text",
            "fingerprint",
            "store",
        ],
    ),
    ("reader", &["error", "clock", "hash", "text", "engine"]),
    (
        "eval",
        &["error", "options", "text", "fingerprint", "engine"],
    ),
    ("explain", &["options", "text", "fingerprint", "engine"]),
    ("pipeline", &["error", "fingerprint", "engine", "reader"]),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without comments (line comments and doc comments; block comments are
/// not used in this crate) and without its unit tests (`#[cfg(test)] mod tests`, last in a
/// file: what tests use is no dependency of the library).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string (a URL) is rare; cutting there only drops code.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `prefix` in `text` (`crate::` -> `engine`, `Document`, ...).
fn after(text: &str, prefix: &str) -> BTreeSet<String> {
    text.match_indices(prefix)
        .filter(|(i, _)| {
            // `crate::` itself, not `foo_crate::`.
            *i == 0
                || !text.as_bytes()[i - 1].is_ascii_alphanumeric() && text.as_bytes()[i - 1] != b'_'
        })
        .map(|(i, _)| {
            text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// Names re-exported at the crate root (`pub use engine::{Document, ...}`) -> their module.
fn root_items() -> BTreeMap<String, String> {
    let lib = code(&src().join("lib.rs"));
    let mut items = BTreeMap::new();
    for stmt in lib.split(';') {
        let stmt = stmt.trim();
        let Some(rest) = stmt.strip_prefix("pub use ") else {
            continue;
        };
        let module: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let names = match (rest.find('{'), rest.rfind('}')) {
            (Some(a), Some(b)) => rest[a + 1..b].to_string(),
            _ => rest.rsplit("::").next().unwrap_or("").to_string(),
        };
        for n in names.split(',') {
            let n = n.trim().rsplit("::").next().unwrap_or("").trim();
            let n = n.split(" as ").last().unwrap_or(n).trim();
            if !n.is_empty() {
                items.insert(n.to_string(), module.clone());
            }
        }
    }
    items
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let may: BTreeMap<&str, BTreeSet<&str>> = MAY_USE
        .iter()
        .map(|(m, uses)| (*m, uses.iter().copied().collect()))
        .collect();
    let items = root_items();
    assert_eq!(
        items.get("Document").map(String::as_str),
        Some("engine"),
        "{items:?}"
    );
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for f in &all {
        let rel = f.strip_prefix(src()).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if matches!(top.as_str(), "lib" | "main" | "cli") {
            continue;
        }
        let allowed = may
            .get(top.as_str())
            .unwrap_or_else(|| panic!("{}: module `{top}` is not in MAY_USE", rel.display()));
        seen.insert(top.clone());
        for name in after(&code(f), "crate::") {
            let module = if name.starts_with(|c: char| c.is_ascii_uppercase())
                || !may.contains_key(name.as_str())
            {
                match items.get(&name) {
                    Some(m) => m.clone(),
                    // A root item defined in lib.rs itself (none today) or a macro.
                    None => continue,
                }
            } else {
                name.clone()
            };
            if module != top && !allowed.contains(module.as_str()) {
                wrong.push(format!(
                    "{} uses crate::{name} (module {module})",
                    rel.display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
    // Every module of MAY_USE exists (a renamed module is not silently unchecked).
    let listed: BTreeSet<String> = may.keys().map(std::string::ToString::to_string).collect();
    assert_eq!(seen, listed);
}

#[test]
fn the_files_of_a_module_do_not_use_each_other_in_a_cycle() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    // Folder -> (file stem -> siblings it uses through `super::`).
    let mut graphs: BTreeMap<PathBuf, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &all {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "mod" || f.parent() == Some(&src()) {
            continue;
        }
        let dir = f.parent().unwrap().to_path_buf();
        let uses = after(&code(f), "super::");
        graphs.entry(dir).or_default().insert(stem, uses);
    }
    for (dir, graph) in &graphs {
        let names: BTreeSet<&String> = graph.keys().collect();
        // Depth-first search for a cycle among the siblings.
        fn visit<'a>(
            n: &'a String,
            graph: &'a BTreeMap<String, BTreeSet<String>>,
            names: &BTreeSet<&'a String>,
            path: &mut Vec<&'a String>,
            done: &mut BTreeSet<&'a String>,
        ) -> Option<Vec<String>> {
            if let Some(i) = path.iter().position(|p| *p == n) {
                let mut cycle: Vec<String> = path[i..]
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect();
                cycle.push(n.clone());
                return Some(cycle);
            }
            if done.contains(n) {
                return None;
            }
            path.push(n);
            for m in graph.get(n).into_iter().flatten() {
                if let Some(&m) = names.get(m) {
                    if let Some(c) = visit(m, graph, names, path, done) {
                        return Some(c);
                    }
                }
            }
            path.pop();
            done.insert(n);
            None
        }
        let mut done = BTreeSet::new();
        for n in &names {
            let cycle = visit(n, graph, &names, &mut Vec::new(), &mut done);
            assert!(
                cycle.is_none(),
                "{}: the files use each other in a cycle: {}",
                dir.display(),
                cycle.unwrap().join(" -> ")
            );
        }
    }
}

/// The Rust files of the library, its test suites and its tools.
fn every_rust_file() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        "src",
        "tests",
        "tools/src",
        "python/src",
        "benches",
        "examples",
    ] {
        if root.join(dir).is_dir() {
            files(&root.join(dir), &mut out);
        }
    }
    out
}

#[test]
fn no_file_is_over_600_lines_unless_it_says_why_at_its_top() {
    let files = every_rust_file();
    assert!(files.len() > 100, "{} files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let lines = text.lines().count();
            let says_why = text.lines().take(12).any(|l| l.contains("Over 600 lines"));
            (lines > 600 && !says_why).then(|| format!("{} ({lines} lines)", p.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these, or say at their top why they are over 600 lines: {long:?}"
    );
}

/// ARCHITECTURE.md is what a newcomer reads first: the map, the data flow, the layers, the
/// invariants and the current decisions, in at most 600 lines (each decision's history and
/// margins go to docs/decisions.md).
#[test]
fn the_architecture_stays_readable_in_one_sitting() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("ARCHITECTURE.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text.lines().count();
    assert!(
        (100..=600).contains(&lines),
        "ARCHITECTURE.md has {lines} lines: move history and margins to docs/decisions.md"
    );
    for section in ["## Folder map", "## Data flow", "## Decisions", "## Tests"] {
        assert!(text.contains(section), "ARCHITECTURE.md lacks {section}");
    }
}
