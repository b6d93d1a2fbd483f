//! Tests for `manager::tool_cache`, one rule each.

use super::*;
use crate::config::{HttpConfig, StdioConfig, TimeoutConfig};

fn stdio_server(env: &[(&str, &str)]) -> ServerConfig {
    let mut stdio = StdioConfig::new("npx");
    stdio.args = vec!["-y".into(), "server".into()];
    stdio.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ServerConfig {
        name: "files".into(),
        transport: TransportConfig::Stdio(stdio),
        timeouts: TimeoutConfig::default(),
    }
}

fn http_server(auth: &str) -> ServerConfig {
    let mut http = HttpConfig::new("https://h.example/mcp");
    http.headers = vec![("Authorization".into(), auth.into())];
    ServerConfig {
        name: "gh".into(),
        transport: TransportConfig::Http(http),
        timeouts: TimeoutConfig::default(),
    }
}

fn payload() -> Box<RawValue> {
    RawValue::from_string(r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#.into())
        .unwrap()
}

fn fallback(secs: u64) -> CachePolicy {
    CachePolicy::StartupFallback {
        max_age: Duration::from_secs(secs),
    }
}

#[test]
fn key_is_stable_hex() {
    let a = CacheKey::for_server(&stdio_server(&[("A", "1")]));
    let b = CacheKey::for_server(&stdio_server(&[("A", "1")]));
    assert_eq!(a, b);
    assert_eq!(a.as_str().len(), 64);
    assert!(a.as_str().bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(a.file_name(), format!("tools-{}.json", a.as_str()));
}

#[test]
fn changed_args_change_the_key() {
    let a = stdio_server(&[]);
    let mut b = a.clone();
    let TransportConfig::Stdio(s) = &mut b.transport else {
        unreachable!()
    };
    s.args.push("--more".into());
    assert_ne!(CacheKey::for_server(&a), CacheKey::for_server(&b));
}

#[test]
fn changed_env_value_changes_the_key_but_order_does_not() {
    let base = CacheKey::for_server(&stdio_server(&[("A", "1"), ("B", "2")]));
    assert_ne!(
        base,
        CacheKey::for_server(&stdio_server(&[("A", "1"), ("B", "3")]))
    );
    assert_eq!(
        base,
        CacheKey::for_server(&stdio_server(&[("B", "2"), ("A", "1")]))
    );
}

#[test]
fn changed_credential_changes_the_key() {
    assert_ne!(
        CacheKey::for_server(&http_server("Bearer one")),
        CacheKey::for_server(&http_server("Bearer two"))
    );
}

#[test]
fn renamed_server_changes_the_key() {
    let a = stdio_server(&[]);
    let mut b = a.clone();
    b.name = "other".into();
    assert_ne!(CacheKey::for_server(&a), CacheKey::for_server(&b));
}

#[test]
fn field_boundaries_do_not_alias() {
    let mut a = stdio_server(&[]);
    let mut b = stdio_server(&[]);
    let (TransportConfig::Stdio(sa), TransportConfig::Stdio(sb)) =
        (&mut a.transport, &mut b.transport)
    else {
        unreachable!()
    };
    sa.args = vec!["ab".into(), "c".into()];
    sb.args = vec!["a".into(), "bc".into()];
    assert_ne!(CacheKey::for_server(&a), CacheKey::for_server(&b));
}

#[test]
fn secrets_are_not_in_the_file() {
    let server = http_server("Bearer sekrit-token");
    let entry = CacheEntry::new(&server, 1000, fallback(60), payload());
    let bytes = String::from_utf8(encode(&entry)).unwrap();
    assert!(!bytes.contains("sekrit"), "{bytes}");
}

#[test]
fn startup_fallback_fresh_until_max_age() {
    let e = CacheEntry::new(&stdio_server(&[]), 10_000, fallback(60), payload());
    assert_eq!(e.scope, CacheScope::Private);
    assert!(e.is_fresh(10_000));
    assert!(e.is_fresh(69_999));
    assert!(!e.is_fresh(70_000));
}

#[test]
fn entry_from_the_future_is_not_fresh() {
    let e = CacheEntry::new(&stdio_server(&[]), 10_000, fallback(60), payload());
    assert!(!e.is_fresh(9_999));
}

#[test]
fn ttl_hint_zero_is_never_fresh_but_can_serve_on_error() {
    let policy = CachePolicy::from_hint(Some(0), Some("public"));
    let e = CacheEntry::new(&stdio_server(&[]), 5, policy, payload());
    assert_eq!(e.scope, CacheScope::Public);
    assert!(!e.is_fresh(5));
    assert!(e.is_younger_than(5, Duration::from_secs(1)));
    assert!(!e.is_younger_than(1005, Duration::from_secs(1)));
}

#[test]
fn hint_absent_negative_huge_and_unknown_scope() {
    assert_eq!(
        CachePolicy::from_hint(None, None),
        CachePolicy::Ttl {
            ttl_ms: 0,
            scope: CacheScope::Private
        }
    );
    assert_eq!(
        CachePolicy::from_hint(Some(-5), Some("weird")),
        CachePolicy::Ttl {
            ttl_ms: 0,
            scope: CacheScope::Private
        }
    );
    assert_eq!(
        CachePolicy::from_hint(Some(i64::MAX), Some("private")),
        CachePolicy::Ttl {
            ttl_ms: MAX_TTL_MS,
            scope: CacheScope::Private
        }
    );
}

#[test]
fn ttl_arithmetic_does_not_overflow() {
    let policy = CachePolicy::StartupFallback {
        max_age: Duration::MAX,
    };
    let e = CacheEntry::new(&stdio_server(&[]), u64::MAX - 1, policy, payload());
    assert!(e.is_fresh(u64::MAX));
}

#[test]
fn encode_decode_round_trip() {
    let server = stdio_server(&[("A", "1")]);
    let e = CacheEntry::new(
        &server,
        123,
        CachePolicy::from_hint(Some(5000), Some("public")),
        payload(),
    );
    let back = decode(&encode(&e), Some(&CacheKey::for_server(&server))).unwrap();
    assert_eq!(back, e);
    assert_eq!(back.payload.get(), payload().get());
}

#[test]
fn unknown_version_is_reported() {
    let bytes = br#"{"version": 2, "whatever": true}"#;
    assert_eq!(decode(bytes, None), Err(DecodeError::UnknownVersion(2)));
}

#[test]
fn corrupt_files_are_reported() {
    for bytes in [
        &b""[..],
        b"{\"version\": 1, \"key\": ",
        b"[1,2]",
        br#"{"version": 1, "key": "abc", "server": "s", "storedAtMs": 1, "ttlMs": 1, "scope": "public", "payload": {}}"#,
        br#"{"version": 1, "key": "0000000000000000000000000000000000000000000000000000000000000000", "server": "s", "storedAtMs": 1, "ttlMs": 1, "scope": "shared", "payload": {}}"#,
    ] {
        assert!(matches!(decode(bytes, None), Err(DecodeError::Corrupt(_))), "{bytes:?}");
    }
}

#[test]
fn too_large_is_refused() {
    let bytes = vec![b' '; MAX_FILE_BYTES + 1];
    assert_eq!(
        decode(&bytes, None),
        Err(DecodeError::TooLarge(MAX_FILE_BYTES + 1))
    );
}

#[test]
fn other_configuration_is_a_mismatch() {
    let e = CacheEntry::new(&stdio_server(&[]), 1, fallback(1), payload());
    let other = CacheKey::for_server(&http_server("x"));
    assert_eq!(
        decode(&encode(&e), Some(&other)),
        Err(DecodeError::KeyMismatch)
    );
}

#[test]
fn list_changed_invalidates_only_that_server() {
    let a = stdio_server(&[]);
    let b = http_server("x");
    let mut cache = ToolCache::new();
    cache.insert(CacheEntry::new(&a, 0, fallback(60), payload()));
    cache.insert(CacheEntry::new(&b, 0, fallback(60), payload()));
    let (ka, kb) = (CacheKey::for_server(&a), CacheKey::for_server(&b));
    assert!(cache.fresh(&ka, 1).is_some());
    assert!(cache.handle_list_changed(&ka).is_some());
    assert!(cache.get(&ka).is_none());
    assert!(cache.fresh(&kb, 1).is_some());
    assert!(cache.handle_list_changed(&ka).is_none());
}

#[test]
fn cache_returns_only_fresh() {
    let a = stdio_server(&[]);
    let mut cache = ToolCache::new();
    cache.insert(CacheEntry::new(&a, 0, fallback(1), payload()));
    let k = CacheKey::for_server(&a);
    assert!(cache.fresh(&k, 999).is_some());
    assert!(cache.fresh(&k, 1000).is_none());
    assert!(cache.get(&k).is_some());
}
