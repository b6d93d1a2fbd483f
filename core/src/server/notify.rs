//! Notifications from the server to the client: the generic command and the ones the
//! server's capabilities gate (`list_changed`, `resources/updated`, log messages).

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::outgoing::Queued;
use super::{ServerSession, ServerState, UsageError};
use crate::jsonrpc::to_raw;
use crate::time::Instant;
use crate::types::LoggingLevel;

/// Which list changed, for [`ServerSession::notify_list_changed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListChanged {
    /// `notifications/tools/list_changed` (needs `tools.listChanged`).
    Tools,
    /// `notifications/resources/list_changed` (needs `resources.listChanged`).
    Resources,
    /// `notifications/prompts/list_changed` (needs `prompts.listChanged`).
    Prompts,
}

impl ListChanged {
    /// Its method on the wire.
    #[must_use]
    pub fn method(self) -> &'static str {
        match self {
            ListChanged::Tools => "notifications/tools/list_changed",
            ListChanged::Resources => "notifications/resources/list_changed",
            ListChanged::Prompts => "notifications/prompts/list_changed",
        }
    }
}

/// Notifications the session sends through their own commands.
const RESERVED: [&str; 5] = [
    "notifications/initialized",
    "notifications/subscriptions/acknowledged",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/message",
];

impl ServerSession {
    /// Sends a notification with raw params, once the client sent `initialize`. In the
    /// 2026-07-28 era the `list_changed` and `resources/updated` notifications go to the open
    /// listens that asked for them, each with its `subscriptionId` in `params._meta`
    /// (none asked: nothing is sent); see
    /// [`notify_list_changed`](Self::notify_list_changed).
    ///
    /// Errors: [`UsageError::NotInitialized`], [`UsageError::ReservedMethod`] for
    /// `notifications/cancelled`, `notifications/progress`, `notifications/message` and
    /// `notifications/initialized` (their own commands send them), [`UsageError::QueueFull`],
    /// [`UsageError::Closed`].
    pub fn notify(
        &mut self,
        now: Instant,
        method: impl Into<Cow<'static, str>>,
        params: Option<Box<RawValue>>,
    ) -> Result<(), UsageError> {
        let method = method.into();
        if RESERVED.contains(&&*method) {
            return Err(UsageError::ReservedMethod(method.into_owned()));
        }
        self.check_version(&method)?;
        if self.state == ServerState::PerRequest
            && !self.config.listens_by_host
            && let Some(wanted) = super::listen::wanted_by(&method, params.as_deref())
        {
            return self.deliver_to_listens(now, method, params.as_deref(), &wanted?);
        }
        self.queue_notification(now, method, params)
    }

    /// Tells the client a list changed. The server must have declared `listChanged` for it.
    /// In the 2026-07-28 era it goes to every open listen that asked for this list (with
    /// that listen's `subscriptionId`), and nowhere when none did.
    ///
    /// Errors: [`UsageError::CapabilityNotDeclared`], and those of [`notify`](Self::notify).
    pub fn notify_list_changed(
        &mut self,
        now: Instant,
        list: ListChanged,
    ) -> Result<(), UsageError> {
        let caps = &self.config.capabilities;
        let declared = match list {
            ListChanged::Tools => caps.tools.as_ref().and_then(|c| c.list_changed),
            ListChanged::Resources => caps.resources.as_ref().and_then(|c| c.list_changed),
            ListChanged::Prompts => caps.prompts.as_ref().and_then(|c| c.list_changed),
        };
        if declared != Some(true) {
            return Err(UsageError::CapabilityNotDeclared {
                method: list.method().to_owned(),
            });
        }
        if self.state == ServerState::PerRequest && !self.config.listens_by_host {
            let wanted = super::listen::Wanted::List(list);
            return self.deliver_to_listens(now, Cow::Borrowed(list.method()), None, &wanted);
        }
        self.queue_notification(now, Cow::Borrowed(list.method()), None)
    }

    /// Tells the client the resource `uri` changed (`notifications/resources/updated`). The
    /// server must have declared `resources.subscribe`. In the 2026-07-28 era it goes to
    /// every open listen that subscribed `uri` (or a resource it is part of), with that
    /// listen's `subscriptionId`, and nowhere when none did.
    ///
    /// Errors: [`UsageError::CapabilityNotDeclared`], and those of [`notify`](Self::notify).
    pub fn notify_resource_updated(&mut self, now: Instant, uri: &str) -> Result<(), UsageError> {
        #[derive(serde::Serialize)]
        struct Updated<'a> {
            uri: &'a str,
        }
        let method = "notifications/resources/updated";
        let subscribe = self
            .config
            .capabilities
            .resources
            .as_ref()
            .and_then(|r| r.subscribe);
        if subscribe != Some(true) {
            return Err(UsageError::CapabilityNotDeclared {
                method: method.to_owned(),
            });
        }
        let params =
            to_raw(&Updated { uri }).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        if self.state == ServerState::PerRequest && !self.config.listens_by_host {
            let wanted = super::listen::Wanted::Resource(uri.to_owned());
            return self.deliver_to_listens(now, Cow::Borrowed(method), Some(&params), &wanted);
        }
        self.queue_notification(now, Cow::Borrowed(method), Some(params))
    }

    /// Sends a log entry (`notifications/message`) unless it is below the level the client
    /// set with `logging/setLevel` (every level goes out until it sets one). Returns whether
    /// it was sent. The server must have declared `logging`. In the 2026 era a log entry
    /// belongs to a request (the client asks for one per request): nothing is sent here,
    /// use [`log_for`](Self::log_for).
    ///
    /// Errors: [`UsageError::CapabilityNotDeclared`], and those of [`notify`](Self::notify).
    pub fn log(
        &mut self,
        now: Instant,
        level: LoggingLevel,
        logger: Option<&str>,
        data: &RawValue,
    ) -> Result<bool, UsageError> {
        let threshold = match self.state {
            ServerState::PerRequest => None,
            _ => Some(self.log_level),
        };
        self.log_at(now, threshold, level, logger, data)
    }

    /// Sends a log entry about the client request `id`: in the 2026 era only when that
    /// request's envelope asked for log messages (`io.modelcontextprotocol/logLevel`) at
    /// `level` or below, as the spec requires; in the initialize era as [`log`](Self::log).
    /// Returns whether it was sent. Over HTTP, send it within
    /// [`related`](super::http::HttpServer::related) so it travels on that request's stream.
    ///
    /// Errors: [`UsageError::NotOpen`], and those of [`log`](Self::log).
    pub fn log_for(
        &mut self,
        now: Instant,
        id: super::ClientRequestId,
        level: LoggingLevel,
        logger: Option<&str>,
        data: &RawValue,
    ) -> Result<bool, UsageError> {
        let open = self
            .client_requests
            .get(id)
            .ok_or(UsageError::NotOpen(id))?;
        let threshold = if open.modern {
            // Absent: the client wants no log messages for this request.
            open.log_level.map(Some)
        } else {
            Some(self.log_level)
        };
        self.log_at(now, threshold, level, logger, data)
    }

    /// `threshold`: `None` sends nothing, `Some(None)` everything, `Some(Some(min))` what is
    /// at `min` or above.
    fn log_at(
        &mut self,
        now: Instant,
        threshold: Option<Option<LoggingLevel>>,
        level: LoggingLevel,
        logger: Option<&str>,
        data: &RawValue,
    ) -> Result<bool, UsageError> {
        #[derive(serde::Serialize)]
        struct Message<'a> {
            level: LoggingLevel,
            #[serde(skip_serializing_if = "Option::is_none")]
            logger: Option<&'a str>,
            data: &'a RawValue,
        }
        let method = "notifications/message";
        if self.config.capabilities.logging.is_none() {
            return Err(UsageError::CapabilityNotDeclared {
                method: method.to_owned(),
            });
        }
        match threshold {
            None => return Ok(false),
            Some(Some(min)) if level < min => return Ok(false),
            Some(_) => {}
        }
        let params = to_raw(&Message {
            level,
            logger,
            data,
        })
        .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        self.queue_notification(now, Cow::Borrowed(method), Some(params))?;
        Ok(true)
    }

    fn queue_notification(
        &mut self,
        now: Instant,
        method: Cow<'static, str>,
        params: Option<Box<RawValue>>,
    ) -> Result<(), UsageError> {
        self.check_room()?;
        if self.state == ServerState::AwaitingInitialize {
            return Err(UsageError::NotInitialized);
        }
        self.outbound
            .push_back(Queued::Notification { method, params });
        self.track_backlog(now);
        Ok(())
    }
}
