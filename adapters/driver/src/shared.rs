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
use mcp_proto::session::{CloseReason, InboundRequestId, RequestError, RequestHandle, Session};
use mcp_proto::stdio::StdioConnection;
use mcp_proto::types::v2026::ListenFilter;
use tokio::sync::{broadcast, oneshot, watch};

use crate::error::ExitInfo;
use crate::notify::{Gap, Item};
use crate::options::ProgressSink;

/// What a transport event means for the notification streams: a gap they are told of, or a
/// refused re-subscription.
// Only the HTTP transport has notices.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) enum Notice {
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

/// What `Client` handles do with their connection, whatever its transport: commands on the
/// session and close (the command group of the core's contract), and the HTTP `Authorization`
/// header. Handles hold the connection as `dyn Core`; the driver, which knows the concrete
/// type, runs its inputs and outputs.
pub(crate) trait Core: Send {
    /// The session, for its getters.
    fn session(&self) -> &Session;
    /// The session, for commands; wake the driver afterwards.
    fn session_mut(&mut self) -> &mut Session;
    /// Closes the session and starts the transport's own closing (the HTTP DELETE).
    fn close(&mut self, now: Instant);
    /// The `Authorization` header later HTTP exchanges carry; `None` without HTTP.
    #[cfg(feature = "http")]
    fn authorization(&self) -> Option<String> {
        None
    }
    /// Replaces the `Authorization` header of later HTTP exchanges; nothing without HTTP.
    #[cfg(feature = "http")]
    fn set_authorization(&mut self, _header: String) {}
}

impl Core for StdioConnection {
    fn session(&self) -> &Session {
        StdioConnection::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        StdioConnection::session_mut(self)
    }

    fn close(&mut self, now: Instant) {
        StdioConnection::close(self, now);
    }
}

#[cfg(feature = "http")]
impl Core for mcp_proto::http::Connection {
    fn session(&self) -> &Session {
        mcp_proto::http::Connection::session(self)
    }

    fn session_mut(&mut self) -> &mut Session {
        mcp_proto::http::Connection::session_mut(self)
    }

    fn close(&mut self, now: Instant) {
        mcp_proto::http::Connection::close(self, now);
    }

    fn authorization(&self) -> Option<String> {
        self.config()
            .extra_headers
            .get(mcp_proto::http::headers::AUTHORIZATION)
            .map(str::to_owned)
    }

    fn set_authorization(&mut self, header: String) {
        mcp_proto::http::Connection::set_authorization(self, Some(header));
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

/// Hashes counter values (request handles, the server's request, session and response
/// tokens) with one multiplication instead of SipHash: they come from the core's own
/// counters, never from the peer, so no one can choose colliding keys. The odd multiplier
/// spreads consecutive values over the buckets and into hashbrown's tag bits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HandleHasher(u64);

/// A map keyed by counter values ([`HandleHasher`]).
pub(crate) type CounterMap<K, V> = HashMap<K, V, BuildHasherDefault<HandleHasher>>;

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

/// The state handles and the driver share. `C` is the connection: its concrete type for the
/// driver, `dyn Core` for handles (the same allocation, unsized).
pub(crate) struct State<C: ?Sized = dyn Core> {
    pub(crate) calls: CounterMap<RequestHandle, Call>,
    /// Open listens (each also has its completion in `calls`).
    pub(crate) listens: CounterMap<RequestHandle, ListenSink>,
    /// Running server-request handlers; dropping the sender cancels the handler.
    pub(crate) handlers: CounterMap<InboundRequestId, oneshot::Sender<()>>,
    pub(crate) driver: Option<Waker>,
    pub(crate) exit: Option<ExitInfo>,
    /// The resource URIs the initialize-era subscriptions hold, each subscribed upstream once.
    pub(crate) resource_holds: crate::subscription::ResourceHolds,
    /// Last: the one field whose type may be unsized.
    pub(crate) core: C,
}

impl<C: ?Sized> State<C> {
    pub(crate) fn wake_driver(&mut self) {
        if let Some(w) = self.driver.take() {
            w.wake();
        }
    }
}

/// What one connection's driver and handles share. `C` as in [`State`].
pub(crate) struct Shared<C: ?Sized = dyn Core> {
    pub(crate) name: Arc<str>,
    pub(crate) phase: watch::Sender<Phase>,
    /// How many notifications a stream holds before a slow reader lags.
    pub(crate) notification_capacity: usize,
    /// `None` once the session closed, which ends every notification stream.
    notifications: Mutex<Option<broadcast::Sender<Item>>>,
    /// The listed tools' compiled output schemas (dropped by the driver on
    /// `notifications/tools/list_changed`).
    pub(crate) output_schemas: crate::client::SchemaCache,
    /// Last, so that `Arc<Shared<C>>` coerces to `Arc<Shared<dyn Core>>` for the handles.
    pub(crate) state: Mutex<State<C>>,
}

impl<C> Shared<C> {
    pub(crate) fn new(name: Arc<str>, core: C, notification_capacity: usize) -> Arc<Self> {
        let (phase, _) = watch::channel(Phase::Handshaking);
        let (notifications, _) = broadcast::channel(notification_capacity.max(1));
        Arc::new(Shared {
            name,
            state: Mutex::new(State {
                core,
                calls: HashMap::default(),
                listens: HashMap::default(),
                handlers: CounterMap::default(),
                driver: None,
                exit: None,
                resource_holds: crate::subscription::ResourceHolds::default(),
            }),
            phase,
            notification_capacity: notification_capacity.max(1),
            notifications: Mutex::new(Some(notifications)),
            output_schemas: crate::client::SchemaCache::default(),
        })
    }
}

impl<C: ?Sized> Shared<C> {
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
    pub(crate) fn lock(&self) -> MutexGuard<'_, State<C>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
