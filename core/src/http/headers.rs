//! HTTP header names, a small header list, and the checks MCP puts on header values.
//!
//! Header names are ASCII and case-insensitive (RFC 9110 §5.1); the constants here are written in
//! lower case, which is also how HTTP/2 and HTTP/3 put them on the wire.

/// `Mcp-Session-Id`: the session the server assigned in the response to `initialize`; sent back
/// on every later request (POST, GET, DELETE).
pub const MCP_SESSION_ID: &str = "mcp-session-id";
/// `MCP-Protocol-Version`: the negotiated protocol version, sent on every request after
/// initialization (2025-06-18 and later).
pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Last-Event-ID`: the SSE event id to resume a stream after.
pub const LAST_EVENT_ID: &str = "last-event-id";
/// `Accept`.
pub const ACCEPT: &str = "accept";
/// `Content-Type`.
pub const CONTENT_TYPE: &str = "content-type";
/// `Cache-Control`: `no-cache` on every SSE response a server sends.
pub const CACHE_CONTROL: &str = "cache-control";
/// `WWW-Authenticate`: the authentication challenges of a 401 or 403 response.
pub const WWW_AUTHENTICATE: &str = "www-authenticate";
/// `Retry-After`: how long to wait before retrying, on a 429 or 503 response.
pub const RETRY_AFTER: &str = "retry-after";
/// `Location`: the target of a redirect.
pub const LOCATION: &str = "location";
/// `Date`: the server's clock when it sent the response; `Retry-After` dates are relative to it.
pub const DATE: &str = "date";
/// `Authorization`: credentials; never carried to another origin.
pub const AUTHORIZATION: &str = "authorization";
/// `Mcp-Auth-Server`: the authorization server a response points the client to.
pub const MCP_AUTH_SERVER: &str = "mcp-auth-server";

/// The longest session id [`validate_session_id`] accepts, in bytes.
pub const MAX_SESSION_ID_LEN: usize = 1024;

/// An ordered list of HTTP header fields, as the adapter received them or the core wants them
/// sent.
///
/// Names are stored in ASCII lower case and compared case-insensitively; values are kept as given
/// (the adapter turns non-UTF-8 bytes into U+FFFD) and are not validated: the HTTP library checks
/// what it sends, and peer values the core reuses (the session id) are checked on their own.
/// Lookups are linear, which is faster than hashing for the dozen fields a response carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderList {
    fields: Vec<(String, String)>,
}

impl HeaderList {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty list with room for `n` fields.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            fields: Vec::with_capacity(n),
        }
    }

    /// The list of `fields`, in order, whose names are already in ASCII lower case, as an HTTP
    /// library hands them over (hyper's `HeaderName::as_str`; HTTP/2 and HTTP/3 put them so on
    /// the wire): the list collecting them makes, without lower-casing each name again.
    ///
    /// Debug builds check the names. A name with an upper-case letter would still be found by
    /// [`get`](Self::get) (lookups ignore case), but [`iter`](Self::iter) would yield it as given.
    pub fn from_lower_case(fields: Vec<(String, String)>) -> Self {
        debug_assert!(
            fields
                .iter()
                .all(|(n, _)| !n.bytes().any(|b| b.is_ascii_uppercase())),
            "HeaderList::from_lower_case: a name is not in lower case"
        );
        Self { fields }
    }

    /// The number of fields, counting repeated names separately.
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether the list has no fields.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The value of the first field called `name` (any case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The values of every field called `name` (any case), in order. Use it for fields that may
    /// repeat, like `WWW-Authenticate`.
    pub fn get_all<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a str> {
        self.fields
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether a field called `name` (any case) is present.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets `name` to `value`, replacing every field of that name (keeping the position of the
    /// first one, or appending when there was none).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = lower(name.into());
        let value = value.into();
        match self.fields.iter().position(|(n, _)| *n == name) {
            Some(i) => {
                self.fields[i].1 = value;
                // Drop the later duplicates, keeping everything up to and including `i`.
                let mut index = 0;
                self.fields.retain(|(n, _)| {
                    let keep = index <= i || *n != name;
                    index += 1;
                    keep
                });
            }
            None => self.fields.push((name, value)),
        }
    }

    /// Adds a field at the end, keeping any earlier fields of the same name.
    pub fn append(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.fields.push((lower(name.into()), value.into()));
    }

    /// Removes every field called `name` (any case); returns how many there were.
    pub fn remove(&mut self, name: &str) -> usize {
        let before = self.fields.len();
        self.fields.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        before - self.fields.len()
    }

    /// Every field as `(lower-case name, value)`, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

fn lower(mut name: String) -> String {
    name.make_ascii_lowercase();
    name
}

impl<N: Into<String>, V: Into<String>> FromIterator<(N, V)> for HeaderList {
    /// Collects fields with [`HeaderList::append`] semantics.
    fn from_iter<I: IntoIterator<Item = (N, V)>>(iter: I) -> Self {
        let mut list = Self::new();
        list.extend(iter);
        list
    }
}

impl IntoIterator for HeaderList {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    /// Every field as `(lower-case name, value)`, in order, by value: an adapter hands the
    /// strings to its HTTP library without copying them.
    fn into_iter(self) -> Self::IntoIter {
        self.fields.into_iter()
    }
}

impl<N: Into<String>, V: Into<String>> Extend<(N, V)> for HeaderList {
    /// Appends fields with [`HeaderList::append`] semantics.
    fn extend<I: IntoIterator<Item = (N, V)>>(&mut self, iter: I) {
        for (n, v) in iter {
            self.append(n, v);
        }
    }
}

pub use crate::transport_error::InvalidSessionId;

/// Checks a session id sent by the server: non-empty, at most [`MAX_SESSION_ID_LEN`] bytes, and
/// only visible ASCII (0x21 to 0x7E), as the MCP transport rules require. A valid id is returned
/// unchanged (no trimming), so it can be echoed back byte for byte.
pub fn validate_session_id(value: &str) -> Result<&str, InvalidSessionId> {
    if value.is_empty() {
        return Err(InvalidSessionId::Empty);
    }
    if value.len() > MAX_SESSION_ID_LEN {
        return Err(InvalidSessionId::TooLong {
            len: value.len(),
            max: MAX_SESSION_ID_LEN,
        });
    }
    match value.bytes().position(|b| !(0x21..=0x7E).contains(&b)) {
        Some(offset) => Err(InvalidSessionId::InvalidByte {
            byte: value.as_bytes()[offset],
            offset,
        }),
        None => Ok(value),
    }
}

/// What a response's `Content-Type` says the body is, ignoring parameters (`; charset=utf-8`),
/// surrounding whitespace and case.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentType {
    /// `application/json`: one JSON-RPC message (or, for 2025-03-26, a batch).
    Json,
    /// `text/event-stream`: an SSE stream of messages.
    EventStream,
    /// Anything else, as the lower-cased media type without parameters (possibly empty).
    Other(String),
}

impl ContentType {
    /// Classifies one `Content-Type` value.
    pub fn parse(value: &str) -> Self {
        let essence = value.split(';').next().unwrap_or_default().trim();
        if essence.eq_ignore_ascii_case("application/json") {
            Self::Json
        } else if essence.eq_ignore_ascii_case("text/event-stream") {
            Self::EventStream
        } else {
            Self::Other(essence.to_ascii_lowercase())
        }
    }

    /// Classifies the first `Content-Type` of `headers`; `None` when there is none.
    pub fn from_headers(headers: &HeaderList) -> Option<Self> {
        headers.get(CONTENT_TYPE).map(Self::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_is_case_insensitive_and_returns_first() {
        let h: HeaderList = [
            ("MCP-Session-Id", "abc"),
            ("content-type", "text/plain"),
            ("Mcp-Session-Id", "def"),
        ]
        .into_iter()
        .collect();
        assert_eq!(h.get(MCP_SESSION_ID), Some("abc"));
        assert_eq!(h.get("mcp-SESSION-id"), Some("abc"));
        assert_eq!(
            h.get_all(MCP_SESSION_ID).collect::<Vec<_>>(),
            ["abc", "def"]
        );
        assert_eq!(h.get("missing"), None);
        assert!(h.contains("Content-Type"));
        assert_eq!(h.len(), 3);
    }

    proptest::proptest! {
        /// The list of names already in lower case is the one collecting them makes (repeated
        /// names kept, in order), and finds what it finds.
        #[test]
        fn from_lower_case_is_the_collected_list(
            fields in proptest::collection::vec(("[a-z0-9-]{0,12}", "[ -~]{0,24}"), 0..10),
            probe in "[a-zA-Z0-9-]{0,12}",
        ) {
            let trusted = HeaderList::from_lower_case(fields.clone());
            let collected: HeaderList = fields.into_iter().collect();
            proptest::prop_assert_eq!(trusted.get(&probe), collected.get(&probe));
            proptest::prop_assert_eq!(&trusted, &collected);
        }
    }

    #[test]
    fn names_are_stored_lower_case() {
        let mut h = HeaderList::new();
        h.append("Last-Event-ID", "1");
        assert_eq!(h.iter().collect::<Vec<_>>(), [("last-event-id", "1")]);
    }

    #[test]
    fn insert_replaces_all_and_keeps_first_position() {
        let mut h = HeaderList::new();
        h.append("a", "1");
        h.append("B", "2");
        h.append("c", "3");
        h.append("b", "4");
        h.insert("b", "x");
        assert_eq!(
            h.iter().collect::<Vec<_>>(),
            [("a", "1"), ("b", "x"), ("c", "3")]
        );
        h.insert("D", "y");
        assert_eq!(h.get("d"), Some("y"));
        assert_eq!(h.len(), 4);
    }

    #[test]
    fn remove_counts() {
        let mut h: HeaderList = [("a", "1"), ("A", "2"), ("b", "3")].into_iter().collect();
        assert_eq!(h.remove("a"), 2);
        assert_eq!(h.remove("a"), 0);
        assert_eq!(h.iter().collect::<Vec<_>>(), [("b", "3")]);
        assert!(!h.is_empty());
    }

    #[test]
    fn session_id_validation() {
        assert_eq!(validate_session_id("a1-B2_~!"), Ok("a1-B2_~!"));
        assert_eq!(validate_session_id(""), Err(InvalidSessionId::Empty));
        assert_eq!(
            validate_session_id("ab c"),
            Err(InvalidSessionId::InvalidByte {
                byte: b' ',
                offset: 2
            })
        );
        assert_eq!(
            validate_session_id("x\r\nSet-Cookie: a"),
            Err(InvalidSessionId::InvalidByte {
                byte: b'\r',
                offset: 1
            })
        );
        assert_eq!(
            validate_session_id("\u{7f}"),
            Err(InvalidSessionId::InvalidByte {
                byte: 0x7f,
                offset: 0
            })
        );
        assert_eq!(
            validate_session_id("é"),
            Err(InvalidSessionId::InvalidByte {
                byte: 0xC3,
                offset: 0
            })
        );
        let max = "x".repeat(MAX_SESSION_ID_LEN);
        assert_eq!(validate_session_id(&max), Ok(max.as_str()));
        let long = "x".repeat(MAX_SESSION_ID_LEN + 1);
        assert_eq!(
            validate_session_id(&long),
            Err(InvalidSessionId::TooLong {
                len: MAX_SESSION_ID_LEN + 1,
                max: MAX_SESSION_ID_LEN
            })
        );
    }

    #[test]
    fn content_type_classification() {
        assert_eq!(ContentType::parse("application/json"), ContentType::Json);
        assert_eq!(
            ContentType::parse(" Application/JSON ; charset=utf-8"),
            ContentType::Json
        );
        assert_eq!(
            ContentType::parse("text/event-stream"),
            ContentType::EventStream
        );
        assert_eq!(
            ContentType::parse("TEXT/Event-Stream;charset=UTF-8"),
            ContentType::EventStream
        );
        assert_eq!(
            ContentType::parse("Text/HTML; charset=x"),
            ContentType::Other("text/html".into())
        );
        assert_eq!(ContentType::parse(""), ContentType::Other(String::new()));
        assert_eq!(
            ContentType::parse("application/json-seq"),
            ContentType::Other("application/json-seq".into())
        );
        let h: HeaderList = [("Content-Type", "text/event-stream")]
            .into_iter()
            .collect();
        assert_eq!(
            ContentType::from_headers(&h),
            Some(ContentType::EventStream)
        );
        assert_eq!(ContentType::from_headers(&HeaderList::new()), None);
    }
}
