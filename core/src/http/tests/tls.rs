//! How a failed connection is classified: a TLS library's words are a TLS failure, and an
//! `https://` URL answered in plain text says to try `http://`.

use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).expect("a valid URL")
}

#[test]
fn an_https_url_on_a_plain_http_port_is_a_tls_failure_saying_try_http() {
    let seen = ExchangeFailure::new(
        FailureKind::Connect,
        "error sending request for url (https://127.0.0.1:3001/mcp): client error (Connect): \
         received corrupt message of type InvalidContentType",
    );
    let classified = seen.classified(&url("https://127.0.0.1:3001/mcp"));
    assert_eq!(classified.kind, FailureKind::Tls);
    assert_eq!(
        classified.message,
        "the server at 127.0.0.1:3001 does not speak TLS (it answered the handshake in plain \
         text); try http://127.0.0.1:3001/mcp"
    );
    // The default port made explicit: plain HTTP's default is another one.
    let classified = ExchangeFailure::new(FailureKind::Connect, "corrupt message")
        .classified(&url("https://example.com/mcp"));
    assert!(
        classified
            .message
            .ends_with("try http://example.com:443/mcp"),
        "{}",
        classified.message
    );
}

#[test]
fn a_handshake_closed_by_the_server_may_be_plain_http() {
    let classified = ExchangeFailure::new(
        FailureKind::Connect,
        "client error (Connect): tls handshake eof",
    )
    .classified(&url("https://127.0.0.1:3001/mcp"));
    assert_eq!(classified.kind, FailureKind::Tls);
    assert_eq!(
        classified.message,
        "the server at 127.0.0.1:3001 closed the connection during the TLS handshake: it may \
         not speak TLS; try http://127.0.0.1:3001/mcp"
    );
}

#[test]
fn a_refused_certificate_is_a_tls_failure_in_the_librarys_words() {
    let words = "client error (Connect): invalid peer certificate: UnknownIssuer";
    let classified = ExchangeFailure::new(FailureKind::Connect, words)
        .classified(&url("https://127.0.0.1:3001/mcp"));
    assert_eq!(classified, ExchangeFailure::new(FailureKind::Tls, words));
}

#[test]
fn other_failures_are_left_as_the_adapter_saw_them() {
    for seen in [
        ExchangeFailure::new(
            FailureKind::Connect,
            "tcp connect error: Connection refused",
        ),
        ExchangeFailure::new(FailureKind::Reset, "handshake alert: tls"),
    ] {
        assert_eq!(
            seen.clone().classified(&url("https://127.0.0.1:3001/mcp")),
            seen
        );
    }
}
