//! hyper's I/O traits over a futures-io stream, so hyper runs on async-io's reactor.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_io::{AsyncRead, AsyncWrite};
use hyper::rt::ReadBufCursor;

/// How many bytes one read asks the stream for at most.
const READ_CHUNK: usize = 16 * 1024;

/// A futures-io stream as a `hyper::rt::Read + hyper::rt::Write`.
///
/// hyper hands out an uninitialised buffer; filling it in place needs `unsafe`, so reads go
/// through an initialised scratch buffer of [`READ_CHUNK`] bytes and are copied once.
pub(crate) struct HyperIo<T> {
    inner: T,
    scratch: Box<[u8]>,
}

impl<T> HyperIo<T> {
    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            scratch: vec![0; READ_CHUNK].into_boxed_slice(),
        }
    }
}

impl<T: AsyncRead + Unpin> hyper::rt::Read for HyperIo<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let want = buf.remaining().min(this.scratch.len());
        let n = ready!(Pin::new(&mut this.inner).poll_read(cx, &mut this.scratch[..want]))?;
        buf.put_slice(&this.scratch[..n]);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for HyperIo<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_close(cx)
    }
}
