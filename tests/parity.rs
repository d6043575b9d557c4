//! The growable filter offers what the fixed filter offers: every public method and trait of
//! one type has a namesake on the other, or a reason beside it below why it cannot. The names
//! are read from the library's source, so a method added to one type alone fails this test
//! until its twin is written or its reason is.

use std::collections::BTreeSet;
use std::path::Path;

/// Methods of `ConcurrentCuckooFilter` alone, and why.
const FIXED_ONLY: &[(&str, &str)] = &[
    (
        "fingerprint_bits",
        "one width per table; the growable filter's is per level: level_fingerprint_bits",
    ),
    (
        "layout",
        "the growable filter's chunks split by fingerprint bits, in the packed layout only",
    ),
    (
        "stats",
        "one table's shape and fill; the growable filter's are per level: level_stats",
    ),
];

/// Methods of `GrowableCuckooFilter` alone, and why.
const GROWABLE_ONLY: &[(&str, &str)] = &[
    ("level_count", "a fixed filter has one table"),
    ("level_stats", "per level; see stats"),
    ("level_fingerprint_bits", "per level; see fingerprint_bits"),
    (
        "false_positive_rate",
        "the target the filter keeps as it grows; a fixed filter is built for a shape",
    ),
];

/// The public methods of inherent `impl` blocks of `ty` in every file under `dir`, and the
/// traits it implements.
fn surface(dir: &Path, ty: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut methods = BTreeSet::new();
    let mut traits = BTreeSet::new();
    let mut files = vec![dir.to_path_buf()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(path.read_dir().unwrap().map(|entry| entry.unwrap().path()));
            continue;
        }
        if path.extension().map_or(true, |ext| ext != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        let mut depth_of_impl: Option<usize> = None;
        let mut depth = 0usize;
        // An `impl` header may run over several lines: it is read whole, up to its `{`.
        let mut header = String::new();
        for line in source.lines() {
            let mut code = line.trim().to_string();
            if depth_of_impl.is_none() && (code.starts_with("impl") || !header.is_empty()) {
                header.push(' ');
                header.push_str(&code);
                if !code.contains('{') {
                    continue;
                }
                code = std::mem::take(&mut header).trim().to_string();
            }
            let names_type = [format!(" {ty}<"), format!("&{ty}<"), format!(" {ty} {{")]
                .iter()
                .any(|target| code.contains(target.as_str()));
            if depth_of_impl.is_none() && code.starts_with("impl") && code.ends_with('{') {
                if let Some((head, _)) = code.split_once(" for ") {
                    if names_type {
                        let name = head.rsplit(['>', ' ']).find(|word| !word.is_empty());
                        let name = name.unwrap_or(head).split('<').next().unwrap();
                        traits.insert(name.trim_start_matches('&').to_string());
                    }
                } else if names_type {
                    depth_of_impl = Some(depth);
                }
            }
            if depth_of_impl == Some(depth.saturating_sub(1)) {
                if let Some(rest) = code.strip_prefix("pub fn ") {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    methods.insert(name);
                }
            }
            depth += code.matches('{').count();
            depth -= code.matches('}').count();
            if depth_of_impl.is_some_and(|at| depth <= at) {
                depth_of_impl = None;
            }
        }
    }
    (methods, traits)
}

#[test]
fn both_filters_offer_the_same_operations_or_say_why_not() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (fixed, fixed_traits) = surface(&src, "ConcurrentCuckooFilter");
    let (growable, growable_traits) = surface(&src, "GrowableCuckooFilter");
    // The reader found the impl blocks it must.
    for method in [
        "insert",
        "contains",
        "contains_hash",
        "to_bytes",
        "try_par_extend",
    ] {
        assert!(fixed.contains(method), "{method} not found in {fixed:?}");
        assert!(
            growable.contains(method),
            "{method} not found in {growable:?}"
        );
    }
    let allowed = |list: &[(&str, &str)], name: &str| list.iter().any(|(n, _)| *n == name);
    let missing_from_growable: Vec<_> = fixed
        .difference(&growable)
        .filter(|name| !allowed(FIXED_ONLY, name))
        .collect();
    let missing_from_fixed: Vec<_> = growable
        .difference(&fixed)
        .filter(|name| !allowed(GROWABLE_ONLY, name))
        .collect();
    assert!(
        missing_from_growable.is_empty() && missing_from_fixed.is_empty(),
        "only ConcurrentCuckooFilter has {missing_from_growable:?}, only GrowableCuckooFilter has \
         {missing_from_fixed:?}: write the twin, or the reason in FIXED_ONLY / GROWABLE_ONLY"
    );
    // A reason for a method that is no longer one-sided is stale.
    for (name, _) in FIXED_ONLY {
        assert!(fixed.contains(*name), "{name} is gone");
        assert!(!growable.contains(*name), "{name} is on both now");
    }
    for (name, _) in GROWABLE_ONLY {
        assert!(growable.contains(*name), "{name} is gone");
        assert!(!fixed.contains(*name), "{name} is on both now");
    }
    assert_eq!(fixed_traits, growable_traits);
    for expected in [
        "fmt::Debug",
        "FromIterator",
        "Extend",
        "ParallelExtend",
        "FromParallelIterator",
        "Serialize",
    ] {
        assert!(
            growable_traits.contains(expected),
            "{expected}: {growable_traits:?}"
        );
    }
}
