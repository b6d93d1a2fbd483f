//! Idle HTTP/1.1 connections kept for the next exchange to the same origin.
//!
//! A connection goes back to the pool when a response body was read to its end (hyper then
//! has the connection idle and ready for another request), and is dropped, closing it, when a
//! body is dropped or fails part-way, when the server closed it, or after [`IDLE_TIMEOUT`]
//! unused. At most [`MAX_IDLE_PER_ORIGIN`] wait per origin; an exchange that finds none opens
//! a new connection, so concurrent exchanges (the GET stream beside POSTs) each have their own.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::Stream;
use futures_util::future::AbortHandle;
use futures_util::stream::BoxStream;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use mcp_driver::mcp_proto::http::ExchangeFailure;
use url::Url;

/// How long an idle connection is kept. Servers close idle connections themselves (Node's
/// default after 5 s, uvicorn's after 5 s); the connection's task notices the close and the
/// pool then skips it, so this bounds only connections to servers that never close them.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How many idle connections one origin keeps at most: an MCP client rarely has more than a
/// few exchanges in flight to one server.
const MAX_IDLE_PER_ORIGIN: usize = 8;

/// How long a pooled connection may take to report itself ready (it is normally at once).
const READY_TIMEOUT: Duration = Duration::from_secs(1);

/// Scheme, host and port: connections are shared only within one.
pub(crate) type Origin = (String, String, u16);

/// The origin of `url`.
pub(crate) fn origin_of(url: &Url) -> Origin {
    (
        url.scheme().to_owned(),
        url.host_str().unwrap_or_default().to_owned(),
        url.port_or_known_default().unwrap_or(80),
    )
}

/// Aborts the connection's task when dropped, closing the connection.
pub(crate) struct AbortOnDrop(pub(crate) AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One connection: the handle to send on, and the guard of its task.
pub(crate) struct Connection {
    pub(crate) sender: SendRequest<Full<Bytes>>,
    /// Held for its drop, which closes the connection.
    pub(crate) _guard: AbortOnDrop,
}

struct Idle {
    connection: Connection,
    since: Instant,
}

/// The idle connections of one client, by origin.
#[derive(Clone, Default)]
pub(crate) struct Pool {
    idle: Arc<Mutex<HashMap<Origin, Vec<Idle>>>>,
}

impl Pool {
    /// The most recently idle connection to `origin` that is still open and ready, if any.
    /// Closed and expired ones met on the way are dropped.
    pub(crate) async fn take(&self, origin: &Origin) -> Option<Connection> {
        loop {
            let idle = {
                let mut map = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
                let list = map.get_mut(origin)?;
                let idle = list.pop();
                if list.is_empty() {
                    map.remove(origin);
                }
                idle?
            };
            let Idle {
                mut connection,
                since,
            } = idle;
            if connection.sender.is_closed() || since.elapsed() > IDLE_TIMEOUT {
                continue;
            }
            let ready =
                smol::future::or(async { connection.sender.ready().await.is_ok() }, async {
                    smol::Timer::after(READY_TIMEOUT).await;
                    false
                });
            if ready.await {
                return Some(connection);
            }
        }
    }

    /// Keeps `connection` for the next exchange to `origin`, unless it is closed or the
    /// origin has enough idle ones (then it is dropped, closing it).
    fn put(&self, origin: Origin, connection: Connection) {
        if connection.sender.is_closed() {
            return;
        }
        let mut map = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let list = map.entry(origin).or_default();
        if list.len() < MAX_IDLE_PER_ORIGIN {
            list.push(Idle {
                connection,
                since: Instant::now(),
            });
        }
    }
}

/// A response body that owns its connection: read to the end, the connection goes back to
/// the pool; dropped or failed before the end, the connection is closed.
pub(crate) struct PooledBody {
    inner: BoxStream<'static, Result<Vec<u8>, ExchangeFailure>>,
    lease: Option<(Pool, Origin, Connection)>,
}

impl PooledBody {
    pub(crate) fn new(
        inner: BoxStream<'static, Result<Vec<u8>, ExchangeFailure>>,
        pool: Pool,
        origin: Origin,
        connection: Connection,
    ) -> Self {
        Self {
            inner,
            lease: Some((pool, origin, connection)),
        }
    }
}

impl Stream for PooledBody {
    type Item = Result<Vec<u8>, ExchangeFailure>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let item = std::task::ready!(self.inner.as_mut().poll_next(cx));
        match &item {
            None => {
                if let Some((pool, origin, connection)) = self.lease.take() {
                    pool.put(origin, connection);
                }
            }
            // A failed body leaves the connection in no state to reuse.
            Some(Err(_)) => self.lease = None,
            Some(Ok(_)) => {}
        }
        Poll::Ready(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let o = |u: &str| origin_of(&Url::parse(u).unwrap());
        assert_eq!(o("http://a/x"), o("http://a:80/y?q"));
        assert_ne!(o("http://a/"), o("https://a/"));
        assert_ne!(o("http://a:8080/"), o("http://a/"));
        assert_ne!(o("http://a/"), o("http://b/"));
        assert_eq!(o("https://a/").2, 443);
    }

    #[test]
    fn an_empty_pool_has_nothing_to_give() {
        let pool = Pool::default();
        let origin = origin_of(&Url::parse("http://127.0.0.1:1/").unwrap());
        assert!(smol::block_on(pool.take(&origin)).is_none());
    }
}
