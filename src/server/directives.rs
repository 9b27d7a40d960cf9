//! Directives of requests, parsed from their infos (pure functions; the
//! requests' handling is in `jobs` and `monitor`): the one action a
//! `PMIx_Job_control` request asks for and the checkpoint methods it
//! names; the lookups and typed reads monitor requests need.

use super::shared::CkptMethod;
use crate::types::find_info;
use crate::types::{attrs, DataArray, Info, Key, Status, Value};

/// What a job-control request asks for.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Action {
    Pause,
    Resume,
    Terminate,
    Kill,
    Signal(i32),
    Checkpoint(String),
    Cancel(String),
    /// RESTART / PROVISION: only the host can.
    Host(&'static str),
}

fn flag(i: &Info) -> Result<bool, Status> {
    i.value.as_flag().ok_or(Status::ERR_BAD_PARAM)
}

pub(super) fn parse_action(dirs: &[Info]) -> Result<Option<Action>, (Status, String)> {
    let mut found: Vec<Action> = Vec::new();
    let bad = |k: &Key| {
        (
            Status::ERR_BAD_PARAM,
            format!("{} has the wrong type", k.as_str()),
        )
    };
    for i in dirs {
        let k = &i.key;
        let a = if *k == attrs::PMIX_JOB_CTRL_PAUSE {
            flag(i).map_err(|_| bad(k))?.then_some(Action::Pause)
        } else if *k == attrs::PMIX_JOB_CTRL_RESUME {
            flag(i).map_err(|_| bad(k))?.then_some(Action::Resume)
        } else if *k == attrs::PMIX_JOB_CTRL_TERMINATE {
            flag(i).map_err(|_| bad(k))?.then_some(Action::Terminate)
        } else if *k == attrs::PMIX_JOB_CTRL_KILL {
            flag(i).map_err(|_| bad(k))?.then_some(Action::Kill)
        } else if *k == attrs::PMIX_JOB_CTRL_SIGNAL {
            let n = i.value.as_integer().ok_or_else(|| bad(k))?;
            if !(1..=i128::from(libc::SIGRTMAX())).contains(&n) {
                return Err((Status::ERR_BAD_PARAM, format!("{n} is not a signal")));
            }
            Some(Action::Signal(n as i32))
        } else if *k == attrs::PMIX_JOB_CTRL_CHECKPOINT {
            let id = i.value.as_str().ok_or_else(|| bad(k))?;
            Some(Action::Checkpoint(id.to_owned()))
        } else if *k == attrs::PMIX_JOB_CTRL_CANCEL {
            // A NULL string (Undef) cancels all of the requester's.
            let id = match &i.value {
                Value::String(s) => s.clone(),
                Value::Undef | Value::Pointer(_) => String::new(),
                _ => return Err(bad(k)),
            };
            Some(Action::Cancel(id))
        } else if *k == attrs::PMIX_JOB_CTRL_RESTART {
            Some(Action::Host("restart"))
        } else if *k == attrs::PMIX_JOB_CTRL_PROVISION || *k == attrs::PMIX_JOB_CTRL_PROVISION_IMAGE
        {
            Some(Action::Host("provision"))
        } else {
            None
        };
        if let Some(a) = a {
            if !found.contains(&a) {
                found.push(a);
            }
        }
    }
    // PROVISION with its IMAGE is one action.
    found.dedup();
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        _ => Err((
            Status::ERR_BAD_PARAM,
            format!("one action per request, got {found:?}"),
        )),
    }
}

/// The checkpoint methods in a `PMIX_JOB_CTRL_CHECKPOINT_METHOD` array, or
/// given directly (`_EVENT` / `_SIGNAL` at top level), in order.
pub(super) fn ckpt_methods(infos: &[Info]) -> Result<Vec<CkptMethod>, Status> {
    let mut out = Vec::new();
    for i in infos {
        if i.key == attrs::PMIX_JOB_CTRL_CHECKPOINT_EVENT {
            match &i.value {
                Value::Bool(true) => out.push(CkptMethod::Event(Status::JCTRL_CHECKPOINT)),
                Value::Bool(false) => {}
                Value::Status(s) => out.push(CkptMethod::Event(*s)),
                _ => return Err(Status::ERR_BAD_PARAM),
            }
        } else if i.key == attrs::PMIX_JOB_CTRL_CHECKPOINT_SIGNAL {
            let n = i.value.as_integer().ok_or(Status::ERR_BAD_PARAM)?;
            if !(1..=i128::from(libc::SIGRTMAX())).contains(&n) {
                return Err(Status::ERR_BAD_PARAM);
            }
            out.push(CkptMethod::Signal(n as i32));
        }
    }
    Ok(out)
}

pub(super) fn required_unknown(dirs: &[Info]) -> Option<&Info> {
    dirs.iter()
        .find(|i| i.is_required() && i.key.attr_type().is_none())
}

pub(super) fn secs(dirs: &[Info], k: &Key) -> Result<Option<u32>, (Status, String)> {
    match find_info(dirs, k).map(|i| i.value.as_integer()) {
        None => Ok(None),
        Some(Some(n)) if (1..=u32::MAX as i128).contains(&n) => Ok(Some(n as u32)),
        Some(_) => Err((
            Status::ERR_BAD_PARAM,
            format!("{} must be a positive number of seconds", k.as_str()),
        )),
    }
}

pub(super) fn count(dirs: &[Info], k: &Key, dflt: u32) -> Result<u32, (Status, String)> {
    match find_info(dirs, k).map(|i| i.value.as_integer()) {
        None => Ok(dflt),
        Some(Some(n)) if (0..=u32::MAX as i128).contains(&n) => Ok(n as u32),
        Some(_) => Err((
            Status::ERR_BAD_PARAM,
            format!("{} must be a count", k.as_str()),
        )),
    }
}

pub(super) fn strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(
            s.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
        ),
        Value::DataArray(DataArray::String(v)) => Some(v.clone()),
        Value::DataArray(DataArray::Info(v)) => Some(
            v.iter()
                .filter_map(|i| i.value.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// The keys a resource-usage monitor asks for (its value's info array;
/// NULL or empty = every field).
pub(super) fn wanted(v: &Value) -> Vec<Key> {
    match v {
        Value::DataArray(DataArray::Info(v)) => v.iter().map(|i| i.key.clone()).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_action_per_request() {
        let d = [
            Info::new(attrs::PMIX_JOB_CTRL_PAUSE, true),
            Info::new(attrs::PMIX_JOB_CTRL_KILL, true),
        ];
        assert_eq!(parse_action(&d).unwrap_err().0, Status::ERR_BAD_PARAM);
        let d = [Info::new(attrs::PMIX_JOB_CTRL_PAUSE, false)];
        assert_eq!(parse_action(&d).unwrap(), None);
    }

    #[test]
    fn signal_numbers_are_checked() {
        let d = [Info::new(attrs::PMIX_JOB_CTRL_SIGNAL, Value::Int(0))];
        assert!(parse_action(&d).is_err());
        let d = [Info::new(
            attrs::PMIX_JOB_CTRL_SIGNAL,
            Value::Int(libc::SIGUSR1),
        )];
        assert_eq!(
            parse_action(&d).unwrap(),
            Some(Action::Signal(libc::SIGUSR1))
        );
    }

    #[test]
    fn checkpoint_methods_keep_the_declared_order() {
        let d = [
            Info::new(
                attrs::PMIX_JOB_CTRL_CHECKPOINT_SIGNAL,
                Value::Int(libc::SIGUSR2),
            ),
            Info::new(
                attrs::PMIX_JOB_CTRL_CHECKPOINT_EVENT,
                Value::Status(Status::JCTRL_CHECKPOINT),
            ),
        ];
        assert_eq!(
            ckpt_methods(&d).unwrap(),
            vec![
                CkptMethod::Signal(libc::SIGUSR2),
                CkptMethod::Event(Status::JCTRL_CHECKPOINT)
            ]
        );
    }
}
