//! Tests for `manager::reconnect`, one scenario each.

use super::*;

const MS: Duration = Duration::from_millis(1);

fn config() -> ReconnectConfig {
    ReconnectConfig {
        initial: 100 * MS,
        max: 1000 * MS,
        factor: 2,
        max_attempts: Some(3),
        stable_after: Duration::from_secs(60),
        seed: 7,
        retry_exit_before_ready: true,
    }
}

fn crash() -> ExitCause {
    ExitCause::ProcessExited {
        code: Some(1),
        last_stderr: None,
    }
}

/// Runs the policy from `Connecting` through one failed attempt; returns the reconnect delay.
fn fail_once(p: &mut ReconnectPolicy, now: Instant, cause: &ExitCause) -> Option<Duration> {
    p.handle_exit(now, cause).unwrap();
    let at = p.poll_timeout()?;
    Some(at - now)
}

#[test]
fn starts_connecting_with_connect_pending_once() {
    let mut p = ReconnectPolicy::new(&config());
    assert_eq!(p.status(), &ServerStatus::Connecting);
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    assert_eq!(p.poll_action(), None);
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn connected_is_ready() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    p.handle_connected(now).unwrap();
    assert_eq!(p.status(), &ServerStatus::Ready);
}

#[test]
fn crash_schedules_reconnect_with_jittered_backoff() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    let _ = p.poll_action();
    p.handle_connected(now).unwrap();
    let t1 = now + Duration::from_secs(1);
    let d = fail_once(&mut p, t1, &crash()).unwrap();
    assert!(d >= 50 * MS && d <= 100 * MS, "{d:?}");
    assert!(matches!(
        p.status(),
        ServerStatus::Reconnecting { attempt: 1, .. }
    ));
    assert_eq!(p.poll_action(), None);
}

#[test]
fn early_timeout_does_nothing_and_due_timeout_connects() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    let _ = p.poll_action();
    p.handle_exit(now, &ExitCause::ConnectionRefused).unwrap();
    let at = p.poll_timeout().unwrap();
    p.handle_timeout(at - MS);
    assert_eq!(p.poll_action(), None);
    p.handle_timeout(at);
    assert_eq!(p.status(), &ServerStatus::Connecting);
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn delays_grow_and_are_capped_then_give_up() {
    let cfg = ReconnectConfig {
        max: 250 * MS,
        ..config()
    };
    let mut p = ReconnectPolicy::new(&cfg);
    let mut now = Instant::now();
    let mut delays = Vec::new();
    for _ in 0..3 {
        let d = fail_once(&mut p, now, &ExitCause::StdoutClosed).unwrap();
        delays.push(d);
        now += d;
        p.handle_timeout(now);
        assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    }
    // Nominal 100, 200, 250 (capped); jitter keeps each in [d/2, d].
    for (d, nominal) in delays.iter().zip([100, 200, 250]) {
        assert!(*d <= nominal * MS && *d >= nominal * MS / 2, "{delays:?}");
    }
    p.handle_exit(now, &ExitCause::StdoutClosed).unwrap();
    match p.status() {
        ServerStatus::Failed { permanent, reason } => {
            assert!(!permanent);
            assert!(reason.contains("gave up after 3 retries"), "{reason}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(matches!(p.poll_action(), Some(ReconnectAction::GiveUp(_))));
}

#[test]
fn same_seed_same_delays() {
    let run = |seed| {
        let mut p = ReconnectPolicy::new(&ReconnectConfig { seed, ..config() });
        fail_once(&mut p, Instant::now(), &crash())
    };
    let now_independent = |seed| run(seed).map(|d| d.as_nanos());
    assert_eq!(now_independent(1), now_independent(1));
}

#[test]
fn stable_connection_resets_backoff() {
    let mut p = ReconnectPolicy::new(&config());
    let mut now = Instant::now();
    // Two quick failures push the backoff up.
    for _ in 0..2 {
        let d = fail_once(&mut p, now, &crash()).unwrap();
        now += d;
        p.handle_timeout(now);
    }
    p.handle_connected(now).unwrap();
    now += Duration::from_secs(61);
    fail_once(&mut p, now, &crash()).unwrap();
    assert!(matches!(
        p.status(),
        ServerStatus::Reconnecting { attempt: 1, .. }
    ));
}

#[test]
fn short_connection_does_not_reset_backoff() {
    let mut p = ReconnectPolicy::new(&config());
    let mut now = Instant::now();
    let d = fail_once(&mut p, now, &crash()).unwrap();
    now += d;
    p.handle_timeout(now);
    p.handle_connected(now).unwrap();
    now += Duration::from_secs(5);
    fail_once(&mut p, now, &crash()).unwrap();
    assert!(matches!(
        p.status(),
        ServerStatus::Reconnecting { attempt: 2, .. }
    ));
}

#[test]
fn spawn_failure_is_permanent() {
    let mut p = ReconnectPolicy::new(&config());
    let _ = p.poll_action();
    let cause = ExitCause::SpawnFailed {
        program: "no-such-server".into(),
        message: "No such file or directory (os error 2)".into(),
        not_found: true,
    };
    p.handle_exit(Instant::now(), &cause).unwrap();
    assert!(matches!(
        p.status(),
        ServerStatus::Failed {
            permanent: true,
            ..
        }
    ));
    assert_eq!(
        p.poll_action(),
        Some(ReconnectAction::GiveUp(
            "could not start `no-such-server`: No such file or directory (os error 2) (is \
             `no-such-server` installed and on PATH? Give its full path, or check the spelling)"
                .into()
        ))
    );
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn handshake_and_version_and_config_errors_are_permanent() {
    for cause in [
        ExitCause::HandshakeRejected {
            message: "no".into(),
        },
        ExitCause::UnsupportedVersion {
            version: "1999-01-01".into(),
        },
        ExitCause::Config {
            message: "bad".into(),
        },
    ] {
        assert!(cause.is_permanent(false), "{cause:?}");
        assert!(cause.is_permanent(true), "{cause:?}");
    }
}

#[test]
fn http_401_403_404_permanent_only_on_initial_connect() {
    for status in [401, 403, 404, 400] {
        assert!(ExitCause::Http { status }.is_permanent(true), "{status}");
        assert!(!ExitCause::Http { status }.is_permanent(false), "{status}");
    }
}

#[test]
fn http_5xx_408_429_are_transient() {
    for status in [500, 502, 503, 408, 429] {
        assert!(!ExitCause::Http { status }.is_permanent(true), "{status}");
    }
}

#[test]
fn session_404_after_ready_reconnects() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    p.handle_connected(now).unwrap();
    p.handle_exit(now, &ExitCause::Http { status: 404 })
        .unwrap();
    assert!(matches!(p.status(), ServerStatus::Reconnecting { .. }));
}

#[test]
fn initial_404_fails_permanently() {
    let mut p = ReconnectPolicy::new(&config());
    p.handle_exit(Instant::now(), &ExitCause::Http { status: 404 })
        .unwrap();
    assert!(matches!(
        p.status(),
        ServerStatus::Failed {
            permanent: true,
            ..
        }
    ));
}

#[test]
fn transient_causes_are_not_permanent() {
    for cause in [
        crash(),
        ExitCause::ProcessExited {
            code: None,
            last_stderr: None,
        },
        ExitCause::StdoutClosed,
        ExitCause::SessionLost,
        ExitCause::ConnectionRefused,
        ExitCause::StartupTimeout,
        ExitCause::Io {
            message: "reset".into(),
        },
    ] {
        assert!(!cause.is_permanent(true), "{cause:?}");
    }
}

#[test]
fn misuse_is_a_usage_error() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    p.handle_connected(now).unwrap();
    assert!(p.handle_connected(now).is_err());
    p.handle_exit(now, &crash()).unwrap();
    assert!(matches!(
        p.handle_exit(now, &crash()),
        Err(ReconnectUsageError::NotConnecting(
            ServerStatus::Reconnecting { .. }
        ))
    ));
}

#[test]
fn disable_stops_everything_and_restart_connects_fresh() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    p.handle_exit(now, &crash()).unwrap();
    p.disable();
    assert_eq!(p.status(), &ServerStatus::Disabled);
    assert_eq!(p.poll_timeout(), None);
    assert_eq!(p.poll_action(), None);
    p.handle_timeout(now + Duration::from_secs(10));
    assert_eq!(p.poll_action(), None);
    p.restart();
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    p.handle_exit(now, &crash()).unwrap();
    assert!(matches!(
        p.status(),
        ServerStatus::Reconnecting { attempt: 1, .. }
    ));
}

#[test]
fn disabled_policy_has_no_action() {
    let mut p = ReconnectPolicy::disabled(&config());
    assert_eq!(p.status(), &ServerStatus::Disabled);
    assert_eq!(p.poll_action(), None);
}

#[test]
fn restart_after_permanent_failure() {
    let mut p = ReconnectPolicy::new(&config());
    p.handle_exit(
        Instant::now(),
        &ExitCause::Config {
            message: "x".into(),
        },
    )
    .unwrap();
    let _ = p.poll_action();
    p.restart();
    assert_eq!(p.status(), &ServerStatus::Connecting);
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
}

#[test]
fn no_retries_fails_at_the_first_crash_with_its_cause() {
    let mut p = ReconnectPolicy::new(&ReconnectConfig {
        max_attempts: Some(0),
        ..config()
    });
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    p.handle_exit(Instant::now(), &crash()).unwrap();
    assert_eq!(
        p.status(),
        &ServerStatus::Failed {
            reason: crash().describe(),
            permanent: false
        }
    );
    assert_eq!(
        p.poll_action(),
        Some(ReconnectAction::GiveUp(crash().describe()))
    );
    assert_eq!(p.poll_timeout(), None);
}

#[test]
fn an_exit_is_described_with_the_last_stderr_line() {
    let cause = |code, line: Option<&str>| ExitCause::ProcessExited {
        code,
        last_stderr: line.map(str::to_owned),
    };
    assert_eq!(
        cause(Some(3), Some("fatal: no API key ")).describe(),
        "exited with code 3: fatal: no API key"
    );
    assert_eq!(cause(Some(3), Some("  ")).describe(), "exited with code 3");
    assert_eq!(cause(None, None).describe(), "killed by a signal");
}

#[test]
fn an_exit_before_ready_fails_at_once_when_not_retried() {
    let exited = ExitCause::ProcessExited {
        code: Some(1),
        last_stderr: Some("boom".into()),
    };
    let mut p = ReconnectPolicy::new(&ReconnectConfig {
        retry_exit_before_ready: false,
        ..config()
    });
    assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    p.handle_exit(Instant::now(), &exited).unwrap();
    match p.status() {
        ServerStatus::Failed { reason, .. } => assert!(reason.contains("boom"), "{reason}"),
        other => panic!("expected Failed, got {other:?}"),
    }
    // Once it has been ready, the same exit is retried.
    let mut p = ReconnectPolicy::new(&ReconnectConfig {
        retry_exit_before_ready: false,
        ..config()
    });
    let now = Instant::now();
    p.handle_connected(now).unwrap();
    p.handle_exit(now, &exited).unwrap();
    assert!(matches!(p.status(), ServerStatus::Reconnecting { .. }));
    // A slow handshake is not an exit: retried.
    let mut p = ReconnectPolicy::new(&ReconnectConfig {
        retry_exit_before_ready: false,
        ..config()
    });
    p.handle_exit(now, &ExitCause::StartupTimeout).unwrap();
    assert!(matches!(p.status(), ServerStatus::Reconnecting { .. }));
}

#[test]
fn a_first_attempt_failing_outright_is_unreachable_until_ready() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    assert_eq!(p.unreachable(), None);
    let refused = ExitCause::Io {
        message: "connection refused".into(),
    };
    fail_once(&mut p, now, &refused).expect("retried");
    assert_eq!(p.unreachable(), Some("I/O error: connection refused"));
    // The next attempt under way: still unreachable as far as anyone knows.
    p.handle_timeout(now + Duration::from_secs(5));
    assert_eq!(p.status(), &ServerStatus::Connecting);
    assert_eq!(p.unreachable(), Some("I/O error: connection refused"));
    // Once ready it is not; its last failure is still known.
    p.handle_connected(now + Duration::from_secs(5)).unwrap();
    assert_eq!(p.unreachable(), None);
    assert_eq!(p.last_failure(), Some("I/O error: connection refused"));
    // A crash after that is a failure, not unreachability.
    p.handle_exit(now + Duration::from_secs(6), &crash())
        .unwrap();
    assert_eq!(p.unreachable(), None);
    assert_eq!(p.last_failure(), Some("exited with code 1"));
}

#[test]
fn a_crash_at_start_is_a_failure_of_the_server_not_unreachable() {
    let now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    let crashed = ExitCause::ProcessExited {
        code: Some(3),
        last_stderr: Some("fatal: no API key".into()),
    };
    fail_once(&mut p, now, &crashed).expect("retried");
    assert_eq!(p.unreachable(), None);
    assert_eq!(
        p.failed_before_ready(),
        Some("exited with code 3: fatal: no API key")
    );
    // So is an HTTP server that answered with an error, and a closed stdout.
    for reached in [ExitCause::Http { status: 503 }, ExitCause::StdoutClosed] {
        let mut p = ReconnectPolicy::new(&config());
        fail_once(&mut p, now, &reached).expect("retried");
        assert_eq!(p.unreachable(), None, "{reached:?}");
        assert!(p.failed_before_ready().is_some(), "{reached:?}");
    }
    // Not reached at all: unreachable, not failed.
    for not_reached in [
        ExitCause::ConnectionRefused,
        ExitCause::Io {
            message: "dns error: no such host".into(),
        },
    ] {
        let mut p = ReconnectPolicy::new(&config());
        fail_once(&mut p, now, &not_reached).expect("retried");
        assert!(p.unreachable().is_some(), "{not_reached:?}");
        assert_eq!(p.failed_before_ready(), None, "{not_reached:?}");
    }
    // Once ready, neither.
    p.handle_timeout(now + Duration::from_secs(5));
    p.handle_connected(now + Duration::from_secs(5)).unwrap();
    assert_eq!(p.failed_before_ready(), None);
}

#[test]
fn a_crash_loop_at_start_backs_off_like_any_other() {
    let mut now = Instant::now();
    let mut p = ReconnectPolicy::new(&config());
    let _ = p.poll_action();
    let mut delays = Vec::new();
    while let Some(delay) = fail_once(&mut p, now, &crash()) {
        delays.push(delay);
        now = p.poll_timeout().expect("a reconnect is scheduled");
        p.handle_timeout(now);
        assert_eq!(p.poll_action(), Some(ReconnectAction::Connect));
    }
    // Each delay from the upper half of 100, 200, 400 ms; then it gives up.
    assert_eq!(delays.len(), 3, "{delays:?}");
    for (delay, nominal) in delays.iter().zip([100 * MS, 200 * MS, 400 * MS]) {
        assert!(*delay >= nominal / 2 && *delay <= nominal, "{delays:?}");
    }
    assert!(matches!(
        p.status(),
        ServerStatus::Failed {
            permanent: false,
            ..
        }
    ));
    assert_eq!(p.failed_before_ready(), Some("exited with code 1"));
}

#[test]
fn a_slow_first_attempt_is_not_unreachable() {
    let mut p = ReconnectPolicy::new(&config());
    fail_once(&mut p, Instant::now(), &ExitCause::StartupTimeout).expect("retried");
    assert_eq!(p.unreachable(), None);
    assert_eq!(p.last_failure(), Some("start-up timed out"));
}
