//! Attribute keys of the Standard's "Event Notification" and "Job Management
//! and Reporting" chapters (plus the few they use from elsewhere), with their
//! documented value types, and the check that rejects a wrongly-typed value.
//!
//! Two deliberate deviations from the chapter text, both documented in
//! docs/openpmix-differences.md:
//! - `PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT` is `"pmix.jctrl.ckpttime"` (the Standard
//!   repeats the `_SIGNAL` key; OpenPMIx master fixed it).
//! - `PMIX_EVENT_JOB_LEVEL` / `PMIX_EVENT_ENVIRO_LEVEL` (RFC0002) have no key in
//!   OpenPMIx 4.2; fastpmix uses `"pmix.evjob"` / `"pmix.evenv"`.

#![allow(missing_docs)] // each constant's doc is generated: its key and type

use super::fasthash::FastMap;
use super::{DataArray, Info, Key, Status, Value};
use std::sync::LazyLock;

/// The value type an attribute documents, and which `Value`s satisfy it.
///
/// Integer attributes accept any integer-typed value that fits (C callers load
/// `PMIX_INT` where `uint32_t` is documented all the time); floats accept
/// float or double; flags accept `Bool`; void attributes accept anything a C
/// caller may load with a NULL pointer (`Undef`, `Pointer`, `Bool`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AttrType {
    /// `bool`.
    Bool,
    /// `void`: presence is the information.
    Void,
    /// `void *`.
    Pointer,
    /// `char*`.
    Str,
    /// `int`.
    Int,
    /// `int32_t`.
    Int32,
    /// `uint16_t`.
    Uint16,
    /// `uint32_t`.
    Uint32,
    /// `uint64_t`.
    Uint64,
    /// `size_t`.
    Size,
    /// `pid_t`.
    Pid,
    /// `pmix_rank_t`.
    RankT,
    /// `float` (or double).
    Float,
    /// `time_t`.
    Time,
    /// `struct timeval`.
    Timeval,
    /// `pmix_proc_t`.
    Proc,
    /// A `pmix_proc_t` or a data array of them.
    ProcList,
    /// `pmix_data_array_t` of any element type.
    DataArray,
    /// `pmix_data_array_t` of `pmix_info_t`.
    InfoArray,
    /// `pmix_byte_object_t`.
    ByteObject,
    /// `pmix_data_range_t`.
    DataRange,
    /// `pmix_scope_t` (a `uint8_t`).
    Scope,
    /// `bool` in the Standard, `pmix_status_t` in RFC0015's example.
    BoolOrStatus,
    /// `bool` in the Standard, `char*` in RFC0015.
    BoolOrStr,
    /// `char*` (RFC0015 `PMIX_MONITOR_FILE`) or a data array (Standard).
    StrOrArray,
}

fn int_fits(v: &Value, lo: i128, hi: i128) -> bool {
    v.as_integer().is_some_and(|i| (lo..=hi).contains(&i))
}

impl AttrType {
    /// Does `v` satisfy this type?
    pub fn accepts(self, v: &Value) -> bool {
        use AttrType as T;
        match self {
            T::Bool => matches!(v, Value::Bool(_)),
            T::Void => matches!(v, Value::Undef | Value::Pointer(_) | Value::Bool(_)),
            T::Pointer => matches!(v, Value::Pointer(_) | Value::Undef),
            T::Str => matches!(v, Value::String(_)),
            T::Int | T::Int32 | T::Pid => int_fits(v, i32::MIN.into(), i32::MAX.into()),
            T::Uint16 => int_fits(v, 0, u16::MAX.into()),
            T::Uint32 | T::RankT => int_fits(v, 0, u32::MAX.into()),
            T::Uint64 | T::Size => int_fits(v, 0, u64::MAX.into()),
            T::Time => int_fits(v, i64::MIN.into(), i64::MAX.into()),
            T::Float => matches!(v, Value::Float(_) | Value::Double(_)),
            T::Timeval => matches!(v, Value::Timeval(_)),
            T::Proc => matches!(v, Value::Proc(_)),
            T::ProcList => matches!(v, Value::Proc(_) | Value::DataArray(DataArray::Proc(_))),
            T::DataArray => matches!(v, Value::DataArray(_)),
            T::InfoArray => matches!(v, Value::DataArray(DataArray::Info(_))),
            T::ByteObject => matches!(v, Value::ByteObject(_)),
            T::DataRange => matches!(v, Value::DataRange(_)) || int_fits(v, 0, u8::MAX.into()),
            T::Scope => int_fits(v, 0, u8::MAX.into()),
            T::BoolOrStatus => matches!(v, Value::Bool(_) | Value::Status(_)),
            T::BoolOrStr => matches!(v, Value::Bool(_) | Value::String(_)),
            T::StrOrArray => matches!(v, Value::String(_) | Value::DataArray(_)),
        }
    }
}

/// One row of the attribute table.
#[derive(Clone, Copy, Debug)]
pub struct AttrSpec {
    /// The Standard's macro name.
    pub name: &'static str,
    /// The key string.
    pub key: &'static str,
    /// The documented value type.
    pub ty: AttrType,
}

macro_rules! attributes {
    ($( $name:ident = $key:literal, $ty:ident; )*) => {
        $(
            #[doc = concat!("`", $key, "` (", stringify!($ty), ")")]
            pub const $name: Key = Key::from_static($key);
        )*
        /// Every attribute this module declares, in the chapters' order.
        pub static ALL: &[AttrSpec] = &[
            $( AttrSpec { name: stringify!($name), key: $key, ty: AttrType::$ty }, )*
        ];
    };
}

attributes! {

    // ---- Event handler registration and notification (Standard, Event Notification)
    PMIX_EVENT_HDLR_NAME = "pmix.evname", Str;
    PMIX_EVENT_HDLR_FIRST = "pmix.evfirst", Bool;
    PMIX_EVENT_HDLR_LAST = "pmix.evlast", Bool;
    PMIX_EVENT_HDLR_FIRST_IN_CATEGORY = "pmix.evfirstcat", Bool;
    PMIX_EVENT_HDLR_LAST_IN_CATEGORY = "pmix.evlastcat", Bool;
    PMIX_EVENT_HDLR_BEFORE = "pmix.evbefore", Str;
    PMIX_EVENT_HDLR_AFTER = "pmix.evafter", Str;
    PMIX_EVENT_HDLR_PREPEND = "pmix.evprepend", Bool;
    PMIX_EVENT_HDLR_APPEND = "pmix.evappend", Bool;
    PMIX_EVENT_CUSTOM_RANGE = "pmix.evrange", ProcList;
    PMIX_EVENT_AFFECTED_PROC = "pmix.evproc", Proc;
    PMIX_EVENT_AFFECTED_PROCS = "pmix.evaffected", ProcList;
    PMIX_EVENT_NON_DEFAULT = "pmix.evnondef", Bool;
    // OpenPMIx's (not in the Standard's chapter): the handler is removed
    // once it has been called.
    PMIX_EVENT_ONESHOT = "pmix.evone", Bool;
    PMIX_EVENT_RETURN_OBJECT = "pmix.evobject", Pointer;
    PMIX_EVENT_DO_NOT_CACHE = "pmix.evnocache", Bool;
    PMIX_EVENT_PROXY = "pmix.evproxy", Proc;
    PMIX_EVENT_TEXT_MESSAGE = "pmix.evtext", Str;
    PMIX_EVENT_TIMESTAMP = "pmix.evtstamp", Time;

    // ---- Fault tolerance (Standard, Event Notification)
    PMIX_EVENT_TERMINATE_SESSION = "pmix.evterm.sess", Bool;
    PMIX_EVENT_TERMINATE_JOB = "pmix.evterm.job", Bool;
    PMIX_EVENT_TERMINATE_NODE = "pmix.evterm.node", Bool;
    PMIX_EVENT_TERMINATE_PROC = "pmix.evterm.proc", Bool;
    PMIX_EVENT_ACTION_TIMEOUT = "pmix.evtimeout", Int;

    // ---- Hybrid programming (Standard, Event Notification; keys as in OpenPMIx 4.2)
    PMIX_MODEL_PHASE_NAME = "pmix.mdl.phase", Str;
    PMIX_MODEL_PHASE_TYPE = "pmix.mdl.ptype", Str;

    // ---- Event attributes named by RFC0002/RFC0018 and the Standard's general rules
    PMIX_RANGE = "pmix.range", DataRange;
    PMIX_EVENT_NO_TERMINATION = "pmix.evnoterm", Bool;
    PMIX_EVENT_WANT_TERMINATION = "pmix.evterm", Bool;
    PMIX_EVENT_JOB_LEVEL = "pmix.evjob", Bool;
    PMIX_EVENT_ENVIRO_LEVEL = "pmix.evenv", Bool;

    // ---- Allocation (Standard, Job Management)
    PMIX_ALLOC_REQ_ID = "pmix.alloc.reqid", Str;
    PMIX_ALLOC_ID = "pmix.alloc.id", Str;
    PMIX_ALLOC_QUEUE = "pmix.alloc.queue", Str;
    PMIX_ALLOC_NUM_NODES = "pmix.alloc.nnodes", Uint64;
    PMIX_ALLOC_NODE_LIST = "pmix.alloc.nlist", Str;
    PMIX_ALLOC_NUM_CPUS = "pmix.alloc.ncpus", Uint64;
    PMIX_ALLOC_NUM_CPU_LIST = "pmix.alloc.ncpulist", Str;
    PMIX_ALLOC_CPU_LIST = "pmix.alloc.cpulist", Str;
    PMIX_ALLOC_MEM_SIZE = "pmix.alloc.msize", Float;
    PMIX_ALLOC_FABRIC = "pmix.alloc.net", DataArray;
    PMIX_ALLOC_FABRIC_ID = "pmix.alloc.netid", Str;
    PMIX_ALLOC_BANDWIDTH = "pmix.alloc.bw", Float;
    PMIX_ALLOC_FABRIC_QOS = "pmix.alloc.netqos", Str;
    PMIX_ALLOC_TIME = "pmix.alloc.time", Uint32;
    PMIX_ALLOC_FABRIC_TYPE = "pmix.alloc.nettype", Str;
    PMIX_ALLOC_FABRIC_PLANE = "pmix.alloc.netplane", Str;
    PMIX_ALLOC_FABRIC_ENDPTS = "pmix.alloc.endpts", Size;
    PMIX_ALLOC_FABRIC_ENDPTS_NODE = "pmix.alloc.endpts.nd", Size;
    PMIX_ALLOC_FABRIC_SEC_KEY = "pmix.alloc.nsec", ByteObject;

    // ---- Job control (Standard, Job Management)
    PMIX_JOB_CTRL_ID = "pmix.jctrl.id", Str;
    PMIX_JOB_CTRL_PAUSE = "pmix.jctrl.pause", Bool;
    PMIX_JOB_CTRL_RESUME = "pmix.jctrl.resume", Bool;
    PMIX_JOB_CTRL_CANCEL = "pmix.jctrl.cancel", Str;
    PMIX_JOB_CTRL_KILL = "pmix.jctrl.kill", Bool;
    PMIX_JOB_CTRL_RESTART = "pmix.jctrl.restart", Str;
    PMIX_JOB_CTRL_CHECKPOINT = "pmix.jctrl.ckpt", Str;
    PMIX_JOB_CTRL_CHECKPOINT_EVENT = "pmix.jctrl.ckptev", BoolOrStatus;
    PMIX_JOB_CTRL_CHECKPOINT_SIGNAL = "pmix.jctrl.ckptsig", Int;
    PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT = "pmix.jctrl.ckpttime", Int;
    PMIX_JOB_CTRL_CHECKPOINT_METHOD = "pmix.jctrl.ckmethod", DataArray;
    PMIX_JOB_CTRL_SIGNAL = "pmix.jctrl.sig", Int;
    PMIX_JOB_CTRL_PROVISION = "pmix.jctrl.pvn", Str;
    PMIX_JOB_CTRL_PROVISION_IMAGE = "pmix.jctrl.pvnimg", Str;
    PMIX_JOB_CTRL_PREEMPTIBLE = "pmix.jctrl.preempt", Bool;
    PMIX_JOB_CTRL_TERMINATE = "pmix.jctrl.term", Bool;
    PMIX_REGISTER_CLEANUP = "pmix.reg.cleanup", Str;
    PMIX_REGISTER_CLEANUP_DIR = "pmix.reg.cleanupdir", Str;
    PMIX_CLEANUP_RECURSIVE = "pmix.clnup.recurse", Bool;
    PMIX_CLEANUP_EMPTY = "pmix.clnup.empty", Bool;
    PMIX_CLEANUP_IGNORE = "pmix.clnup.ignore", Str;
    PMIX_CLEANUP_LEAVE_TOPDIR = "pmix.clnup.lvtop", Bool;

    // ---- Monitoring (Standard, Job Management)
    PMIX_MONITOR_ID = "pmix.monitor.id", Str;
    PMIX_MONITOR_CANCEL = "pmix.monitor.cancel", Str;
    PMIX_MONITOR_APP_CONTROL = "pmix.monitor.appctrl", Bool;
    PMIX_MONITOR_HEARTBEAT = "pmix.monitor.mbeat", Void;
    PMIX_SEND_HEARTBEAT = "pmix.monitor.beat", Void;
    PMIX_MONITOR_HEARTBEAT_TIME = "pmix.monitor.btime", Uint32;
    PMIX_MONITOR_HEARTBEAT_DROPS = "pmix.monitor.bdrop", Uint32;
    PMIX_MONITOR_FILE_CHANGES = "pmix.monitor.fchg", DataArray;
    PMIX_MONITOR_TARGET_FILES = "pmix.monitor.fmon", StrOrArray;
    PMIX_MONITOR_FILE_SIZE = "pmix.monitor.fsize", Bool;
    PMIX_MONITOR_FILE_ACCESS = "pmix.monitor.faccess", BoolOrStr;
    PMIX_MONITOR_FILE_MODIFY = "pmix.monitor.fmod", BoolOrStr;
    PMIX_MONITOR_FILE_CHECK_TIME = "pmix.monitor.ftime", Uint32;
    PMIX_MONITOR_FILE_DROPS = "pmix.monitor.fdrop", Uint32;
    PMIX_MONITOR_TARGET_PROCS = "pmix.monitor.tgtproc", DataArray;
    PMIX_MONITOR_TARGET_PIDS = "pmix.monitor.tgtpid", DataArray;
    PMIX_MONITOR_TARGET_NODES = "pmix.monitor.tgtnode", DataArray;
    PMIX_MONITOR_TARGET_NODEIDS = "pmix.monitor.tgtndids", DataArray;
    PMIX_MONITOR_TARGET_DISKS = "pmix.monitor.tgtdks", DataArray;
    PMIX_MONITOR_TARGET_NETS = "pmix.monitor.tgtnets", DataArray;
    PMIX_MONITOR_RESOURCE_RATE = "pmix.monitor.resrate", Uint32;
    PMIX_MONITOR_LOCAL_ONLY = "pmix.monitor.local", Bool;
    PMIX_MONITOR_PROC_RESOURCE_USAGE = "pmix.monitor.presuse", DataArray;
    PMIX_MONITOR_NODE_RESOURCE_USAGE = "pmix.monitor.ndresuse", DataArray;
    PMIX_MONITOR_DISK_RESOURCE_USAGE = "pmix.monitor.dkresuse", DataArray;
    PMIX_MONITOR_NETWORK_RESOURCE_USAGE = "pmix.monitor.netresuse", DataArray;

    // ---- Resource usage (Standard, Job Management)
    PMIX_PROC_RESOURCE_USAGE = "pmix.proc.res", InfoArray;
    PMIX_PROC_OS_STATE = "pmix.proc.osstate", Str;
    PMIX_PROC_TIME = "pmix.proc.time", Timeval;
    PMIX_PROC_PERCENT_CPU = "pmix.proc.pcpu", Float;
    PMIX_PROC_PRIORITY = "pmix.proc.pri", Int32;
    PMIX_PROC_NUM_THREADS = "pmix.proc.nthr", Uint16;
    PMIX_PROC_PSS = "pmix.proc.pss", Float;
    PMIX_PROC_VSIZE = "pmix.proc.vsize", Float;
    PMIX_PROC_RSS = "pmix.proc.rss", Float;
    PMIX_PROC_PEAK_VSIZE = "pmix.proc.pkvsize", Float;
    PMIX_PROC_CPU = "pmix.proc.cpu", Uint16;
    PMIX_PROC_SAMPLE_TIME = "pmix.proc.samptime", Time;
    PMIX_DISK_ID = "pmix.disk.id", Str;
    PMIX_DISK_RESOURCE_USAGE = "pmix.disk.res", InfoArray;
    PMIX_DISK_READ_COMPLETED = "pmix.disk.rdscomp", Uint64;
    PMIX_DISK_READ_MERGED = "pmix.disk.rdsmrgd", Uint64;
    PMIX_DISK_READ_SECTORS = "pmix.disk.rdsct", Uint64;
    PMIX_DISK_READ_MILLISEC = "pmix.disk.rdms", Uint64;
    PMIX_DISK_WRITE_COMPLETED = "pmix.disk.wtscomp", Uint64;
    PMIX_DISK_WRITE_MERGED = "pmix.disk.wtsmrgd", Uint64;
    PMIX_DISK_WRITE_SECTORS = "pmix.disk.wtsct", Uint64;
    PMIX_DISK_WRITE_MILLISEC = "pmix.disk.wtms", Uint64;
    PMIX_DISK_IO_IN_PROGRESS = "pmix.disk.ios", Uint64;
    PMIX_DISK_IO_MILLISEC = "pmix.disk.ioms", Uint64;
    PMIX_DISK_IO_WEIGHTED = "pmix.disk.iowght", Uint64;
    PMIX_DISK_SAMPLE_TIME = "pmix.disk.samptime", Time;
    PMIX_NETWORK_ID = "pmix.net.id", Str;
    PMIX_NETWORK_RESOURCE_USAGE = "pmix.net.res", InfoArray;
    PMIX_NET_RECVD_BYTES = "pmix.net.rcb", Uint64;
    PMIX_NET_RECVD_PCKTS = "pmix.net.rcp", Uint64;
    PMIX_NET_RECVD_ERRS = "pmix.net.rcerr", Uint64;
    PMIX_NET_SENT_BYTES = "pmix.net.sntb", Uint64;
    PMIX_NET_SENT_PCKTS = "pmix.net.sntp", Uint64;
    PMIX_NET_SENT_ERRS = "pmix.net.snterr", Uint64;
    PMIX_NET_SAMPLE_TIME = "pmix.net.samptime", Time;
    PMIX_NODE_RESOURCE_USAGE = "pmix.node.res", InfoArray;
    PMIX_NODE_LOAD_AVG = "pmix.node.la", Float;
    PMIX_NODE_LOAD_AVG5 = "pmix.node.la5", Float;
    PMIX_NODE_LOAD_AVG15 = "pmix.node.la15", Float;
    PMIX_NODE_MEM_TOTAL = "pmix.node.mtot", Float;
    PMIX_NODE_MEM_FREE = "pmix.node.mfree", Float;
    PMIX_NODE_MEM_BUFFERS = "pmix.node.mbuf", Float;
    PMIX_NODE_MEM_CACHED = "pmix.node.mcache", Float;
    PMIX_NODE_MEM_SWAP_CACHED = "pmix.node.mswpc", Float;
    PMIX_NODE_MEM_SWAP_TOTAL = "pmix.node.mswpt", Float;
    PMIX_NODE_MEM_SWAP_FREE = "pmix.node.mswpfree", Float;
    PMIX_NODE_MEM_MAPPED = "pmix.node.mmap", Float;
    PMIX_NODE_SAMPLE_TIME = "pmix.node.samptime", Time;

    // ---- Logging (Standard, Job Management)
    PMIX_LOG_SOURCE = "pmix.log.source", Proc;
    PMIX_LOG_STDERR = "pmix.log.stderr", Str;
    PMIX_LOG_STDOUT = "pmix.log.stdout", Str;
    PMIX_LOG_SYSLOG = "pmix.log.syslog", Str;
    PMIX_LOG_LOCAL_SYSLOG = "pmix.log.lsys", Str;
    PMIX_LOG_GLOBAL_SYSLOG = "pmix.log.gsys", Str;
    PMIX_LOG_SYSLOG_PRI = "pmix.log.syspri", Int;
    PMIX_LOG_TIMESTAMP = "pmix.log.tstmp", Time;
    PMIX_LOG_GENERATE_TIMESTAMP = "pmix.log.gtstmp", Bool;
    PMIX_LOG_TAG_OUTPUT = "pmix.log.tag", Bool;
    PMIX_LOG_TIMESTAMP_OUTPUT = "pmix.log.tsout", Bool;
    PMIX_LOG_XML_OUTPUT = "pmix.log.xml", Bool;
    PMIX_LOG_ONCE = "pmix.log.once", Bool;
    PMIX_LOG_EMAIL = "pmix.log.email", InfoArray;
    PMIX_LOG_EMAIL_ADDR = "pmix.log.emaddr", Str;
    PMIX_LOG_EMAIL_SENDER_ADDR = "pmix.log.emfaddr", Str;
    PMIX_LOG_EMAIL_SUBJECT = "pmix.log.emsub", Str;
    PMIX_LOG_MSG = "pmix.log.msg", Str;
    PMIX_LOG_BLOB = "pmix.log.blob", ByteObject;
    PMIX_LOG_EMAIL_SERVER = "pmix.log.esrvr", Str;
    PMIX_LOG_EMAIL_SRVR_PORT = "pmix.log.esrvrprt", Int32;
    PMIX_LOG_GLOBAL_DATASTORE = "pmix.log.gstore", DataArray;
    PMIX_LOG_JOB_RECORD = "pmix.log.jrec", Str;

    // ---- Job management attributes named by RFC0015 and the chapter's examples
    PMIX_MONITOR_FILE = "pmix.monitor.fmon", StrOrArray;
    PMIX_LOG_EMAIL_MSG = "pmix.log.emmsg", Str;
    PMIX_SERVER_ENABLE_MONITORING = "pmix.srv.monitor", Bool;
    PMIX_USERID = "pmix.euid", Uint32;
    PMIX_GRPID = "pmix.egid", Uint32;
    PMIX_COLLECT_DATA = "pmix.collect", Bool;
    PMIX_UNIV_SIZE = "pmix.univ.size", Uint32;
    PMIX_NSPACE = "pmix.nspace", Str;
    PMIX_RANK = "pmix.rank", RankT;
    PMIX_PROCID = "pmix.procid", Proc;
    PMIX_HOSTNAME = "pmix.hname", Str;
    PMIX_NODEID = "pmix.nodeid", Uint32;
    PMIX_PROC_PID = "pmix.ppid", Pid;
    PMIX_CMD_LINE = "pmix.cmd.line", Str;

    // ---- Job information a launcher registers and `PMIx_Get` reads, and the
    // fence's timeout (keys and types as OpenPMIx 4.2.2's pmix_common.h)
    PMIX_TIMEOUT = "pmix.timeout", Int;

    // ---- Data exchange (Standard, Data Access and Sharing)
    PMIX_OPTIONAL = "pmix.optional", Bool;
    PMIX_IMMEDIATE = "pmix.immediate", Bool;
    PMIX_GET_REFRESH_CACHE = "pmix.get.refresh", Bool;
    PMIX_DATA_SCOPE = "pmix.scope", Scope;
    PMIX_JOBID = "pmix.jobid", Str;
    PMIX_JOB_SIZE = "pmix.job.size", Uint32;
    PMIX_LOCAL_SIZE = "pmix.local.size", Uint32;
    PMIX_MAX_PROCS = "pmix.max.size", Uint32;
    PMIX_APP_SIZE = "pmix.app.size", Uint32;
    PMIX_NUM_NODES = "pmix.num.nodes", Uint32;
    PMIX_LOCAL_RANK = "pmix.lrank", Uint16;
    PMIX_NODE_RANK = "pmix.nrank", Uint16;
    PMIX_APPNUM = "pmix.appnum", Uint32;
    PMIX_LOCAL_PEERS = "pmix.lpeers", Str;
    PMIX_LOCAL_CPUSETS = "pmix.lcpus", Str;
    PMIX_CPUSET = "pmix.cpuset", Str;
    PMIX_NODE_MAP = "pmix.nmap", Str;
    PMIX_PROC_MAP = "pmix.pmap", Str;
    PMIX_TMPDIR = "pmix.tmpdir", Str;
    PMIX_PROC_INFO_ARRAY = "pmix.pdata", InfoArray;
    PMIX_EXIT_CODE = "pmix.exit.code", Int;
    PMIX_NODE_LIST = "pmix.nlist", Str;
    PMIX_NODE_SIZE = "pmix.node.size", Uint32;
    PMIX_LOCALLDR = "pmix.lldr", RankT;
    PMIX_APPLDR = "pmix.aldr", RankT;
    PMIX_GLOBAL_RANK = "pmix.grank", RankT;
    PMIX_APP_RANK = "pmix.apprank", RankT;
    PMIX_JOB_NUM_APPS = "pmix.job.napps", Uint32;
    PMIX_NSDIR = "pmix.nsdir", Str;
    PMIX_PROCDIR = "pmix.pdir", Str;
    PMIX_LOCALITY_STRING = "pmix.locstr", Str;
    PMIX_SPAWNED = "pmix.spawned", Bool;
    PMIX_ANL_MAP = "pmix.anlmap", Str;
    PMIX_NODE_INFO_ARRAY = "pmix.node.arr", InfoArray;

    // ---- PMIx_Query_info: query keys and qualifiers (keys as OpenPMIx
    // 4.2.2's pmix_common.h; the type is the answer's, or the qualifier's)
    PMIX_QUERY_NAMESPACES = "pmix.qry.ns", Str;
    PMIX_QUERY_NAMESPACE_INFO = "pmix.qry.nsinfo", DataArray;
    PMIX_QUERY_PROC_TABLE = "pmix.qry.ptable", DataArray;
    PMIX_QUERY_LOCAL_PROC_TABLE = "pmix.qry.lptable", DataArray;
    PMIX_QUERY_MEMORY_USAGE = "pmix.qry.mem", DataArray;
    PMIX_QUERY_ALLOC_STATUS = "pmix.query.alloc", Str;
    PMIX_QUERY_NUM_PSETS = "pmix.qry.psetnum", Size;
    PMIX_QUERY_PSET_NAMES = "pmix.qry.psets", Str;
    PMIX_QUERY_ATTRIBUTE_SUPPORT = "pmix.qry.attrs", DataArray;
    PMIX_QUERY_REFRESH_CACHE = "pmix.qry.rfsh", Bool;
    PMIX_QUERY_LOCAL_ONLY = "pmix.qry.local", Bool;
    PMIX_CLIENT_ATTRIBUTES = "pmix.client.attrs", Str;
    PMIX_SERVER_ATTRIBUTES = "pmix.srvr.attrs", Str;

    // ---- PMIx_server_init (a resource manager embedding the server)
    PMIX_SERVER_TMPDIR = "pmix.srvr.tmpdir", Str;
    PMIX_SERVER_NSPACE = "pmix.srv.nspace", Str;
    PMIX_SERVER_RANK = "pmix.srv.rank", RankT;

    // ---- PMIx_Init and PMIx_server_init: the progress thread's binding
    PMIX_BIND_PROGRESS_THREAD = "pmix.bind.pt", Str;
    PMIX_BIND_REQUIRED = "pmix.bind.reqd", Bool;
}

/// `PMIX_PROC_DATA`: the older Standard name of [`PMIX_PROC_INFO_ARRAY`]
/// (same key). Not a row of [`ALL`]: keys there are unique.
pub const PMIX_PROC_DATA: Key = PMIX_PROC_INFO_ARRAY;

static BY_KEY: LazyLock<FastMap<&'static str, (&'static str, AttrType)>> = LazyLock::new(|| {
    let mut m = FastMap::with_capacity_and_hasher(ALL.len(), Default::default());
    for a in ALL {
        m.entry(a.key).or_insert((a.key, a.ty));
    }
    m
});

/// The documented type of `key`, if it is one of ours.
pub fn expected_type(key: &str) -> Option<AttrType> {
    BY_KEY.get(key).map(|e| e.1)
}

/// The table's row of `key`: its own copy of the text (a [`Key`] that
/// never allocates) and its type.
pub(crate) fn table_row(key: &str) -> Option<&'static (&'static str, AttrType)> {
    BY_KEY.get(key)
}

/// `PMIX_ERR_BAD_PARAM` if `info` carries a known key with a value of the
/// wrong type, or nests info arrays deeper than
/// [`MAX_INFO_NESTING`](super::MAX_INFO_NESTING). Unknown keys pass: the
/// Standard says they are ignored (or, when `PMIX_INFO_REQD`, refused by
/// whoever must act on them).
pub fn check(info: &Info) -> Result<(), Status> {
    match info.key.attr_type() {
        Some(t) if !t.accepts(&info.value) => Err(Status::ERR_BAD_PARAM),
        _ if super::nested_too_deep(std::slice::from_ref(info)) => Err(Status::ERR_BAD_PARAM),
        _ => Ok(()),
    }
}

/// [`check`] over a list.
pub fn check_all(infos: &[Info]) -> Result<(), Status> {
    infos.iter().try_for_each(check)
}
