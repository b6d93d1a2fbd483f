//! Reading a person's answer from stdin in a way that can be abandoned.
//!
//! A question asked at the terminal (an elicitation) reads stdin on a blocking thread. When
//! the command that caused it is cancelled (Ctrl-C in `mcp shell`), that read must not live
//! on: it would take the next lines typed at the shell's prompt, and it would keep the
//! terminal from the next question. [`abandon_pending`] makes every read started before it
//! give up within [`CHECK_EVERY`], with an error that [`is_abandoned`] recognises.

use std::io::{self, BufRead, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often a waiting read looks whether it was abandoned.
pub const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Bumped by [`abandon_pending`]; a read gives up when it differs from its start.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Makes every answer read in progress give up (with an error [`is_abandoned`] recognises).
pub fn abandon_pending() {
    GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Why a read of an abandoned question failed.
#[derive(Debug)]
struct Abandoned;

impl std::fmt::Display for Abandoned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the question was abandoned")
    }
}

impl std::error::Error for Abandoned {}

/// The error of a read that gave up because its question was abandoned.
///
/// Deliberately not `ErrorKind::Interrupted`: `BufRead::read_line` and `Read::read_to_end`
/// retry on that kind, so an abandoned question would poll forever and keep the terminal
/// from every later question.
fn abandoned_error() -> io::Error {
    io::Error::other(Abandoned)
}

/// Whether `error` says the read's question was abandoned (by [`abandon_pending`]).
pub fn is_abandoned(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<Abandoned>())
}

/// One question being asked: reads its answer lines until answered or abandoned.
#[derive(Debug, Clone, Copy)]
pub struct Question {
    generation: u64,
}

impl Question {
    /// Starts a question; [`abandon_pending`] called after this abandons it.
    pub fn start() -> Self {
        Question {
            generation: GENERATION.load(Ordering::SeqCst),
        }
    }

    fn abandoned(self) -> bool {
        GENERATION.load(Ordering::SeqCst) != self.generation
    }

    /// Reads one line of stdin into `line` like `BufRead::read_line`, waiting in short polls
    /// so that an abandoned question returns an error ([`is_abandoned`]) instead of taking
    /// input meant for someone else.
    ///
    /// For a terminal, which is where questions are asked: in canonical mode it is readable
    /// only once a whole line (or end of input) is there, and a read returns at most that
    /// line, so nothing is left in stdin's buffer between questions.
    pub fn read_stdin_line(self, line: &mut String) -> io::Result<usize> {
        loop {
            let readable = stdin_readable()?;
            // Checked after the wait too: input that arrives once the question is abandoned
            // (typed at the shell's prompt, which is shown only after abandoning) is left alone.
            if self.abandoned() {
                return Err(abandoned_error());
            }
            if readable {
                return io::stdin().lock().read_line(line);
            }
        }
    }
}

/// Stdin as a [`BufRead`] for one [`Question`]: whole lines are read with
/// [`Question::read_stdin_line`], so every read (including `read_line`, which retries an
/// interrupted read) gives up with an error ([`is_abandoned`]) once the question is abandoned.
#[derive(Debug)]
pub struct QuestionInput {
    question: Question,
    line: String,
    pos: usize,
}

impl QuestionInput {
    /// Stdin for `question`.
    pub fn new(question: Question) -> Self {
        QuestionInput {
            question,
            line: String::new(),
            pos: 0,
        }
    }
}

impl Read for QuestionInput {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for QuestionInput {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.line.len() {
            self.line.clear();
            self.pos = 0;
            self.question.read_stdin_line(&mut self.line)?;
        }
        Ok(&self.line.as_bytes()[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.line.len());
    }
}

/// Stderr for one [`Question`]: once the question is abandoned, what it still writes (the
/// newline that ends a declined question, say) is dropped, since the terminal belongs to the
/// shell's prompt again by then.
#[derive(Debug)]
pub struct QuestionOutput {
    question: Question,
}

impl QuestionOutput {
    /// Stderr for `question`.
    pub fn new(question: Question) -> Self {
        QuestionOutput { question }
    }
}

impl Write for QuestionOutput {
    fn write(&mut self, text: &[u8]) -> io::Result<usize> {
        if self.question.abandoned() {
            return Ok(text.len());
        }
        io::stderr().write(text)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// Whether stdin has input, waiting at most [`CHECK_EVERY`].
fn stdin_readable() -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(CHECK_EVERY.subsec_nanos()),
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abandoned_question_gives_up_and_a_new_one_does_not() {
        let before = Question::start();
        abandon_pending();
        let after = Question::start();
        assert!(before.abandoned());
        assert!(!after.abandoned());
        let mut line = String::new();
        let err = before.read_stdin_line(&mut line).unwrap_err();
        assert!(is_abandoned(&err), "{err}");
        assert!(line.is_empty());
        let mut input = QuestionInput::new(before);
        // Through `BufRead::read_line`, as the questions read: it must give up, not retry.
        let err = input.read_line(&mut line).unwrap_err();
        assert!(is_abandoned(&err), "{err}");
        assert!(line.is_empty());
        // What it still writes is dropped (this would show on the test's stderr otherwise).
        let mut output = QuestionOutput::new(before);
        assert_eq!(output.write(b"abandoned\n").unwrap(), 10);
    }
}
