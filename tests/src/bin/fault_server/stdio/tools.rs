//! The tools of the stdio server: `tools/list`, and `tools/call` of the valid tools (`echo`,
//! `add`, `sleep`, `progress`) and of the faults, each named after its mode.

use std::time::{Duration, Instant};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::ClientRequestId;
use mcp_proto::types::{CallToolParams, ListToolsResult, PaginatedParams, Tool};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::Host;
use super::timers::Due;
use crate::faults::{Broken, Shape};
use crate::hostile;
use crate::options::Mode;
use crate::tools::{
    Answer, PROGRESS_STEPS, add, arg_u64, decode_params, echo, integer, progress_done,
    progress_numbers, text, to_result, tool, valid_tools,
};

/// How far apart `progress` reports its steps (and its answer after the last).
const PROGRESS_STEP: Duration = Duration::from_millis(10);

/// The answer to `tools/list`: every tool, or in `endless_pages` a page that never ends.
pub(super) fn list(mode: Mode, params: Option<&RawValue>) -> Answer {
    match mode {
        Mode::EndlessPages(per_page) => {
            let params: Option<PaginatedParams> = decode_params(params)?;
            let cursor = params.as_ref().and_then(|p| p.cursor.as_deref());
            to_result(&hostile::endless_page(cursor, per_page))
        }
        _ => to_result(&ListToolsResult {
            tools: every_tool(),
            ..ListToolsResult::default()
        }),
    }
}

/// The valid tools and one tool per fault.
fn every_tool() -> Vec<Tool> {
    let n = integer;
    let mut tools = valid_tools();
    tools.insert(2, tool("sleep", "Answers after ms", json!({"ms": n()})));
    tools.extend([
        tool(
            "crash_mid_request",
            "Exits with status 3 without answering",
            json!({}),
        ),
        tool("garbage", "Garbage lines around the answer", json!({})),
        tool(
            "huge_line",
            "A huge line, then the answer",
            json!({"mib": n()}),
        ),
        tool("silent", "Never answers", json!({})),
        tool("slow", "Answers after ms", json!({"ms": n()})),
        tool("twice", "Answers twice", json!({})),
        tool("unknown_ids", "Answers unknown ids first", json!({})),
        tool("close_stdout", "Closes stdout", json!({})),
        tool(
            "grandchild",
            "Leaves a grandchild holding stdout",
            json!({"stay": {"type": "boolean"}}),
        ),
        tool("ignore_sigterm", "Ignores SIGTERM from now on", json!({})),
        tool(
            "stderr_flood",
            "Floods stderr, then answers",
            json!({"mib": n()}),
        ),
        tool(
            "ping_flood",
            "Answers, then floods stdout with pings and stops reading",
            json!({"count": n()}),
        ),
        tool(
            "bad_utf8",
            "Answers with bytes that are not UTF-8",
            json!({}),
        ),
        tool("bad_json", "Answers with a cut-off line", json!({})),
        tool(
            "null_id_error",
            "Answers with an error whose id is null",
            json!({}),
        ),
    ]);
    tools
}

fn arg_mib(args: &Map<String, Value>, default: usize) -> usize {
    args.get("mib")
        .and_then(Value::as_u64)
        .and_then(|m| usize::try_from(m).ok())
        .unwrap_or(default)
}

impl Host {
    /// Handles one `tools/call`. `shape` is the mode's; a fault tool changes it for this
    /// answer only.
    pub(super) fn call_tool(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        params: Option<&RawValue>,
        mut shape: Shape,
    ) {
        let call: CallToolParams = match decode_params(params) {
            Ok(call) => call,
            Err(error) => return self.answer(now, id, Err(error), shape),
        };
        let args = call.arguments.unwrap_or_default();
        let name = call.name.as_str();
        if self.mode == Mode::CrashMidRequest || name == "crash_mid_request" {
            let wire_id = self.session.wire_id(id).cloned();
            // Invariant: the session handed `id` over just now and it is not answered yet.
            self.wire
                .crash(&wire_id.expect("an open request has a wire id"));
        }
        let answer = match name {
            "echo" => echo(&args),
            "add" => add(&args),
            "sleep" => {
                let ms = arg_u64(&args, "ms", 1000);
                return self.answer_later(
                    now,
                    id,
                    Duration::from_millis(ms),
                    text(format!("slept {ms} ms")),
                    shape,
                );
            }
            "progress" => {
                let steps = arg_u64(&args, "steps", PROGRESS_STEPS);
                return self.progress_step(now, id, 1, steps, shape);
            }
            "garbage" => {
                shape.garbage = true;
                text("garbage")
            }
            "huge_line" => {
                let mib = arg_mib(&args, 64);
                self.wire.huge_line(mib);
                text(format!("after a {mib} MiB line"))
            }
            "silent" => {
                shape.silent = true;
                text("silent")
            }
            "slow" => {
                shape.delay = Duration::from_millis(arg_u64(&args, "ms", 1000));
                text("slow")
            }
            "twice" => {
                shape.twice = true;
                text("twice")
            }
            "unknown_ids" => {
                shape.unknown_ids = true;
                text("after unknown ids")
            }
            "close_stdout" => {
                // No answer: there is nowhere to write it.
                return self.wire.close_stdout();
            }
            "grandchild" => {
                let stay = args.get("stay").and_then(Value::as_bool).unwrap_or(true);
                self.answer(now, id, text("grandchild"), shape);
                self.wire.grandchild();
                if !stay {
                    std::process::exit(0);
                }
                return;
            }
            "ignore_sigterm" => {
                self.wire.ignore_sigterm();
                text("SIGTERM ignored")
            }
            "stderr_flood" => {
                self.wire.stderr_flood(arg_mib(&args, 8));
                text("after a stderr flood")
            }
            "ping_flood" => {
                let count = arg_u64(&args, "count", 4_000_000);
                self.answer(now, id, text("flooding"), shape);
                return self.wire.ping_flood(count, &self.stop_reading);
            }
            "bad_utf8" => {
                shape.broken = Some(Broken::Utf8);
                text("bad_utf8")
            }
            "bad_json" => {
                shape.broken = Some(Broken::Json);
                text("bad_json")
            }
            "null_id_error" => {
                shape.broken = Some(Broken::NullIdError);
                text("null_id_error")
            }
            other => Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("unknown tool {other:?}"),
            )),
        };
        self.answer(now, id, answer, shape);
    }

    /// `sleep`: answers `id` after `after`, unless the client cancels it first.
    fn answer_later(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        after: Duration,
        answer: Answer,
        shape: Shape,
    ) {
        let (Some(wire_id), Ok(result)) = (self.session.wire_id(id).cloned(), answer) else {
            return self.log.event(&format!("{id} not answered later"));
        };
        let due = Due::Answer {
            id,
            wire_id,
            result,
            shape,
        };
        self.timers.add(now + after, due);
    }

    /// `progress`: step `step` of `steps` as `notifications/progress` (when the request has a
    /// progress token), the next one [`PROGRESS_STEP`] later, and the answer that long after
    /// the last.
    pub(super) fn progress_step(
        &mut self,
        now: Instant,
        id: ClientRequestId,
        step: u64,
        steps: u64,
        shape: Shape,
    ) {
        let done = progress_done(steps);
        if step > steps {
            return self.answer(now, id, done, shape);
        }
        let (progress, total) = progress_numbers(step, steps);
        let message = format!("step {step}");
        match self
            .session
            .notify_progress(now, id, progress, Some(total), Some(&message))
        {
            Ok(()) => self.flush(now, shape),
            // No token: the answer at once, as a tool without progress would.
            Err(mcp_proto::server::UsageError::NoProgressToken(_)) => {
                return self.answer(now, id, done, shape);
            }
            // Cancelled, or the session is closing: nothing more to report.
            Err(e) => return self.log.event(&format!("progress on {id} stopped: {e}")),
        }
        let next = Due::Progress {
            id,
            step: step + 1,
            steps,
            shape,
        };
        self.timers.add(now + PROGRESS_STEP, next);
    }
}
