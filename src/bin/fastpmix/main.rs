//! `fastpmix`: the command-line front end (`fastpmix --help`).

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
use clap::{Args, Parser, Subcommand, ValueEnum};

/// PMIx event notification and job management over a shared-memory fast
/// path: a launcher with an embedded node server, and tools that talk to a
/// running server.
#[cfg(not(loom))]
#[derive(Parser)]
#[command(name = "fastpmix", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[cfg(not(loom))]
#[derive(Subcommand)]
enum Cmd {
    /// Run N processes of PROG under an embedded PMIx server (this node).
    ///
    /// Options come before the program: the first word that is not an
    /// option (or everything after `--`) is the program and its arguments.
    Run(RunArgs),
    /// Inject an event into a running server (as OpenPMIx's pevent).
    Notify(Box<NotifyArgs>),
    /// Show a running server's namespaces, clients, rings and cursors, and
    /// where every progress thread runs.
    Inspect(ServerArgs),
    /// The in-process event engine on its own.
    EngineDemo {
        /// Events to notify.
        #[arg(long, default_value_t = 10_000)]
        events: usize,
    },
    /// One process of the README's demo job (run it under `fastpmix run`).
    DemoClient,
}

#[cfg(not(loom))]
#[derive(Args)]
struct RunArgs {
    /// Processes to start.
    #[arg(short = 'n', long = "np", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    n: u32,
    /// Keep the job running when a process aborts.
    #[arg(long)]
    keep_going: bool,
    /// Seconds between an abnormal end's event and the job's termination.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    abort_timeout: u32,
    /// Print every routed event and the launcher's own.
    #[arg(long)]
    trace_events: bool,
    /// `core`: rank r is bound to the r-th core of the launcher's own
    /// binding, and the ranks are told (PMIX_LOCAL_CPUSETS, PMIX_CPUSET) so
    /// that no progress thread lands on a peer's core.
    #[arg(long, value_enum, default_value_t = BindTo::None)]
    bind_to: BindTo,
    /// Where the server's progress thread runs: none, auto or cpu:LIST
    /// (clients: FASTPMIX_BIND_PROGRESS in their environment).
    #[arg(long, value_name = "PLACEMENT")]
    bind_progress: Option<fastpmix::place::Placement>,
    /// The program and its arguments.
    #[arg(
        value_name = "PROG",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    prog: Vec<String>,
}

#[cfg(not(loom))]
#[derive(Clone, Copy, ValueEnum)]
enum BindTo {
    None,
    Core,
}

/// Which server a tool talks to.
#[cfg(not(loom))]
#[derive(Args)]
struct ServerArgs {
    /// The server's control socket.
    #[arg(long, value_name = "SOCKET", conflicts_with = "pid")]
    server: Option<String>,
    /// The launcher's pid (its socket is $TMPDIR/fastpmix-PID-*/ctl).
    #[arg(long)]
    pid: Option<u32>,
}

#[cfg(not(loom))]
#[derive(Args)]
struct NotifyArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// The event's range (local, namespace, session, global, rm, …).
    #[arg(long, default_value = "local", value_parser = tool::parse_range)]
    range: fastpmix::DataRange,
    /// The event's source, NS:RANK (default: the SMS).
    #[arg(long, value_name = "NS:RANK", value_parser = tool::parse_proc)]
    source: Option<fastpmix::Proc>,
    /// A target process, NS:RANK (repeat; makes the range CUSTOM).
    #[arg(long, value_name = "NS:RANK", value_parser = tool::parse_proc)]
    target: Vec<fastpmix::Proc>,
    /// An info to carry, KEY=VALUE (repeat).
    #[arg(long, value_name = "KEY=VALUE", value_parser = tool::parse_info)]
    info: Vec<fastpmix::Info>,
    /// The event code: a number or a standard name (EVENT_NODE_DOWN).
    #[arg(allow_negative_numbers = true, value_parser = tool::parse_code)]
    code: fastpmix::Status,
}

#[cfg(not(loom))]
fn main() {
    let code = match Cli::parse().cmd {
        Cmd::Run(a) => cmd_run(a),
        Cmd::Notify(a) => cmd_notify(a),
        Cmd::Inspect(s) => server_of(&s).and_then(|s| tool::inspect(&s).map(|_| 0)),
        Cmd::EngineDemo { events } => demo::demo(events).map(|_| 0).map_err(|s| s.to_string()),
        Cmd::DemoClient => democlient::main().map_err(|s| format!("demo client: {s}")),
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
fn cmd_run(a: RunArgs) -> Result<i32, String> {
    run::run(run::RunOpts {
        n: a.n,
        keep_going: a.keep_going,
        abort_timeout: a.abort_timeout,
        trace: a.trace_events,
        placement: a.bind_progress,
        bind_to_core: matches!(a.bind_to, BindTo::Core),
        prog: a.prog,
    })
}

#[cfg(not(loom))]
fn server_of(s: &ServerArgs) -> Result<std::path::PathBuf, String> {
    tool::find_server(s.server.as_deref(), s.pid)
}

#[cfg(not(loom))]
fn cmd_notify(a: Box<NotifyArgs>) -> Result<i32, String> {
    let addr = server_of(&a.server)?;
    let (mut range, mut info) = (a.range, a.info);
    if !a.target.is_empty() {
        range = fastpmix::DataRange::CUSTOM;
        info.push(fastpmix::Info::new(
            fastpmix::types::attrs::PMIX_EVENT_CUSTOM_RANGE,
            a.target,
        ));
    }
    let source = a.source.unwrap_or(fastpmix::Proc::SMS);
    tool::notify(&addr, a.code, range, source, info)?;
    println!("event {} sent (range {range:?})", a.code);
    Ok(0)
}
