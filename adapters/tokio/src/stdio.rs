//! This process's stdin and stdout as tokio byte streams that wait on the reactor when they
//! are pipes or sockets, as a stdio MCP server's host connects them.
//!
//! `tokio::io::stdin` reads on a blocking thread and `tokio::io::stdout` writes on one: each
//! message then crosses two threads more than it needs to, which a bridge or a server in the
//! middle of every call pays on each. [`stdin`] and [`stdout`] register a pipe or socket with
//! the reactor instead (non-blocking reads and writes, readiness from epoll), and fall back to
//! tokio's own streams for anything else (a terminal, a regular file, `/dev/null`), where
//! non-blocking mode would either not work or leak to other programs sharing the terminal.
//!
//! The file status flags changed (`O_NONBLOCK`) are put back when the stream is dropped, so a
//! program that hands its stdin on after serving sees it as it was.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// This process's stdin: on the reactor when it is a pipe or socket, else tokio's
/// [`tokio::io::Stdin`].
///
/// # Panics
///
/// Outside a tokio runtime with its I/O driver enabled.
pub fn stdin() -> Stdin {
    // Unchecked: a socket (as libuv hosts connect a child's stdio) reads and writes like a
    // pipe; the checked constructors accept FIFOs only.
    match Nonblocking::new(io::stdin().as_fd(), pipe::Receiver::from_owned_fd_unchecked) {
        Some(fd) => Stdin(Inner::Reactor(fd)),
        None => Stdin(Inner::Tokio(tokio::io::stdin())),
    }
}

/// This process's stdout: on the reactor when it is a pipe or socket, else tokio's
/// [`tokio::io::Stdout`].
///
/// # Panics
///
/// Outside a tokio runtime with its I/O driver enabled.
pub fn stdout() -> Stdout {
    let out = io::stdout();
    if same_file(io::stdin().as_fd(), out.as_fd()) {
        // One open file on both (a socket passed as stdin and stdout): its flags are shared,
        // and restoring them when one stream is dropped would make the other block a worker
        // thread. Stdin alone goes on the reactor.
        return Stdout(Inner::Tokio(tokio::io::stdout()));
    }
    match Nonblocking::new(out.as_fd(), pipe::Sender::from_owned_fd_unchecked) {
        Some(fd) => Stdout(Inner::Reactor(fd)),
        None => Stdout(Inner::Tokio(tokio::io::stdout())),
    }
}

/// Whether `a` and `b` are the same file (device and inode).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    match (rustix::fs::fstat(a), rustix::fs::fstat(b)) {
        (Ok(a), Ok(b)) => a.st_dev == b.st_dev && a.st_ino == b.st_ino,
        _ => false,
    }
}

/// Stdin as a tokio [`AsyncRead`]: see [`stdin`].
#[derive(Debug)]
pub struct Stdin(Inner<pipe::Receiver, tokio::io::Stdin>);

/// Stdout as a tokio [`AsyncWrite`]: see [`stdout`].
#[derive(Debug)]
pub struct Stdout(Inner<pipe::Sender, tokio::io::Stdout>);

#[derive(Debug)]
enum Inner<R: AsFd, T> {
    Reactor(Nonblocking<R>),
    Tokio(T),
}

/// A standard stream's descriptor duplicated (the same open file), made non-blocking and
/// registered with the reactor as `S`; its flags are restored when dropped.
#[derive(Debug)]
struct Nonblocking<S: AsFd> {
    stream: S,
    /// The status flags it had before `O_NONBLOCK` was set.
    original: OFlags,
}

impl<S: AsFd> Nonblocking<S> {
    /// `None` when `fd` is not a pipe or socket, or cannot be made non-blocking and
    /// registered (the caller then uses tokio's blocking-thread stream).
    fn new(fd: BorrowedFd<'_>, register: impl FnOnce(OwnedFd) -> io::Result<S>) -> Option<Self> {
        let stat = rustix::fs::fstat(fd).ok()?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Fifo | FileType::Socket => {}
            // A terminal is shared with the shell (non-blocking mode would leak to it); a
            // regular file cannot wait on epoll at all.
            _ => return None,
        }
        let owned = fd.try_clone_to_owned().ok()?;
        let original = rustix::fs::fcntl_getfl(&owned).ok()?;
        rustix::fs::fcntl_setfl(&owned, original | OFlags::NONBLOCK).ok()?;
        let restore = owned.try_clone().ok()?;
        match register(owned) {
            Ok(stream) => Some(Nonblocking { stream, original }),
            Err(e) => {
                tracing::debug!("stdio stays on tokio's blocking streams: {e}");
                let _ = rustix::fs::fcntl_setfl(&restore, original);
                None
            }
        }
    }
}

impl<S: AsFd> Drop for Nonblocking<S> {
    fn drop(&mut self) {
        // Best effort: the descriptor shares its open file (and flags) with fd 0 or 1.
        let _ = rustix::fs::fcntl_setfl(self.stream.as_fd(), self.original);
    }
}

impl AsyncRead for Stdin {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Inner::Tokio(s) => Pin::new(s).poll_read(cx, buf),
            Inner::Reactor(nb) => Pin::new(&mut nb.stream).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Inner::Tokio(s) => Pin::new(s).poll_write(cx, data),
            Inner::Reactor(nb) => Pin::new(&mut nb.stream).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Inner::Tokio(s) => Pin::new(s).poll_flush(cx),
            Inner::Reactor(nb) => Pin::new(&mut nb.stream).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Inner::Tokio(s) => Pin::new(s).poll_shutdown(cx),
            // Shutting the sender down would close the duplicate only, not stdout: as tokio's
            // stdout, flushing is all it means.
            Inner::Reactor(nb) => Pin::new(&mut nb.stream).poll_flush(cx),
        }
    }
}

impl Stdin {
    /// Whether reads wait on the reactor (stdin is a pipe or socket) rather than on a
    /// blocking thread.
    #[must_use]
    pub fn is_on_reactor(&self) -> bool {
        matches!(self.0, Inner::Reactor(_))
    }
}

impl Stdout {
    /// Whether writes wait on the reactor (stdout is a pipe or socket) rather than on a
    /// blocking thread.
    #[must_use]
    pub fn is_on_reactor(&self) -> bool {
        matches!(self.0, Inner::Reactor(_))
    }
}
