//! `fastpmix`: the command-line front end.
//!
//! - `fastpmix run -n N [--keep-going] [--abort-timeout S] [--trace-events] -- prog args…`
//! - `fastpmix notify [--server S | --pid P] [--range R] [--source ns:rank] [--target ns:rank]… [--info k=v]… CODE`
//! - `fastpmix inspect [--server S | --pid P]`
//! - `fastpmix engine-demo [--events N]`: the in-process event engine alone
//! - `fastpmix demo-client`: one process of the README's demo job

#[cfg(not(loom))]
mod demo;
#[cfg(not(loom))]
mod democlient;
#[cfg(not(loom))]
mod host;
#[cfg(not(loom))]
mod run;
#[cfg(not(loom))]
mod tool;
#[cfg(not(loom))]
mod watch;

#[cfg(loom)]
fn main() {}

#[cfg(not(loom))]
fn usage() -> ! {
    eprintln!(
        "usage:
  fastpmix run -n N [--keep-going] [--abort-timeout SECS] [--trace-events]
               [--bind-to none|core] [--bind-progress none|auto|cpu:LIST]
               [--] PROG [ARGS...]
      run N processes of PROG under an embedded PMIx server (this node);
      --bind-to core binds rank r to the r-th core of the launcher's own
      binding and tells the ranks (PMIX_LOCAL_CPUSETS, PMIX_CPUSET), so
      that no progress thread lands on a peer's core (default none);
      --bind-progress places the server's progress thread (clients:
      FASTPMIX_BIND_PROGRESS in their environment)
  fastpmix notify [--server SOCKET | --pid PID] [--range RANGE] [--source NS:RANK]
                  [--target NS:RANK]... [--info KEY=VALUE]... CODE
      inject an event into a running server (CODE: number or standard name)
  fastpmix inspect [--server SOCKET | --pid PID]
      show a running server's namespaces, clients, rings and cursors, and
      where every progress thread runs
  fastpmix engine-demo [--events N]
      the in-process event engine on its own
  fastpmix demo-client
      one process of the README demo (run it under `fastpmix run`)"
    );
    std::process::exit(2)
}

#[cfg(not(loom))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("run") => cmd_run(&args[1..]),
        Some("notify") => cmd_notify(&args[1..]),
        Some("inspect") => cmd_inspect(&args[1..]),
        Some("engine-demo") => {
            let events = flag_value(&args, "--events")
                .map_or(10_000, |v| v.parse().unwrap_or_else(|_| usage()));
            demo::demo(events).map(|_| 0).map_err(|s| s.to_string())
        }
        Some("demo-client") => democlient::main().map_err(|s| format!("demo client: {s}")),
        _ => usage(),
    };
    match code {
        Ok(c) => std::process::exit(c),
        Err(e) => {
            eprintln!("fastpmix: {e}");
            std::process::exit(1)
        }
    }
}

#[cfg(not(loom))]
fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    args.iter().position(|a| a == flag).map(|i| {
        args.get(i + 1)
            .map(String::as_str)
            .unwrap_or_else(|| usage())
    })
}

#[cfg(not(loom))]
fn cmd_run(args: &[String]) -> Result<i32, String> {
    // Options up to `--` or the first word that is not an option (as
    // mpirun): `fastpmix run -n 2 ./app` and `fastpmix run -n 2 -- ./app`.
    let mut o = run::RunOpts {
        n: 1,
        keep_going: false,
        abort_timeout: 5,
        trace: false,
        placement: None,
        bind_to_core: false,
        prog: Vec::new(),
    };
    let mut i = 0;
    while i < args.len() {
        let val = || {
            args.get(i + 1)
                .map(String::as_str)
                .unwrap_or_else(|| usage())
        };
        match args[i].as_str() {
            "--" => {
                o.prog = args[i + 1..].to_vec();
                break;
            }
            "-n" | "--np" => {
                o.n = val()
                    .parse()
                    .map_err(|_| "-n takes a positive number".to_string())?;
                i += 1;
            }
            "--abort-timeout" => {
                o.abort_timeout = val()
                    .parse()
                    .map_err(|_| "--abort-timeout takes seconds".to_string())?;
                i += 1;
            }
            "--bind-progress" => {
                o.placement = Some(val().parse().map_err(|e| format!("--bind-progress: {e}"))?);
                i += 1;
            }
            "--bind-to" => {
                o.bind_to_core = match val() {
                    "core" => true,
                    "none" => false,
                    v => return Err(format!("--bind-to: {v}: one of none, core")),
                };
                i += 1;
            }
            "--keep-going" => o.keep_going = true,
            "--trace-events" => o.trace = true,
            a if !a.starts_with('-') => {
                o.prog = args[i..].to_vec();
                break;
            }
            _ => usage(),
        }
        i += 1;
    }
    if o.prog.is_empty() {
        usage();
    }
    if o.n == 0 {
        return Err("-n must be at least 1".into());
    }
    run::run(o)
}

#[cfg(not(loom))]
fn server_of(args: &[String]) -> Result<std::path::PathBuf, String> {
    let pid = flag_value(args, "--pid")
        .map(|p| {
            p.parse::<u32>()
                .map_err(|_| "--pid takes a number".to_string())
        })
        .transpose()?;
    tool::find_server(flag_value(args, "--server"), pid)
}

#[cfg(not(loom))]
fn cmd_inspect(args: &[String]) -> Result<i32, String> {
    tool::inspect(&server_of(args)?).map(|_| 0)
}

#[cfg(not(loom))]
fn cmd_notify(args: &[String]) -> Result<i32, String> {
    let addr = server_of(args)?;
    let mut range = fastpmix::DataRange::LOCAL;
    let mut source = None;
    let mut targets = Vec::new();
    let mut info = Vec::new();
    let mut code = None;
    let mut i = 0;
    while i < args.len() {
        let val = || {
            args.get(i + 1)
                .map(String::as_str)
                .unwrap_or_else(|| usage())
        };
        match args[i].as_str() {
            "--server" | "--pid" => i += 1,
            "--range" => {
                range = tool::parse_range(val())?;
                i += 1;
            }
            "--source" => {
                source = Some(tool::parse_proc(val())?);
                i += 1;
            }
            "--target" => {
                targets.push(tool::parse_proc(val())?);
                i += 1;
            }
            "--info" => {
                info.push(tool::parse_info(val())?);
                i += 1;
            }
            c if code.is_none() && !c.starts_with("--") => code = Some(tool::parse_code(c)?),
            c if code.is_none() && c.parse::<i32>().is_ok() => code = Some(tool::parse_code(c)?),
            _ => usage(),
        }
        i += 1;
    }
    let code = code.unwrap_or_else(|| usage());
    if !targets.is_empty() {
        range = fastpmix::DataRange::CUSTOM;
        info.push(fastpmix::Info::new(
            fastpmix::types::attrs::PMIX_EVENT_CUSTOM_RANGE,
            targets,
        ));
    }
    let source = source.unwrap_or(fastpmix::Proc::SMS);
    tool::notify(&addr, code, range, source, info)?;
    println!("event {code} sent (range {range:?})");
    Ok(0)
}
