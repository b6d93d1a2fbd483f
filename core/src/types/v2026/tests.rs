use super::*;

const DISCOVER: &str = include_str!(
    "../../../tests/data/2026-07-28/DiscoverResult/server-capabilities-discovery.json"
);
const INPUT_REQUIRED: &str = include_str!(
    "../../../tests/data/2026-07-28/InputRequiredResult/input-required-result-with-elicitation-and-sampling-and-request-state.json"
);
const LISTEN: &str = include_str!(
    "../../../tests/data/2026-07-28/SubscriptionsListenRequest/listen-for-list-changes.json"
);
const LIST_TOOLS: &str = include_str!(
    "../../../tests/data/2026-07-28/ListToolsResult/tools-list-with-cursor-and-ttl.json"
);

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).unwrap()
}

#[test]
fn the_example_discover_result_decodes() {
    let d: DiscoverResult = serde_json::from_str(DISCOVER).unwrap();
    assert_eq!(d.supported_versions, ["2026-07-28"]);
    assert!(d.capabilities.tools.is_some());
    assert_eq!(d.server_info().unwrap().name, "ExampleServer");
    assert_eq!(
        CacheHints::of(&raw(DISCOVER)),
        CacheHints {
            ttl_ms: 3_600_000,
            private: false
        }
    );
    assert!(
        serde_json::from_str::<DiscoverResult>("{}").is_err(),
        "{{}} is not a DiscoverResult"
    );
}

#[test]
fn result_type_is_read_without_decoding_and_absent_means_complete() {
    assert_eq!(
        ResultType::of(&raw(INPUT_REQUIRED)),
        ResultType::InputRequired
    );
    assert_eq!(
        ResultType::of(&raw(r#"{"content":[]}"#)),
        ResultType::Complete
    );
    assert_eq!(
        ResultType::of(&raw(r#"{"resultType":"task"}"#)),
        ResultType::Task
    );
    assert_eq!(
        ResultType::of(&raw(r#"{"resultType":"later"}"#)),
        ResultType::Unknown("later".into())
    );
    assert!(matches!(
        ResultType::of(&raw("[1]")),
        ResultType::Unknown(_)
    ));
}

#[test]
fn the_example_input_required_result_keeps_keys_in_order_and_state_raw() {
    let r: InputRequiredResult = serde_json::from_str(INPUT_REQUIRED).unwrap();
    let reqs = r.input_requests.unwrap();
    let keys: Vec<_> = reqs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["github_login", "capital_of_france"]);
    assert_eq!(reqs[1].1.method, "sampling/createMessage");
    assert_eq!(
        r.request_state.unwrap().get(),
        r#""eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0""#
    );
}

#[test]
fn cache_hints_default_to_zero_and_private() {
    assert_eq!(
        CacheHints::of(&raw(LIST_TOOLS)),
        CacheHints {
            ttl_ms: 300_000,
            private: false
        }
    );
    assert_eq!(
        CacheHints::of(&raw(r#"{"ttlMs":-5,"cacheScope":"public"}"#)).ttl_ms,
        0
    );
    assert!(CacheHints::of(&raw(r#"{"ttlMs":5}"#)).private);
}

#[test]
fn the_example_listen_params_round_trip() {
    let v: Value = serde_json::from_str(LISTEN).unwrap();
    let p: SubscriptionsListenParams = serde_json::from_value(v["params"].clone()).unwrap();
    assert_eq!(p.notifications.tools_list_changed, Some(true));
    assert_eq!(
        p.notifications.resource_subscriptions.as_deref(),
        Some(&["file:///project/config.json".to_owned()][..])
    );
    assert!(is_modern_error_code(-32022) && !is_modern_error_code(-32601));
}
