//! The state a connection's driver task and its `Client` handles share.
//!
//! As in quinn, handles do not send commands over a channel: they lock the state, call the
//! core's command directly (so misuse is reported at once and nothing queues outside the
//! core's own bounded queues), and wake the driver, which drains the core's outputs.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Waker;
use std::time::Instant;

use mcp_proto::RawResult;
use mcp_proto::session::{
    CloseReason, Event, InboundRequestId, RequestError, RequestHandle, Session,
};
use mcp_proto::stdio::StdioConnection;
use mcp_proto::types::v2026::ListenFilter;
use tokio::sync::{broadcast, oneshot, watch};

use crate::error::ExitInfo;
use crate::notify::{Gap, GapCause, Item};
use crate::options::ProgressSink;

/// What the core reports that the driver acts on: a session event, or a gap in the
/// notifications that subscribers are told of.
pub(crate) enum Polled {
    Session(Event),
    Gap(Gap),
    /// The gap of one re-issued listen.
    ListenGap {
        handle: RequestHandle,
        gap: Gap,
    },
    /// The new session refused to subscribe to `uri` again.
    Refused {
        uri: String,
        error: RequestError,
    },
}

/// The protocol state machine of one connection. One variant per framing.
///
/// Not `Debug`: the HTTP connection holds the user's headers (credentials).
// One per connection, inside the shared `Arc` and never moved: the size difference is moot.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Core {
    /// Newline-delimited JSON over a byte stream (a child's stdio, a socket, a pipe).
    Lines(StdioConnection),
    /// Streamable HTTP or legacy HTTP+SSE.
    #[cfg(feature = "http")]
    Http(mcp_proto::http::Connection),
}

impl Core {
    pub(crate) fn session(&self) -> &Session {
        match self {
            Core::Lines(c) => c.session(),
            #[cfg(feature = "http")]
            Core::Http(c) => c.session(),
        }
    }

    pub(crate) fn session_mut(&mut self) -> &mut Session {
        match self {
            Core::Lines(c) => c.session_mut(),
            #[cfg(feature = "http")]
            Core::Http(c) => c.session_mut(),
        }
    }

    /// Closes the session (and, over HTTP, starts the DELETE).
    pub(crate) fn close(&mut self, now: Instant) {
        match self {
            Core::Lines(c) => c.session_mut().close(now),
            #[cfg(feature = "http")]
            Core::Http(c) => c.close(now),
        }
    }

    /// The next session event, or a gap. Over HTTP the connection's own events are reported
    /// as tracing events on the way; a session reset (the core already restored the
    /// subscriptions and the log level) is also the gap its subscribers are told of.
    #[cfg_attr(not(feature = "http"), allow(unused_variables))]
    pub(crate) fn poll_event(&mut self, server: &str) -> Option<Polled> {
        match self {
            Core::Lines(c) => c.session_mut().poll_event().map(Polled::Session),
            #[cfg(feature = "http")]
            Core::Http(c) => loop {
                match c.poll_event()? {
                    mcp_proto::http::Event::Session(e) => return Some(Polled::Session(e)),
                    mcp_proto::http::Event::Http(e) => {
                        crate::driver::trace_http_event(server, &e);
                        match e {
                            mcp_proto::http::HttpEvent::SessionReset { since, until, .. } => {
                                return Some(Polled::Gap(Gap {
                                    cause: GapCause::SessionExpired,
                                    since,
                                    until,
                                }));
                            }
                            mcp_proto::http::HttpEvent::ListenResumed {
                                handle,
                                since,
                                until,
                            } => {
                                let cause = GapCause::StreamBroken;
                                let gap = Gap {
                                    cause,
                                    since,
                                    until,
                                };
                                return Some(Polled::ListenGap { handle, gap });
                            }
                            mcp_proto::http::HttpEvent::RestoreFailed {
                                uri: Some(uri),
                                error,
                                ..
                            } => return Some(Polled::Refused { uri, error }),
                            _ => {}
                        }
                    }
                    _ => {}
                }
            },
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has work.
    pub(crate) fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Core::Lines(c) => c.session().poll_timeout(),
            #[cfg(feature = "http")]
            Core::Http(c) => c.poll_timeout(),
        }
    }

    pub(crate) fn handle_timeout(&mut self, now: Instant) {
        match self {
            Core::Lines(c) => c.session_mut().handle_timeout(now),
            #[cfg(feature = "http")]
            Core::Http(c) => c.handle_timeout(now),
        }
    }
}

/// Where the connection is, as seen by handles.
#[derive(Debug, Clone)]
pub(crate) enum Phase {
    Handshaking,
    Ready,
    /// The session is closed; the driver may still be shutting the transport down.
    Closed(CloseReason),
    /// The driver is done: the transport is shut down and any child reaped.
    Finished(CloseReason),
}

impl Phase {
    pub(crate) fn reason(&self) -> Option<&CloseReason> {
        match self {
            Phase::Closed(r) | Phase::Finished(r) => Some(r),
            _ => None,
        }
    }
}

/// A request a handle is waiting for.
pub(crate) struct Call {
    pub(crate) reply: Reply,
    pub(crate) progress: Option<ProgressSink>,
}

/// A request's outcome, as the driver delivers it.
pub(crate) type Outcome = Result<RawResult, RequestError>;

/// Where the driver delivers a request's outcome.
pub(crate) enum Reply {
    /// Left in the entry for the caller's future (`client::call::PendingCall`) to take; the
    /// entry stays until then. (A `oneshot` per request cost an allocation and its atomics on
    /// every call.) The outcome is boxed: every pending call has an entry, while an outcome
    /// sits in one only between its arrival and the caller's next poll, so the table's
    /// entries stay small (the box is one allocation per answer).
    Slot {
        outcome: Option<Box<Outcome>>,
        waker: Option<Waker>,
    },
    /// Sent on a channel: a listen's completion, which its `Subscription` receives.
    Channel(oneshot::Sender<Outcome>),
}

impl Call {
    /// A call whose outcome its caller's future, woken by `waker`, takes from the entry.
    pub(crate) fn waiting(progress: Option<ProgressSink>, waker: Waker) -> Self {
        Self {
            reply: Reply::Slot {
                outcome: None,
                waker: Some(waker),
            },
            progress,
        }
    }

    /// Whether the outcome is in the entry, not yet taken.
    pub(crate) fn is_completed(&self) -> bool {
        matches!(
            self.reply,
            Reply::Slot {
                outcome: Some(_),
                ..
            }
        )
    }
}

/// The delivery end of one `subscriptions/listen` (2026-07-28), owned by the driver's state
/// while the listen is pending; removed (which ends its stream) when it completes.
pub(crate) struct ListenSink {
    /// The first acknowledgement goes here (the caller of `listen` waits for it).
    pub(crate) acknowledged: Option<oneshot::Sender<ListenFilter>>,
    /// The subscription's own bounded stream.
    pub(crate) tx: broadcast::Sender<Item>,
}

/// Hashes request handles with one multiplication instead of SipHash: handles come from the
/// session's own counter, never from the peer, so no one can choose colliding keys. The odd
/// multiplier spreads consecutive handles over the buckets and into hashbrown's tag bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

pub(crate) struct State {
    pub(crate) core: Core,
    pub(crate) calls: HashMap<RequestHandle, Call, BuildHasherDefault<HandleHasher>>,
    /// Open listens (each also has its completion in `calls`).
    pub(crate) listens: HashMap<RequestHandle, ListenSink, BuildHasherDefault<HandleHasher>>,
    /// Running server-request handlers; dropping the sender cancels the handler.
    pub(crate) handlers: HashMap<InboundRequestId, oneshot::Sender<()>>,
    pub(crate) driver: Option<Waker>,
    pub(crate) exit: Option<ExitInfo>,
}

impl State {
    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = self.driver.take() {
            w.wake();
        }
    }
}

pub(crate) struct Shared {
    pub(crate) name: Arc<str>,
    pub(crate) state: Mutex<State>,
    pub(crate) phase: watch::Sender<Phase>,
    /// How many notifications a stream holds before a slow reader lags.
    pub(crate) notification_capacity: usize,
    /// `None` once the session closed, which ends every notification stream.
    notifications: Mutex<Option<broadcast::Sender<Item>>>,
    /// The listed tools' compiled output schemas (dropped by the driver on
    /// `notifications/tools/list_changed`).
    pub(crate) output_schemas: crate::client::SchemaCache,
}

impl Shared {
    pub(crate) fn new(name: Arc<str>, core: Core, notification_capacity: usize) -> Arc<Self> {
        let (phase, _) = watch::channel(Phase::Handshaking);
        let (notifications, _) = broadcast::channel(notification_capacity.max(1));
        Arc::new(Shared {
            name,
            state: Mutex::new(State {
                core,
                calls: HashMap::default(),
                listens: HashMap::default(),
                handlers: HashMap::new(),
                driver: None,
                exit: None,
            }),
            phase,
            notification_capacity: notification_capacity.max(1),
            notifications: Mutex::new(Some(notifications)),
            output_schemas: crate::client::SchemaCache::default(),
        })
    }

    /// The notification sender, `None` once closed.
    pub(crate) fn notifications(&self) -> MutexGuard<'_, Option<broadcast::Sender<Item>>> {
        self.notifications
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A receiver of every notification from now on; already ended once closed.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Item> {
        match &*self.notifications() {
            Some(tx) => tx.subscribe(),
            None => broadcast::channel(1).1,
        }
    }

    /// Locks the state. A panic while it was held (a bug) leaves plain data that is still
    /// consistent enough to fail every call, so poisoning is ignored.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
