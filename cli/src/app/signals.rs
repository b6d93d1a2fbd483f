//! The signals that stop `mcp`: SIGINT (Ctrl-C), SIGTERM and SIGHUP, all with one shutdown.
//!
//! [`StopSignals::listen`] replaces the default action of the three signals (die at once,
//! leaving a stdio server behind) with delivery to [`StopSignals::recv`]. The caller then
//! drops the running work (a call in flight is cancelled at the server), closes the
//! connection and exits with 128 + the signal's number (see [`crate::exit`]).

use crate::exit::{CliError, StopSignal};

/// The three stop signals, listened to from the start of a run.
#[derive(Debug)]
pub struct StopSignals {
    #[cfg(unix)]
    streams: [(Option<tokio::signal::unix::Signal>, Stop); 3],
}

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Interrupt,
    Other(StopSignal),
}

impl StopSignals {
    /// Starts listening. Call it inside the runtime before any server is started: from then on
    /// these signals no longer end the process by themselves, so none arriving later can
    /// leave the server behind. A signal that cannot be watched keeps its default action.
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let watch = |kind| signal(kind).ok();
            StopSignals {
                streams: [
                    (watch(SignalKind::interrupt()), Stop::Interrupt),
                    (
                        watch(SignalKind::terminate()),
                        Stop::Other(StopSignal::Terminate),
                    ),
                    (watch(SignalKind::hangup()), Stop::Other(StopSignal::Hangup)),
                ],
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Waits for the next stop signal and returns the error it ends the run with
    /// ([`CliError::Interrupted`] for Ctrl-C, [`CliError::Stopped`] for the others). Never
    /// resolves when no signal can be watched. Cancel-safe.
    pub async fn recv(&mut self) -> CliError {
        match self.next().await {
            Stop::Interrupt => CliError::Interrupted,
            Stop::Other(signal) => CliError::Stopped(signal),
        }
    }

    /// Like [`recv`](Self::recv), but Ctrl-C is left to the caller: a SIGINT that arrives
    /// meanwhile is consumed here and ignored, so it cannot stop a later `recv` (for `mcp
    /// shell`, whose Ctrl-C cancels one command). Resolves on SIGTERM or SIGHUP.
    pub async fn recv_terminating(&mut self) -> CliError {
        loop {
            if let Stop::Other(signal) = self.next().await {
                return CliError::Stopped(signal);
            }
        }
    }

    /// Waits for Ctrl-C (SIGINT) after a first stop signal: someone at the terminal asking
    /// to stop at once rather than let the clean stop finish. SIGTERM and SIGHUP arriving
    /// meanwhile are consumed and ignored: processes send them, not people, and one event
    /// can send two (a stdio server whose client dies gets SIGTERM from the kernel's
    /// parent-death signal and again from the client's group watchdog, see
    /// `mcp_driver::process`, often far enough apart that both are seen); taking the second
    /// for a repeat would cut short the clean stop the first one began. The caller bounds
    /// that stop itself (a grace), and a process that means "now" sends SIGKILL (the
    /// watchdog does). Cancel-safe.
    pub async fn recv_interrupt(&mut self) -> CliError {
        loop {
            match self.next().await {
                Stop::Interrupt => return CliError::Interrupted,
                Stop::Other(signal) => {
                    tracing::debug!("{}: already stopping", signal.name());
                }
            }
        }
    }

    #[cfg(unix)]
    async fn next(&mut self) -> Stop {
        std::future::poll_fn(|cx| {
            for (stream, stop) in &mut self.streams {
                if let Some(s) = stream
                    && let std::task::Poll::Ready(got) = s.poll_recv(cx)
                {
                    if got.is_some() {
                        return std::task::Poll::Ready(*stop);
                    }
                    // The runtime's signal driver is gone: this one is no longer watched.
                    *stream = None;
                }
            }
            std::task::Poll::Pending
        })
        .await
    }

    #[cfg(not(unix))]
    async fn next(&mut self) -> Stop {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        Stop::Interrupt
    }
}

/// What `mcp` says on stderr when `error` (from [`StopSignals::recv`]) stops it.
pub fn stopping_line(error: &CliError) -> String {
    let what = match error {
        CliError::Stopped(signal) => signal.name(),
        _ => "interrupted",
    };
    format!("{what}: cancelling and closing the connection (again to stop at once)")
}

/// What `mcp bridge` (stdio) says on stderr when `error` (from [`StopSignals::recv`]) stops
/// it: only Ctrl-C stops it at once ([`StopSignals::recv_interrupt`]).
pub fn bridge_stopping_line(error: &CliError) -> String {
    match error {
        CliError::Stopped(signal) => format!(
            "{}: cancelling and closing the connection (Ctrl-C to stop at once)",
            signal.name()
        ),
        _ => stopping_line(error),
    }
}
