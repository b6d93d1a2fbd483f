//! The 2026-07-28 hooks of [`Connection`]: `tools/list` filtering, the -32020 re-fetch, the
//! re-send after it, and the gap of a re-issued listen.

use crate::http::connection::Connection;
use crate::http::exchange::HttpEvent;
use crate::session::{self, CounterMap, CounterSet, RequestHandle, RequestOptions};
use crate::time::Instant;

/// The 2026-07-28 bookkeeping of one HTTP connection, per request handle: which `tools/list`
/// results to filter, which calls were retried after -32020 and the re-fetches they wait on,
/// which requests were re-issued after their stream broke, and the connection's own requests.
#[derive(Debug, Default)]
pub(crate) struct ModernRequests {
    /// `tools/list` requests whose results are filtered.
    tool_lists: CounterSet<RequestHandle>,
    /// `tools/call`s already retried after -32020.
    header_retried: CounterSet<RequestHandle>,
    /// Re-fetches of `tools/list` and the call to re-send after each.
    header_refetch: Vec<(RequestHandle, RequestHandle)>,
    /// Requests re-issued after their stream broke.
    reissued: CounterSet<RequestHandle>,
    /// Re-issued listens not yet acknowledged again, and when their stream broke.
    listen_breaks: CounterMap<RequestHandle, Instant>,
    /// The connection's own requests (the `tools/list` re-fetches) and their methods.
    own: CounterMap<RequestHandle, String>,
}

impl ModernRequests {
    /// `handle` is a `tools/list`: its result is filtered (tools with invalid annotations
    /// dropped) and its bindings remembered.
    pub(crate) fn note_tool_list(&mut self, handle: RequestHandle) {
        self.tool_lists.insert(handle);
    }

    /// Whether `handle` may be re-issued after its stream broke: `true` the first time only.
    pub(crate) fn reissue_once(&mut self, handle: RequestHandle) -> bool {
        self.reissued.insert(handle)
    }

    /// The stream of listen `handle` broke at `at`: its notifications are lost until the
    /// server acknowledges it again.
    pub(crate) fn note_listen_break(&mut self, handle: RequestHandle, at: Instant) {
        self.listen_breaks.insert(handle, at);
    }

    /// If `handle` is one of the connection's own requests, forgets it and returns its method.
    pub(crate) fn take_own(&mut self, handle: RequestHandle) -> Option<String> {
        self.own.remove(&handle)
    }
}

impl Connection {
    /// 2026-07-28 bookkeeping on a session event: filter `tools/list` results (dropping tools
    /// with invalid annotations), re-send a call once its `tools/list` re-fetch finished,
    /// report the gap of a re-issued listen once it is acknowledged again.
    pub(crate) fn observe_modern(&mut self, now: Instant, ev: session::Event) -> session::Event {
        if let session::Event::SubscriptionAcknowledged { handle, .. } = &ev
            && let Some(since) = self.modern.listen_breaks.remove(handle)
        {
            self.emit(HttpEvent::ListenResumed {
                handle: *handle,
                since,
                until: now,
            });
        }
        let session::Event::Completed { handle, result } = ev else {
            return ev;
        };
        self.modern.listen_breaks.remove(&handle);
        self.modern.header_retried.remove(&handle);
        self.modern.reissued.remove(&handle);
        if let Some(i) = self
            .modern
            .header_refetch
            .iter()
            .position(|(l, _)| *l == handle)
        {
            let (_, call) = self.modern.header_refetch.swap_remove(i);
            self.session.resend_request(call);
        }
        let result = match result {
            Ok(raw) if self.modern.tool_lists.remove(&handle) => {
                let seen = self.identity.tool_headers_mut().observe_list(raw);
                for (name, reason) in seen.dropped {
                    self.emit(HttpEvent::ToolDropped { name, reason });
                }
                Ok(seen.result)
            }
            other => {
                self.modern.tool_lists.remove(&handle);
                other
            }
        };
        session::Event::Completed { handle, result }
    }

    /// A 2026-07-28 error body (HTTP 400 and the like) to request `h`: -32020 to a
    /// `tools/call` re-fetches `tools/list` and re-sends the call once; any other JSON-RPC
    /// error for it goes to the session. Returns whether the request was dealt with.
    pub(crate) fn modern_error_body(
        &mut self,
        now: Instant,
        h: RequestHandle,
        body: &[u8],
    ) -> bool {
        let Ok(crate::jsonrpc::DecodedRef::Single(crate::jsonrpc::MessageRef::Error {
            id: Some(id),
            error,
        })) = crate::jsonrpc::decode(body)
        else {
            return false;
        };
        if id.as_u64().and_then(|w| self.session.request_for_wire(w)) != Some(h) {
            return false;
        }
        if error.code == crate::types::v2026::HEADER_MISMATCH
            && self.session.pending_method(h) == Some("tools/call")
            && self.modern.header_retried.insert(h)
            && let Ok(list) =
                self.session
                    .send_request(now, "tools/list", None, RequestOptions::new())
        {
            self.modern.own.insert(list, "tools/list".to_owned());
            self.modern.header_refetch.push((list, h));
            return true;
        }
        self.session.handle_message(now, body);
        !self.session.is_pending(h)
    }
}
