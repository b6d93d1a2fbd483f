//! The 2026-07-28 hooks of [`Connection`]: `tools/list` filtering, the -32020 re-fetch, the
//! re-send after it, and the gap of a re-issued listen.

use crate::http::connection::Connection;
use crate::http::exchange::HttpEvent;
use crate::session::{self, RequestHandle, RequestOptions};
use crate::time::Instant;

impl Connection {
    /// 2026-07-28 bookkeeping on a session event: filter `tools/list` results (dropping tools
    /// with invalid annotations), re-send a call once its `tools/list` re-fetch finished,
    /// report the gap of a re-issued listen once it is acknowledged again.
    pub(crate) fn observe_modern(&mut self, now: Instant, ev: session::Event) -> session::Event {
        if let session::Event::SubscriptionAcknowledged { handle, .. } = &ev
            && let Some(since) = self.listen_breaks.remove(handle)
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
        self.listen_breaks.remove(&handle);
        self.header_retried.remove(&handle);
        self.reissued.remove(&handle);
        if let Some(i) = self.header_refetch.iter().position(|(l, _)| *l == handle) {
            let (_, call) = self.header_refetch.swap_remove(i);
            self.session.resend_request(call);
        }
        let result = match result {
            Ok(raw) if self.tool_lists.remove(&handle) => {
                let seen = self.tool_headers.observe_list(raw);
                for (name, reason) in seen.dropped {
                    self.emit(HttpEvent::ToolDropped { name, reason });
                }
                Ok(seen.result)
            }
            other => {
                self.tool_lists.remove(&handle);
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
            && self.header_retried.insert(h)
            && let Ok(list) =
                self.session
                    .send_request(now, "tools/list", None, RequestOptions::new())
        {
            self.internal.insert(list, "tools/list".to_owned());
            self.header_refetch.push((list, h));
            return true;
        }
        self.session.handle_message(now, body);
        !self.session.is_pending(h)
    }
}
