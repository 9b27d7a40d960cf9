//! `pmix_status_t`: status codes and event codes share one i32 space.

use std::fmt;

/// A PMIx status or event code (`pmix_status_t`, a C `int`).
///
/// Any i32 is a valid event code (applications may define their own); the
/// associated constants are the values the Standard and OpenPMIx 4.2 define.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Status(pub i32);

macro_rules! statuses {
    ($( $(#[$m:meta])* $name:ident = $val:expr; )*) => {
        impl Status {
            $( $(#[$m])* pub const $name: Status = Status($val); )*
        }
        /// (value, standard name) for every named constant; the first entry
        /// for a value is its canonical name.
        const NAMES: &[(i32, &str)] = &[ $( ($val, concat!("PMIX_", stringify!($name))), )* ];
    };
}

statuses! {
    /// Success.
    SUCCESS = 0;
    /// General error.
    ERROR = -1;
    /// A debugger released the process.
    DEBUGGER_RELEASE = -3;
    /// Process restarted.
    ERR_PROC_RESTART = -4;
    /// Process checkpointed.
    ERR_PROC_CHECKPOINT = -5;
    /// Process migrated.
    ERR_PROC_MIGRATE = -6;
    /// Process aborted (deprecated).
    ERR_PROC_ABORTED = -7;
    /// Process requested abort.
    ERR_PROC_REQUESTED_ABORT = -8;
    /// Server failed the request (deprecated).
    ERR_SERVER_FAILED_REQUEST = -10;
    /// Already exists.
    ERR_EXISTS = -11;
    /// Invalid credential.
    ERR_INVALID_CRED = -12;
    /// The operation would block (e.g. a blocking call from the progress thread).
    ERR_WOULD_BLOCK = -15;
    /// Unknown data type.
    ERR_UNKNOWN_DATA_TYPE = -16;
    /// Type mismatch.
    ERR_TYPE_MISMATCH = -18;
    /// No permission.
    ERR_NO_PERMISSIONS = -23;
    /// Timed out.
    ERR_TIMEOUT = -24;
    /// Unreachable.
    ERR_UNREACH = -25;
    /// A parameter is invalid.
    ERR_BAD_PARAM = -27;
    /// Resource busy.
    ERR_RESOURCE_BUSY = -28;
    /// Out of resources.
    ERR_OUT_OF_RESOURCE = -29;
    /// Initialisation failed.
    ERR_INIT = -31;
    /// Out of memory.
    ERR_NOMEM = -32;
    /// Not found.
    ERR_NOT_FOUND = -46;
    /// Not supported.
    ERR_NOT_SUPPORTED = -47;
    /// Communication failure.
    ERR_COMM_FAILURE = -49;
    /// Conflicting cleanup directives.
    ERR_CONFLICTING_CLEANUP_DIRECTIVES = -51;
    /// Partial success.
    ERR_PARTIAL_SUCCESS = -52;
    /// Duplicate key.
    ERR_DUPLICATE_KEY = -53;
    /// Process set defined.
    PROCESS_SET_DEFINE = -55;
    /// Process set deleted.
    PROCESS_SET_DELETE = -56;
    /// Ready for debug.
    READY_FOR_DEBUG = -58;
    /// Parameter value not supported.
    ERR_PARAM_VALUE_NOT_SUPPORTED = -59;
    /// Empty.
    ERR_EMPTY = -60;
    /// Lost connection (to the server, a peer or a client).
    ERR_LOST_CONNECTION = -61;
    /// Exists outside the scope.
    ERR_EXISTS_OUTSIDE_SCOPE = -62;
    /// Not available (deprecated).
    ERR_NOT_AVAILABLE = -64;
    /// Base of the v2.x error constants (RFC0015).
    ERR_V2X_BASE = -100;
    /// Lost connection to server (deprecated).
    ERR_LOST_CONNECTION_TO_SERVER = -101;
    /// Lost peer connection (deprecated).
    ERR_LOST_PEER_CONNECTION = -102;
    /// Lost connection to client (deprecated).
    ERR_LOST_CONNECTION_TO_CLIENT = -103;
    /// Query partially succeeded.
    QUERY_PARTIAL_SUCCESS = -104;
    /// Allocation complete (deprecated).
    NOTIFY_ALLOC_COMPLETE = -105;
    /// Checkpoint requested (event).
    JCTRL_CHECKPOINT = -106;
    /// Checkpoint complete (event).
    JCTRL_CHECKPOINT_COMPLETE = -107;
    /// Preemption alert (event).
    JCTRL_PREEMPT_ALERT = -108;
    /// Heartbeat stalled (event).
    MONITOR_HEARTBEAT_ALERT = -109;
    /// Monitored file alert (event).
    MONITOR_FILE_ALERT = -110;
    /// Process terminated.
    PROC_TERMINATED = -111;
    /// Fabric endpoints updated.
    FABRIC_UPDATE_ENDPOINTS = -113;
    /// Resource usage update (event). The Standard text says -112; OpenPMIx
    /// master, which defines it, uses -114 (see docs/openpmix-differences.md).
    MONITOR_RESUSAGE_UPDATE = -114;
    /// Event registration failed.
    ERR_EVENT_REGISTRATION = -144;
    /// A job ended (event).
    EVENT_JOB_END = -145;
    /// Deprecated name of [`Status::EVENT_JOB_END`].
    ERR_JOB_TERMINATED = -145;
    /// A programming model declared itself.
    MODEL_DECLARED = -147;
    /// Model resources.
    MODEL_RESOURCES = -151;
    /// OpenMP parallel region entered (hybrid event).
    OPENMP_PARALLEL_ENTERED = -152;
    /// OpenMP parallel region exited (hybrid event).
    OPENMP_PARALLEL_EXITED = -153;
    /// Launcher ready.
    LAUNCHER_READY = -155;
    /// Operation in progress.
    OPERATION_IN_PROGRESS = -156;
    /// The non-blocking operation completed at once; its callback will not run.
    OPERATION_SUCCEEDED = -157;
    /// Invalid operation.
    ERR_INVALID_OPERATION = -158;
    /// Group invitation.
    GROUP_INVITED = -159;
    /// Group member left.
    GROUP_LEFT = -160;
    /// Group invitation accepted.
    GROUP_INVITE_ACCEPTED = -161;
    /// Group invitation declined.
    GROUP_INVITE_DECLINED = -162;
    /// Group invitation failed.
    GROUP_INVITE_FAILED = -163;
    /// Group membership update.
    GROUP_MEMBERSHIP_UPDATE = -164;
    /// Group construction aborted.
    GROUP_CONSTRUCT_ABORT = -165;
    /// Group construction complete.
    GROUP_CONSTRUCT_COMPLETE = -166;
    /// Group leader selected.
    GROUP_LEADER_SELECTED = -167;
    /// Group leader failed.
    GROUP_LEADER_FAILED = -168;
    /// Group context id assigned.
    GROUP_CONTEXT_ID_ASSIGNED = -169;
    /// Group member failed.
    GROUP_MEMBER_FAILED = -170;
    /// Attribute registered twice.
    ERR_REPEAT_ATTR_REGISTRATION = -171;
    /// IO forwarding failure.
    ERR_IOF_FAILURE = -172;
    /// IO forwarding complete.
    ERR_IOF_COMPLETE = -173;
    /// Launch complete.
    LAUNCH_COMPLETE = -174;
    /// Fabric updated.
    FABRIC_UPDATED = -175;
    /// Fabric update pending.
    FABRIC_UPDATE_PENDING = -176;
    /// Application not executable.
    ERR_JOB_APP_NOT_EXECUTABLE = -177;
    /// No executable specified.
    ERR_JOB_NO_EXE_SPECIFIED = -178;
    /// Job failed to map.
    ERR_JOB_FAILED_TO_MAP = -179;
    /// Job canceled.
    ERR_JOB_CANCELED = -180;
    /// Job failed to launch.
    ERR_JOB_FAILED_TO_LAUNCH = -181;
    /// Job aborted.
    ERR_JOB_ABORTED = -182;
    /// Job killed by command.
    ERR_JOB_KILLED_BY_CMD = -183;
    /// Job aborted by signal.
    ERR_JOB_ABORTED_BY_SIG = -184;
    /// Job terminated without sync.
    ERR_JOB_TERM_WO_SYNC = -185;
    /// Job sensor bound exceeded.
    ERR_JOB_SENSOR_BOUND_EXCEEDED = -186;
    /// Job non-zero termination.
    ERR_JOB_NON_ZERO_TERM = -187;
    /// Job allocation failed.
    ERR_JOB_ALLOC_FAILED = -188;
    /// Job aborted by a system event.
    ERR_JOB_ABORTED_BY_SYS_EVENT = -189;
    /// Executable not found.
    ERR_JOB_EXE_NOT_FOUND = -190;
    /// A job started (event).
    EVENT_JOB_START = -191;
    /// A session started (event).
    EVENT_SESSION_START = -192;
    /// A session ended (event).
    EVENT_SESSION_END = -193;
    /// Process terminated without sync.
    ERR_PROC_TERM_WO_SYNC = -200;
    /// A process terminated (event).
    EVENT_PROC_TERMINATED = -201;
    /// Start of the system (environment) event range.
    EVENT_SYS_BASE = -230;
    /// A node went down (environment event).
    EVENT_NODE_DOWN = -231;
    /// A node was marked offline (environment event).
    EVENT_NODE_OFFLINE = -232;
    /// Working directory not found.
    ERR_JOB_WDIR_NOT_FOUND = -233;
    /// Insufficient resources.
    ERR_JOB_INSUFFICIENT_RESOURCES = -234;
    /// System operation failed.
    ERR_JOB_SYS_OP_FAILED = -235;
    /// End of the system (environment) event range.
    EVENT_SYS_OTHER = -330;
    /// Event handler: no action taken.
    EVENT_NO_ACTION_TAKEN = -331;
    /// Event handler: partial action taken.
    EVENT_PARTIAL_ACTION_TAKEN = -332;
    /// Event handler: action deferred.
    EVENT_ACTION_DEFERRED = -333;
    /// Event handler: action complete; ends the chain.
    EVENT_ACTION_COMPLETE = -334;
    /// Process killed by command.
    ERR_PROC_KILLED_BY_CMD = -400;
    /// Process failed to start.
    ERR_PROC_FAILED_TO_START = -401;
    /// Process aborted by signal.
    ERR_PROC_ABORTED_BY_SIG = -402;
    /// Process sensor bound exceeded.
    ERR_PROC_SENSOR_BOUND_EXCEEDED = -403;
    /// Process exited with non-zero status.
    ERR_EXIT_NONZERO_TERM = -404;
    /// Boundary below which external (non-PMIx) codes live.
    EXTERNAL_ERR_BASE = -3000;
    /// Internal marker of a default handler (`INT_MIN`).
    MAX_ERR_CONSTANT = i32::MIN;
    // ---- Names OpenPMIx 4.2 still declares (older or deprecated codes and
    // aliases). Listed after the canonical names, so a shared value keeps
    // its canonical name in `PMIx_Error_string`.
    /// Error already reported; print nothing more (OpenPMIx-era code).
    ERR_SILENT = -2;
    /// Deprecated alias of `DEBUGGER_RELEASE`.
    ERR_DEBUGGER_RELEASE = -3;
    /// A process is aborting (deprecated).
    ERR_PROC_ABORTING = -9;
    /// Deprecated alias of `ERR_EXISTS`.
    EXISTS = -11;
    /// Connection handshake failed (deprecated).
    ERR_HANDSHAKE_FAILED = -13;
    /// Ready for the connection handshake (deprecated).
    ERR_READY_FOR_HANDSHAKE = -14;
    /// No entry for the process (deprecated).
    ERR_PROC_ENTRY_NOT_FOUND = -17;
    /// Unpack: not enough space (deprecated).
    ERR_UNPACK_INADEQUATE_SPACE = -19;
    /// Unpack failed (deprecated).
    ERR_UNPACK_FAILURE = -20;
    /// Pack failed (deprecated).
    ERR_PACK_FAILURE = -21;
    /// Pack type mismatch (deprecated).
    ERR_PACK_MISMATCH = -22;
    /// Error given in errno (deprecated).
    ERR_IN_ERRNO = -26;
    /// Data value not found (deprecated).
    ERR_DATA_VALUE_NOT_FOUND = -30;
    /// Invalid argument (deprecated).
    ERR_INVALID_ARG = -33;
    /// Invalid key (deprecated).
    ERR_INVALID_KEY = -34;
    /// Invalid key length (deprecated).
    ERR_INVALID_KEY_LENGTH = -35;
    /// Invalid value (deprecated).
    ERR_INVALID_VAL = -36;
    /// Invalid value length (deprecated).
    ERR_INVALID_VAL_LENGTH = -37;
    /// Invalid length (deprecated).
    ERR_INVALID_LENGTH = -38;
    /// Invalid number of arguments (deprecated).
    ERR_INVALID_NUM_ARGS = -39;
    /// Invalid arguments (deprecated).
    ERR_INVALID_ARGS = -40;
    /// Invalid number parsed (deprecated).
    ERR_INVALID_NUM_PARSED = -41;
    /// Invalid key-value pair (deprecated).
    ERR_INVALID_KEYVALP = -42;
    /// Invalid size (deprecated).
    ERR_INVALID_SIZE = -43;
    /// Invalid namespace (deprecated).
    ERR_INVALID_NAMESPACE = -44;
    /// Server not available (deprecated).
    ERR_SERVER_NOT_AVAIL = -45;
    /// Not implemented (deprecated).
    ERR_NOT_IMPLEMENTED = -48;
    /// Unpack read past the end of the buffer.
    ERR_UNPACK_READ_PAST_END_OF_BUFFER = -50;
    /// Deprecated alias of `READY_FOR_DEBUG`.
    DEBUG_WAITING_FOR_NOTIFY = -58;
    /// Fatal error (deprecated).
    ERR_FATAL = -63;
    /// Value out of bounds (deprecated).
    ERR_VALUE_OUT_OF_BOUNDS = -65;
    /// File open failed (deprecated).
    ERR_FILE_OPEN_FAILURE = -67;
    /// File read failed (deprecated).
    ERR_FILE_READ_FAILURE = -68;
    /// File write failed (deprecated).
    ERR_FILE_WRITE_FAILURE = -69;
    /// Out of pipes (deprecated).
    ERR_SYS_LIMITS_PIPES = -70;
    /// Out of child processes (deprecated).
    ERR_SYS_LIMITS_CHILDREN = -71;
    /// Pipe setup failed (deprecated).
    ERR_PIPE_SETUP_FAILURE = -72;
    /// Executable not accessible (deprecated).
    ERR_EXE_NOT_ACCESSIBLE = -73;
    /// Working directory not accessible (deprecated).
    ERR_JOB_WDIR_NOT_ACCESSIBLE = -74;
    /// Out of file descriptors (deprecated).
    ERR_SYS_LIMITS_FILES = -75;
    /// Invalid termination (deprecated).
    ERR_INVALID_TERMINATION = -112;
    /// Endpoints must be updated (deprecated).
    ERR_UPDATE_ENDPOINTS = -146;
    /// Data-store action complete (deprecated).
    GDS_ACTION_COMPLETE = -148;
    /// A process connected (deprecated).
    PROC_HAS_CONNECTED = -149;
    /// A connection was requested (deprecated).
    CONNECT_REQUESTED = -150;
    /// Deprecated alias of `EVENT_SYS_BASE`.
    ERR_SYS_BASE = -230;
    /// Deprecated alias of `EVENT_NODE_DOWN`.
    ERR_NODE_DOWN = -231;
    /// Deprecated alias of `EVENT_NODE_OFFLINE`.
    ERR_NODE_OFFLINE = -232;
    /// Deprecated alias of `EVENT_SYS_OTHER`.
    ERR_SYS_OTHER = -330;
}

impl Status {
    /// The Standard's name of this code (`"PMIX_ERR_BAD_PARAM"`), if it has one.
    pub fn name(self) -> Option<&'static str> {
        NAMES.iter().find(|(v, _)| *v == self.0).map(|(_, n)| *n)
    }

    /// Every named constant, as (value, name) pairs (aliases included).
    pub fn all_named() -> impl Iterator<Item = (Status, &'static str)> {
        NAMES.iter().map(|&(v, n)| (Status(v), n))
    }

    /// `PMIX_SYSTEM_EVENT(a)`: inside the dedicated range of environment events.
    pub fn is_system_event(self) -> bool {
        Self::EVENT_SYS_OTHER.0 <= self.0 && self.0 <= Self::EVENT_SYS_BASE.0
    }

    /// `PMIX_SUCCESS`?
    pub fn is_success(self) -> bool {
        self == Self::SUCCESS
    }

    /// `Ok(())` for `PMIX_SUCCESS`, else `Err(self)`.
    pub fn into_result(self) -> Result<(), Status> {
        if self.is_success() {
            Ok(())
        } else {
            Err(self)
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "PMIX_STATUS({})", self.0),
        }
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self, self.0)
    }
}

impl std::error::Error for Status {}

impl From<Status> for i32 {
    fn from(s: Status) -> i32 {
        s.0
    }
}
