//! One HTTP response of a Streamable HTTP server, as the host's HTTP library reads it: the
//! head, then body chunks written as the session produces them, then the end. Dropping it
//! before the end tells the server the client went away.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use mcp_proto::http::headers::HeaderList;
use mcp_proto::server::http::ResponseId;

use super::conn;
use crate::server::state::Shared;

/// One piece of a response, in the order the core wrote it.
#[derive(Debug)]
pub(crate) enum Part {
    Head { status: u16, headers: HeaderList },
    Body(Vec<u8>),
    End,
}

/// What lies between the driver and the host's HTTP library for one response: the parts
/// written and not yet read, and how the response stands.
#[derive(Debug, Default)]
struct Pipe {
    parts: VecDeque<Part>,
    /// Body bytes written and not yet read by the host: bounded by the driver.
    unread: usize,
    /// The driver let go of the response: after what is queued, it ends without its end.
    released: bool,
    /// The driver gave up on the response (its client reads too slowly): what was queued is
    /// freed at once and the host's next read fails.
    aborted: bool,
    /// The host dropped the response.
    dropped: bool,
    /// The host's reader, woken when something comes.
    reader: Option<Waker>,
}

/// The pipe's lock: nothing panics while holding it, and its state stays whole if a reader
/// did.
fn lock(pipe: &Mutex<Pipe>) -> MutexGuard<'_, Pipe> {
    pipe.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's end of a response: where the driver writes what the core produced.
pub(crate) struct ResponseSink {
    pipe: Arc<Mutex<Pipe>>,
}

impl ResponseSink {
    /// Sends a part; `false` when the host dropped the response.
    pub(crate) fn send(&self, part: Part) -> bool {
        let mut pipe = lock(&self.pipe);
        if pipe.dropped {
            return false;
        }
        if let Part::Body(bytes) = &part {
            pipe.unread = pipe.unread.saturating_add(bytes.len());
        }
        pipe.parts.push_back(part);
        if let Some(reader) = pipe.reader.take() {
            reader.wake();
        }
        true
    }

    /// Body bytes sent and not yet read by the host.
    pub(crate) fn unread(&self) -> usize {
        lock(&self.pipe).unread
    }

    /// Gives up on the response: what the host has not read is freed now (a client that
    /// stopped reading must not hold it until its connection ends) and the response is
    /// aborted.
    pub(crate) fn abort(self) {
        let mut pipe = lock(&self.pipe);
        pipe.aborted = true;
        pipe.parts = VecDeque::new();
        pipe.unread = 0;
        // `Drop` wakes the reader.
    }
}

impl Drop for ResponseSink {
    fn drop(&mut self) {
        let mut pipe = lock(&self.pipe);
        pipe.released = true;
        if let Some(reader) = pipe.reader.take() {
            reader.wake();
        }
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
    pipe: Arc<Mutex<Pipe>>,
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
        let pipe = Arc::new(Mutex::new(Pipe::default()));
        let sink = ResponseSink { pipe: pipe.clone() };
        let response = HttpResponse {
            shared: Some(shared),
            id: Some(id),
            pipe,
            ended: false,
        };
        (response, sink)
    }

    /// A complete response made without the core (a path that is not the endpoint, a server
    /// shutting down): `status` and a plain text body.
    pub(crate) fn local(status: u16, text: &str) -> HttpResponse {
        let mut headers = HeaderList::new();
        headers.insert("content-type", "text/plain; charset=utf-8");
        let pipe = Pipe {
            parts: VecDeque::from([
                Part::Head { status, headers },
                Part::Body(text.as_bytes().to_vec()),
                Part::End,
            ]),
            released: true,
            ..Pipe::default()
        };
        HttpResponse {
            shared: None,
            id: None,
            pipe: Arc::new(Mutex::new(pipe)),
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
        match self.next_part(cx) {
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
            return match self.next_part(cx) {
                Poll::Ready(Some(Part::Body(bytes))) => {
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

impl HttpResponse {
    /// The next part written; `None` once the driver let go of the response (or gave up on
    /// it) and nothing is left to read.
    fn next_part(&mut self, cx: &mut Context<'_>) -> Poll<Option<Part>> {
        let mut pipe = lock(&self.pipe);
        if pipe.aborted {
            return Poll::Ready(None);
        }
        if let Some(part) = pipe.parts.pop_front() {
            if let Part::Body(bytes) = &part {
                pipe.unread = pipe.unread.saturating_sub(bytes.len());
            }
            return Poll::Ready(Some(part));
        }
        if pipe.released {
            return Poll::Ready(None);
        }
        if !pipe
            .reader
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            pipe.reader = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl Drop for HttpResponse {
    fn drop(&mut self) {
        {
            let mut pipe = lock(&self.pipe);
            pipe.dropped = true;
            // Nobody reads them any more.
            pipe.parts = VecDeque::new();
        }
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
