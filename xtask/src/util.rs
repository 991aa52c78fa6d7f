//! Helpers shared by the commands: the workspace root, running tools, and
//! hand-rolled argument parsing.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The result type of every command; the error is a message for the user.
pub type Result<T, E = String> = std::result::Result<T, E>;

/// The workspace root (the parent of `xtask/`).
pub fn workspace() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The cargo to run: `$CARGO` (set by `cargo xtask`), else `cargo` on `PATH`.
pub fn cargo() -> PathBuf {
    std::env::var_os("CARGO").map_or_else(|| PathBuf::from("cargo"), PathBuf::from)
}

/// Describes `cmd` for messages: its program and arguments.
pub fn describe(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// Runs `cmd` and returns its stdout; errors say which command failed and
/// why (not found, or its status and stderr).
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd.output().map_err(|e| spawn_error(cmd, &e))?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(format!("`{}` failed ({}):\n{}", describe(cmd), out.status, String::from_utf8_lossy(&out.stderr).trim_end()))
}

/// Runs `cmd` with the terminal as its stdout/stderr; errors if it cannot
/// start or exits non-zero.
pub fn status(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| spawn_error(cmd, &e))?;
    if status.success() { Ok(()) } else { Err(format!("`{}` failed ({status})", describe(cmd))) }
}

/// The message for a command that could not be started.
pub fn spawn_error(cmd: &Command, e: &std::io::Error) -> String {
    let program = cmd.get_program().to_string_lossy();
    if e.kind() == std::io::ErrorKind::NotFound {
        format!("`{program}` not found: is it installed and on PATH?")
    } else {
        format!("cannot run `{}`: {e}", describe(cmd))
    }
}

/// A command's arguments, consumed flag by flag; [`Args::finish`] rejects
/// whatever is left.
pub struct Args {
    command: &'static str,
    rest: Vec<String>,
}

impl Args {
    /// Wraps the arguments that follow `command`.
    pub fn new(command: &'static str, rest: &[String]) -> Self {
        Args { command, rest: rest.to_vec() }
    }

    /// Whether the boolean flag `name` (e.g. `--no-gpu`) was given.
    pub fn flag(&mut self, name: &str) -> bool {
        let before = self.rest.len();
        self.rest.retain(|a| a != name);
        self.rest.len() != before
    }

    /// The value of `name VALUE` or `name=VALUE`, if given.
    pub fn value(&mut self, name: &str) -> Result<Option<String>> {
        let prefix = format!("{name}=");
        if let Some(i) = self.rest.iter().position(|a| a.starts_with(&prefix)) {
            return Ok(Some(self.rest.remove(i)[prefix.len()..].to_string()));
        }
        let Some(i) = self.rest.iter().position(|a| a == name) else {
            return Ok(None);
        };
        if i + 1 >= self.rest.len() {
            return Err(format!("`{name}` needs a value (cargo xtask {} {name} VALUE)", self.command));
        }
        self.rest.remove(i);
        Ok(Some(self.rest.remove(i)))
    }

    /// The first argument that is not a flag (`--...`), once the flags and
    /// values have been taken.
    pub fn positional(&mut self) -> Option<String> {
        let i = self.rest.iter().position(|a| !a.starts_with("--"))?;
        Some(self.rest.remove(i))
    }

    /// Errors on any argument no one asked for.
    pub fn finish(self) -> Result<()> {
        match self.rest.first() {
            None => Ok(()),
            Some(a) => {
                Err(format!("unknown argument `{a}` for `cargo xtask {}` (see cargo xtask --help)", self.command))
            }
        }
    }
}
