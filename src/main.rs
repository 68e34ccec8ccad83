//! The `fairbench` binary: parse flags, run, print one line on error.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // std reads the arguments from the process's memory when asked: copy them, then wipe
    // the password there at once, so `ps` never shows it again.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    fairbench::argv::hide_passwords(fairbench::db::redact::arg_password_spans);
    fairbench::app::install_panic_hook();
    let mut args: Vec<String> = match args.into_iter().map(|a| a.into_string()).collect() {
        Ok(args) => args,
        Err(_) => {
            eprintln!("error: an argument is not valid UTF-8");
            return ExitCode::from(2);
        }
    };
    // A sysbench line (`fairbench oltp_read_write --threads=8 run`) is read as sysbench reads it.
    if fairbench::cli::sysbench::is_sysbench_line(&args) {
        match fairbench::cli::sysbench::translate(&args) {
            Ok(t) => {
                let quiet = t.args.iter().any(|a| a == "--quiet" || a == "-q");
                for note in t.notes.iter().filter(|_| !quiet) {
                    eprintln!("note: {note}");
                }
                args = t.args;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let cli = match fairbench::cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => return flag_error(e),
    };
    match fairbench::app::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Help and version go to stdout as usual; a bad flag becomes one line with a hint.
fn flag_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let rendered = e.to_string();
            let first = first_line(&rendered);
            // A sysbench option: name fairbench's spelling; a typo: the nearest one.
            use clap::error::{ContextKind, ContextValue};
            let text = |kind| match e.get(kind) {
                Some(ContextValue::String(s)) => Some(s.clone()),
                Some(ContextValue::Strings(v)) => v.first().cloned(),
                _ => None,
            };
            let invalid =
                text(ContextKind::InvalidArg).or_else(|| text(ContextKind::InvalidSubcommand)).unwrap_or_default();
            let suggested = text(ContextKind::SuggestedArg).or_else(|| text(ContextKind::SuggestedSubcommand));
            let hint = fairbench::cli::sysbench::equivalent(&invalid)
                .or_else(|| suggested.map(|s| format!("did you mean {s}?")))
                .unwrap_or_else(|| "see --help".into());
            eprintln!("error: {first} ({hint})");
            ExitCode::from(2)
        }
    }
}

/// clap's first line, with the list it introduces when it ends in a colon ("the following
/// required arguments were not provided:" is followed by their names on lines of their own).
fn first_line(rendered: &str) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string();
    if !first.ends_with(':') {
        return first;
    }
    let listed: Vec<&str> =
        lines.take_while(|l| l.starts_with(char::is_whitespace) && !l.trim().is_empty()).map(str::trim).collect();
    format!("{first} {}", listed.join(", "))
}
