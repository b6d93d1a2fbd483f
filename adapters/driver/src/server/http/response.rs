//! One HTTP response of a Streamable HTTP server, as the host's HTTP library reads it: the
//! head, then body chunks written as the session produces them, then the end. Dropping it
//! before the end tells the server the client went away.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use mcp_proto::http::headers::HeaderList;
use mcp_proto::server::http::ResponseId;
use tokio::sync::mpsc;

use super::conn;
use crate::server::state::Shared;

/// One piece of a response, in the order the core wrote it.
#[derive(Debug)]
pub(crate) enum Part {
    Head { status: u16, headers: HeaderList },
    Body(Vec<u8>),
    End,
}

/// The server's end of a response: where the driver writes what the core produced.
pub(crate) struct ResponseSink {
    pub(crate) tx: mpsc::UnboundedSender<Part>,
    /// Body bytes sent and not yet read by the host: bounded by the driver.
    pub(crate) unread: Arc<AtomicUsize>,
}

impl ResponseSink {
    /// Sends a part; `false` when the host dropped the response.
    pub(crate) fn send(&self, part: Part) -> bool {
        if let Part::Body(bytes) = &part {
            self.unread.fetch_add(bytes.len(), Ordering::Relaxed);
        }
        self.tx.send(part).is_ok()
    }
}

/// The response ended without its end: the server dropped it (the client read too slowly,
/// the server shut down). The host must abort the response (a truncated body must not look
/// complete to the client, which can then resume an SSE stream with `Last-Event-ID`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the MCP server dropped this response before its end")]
pub struct ResponseAborted;

/// One response to write: [`head`](Self::head) first, then [`chunk`](Self::chunk) until it
/// returns `Ok(None)`. SSE responses stay open while the session has messages for them: write
/// and flush each chunk as it comes.
///
/// Dropping it before the end is the client's disconnection: the server keeps a POST's
/// answers for resumption (stateful) or cancels its requests (stateless), and waits for the
/// next GET for its session's other messages.
pub struct HttpResponse {
    shared: Option<Arc<Shared>>,
    id: Option<ResponseId>,
    rx: mpsc::UnboundedReceiver<Part>,
    unread: Arc<AtomicUsize>,
    ended: bool,
}

impl std::fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpResponse")
            .field("id", &self.id)
            .field("ended", &self.ended)
            .finish_non_exhaustive()
    }
}

impl HttpResponse {
    /// A response the core writes under `id`, and its sink.
    pub(crate) fn open(shared: Arc<Shared>, id: ResponseId) -> (HttpResponse, ResponseSink) {
        let (tx, rx) = mpsc::unbounded_channel();
        let unread = Arc::new(AtomicUsize::new(0));
        let sink = ResponseSink {
            tx,
            unread: unread.clone(),
        };
        let response = HttpResponse {
            shared: Some(shared),
            id: Some(id),
            rx,
            unread,
            ended: false,
        };
        (response, sink)
    }

    /// A complete response made without the core (a path that is not the endpoint, a server
    /// shutting down): `status` and a plain text body.
    pub(crate) fn local(status: u16, text: &str) -> HttpResponse {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut headers = HeaderList::new();
        headers.insert("content-type", "text/plain; charset=utf-8");
        for part in [
            Part::Head { status, headers },
            Part::Body(text.as_bytes().to_vec()),
            Part::End,
        ] {
            // The receiver is alive: it is in the response made below.
            let _ = tx.send(part);
        }
        HttpResponse {
            shared: None,
            id: None,
            rx,
            unread: Arc::new(AtomicUsize::new(0)),
            ended: false,
        }
    }

    /// The response's token in the core (`None` for a response made without it).
    #[must_use]
    pub fn id(&self) -> Option<ResponseId> {
        self.id
    }

    /// The status and header fields; comes before any body chunk.
    ///
    /// # Errors
    ///
    /// [`ResponseAborted`] when the server dropped the response before its head (it shut
    /// down).
    pub async fn head(&mut self) -> Result<(u16, HeaderList), ResponseAborted> {
        std::future::poll_fn(|cx| self.poll_head(cx)).await
    }

    /// Polls for the head: see [`head`](Self::head).
    ///
    /// # Errors
    ///
    /// [`ResponseAborted`].
    pub fn poll_head(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(u16, HeaderList), ResponseAborted>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(Part::Head { status, headers })) => Poll::Ready(Ok((status, headers))),
            // The core writes the head first; anything else means the response is broken.
            Poll::Ready(_) => Poll::Ready(Err(ResponseAborted)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// The next body chunk; `Ok(None)` at the end of the response.
    ///
    /// # Errors
    ///
    /// [`ResponseAborted`] when the server dropped the response before its end.
    pub async fn chunk(&mut self) -> Result<Option<Vec<u8>>, ResponseAborted> {
        std::future::poll_fn(|cx| self.poll_chunk(cx)).await
    }

    /// Polls for the next body chunk: see [`chunk`](Self::chunk).
    ///
    /// # Errors
    ///
    /// [`ResponseAborted`].
    pub fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Vec<u8>>, ResponseAborted>> {
        if self.ended {
            return Poll::Ready(Ok(None));
        }
        loop {
            return match self.rx.poll_recv(cx) {
                Poll::Ready(Some(Part::Body(bytes))) => {
                    self.unread.fetch_sub(bytes.len(), Ordering::Relaxed);
                    if bytes.is_empty() {
                        continue;
                    }
                    Poll::Ready(Ok(Some(bytes)))
                }
                Poll::Ready(Some(Part::End)) => {
                    self.ended = true;
                    Poll::Ready(Ok(None))
                }
                // A second head cannot come; skip it rather than fail the body.
                Poll::Ready(Some(Part::Head { .. })) => continue,
                Poll::Ready(None) => Poll::Ready(Err(ResponseAborted)),
                Poll::Pending => Poll::Pending,
            };
        }
    }
}

impl Drop for HttpResponse {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let (Some(shared), Some(id)) = (self.shared.take(), self.id) {
            let now = shared.now();
            let mut state = shared.lock();
            conn(&mut state).response_closed(now, id);
            state.wake_driver();
        }
    }
}
