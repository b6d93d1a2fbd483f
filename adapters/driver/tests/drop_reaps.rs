//! `StdioChild`'s drop path on a runtime with no child cleanup of its own.
//!
//! The runtime here is a thread per task over `std::process`: a dropped `std::process::Child`
//! is neither killed nor reaped, so if the child disappears from `/proc` after the drop, it was
//! `StdioChild`'s group kill and background reaper that did it.

#![cfg(target_os = "linux")]

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::ExitStatus;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use mcp_driver::process::{StderrTailConfig, StdioChild, StdioCommand};
use mcp_driver::{BoxFuture, ChildParts, ChildProcess, Runtime};

#[derive(Clone)]
struct ThreadRuntime;

struct ThreadWaker(thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park_timeout(Duration::from_millis(10));
    }
}

/// Blocking pipes as futures-io streams: fine when every task has its own thread.
struct Blocking<T>(T);

impl<T: io::Read + Unpin> futures_io::AsyncRead for Blocking<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.0.read(buf))
    }
}

impl<T: io::Write + Unpin> futures_io::AsyncWrite for Blocking<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.0.write(buf))
    }
    fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.0.flush())
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

struct StdChild(std::process::Child);

impl ChildProcess for StdChild {
    fn id(&self) -> Option<u32> {
        Some(self.0.id())
    }
    fn poll_wait(&mut self, _cx: &mut Context<'_>) -> Poll<io::Result<ExitStatus>> {
        // `block_on` re-polls every 10 ms, so no waker bookkeeping is needed.
        match self.0.try_wait() {
            Ok(Some(status)) => Poll::Ready(Ok(status)),
            Ok(None) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        }
    }
    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.0.try_wait()
    }
}

impl Runtime for ThreadRuntime {
    fn spawn(&self, future: BoxFuture) {
        thread::spawn(move || block_on(future));
    }
    fn sleep_until(&self, deadline: Instant) -> BoxFuture {
        Box::pin(std::future::poll_fn(move |_| {
            if Instant::now() >= deadline {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }))
    }
    fn spawn_child(&self, mut command: std::process::Command) -> io::Result<ChildParts> {
        let mut child = command.spawn()?;
        let stdin = child.stdin.take().expect("piped by to_command");
        let stdout = child.stdout.take().expect("piped by to_command");
        let stderr = child.stderr.take().expect("piped by to_command");
        Ok(ChildParts {
            // No duplicate: the child is taken to have read its input.
            stdin_dup: None,
            stdin: Box::pin(Blocking(stdin)),
            stdout: Box::pin(Blocking(stdout)),
            stderr: Box::pin(Blocking(stderr)),
            process: Box::new(StdChild(child)),
        })
    }
}

fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        thread::sleep(Duration::from_millis(20));
    }
    cond()
}

#[test]
fn drop_kills_the_group_and_reaps_without_runtime_help() {
    let spec = StdioCommand::new("sh").args(["-c", "sleep 300 & echo $!; sleep 300"]);
    let (child, pipes) = StdioChild::spawn(
        &ThreadRuntime,
        &spec,
        "thread-test",
        StderrTailConfig::default(),
    )
    .unwrap();
    let pid = child.id();
    let mut stdout = pipes.stdout;
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while block_on(futures_util::AsyncReadExt::read(&mut stdout, &mut byte)).unwrap() == 1
        && byte[0] != b'\n'
    {
        line.push(byte[0]);
    }
    let grandchild: u32 = String::from_utf8(line).unwrap().parse().unwrap();
    assert!(matches!(state(grandchild), Some(s) if s != 'Z'));

    drop(child);

    assert!(
        eventually(|| !matches!(state(grandchild), Some(s) if s != 'Z')),
        "grandchild alive"
    );
    assert!(
        eventually(|| state(pid).is_none()),
        "child not reaped: {:?}",
        state(pid)
    );
}

#[test]
fn wait_reaps_and_reports_the_status() {
    let spec = StdioCommand::new("sh").args(["-c", "exit 7"]);
    let (mut child, _pipes) = StdioChild::spawn(
        &ThreadRuntime,
        &spec,
        "thread-test",
        StderrTailConfig::default(),
    )
    .unwrap();
    let status = block_on(child.wait()).unwrap();
    assert_eq!(status.code(), Some(7));
    let pid = child.id();
    assert_eq!(state(pid), None);
    assert_eq!(child.try_wait().unwrap(), Some(status));
}
