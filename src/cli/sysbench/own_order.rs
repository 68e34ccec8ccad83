//! fairbench's own word order with sysbench's options in it:
//! `fairbench prepare oltp_read_write --table_size=1000 --db-ps-mode=disable`.
//!
//! fairbench's flags stay as they are (clap reads them, `--threads 8` too); each sysbench
//! option the command does not take is read as sysbench reads it ([`super::options`]):
//! translated, or ignored with a note where it does not apply to the command (the run's
//! `--time` on cleanup), as sysbench ignores it. fairbench's own defaults stay.

use super::{accepted_flags, options, Line, Refusal, Translation};

/// fairbench's commands that run sysbench's workloads, whose lines may carry its options.
const WORKLOAD_COMMANDS: [&str; 4] = ["prepare", "run", "cleanup", "bench"];

/// The long names (and aliases, `-` for `_`) that `command` takes; none for other commands.
fn own_names(command: &str) -> Vec<String> {
    if !WORKLOAD_COMMANDS.contains(&command) {
        return Vec::new();
    }
    let mut names = accepted_flags(command);
    let cli = <super::super::Cli as clap::CommandFactory>::command();
    if let Some(c) = cli.find_subcommand(command) {
        names.extend(
            c.get_arguments().flat_map(|a| a.get_all_aliases().unwrap_or_default()).map(|a| a.replace('_', "-")),
        );
    }
    names.extend(["help".to_string(), "version".to_string()]);
    names
}

/// `--name[=value]`, a sysbench option `command` does not take as it is: (name, value).
fn foreign<'a>(arg: &'a str, own: &[String]) -> Option<(String, Option<&'a str>)> {
    let option = arg.strip_prefix("--")?;
    let (name, value) = match option.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (option, None),
    };
    let name = name.replace('_', "-");
    (!own.contains(&name) && options::lookup(&name).is_some()).then_some((name, value))
}

/// Whether a line in fairbench's order (`run oltp_read_write ...`) carries sysbench options.
pub(super) fn has_sysbench_options(args: &[String]) -> bool {
    let Some(command) = args.get(1) else { return false };
    let own = own_names(command);
    !own.is_empty() && args.iter().skip(2).any(|a| foreign(a, &own).is_some())
}

/// Rewrites the sysbench options of a line in fairbench's order (see [`has_sysbench_options`]).
pub(super) fn translate(args: &[String]) -> Result<Translation, Refusal> {
    let own = own_names(&args[1]);
    let mut kept = args[..2].to_vec();
    let mut line = Line { own_order: true, ..Line::default() };
    let mut rest = args[2..].iter().peekable();
    while let Some(arg) = rest.next() {
        let Some((name, value)) = foreign(arg, &own) else {
            kept.push(arg.clone());
            continue;
        };
        // fairbench's grammar also reads `--threads 4`.
        let takes_value = options::lookup(&name).is_some_and(|o| o.takes_value(&name));
        let value = match value {
            Some(v) => Some(v.to_string()),
            None if takes_value => rest.next_if(|next| !next.starts_with('-')).cloned(),
            None => None,
        };
        line.option(&name, value.as_deref())?;
    }
    line.given_target =
        kept.iter().any(|a| ["--target", "--password-file"].iter().any(|f| a == f || a.starts_with(&format!("{f}="))));
    line.finish_own_order(kept)
}

impl Line {
    fn finish_own_order(mut self, mut args: Vec<String>) -> Result<Translation, Refusal> {
        let command = args[1].clone();
        self.legacy_modes_need_oltp_lua(None)?;
        self.refuse_on_run(Some(&command))?;
        if let Some(test) = self.test.take() {
            let workload = self.workload(&test)?;
            match args.get(2).filter(|a| !a.starts_with('-')) {
                Some(given) if self.workload(given).ok().as_deref() != Some(workload.as_str()) => {
                    return Err(format!("--test={test} and {given}: give one test name"));
                }
                Some(_) => {}
                None => args.insert(2, workload.clone()),
            }
            self.notes.push(format!(
                "--test is sysbench's deprecated spelling: `fairbench {command} {workload} ...` reads the same"
            ));
        }
        self.target(&mut args)?;
        let accepted = accepted_flags(&command);
        for (name, value) in std::mem::take(&mut self.flags) {
            match (accepted.contains(&name), value) {
                (true, Some(v)) => args.push(format!("--{name}={v}")),
                (true, None) => args.push(format!("--{name}")),
                (false, _) => self.ignored.push(format!("--{name}")),
            }
        }
        self.note_ignored(&command);
        Ok(Translation { args, notes: self.notes })
    }
}
