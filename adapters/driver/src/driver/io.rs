//! The transports a driver executes. One variant per kind of I/O, matching the `Core` variant
//! in `shared` that decides what to do with it.

use std::pin::Pin;
use std::process::ExitStatus;

use mcp_proto::stdio::shutdown::ShutdownSchedule;

#[cfg(unix)]
use crate::process::StdioChild;
use crate::runtime::Runtime;

pub(crate) type BoxRead = Pin<Box<dyn futures_io::AsyncRead + Send>>;
pub(crate) type BoxWrite = Pin<Box<dyn futures_io::AsyncWrite + Send>>;

/// The I/O of one connection.
pub(crate) enum Transport<R: Runtime> {
    /// A caller-supplied byte stream (`Client::over`).
    Stream(StreamIo),
    /// A child process speaking over its stdin / stdout.
    #[cfg(unix)]
    Stdio(Box<StdioIo<R>>),
    /// HTTP exchanges performed by the runtime's client.
    #[cfg(feature = "http")]
    Http(super::http::HttpIo),
    /// Keeps `R` used on platforms without child processes.
    #[allow(dead_code)]
    #[doc(hidden)]
    _Never(std::convert::Infallible, std::marker::PhantomData<R>),
}

pub(crate) struct StreamIo {
    pub(crate) reader: Option<BoxRead>,
    pub(crate) writer: Option<BoxWrite>,
}

#[cfg(unix)]
pub(crate) struct StdioIo<R: Runtime> {
    pub(crate) child: StdioChild<R>,
    pub(crate) reader: Option<BoxRead>,
    pub(crate) writer: Option<BoxWrite>,
    pub(crate) status: Option<ExitStatus>,
    /// Set once the shutdown began (the session is closed and the output flushed).
    pub(crate) schedule: Option<ShutdownSchedule>,
    /// What to start again when the core asks for a respawn (the Auto era probe).
    pub(crate) spec: crate::process::StdioCommand,
    pub(crate) tail: crate::process::StderrTailConfig,
}

impl<R: Runtime> Transport<R> {
    /// The byte stream read from, `None` for transports without one (HTTP).
    pub(crate) fn reader(&mut self) -> Option<&mut Option<BoxRead>> {
        match self {
            Transport::Stream(s) => Some(&mut s.reader),
            #[cfg(unix)]
            Transport::Stdio(s) => Some(&mut s.reader),
            #[cfg(feature = "http")]
            Transport::Http(_) => None,
            Transport::_Never(n, _) => match *n {},
        }
    }

    /// The byte stream written to, `None` for transports without one (HTTP).
    pub(crate) fn writer(&mut self) -> Option<&mut Option<BoxWrite>> {
        match self {
            Transport::Stream(s) => Some(&mut s.writer),
            #[cfg(unix)]
            Transport::Stdio(s) => Some(&mut s.writer),
            #[cfg(feature = "http")]
            Transport::Http(_) => None,
            Transport::_Never(n, _) => match *n {},
        }
    }
}
