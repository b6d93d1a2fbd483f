//! `--allow` / `--deny`: which namespaced tools the host may see and call.
//!
//! Patterns are shell globs (`*`, `?`, `[abc]`) matched against the whole namespaced name
//! (`github__*`, `*__delete_*`). A tool is offered when it matches some `--allow` pattern (or
//! no `--allow` is given) and no `--deny` pattern: deny wins. A tool that is not offered is
//! neither listed nor callable; a call gets the same error as a name never listed.

use glob::{MatchOptions, Pattern};

/// The compiled `--allow` and `--deny` patterns.
#[derive(Debug, Clone, Default)]
pub struct ToolFilter {
    allow: Vec<Pattern>,
    deny: Vec<Pattern>,
}

/// Globs see names, not paths: `*` also matches `/` and a leading `.`, and case matters.
const OPTIONS: MatchOptions = MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

impl ToolFilter {
    /// Compiles the patterns; the error names the pattern that is not a glob and why.
    pub fn new(allow: &[String], deny: &[String]) -> Result<Self, String> {
        let compile = |flag: &str, patterns: &[String]| {
            patterns
                .iter()
                .map(|p| {
                    Pattern::new(p).map_err(|e| format!("{flag} {p:?} is not a valid glob: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(ToolFilter {
            allow: compile("--allow", allow)?,
            deny: compile("--deny", deny)?,
        })
    }

    /// Whether the host may see and call the tool named `name` (its namespaced name).
    pub fn offers(&self, name: &str) -> bool {
        let matches = |p: &Pattern| p.matches_with(name, OPTIONS);
        (self.allow.is_empty() || self.allow.iter().any(matches)) && !self.deny.iter().any(matches)
    }

    /// The patterns that match none of `names` (every namespaced tool name, offered or
    /// not), each with its flag: most likely a mistake (`--deny echo` meant `*__echo`).
    /// Call once the servers' tools are known.
    pub fn unmatched<'a>(&'a self, names: &[&str]) -> Vec<(&'static str, &'a str)> {
        let flagged = |flag: &'static str, patterns: &'a [Pattern]| {
            patterns
                .iter()
                .filter(|p| !names.iter().any(|n| p.matches_with(n, OPTIONS)))
                .map(move |p| (flag, p.as_str()))
                .collect::<Vec<_>>()
        };
        let mut found = flagged("--allow", &self.allow);
        found.extend(flagged("--deny", &self.deny));
        found
    }
}

/// The warning for a pattern that matches no tool, with an example of a real name
/// (`example`, the first tool's) so the user sees the `SERVER__TOOL` form.
pub fn unmatched_warning(flag: &str, pattern: &str, example: Option<&str>) -> String {
    let mut line =
        format!("mcp bridge: {flag} {pattern:?} matches no tool; tool names are SERVER__TOOL");
    if let Some(example) = example {
        line.push_str(&format!(", e.g. {example:?}"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(allow: &[&str], deny: &[&str]) -> ToolFilter {
        let own = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        ToolFilter::new(&own(allow), &own(deny)).expect("valid globs")
    }

    #[test]
    fn no_patterns_offer_everything() {
        let f = filter(&[], &[]);
        assert!(f.offers("github__create_issue"));
        assert!(f.offers("a"));
    }

    #[test]
    fn allow_limits_to_its_matches() {
        let f = filter(&["github__*", "fs__read_?ile"], &[]);
        assert!(f.offers("github__create_issue"));
        assert!(f.offers("fs__read_file"));
        assert!(!f.offers("fs__write_file"));
        assert!(!f.offers("xgithub__create_issue"));
    }

    #[test]
    fn deny_wins_over_allow() {
        let f = filter(&["github__*"], &["*__delete_*"]);
        assert!(f.offers("github__create_issue"));
        assert!(!f.offers("github__delete_repo"));
        let only_deny = filter(&[], &["demo__ask"]);
        assert!(!only_deny.offers("demo__ask"));
        assert!(only_deny.offers("demo__ask2"));
    }

    #[test]
    fn globs_match_whole_names_case_sensitively() {
        let f = filter(&["demo__echo"], &[]);
        assert!(!f.offers("demo__echo2"));
        assert!(!f.offers("Demo__echo"));
        // A `/` or a leading `.` in a name is just a character.
        assert!(filter(&["*"], &[]).offers(".a/b"));
    }

    #[test]
    fn patterns_matching_no_tool_are_found() {
        let f = filter(&["alpha__*", "nomatch"], &["echo", "*__echo"]);
        let names = ["alpha__echo", "beta__add"];
        assert_eq!(
            f.unmatched(&names),
            [("--allow", "nomatch"), ("--deny", "echo")]
        );
        assert!(filter(&[], &[]).unmatched(&[]).is_empty());
        assert_eq!(
            unmatched_warning("--deny", "echo", Some("alpha__echo")),
            "mcp bridge: --deny \"echo\" matches no tool; tool names are SERVER__TOOL, \
             e.g. \"alpha__echo\""
        );
    }

    #[test]
    fn a_broken_glob_is_named() {
        let e = ToolFilter::new(&[], &["[oops".to_owned()]).expect_err("unclosed class");
        assert!(e.contains("--deny \"[oops\""), "{e}");
    }
}
