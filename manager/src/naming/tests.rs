//! Tests for `manager::naming`.

use std::collections::HashSet;

use proptest::prelude::*;

use super::*;

fn valid(name: &str) -> bool {
    (1..=MAX_NAME_LEN).contains(&name.len()) && is_valid_part(name)
}

#[test]
fn plain_pair_is_server_sep_tool() {
    let mut ns = ToolNamespace::new();
    assert_eq!(ns.insert("github", "create_issue"), "github__create_issue");
    assert_eq!(
        ns.resolve("github__create_issue"),
        Some(("github", "create_issue"))
    );
}

#[test]
fn digits_are_kept() {
    let mut ns = ToolNamespace::new();
    assert_eq!(
        ns.insert("context7", "resolve-library-id"),
        "context7__resolve-library-id"
    );
}

#[test]
fn invalid_characters_become_underscores_with_hash() {
    let mut ns = ToolNamespace::new();
    let name = ns.insert("my.server", "get weather");
    assert!(name.starts_with("my_server__get_weather_"), "{name}");
    assert_eq!(name.len(), "my_server__get_weather_".len() + 8);
    assert_eq!(ns.resolve(&name), Some(("my.server", "get weather")));
}

#[test]
fn unicode_is_one_underscore_per_character() {
    assert_eq!(sanitize("日本-x"), "__-x");
}

#[test]
fn sanitized_collision_gets_distinct_names() {
    let mut ns = ToolNamespace::new();
    let a = ns.insert("a.b", "t");
    let b = ns.insert("a b", "t");
    let c = ns.insert("a_b", "t");
    assert_eq!(c, "a_b__t");
    assert!(a != b && a != c && b != c);
    assert_eq!(ns.resolve(&a), Some(("a.b", "t")));
    assert_eq!(ns.resolve(&b), Some(("a b", "t")));
}

#[test]
fn separator_inside_names_is_not_ambiguous() {
    let mut ns = ToolNamespace::new();
    let plain = ns.insert("a", "b__c");
    let tricky = ns.insert("a__b", "c");
    assert_eq!(plain, "a__b__c");
    assert_ne!(tricky, plain);
    assert_eq!(ns.resolve(&tricky), Some(("a__b", "c")));
    // A server ending in `_` would make `a___b` ambiguous too.
    let trailing = ns.insert("a_", "b");
    assert_ne!(trailing, "a___b");
}

#[test]
fn names_do_not_depend_on_insertion_order() {
    let pairs = [
        ("a.b", "t"),
        ("a b", "t"),
        ("a_b", "t"),
        ("x", "y"),
        ("日本", "ツール"),
    ];
    let mut forward = ToolNamespace::new();
    let f: Vec<_> = pairs.iter().map(|(s, t)| forward.insert(s, t)).collect();
    let mut backward = ToolNamespace::new();
    let mut b: Vec<_> = pairs
        .iter()
        .rev()
        .map(|(s, t)| backward.insert(s, t))
        .collect();
    b.reverse();
    assert_eq!(f, b);
}

#[test]
fn long_names_are_truncated_fairly_to_64() {
    let mut ns = ToolNamespace::new();
    let server = "s".repeat(100);
    let tool = "t".repeat(100);
    let name = ns.insert(&server, &tool);
    assert_eq!(name.len(), MAX_NAME_LEN);
    assert!(
        name.starts_with(&format!("{}__{}_", "s".repeat(26), "t".repeat(27))),
        "{name}"
    );
    assert_eq!(ns.resolve(&name), Some((server.as_str(), tool.as_str())));
}

#[test]
fn short_part_gives_its_budget_to_the_long_one() {
    let name = preferred_name("gh", &"t".repeat(100));
    assert!(
        name.starts_with(&format!("gh__{}_", "t".repeat(51))),
        "{name}"
    );
    assert_eq!(name.len(), MAX_NAME_LEN);
}

#[test]
fn exactly_64_stays_plain() {
    let tool = "t".repeat(MAX_NAME_LEN - "srv__".len());
    assert_eq!(preferred_name("srv", &tool), format!("srv__{tool}"));
    let longer = format!("{tool}x");
    assert_ne!(preferred_name("srv", &longer), format!("srv__{longer}"));
}

#[test]
fn long_names_sharing_a_prefix_differ() {
    let mut ns = ToolNamespace::new();
    let base = "x".repeat(80);
    let a = ns.insert("srv", &format!("{base}_one"));
    let b = ns.insert("srv", &format!("{base}_two"));
    assert_ne!(a, b);
    assert!(valid(&a) && valid(&b));
}

#[test]
fn taken_hashed_name_falls_back_to_next_round() {
    let mut ns = ToolNamespace::new();
    let hashed = preferred_name("a.b", "t");
    // A plain pair that literally spells the hashed name of another pair.
    let (server, tool) = hashed.split_once("__").unwrap();
    assert_eq!(ns.insert(server, tool), hashed);
    let second = ns.insert("a.b", "t");
    assert_ne!(second, hashed);
    assert_eq!(second, hashed_name("a.b", "t", 1));
    assert_eq!(ns.resolve(&second), Some(("a.b", "t")));
}

#[test]
fn insert_is_idempotent() {
    let mut ns = ToolNamespace::new();
    let a = ns.insert("s", "t");
    assert_eq!(ns.insert("s", "t"), a);
    assert_eq!(ns.len(), 1);
    assert_eq!(ns.name_of("s", "t"), Some(a.as_str()));
}

#[test]
fn remove_server_drops_only_its_tools() {
    let mut ns = ToolNamespace::new();
    ns.insert("a", "1");
    ns.insert("a", "2");
    let kept = ns.insert("b", "1");
    assert_eq!(ns.remove_server("a"), 2);
    assert_eq!(ns.len(), 1);
    assert_eq!(ns.resolve("a__1"), None);
    assert_eq!(ns.resolve(&kept), Some(("b", "1")));
    assert_eq!(ns.remove("b", "1"), Some(kept));
    assert!(ns.is_empty());
}

#[test]
fn unknown_name_does_not_resolve() {
    let mut ns = ToolNamespace::new();
    ns.insert("github", "search");
    assert_eq!(ns.resolve("github__sear"), None);
    assert_eq!(ns.resolve("github"), None);
}

#[test]
fn empty_parts_still_give_a_valid_name() {
    let name = preferred_name("", "");
    assert!(valid(&name), "{name}");
}

#[test]
fn fnv1a_reference_values() {
    let hash = |s: &str| {
        let mut h = Fnv1a::new();
        h.write(s.as_bytes());
        h.finish()
    };
    assert_eq!(hash(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(hash("a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(hash("foobar"), 0x8594_4171_f739_67e8);
}

fn part() -> impl Strategy<Value = String> {
    prop_oneof![
        // Short names from a tiny alphabet: many collide, plain and sanitized.
        "[ab_.\\-é]{0,4}",
        // Long names that need truncation, sharing prefixes.
        "[a-z]{60,70}[0-9.]{0,3}",
        // Anything.
        any::<String>(),
    ]
}

proptest! {
    #[test]
    fn names_valid_distinct_and_reversible(
        pairs in proptest::collection::vec((part(), part()), 1..40)
    ) {
        let mut ns = ToolNamespace::new();
        let mut names = HashSet::new();
        let mut inserted = Vec::new();
        for (server, tool) in &pairs {
            let name = ns.insert(server, tool);
            prop_assert!(valid(&name), "invalid name {name:?}");
            inserted.push((name.clone(), server.clone(), tool.clone()));
            names.insert(name);
        }
        let distinct: HashSet<_> = pairs.iter().collect();
        prop_assert_eq!(names.len(), distinct.len());
        prop_assert_eq!(ns.len(), distinct.len());
        for (name, server, tool) in &inserted {
            prop_assert_eq!(ns.resolve(name), Some((server.as_str(), tool.as_str())));
        }
    }
}
