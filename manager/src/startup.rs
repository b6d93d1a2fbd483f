//! The start-up deadline: which servers the agent starts with, and which from the cache.
//!
//! The manager connects all servers at once. Until the deadline it waits for each one; at the
//! deadline it goes on with the ready servers plus, for every server still connecting or
//! waiting to reconnect, its cached tools if a fresh entry exists. [`startup_plan`] makes that
//! decision for one moment; the driver calls it again when a server's status changes or the
//! deadline passes.

use super::reconnect::ServerStatus;
use mcp_proto::time::Instant;

/// One server as [`startup_plan`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct StartupServer<'a> {
    /// The server's name.
    pub name: &'a str,
    /// Its status now.
    pub status: &'a ServerStatus,
    /// Whether a fresh cache entry exists for its configuration now.
    pub has_fresh_cache: bool,
    /// Never ready, its last connection attempt could not reach it: why
    /// ([`ReconnectPolicy::unreachable`](super::reconnect::ReconnectPolicy::unreachable)).
    pub unreachable: Option<&'a str>,
    /// Never ready, its last connection attempt reached it and failed (it exited, it
    /// answered with an HTTP error): why
    /// ([`ReconnectPolicy::failed_before_ready`](super::reconnect::ReconnectPolicy::failed_before_ready)).
    pub failed_before_ready: Option<&'a str>,
}

/// The decision of [`startup_plan`], with servers named as given, in the given order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartupPlan<'a> {
    /// `Some(deadline)`: some server is still coming up and the deadline has not passed; wait
    /// until then (or until a status changes). `None`: start now.
    pub wait_until: Option<Instant>,
    /// Ready servers: use their live tools.
    pub live: Vec<&'a str>,
    /// Past the deadline, not ready, with a fresh cache entry: serve their cached tools until
    /// they connect.
    pub from_cache: Vec<&'a str>,
    /// Past the deadline, not ready, no fresh cache entry: no tools for now.
    pub pending: Vec<&'a str>,
    /// Servers that failed, with why: those [`Failed`](ServerStatus::Failed) (a permanent
    /// error, retries used up, a process that exited before it was ever ready when such a
    /// process is not retried), and those never ready whose last attempt reached them and
    /// failed ([`StartupServer::failed_before_ready`]) while the policy retries them. The
    /// start does not wait for them, nor are they served from the cache.
    pub failed: Vec<(&'a str, &'a str)>,
    /// Never ready and retrying after an attempt that could not reach them (the connection
    /// was refused, the host not found), with why: the start does not wait for them, nor are
    /// they served from the cache (their calls could not be answered); they may come up
    /// later.
    pub unreachable: Vec<(&'a str, &'a str)>,
}

/// Decides, at `now`, how to start given the start-up `deadline`.
///
/// A server is still coming up when it is `Connecting` or `Reconnecting`. Failed and disabled
/// servers never hold up the start (a failed server's calls could not be answered, so its
/// cache is not served): failed ones are in `failed`, disabled ones in no list. Before the
/// deadline, coming-up servers are not listed; at or after it, they go to `from_cache` or
/// `pending`. One coming up that has never been ready and whose last attempt failed outright
/// does not hold up the start either: it is in `failed` at once when that attempt reached it
/// ([`StartupServer::failed_before_ready`]), in `unreachable` when it could not
/// ([`StartupServer::unreachable`]).
pub fn startup_plan<'a>(
    now: Instant,
    deadline: Instant,
    servers: &[StartupServer<'a>],
) -> StartupPlan<'a> {
    let mut plan = StartupPlan::default();
    let mut coming_up = false;
    for server in servers {
        match server.status {
            ServerStatus::Ready => plan.live.push(server.name),
            ServerStatus::Connecting | ServerStatus::Reconnecting { .. } => {
                if let Some(why) = server.failed_before_ready {
                    plan.failed.push((server.name, why));
                    continue;
                }
                if let Some(why) = server.unreachable {
                    plan.unreachable.push((server.name, why));
                    continue;
                }
                coming_up = true;
                if now >= deadline {
                    if server.has_fresh_cache {
                        plan.from_cache.push(server.name);
                    } else {
                        plan.pending.push(server.name);
                    }
                }
            }
            ServerStatus::Failed { reason, .. } => plan.failed.push((server.name, reason)),
            _ => {}
        }
    }
    if coming_up && now < deadline {
        plan.wait_until = Some(deadline);
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_proto::time::Duration;

    const CONNECTING: ServerStatus = ServerStatus::Connecting;
    const READY: ServerStatus = ServerStatus::Ready;

    fn s<'a>(name: &'a str, status: &'a ServerStatus, cache: bool) -> StartupServer<'a> {
        StartupServer {
            name,
            status,
            has_fresh_cache: cache,
            unreachable: None,
            failed_before_ready: None,
        }
    }

    fn times() -> (Instant, Instant) {
        let now = Instant::now();
        (now, now + Duration::from_secs(5))
    }

    #[test]
    fn before_deadline_waits_for_slow_server() {
        let (now, deadline) = times();
        let plan = startup_plan(
            now,
            deadline,
            &[s("a", &READY, false), s("slow", &CONNECTING, true)],
        );
        assert_eq!(plan.wait_until, Some(deadline));
        assert_eq!(plan.live, ["a"]);
        assert!(plan.from_cache.is_empty() && plan.pending.is_empty());
    }

    #[test]
    fn all_ready_starts_before_deadline() {
        let (now, deadline) = times();
        let plan = startup_plan(
            now,
            deadline,
            &[s("a", &READY, false), s("b", &READY, true)],
        );
        assert_eq!(plan.wait_until, None);
        assert_eq!(plan.live, ["a", "b"]);
    }

    #[test]
    fn at_deadline_slow_server_with_fresh_cache_is_served_from_cache() {
        let (_, deadline) = times();
        let plan = startup_plan(
            deadline,
            deadline,
            &[s("a", &READY, false), s("slow", &CONNECTING, true)],
        );
        assert_eq!(plan.wait_until, None);
        assert_eq!(plan.from_cache, ["slow"]);
    }

    #[test]
    fn after_deadline_without_cache_is_pending() {
        let (_, deadline) = times();
        let plan = startup_plan(
            deadline + Duration::from_secs(1),
            deadline,
            &[s("slow", &CONNECTING, false)],
        );
        assert_eq!(plan.pending, ["slow"]);
        assert!(plan.from_cache.is_empty());
    }

    #[test]
    fn reconnecting_counts_as_coming_up() {
        let (now, deadline) = times();
        let status = ServerStatus::Reconnecting {
            attempt: 1,
            at: now,
        };
        assert_eq!(
            startup_plan(now, deadline, &[s("r", &status, true)]).wait_until,
            Some(deadline)
        );
        assert_eq!(
            startup_plan(deadline, deadline, &[s("r", &status, true)]).from_cache,
            ["r"]
        );
    }

    #[test]
    fn failed_and_disabled_do_not_hold_up_or_get_cache() {
        let (now, deadline) = times();
        let failed = ServerStatus::Failed {
            reason: "x".into(),
            permanent: false,
        };
        let plan = startup_plan(
            now,
            deadline,
            &[s("f", &failed, true), s("d", &ServerStatus::Disabled, true)],
        );
        // Failed: listed with why; disabled: in no list.
        assert_eq!(
            plan,
            StartupPlan {
                failed: vec![("f", "x")],
                ..StartupPlan::default()
            }
        );
        let plan = startup_plan(deadline, deadline, &[s("f", &failed, true)]);
        assert!(plan.from_cache.is_empty() && plan.pending.is_empty());
    }

    #[test]
    fn no_servers_starts_at_once() {
        let (now, deadline) = times();
        assert_eq!(startup_plan(now, deadline, &[]), StartupPlan::default());
    }

    #[test]
    fn an_unreachable_server_does_not_hold_up_the_start() {
        let (now, deadline) = times();
        let retrying = ServerStatus::Reconnecting {
            attempt: 1,
            at: now + Duration::from_secs(1),
        };
        let down = StartupServer {
            unreachable: Some("connection refused"),
            ..s("down", &retrying, true)
        };
        let plan = startup_plan(now, deadline, &[s("up", &READY, false), down]);
        assert_eq!(plan.wait_until, None);
        assert_eq!(plan.live, vec!["up"]);
        assert_eq!(plan.unreachable, vec![("down", "connection refused")]);
        // Not served from the cache, even past the deadline.
        let plan = startup_plan(deadline, deadline, &[down]);
        assert!(
            plan.from_cache.is_empty() && plan.pending.is_empty(),
            "{plan:?}"
        );
        // While its next attempt is under way, still unreachable; another server still
        // connecting is waited for.
        let again = StartupServer {
            unreachable: Some("connection refused"),
            ..s("down", &CONNECTING, false)
        };
        let plan = startup_plan(now, deadline, &[again, s("slow", &CONNECTING, false)]);
        assert_eq!(plan.wait_until, Some(deadline));
        assert_eq!(plan.unreachable, vec![("down", "connection refused")]);
    }

    #[test]
    fn a_server_that_crashed_at_start_is_failed_not_unreachable() {
        let (now, deadline) = times();
        let retrying = ServerStatus::Reconnecting {
            attempt: 1,
            at: now + Duration::from_secs(1),
        };
        let crashy = StartupServer {
            failed_before_ready: Some("exited with code 3: fatal: no API key"),
            ..s("crashy", &retrying, true)
        };
        let gone = ServerStatus::Failed {
            reason: "could not start `nope`".into(),
            permanent: true,
        };
        let plan = startup_plan(
            now,
            deadline,
            &[s("up", &READY, false), crashy, s("gone", &gone, false)],
        );
        assert_eq!(plan.wait_until, None, "not waited for");
        assert_eq!(plan.live, vec!["up"]);
        assert_eq!(
            plan.failed,
            vec![
                ("crashy", "exited with code 3: fatal: no API key"),
                ("gone", "could not start `nope`")
            ]
        );
        assert!(plan.unreachable.is_empty(), "{plan:?}");
        // Not served from the cache past the deadline either.
        let plan = startup_plan(deadline, deadline, &[crashy]);
        assert!(plan.from_cache.is_empty(), "{plan:?}");
    }
}
