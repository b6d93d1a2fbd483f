//! Server-to-client requests, one descriptor per method. The routing of a server request
//! (`dispatch`) and of the entries of a 2026-07-28 multi-round `inputRequests` (`mrtr`) reads
//! this table and no method names of its own.
//!
//! A descriptor says, for one method: its typed [`Request`] (each row is built from one, so
//! the method name comes from `R::METHOD` and the answerer decodes `R::Params`), who answers
//! it (the session itself, or the host through
//! [`Event::ServerRequest`](super::Event::ServerRequest)), the client capability that must be
//! declared, whether request deadlines pause while it is open (a human answers it), whether
//! it may be an entry of a multi-round `inputRequests`, and whether it may run as a task
//! (2025-11-25 `params.task`, when declared in `tasks.requests`; such a method may also carry
//! the related-task `_meta` of a server task).
//!
//! Adding a kind: its `Request` type in `types/`, one descriptor here, and, when the session
//! answers it itself, its handler.

use crate::types::{
    CancelTask, ClientCapabilities, CreateMessage, Elicit, GetTask, GetTaskPayload, ListRoots,
    ListTasks, Ping, Request, TaskRequestsCapability,
};

/// Who answers a server request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answerer {
    /// The session answers `{}` at once (`ping`).
    Pong,
    /// The session answers from its task table (the client as a task receiver).
    TaskTable(TaskQuery),
    /// The host answers with [`Session::respond`](super::Session::respond).
    Host,
}

/// The task-table queries a server may make of a client that declared `tasks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskQuery {
    /// `tasks/get`.
    Get,
    /// `tasks/result` (held until the task ends).
    Result,
    /// `tasks/list`.
    List,
    /// `tasks/cancel`.
    Cancel,
}

impl TaskQuery {
    /// Its method on the wire.
    pub(crate) fn method(self) -> &'static str {
        match self {
            TaskQuery::Get => GetTask::METHOD,
            TaskQuery::Result => GetTaskPayload::METHOD,
            TaskQuery::List => ListTasks::METHOD,
            TaskQuery::Cancel => CancelTask::METHOD,
        }
    }
}

/// Everything the session needs to know to route one server-to-client method.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerRequestKind {
    /// The method on the wire: `R::METHOD` of the typed [`Request`] its row is built from,
    /// whose `R::Params` is the type its answerer decodes (the host, or the session's
    /// handler for the ones it answers).
    pub(crate) method: &'static str,
    /// Who answers it.
    pub(crate) answerer: Answerer,
    /// Whether the host declared the capability it needs; undeclared, it is refused with
    /// -32601 (and refused as an input request).
    pub(crate) declared: fn(&ClientCapabilities) -> bool,
    /// Whether request deadlines pause while it is open (a human answers it).
    pub(crate) pauses_deadlines: bool,
    /// Whether it may be an entry of a 2026-07-28 `inputRequests` (multi-round).
    pub(crate) input_request: bool,
    /// `Some` when it may run as a task: whether `tasks.requests` declares it. Such a method
    /// is also the one whose `_meta` may name the server task it belongs to.
    pub(crate) runs_as_task: Option<fn(&TaskRequestsCapability) -> bool>,
}

impl ServerRequestKind {
    /// A descriptor for `R`, answered by `answerer`, needing what `declared` checks; no
    /// deadline pause, no multi-round, no task (set those fields where they apply).
    fn of<R: Request>(
        answerer: Answerer,
        declared: fn(&ClientCapabilities) -> bool,
    ) -> ServerRequestKind {
        ServerRequestKind {
            method: R::METHOD,
            answerer,
            declared,
            pauses_deadlines: false,
            input_request: false,
            runs_as_task: None,
        }
    }

    /// Whether the task-augmented form of this method runs as a task for a host that
    /// declared `capabilities`.
    pub(crate) fn accepted_as_task(&self, capabilities: &ClientCapabilities) -> bool {
        let requests = capabilities
            .tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref());
        match (self.runs_as_task, requests) {
            (Some(declared), Some(requests)) => declared(requests),
            _ => false,
        }
    }
}

fn always(_: &ClientCapabilities) -> bool {
    true
}

fn tasks(c: &ClientCapabilities) -> bool {
    c.tasks.is_some()
}

fn task_query<R: Request>(query: TaskQuery) -> ServerRequestKind {
    ServerRequestKind::of::<R>(Answerer::TaskTable(query), tasks)
}

/// Every server-to-client method the client knows.
fn table() -> [ServerRequestKind; 8] {
    [
        ServerRequestKind::of::<Ping>(Answerer::Pong, always),
        ServerRequestKind {
            input_request: true,
            ..ServerRequestKind::of::<ListRoots>(Answerer::Host, |c| c.roots.is_some())
        },
        ServerRequestKind {
            pauses_deadlines: true,
            input_request: true,
            runs_as_task: Some(TaskRequestsCapability::sampling_create_message),
            ..ServerRequestKind::of::<CreateMessage>(Answerer::Host, |c| c.sampling.is_some())
        },
        ServerRequestKind {
            pauses_deadlines: true,
            input_request: true,
            runs_as_task: Some(TaskRequestsCapability::elicitation_create),
            ..ServerRequestKind::of::<Elicit>(Answerer::Host, |c| c.elicitation.is_some())
        },
        task_query::<GetTask>(TaskQuery::Get),
        task_query::<GetTaskPayload>(TaskQuery::Result),
        task_query::<ListTasks>(TaskQuery::List),
        task_query::<CancelTask>(TaskQuery::Cancel),
    ]
}

/// The descriptors, built once.
static SERVER_REQUESTS: std::sync::LazyLock<[ServerRequestKind; 8]> =
    std::sync::LazyLock::new(table);

/// The descriptor of `method`, if the client knows it.
pub(crate) fn kind_of(method: &str) -> Option<&'static ServerRequestKind> {
    SERVER_REQUESTS.iter().find(|k| k.method == method)
}

/// Every method of the table, in its order (for the fuzz targets, which send each kind).
#[cfg(any(test, fuzzing))]
pub(crate) fn methods() -> impl Iterator<Item = &'static str> {
    SERVER_REQUESTS.iter().map(|k| k.method)
}

/// Whether request deadlines pause while a `method` request is open.
pub(crate) fn pauses_deadlines(method: &str) -> bool {
    kind_of(method).is_some_and(|k| k.pauses_deadlines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ElicitationCapability, RootsCapability, SamplingCapability};

    #[test]
    fn every_method_has_one_descriptor() {
        let mut methods: Vec<_> = SERVER_REQUESTS.iter().map(|k| k.method).collect();
        methods.sort_unstable();
        let before = methods.len();
        methods.dedup();
        assert_eq!(methods.len(), before, "a method listed twice");
        assert!(kind_of("tools/call").is_none(), "a client-to-server method");
    }

    #[test]
    fn capabilities_gate_each_kind() {
        let none = ClientCapabilities::default();
        let all = ClientCapabilities {
            roots: Some(RootsCapability::default()),
            sampling: Some(SamplingCapability::default()),
            elicitation: Some(ElicitationCapability::default()),
            tasks: Some(Default::default()),
            ..ClientCapabilities::default()
        };
        for kind in SERVER_REQUESTS.iter() {
            let always = kind.answerer == Answerer::Pong;
            assert_eq!((kind.declared)(&none), always, "{}", kind.method);
            assert!((kind.declared)(&all), "{}", kind.method);
            assert!(
                !kind.input_request || kind.answerer == Answerer::Host,
                "{}",
                kind.method
            );
        }
        // method: (pauses deadlines, input request, may run as a task)
        for (method, expected) in [
            ("ping", (false, false, false)),
            ("roots/list", (false, true, false)),
            ("sampling/createMessage", (true, true, true)),
            ("elicitation/create", (true, true, true)),
            ("tasks/get", (false, false, false)),
            ("tasks/result", (false, false, false)),
            ("tasks/list", (false, false, false)),
            ("tasks/cancel", (false, false, false)),
        ] {
            let k = kind_of(method).expect(method);
            let got = (
                k.pauses_deadlines,
                k.input_request,
                k.runs_as_task.is_some(),
            );
            assert_eq!(got, expected, "{method}");
        }
        assert!(!pauses_deadlines("no/such"));
    }
}
