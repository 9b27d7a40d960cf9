//! The two structures of publish/lookup and spawn: `pmix_pdata_t` (a
//! published key, its value and who published it) and `pmix_app_t` (one
//! application of a spawn request).

use super::{Info, Key, Proc, Value};

/// `pmix_pdata_t`: what a lookup found for one key.
#[derive(Clone, Debug, PartialEq)]
pub struct PData {
    /// The process that published it.
    pub proc: Proc,
    /// The key.
    pub key: Key,
    /// The published value.
    pub value: Value,
}

impl PData {
    /// A found item.
    pub fn new(proc: Proc, key: Key, value: impl Into<Value>) -> PData {
        PData {
            proc,
            key,
            value: value.into(),
        }
    }
}

/// `pmix_app_t`: one application to start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct App {
    /// The executable.
    pub cmd: String,
    /// Its arguments (`argv[0]` included, as the Standard's `argv`).
    pub argv: Vec<String>,
    /// `NAME=value` entries added to its environment.
    pub env: Vec<String>,
    /// Its working directory (empty: the host decides).
    pub cwd: String,
    /// How many processes.
    pub maxprocs: i32,
    /// Attributes of this application.
    pub info: Vec<Info>,
}

impl App {
    /// `maxprocs` copies of `cmd` with no arguments.
    pub fn new(cmd: impl Into<String>, maxprocs: i32) -> App {
        let cmd = cmd.into();
        App {
            argv: vec![cmd.clone()],
            cmd,
            maxprocs,
            ..App::default()
        }
    }
}
