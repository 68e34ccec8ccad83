//! The terminal the status line is drawn on: stderr, its width read from the terminal
//! itself. Some terminals report their columns but 0 rows; the usual reading then gives
//! up and assumes 80 columns, cutting the line short.

use std::io::{self, Write};

#[derive(Debug)]
pub struct Stderr;

/// The terminal's columns (a report of 0 rows does not matter), else `COLUMNS`, else 80.
pub fn columns() -> u16 {
    // SAFETY: TIOCGWINSZ fills a winsize on success; the struct is zeroed before.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if ok && size.ws_col > 0 {
        return size.ws_col;
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|c| *c > 0).unwrap_or(80)
}

impl indicatif::TermLike for Stderr {
    fn width(&self) -> u16 {
        columns()
    }
    fn move_cursor_up(&self, n: usize) -> io::Result<()> {
        escape(n, 'A')
    }
    fn move_cursor_down(&self, n: usize) -> io::Result<()> {
        escape(n, 'B')
    }
    fn move_cursor_right(&self, n: usize) -> io::Result<()> {
        escape(n, 'C')
    }
    fn move_cursor_left(&self, n: usize) -> io::Result<()> {
        escape(n, 'D')
    }
    fn write_line(&self, s: &str) -> io::Result<()> {
        writeln!(io::stderr(), "{s}")
    }
    fn write_str(&self, s: &str) -> io::Result<()> {
        write!(io::stderr(), "{s}")
    }
    fn clear_line(&self) -> io::Result<()> {
        write!(io::stderr(), "\r\x1b[2K")
    }
    fn flush(&self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// A cursor movement of `n` (none for 0: the escape would move one).
fn escape(n: usize, code: char) -> io::Result<()> {
    match n {
        0 => Ok(()),
        n => write!(io::stderr(), "\x1b[{n}{code}"),
    }
}
