//! How much of what the driver wrote to a stdio server's input the server has not read: the
//! fact that tells a server that crashed at start-up (it read nothing, whatever it was sent)
//! from one that exited on the era probe (it read the probe), so that only the latter is
//! started again (see [`StdioConnection::handle_eof_unread`](mcp_proto::stdio::StdioConnection::handle_eof_unread)).
//!
//! The runtime hands over a duplicate of the stdin pipe's write end
//! ([`ChildParts::stdin_dup`](crate::runtime::ChildParts::stdin_dup)); `FIONREAD` on it gives
//! the bytes still in the pipe (on Linux; where the system reports nothing for a write end,
//! a server is taken to have read its input, as before). The duplicate keeps the pipe open,
//! so it lives inside [`StdinPipe`] and is closed with it: closing stdin still gives the
//! server its end of input.

use std::io;
use std::os::fd::OwnedFd;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

/// Asks how many bytes written to a child's stdin are still in the pipe, unread.
#[derive(Clone, Default, Debug)]
pub struct UnreadInput(Arc<Mutex<Option<OwnedFd>>>);

impl UnreadInput {
    /// The bytes in the pipe that the child has not read; `None` once stdin is closed, or
    /// when the runtime gave no duplicate or the system cannot tell.
    pub fn bytes(&self) -> Option<u64> {
        let fd = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        rustix::io::ioctl_fionread(fd.as_ref()?).ok()
    }

    fn close(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// A child's stdin that closes the duplicate of its pipe together with itself.
pub(crate) struct StdinPipe {
    inner: Pin<Box<dyn futures_io::AsyncWrite + Send>>,
    unread: UnreadInput,
}

impl StdinPipe {
    /// `inner` with `dup` (a duplicate of its write end, if any) asked through the returned
    /// [`UnreadInput`].
    pub(crate) fn new(
        inner: Pin<Box<dyn futures_io::AsyncWrite + Send>>,
        dup: Option<OwnedFd>,
    ) -> (Self, UnreadInput) {
        let unread = UnreadInput(Arc::new(Mutex::new(dup)));
        (
            StdinPipe {
                inner,
                unread: unread.clone(),
            },
            unread,
        )
    }
}

impl futures_io::AsyncWrite for StdinPipe {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.inner.as_mut().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.inner.as_mut().poll_write_vectored(cx, bufs)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.inner.as_mut().poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let closed = self.inner.as_mut().poll_close(cx);
        if closed.is_ready() {
            // The pipe's end of input needs every write end closed.
            self.unread.close();
        }
        closed
    }
}

impl Drop for StdinPipe {
    fn drop(&mut self) {
        self.unread.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    /// A blocking std pipe as an `AsyncWrite` (the tests write little: never blocks).
    struct Blocking(std::process::ChildStdin);

    impl futures_io::AsyncWrite for Blocking {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            Poll::Ready(self.0.write(buf))
        }
        fn poll_flush(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(self.0.flush())
        }
        fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// `sh -c SCRIPT` with `bytes` written to its stdin through a [`StdinPipe`], waited for:
    /// what [`UnreadInput::bytes`] says then, and the pipe (still open). The script starts
    /// once the bytes are written (it waits for the file `$1`, made after the write).
    fn after_exit(name: &str, script: &str, bytes: &[u8]) -> (Option<u64>, StdinPipe) {
        let flag =
            std::env::temp_dir().join(format!("mcp-driver-unread-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&flag);
        let script = format!("while [ ! -e \"$1\" ]; do sleep 0.01; done; {script}");
        let mut child = Command::new("sh")
            .args(["-c", &script, "sh"])
            .arg(&flag)
            .stdin(Stdio::piped())
            .spawn()
            .expect("sh");
        let mut stdin = child.stdin.take().expect("piped");
        let dup = std::os::fd::AsFd::as_fd(&stdin)
            .try_clone_to_owned()
            .expect("dup");
        stdin.write_all(bytes).expect("write");
        std::fs::write(&flag, b"").expect("the flag");
        let (pipe, unread) = StdinPipe::new(Box::pin(Blocking(stdin)), Some(dup));
        child.wait().expect("wait");
        let _ = std::fs::remove_file(&flag);
        (unread.bytes(), pipe)
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_that_read_nothing_leaves_every_byte_and_a_reader_fewer() {
        let (unread, _pipe) = after_exit("none", "exit 3", b"0123456789\n");
        assert_eq!(unread, Some(11));
        let (unread, _pipe) =
            after_exit("some", "dd bs=4 count=1 >/dev/null 2>&1", b"0123456789\n");
        assert_eq!(unread, Some(7));
    }

    #[test]
    fn closing_the_pipe_closes_the_duplicate_and_the_child_sees_the_end() {
        let mut child = Command::new("sh")
            .args(["-c", "cat >/dev/null"])
            .stdin(Stdio::piped())
            .spawn()
            .expect("sh");
        let stdin = child.stdin.take().expect("piped");
        let dup = std::os::fd::AsFd::as_fd(&stdin)
            .try_clone_to_owned()
            .expect("dup");
        let (pipe, unread) = StdinPipe::new(Box::pin(Blocking(stdin)), Some(dup));
        drop(pipe);
        assert_eq!(unread.bytes(), None);
        // `cat` ends only when every write end is closed.
        assert!(child.wait().expect("wait").success());
    }
}
