//! The loopback listener against a raw client on 127.0.0.1: what ends the wait and what does
//! not.

use std::future::Future;
use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::task::{Context, Poll, Wake};

use super::*;

/// A minimal executor: the listener's future is a channel, so parking the thread is enough.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// One request; the status code and the body.
fn request(port: u16, method: &str, target: &str) -> (u16, String) {
    let mut s = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).unwrap();
    write!(
        s,
        "{method} {target} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn binds_loopback_with_an_ephemeral_port() {
    let l = LoopbackListener::bind().unwrap();
    assert_ne!(l.port(), 0);
    assert_eq!(
        l.redirect_uri().as_str(),
        format!("http://127.0.0.1:{}/callback", l.port())
    );
    assert!(l.listener.local_addr().unwrap().ip().is_loopback());
}

#[test]
fn only_the_callback_with_the_right_state_ends_the_wait() {
    let l = LoopbackListener::bind()
        .unwrap()
        .timeout(Duration::from_secs(20));
    let port = l.port();
    let waiting = l.wait("s-123".into());
    assert_eq!(request(port, "GET", "/favicon.ico").0, 404);
    assert_eq!(
        request(port, "GET", "/callback/x?code=c&state=s-123").0,
        404
    );
    assert_eq!(request(port, "POST", "/callback?code=c&state=s-123").0, 405);
    let (status, body) = request(port, "GET", "/callback?code=c&state=forged");
    assert_eq!(status, 400);
    assert!(body.contains("state mismatch"), "{body}");
    assert_eq!(request(port, "GET", "/callback?code=c").0, 400, "no state");
    assert_eq!(
        request(port, "GET", "/callback?state=s-123").0,
        400,
        "no code"
    );
    let (status, body) = request(port, "GET", "/callback?code=the-code&state=s-123");
    assert_eq!(status, 200);
    assert!(body.contains("You can close this tab"), "{body}");
    assert!(
        !body.contains("the-code"),
        "the page does not echo the code"
    );
    assert_eq!(
        block_on(waiting).unwrap(),
        format!("http://127.0.0.1:{port}/callback?code=the-code&state=s-123")
    );
}

#[test]
fn an_error_with_the_right_state_ends_the_wait_for_the_flow_to_judge() {
    let l = LoopbackListener::bind()
        .unwrap()
        .timeout(Duration::from_secs(20));
    let port = l.port();
    let waiting = l.wait("s".into());
    let (status, body) = request(port, "GET", "/callback?error=access_denied&state=s");
    assert_eq!(status, 200);
    assert!(body.contains("refused"), "{body}");
    assert!(block_on(waiting).unwrap().contains("error=access_denied"));
}

#[test]
fn the_wait_times_out() {
    let l = LoopbackListener::bind()
        .unwrap()
        .timeout(Duration::from_millis(200));
    let started = Instant::now();
    let err = block_on(l.wait("s".into())).unwrap_err();
    assert!(err.contains("no authorization redirect reached"), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_dropped_wait_stops_its_thread_and_the_listener_can_wait_again() {
    let l = LoopbackListener::bind()
        .unwrap()
        .timeout(Duration::from_secs(20));
    drop(l.wait("first".into()));
    // The abandoned thread notices within its poll interval (25 ms) and stops accepting.
    std::thread::sleep(Duration::from_millis(100));
    let waiting = l.wait("second".into());
    assert_eq!(
        request(l.port(), "GET", "/callback?code=c&state=second").0,
        200
    );
    assert!(block_on(waiting).unwrap().ends_with("state=second"));
}
