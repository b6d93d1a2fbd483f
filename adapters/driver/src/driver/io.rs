//! The transports a driver executes. One variant per kind of I/O; the HTTP exchange adds a
//! variant here (and a `Core` variant in `shared`) when the core's HTTP layer lands.

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
}

impl<R: Runtime> Transport<R> {
    pub(crate) fn reader(&mut self) -> &mut Option<BoxRead> {
        match self {
            Transport::Stream(s) => &mut s.reader,
            #[cfg(unix)]
            Transport::Stdio(s) => &mut s.reader,
            Transport::_Never(n, _) => match *n {},
        }
    }

    pub(crate) fn writer(&mut self) -> &mut Option<BoxWrite> {
        match self {
            Transport::Stream(s) => &mut s.writer,
            #[cfg(unix)]
            Transport::Stdio(s) => &mut s.writer,
            Transport::_Never(n, _) => match *n {},
        }
    }
}
