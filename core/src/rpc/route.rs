//! The one routing of a framed input, shared by the client and the server sessions.
//!
//! Both sessions take input the same way: decode it once ([`jsonrpc::decode_reading_into`], which
//! reads a progress notification's params in the same pass); route a single message; where a
//! payload the shortcut only located turns out not to be JSON, ask serde's parse of the whole
//! input ([`jsonrpc::decode_general`]), which refuses it with its own diagnostic; route a batch
//! element by element, stopping as soon as the session is closed. What differs is how a
//! session routes a message and what it does with input that is not one (the client
//! salvages the answer it carries, the server answers with a JSON-RPC error): the
//! [`Router`] hooks.

use crate::jsonrpc::{self, DecodeError, DecodedRef, Input, MessageRef};
use crate::rpc::notifications::ProgressParams;
use crate::time::Instant;

/// A payload of the message failed its check ([`RawJson::check`](crate::jsonrpc::RawJson::check)):
/// the input is not a message after all, and nothing was routed. [`route_decoded`] then hands
/// the input to serde's parse, which refuses it with its own diagnostic.
pub(crate) struct InvalidPayload;

impl From<serde_json::Error> for InvalidPayload {
    fn from(_: serde_json::Error) -> Self {
        InvalidPayload
    }
}

/// What a session does with decoded input: the hooks of [`route_decoded`].
pub(crate) trait Router {
    /// Routes one message borrowed from the input; `progress` is the params of a progress
    /// notification the decoder read already (`msg` is then that notification). Returns
    /// [`InvalidPayload`], having routed nothing, when a payload it reads fails its check.
    fn route(
        &mut self,
        now: Instant,
        msg: MessageRef<'_>,
        progress: Option<ProgressParams>,
    ) -> Result<(), InvalidPayload>;

    /// The whole input is not a message (`e` says why).
    fn undecodable_input(&mut self, input: Input<'_>, e: DecodeError);

    /// One element of a batch is not a message.
    fn undecodable_element(&mut self, e: DecodeError);

    /// Whether the session is closed: the rest of a batch is then dropped.
    fn closed(&self) -> bool;
}

/// Decodes `input` once and routes it (see the module docs). The caller checks first that
/// the session is open.
// Inlined into each session's input method: the decoded message is routed in place.
#[inline(always)]
pub(crate) fn route_input<R: Router>(router: &mut R, now: Instant, input: Input<'_>) {
    let mut progress = None;
    let decoded = jsonrpc::decode_reading_into::<ProgressParams>(input, &mut progress);
    route_decoded(router, now, input, (decoded, progress));
}

/// Routes what `input` decoded to, and the progress params read with it (see
/// [`jsonrpc::decode_reading_into`]); `input` is read again only when a located payload turned out
/// not to be JSON.
#[inline(always)]
pub(crate) fn route_decoded<R: Router>(
    router: &mut R,
    now: Instant,
    input: Input<'_>,
    (decoded, progress): (Result<DecodedRef<'_>, DecodeError>, Option<ProgressParams>),
) {
    match decoded {
        Ok(DecodedRef::Single(msg)) => {
            if router.route(now, msg, progress).is_err() {
                // A located payload is not JSON: nothing was routed; serde's parse of the
                // input refuses it with its own diagnostic.
                match jsonrpc::decode_general(input) {
                    Err(e) => router.undecodable_input(input, e),
                    // Serde's parse validated every payload: routing cannot fail again.
                    Ok(DecodedRef::Single(msg)) => {
                        let _routed = router.route(now, msg, None);
                    }
                    Ok(_) => {}
                }
            }
        }
        Ok(DecodedRef::Batch(items)) => {
            for item in items {
                match item {
                    // The batch was validated whole: its payloads check.
                    Ok(msg) => {
                        let _routed = router.route(now, msg, None);
                    }
                    Err(e) => router.undecodable_element(e),
                }
                if router.closed() {
                    return;
                }
            }
        }
        Err(e) => router.undecodable_input(input, e),
    }
}
