//! An in-memory, bounded, one-direction byte pipe that works on any runtime.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

struct Pipe {
    buf: VecDeque<u8>,
    capacity: usize,
    writer_gone: bool,
    reader_gone: bool,
    read_waker: Option<Waker>,
    write_waker: Option<Waker>,
}

fn lock(p: &Mutex<Pipe>) -> std::sync::MutexGuard<'_, Pipe> {
    p.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The write end of a [`pipe`]. Dropping (or closing) it is end of file for the reader.
pub struct PipeWriter(Arc<Mutex<Pipe>>);

/// The read end of a [`pipe`]. Once it is dropped, writes fail with `BrokenPipe`.
pub struct PipeReader(Arc<Mutex<Pipe>>);

/// A pipe holding at most `capacity` bytes: a writer that gets ahead waits (backpressure).
#[must_use]
pub fn pipe(capacity: usize) -> (PipeWriter, PipeReader) {
    let p = Arc::new(Mutex::new(Pipe {
        buf: VecDeque::new(),
        capacity: capacity.max(1),
        writer_gone: false,
        reader_gone: false,
        read_waker: None,
        write_waker: None,
    }));
    (PipeWriter(p.clone()), PipeReader(p))
}

impl futures_io::AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = lock(&self.0);
        if p.reader_gone {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if p.writer_gone {
            return Poll::Ready(Err(io::Error::other("pipe closed")));
        }
        let room = p.capacity - p.buf.len();
        if room == 0 {
            p.write_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = room.min(data.len());
        p.buf.extend(&data[..n]);
        if let Some(w) = p.read_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut p = lock(&self.0);
        p.writer_gone = true;
        if let Some(w) = p.read_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(()))
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let mut p = lock(&self.0);
        p.writer_gone = true;
        if let Some(w) = p.read_waker.take() {
            w.wake();
        }
    }
}

impl futures_io::AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let mut p = lock(&self.0);
        if p.buf.is_empty() {
            if p.writer_gone {
                return Poll::Ready(Ok(0));
            }
            p.read_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = out.len().min(p.buf.len());
        for (slot, b) in out.iter_mut().zip(p.buf.drain(..n)) {
            *slot = b;
        }
        if let Some(w) = p.write_waker.take() {
            w.wake();
        }
        Poll::Ready(Ok(n))
    }
}

impl Drop for PipeReader {
    fn drop(&mut self) {
        let mut p = lock(&self.0);
        p.reader_gone = true;
        if let Some(w) = p.write_waker.take() {
            w.wake();
        }
    }
}
