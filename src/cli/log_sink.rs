//! Where log lines go: stderr, one `write(2)` a line, with no lock the
//! runtime's workers wait on for the lines that need none.
//!
//! `std::io::Stderr` takes a process-wide lock around every write. The
//! request log writes a line a request from whichever worker answered it,
//! so under load two workers often log at once and one sleeps on that lock
//! until the other's system call returns: four fifths of the server's
//! `futex` calls under a 64-connection load (`perf record -e
//! syscalls:sys_enter_futex`). A line of at most `PIPE_BUF` bytes needs no
//! such lock: one `write` of it is never split, into a pipe (POSIX), a
//! file, a terminal or the journal's socket. A longer one may be written in
//! parts, so it takes the lock whole, and shorter lines share it, never
//! landing between its parts.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

use parking_lot::RwLock;
use tracing_subscriber::fmt::MakeWriter;

/// The most bytes one `write` to a pipe puts down whole (POSIX requires at
/// least 512; Linux's is 4,096).
const ATOMIC_WRITE: usize = 4096;

/// A log line's destination; see the module.
pub struct LogSink {
    /// `None` when there is nowhere to write (stderr was closed when the
    /// process started): lines are dropped, as `std::io::Stderr` drops them.
    file: Option<File>,
    /// Shared by lines written in one call, held whole by longer ones.
    long_line: RwLock<()>,
}

impl LogSink {
    /// The process's stderr, as it was when the log started.
    pub fn stderr() -> Self {
        let fd = io::stderr().as_fd().try_clone_to_owned();
        Self::to(fd.ok().map(File::from))
    }

    fn to(file: Option<File>) -> Self {
        LogSink {
            file,
            long_line: RwLock::new(()),
        }
    }
}

impl<'a> MakeWriter<'a> for LogSink {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Line<'a> {
        Line(self)
    }
}

/// One event's writer: the formatter hands it the whole line in one
/// `write_all`.
pub struct Line<'a>(&'a LogSink);

impl Write for Line<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.write_all(bytes).map(|()| bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let Some(mut file) = self.0.file.as_ref() else {
            return Ok(());
        };
        if bytes.len() <= ATOMIC_WRITE {
            let _shared = self.0.long_line.read();
            file.write_all(bytes)
        } else {
            let _whole = self.0.long_line.write();
            file.write_all(bytes)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader};

    use super::*;

    /// Threads writing at once, lines longer than a pipe holds among short
    /// ones: every line comes out whole. (Without the lock the long lines,
    /// written in parts as the reader drains the pipe, come out interleaved.)
    #[test]
    fn lines_written_at_once_come_out_whole() {
        const THREADS: u8 = 4;
        const LINES: usize = 40;
        let (reader, writer) = io::pipe().expect("a pipe");
        let sink = LogSink::to(Some(File::from(std::os::fd::OwnedFd::from(writer))));
        let read = std::thread::spawn(move || {
            BufReader::new(reader)
                .lines()
                .map(|line| line.expect("a line of text"))
                .collect::<Vec<_>>()
        });
        std::thread::scope(|scope| {
            for thread in 0..THREADS {
                let sink = &sink;
                scope.spawn(move || {
                    let mark = char::from(b'a' + thread);
                    for i in 0..LINES {
                        // Every fourth line is 100 KiB, over a pipe's 64 KiB.
                        let length = if i % 4 == 0 { 100 * 1024 } else { 100 };
                        let mut line = mark.to_string().repeat(length);
                        line.push('\n');
                        sink.make_writer()
                            .write_all(line.as_bytes())
                            .expect("written");
                    }
                });
            }
        });
        drop(sink);
        let lines = read.join().expect("the reader");
        assert_eq!(lines.len(), usize::from(THREADS) * LINES);
        for line in &lines {
            let mark = line.chars().next().expect("a line with text");
            assert!(
                line.chars().all(|c| c == mark),
                "a line of {} bytes mixes threads' text",
                line.len()
            );
            assert!(
                [100, 100 * 1024].contains(&line.len()),
                "a line of {} bytes",
                line.len()
            );
        }
    }

    #[test]
    fn with_nowhere_to_write_lines_are_dropped() {
        let sink = LogSink::to(None);
        sink.make_writer()
            .write_all(b"dropped\n")
            .expect("no error");
        assert_eq!(sink.make_writer().write(b"dropped\n").expect("no error"), 8);
    }
}
