//! The `fairbench` binary: parse flags, run, print one line on error.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // std reads the arguments from the process's memory when asked: copy them, then wipe
    // the password there at once, so `ps` never shows it again.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    fairbench::argv::hide_passwords(fairbench::db::url::arg_password_spans);
    fairbench::app::install_panic_hook();
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
            let first = rendered.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ");
            // sysbench's connection options: name the URL fairbench takes instead.
            let hint = if rendered.contains("--pgsql-") || rendered.contains("pgsql") {
                " (fairbench takes the server as a URL: --target postgres://user:pass@host:port/db)"
            } else if rendered.contains("--mysql-") || rendered.contains("--db-driver") {
                " (fairbench takes the server as a URL: --target mysql://user:pass@host:port/db)"
            } else {
                " (see --help)"
            };
            eprintln!("error: {first}{hint}");
            ExitCode::from(2)
        }
    }
}
