//! The byte streams a line transport reads and writes: a caller's stream, or a child's pipes.

use std::pin::Pin;
use std::process::ExitStatus;

use mcp_proto::stdio::shutdown::ShutdownSchedule;

#[cfg(unix)]
use crate::process::StdioChild;
use crate::runtime::Runtime;

pub(crate) type BoxRead = Pin<Box<dyn futures_io::AsyncRead + Send>>;
pub(crate) type BoxWrite = Pin<Box<dyn futures_io::AsyncWrite + Send>>;

/// The byte stream of one line connection.
pub(crate) enum ByteStream<R: Runtime> {
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
    /// How much of what was written to `writer` the child has not read.
    pub(crate) unread: crate::process::UnreadInput,
    pub(crate) status: Option<ExitStatus>,
    /// Set once the shutdown began (the session is closed and the output flushed).
    pub(crate) schedule: Option<ShutdownSchedule>,
    /// What to start again when the core asks for a respawn (the Auto era probe).
    pub(crate) spec: crate::process::StdioCommand,
    pub(crate) tail: crate::process::StderrTailConfig,
}

impl<R: Runtime> ByteStream<R> {
    /// The stream read from (`None` once it ended).
    pub(crate) fn reader(&mut self) -> &mut Option<BoxRead> {
        match self {
            ByteStream::Stream(s) => &mut s.reader,
            #[cfg(unix)]
            ByteStream::Stdio(s) => &mut s.reader,
            ByteStream::_Never(n, _) => match *n {},
        }
    }

    /// The stream written to (`None` once it failed or was closed).
    pub(crate) fn writer(&mut self) -> &mut Option<BoxWrite> {
        match self {
            ByteStream::Stream(s) => &mut s.writer,
            #[cfg(unix)]
            ByteStream::Stdio(s) => &mut s.writer,
            ByteStream::_Never(n, _) => match *n {},
        }
    }
}
