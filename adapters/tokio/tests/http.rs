//! The HTTP transport on tokio: the scripted-server bodies of
//! `mcp_driver::testing::http_suite`, each bounded by a hang guard.

use std::time::Duration;

use mcp_driver::testing::http_suite;
use mcp_tokio::TokioRuntime;

const GUARD: Duration = Duration::from_secs(30);

macro_rules! scripted_tests {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tokio::time::timeout(GUARD, http_suite::$name(TokioRuntime::current()))
                .await
                .expect(concat!(stringify!($name), " hung"));
        }
    )*};
}

scripted_tests!(
    http_json_session_headers_delete,
    http_sse_notification_before_response,
    http_session_expired_reinitializes,
    http_resume_with_last_event_id,
    http_unauthorized_challenge,
    http_bad_url,
);
