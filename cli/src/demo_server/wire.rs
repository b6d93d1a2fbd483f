//! The outgoing half of the demo server: one writer thread and the payloads the core does not
//! type (progress, cancellation, elicitation).

use std::io::{self, Write};
use std::sync::mpsc;
use std::thread;

use mcp_proto::framing::lines::encode_line;
use mcp_proto::jsonrpc::{
    ErrorObject, Id, encode_error, encode_notification, encode_request, encode_response, to_raw,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `notifications/progress` params (the core has no typed struct for them).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProgressParams {
    pub progress_token: Value,
    pub progress: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `notifications/cancelled` params.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelledParams {
    pub request_id: Option<Id>,
    #[serde(default)]
    pub reason: Option<String>,
}

/// `elicitation/create` params in form mode.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ElicitParams {
    /// Only sent to 2025-11-25 clients: older schemas have no `mode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    pub message: String,
    pub requested_schema: Value,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ElicitResult {
    pub action: String,
    #[serde(default)]
    pub content: Option<Map<String, Value>>,
}

/// A cloneable handle that queues whole lines for the writer thread.
///
/// Every message becomes one `\n`-terminated line, so concurrent senders never interleave bytes.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::Sender<Vec<u8>>,
}

impl Outbox {
    /// Starts the writer thread over `output`; it ends when every `Outbox` clone is dropped.
    pub fn spawn<W: Write + Send + 'static>(
        mut output: W,
    ) -> (Outbox, thread::JoinHandle<io::Result<()>>) {
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let writer = thread::spawn(move || {
            for line in rx {
                output.write_all(&line)?;
                output.flush()?;
            }
            Ok(())
        });
        (Outbox { tx }, writer)
    }

    fn send(&self, message: &[u8]) {
        let mut line = Vec::with_capacity(message.len() + 1);
        encode_line(&mut line, message);
        // A closed writer means stdout is gone; there is nobody left to tell.
        let _ = self.tx.send(line);
    }

    /// Sends a successful response serialized from a typed result.
    pub fn respond<T: Serialize>(&self, id: &Id, result: &T) {
        match to_raw(result) {
            Ok(raw) => {
                let mut out = Vec::new();
                encode_response(&mut out, id, &raw);
                self.send(&out);
            }
            Err(e) => self.error(
                Some(id),
                &ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()),
            ),
        }
    }

    /// Sends an error response; `None` is the null id of a parse error.
    pub fn error(&self, id: Option<&Id>, error: &ErrorObject) {
        let mut out = Vec::new();
        encode_error(&mut out, id, error);
        self.send(&out);
    }

    /// Sends a notification.
    pub fn notify<T: Serialize>(&self, method: &str, params: &T) {
        if let Ok(raw) = to_raw(params) {
            let mut out = Vec::new();
            encode_notification(&mut out, method, Some(&raw));
            self.send(&out);
        }
    }

    /// Sends a server-to-client request.
    pub fn request<T: Serialize>(&self, id: &Id, method: &str, params: &T) {
        if let Ok(raw) = to_raw(params) {
            let mut out = Vec::new();
            encode_request(&mut out, id, method, Some(&raw));
            self.send(&out);
        }
    }
}
