//! Progress passed on as another server wrote it: a bridge forwards its upstream server's
//! `notifications/progress` to its host with the host's token, and otherwise as written.

use serde_json::value::RawValue;

use super::{ClientRequestId, ServerSession, UsageError};
use crate::jsonrpc;
use crate::time::Instant;

impl ServerSession {
    /// Sends progress for the client's request `id` with `params`, the params of a
    /// `notifications/progress` as another server wrote them (a bridge's upstream: see the
    /// client session's progress event), with only its `progressToken` replaced by this
    /// request's token: the members keep their order and the numbers their spelling (`1`
    /// stays `1`), which [`notify_progress`](Self::notify_progress) cannot promise. Held to
    /// the same rules: the request is open and carried a token, `progress` increases, and
    /// `progress` and `total` are finite numbers.
    ///
    /// # Errors
    ///
    /// Those of [`notify_progress`](Self::notify_progress), and
    /// [`UsageError::InvalidParams`] when `params` is not an object with a numeric
    /// `progress`.
    pub fn notify_progress_as_written(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        params: &RawValue,
    ) -> Result<(), UsageError> {
        #[derive(serde::Deserialize)]
        struct Numbers {
            progress: f64,
            #[serde(default)]
            total: Option<f64>,
        }
        let invalid = |e: serde_json::Error| UsageError::InvalidParams(e.to_string());
        let Numbers { progress, total } = serde_json::from_str(params.get()).map_err(invalid)?;
        self.queue_progress(now, id, progress, total, |token| {
            let token = jsonrpc::to_raw(token).map_err(invalid)?;
            let text =
                jsonrpc::with_member(params.get(), "progressToken", &token).map_err(invalid)?;
            RawValue::from_string(text).map_err(invalid)
        })
    }
}
