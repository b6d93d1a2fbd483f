//! The parsers of option values clap leaves as strings: headers, environment pairs, the
//! `--listen` address, durations and `complete`'s reference.

use std::time::Duration;

/// Parses `Name: value` (or `Name:value`) into a header pair.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if is_token(name.trim()) => {
            Ok((name.trim().to_owned(), value.trim().to_owned()))
        }
        _ => Err(format!("expected `Name: value`, got {text:?}")),
    }
}

/// The value of header `name` with `${VAR}` and `${VAR:-default}` expanded by `vars`, and
/// `$$` as one literal `$` ([`mcp_manager::config::expand_vars_escaped`]).
///
/// # Errors
///
/// What is wrong with a reference, naming the header (the value is never quoted: it may hold
/// a secret).
pub fn expand_header(
    name: &str,
    value: &str,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    use mcp_manager::config::ExpandError;
    mcp_manager::config::expand_vars_escaped(value, vars).map_err(|e| match e {
        ExpandError::Undefined { name: var } => format!(
            "--header {name}: the environment variable {var} is not set (export it, or write \
             ${{{var}:-default}}; $${{ sends a literal ${{)"
        ),
        other => format!("--header {name}: {other} ($${{ sends a literal ${{)"),
    })
}

fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Parses `KEY=VALUE` into an environment variable pair.
pub fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !key.contains('\0') => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

/// Parses the address of `--listen`: `127.0.0.1:PORT`, `[::1]:PORT`, `0.0.0.0:PORT`, or
/// `localhost:PORT` (served on 127.0.0.1). A bare port or a host name is refused with the
/// form to use instead.
pub fn parse_listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::{Ipv4Addr, SocketAddr};
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    if let Some((host, port)) = text.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    let port = text.rsplit_once(':').map_or(text, |(_, port)| port);
    let example = match port.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => "127.0.0.1:PORT".to_owned(),
    };
    Err(format!(
        "expected IP:PORT, got {text:?}: use {example} (port 0 picks a free one; 0.0.0.0:PORT \
         serves other machines too)"
    ))
}

/// The forms `--allow-origin` takes, for its errors.
const ORIGIN_FORM: &str = "an origin is a scheme, a host and a port unless it is the scheme's \
default, as a browser sends it: https://example.com, http://localhost:3000";

/// Parses `--allow-origin`: a browser origin, `scheme://host[:port]` exactly as a browser
/// sends it in `Origin` (`https://app.example.com`, `http://localhost:3000`,
/// `vscode-webview://id`). A bare host (`example.com`, which would match no browser), a
/// trailing slash, a path, a query, a fragment or credentials are refused with the form to
/// use. http and https origins come back in the form browsers send (the host in lower case,
/// a default port dropped: `https://Example.com:443` is `https://example.com`), so that they
/// compare equal.
pub fn parse_origin(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Err(
            "the origin \"null\" (sandboxed pages, local files) cannot be allowed: any page can \
             send it"
                .to_owned(),
        );
    }
    let Some((scheme, rest)) = text.split_once("://") else {
        let host = text.split(['/', '?', '#']).next().unwrap_or_default();
        let example = if host.is_empty() {
            "https://example.com".to_owned()
        } else if host.starts_with("localhost") || host.starts_with("127.") {
            format!("http://{host}")
        } else {
            format!("https://{host}")
        };
        return Err(format!(
            "{text:?} has no scheme, so no browser's Origin would match it: use {example} \
             ({ORIGIN_FORM})"
        ));
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let bare = format!("{scheme}://{authority}");
    match tail {
        "" => {}
        "/" => {
            return Err(format!(
                "{text:?} ends with a slash, which a browser's Origin never has: use {bare}"
            ));
        }
        _ => {
            return Err(format!(
                "{text:?} has a path: an origin has none, use {bare} ({ORIGIN_FORM})"
            ));
        }
    }
    let url = url::Url::parse(text)
        .map_err(|e| format!("{text:?} is not an origin ({e}); {ORIGIN_FORM}"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{text:?} has credentials: an origin has none ({ORIGIN_FORM})"
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{text:?} has no host ({ORIGIN_FORM})"));
    }
    match url.scheme() {
        // The browser's own serialization: lower-case host, no default port.
        "http" | "https" => Ok(url.origin().ascii_serialization()),
        _ => Ok(text.to_owned()),
    }
}

/// Parses `250ms`, `10s`, `2m`, `1h` or a bare number of seconds (`1.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: f64 = number
        .parse()
        .map_err(|_| format!("expected a duration like 10s or 500ms, got {text:?}"))?;
    let seconds = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("bad duration {text:?}: {e}"))
}

/// What `complete` completes an argument of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// A prompt, by name.
    Prompt(String),
    /// A resource template, by URI template.
    Resource(String),
}

impl CompletionRef {
    /// The core's reference type for `completion/complete`.
    pub fn to_proto(&self) -> mcp_proto::types::Reference {
        use mcp_proto::types::{PromptReference, Reference, ResourceTemplateReference};
        match self {
            CompletionRef::Prompt(name) => Reference::Prompt(PromptReference {
                name: name.clone(),
                ..PromptReference::default()
            }),
            CompletionRef::Resource(uri) => Reference::Resource(ResourceTemplateReference {
                uri: uri.clone(),
                ..ResourceTemplateReference::default()
            }),
        }
    }
}

/// Parses `prompt:<name>`, `resource:<uri>`, a bare URI (`x://…`, a resource) or a bare name.
pub fn parse_reference(text: &str) -> Result<CompletionRef, String> {
    let reference = if let Some(name) = text.strip_prefix("prompt:") {
        CompletionRef::Prompt(name.to_owned())
    } else if let Some(uri) = text.strip_prefix("resource:") {
        CompletionRef::Resource(uri.to_owned())
    } else if text.contains("://") {
        CompletionRef::Resource(text.to_owned())
    } else {
        CompletionRef::Prompt(text.to_owned())
    };
    match &reference {
        CompletionRef::Prompt(s) | CompletionRef::Resource(s) if s.is_empty() => {
            Err(format!("empty reference {text:?}"))
        }
        _ => Ok(reference),
    }
}
