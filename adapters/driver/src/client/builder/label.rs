//! The name a server goes by in errors and logs when the caller gave it none
//! ([`ClientBuilder::name`](super::ClientBuilder::name)): its command line, or its URL.

/// The longest command-line label, in characters; a longer one is cut and ends with `…`.
const MAX_COMMAND_LABEL: usize = 60;

/// A stdio server's command line as a person would type it: the program's file name (its
/// directory left out), then its arguments, each one that a shell would split or expand in
/// single quotes; cut to [`MAX_COMMAND_LABEL`] characters with `…` when longer.
///
/// `mcp demo-server`, `sh -c 'exit 3'`, `python3 /very/long/path/to/the/server/scri…`.
pub(super) fn command_line(command: &str, args: &[String]) -> String {
    let program = command.rsplit('/').next().unwrap_or(command);
    let mut line = quoted(program);
    for arg in args {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    match line.char_indices().nth(MAX_COMMAND_LABEL - 1) {
        // More than the limit: keep one character less and mark the cut.
        Some((cut, _)) if line[cut..].chars().nth(1).is_some() => {
            line.truncate(cut);
            line.push('…');
            line
        }
        _ => line,
    }
}

/// `word` as a POSIX shell would read it back: as is when it is plain, else in single quotes
/// (an embedded `'` written as `'\''`).
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// An HTTP server's URL without what may be secret: `scheme://host[:port]/path`, with no user
/// name or password, no query (a token often rides in it) and no fragment. The port is shown
/// when the URL gives one other than the scheme's default.
#[cfg(feature = "http")]
pub(super) fn url_label(url: &url::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{}://{host}:{port}{}", url.scheme(), url.path()),
        None => format!("{}://{host}{}", url.scheme(), url.path()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_command_is_named_by_its_command_line() {
        assert_eq!(
            command_line("mcp", &args(&["demo-server"])),
            "mcp demo-server"
        );
        assert_eq!(
            command_line("/usr/local/bin/mcp", &args(&["demo-server"])),
            "mcp demo-server"
        );
        assert_eq!(
            command_line("sh", &args(&["-c", "echo 'no key' >&2; exit 3"])),
            r"sh -c 'echo '\''no key'\'' >&2; exit 3'"
        );
        assert_eq!(command_line("srv", &args(&[""])), "srv ''");
    }

    #[test]
    fn a_long_command_line_is_cut_with_an_ellipsis() {
        let long = "x".repeat(100);
        let label = command_line("python3", &args(&[&long]));
        assert_eq!(label.chars().count(), MAX_COMMAND_LABEL);
        assert!(label.starts_with("python3 xxx"), "{label}");
        assert!(label.ends_with('…'), "{label}");
        // Exactly at the limit: whole.
        let fits = "y".repeat(MAX_COMMAND_LABEL - "srv ".len());
        assert_eq!(
            command_line("srv", &args(&[&fits])).chars().count(),
            MAX_COMMAND_LABEL
        );
        assert!(!command_line("srv", &args(&[&fits])).ends_with('…'));
        // Multi-byte characters are cut on a character boundary.
        let wide = "é".repeat(100);
        assert!(command_line("srv", &args(&[&wide])).ends_with("é…"));
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_url_is_named_without_its_secrets() {
        let label = |u: &str| url_label(&url::Url::parse(u).expect("a valid URL"));
        assert_eq!(
            label("http://127.0.0.1:3000/mcp"),
            "http://127.0.0.1:3000/mcp"
        );
        assert_eq!(
            label("https://user:pw@example.com/v1/mcp?token=s3cret#x"),
            "https://example.com/v1/mcp"
        );
        assert_eq!(
            label("https://example.com:443/mcp"),
            "https://example.com/mcp"
        );
        assert_eq!(label("http://[::1]:8080/"), "http://[::1]:8080/");
    }
}
