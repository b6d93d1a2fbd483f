//! "Did you mean …?": ranks a server's own names (tools, prompts, resource URIs, argument
//! names) by how close they are to what was typed.
//!
//! Call [`did_you_mean`] with the name that was not found and every name the server listed.
//! It returns at most [`MAX_SUGGESTIONS`] names, best first, and nothing when no name is close
//! enough to be a plausible typo: a suggestion that is plainly unrelated is worse than none.

/// The most names [`did_you_mean`] returns.
pub const MAX_SUGGESTIONS: usize = 3;

/// The lowest similarity (0 to 1, normalized Damerau-Levenshtein over the folded names) that
/// still counts as a typo. 0.6 lets through one or two slips in a short name (`ecko`,
/// `summarise`) and a few more in a long one, and rejects names that merely share letters.
const MIN_SIMILARITY: f64 = 0.6;

/// The candidates close to `typed`, best first, at most [`MAX_SUGGESTIONS`], never `typed`
/// itself.
///
/// Ranking, in order: the same name up to case and separators (`get-weather` for
/// `get_weather`, `GetWeather`); then a name that contains the typed one or is contained in it
/// (`weather` for `get_weather`, at least three characters); then edit similarity. Ties keep
/// the server's order. Names are compared folded: lower case, without `_`, `-`, `.` and
/// spaces, so a different separator costs nothing.
pub fn did_you_mean<'a, I>(typed: &str, candidates: I) -> Vec<String>
where
    I: IntoIterator<Item = &'a str>,
{
    let folded = fold(typed);
    let mut ranked: Vec<(Rank, usize, &str)> = candidates
        .into_iter()
        .filter(|c| *c != typed)
        .enumerate()
        .filter_map(|(order, candidate)| {
            rank(&folded, &fold(candidate)).map(|r| (r, order, candidate))
        })
        .collect();
    ranked.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<String> = Vec::new();
    for (_, _, name) in ranked {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_owned());
        }
        if out.len() == MAX_SUGGESTIONS {
            break;
        }
    }
    out
}

/// How good a candidate is; smaller is better (derived order: variant, then the field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// Equal after folding.
    Folded,
    /// One contains the other; the field is the length difference.
    Contains(usize),
    /// Similar enough; the field is 1000 × (1 − similarity), so closer sorts first.
    Similar(u32),
}

fn rank(typed: &str, candidate: &str) -> Option<Rank> {
    if typed.is_empty() || candidate.is_empty() {
        return None;
    }
    if typed == candidate {
        return Some(Rank::Folded);
    }
    let shorter = typed.chars().count().min(candidate.chars().count());
    if shorter >= 3 && (candidate.contains(typed) || typed.contains(candidate)) {
        return Some(Rank::Contains(typed.len().abs_diff(candidate.len())));
    }
    // The distance is at least the difference in length, so a name much longer or shorter
    // than the typed one cannot reach MIN_SIMILARITY: skip the quadratic distance (a server
    // may list very long names).
    let longer = typed.chars().count().max(candidate.chars().count());
    if (shorter as f64) < MIN_SIMILARITY * longer as f64 {
        return None;
    }
    let similarity = strsim::normalized_damerau_levenshtein(typed, candidate);
    // `as` is exact here: the value is in 0..=1000 by construction.
    (similarity >= MIN_SIMILARITY).then_some(Rank::Similar(((1.0 - similarity) * 1000.0) as u32))
}

/// Lower case without the separators people mix up.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEMO_TOOLS: [&str; 6] = ["echo", "add", "slow", "ask", "image", "fail"];

    #[test]
    fn one_slip_in_a_short_name() {
        assert_eq!(did_you_mean("ecko", DEMO_TOOLS), ["echo"]);
        assert_eq!(did_you_mean("imgae", DEMO_TOOLS), ["image"]);
        assert_eq!(
            did_you_mean("summarise", ["summarize", "translate"]),
            ["summarize"]
        );
    }

    #[test]
    fn unrelated_names_are_not_suggested() {
        assert!(did_you_mean("weather", DEMO_TOOLS).is_empty());
        assert!(did_you_mean("zzzz", DEMO_TOOLS).is_empty());
        assert!(did_you_mean("", DEMO_TOOLS).is_empty());
    }

    #[test]
    fn separators_and_case_rank_first() {
        let tools = ["get_forecast", "get-weather", "getWeatherAlerts", "weather"];
        assert_eq!(
            did_you_mean("get_weather", tools),
            ["get-weather", "weather", "getWeatherAlerts"]
        );
        assert_eq!(did_you_mean("GetWeather", ["get_weather"]), ["get_weather"]);
    }

    #[test]
    fn containment_beats_edits_and_shorter_differences_first() {
        let tools = [
            "read_file",
            "read_multiple_files",
            "write_file",
            "reed_file",
        ];
        assert_eq!(
            did_you_mean("read", tools),
            ["read_file", "read_multiple_files"]
        );
        assert_eq!(did_you_mean("raed_file", tools), ["read_file", "reed_file"]);
        assert_eq!(did_you_mean("file", tools)[0], "read_file");
    }

    #[test]
    fn at_most_three_best_first_without_duplicates() {
        let names = ["tool1", "tool2", "tool3", "tool4", "tool1"];
        assert_eq!(did_you_mean("tool", names), ["tool1", "tool2", "tool3"]);
    }

    #[test]
    fn resource_uris() {
        let uris = ["demo://readme", "demo://notes/{name}", "file:///etc/hosts"];
        assert_eq!(did_you_mean("demo://readm", uris), ["demo://readme"]);
        assert_eq!(did_you_mean("demo://README", uris), ["demo://readme"]);
    }

    #[test]
    fn very_long_names_are_skipped_cheaply() {
        let long = "x".repeat(1 << 20);
        assert!(did_you_mean("ecko", [long.as_str(), "echo"]) == ["echo"]);
    }

    #[test]
    fn the_typed_name_itself_is_never_suggested() {
        assert!(did_you_mean("echo", ["echo"]).is_empty());
    }
}
