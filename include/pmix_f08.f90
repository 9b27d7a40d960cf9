! fastpmix: the Fortran 2008 interface to the PMIx client calls.
!
! Written for fastpmix from the PMIx Standard's definitions and fastpmix's
! own C headers (include/pmix.h, pmix_common.h, pmix_constants.h); see
! docs/abi.md. Compile it like any module, e.g.
!     gfortran -std=f2008 -c pmix_f08.f90
! and link the program with -lfastpmix.
!
! Conventions
! * The structures are BIND(C) derived types with the C layouts (x86_64):
!   pmix_proc_t 260 bytes, pmix_value_t 32, pmix_info_t 552. Fortran has no
!   unions: pmix_value_t%data holds the 24-byte C union as three 64-bit
!   words; the pmix_value_* functions below read it by type.
! * Fortran has no unsigned integers. A C uint8/uint16/uint32 is a Fortran
!   integer(c_int8_t/c_int16_t/c_int32_t) with the same bits: ranks at and
!   above 2**31 (PMIX_RANK_WILDCARD and the other special ranks), range 255
!   and PMIX_ALLOC_EXTERNAL (128) are negative here. pmix_rank_is_valid
!   compares ranks as C does.
! * Key and message arguments are C strings: character(kind=c_char) arrays
!   ending in c_null_char. The key parameters below already end in one; a
!   Fortran string s is passed as trim(s)//c_null_char.
! * A pointer argument that C allows to be NULL (info, proc and code arrays,
!   the Notify source, cbdata, returned arrays) is type(c_ptr), by value:
!   pass c_loc(x) of a TARGET variable, or c_null_ptr. A structure the call
!   always needs (the proc of PMIx_Init and PMIx_Get, the monitor of
!   PMIx_Process_monitor) is the derived type itself.
! * Callbacks are type(c_funptr): c_funloc of a BIND(C) procedure with the
!   abstract interface below (e.g. pmix_notification_fn). A callback passed
!   in (such as the completion function of an event handler) is called
!   through a procedure pointer set with c_f_procpointer.
! * Memory the library returns (PMIx_Get values, results arrays) is released
!   with PMIx_Value_free / PMIx_Info_free, as in C.
module pmix_f08
    use, intrinsic :: iso_c_binding
    implicit none
    private :: c_strlen

    ! ---- sizes ----
    integer, parameter :: PMIX_MAX_NSLEN = 255
    integer, parameter :: PMIX_MAX_KEYLEN = 511

    ! ---- ranks (pmix_rank_t) ----
    integer(c_int32_t), parameter :: PMIX_RANK_UNDEF = -1_c_int32_t  ! UINT32_MAX
    integer(c_int32_t), parameter :: PMIX_RANK_WILDCARD = -2_c_int32_t  ! (UINT32_MAX - 1)
    integer(c_int32_t), parameter :: PMIX_RANK_LOCAL_NODE = -3_c_int32_t  ! (UINT32_MAX - 2)
    integer(c_int32_t), parameter :: PMIX_RANK_INVALID = -4_c_int32_t  ! (UINT32_MAX - 3)
    integer(c_int32_t), parameter :: PMIX_RANK_LOCAL_PEERS = -5_c_int32_t  ! (UINT32_MAX - 4)
    integer(c_int32_t), parameter :: PMIX_RANK_VALID = -51_c_int32_t  ! (UINT32_MAX - 50)

    ! ---- data ranges (pmix_data_range_t) ----
    integer(c_int8_t), parameter :: PMIX_RANGE_UNDEF = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_RM = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_LOCAL = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_NAMESPACE = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_SESSION = 4_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_GLOBAL = 5_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_CUSTOM = 6_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_PROC_LOCAL = 7_c_int8_t
    integer(c_int8_t), parameter :: PMIX_RANGE_INVALID = -1_c_int8_t  ! 255

    ! ---- allocation directives (pmix_alloc_directive_t) ----
    integer(c_int8_t), parameter :: PMIX_ALLOC_NEW = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_ALLOC_EXTEND = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_ALLOC_RELEASE = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_ALLOC_REAQUIRE = 4_c_int8_t
    integer(c_int8_t), parameter :: PMIX_ALLOC_EXTERNAL = transfer(128_c_int64_t, 0_c_int8_t)  ! 128

    ! ---- data types (pmix_data_type_t) ----
    integer(c_int16_t), parameter :: PMIX_UNDEF = 0_c_int16_t
    integer(c_int16_t), parameter :: PMIX_BOOL = 1_c_int16_t
    integer(c_int16_t), parameter :: PMIX_BYTE = 2_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STRING = 3_c_int16_t
    integer(c_int16_t), parameter :: PMIX_SIZE = 4_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PID = 5_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INT = 6_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INT8 = 7_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INT16 = 8_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INT32 = 9_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INT64 = 10_c_int16_t
    integer(c_int16_t), parameter :: PMIX_UINT = 11_c_int16_t
    integer(c_int16_t), parameter :: PMIX_UINT8 = 12_c_int16_t
    integer(c_int16_t), parameter :: PMIX_UINT16 = 13_c_int16_t
    integer(c_int16_t), parameter :: PMIX_UINT32 = 14_c_int16_t
    integer(c_int16_t), parameter :: PMIX_UINT64 = 15_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FLOAT = 16_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DOUBLE = 17_c_int16_t
    integer(c_int16_t), parameter :: PMIX_TIMEVAL = 18_c_int16_t
    integer(c_int16_t), parameter :: PMIX_TIME = 19_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STATUS = 20_c_int16_t
    integer(c_int16_t), parameter :: PMIX_VALUE = 21_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC = 22_c_int16_t
    integer(c_int16_t), parameter :: PMIX_APP = 23_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INFO = 24_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PDATA = 25_c_int16_t
    integer(c_int16_t), parameter :: PMIX_BYTE_OBJECT = 27_c_int16_t
    integer(c_int16_t), parameter :: PMIX_KVAL = 28_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PERSIST = 30_c_int16_t
    integer(c_int16_t), parameter :: PMIX_POINTER = 31_c_int16_t
    integer(c_int16_t), parameter :: PMIX_SCOPE = 32_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DATA_RANGE = 33_c_int16_t
    integer(c_int16_t), parameter :: PMIX_COMMAND = 34_c_int16_t
    integer(c_int16_t), parameter :: PMIX_INFO_DIRECTIVES = 35_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DATA_TYPE = 36_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_STATE = 37_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_INFO = 38_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DATA_ARRAY = 39_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_RANK = 40_c_int16_t
    integer(c_int16_t), parameter :: PMIX_QUERY = 41_c_int16_t
    integer(c_int16_t), parameter :: PMIX_COMPRESSED_STRING = 42_c_int16_t
    integer(c_int16_t), parameter :: PMIX_ALLOC_DIRECTIVE = 43_c_int16_t
    integer(c_int16_t), parameter :: PMIX_IOF_CHANNEL = 45_c_int16_t
    integer(c_int16_t), parameter :: PMIX_ENVAR = 46_c_int16_t
    integer(c_int16_t), parameter :: PMIX_REGATTR = 48_c_int16_t
    integer(c_int16_t), parameter :: PMIX_JOB_STATE = 50_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_NSPACE = 60_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DATA_BUFFER = 65_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DATA_TYPE_MAX = 500_c_int16_t

    ! ---- info flags (pmix_info_directives_t) ----
    integer(c_int32_t), parameter :: PMIX_INFO_REQD = 1_c_int32_t
    integer(c_int32_t), parameter :: PMIX_INFO_ARRAY_END = 2_c_int32_t
    integer(c_int32_t), parameter :: PMIX_INFO_REQD_PROCESSED = 4_c_int32_t
    integer(c_int32_t), parameter :: PMIX_INFO_QUALIFIER = 8_c_int32_t
    integer(c_int32_t), parameter :: PMIX_INFO_PERSISTENT = 16_c_int32_t

    ! ---- persistence (pmix_persistence_t) and scope (pmix_scope_t) ----
    integer(c_int8_t), parameter :: PMIX_PERSIST_INDEF = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PERSIST_FIRST_READ = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PERSIST_PROC = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PERSIST_APP = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PERSIST_SESSION = 4_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PERSIST_INVALID = -1_c_int8_t  ! UINT8_MAX
    integer(c_int8_t), parameter :: PMIX_SCOPE_UNDEF = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_LOCAL = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_REMOTE = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_GLOBAL = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_INTERNAL = 4_c_int8_t

    ! ---- process states (pmix_proc_state_t), the Standard's numbers ----
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_UNDEF = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_PREPPED = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_LAUNCH_UNDERWAY = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_RESTART = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_TERMINATE = 4_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_RUNNING = 5_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_CONNECTED = 6_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_UNTERMINATED = 15_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_TERMINATED = 20_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_ERROR = 50_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_KILLED_BY_CMD = 51_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_ABORTED = 52_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_FAILED_TO_START = 53_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_ABORTED_BY_SIG = 54_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_TERM_WO_SYNC = 55_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_COMM_FAILED = 56_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_SENSOR_BOUND_EXCEEDED = 57_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_CALLED_ABORT = 58_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_HEARTBEAT_FAILED = 59_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_MIGRATING = 60_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_CANNOT_RESTART = 61_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_TERM_NON_ZERO = 62_c_int8_t
    integer(c_int8_t), parameter :: PMIX_PROC_STATE_FAILED_TO_LAUNCH = 63_c_int8_t

    ! ---- status and event codes (pmix_status_t) ----
    integer(c_int), parameter :: PMIX_SUCCESS = 0_c_int
    integer(c_int), parameter :: PMIX_ERROR = -1_c_int
    integer(c_int), parameter :: PMIX_DEBUGGER_RELEASE = -3_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_RESTART = -4_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_CHECKPOINT = -5_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_MIGRATE = -6_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_ABORTED = -7_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_REQUESTED_ABORT = -8_c_int
    integer(c_int), parameter :: PMIX_ERR_SERVER_FAILED_REQUEST = -10_c_int
    integer(c_int), parameter :: PMIX_ERR_EXISTS = -11_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_CRED = -12_c_int
    integer(c_int), parameter :: PMIX_ERR_WOULD_BLOCK = -15_c_int
    integer(c_int), parameter :: PMIX_ERR_UNKNOWN_DATA_TYPE = -16_c_int
    integer(c_int), parameter :: PMIX_ERR_TYPE_MISMATCH = -18_c_int
    integer(c_int), parameter :: PMIX_ERR_NO_PERMISSIONS = -23_c_int
    integer(c_int), parameter :: PMIX_ERR_TIMEOUT = -24_c_int
    integer(c_int), parameter :: PMIX_ERR_UNREACH = -25_c_int
    integer(c_int), parameter :: PMIX_ERR_BAD_PARAM = -27_c_int
    integer(c_int), parameter :: PMIX_ERR_RESOURCE_BUSY = -28_c_int
    integer(c_int), parameter :: PMIX_ERR_OUT_OF_RESOURCE = -29_c_int
    integer(c_int), parameter :: PMIX_ERR_INIT = -31_c_int
    integer(c_int), parameter :: PMIX_ERR_NOMEM = -32_c_int
    integer(c_int), parameter :: PMIX_ERR_NOT_FOUND = -46_c_int
    integer(c_int), parameter :: PMIX_ERR_NOT_SUPPORTED = -47_c_int
    integer(c_int), parameter :: PMIX_ERR_COMM_FAILURE = -49_c_int
    integer(c_int), parameter :: PMIX_ERR_CONFLICTING_CLEANUP_DIRECTIVES = -51_c_int
    integer(c_int), parameter :: PMIX_ERR_PARTIAL_SUCCESS = -52_c_int
    integer(c_int), parameter :: PMIX_ERR_DUPLICATE_KEY = -53_c_int
    integer(c_int), parameter :: PMIX_PROCESS_SET_DEFINE = -55_c_int
    integer(c_int), parameter :: PMIX_PROCESS_SET_DELETE = -56_c_int
    integer(c_int), parameter :: PMIX_READY_FOR_DEBUG = -58_c_int
    integer(c_int), parameter :: PMIX_ERR_PARAM_VALUE_NOT_SUPPORTED = -59_c_int
    integer(c_int), parameter :: PMIX_ERR_EMPTY = -60_c_int
    integer(c_int), parameter :: PMIX_ERR_LOST_CONNECTION = -61_c_int
    integer(c_int), parameter :: PMIX_ERR_EXISTS_OUTSIDE_SCOPE = -62_c_int
    integer(c_int), parameter :: PMIX_ERR_NOT_AVAILABLE = -64_c_int
    integer(c_int), parameter :: PMIX_ERR_V2X_BASE = -100_c_int
    integer(c_int), parameter :: PMIX_ERR_LOST_CONNECTION_TO_SERVER = -101_c_int
    integer(c_int), parameter :: PMIX_ERR_LOST_PEER_CONNECTION = -102_c_int
    integer(c_int), parameter :: PMIX_ERR_LOST_CONNECTION_TO_CLIENT = -103_c_int
    integer(c_int), parameter :: PMIX_QUERY_PARTIAL_SUCCESS = -104_c_int
    integer(c_int), parameter :: PMIX_NOTIFY_ALLOC_COMPLETE = -105_c_int
    integer(c_int), parameter :: PMIX_JCTRL_CHECKPOINT = -106_c_int
    integer(c_int), parameter :: PMIX_JCTRL_CHECKPOINT_COMPLETE = -107_c_int
    integer(c_int), parameter :: PMIX_JCTRL_PREEMPT_ALERT = -108_c_int
    integer(c_int), parameter :: PMIX_MONITOR_HEARTBEAT_ALERT = -109_c_int
    integer(c_int), parameter :: PMIX_MONITOR_FILE_ALERT = -110_c_int
    integer(c_int), parameter :: PMIX_PROC_TERMINATED = -111_c_int
    integer(c_int), parameter :: PMIX_FABRIC_UPDATE_ENDPOINTS = -113_c_int
    integer(c_int), parameter :: PMIX_MONITOR_RESUSAGE_UPDATE = -114_c_int
    integer(c_int), parameter :: PMIX_ERR_EVENT_REGISTRATION = -144_c_int
    integer(c_int), parameter :: PMIX_EVENT_JOB_END = -145_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_TERMINATED = -145_c_int
    integer(c_int), parameter :: PMIX_MODEL_DECLARED = -147_c_int
    integer(c_int), parameter :: PMIX_MODEL_RESOURCES = -151_c_int
    integer(c_int), parameter :: PMIX_OPENMP_PARALLEL_ENTERED = -152_c_int
    integer(c_int), parameter :: PMIX_OPENMP_PARALLEL_EXITED = -153_c_int
    integer(c_int), parameter :: PMIX_LAUNCHER_READY = -155_c_int
    integer(c_int), parameter :: PMIX_OPERATION_IN_PROGRESS = -156_c_int
    integer(c_int), parameter :: PMIX_OPERATION_SUCCEEDED = -157_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_OPERATION = -158_c_int
    integer(c_int), parameter :: PMIX_GROUP_INVITED = -159_c_int
    integer(c_int), parameter :: PMIX_GROUP_LEFT = -160_c_int
    integer(c_int), parameter :: PMIX_GROUP_INVITE_ACCEPTED = -161_c_int
    integer(c_int), parameter :: PMIX_GROUP_INVITE_DECLINED = -162_c_int
    integer(c_int), parameter :: PMIX_GROUP_INVITE_FAILED = -163_c_int
    integer(c_int), parameter :: PMIX_GROUP_MEMBERSHIP_UPDATE = -164_c_int
    integer(c_int), parameter :: PMIX_GROUP_CONSTRUCT_ABORT = -165_c_int
    integer(c_int), parameter :: PMIX_GROUP_CONSTRUCT_COMPLETE = -166_c_int
    integer(c_int), parameter :: PMIX_GROUP_LEADER_SELECTED = -167_c_int
    integer(c_int), parameter :: PMIX_GROUP_LEADER_FAILED = -168_c_int
    integer(c_int), parameter :: PMIX_GROUP_CONTEXT_ID_ASSIGNED = -169_c_int
    integer(c_int), parameter :: PMIX_GROUP_MEMBER_FAILED = -170_c_int
    integer(c_int), parameter :: PMIX_ERR_REPEAT_ATTR_REGISTRATION = -171_c_int
    integer(c_int), parameter :: PMIX_ERR_IOF_FAILURE = -172_c_int
    integer(c_int), parameter :: PMIX_ERR_IOF_COMPLETE = -173_c_int
    integer(c_int), parameter :: PMIX_LAUNCH_COMPLETE = -174_c_int
    integer(c_int), parameter :: PMIX_FABRIC_UPDATED = -175_c_int
    integer(c_int), parameter :: PMIX_FABRIC_UPDATE_PENDING = -176_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_APP_NOT_EXECUTABLE = -177_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_NO_EXE_SPECIFIED = -178_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_FAILED_TO_MAP = -179_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_CANCELED = -180_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_FAILED_TO_LAUNCH = -181_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_ABORTED = -182_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_KILLED_BY_CMD = -183_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_ABORTED_BY_SIG = -184_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_TERM_WO_SYNC = -185_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_SENSOR_BOUND_EXCEEDED = -186_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_NON_ZERO_TERM = -187_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_ALLOC_FAILED = -188_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_ABORTED_BY_SYS_EVENT = -189_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_EXE_NOT_FOUND = -190_c_int
    integer(c_int), parameter :: PMIX_EVENT_JOB_START = -191_c_int
    integer(c_int), parameter :: PMIX_EVENT_SESSION_START = -192_c_int
    integer(c_int), parameter :: PMIX_EVENT_SESSION_END = -193_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_TERM_WO_SYNC = -200_c_int
    integer(c_int), parameter :: PMIX_EVENT_PROC_TERMINATED = -201_c_int
    integer(c_int), parameter :: PMIX_EVENT_SYS_BASE = -230_c_int
    integer(c_int), parameter :: PMIX_EVENT_NODE_DOWN = -231_c_int
    integer(c_int), parameter :: PMIX_EVENT_NODE_OFFLINE = -232_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_WDIR_NOT_FOUND = -233_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_INSUFFICIENT_RESOURCES = -234_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_SYS_OP_FAILED = -235_c_int
    integer(c_int), parameter :: PMIX_EVENT_SYS_OTHER = -330_c_int
    integer(c_int), parameter :: PMIX_EVENT_NO_ACTION_TAKEN = -331_c_int
    integer(c_int), parameter :: PMIX_EVENT_PARTIAL_ACTION_TAKEN = -332_c_int
    integer(c_int), parameter :: PMIX_EVENT_ACTION_DEFERRED = -333_c_int
    integer(c_int), parameter :: PMIX_EVENT_ACTION_COMPLETE = -334_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_KILLED_BY_CMD = -400_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_FAILED_TO_START = -401_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_ABORTED_BY_SIG = -402_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED = -403_c_int
    integer(c_int), parameter :: PMIX_ERR_EXIT_NONZERO_TERM = -404_c_int
    integer(c_int), parameter :: PMIX_EXTERNAL_ERR_BASE = -3000_c_int
    integer(c_int), parameter :: PMIX_MAX_ERR_CONSTANT = transfer(2147483648_c_int64_t, 0_c_int)  ! INT_MIN

    ! ---- attribute keys (value type in the comment) ----
    ! Event handler registration and notification (Standard, Event Notification)
    character(len=*), parameter :: PMIX_EVENT_HDLR_NAME = "pmix.evname"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_EVENT_HDLR_FIRST = "pmix.evfirst"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_HDLR_LAST = "pmix.evlast"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_HDLR_FIRST_IN_CATEGORY = "pmix.evfirstcat"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_HDLR_LAST_IN_CATEGORY = "pmix.evlastcat"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_HDLR_BEFORE = "pmix.evbefore"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_EVENT_HDLR_AFTER = "pmix.evafter"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_EVENT_HDLR_PREPEND = "pmix.evprepend"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_HDLR_APPEND = "pmix.evappend"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_CUSTOM_RANGE = "pmix.evrange"//c_null_char  ! ProcList
    character(len=*), parameter :: PMIX_EVENT_AFFECTED_PROC = "pmix.evproc"//c_null_char  ! Proc
    character(len=*), parameter :: PMIX_EVENT_AFFECTED_PROCS = "pmix.evaffected"//c_null_char  ! ProcList
    character(len=*), parameter :: PMIX_EVENT_NON_DEFAULT = "pmix.evnondef"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_ONESHOT = "pmix.evone"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_RETURN_OBJECT = "pmix.evobject"//c_null_char  ! Pointer
    character(len=*), parameter :: PMIX_EVENT_DO_NOT_CACHE = "pmix.evnocache"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_PROXY = "pmix.evproxy"//c_null_char  ! Proc
    character(len=*), parameter :: PMIX_EVENT_TEXT_MESSAGE = "pmix.evtext"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_EVENT_TIMESTAMP = "pmix.evtstamp"//c_null_char  ! Time
    ! Fault tolerance (Standard, Event Notification)
    character(len=*), parameter :: PMIX_EVENT_TERMINATE_SESSION = "pmix.evterm.sess"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_TERMINATE_JOB = "pmix.evterm.job"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_TERMINATE_NODE = "pmix.evterm.node"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_TERMINATE_PROC = "pmix.evterm.proc"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_ACTION_TIMEOUT = "pmix.evtimeout"//c_null_char  ! Int
    ! Hybrid programming (Standard, Event Notification; keys as in OpenPMIx 4.2)
    character(len=*), parameter :: PMIX_MODEL_PHASE_NAME = "pmix.mdl.phase"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_MODEL_PHASE_TYPE = "pmix.mdl.ptype"//c_null_char  ! Str
    ! Event attributes named by RFC0002/RFC0018 and the Standard's general rules
    character(len=*), parameter :: PMIX_RANGE = "pmix.range"//c_null_char  ! DataRange
    character(len=*), parameter :: PMIX_EVENT_NO_TERMINATION = "pmix.evnoterm"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_WANT_TERMINATION = "pmix.evterm"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_JOB_LEVEL = "pmix.evjob"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_EVENT_ENVIRO_LEVEL = "pmix.evenv"//c_null_char  ! Bool
    ! Allocation (Standard, Job Management)
    character(len=*), parameter :: PMIX_ALLOC_REQ_ID = "pmix.alloc.reqid"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_ID = "pmix.alloc.id"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_QUEUE = "pmix.alloc.queue"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_NUM_NODES = "pmix.alloc.nnodes"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_ALLOC_NODE_LIST = "pmix.alloc.nlist"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_NUM_CPUS = "pmix.alloc.ncpus"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_ALLOC_NUM_CPU_LIST = "pmix.alloc.ncpulist"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_CPU_LIST = "pmix.alloc.cpulist"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_MEM_SIZE = "pmix.alloc.msize"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_ALLOC_FABRIC = "pmix.alloc.net"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_ID = "pmix.alloc.netid"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_BANDWIDTH = "pmix.alloc.bw"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_QOS = "pmix.alloc.netqos"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_TIME = "pmix.alloc.time"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_TYPE = "pmix.alloc.nettype"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_PLANE = "pmix.alloc.netplane"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_ENDPTS = "pmix.alloc.endpts"//c_null_char  ! Size
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_ENDPTS_NODE = "pmix.alloc.endpts.nd"//c_null_char  ! Size
    character(len=*), parameter :: PMIX_ALLOC_FABRIC_SEC_KEY = "pmix.alloc.nsec"//c_null_char  ! ByteObject
    ! Job control (Standard, Job Management)
    character(len=*), parameter :: PMIX_JOB_CTRL_ID = "pmix.jctrl.id"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_PAUSE = "pmix.jctrl.pause"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_JOB_CTRL_RESUME = "pmix.jctrl.resume"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_JOB_CTRL_CANCEL = "pmix.jctrl.cancel"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_KILL = "pmix.jctrl.kill"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_JOB_CTRL_RESTART = "pmix.jctrl.restart"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_CHECKPOINT = "pmix.jctrl.ckpt"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_CHECKPOINT_EVENT = "pmix.jctrl.ckptev"//c_null_char  ! BoolOrStatus
    character(len=*), parameter :: PMIX_JOB_CTRL_CHECKPOINT_SIGNAL = "pmix.jctrl.ckptsig"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_JOB_CTRL_CHECKPOINT_TIMEOUT = "pmix.jctrl.ckpttime"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_JOB_CTRL_CHECKPOINT_METHOD = "pmix.jctrl.ckmethod"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_JOB_CTRL_SIGNAL = "pmix.jctrl.sig"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_JOB_CTRL_PROVISION = "pmix.jctrl.pvn"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_PROVISION_IMAGE = "pmix.jctrl.pvnimg"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_CTRL_PREEMPTIBLE = "pmix.jctrl.preempt"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_JOB_CTRL_TERMINATE = "pmix.jctrl.term"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_REGISTER_CLEANUP = "pmix.reg.cleanup"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_REGISTER_CLEANUP_DIR = "pmix.reg.cleanupdir"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_CLEANUP_RECURSIVE = "pmix.clnup.recurse"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_CLEANUP_EMPTY = "pmix.clnup.empty"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_CLEANUP_IGNORE = "pmix.clnup.ignore"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_CLEANUP_LEAVE_TOPDIR = "pmix.clnup.lvtop"//c_null_char  ! Bool
    ! Monitoring (Standard, Job Management)
    character(len=*), parameter :: PMIX_MONITOR_ID = "pmix.monitor.id"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_MONITOR_CANCEL = "pmix.monitor.cancel"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_MONITOR_APP_CONTROL = "pmix.monitor.appctrl"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_MONITOR_HEARTBEAT = "pmix.monitor.mbeat"//c_null_char  ! Void
    character(len=*), parameter :: PMIX_SEND_HEARTBEAT = "pmix.monitor.beat"//c_null_char  ! Void
    character(len=*), parameter :: PMIX_MONITOR_HEARTBEAT_TIME = "pmix.monitor.btime"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MONITOR_HEARTBEAT_DROPS = "pmix.monitor.bdrop"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MONITOR_FILE_CHANGES = "pmix.monitor.fchg"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_FILES = "pmix.monitor.fmon"//c_null_char  ! StrOrArray
    character(len=*), parameter :: PMIX_MONITOR_FILE_SIZE = "pmix.monitor.fsize"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_MONITOR_FILE_ACCESS = "pmix.monitor.faccess"//c_null_char  ! BoolOrStr
    character(len=*), parameter :: PMIX_MONITOR_FILE_MODIFY = "pmix.monitor.fmod"//c_null_char  ! BoolOrStr
    character(len=*), parameter :: PMIX_MONITOR_FILE_CHECK_TIME = "pmix.monitor.ftime"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MONITOR_FILE_DROPS = "pmix.monitor.fdrop"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MONITOR_TARGET_PROCS = "pmix.monitor.tgtproc"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_PIDS = "pmix.monitor.tgtpid"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_NODES = "pmix.monitor.tgtnode"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_NODEIDS = "pmix.monitor.tgtndids"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_DISKS = "pmix.monitor.tgtdks"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_TARGET_NETS = "pmix.monitor.tgtnets"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_RESOURCE_RATE = "pmix.monitor.resrate"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MONITOR_LOCAL_ONLY = "pmix.monitor.local"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_MONITOR_PROC_RESOURCE_USAGE = "pmix.monitor.presuse"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_NODE_RESOURCE_USAGE = "pmix.monitor.ndresuse"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_DISK_RESOURCE_USAGE = "pmix.monitor.dkresuse"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_MONITOR_NETWORK_RESOURCE_USAGE = "pmix.monitor.netresuse"//c_null_char  ! DataArray
    ! Resource usage (Standard, Job Management)
    character(len=*), parameter :: PMIX_PROC_RESOURCE_USAGE = "pmix.proc.res"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_PROC_OS_STATE = "pmix.proc.osstate"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_PROC_TIME = "pmix.proc.time"//c_null_char  ! Timeval
    character(len=*), parameter :: PMIX_PROC_PERCENT_CPU = "pmix.proc.pcpu"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_PROC_PRIORITY = "pmix.proc.pri"//c_null_char  ! Int32
    character(len=*), parameter :: PMIX_PROC_NUM_THREADS = "pmix.proc.nthr"//c_null_char  ! Uint16
    character(len=*), parameter :: PMIX_PROC_PSS = "pmix.proc.pss"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_PROC_VSIZE = "pmix.proc.vsize"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_PROC_RSS = "pmix.proc.rss"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_PROC_PEAK_VSIZE = "pmix.proc.pkvsize"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_PROC_CPU = "pmix.proc.cpu"//c_null_char  ! Uint16
    character(len=*), parameter :: PMIX_PROC_SAMPLE_TIME = "pmix.proc.samptime"//c_null_char  ! Time
    character(len=*), parameter :: PMIX_DISK_ID = "pmix.disk.id"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_DISK_RESOURCE_USAGE = "pmix.disk.res"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_DISK_READ_COMPLETED = "pmix.disk.rdscomp"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_READ_MERGED = "pmix.disk.rdsmrgd"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_READ_SECTORS = "pmix.disk.rdsct"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_READ_MILLISEC = "pmix.disk.rdms"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_WRITE_COMPLETED = "pmix.disk.wtscomp"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_WRITE_MERGED = "pmix.disk.wtsmrgd"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_WRITE_SECTORS = "pmix.disk.wtsct"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_WRITE_MILLISEC = "pmix.disk.wtms"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_IO_IN_PROGRESS = "pmix.disk.ios"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_IO_MILLISEC = "pmix.disk.ioms"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_IO_WEIGHTED = "pmix.disk.iowght"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_DISK_SAMPLE_TIME = "pmix.disk.samptime"//c_null_char  ! Time
    character(len=*), parameter :: PMIX_NETWORK_ID = "pmix.net.id"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_NETWORK_RESOURCE_USAGE = "pmix.net.res"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_NET_RECVD_BYTES = "pmix.net.rcb"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_RECVD_PCKTS = "pmix.net.rcp"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_RECVD_ERRS = "pmix.net.rcerr"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_SENT_BYTES = "pmix.net.sntb"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_SENT_PCKTS = "pmix.net.sntp"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_SENT_ERRS = "pmix.net.snterr"//c_null_char  ! Uint64
    character(len=*), parameter :: PMIX_NET_SAMPLE_TIME = "pmix.net.samptime"//c_null_char  ! Time
    character(len=*), parameter :: PMIX_NODE_RESOURCE_USAGE = "pmix.node.res"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_NODE_LOAD_AVG = "pmix.node.la"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_LOAD_AVG5 = "pmix.node.la5"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_LOAD_AVG15 = "pmix.node.la15"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_TOTAL = "pmix.node.mtot"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_FREE = "pmix.node.mfree"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_BUFFERS = "pmix.node.mbuf"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_CACHED = "pmix.node.mcache"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_SWAP_CACHED = "pmix.node.mswpc"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_SWAP_TOTAL = "pmix.node.mswpt"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_SWAP_FREE = "pmix.node.mswpfree"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_MEM_MAPPED = "pmix.node.mmap"//c_null_char  ! Float
    character(len=*), parameter :: PMIX_NODE_SAMPLE_TIME = "pmix.node.samptime"//c_null_char  ! Time
    ! Logging (Standard, Job Management)
    character(len=*), parameter :: PMIX_LOG_SOURCE = "pmix.log.source"//c_null_char  ! Proc
    character(len=*), parameter :: PMIX_LOG_STDERR = "pmix.log.stderr"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_STDOUT = "pmix.log.stdout"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_SYSLOG = "pmix.log.syslog"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_LOCAL_SYSLOG = "pmix.log.lsys"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_GLOBAL_SYSLOG = "pmix.log.gsys"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_SYSLOG_PRI = "pmix.log.syspri"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_LOG_TIMESTAMP = "pmix.log.tstmp"//c_null_char  ! Time
    character(len=*), parameter :: PMIX_LOG_GENERATE_TIMESTAMP = "pmix.log.gtstmp"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_LOG_TAG_OUTPUT = "pmix.log.tag"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_LOG_TIMESTAMP_OUTPUT = "pmix.log.tsout"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_LOG_XML_OUTPUT = "pmix.log.xml"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_LOG_ONCE = "pmix.log.once"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_LOG_EMAIL = "pmix.log.email"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_LOG_EMAIL_ADDR = "pmix.log.emaddr"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_EMAIL_SENDER_ADDR = "pmix.log.emfaddr"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_EMAIL_SUBJECT = "pmix.log.emsub"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_MSG = "pmix.log.msg"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_BLOB = "pmix.log.blob"//c_null_char  ! ByteObject
    character(len=*), parameter :: PMIX_LOG_EMAIL_SERVER = "pmix.log.esrvr"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOG_EMAIL_SRVR_PORT = "pmix.log.esrvrprt"//c_null_char  ! Int32
    character(len=*), parameter :: PMIX_LOG_GLOBAL_DATASTORE = "pmix.log.gstore"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_LOG_JOB_RECORD = "pmix.log.jrec"//c_null_char  ! Str
    ! Job management attributes named by RFC0015 and the chapter's examples
    character(len=*), parameter :: PMIX_MONITOR_FILE = "pmix.monitor.fmon"//c_null_char  ! StrOrArray
    character(len=*), parameter :: PMIX_LOG_EMAIL_MSG = "pmix.log.emmsg"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_SERVER_ENABLE_MONITORING = "pmix.srv.monitor"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_USERID = "pmix.euid"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_GRPID = "pmix.egid"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_COLLECT_DATA = "pmix.collect"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_UNIV_SIZE = "pmix.univ.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_NSPACE = "pmix.nspace"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_RANK = "pmix.rank"//c_null_char  ! RankT
    character(len=*), parameter :: PMIX_PROCID = "pmix.procid"//c_null_char  ! Proc
    character(len=*), parameter :: PMIX_HOSTNAME = "pmix.hname"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_NODEID = "pmix.nodeid"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_PROC_PID = "pmix.ppid"//c_null_char  ! Pid
    character(len=*), parameter :: PMIX_CMD_LINE = "pmix.cmd.line"//c_null_char  ! Str
    ! Job information a launcher registers and PMIx_Get reads
    character(len=*), parameter :: PMIX_TIMEOUT = "pmix.timeout"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_JOBID = "pmix.jobid"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_JOB_SIZE = "pmix.job.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_LOCAL_SIZE = "pmix.local.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_MAX_PROCS = "pmix.max.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_APP_SIZE = "pmix.app.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_NUM_NODES = "pmix.num.nodes"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_LOCAL_RANK = "pmix.lrank"//c_null_char  ! Uint16
    character(len=*), parameter :: PMIX_NODE_RANK = "pmix.nrank"//c_null_char  ! Uint16
    character(len=*), parameter :: PMIX_APPNUM = "pmix.appnum"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_LOCAL_PEERS = "pmix.lpeers"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOCAL_CPUSETS = "pmix.lcpus"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_CPUSET = "pmix.cpuset"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_NODE_MAP = "pmix.nmap"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_PROC_MAP = "pmix.pmap"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_TMPDIR = "pmix.tmpdir"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_PROC_INFO_ARRAY = "pmix.pdata"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_EXIT_CODE = "pmix.exit.code"//c_null_char  ! Int
    character(len=*), parameter :: PMIX_NODE_LIST = "pmix.nlist"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_NODE_SIZE = "pmix.node.size"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_LOCALLDR = "pmix.lldr"//c_null_char  ! RankT
    character(len=*), parameter :: PMIX_APPLDR = "pmix.aldr"//c_null_char  ! RankT
    character(len=*), parameter :: PMIX_GLOBAL_RANK = "pmix.grank"//c_null_char  ! RankT
    character(len=*), parameter :: PMIX_APP_RANK = "pmix.apprank"//c_null_char  ! RankT
    character(len=*), parameter :: PMIX_JOB_NUM_APPS = "pmix.job.napps"//c_null_char  ! Uint32
    character(len=*), parameter :: PMIX_NSDIR = "pmix.nsdir"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_PROCDIR = "pmix.pdir"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_LOCALITY_STRING = "pmix.locstr"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_SPAWNED = "pmix.spawned"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_ANL_MAP = "pmix.anlmap"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_NODE_INFO_ARRAY = "pmix.node.arr"//c_null_char  ! InfoArray
    character(len=*), parameter :: PMIX_QUERY_NAMESPACES = "pmix.qry.ns"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_QUERY_NAMESPACE_INFO = "pmix.qry.nsinfo"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_QUERY_PROC_TABLE = "pmix.qry.ptable"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_QUERY_LOCAL_PROC_TABLE = "pmix.qry.lptable"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_QUERY_MEMORY_USAGE = "pmix.qry.mem"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_QUERY_ALLOC_STATUS = "pmix.query.alloc"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_QUERY_NUM_PSETS = "pmix.qry.psetnum"//c_null_char  ! Size
    character(len=*), parameter :: PMIX_QUERY_PSET_NAMES = "pmix.qry.psets"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_QUERY_ATTRIBUTE_SUPPORT = "pmix.qry.attrs"//c_null_char  ! DataArray
    character(len=*), parameter :: PMIX_QUERY_REFRESH_CACHE = "pmix.qry.rfsh"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_QUERY_LOCAL_ONLY = "pmix.qry.local"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_CLIENT_ATTRIBUTES = "pmix.client.attrs"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_SERVER_ATTRIBUTES = "pmix.srvr.attrs"//c_null_char  ! Str
    ! PMIx_server_init (a resource manager embedding the server)
    character(len=*), parameter :: PMIX_SERVER_TMPDIR = "pmix.srvr.tmpdir"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_SERVER_NSPACE = "pmix.srv.nspace"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_SERVER_RANK = "pmix.srv.rank"//c_null_char  ! RankT
    ! PMIx_Init and PMIx_server_init: the progress thread's binding
    character(len=*), parameter :: PMIX_BIND_PROGRESS_THREAD = "pmix.bind.pt"//c_null_char  ! Str
    character(len=*), parameter :: PMIX_BIND_REQUIRED = "pmix.bind.reqd"//c_null_char  ! Bool
    character(len=*), parameter :: PMIX_PROC_DATA = PMIX_PROC_INFO_ARRAY

    ! ---- fastpmix's own event codes and info keys (docs/abi.md) ----
    integer(c_int), parameter :: FASTPMIX_EVENTS_LOST = -3001_c_int
    integer(c_int), parameter :: FASTPMIX_ALLOC_EXPIRING = -3002_c_int
    character(len=*), parameter :: FASTPMIX_EVENTS_LOST_COUNT = "fastpmix.evlost.count"//c_null_char  ! Uint64
    character(len=*), parameter :: FASTPMIX_REASON = "fastpmix.reason"//c_null_char  ! Str
    character(len=*), parameter :: FASTPMIX_ALLOC_REMAINING = "fastpmix.alloc.remaining"//c_null_char  ! Uint32
    character(len=*), parameter :: FASTPMIX_CACHE_SIZE = "fastpmix.srv.cache.size"//c_null_char  ! integer
    character(len=*), parameter :: FASTPMIX_TERM_GRACE_MS = "fastpmix.srv.term.grace.ms"//c_null_char  ! integer

    ! ---- declared for source compatibility, not acted on by fastpmix
    ! (status codes OpenPMIx 4.2 still declares, then src/types/names.rs)
    integer(c_int), parameter :: PMIX_CONNECT_REQUESTED = -150_c_int
    integer(c_int), parameter :: PMIX_DEBUG_WAITING_FOR_NOTIFY = -58_c_int
    integer(c_int), parameter :: PMIX_ERR_DATA_VALUE_NOT_FOUND = -30_c_int
    integer(c_int), parameter :: PMIX_ERR_DEBUGGER_RELEASE = -3_c_int
    integer(c_int), parameter :: PMIX_ERR_EXE_NOT_ACCESSIBLE = -73_c_int
    integer(c_int), parameter :: PMIX_ERR_FATAL = -63_c_int
    integer(c_int), parameter :: PMIX_ERR_FILE_OPEN_FAILURE = -67_c_int
    integer(c_int), parameter :: PMIX_ERR_FILE_READ_FAILURE = -68_c_int
    integer(c_int), parameter :: PMIX_ERR_FILE_WRITE_FAILURE = -69_c_int
    integer(c_int), parameter :: PMIX_ERR_HANDSHAKE_FAILED = -13_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_ARG = -33_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_ARGS = -40_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_KEY = -34_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_KEYVALP = -42_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_KEY_LENGTH = -35_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_LENGTH = -38_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_NAMESPACE = -44_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_NUM_ARGS = -39_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_NUM_PARSED = -41_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_SIZE = -43_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_TERMINATION = -112_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_VAL = -36_c_int
    integer(c_int), parameter :: PMIX_ERR_INVALID_VAL_LENGTH = -37_c_int
    integer(c_int), parameter :: PMIX_ERR_IN_ERRNO = -26_c_int
    integer(c_int), parameter :: PMIX_ERR_JOB_WDIR_NOT_ACCESSIBLE = -74_c_int
    integer(c_int), parameter :: PMIX_ERR_NODE_DOWN = -231_c_int
    integer(c_int), parameter :: PMIX_ERR_NODE_OFFLINE = -232_c_int
    integer(c_int), parameter :: PMIX_ERR_NOT_IMPLEMENTED = -48_c_int
    integer(c_int), parameter :: PMIX_ERR_PACK_FAILURE = -21_c_int
    integer(c_int), parameter :: PMIX_ERR_PACK_MISMATCH = -22_c_int
    integer(c_int), parameter :: PMIX_ERR_PIPE_SETUP_FAILURE = -72_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_ABORTING = -9_c_int
    integer(c_int), parameter :: PMIX_ERR_PROC_ENTRY_NOT_FOUND = -17_c_int
    integer(c_int), parameter :: PMIX_ERR_READY_FOR_HANDSHAKE = -14_c_int
    integer(c_int), parameter :: PMIX_ERR_SERVER_NOT_AVAIL = -45_c_int
    integer(c_int), parameter :: PMIX_ERR_SILENT = -2_c_int
    integer(c_int), parameter :: PMIX_ERR_SYS_BASE = -230_c_int
    integer(c_int), parameter :: PMIX_ERR_SYS_LIMITS_CHILDREN = -71_c_int
    integer(c_int), parameter :: PMIX_ERR_SYS_LIMITS_FILES = -75_c_int
    integer(c_int), parameter :: PMIX_ERR_SYS_LIMITS_PIPES = -70_c_int
    integer(c_int), parameter :: PMIX_ERR_SYS_OTHER = -330_c_int
    integer(c_int), parameter :: PMIX_ERR_UNPACK_FAILURE = -20_c_int
    integer(c_int), parameter :: PMIX_ERR_UNPACK_INADEQUATE_SPACE = -19_c_int
    integer(c_int), parameter :: PMIX_ERR_UNPACK_READ_PAST_END_OF_BUFFER = -50_c_int
    integer(c_int), parameter :: PMIX_ERR_UPDATE_ENDPOINTS = -146_c_int
    integer(c_int), parameter :: PMIX_ERR_VALUE_OUT_OF_BOUNDS = -65_c_int
    integer(c_int), parameter :: PMIX_EXISTS = -11_c_int
    integer(c_int), parameter :: PMIX_GDS_ACTION_COMPLETE = -148_c_int
    integer(c_int), parameter :: PMIX_PROC_HAS_CONNECTED = -149_c_int
    integer(c_int32_t), parameter :: PMIX_APP_WILDCARD = -1_c_int32_t
    integer(c_int16_t), parameter :: PMIX_BUFFER = 26_c_int16_t
    integer(c_int16_t), parameter :: PMIX_COMPRESSED_BYTE_OBJECT = 59_c_int16_t
    integer(c_int16_t), parameter :: PMIX_COORD = 47_c_int16_t
    integer(c_int8_t), parameter :: PMIX_COORD_LOGICAL_VIEW = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_COORD_PHYSICAL_VIEW = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_COORD_VIEW_UNDEF = 0_c_int8_t
    integer(c_int), parameter :: PMIX_CPUBIND_PROCESS = 0_c_int
    integer(c_int), parameter :: PMIX_CPUBIND_THREAD = 1_c_int
    integer(c_int16_t), parameter :: PMIX_DEVICE_DIST = 54_c_int16_t
    integer(c_int16_t), parameter :: PMIX_DEVTYPE = 57_c_int16_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_BLOCK = 1_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_COPROC = 32_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_DMA = 16_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_GPU = 2_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_NETWORK = 4_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_OPENFABRICS = 8_c_int64_t
    integer(c_int64_t), parameter :: PMIX_DEVTYPE_UNKNOWN = 0_c_int64_t
    integer(c_int16_t), parameter :: PMIX_DISK_STATS = 62_c_int16_t
    integer(c_int16_t), parameter :: PMIX_ENDPOINT = 55_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_ALL_CHANNELS = 255_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_NO_CHANNELS = 0_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_STDDIAG_CHANNEL = 8_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_STDERR_CHANNEL = 4_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_STDIN_CHANNEL = 1_c_int16_t
    integer(c_int16_t), parameter :: PMIX_FWD_STDOUT_CHANNEL = 2_c_int16_t
    integer(c_int16_t), parameter :: PMIX_GEOMETRY = 53_c_int16_t
    integer(c_int32_t), parameter :: PMIX_INFO_DIR_RESERVED = -65536_c_int32_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_AWAITING_ALLOC = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_CONNECTED = 5_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_LAUNCH_UNDERWAY = 2_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_PREPPED = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_RUNNING = 3_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_SUSPENDED = 4_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_TERMINATED = 20_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_TERMINATED_WITH_ERROR = 50_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_UNDEF = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_JOB_STATE_UNTERMINATED = 15_c_int8_t
    integer(c_int8_t), parameter :: PMIX_LINK_DOWN = 1_c_int8_t
    integer(c_int8_t), parameter :: PMIX_LINK_STATE = 51_c_int8_t
    integer(c_int8_t), parameter :: PMIX_LINK_STATE_UNKNOWN = 0_c_int8_t
    integer(c_int8_t), parameter :: PMIX_LINK_UP = 2_c_int8_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_NONLOCAL = transfer(32768_c_int32_t, 0_c_int16_t)  ! 0x8000
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_CORE = 2_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_HWTHREAD = 1_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_L1CACHE = 4_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_L2CACHE = 8_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_L3CACHE = 16_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_NODE = 16384_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_NUMA = 64_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_SHARE_PACKAGE = 32_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCALITY_UNKNOWN = 0_c_int16_t
    integer(c_int16_t), parameter :: PMIX_LOCTYPE = 58_c_int16_t
    integer(c_int16_t), parameter :: PMIX_NET_STATS = 63_c_int16_t
    integer(c_int16_t), parameter :: PMIX_NODE_STATS = 64_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_CPUSET = 52_c_int16_t
    integer(c_int16_t), parameter :: PMIX_PROC_STATS = 61_c_int16_t
    integer(c_int16_t), parameter :: PMIX_REGEX = 49_c_int16_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_CLUSTER = 16_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_JOB = 4_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_NODE = 1_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_RACK = 8_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_REMOTE = 32_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_ACCESSIBILITY_SESSION = 2_c_int64_t
    integer(c_int16_t), parameter :: PMIX_STORAGE_ACCESS_RD = 1_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STORAGE_ACCESS_RDWR = 3_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STORAGE_ACCESS_WR = 2_c_int16_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_HDD = 4_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_NVME = 16_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_PMEM = 32_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_RAM = 64_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_SSD = 8_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_TAPE = 2_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_MEDIUM_UNKNOWN = 1_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_ARCHIVE = 64_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_JOB = 8_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_NODE = 2_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_PROJECT = 32_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_SCRATCH = 16_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_SESSION = 4_c_int64_t
    integer(c_int64_t), parameter :: PMIX_STORAGE_PERSISTENCE_TEMPORARY = 1_c_int64_t
    integer(c_int16_t), parameter :: PMIX_STOR_ACCESS = 67_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STOR_ACCESS_TYPE = 69_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STOR_MEDIUM = 66_c_int16_t
    integer(c_int16_t), parameter :: PMIX_STOR_PERSIST = 68_c_int16_t
    integer(c_int16_t), parameter :: PMIX_TOPO = 56_c_int16_t
    character(len=*), parameter :: PMIX_ABORT_NON_ZERO_TERM = "pmix.abnz"//c_null_char
    character(len=*), parameter :: PMIX_ACCESS_GRPIDS = "pmix.agids"//c_null_char
    character(len=*), parameter :: PMIX_ACCESS_PERMISSIONS = "pmix.aperms"//c_null_char
    character(len=*), parameter :: PMIX_ACCESS_USERIDS = "pmix.auids"//c_null_char
    character(len=*), parameter :: PMIX_ADD_ENVAR = "pmix.envar.add"//c_null_char
    character(len=*), parameter :: PMIX_ADD_HOST = "pmix.addhost"//c_null_char
    character(len=*), parameter :: PMIX_ADD_HOSTFILE = "pmix.addhostfile"//c_null_char
    character(len=*), parameter :: PMIX_AGGREGATE_HELP = "pmix.agg.help"//c_null_char
    character(len=*), parameter :: PMIX_ALLOCATED_NODELIST = "pmix.alist"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK = "pmix.alloc.net"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_ENDPTS = "pmix.alloc.endpts"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_ENDPTS_NODE = "pmix.alloc.endpts.nd"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_ID = "pmix.alloc.netid"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_PLANE = "pmix.alloc.netplane"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_QOS = "pmix.alloc.netqos"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_SEC_KEY = "pmix.alloc.nsec"//c_null_char
    character(len=*), parameter :: PMIX_ALLOC_NETWORK_TYPE = "pmix.alloc.nettype"//c_null_char
    character(len=*), parameter :: PMIX_ALL_CLONES_PARTICIPATE = "pmix.clone.part"//c_null_char
    character(len=*), parameter :: PMIX_APPEND_ENVAR = "pmix.envar.appnd"//c_null_char
    character(len=*), parameter :: PMIX_APP_ARGV = "pmix.app.argv"//c_null_char
    character(len=*), parameter :: PMIX_APP_INFO = "pmix.app.info"//c_null_char
    character(len=*), parameter :: PMIX_APP_INFO_ARRAY = "pmix.app.arr"//c_null_char
    character(len=*), parameter :: PMIX_APP_MAP_REGEX = "pmix.apmap.regex"//c_null_char
    character(len=*), parameter :: PMIX_APP_MAP_TYPE = "pmix.apmap.type"//c_null_char
    character(len=*), parameter :: PMIX_ARCH = "pmix.arch"//c_null_char
    character(len=*), parameter :: PMIX_ATTR_UNDEF = "pmix.undef"//c_null_char
    character(len=*), parameter :: PMIX_AVAIL_PHYS_MEMORY = "pmix.pmem"//c_null_char
    character(len=*), parameter :: PMIX_BFROPS_MODULE = "pmix.bfrops.mod"//c_null_char
    character(len=*), parameter :: PMIX_BINDTO = "pmix.bindto"//c_null_char
    character(len=*), parameter :: PMIX_BREAKPOINT = "pmix.brkpnt"//c_null_char
    character(len=*), parameter :: PMIX_CLIENT_AVG_MEMORY = "pmix.cl.mem.avg"//c_null_char
    character(len=*), parameter :: PMIX_CLIENT_FUNCTIONS = "pmix.client.fns"//c_null_char
    character(len=*), parameter :: PMIX_CLUSTER_ID = "pmix.clid"//c_null_char
    character(len=*), parameter :: PMIX_COLLECTIVE_ALGO = "pmix.calgo"//c_null_char
    character(len=*), parameter :: PMIX_COLLECTIVE_ALGO_REQD = "pmix.calreqd"//c_null_char
    character(len=*), parameter :: PMIX_COLLECT_GENERATED_JOB_INFO = "pmix.collect.gen"//c_null_char
    character(len=*), parameter :: PMIX_COLOCATE_NPERNODE = "pmix.colnum.node"//c_null_char
    character(len=*), parameter :: PMIX_COLOCATE_NPERPROC = "pmix.colnum.proc"//c_null_char
    character(len=*), parameter :: PMIX_COLOCATE_PROCS = "pmix.colproc"//c_null_char
    character(len=*), parameter :: PMIX_CONNECT_MAX_RETRIES = "pmix.tool.mretries"//c_null_char
    character(len=*), parameter :: PMIX_CONNECT_RETRY_DELAY = "pmix.tool.retry"//c_null_char
    character(len=*), parameter :: PMIX_CONNECT_SYSTEM_FIRST = "pmix.cnct.sys.first"//c_null_char
    character(len=*), parameter :: PMIX_CONNECT_TO_SYSTEM = "pmix.cnct.sys"//c_null_char
    character(len=*), parameter :: PMIX_COSPAWN_APP = "pmix.cospawn"//c_null_char
    character(len=*), parameter :: PMIX_CPUSET_BITMAP = "pmix.bitmap"//c_null_char
    character(len=*), parameter :: PMIX_CPUS_PER_PROC = "pmix.cpuperproc"//c_null_char
    character(len=*), parameter :: PMIX_CPU_LIST = "pmix.cpulist"//c_null_char
    character(len=*), parameter :: PMIX_CREDENTIAL = "pmix.cred"//c_null_char
    character(len=*), parameter :: PMIX_CRED_TYPE = "pmix.sec.ctype"//c_null_char
    character(len=*), parameter :: PMIX_CRYPTO_KEY = "pmix.sec.key"//c_null_char
    character(len=*), parameter :: PMIX_DAEMON_MEMORY = "pmix.dmn.mem"//c_null_char
    character(len=*), parameter :: PMIX_DATA_SCOPE = "pmix.scope"//c_null_char
    character(len=*), parameter :: PMIX_DEBUGGER_DAEMONS = "pmix.debugger"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_APP_DIRECTIVES = "pmix.dbg.adirs"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_DAEMONS_PER_NODE = "pmix.dbg.dpnd"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_DAEMONS_PER_PROC = "pmix.dbg.dpproc"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_JOB = "pmix.dbg.job"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_JOB_DIRECTIVES = "pmix.dbg.jdirs"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_STOP_IN_APP = "pmix.dbg.notify"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_STOP_IN_INIT = "pmix.dbg.init"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_STOP_ON_EXEC = "pmix.dbg.exec"//c_null_char
    character(len=*), parameter :: PMIX_DEBUG_TARGET = "pmix.dbg.tgt"//c_null_char
    character(len=*), parameter :: PMIX_DEVICE_DISTANCES = "pmix.dev.dist"//c_null_char
    character(len=*), parameter :: PMIX_DEVICE_ID = "pmix.dev.id"//c_null_char
    character(len=*), parameter :: PMIX_DEVICE_TYPE = "pmix.dev.type"//c_null_char
    character(len=*), parameter :: PMIX_DISPLAY_ALLOCATION = "pmix.dispalloc"//c_null_char
    character(len=*), parameter :: PMIX_DISPLAY_MAP = "pmix.dispmap"//c_null_char
    character(len=*), parameter :: PMIX_DISPLAY_MAP_DETAILED = "pmix.dispmapdet"//c_null_char
    character(len=*), parameter :: PMIX_DISPLAY_TOPOLOGY = "pmix.disptopo"//c_null_char
    character(len=*), parameter :: PMIX_DO_NOT_LAUNCH = "pmix.dnl"//c_null_char
    character(len=*), parameter :: PMIX_DSTPATH = "pmix.dstpath"//c_null_char
    character(len=*), parameter :: PMIX_EMBED_BARRIER = "pmix.embed.barrier"//c_null_char
    character(len=*), parameter :: PMIX_ENUM_VALUE = "pmix.descr.enum"//c_null_char
    character(len=*), parameter :: PMIX_ENVARS_HARVESTED = "pmix.evar.hvstd"//c_null_char
    character(len=*), parameter :: PMIX_EVENT_BASE = "pmix.evbase"//c_null_char
    character(len=*), parameter :: PMIX_EVENT_SILENT_TERMINATION = "pmix.evsilentterm"//c_null_char
    character(len=*), parameter :: PMIX_EXEC_AGENT = "pmix.exec.agnt"//c_null_char
    character(len=*), parameter :: PMIX_EXTERNAL_PROGRESS = "pmix.evext"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_COORDINATES = "pmix.fab.coord"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_COST_MATRIX = "pmix.fab.cm"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE = "pmix.fabdev"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICES = "pmix.fab.devs"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_ADDRESS = "pmix.fabdev.addr"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_BUS_TYPE = "pmix.fabdev.btyp"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_COORDINATES = "pmix.fab.coord"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_DRIVER = "pmix.fabdev.driver"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_FIRMWARE = "pmix.fabdev.fmwr"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_INDEX = "pmix.fabdev.idx"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_MTU = "pmix.fabdev.mtu"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_NAME = "pmix.fabdev.nm"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_PCI_DEVID = "pmix.fabdev.pcidevid"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_SPEED = "pmix.fabdev.speed"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_STATE = "pmix.fabdev.state"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_TYPE = "pmix.fabdev.type"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_VENDOR = "pmix.fabdev.vndr"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DEVICE_VENDORID = "pmix.fabdev.vendid"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_DIMS = "pmix.fab.dims"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_ENDPT = "pmix.fab.endpt"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_GROUPS = "pmix.fab.grps"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_IDENTIFIER = "pmix.fab.id"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_INDEX = "pmix.fab.idx"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_NUM_DEVICES = "pmix.fab.nverts"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_PLANE = "pmix.fab.plane"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_SHAPE = "pmix.fab.shape"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_SHAPE_STRING = "pmix.fab.shapestr"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_SWITCH = "pmix.fab.switch"//c_null_char
    character(len=*), parameter :: PMIX_FABRIC_VENDOR = "pmix.fab.vndr"//c_null_char
    character(len=*), parameter :: PMIX_FIRST_ENVAR = "pmix.envar.first"//c_null_char
    character(len=*), parameter :: PMIX_FORKEXEC_AGENT = "pmix.fe.agnt"//c_null_char
    character(len=*), parameter :: PMIX_FWD_STDDIAG = "pmix.fwd.stddiag"//c_null_char
    character(len=*), parameter :: PMIX_FWD_STDERR = "pmix.fwd.stderr"//c_null_char
    character(len=*), parameter :: PMIX_FWD_STDIN = "pmix.fwd.stdin"//c_null_char
    character(len=*), parameter :: PMIX_FWD_STDOUT = "pmix.fwd.stdout"//c_null_char
    character(len=*), parameter :: PMIX_GDS_MODULE = "pmix.gds.mod"//c_null_char
    character(len=*), parameter :: PMIX_GET_POINTER_VALUES = "pmix.get.pntrs"//c_null_char
    character(len=*), parameter :: PMIX_GET_REFRESH_CACHE = "pmix.get.refresh"//c_null_char
    character(len=*), parameter :: PMIX_GET_STATIC_VALUES = "pmix.get.static"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_ADD_MEMBERS = "pmix.grp.add"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_ASSIGN_CONTEXT_ID = "pmix.grp.actxid"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_CONTEXT_ID = "pmix.grp.ctxid"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_ENDPT_DATA = "pmix.grp.endpt"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_FT_COLLECTIVE = "pmix.grp.ftcoll"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_ID = "pmix.grp.id"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_INFO = "pmix.grp.info"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_LEADER = "pmix.grp.ldr"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_LOCAL_CID = "pmix.grp.lclid"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_LOCAL_ONLY = "pmix.grp.lcl"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_MEMBERSHIP = "pmix.grp.mbrs"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_NAMES = "pmix.pgrp.nm"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_NOTIFY_TERMINATION = "pmix.grp.notterm"//c_null_char
    character(len=*), parameter :: PMIX_GROUP_OPTIONAL = "pmix.grp.opt"//c_null_char
    character(len=*), parameter :: PMIX_HOMOGENEOUS_SYSTEM = "pmix.homo"//c_null_char
    character(len=*), parameter :: PMIX_HOST = "pmix.host"//c_null_char
    character(len=*), parameter :: PMIX_HOSTFILE = "pmix.hostfile"//c_null_char
    character(len=*), parameter :: PMIX_HOSTNAME_ALIASES = "pmix.alias"//c_null_char
    character(len=*), parameter :: PMIX_HOSTNAME_KEEP_FQDN = "pmix.fqdn"//c_null_char
    character(len=*), parameter :: PMIX_HOST_ATTRIBUTES = "pmix.host.attrs"//c_null_char
    character(len=*), parameter :: PMIX_HOST_FUNCTIONS = "pmix.host.fns"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_HOLE_KIND = "pmix.hwlocholek"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_SHARE_TOPO = "pmix.hwlocsh"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_SHMEM_ADDR = "pmix.hwlocaddr"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_SHMEM_FILE = "pmix.hwlocfile"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_SHMEM_SIZE = "pmix.hwlocsize"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_XML_V1 = "pmix.hwlocxml1"//c_null_char
    character(len=*), parameter :: PMIX_HWLOC_XML_V2 = "pmix.hwlocxml2"//c_null_char
    character(len=*), parameter :: PMIX_IMMEDIATE = "pmix.immediate"//c_null_char
    character(len=*), parameter :: PMIX_INDEX_ARGV = "pmix.indxargv"//c_null_char
    character(len=*), parameter :: PMIX_IOF_BUFFERING_SIZE = "pmix.iof.bsize"//c_null_char
    character(len=*), parameter :: PMIX_IOF_BUFFERING_TIME = "pmix.iof.btime"//c_null_char
    character(len=*), parameter :: PMIX_IOF_CACHE_SIZE = "pmix.iof.csize"//c_null_char
    character(len=*), parameter :: PMIX_IOF_COMPLETE = "pmix.iof.cmp"//c_null_char
    character(len=*), parameter :: PMIX_IOF_COPY = "pmix.iof.cpy"//c_null_char
    character(len=*), parameter :: PMIX_IOF_DROP_NEWEST = "pmix.iof.new"//c_null_char
    character(len=*), parameter :: PMIX_IOF_DROP_OLDEST = "pmix.iof.old"//c_null_char
    character(len=*), parameter :: PMIX_IOF_FILE_ONLY = "pmix.iof.fonly"//c_null_char
    character(len=*), parameter :: PMIX_IOF_FILE_PATTERN = "pmix.iof.fpt"//c_null_char
    character(len=*), parameter :: PMIX_IOF_LOCAL_OUTPUT = "pmix.iof.local"//c_null_char
    character(len=*), parameter :: PMIX_IOF_MERGE_STDERR_STDOUT = "pmix.iof.mrg"//c_null_char
    character(len=*), parameter :: PMIX_IOF_OUTPUT_RAW = "pmix.iof.raw"//c_null_char
    character(len=*), parameter :: PMIX_IOF_OUTPUT_TO_DIRECTORY = "pmix.iof.dir"//c_null_char
    character(len=*), parameter :: PMIX_IOF_OUTPUT_TO_FILE = "pmix.iof.file"//c_null_char
    character(len=*), parameter :: PMIX_IOF_PUSH_STDIN = "pmix.iof.stdin"//c_null_char
    character(len=*), parameter :: PMIX_IOF_RANK_OUTPUT = "pmix.iof.rank"//c_null_char
    character(len=*), parameter :: PMIX_IOF_REDIRECT = "pmix.iof.redir"//c_null_char
    character(len=*), parameter :: PMIX_IOF_STOP = "pmix.iof.stop"//c_null_char
    character(len=*), parameter :: PMIX_IOF_TAG_DETAILED_OUTPUT = "pmix.iof.tagdet"//c_null_char
    character(len=*), parameter :: PMIX_IOF_TAG_FULLNAME_OUTPUT = "pmix.iof.tagfull"//c_null_char
    character(len=*), parameter :: PMIX_IOF_TAG_OUTPUT = "pmix.iof.tag"//c_null_char
    character(len=*), parameter :: PMIX_IOF_TIMESTAMP_OUTPUT = "pmix.iof.ts"//c_null_char
    character(len=*), parameter :: PMIX_IOF_XML_OUTPUT = "pmix.iof.xml"//c_null_char
    character(len=*), parameter :: PMIX_JOB_CONTINUOUS = "pmix.continuous"//c_null_char
    character(len=*), parameter :: PMIX_JOB_INFO = "pmix.job.info"//c_null_char
    character(len=*), parameter :: PMIX_JOB_INFO_ARRAY = "pmix.job.arr"//c_null_char
    character(len=*), parameter :: PMIX_JOB_RECOVERABLE = "pmix.recover"//c_null_char
    character(len=*), parameter :: PMIX_JOB_TERM_STATUS = "pmix.job.term.status"//c_null_char
    character(len=*), parameter :: PMIX_JOB_TIMEOUT = "pmix.job.time"//c_null_char
    character(len=*), parameter :: PMIX_KEEPALIVE_PIPE = "PMIX_KEEPALIVE_PIPE"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCHER = "pmix.tool.launcher"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCHER_DAEMON = "pmix.lnch.dmn"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCHER_RENDEZVOUS_FILE = "pmix.tool.lncrnd"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCHER_RNDZ_FILE = "PMIX_LAUNCHER_RNDZ_FILE"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCHER_RNDZ_URI = "PMIX_LAUNCHER_RNDZ_URI"//c_null_char
    character(len=*), parameter :: PMIX_LAUNCH_DIRECTIVES = "pmix.lnch.dirs"//c_null_char
    character(len=*), parameter :: PMIX_LOCALITY = "pmix.loc"//c_null_char
    character(len=*), parameter :: PMIX_LOCAL_COLLECTIVE_STATUS = "pmix.loc.col.st"//c_null_char
    character(len=*), parameter :: PMIX_LOCAL_PROCS = "pmix.lprocs"//c_null_char
    character(len=*), parameter :: PMIX_LOCAL_TOPO = "pmix.ltopo"//c_null_char
    character(len=*), parameter :: PMIX_LOG_AGG = "pmix.log.agg"//c_null_char
    character(len=*), parameter :: PMIX_LOG_COMPLETION = "pmix.logcomp"//c_null_char
    character(len=*), parameter :: PMIX_LOG_JOB_EVENTS = "pmix.log.jev"//c_null_char
    character(len=*), parameter :: PMIX_LOG_KEY = "pmix.log.key"//c_null_char
    character(len=*), parameter :: PMIX_LOG_PROC_ABNORMAL_TERMINATION = "pmix.logabproc"//c_null_char
    character(len=*), parameter :: PMIX_LOG_PROC_TERMINATION = "pmix.logproc"//c_null_char
    character(len=*), parameter :: PMIX_LOG_VAL = "pmix.log.val"//c_null_char
    character(len=*), parameter :: PMIX_MAPBY = "pmix.mapby"//c_null_char
    character(len=*), parameter :: PMIX_MAPPER = "pmix.mapper"//c_null_char
    character(len=*), parameter :: PMIX_MAP_BLOB = "pmix.mblob"//c_null_char
    character(len=*), parameter :: PMIX_MAX_RESTARTS = "pmix.maxrestarts"//c_null_char
    character(len=*), parameter :: PMIX_MAX_VALUE = "pmix.descr.maxval"//c_null_char
    character(len=*), parameter :: PMIX_MERGE_STDERR_STDOUT = "pmix.mergeerrout"//c_null_char
    character(len=*), parameter :: PMIX_MIN_VALUE = "pmix.descr.minval"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_AFFINITY_POLICY = "pmix.mdl.tap"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_CPU_TYPE = "pmix.mdl.cputype"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_LIBRARY_NAME = "pmix.mdl.name"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_LIBRARY_VERSION = "pmix.mld.vrs"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_NUM_CPUS = "pmix.mdl.ncpu"//c_null_char
    character(len=*), parameter :: PMIX_MODEL_NUM_THREADS = "pmix.mdl.nthrds"//c_null_char
    character(len=*), parameter :: PMIX_MYSERVER_URI = "pmix.mysrvr.uri"//c_null_char
    character(len=*), parameter :: PMIX_NODE_INFO = "pmix.node.info"//c_null_char
    character(len=*), parameter :: PMIX_NODE_MAP_RAW = "pmix.nmap.raw"//c_null_char
    character(len=*), parameter :: PMIX_NODE_OVERSUBSCRIBED = "pmix.ndosub"//c_null_char
    character(len=*), parameter :: PMIX_NOHUP = "pmix.nohup"//c_null_char
    character(len=*), parameter :: PMIX_NON_PMI = "pmix.nonpmi"//c_null_char
    character(len=*), parameter :: PMIX_NOTIFY_COMPLETION = "pmix.notecomp"//c_null_char
    character(len=*), parameter :: PMIX_NOTIFY_JOB_EVENTS = "pmix.note.jev"//c_null_char
    character(len=*), parameter :: PMIX_NOTIFY_LAUNCH = "pmix.note.lnch"//c_null_char
    character(len=*), parameter :: PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION = "pmix.noteabproc"//c_null_char
    character(len=*), parameter :: PMIX_NOTIFY_PROC_TERMINATION = "pmix.noteproc"//c_null_char
    character(len=*), parameter :: PMIX_NO_OVERSUBSCRIBE = "pmix.noover"//c_null_char
    character(len=*), parameter :: PMIX_NO_PROCS_ON_HEAD = "pmix.nolocal"//c_null_char
    character(len=*), parameter :: PMIX_NPROC_OFFSET = "pmix.offset"//c_null_char
    character(len=*), parameter :: PMIX_NUM_ALLOCATED_NODES = "pmix.num.anodes"//c_null_char
    character(len=*), parameter :: PMIX_NUM_SLOTS = "pmix.num.slots"//c_null_char
    character(len=*), parameter :: PMIX_OPTIONAL = "pmix.optional"//c_null_char
    character(len=*), parameter :: PMIX_OUTPUT_NOCOPY = "pmix.nocopy"//c_null_char
    character(len=*), parameter :: PMIX_OUTPUT_TO_DIRECTORY = "pmix.outdir"//c_null_char
    character(len=*), parameter :: PMIX_OUTPUT_TO_FILE = "pmix.outfile"//c_null_char
    character(len=*), parameter :: PMIX_PACKAGE_RANK = "pmix.pkgrank"//c_null_char
    character(len=*), parameter :: PMIX_PARENT_ID = "pmix.parent"//c_null_char
    character(len=*), parameter :: PMIX_PERSISTENCE = "pmix.persist"//c_null_char
    character(len=*), parameter :: PMIX_PERSONALITY = "pmix.pers"//c_null_char
    character(len=*), parameter :: PMIX_PNET_SETUP_APP = "pmix.pnet.setapp"//c_null_char
    character(len=*), parameter :: PMIX_PPR = "pmix.ppr"//c_null_char
    character(len=*), parameter :: PMIX_PREFIX = "pmix.prefix"//c_null_char
    character(len=*), parameter :: PMIX_PRELOAD_BIN = "pmix.preloadbin"//c_null_char
    character(len=*), parameter :: PMIX_PRELOAD_FILES = "pmix.preloadfiles"//c_null_char
    character(len=*), parameter :: PMIX_PREPEND_ENVAR = "pmix.envar.prepnd"//c_null_char
    character(len=*), parameter :: PMIX_PRIMARY_SERVER = "pmix.pri.srvr"//c_null_char
    character(len=*), parameter :: PMIX_PROC_BLOB = "pmix.pblob"//c_null_char
    character(len=*), parameter :: PMIX_PROC_MAP_RAW = "pmix.pmap.raw"//c_null_char
    character(len=*), parameter :: PMIX_PROC_STATE_STATUS = "pmix.proc.state"//c_null_char
    character(len=*), parameter :: PMIX_PROC_TERM_STATUS = "pmix.proc.term.status"//c_null_char
    character(len=*), parameter :: PMIX_PROC_URI = "pmix.puri"//c_null_char
    character(len=*), parameter :: PMIX_PROGRAMMING_MODEL = "pmix.pgm.model"//c_null_char
    character(len=*), parameter :: PMIX_PSET_MEMBERS = "pmix.pset.mems"//c_null_char
    character(len=*), parameter :: PMIX_PSET_NAME = "pmix.pset.nm"//c_null_char
    character(len=*), parameter :: PMIX_PSET_NAMES = "pmix.pset.nms"//c_null_char
    character(len=*), parameter :: PMIX_QUALIFIED_VALUE = "pmix.qual.val"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_AUTHORIZATIONS = "pmix.qry.auths"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_AVAIL_SERVERS = "pmix.qry.asrvrs"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_DEBUG_SUPPORT = "pmix.qry.debug"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_GROUP_MEMBERSHIP = "pmix.qry.pgrpmems"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_GROUP_NAMES = "pmix.qry.pgrp"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_JOB_STATUS = "pmix.qry.jst"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_NUM_GROUPS = "pmix.qry.pgrpnum"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_PROVISIONAL_ABI_VERSION = "pmix.qry.prabiver"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_PSET_MEMBERSHIP = "pmix.qry.pmems"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_QUALIFIERS = "pmix.qry.quals"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_QUEUE_LIST = "pmix.qry.qlst"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_QUEUE_STATUS = "pmix.qry.qst"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_REPORT_AVG = "pmix.qry.avg"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_REPORT_MINMAX = "pmix.qry.minmax"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_RESULTS = "pmix.qry.res"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_SPAWN_SUPPORT = "pmix.qry.spawn"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_STABLE_ABI_VERSION = "pmix.qry.stabiver"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_STORAGE_LIST = "pmix.strg.list"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_SUPPORTED_KEYS = "pmix.qry.keys"//c_null_char
    character(len=*), parameter :: PMIX_QUERY_SUPPORTED_QUALIFIERS = "pmix.qry.quals"//c_null_char
    character(len=*), parameter :: PMIX_RANKBY = "pmix.rankby"//c_null_char
    character(len=*), parameter :: PMIX_RECONNECT_SERVER = "pmix.cnct.recon"//c_null_char
    character(len=*), parameter :: PMIX_REGISTER_NODATA = "pmix.reg.nodata"//c_null_char
    character(len=*), parameter :: PMIX_REINCARNATION = "pmix.reinc"//c_null_char
    character(len=*), parameter :: PMIX_REPORT_BINDINGS = "pmix.repbind"//c_null_char
    character(len=*), parameter :: PMIX_REPORT_CHILD_SEP = "pmix.rptchildsep"//c_null_char
    character(len=*), parameter :: PMIX_REQUESTOR_IS_CLIENT = "pmix.req.client"//c_null_char
    character(len=*), parameter :: PMIX_REQUESTOR_IS_TOOL = "pmix.req.tool"//c_null_char
    character(len=*), parameter :: PMIX_REQUIRED_KEY = "pmix.req.key"//c_null_char
    character(len=*), parameter :: PMIX_RM_NAME = "pmix.rm.name"//c_null_char
    character(len=*), parameter :: PMIX_RM_VERSION = "pmix.rm.version"//c_null_char
    character(len=*), parameter :: PMIX_RUNTIME_OPTIONS = "pmix.runopt"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_FUNCTIONS = "pmix.srvr.fns"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_GATEWAY = "pmix.srv.gway"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_HOSTNAME = "pmix.srvr.host"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_INFO_ARRAY = "pmix.srv.arr"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_PIDINFO = "pmix.srvr.pidinfo"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_REMOTE_CONNECTIONS = "pmix.srvr.remote"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_SCHEDULER = "pmix.srv.sched"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_SESSION_SUPPORT = "pmix.srvr.sess"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_SHARE_TOPOLOGY = "pmix.srvr.share"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_START_TIME = "pmix.srv.strtime"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_SYSTEM_SUPPORT = "pmix.srvr.sys"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_TOOL_SUPPORT = "pmix.srvr.tool"//c_null_char
    character(len=*), parameter :: PMIX_SERVER_URI = "pmix.srvr.uri"//c_null_char
    character(len=*), parameter :: PMIX_SESSION_ID = "pmix.session.id"//c_null_char
    character(len=*), parameter :: PMIX_SESSION_INFO = "pmix.ssn.info"//c_null_char
    character(len=*), parameter :: PMIX_SESSION_INFO_ARRAY = "pmix.ssn.arr"//c_null_char
    character(len=*), parameter :: PMIX_SETUP_APP_ALL = "pmix.setup.all"//c_null_char
    character(len=*), parameter :: PMIX_SETUP_APP_ENVARS = "pmix.setup.env"//c_null_char
    character(len=*), parameter :: PMIX_SETUP_APP_NONENVARS = "pmix.setup.nenv"//c_null_char
    character(len=*), parameter :: PMIX_SET_ENVAR = "pmix.envar.set"//c_null_char
    character(len=*), parameter :: PMIX_SET_SESSION_CWD = "pmix.ssncwd"//c_null_char
    character(len=*), parameter :: PMIX_SHOW_LAUNCH_PROGRESS = "pmix.showprog"//c_null_char
    character(len=*), parameter :: PMIX_SINGLETON = "pmix.singleton"//c_null_char
    character(len=*), parameter :: PMIX_SINGLE_LISTENER = "pmix.sing.listnr"//c_null_char
    character(len=*), parameter :: PMIX_SOCKET_MODE = "pmix.sockmode"//c_null_char
    character(len=*), parameter :: PMIX_SORTED_PROC_ARRAY = "pmix.sorted.parr"//c_null_char
    character(len=*), parameter :: PMIX_SPAWN_TIMEOUT = "pmix.sp.time"//c_null_char
    character(len=*), parameter :: PMIX_SPAWN_TOOL = "pmix.spwn.tool"//c_null_char
    character(len=*), parameter :: PMIX_STDIN_TGT = "pmix.stdin"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_ACCESSIBILITY = "pmix.strg.access"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_ACCESS_TYPE = "pmix.strg.atype"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_BW_CUR = "pmix.strg.bwcur"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_BW_MAX = "pmix.strg.bwmax"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_CAPACITY_LIMIT = "pmix.strg.cap"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_CAPACITY_USED = "pmix.strg.capuse"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_ID = "pmix.strg.id"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_IOPS_CUR = "pmix.strg.iopscur"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_IOPS_MAX = "pmix.strg.iopsmax"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_MEDIUM = "pmix.strg.medium"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_MINIMAL_XFER_SIZE = "pmix.strg.minxfer"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_OBJECTS_USED = "pmix.strg.objuse"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_OBJECT_LIMIT = "pmix.strg.obj"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_PATH = "pmix.strg.path"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_PERSISTENCE = "pmix.strg.persist"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_SUGGESTED_XFER_SIZE = "pmix.strg.sxfer"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_TYPE = "pmix.strg.type"//c_null_char
    character(len=*), parameter :: PMIX_STORAGE_VERSION = "pmix.strg.ver"//c_null_char
    character(len=*), parameter :: PMIX_SWITCH_PEERS = "pmix.speers"//c_null_char
    character(len=*), parameter :: PMIX_SYSTEM_TMPDIR = "pmix.sys.tmpdir"//c_null_char
    character(len=*), parameter :: PMIX_TAG_OUTPUT = "pmix.tagout"//c_null_char
    character(len=*), parameter :: PMIX_TCP_DISABLE_IPV4 = "pmix.tcp.disipv4"//c_null_char
    character(len=*), parameter :: PMIX_TCP_DISABLE_IPV6 = "pmix.tcp.disipv6"//c_null_char
    character(len=*), parameter :: PMIX_TCP_IF_EXCLUDE = "pmix.tcp.ifexclude"//c_null_char
    character(len=*), parameter :: PMIX_TCP_IF_INCLUDE = "pmix.tcp.ifinclude"//c_null_char
    character(len=*), parameter :: PMIX_TCP_IPV4_PORT = "pmix.tcp.ipv4"//c_null_char
    character(len=*), parameter :: PMIX_TCP_IPV6_PORT = "pmix.tcp.ipv6"//c_null_char
    character(len=*), parameter :: PMIX_TCP_REPORT_URI = "pmix.tcp.repuri"//c_null_char
    character(len=*), parameter :: PMIX_TCP_URI = "pmix.tcp.uri"//c_null_char
    character(len=*), parameter :: PMIX_TDIR_RMCLEAN = "pmix.tdir.rmclean"//c_null_char
    character(len=*), parameter :: PMIX_THREADING_MODEL = "pmix.threads"//c_null_char
    character(len=*), parameter :: PMIX_TIMEOUT_REPORT_STATE = "pmix.tim.state"//c_null_char
    character(len=*), parameter :: PMIX_TIMEOUT_STACKTRACES = "pmix.tim.stack"//c_null_char
    character(len=*), parameter :: PMIX_TIMESTAMP_OUTPUT = "pmix.tsout"//c_null_char
    character(len=*), parameter :: PMIX_TIME_REMAINING = "pmix.time.remaining"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_ATTACHMENT_FILE = "pmix.tool.attach"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_ATTRIBUTES = "pmix.tool.attrs"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_CONNECT_OPTIONAL = "pmix.tool.conopt"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_DO_NOT_CONNECT = "pmix.tool.nocon"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_FUNCTIONS = "pmix.tool.fns"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_NSPACE = "pmix.tool.nspace"//c_null_char
    character(len=*), parameter :: PMIX_TOOL_RANK = "pmix.tool.rank"//c_null_char
    character(len=*), parameter :: PMIX_TOPOLOGY = "pmix.topo"//c_null_char
    character(len=*), parameter :: PMIX_TOPOLOGY2 = "pmix.topo2"//c_null_char
    character(len=*), parameter :: PMIX_TOPOLOGY_FILE = "pmix.topo.file"//c_null_char
    character(len=*), parameter :: PMIX_TOPOLOGY_SIGNATURE = "pmix.toposig"//c_null_char
    character(len=*), parameter :: PMIX_TOPOLOGY_XML = "pmix.topo.xml"//c_null_char
    character(len=*), parameter :: PMIX_UNSET_ENVAR = "pmix.envar.unset"//c_null_char
    character(len=*), parameter :: PMIX_USOCK_DISABLE = "pmix.usock.disable"//c_null_char
    character(len=*), parameter :: PMIX_VERSION_INFO = "pmix.version"//c_null_char
    character(len=*), parameter :: PMIX_WAIT = "pmix.wait"//c_null_char
    character(len=*), parameter :: PMIX_WAIT_FOR_CONNECTION = "pmix.wait.conn"//c_null_char
    character(len=*), parameter :: PMIX_WDIR = "pmix.wdir"//c_null_char
    character(len=*), parameter :: PMIX_WDIR_USER_SPECIFIED = "pmix.wdir.user"//c_null_char

    ! ---- structures ----

    ! pmix_proc_t: a process (namespace and rank). 260 bytes.
    type, bind(C) :: pmix_proc_t
        character(kind=c_char) :: nspace(PMIX_MAX_NSLEN + 1) = c_null_char
        integer(c_int32_t) :: rank = 0_c_int32_t
    end type pmix_proc_t

    ! pmix_value_t: a typed value. 32 bytes: the type at 0, the union at 8
    ! (as three 64-bit words: read it with the pmix_value_* functions).
    type, bind(C) :: pmix_value_t
        integer(c_int16_t) :: type = PMIX_UNDEF
        integer(c_int64_t) :: data(3) = 0_c_int64_t
    end type pmix_value_t

    ! pmix_info_t: a key, directive flags and a value. 552 bytes (flags at
    ! 512, value at 520).
    type, bind(C) :: pmix_info_t
        character(kind=c_char) :: key(PMIX_MAX_KEYLEN + 1) = c_null_char
        integer(c_int32_t) :: flags = 0_c_int32_t
        type(pmix_value_t) :: value
    end type pmix_info_t

    ! pmix_byte_object_t (16 bytes) and pmix_data_array_t (24 bytes), as
    ! found behind a value's pointer.
    type, bind(C) :: pmix_byte_object_t
        type(c_ptr) :: bytes = c_null_ptr
        integer(c_size_t) :: size = 0_c_size_t
    end type pmix_byte_object_t

    type, bind(C) :: pmix_data_array_t
        integer(c_int16_t) :: type = PMIX_UNDEF
        integer(c_size_t) :: size = 0_c_size_t
        type(c_ptr) :: array = c_null_ptr
    end type pmix_data_array_t

    ! ---- callback types (pass c_funloc of a BIND(C) procedure) ----
    abstract interface
        ! pmix_notification_fn_t: an event handler.
        subroutine pmix_notification_fn(evhdlr_registration_id, status, source, info, ninfo, &
                                        results, nresults, cbfunc, cbdata) bind(C)
            import :: c_size_t, c_int, c_ptr, c_funptr
            integer(c_size_t), value :: evhdlr_registration_id
            integer(c_int), value :: status
            type(c_ptr), value :: source ! const pmix_proc_t *
            type(c_ptr), value :: info ! pmix_info_t[ninfo]
            integer(c_size_t), value :: ninfo
            type(c_ptr), value :: results ! pmix_info_t[nresults]
            integer(c_size_t), value :: nresults
            type(c_funptr), value :: cbfunc ! pmix_event_notification_cbfunc_fn
            type(c_ptr), value :: cbdata
        end subroutine pmix_notification_fn

        ! pmix_event_notification_cbfunc_fn_t: what a handler calls when done.
        subroutine pmix_event_notification_cbfunc_fn(status, results, nresults, cbfunc, &
                                                     thiscbdata, notification_cbdata) bind(C)
            import :: c_int, c_ptr, c_size_t, c_funptr
            integer(c_int), value :: status
            type(c_ptr), value :: results
            integer(c_size_t), value :: nresults
            type(c_funptr), value :: cbfunc ! pmix_op_cbfunc
            type(c_ptr), value :: thiscbdata
            type(c_ptr), value :: notification_cbdata
        end subroutine pmix_event_notification_cbfunc_fn

        ! pmix_op_cbfunc_t
        subroutine pmix_op_cbfunc(status, cbdata) bind(C)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr), value :: cbdata
        end subroutine pmix_op_cbfunc

        ! pmix_hdlr_reg_cbfunc_t
        subroutine pmix_hdlr_reg_cbfunc(status, refid, cbdata) bind(C)
            import :: c_int, c_size_t, c_ptr
            integer(c_int), value :: status
            integer(c_size_t), value :: refid
            type(c_ptr), value :: cbdata
        end subroutine pmix_hdlr_reg_cbfunc

        ! pmix_value_cbfunc_t
        subroutine pmix_value_cbfunc(status, kv, cbdata) bind(C)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr), value :: kv ! pmix_value_t *
            type(c_ptr), value :: cbdata
        end subroutine pmix_value_cbfunc

        ! pmix_release_cbfunc_t
        subroutine pmix_release_cbfunc(cbdata) bind(C)
            import :: c_ptr
            type(c_ptr), value :: cbdata
        end subroutine pmix_release_cbfunc

        ! pmix_info_cbfunc_t
        subroutine pmix_info_cbfunc(status, info, ninfo, cbdata, release_fn, release_cbdata) bind(C)
            import :: c_int, c_ptr, c_size_t, c_funptr
            integer(c_int), value :: status
            type(c_ptr), value :: info ! pmix_info_t[ninfo]
            integer(c_size_t), value :: ninfo
            type(c_ptr), value :: cbdata
            type(c_funptr), value :: release_fn ! pmix_release_cbfunc
            type(c_ptr), value :: release_cbdata
        end subroutine pmix_info_cbfunc
    end interface

    ! ---- client calls (include/pmix.h) ----
    interface
        ! initialisation
        function PMIx_Init(proc, info, ninfo) bind(C, name="PMIx_Init") result(rc)
            import :: c_int, c_ptr, c_size_t, pmix_proc_t
            type(pmix_proc_t), intent(inout) :: proc
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Init

        function PMIx_Finalize(info, ninfo) bind(C, name="PMIx_Finalize") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Finalize

        function PMIx_Initialized() bind(C, name="PMIx_Initialized") result(yes)
            import :: c_int
            integer(c_int) :: yes
        end function PMIx_Initialized

        ! A static C string: convert it with pmix_string_from_c.
        function PMIx_Get_version() bind(C, name="PMIx_Get_version") result(s)
            import :: c_ptr
            type(c_ptr) :: s
        end function PMIx_Get_version

        ! A static C string: convert it with pmix_string_from_c.
        function PMIx_Error_string(status) bind(C, name="PMIx_Error_string") result(s)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr) :: s
        end function PMIx_Error_string

        function PMIx_Abort(status, msg, procs, nprocs) bind(C, name="PMIx_Abort") result(rc)
            import :: c_int, c_char, c_ptr, c_size_t
            integer(c_int), value :: status
            character(kind=c_char), intent(in) :: msg(*)
            type(c_ptr), value :: procs ! pmix_proc_t[nprocs]
            integer(c_size_t), value :: nprocs
            integer(c_int) :: rc
        end function PMIx_Abort

        ! job information and synchronisation
        ! val: a pmix_value_t * to release with PMIx_Value_free(val, 1_c_size_t).
        function PMIx_Get(proc, key, info, ninfo, val) bind(C, name="PMIx_Get") result(rc)
            import :: c_int, c_char, c_ptr, c_size_t, pmix_proc_t
            type(pmix_proc_t), intent(in) :: proc
            character(kind=c_char), intent(in) :: key(*)
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_ptr), intent(out) :: val
            integer(c_int) :: rc
        end function PMIx_Get

        function PMIx_Get_nb(proc, key, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Get_nb") result(rc)
            import :: c_int, c_char, c_ptr, c_size_t, c_funptr, pmix_proc_t
            type(pmix_proc_t), intent(in) :: proc
            character(kind=c_char), intent(in) :: key(*)
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc ! pmix_value_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Get_nb

        function PMIx_Fence(procs, nprocs, info, ninfo) bind(C, name="PMIx_Fence") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: procs ! pmix_proc_t[nprocs]; NULL: the caller's namespace
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Fence

        function PMIx_Fence_nb(procs, nprocs, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Fence_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: procs
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc ! pmix_op_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Fence_nb

        ! data exchange
        ! scope: PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL or PMIX_INTERNAL (a
        ! pmix_scope_t, one byte); val: a pmix_value_t the call copies.
        function PMIx_Put(scope, key, val) bind(C, name="PMIx_Put") result(rc)
            import :: c_int, c_int8_t, c_char, pmix_value_t
            integer(c_int8_t), value :: scope
            character(kind=c_char), intent(in) :: key(*)
            type(pmix_value_t), intent(in) :: val
            integer(c_int) :: rc
        end function PMIx_Put

        function PMIx_Commit() bind(C, name="PMIx_Commit") result(rc)
            import :: c_int
            integer(c_int) :: rc
        end function PMIx_Commit

        function PMIx_Store_internal(proc, key, val) &
            bind(C, name="PMIx_Store_internal") result(rc)
            import :: c_int, c_char, pmix_proc_t, pmix_value_t
            type(pmix_proc_t), intent(in) :: proc
            character(kind=c_char), intent(in) :: key(*)
            type(pmix_value_t), intent(in) :: val
            integer(c_int) :: rc
        end function PMIx_Store_internal

        ! events
        ! Blocking (cbfunc = c_null_funptr): returns the handler's reference (>= 1)
        ! or an error (< 0).
        function PMIx_Register_event_handler(codes, ncodes, info, ninfo, evhdlr, cbfunc, cbdata) &
            bind(C, name="PMIx_Register_event_handler") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: codes ! integer(c_int)[ncodes]; NULL: every code
            integer(c_size_t), value :: ncodes
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: evhdlr ! pmix_notification_fn
            type(c_funptr), value :: cbfunc ! pmix_hdlr_reg_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Register_event_handler

        function PMIx_Deregister_event_handler(evhdlr_ref, cbfunc, cbdata) &
            bind(C, name="PMIx_Deregister_event_handler") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            integer(c_size_t), value :: evhdlr_ref
            type(c_funptr), value :: cbfunc ! pmix_op_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Deregister_event_handler

        function PMIx_Notify_event(status, source, range, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Notify_event") result(rc)
            import :: c_int, c_int8_t, c_ptr, c_size_t, c_funptr
            integer(c_int), value :: status
            type(c_ptr), value :: source ! const pmix_proc_t *
            integer(c_int8_t), value :: range ! PMIX_RANGE_*
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc ! pmix_op_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Notify_event

        ! job management; results: a pmix_info_t[nresults] to release with
        ! PMIx_Info_free(results, nresults)
        function PMIx_Allocation_request(directive, info, ninfo, results, nresults) &
            bind(C, name="PMIx_Allocation_request") result(rc)
            import :: c_int, c_int8_t, c_ptr, c_size_t
            integer(c_int8_t), value :: directive ! PMIX_ALLOC_*
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_ptr), intent(out) :: results
            integer(c_size_t), intent(out) :: nresults
            integer(c_int) :: rc
        end function PMIx_Allocation_request

        function PMIx_Allocation_request_nb(directive, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Allocation_request_nb") result(rc)
            import :: c_int, c_int8_t, c_ptr, c_size_t, c_funptr
            integer(c_int8_t), value :: directive
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc ! pmix_info_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Allocation_request_nb

        function PMIx_Job_control(targets, ntargets, directives, ndirs, results, nresults) &
            bind(C, name="PMIx_Job_control") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: targets ! pmix_proc_t[ntargets]
            integer(c_size_t), value :: ntargets
            type(c_ptr), value :: directives ! pmix_info_t[ndirs]
            integer(c_size_t), value :: ndirs
            type(c_ptr), intent(out) :: results
            integer(c_size_t), intent(out) :: nresults
            integer(c_int) :: rc
        end function PMIx_Job_control

        function PMIx_Job_control_nb(targets, ntargets, directives, ndirs, cbfunc, cbdata) &
            bind(C, name="PMIx_Job_control_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: targets
            integer(c_size_t), value :: ntargets
            type(c_ptr), value :: directives
            integer(c_size_t), value :: ndirs
            type(c_funptr), value :: cbfunc ! pmix_info_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Job_control_nb

        ! nodename: NULL (c_null_ptr) for this node; nspace: NULL or "" for
        ! the caller's namespace. procs: a malloc'd pmix_proc_t array the
        ! caller frees (PMIX_PROC_FREE in C); nodelist: a malloc'd string.
        function PMIx_Resolve_peers(nodename, nspace, procs, nprocs) &
            bind(C, name="PMIx_Resolve_peers") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: nodename
            type(c_ptr), value :: nspace
            type(c_ptr), intent(out) :: procs
            integer(c_size_t), intent(out) :: nprocs
            integer(c_int) :: rc
        end function PMIx_Resolve_peers

        function PMIx_Resolve_nodes(nspace, nodelist) &
            bind(C, name="PMIx_Resolve_nodes") result(rc)
            import :: c_int, c_ptr
            type(c_ptr), value :: nspace
            type(c_ptr), intent(out) :: nodelist
            integer(c_int) :: rc
        end function PMIx_Resolve_nodes

        ! pmix_query_t is {char **keys (NULL-terminated), pmix_info_t *qualifiers,
        ! size_t nqual}: 24 bytes; build the array with c_loc.
        function PMIx_Query_info(queries, nqueries, results, nresults) &
            bind(C, name="PMIx_Query_info") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: queries ! pmix_query_t[nqueries]
            integer(c_size_t), value :: nqueries
            type(c_ptr), intent(out) :: results
            integer(c_size_t), intent(out) :: nresults
            integer(c_int) :: rc
        end function PMIx_Query_info

        function PMIx_Query_info_nb(queries, nqueries, cbfunc, cbdata) &
            bind(C, name="PMIx_Query_info_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: queries
            integer(c_size_t), value :: nqueries
            type(c_funptr), value :: cbfunc ! pmix_info_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Query_info_nb

        function PMIx_Process_monitor(monitor, error, directives, ndirs, results, nresults) &
            bind(C, name="PMIx_Process_monitor") result(rc)
            import :: c_int, c_ptr, c_size_t, pmix_info_t
            type(pmix_info_t), intent(in) :: monitor
            integer(c_int), value :: error
            type(c_ptr), value :: directives
            integer(c_size_t), value :: ndirs
            type(c_ptr), intent(out) :: results
            integer(c_size_t), intent(out) :: nresults
            integer(c_int) :: rc
        end function PMIx_Process_monitor

        function PMIx_Process_monitor_nb(monitor, error, directives, ndirs, cbfunc, cbdata) &
            bind(C, name="PMIx_Process_monitor_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr, pmix_info_t
            type(pmix_info_t), intent(in) :: monitor
            integer(c_int), value :: error
            type(c_ptr), value :: directives
            integer(c_size_t), value :: ndirs
            type(c_funptr), value :: cbfunc ! pmix_info_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Process_monitor_nb

        subroutine PMIx_Heartbeat() bind(C, name="PMIx_Heartbeat")
        end subroutine PMIx_Heartbeat

        ! A no-op: fastpmix's progress thread always runs.
        subroutine PMIx_Progress() bind(C, name="PMIx_Progress")
        end subroutine PMIx_Progress

        function PMIx_Log(data, ndata, directives, ndirs) bind(C, name="PMIx_Log") result(rc)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: data ! pmix_info_t[ndata]
            integer(c_size_t), value :: ndata
            type(c_ptr), value :: directives ! pmix_info_t[ndirs]
            integer(c_size_t), value :: ndirs
            integer(c_int) :: rc
        end function PMIx_Log

        function PMIx_Log_nb(data, ndata, directives, ndirs, cbfunc, cbdata) &
            bind(C, name="PMIx_Log_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: data
            integer(c_size_t), value :: ndata
            type(c_ptr), value :: directives
            integer(c_size_t), value :: ndirs
            type(c_funptr), value :: cbfunc ! pmix_op_cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Log_nb

        ! ---- publish/lookup, spawn, connect/disconnect: pointers as c_ptr
        ! (pmix_pdata_t, pmix_app_t arrays, NULL-terminated key arrays, a
        ! pmix_nspace_t buffer of PMIX_MAX_NSLEN+1 characters) ----
        function PMIx_Publish(info, ninfo) &
            bind(C, name="PMIx_Publish") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Publish

        function PMIx_Publish_nb(info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Publish_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Publish_nb

        function PMIx_Lookup(pdata, ndata, info, ninfo) &
            bind(C, name="PMIx_Lookup") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: pdata
            integer(c_size_t), value :: ndata
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Lookup

        function PMIx_Lookup_nb(keys, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Lookup_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: keys
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Lookup_nb

        function PMIx_Unpublish(keys, info, ninfo) &
            bind(C, name="PMIx_Unpublish") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: keys
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Unpublish

        function PMIx_Unpublish_nb(keys, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Unpublish_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: keys
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Unpublish_nb

        function PMIx_Spawn(job_info, ninfo, apps, napps, nspace) &
            bind(C, name="PMIx_Spawn") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: job_info
            integer(c_size_t), value :: ninfo
            type(c_ptr), value :: apps
            integer(c_size_t), value :: napps
            type(c_ptr), value :: nspace
            integer(c_int) :: rc
        end function PMIx_Spawn

        function PMIx_Spawn_nb(job_info, ninfo, apps, napps, cbfunc, cbdata) &
            bind(C, name="PMIx_Spawn_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: job_info
            integer(c_size_t), value :: ninfo
            type(c_ptr), value :: apps
            integer(c_size_t), value :: napps
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Spawn_nb

        function PMIx_Connect(procs, nprocs, info, ninfo) &
            bind(C, name="PMIx_Connect") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: procs
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Connect

        function PMIx_Connect_nb(procs, nprocs, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Connect_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: procs
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Connect_nb

        function PMIx_Disconnect(procs, nprocs, info, ninfo) &
            bind(C, name="PMIx_Disconnect") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: procs
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            integer(c_int) :: rc
        end function PMIx_Disconnect

        function PMIx_Disconnect_nb(procs, nprocs, info, ninfo, cbfunc, cbdata) &
            bind(C, name="PMIx_Disconnect_nb") result(rc)
            import :: c_int, c_ptr, c_size_t, c_funptr
            type(c_ptr), value :: procs
            integer(c_size_t), value :: nprocs
            type(c_ptr), value :: info
            integer(c_size_t), value :: ninfo
            type(c_funptr), value :: cbfunc
            type(c_ptr), value :: cbdata
            integer(c_int) :: rc
        end function PMIx_Disconnect_nb
    end interface

    ! ---- the functions behind the C helper macros (include/pmix_common.h) ----
    interface
        ! PMIX_INFO_CREATE: a zeroed pmix_info_t[n] (c_f_pointer it to use it)
        function PMIx_Info_create(n) bind(C, name="PMIx_Info_create") result(p)
            import :: c_size_t, c_ptr
            integer(c_size_t), value :: n
            type(c_ptr) :: p
        end function PMIx_Info_create

        subroutine PMIx_Info_construct(info) bind(C, name="PMIx_Info_construct")
            import :: pmix_info_t
            type(pmix_info_t), intent(inout) :: info
        end subroutine PMIx_Info_construct

        ! Releases what the info owns (strings, arrays) and zeroes it.
        subroutine PMIx_Info_destruct(info) bind(C, name="PMIx_Info_destruct")
            import :: pmix_info_t
            type(pmix_info_t), intent(inout) :: info
        end subroutine PMIx_Info_destruct

        ! PMIX_INFO_FREE: an array from PMIx_Info_create or the library.
        subroutine PMIx_Info_free(p, n) bind(C, name="PMIx_Info_free")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: p
            integer(c_size_t), value :: n
        end subroutine PMIx_Info_free

        ! PMIX_INFO_LOAD: data points to the value (for PMIX_STRING: to the
        ! characters, ending in c_null_char; see pmix_info_load_string). A
        ! NULL PMIX_BOOL is true. The library copies what data points to.
        function PMIx_Info_load(info, key, data, type) bind(C, name="PMIx_Info_load") result(rc)
            import :: c_int, c_char, c_ptr, c_int16_t, pmix_info_t
            type(pmix_info_t), intent(inout) :: info
            character(kind=c_char), intent(in) :: key(*)
            type(c_ptr), value :: data
            integer(c_int16_t), value :: type
            integer(c_int) :: rc
        end function PMIx_Info_load

        function PMIx_Info_xfer(dest, src) bind(C, name="PMIx_Info_xfer") result(rc)
            import :: c_int, pmix_info_t
            type(pmix_info_t), intent(inout) :: dest
            type(pmix_info_t), intent(in) :: src
            integer(c_int) :: rc
        end function PMIx_Info_xfer

        subroutine PMIx_Info_required(info) bind(C, name="PMIx_Info_required")
            import :: pmix_info_t
            type(pmix_info_t), intent(inout) :: info
        end subroutine PMIx_Info_required

        subroutine PMIx_Info_optional(info) bind(C, name="PMIx_Info_optional")
            import :: pmix_info_t
            type(pmix_info_t), intent(inout) :: info
        end subroutine PMIx_Info_optional

        function PMIx_Info_is_required(info) bind(C, name="PMIx_Info_is_required") result(yes)
            import :: c_bool, pmix_info_t
            type(pmix_info_t), intent(in) :: info
            logical(c_bool) :: yes
        end function PMIx_Info_is_required

        function PMIx_Info_true(info) bind(C, name="PMIx_Info_true") result(yes)
            import :: c_bool, pmix_info_t
            type(pmix_info_t), intent(in) :: info
            logical(c_bool) :: yes
        end function PMIx_Info_true

        function PMIx_Value_create(n) bind(C, name="PMIx_Value_create") result(p)
            import :: c_size_t, c_ptr
            integer(c_size_t), value :: n
            type(c_ptr) :: p
        end function PMIx_Value_create

        subroutine PMIx_Value_construct(v) bind(C, name="PMIx_Value_construct")
            import :: pmix_value_t
            type(pmix_value_t), intent(inout) :: v
        end subroutine PMIx_Value_construct

        subroutine PMIx_Value_destruct(v) bind(C, name="PMIx_Value_destruct")
            import :: pmix_value_t
            type(pmix_value_t), intent(inout) :: v
        end subroutine PMIx_Value_destruct

        ! PMIX_VALUE_FREE / PMIX_VALUE_RELEASE (n = 1): a value from the library.
        subroutine PMIx_Value_free(v, n) bind(C, name="PMIx_Value_free")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: v
            integer(c_size_t), value :: n
        end subroutine PMIx_Value_free

        function PMIx_Value_load(v, data, type) bind(C, name="PMIx_Value_load") result(rc)
            import :: c_int, c_ptr, c_int16_t, pmix_value_t
            type(pmix_value_t), intent(inout) :: v
            type(c_ptr), value :: data
            integer(c_int16_t), value :: type
            integer(c_int) :: rc
        end function PMIx_Value_load

        function PMIx_Value_unload(v, data, sz) bind(C, name="PMIx_Value_unload") result(rc)
            import :: c_int, c_ptr, c_size_t, pmix_value_t
            type(pmix_value_t), intent(inout) :: v
            type(c_ptr), intent(inout) :: data
            integer(c_size_t), intent(out) :: sz
            integer(c_int) :: rc
        end function PMIx_Value_unload

        function PMIx_Value_xfer(dest, src) bind(C, name="PMIx_Value_xfer") result(rc)
            import :: c_int, pmix_value_t
            type(pmix_value_t), intent(inout) :: dest
            type(pmix_value_t), intent(in) :: src
            integer(c_int) :: rc
        end function PMIx_Value_xfer

        function PMIx_Proc_create(n) bind(C, name="PMIx_Proc_create") result(p)
            import :: c_size_t, c_ptr
            integer(c_size_t), value :: n
            type(c_ptr) :: p
        end function PMIx_Proc_create

        subroutine PMIx_Proc_free(p, n) bind(C, name="PMIx_Proc_free")
            import :: c_ptr, c_size_t
            type(c_ptr), value :: p
            integer(c_size_t), value :: n
        end subroutine PMIx_Proc_free

        function PMIx_Data_array_create(n, type) bind(C, name="PMIx_Data_array_create") result(p)
            import :: c_size_t, c_int16_t, c_ptr
            integer(c_size_t), value :: n
            integer(c_int16_t), value :: type
            type(c_ptr) :: p
        end function PMIx_Data_array_create

        subroutine PMIx_Data_array_free(p) bind(C, name="PMIx_Data_array_free")
            import :: c_ptr
            type(c_ptr), value :: p
        end subroutine PMIx_Data_array_free

        function PMIx_Info_list_start() bind(C, name="PMIx_Info_list_start") result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function PMIx_Info_list_start

        function PMIx_Info_list_add(list, key, value, type) bind(C, name="PMIx_Info_list_add") &
            result(rc)
            import :: c_int, c_ptr, c_char, c_int16_t
            type(c_ptr), value :: list
            character(kind=c_char), intent(in) :: key(*)
            type(c_ptr), value :: value
            integer(c_int16_t), value :: type
            integer(c_int) :: rc
        end function PMIx_Info_list_add

        ! Deep-copies the list into array (type PMIX_INFO); the list still
        ! needs PMIx_Info_list_release.
        function PMIx_Info_list_convert(list, array) bind(C, name="PMIx_Info_list_convert") &
            result(rc)
            import :: c_int, c_ptr, pmix_data_array_t
            type(c_ptr), value :: list
            type(pmix_data_array_t), intent(inout) :: array
            integer(c_int) :: rc
        end function PMIx_Info_list_convert

        subroutine PMIx_Info_list_release(list) bind(C, name="PMIx_Info_list_release")
            import :: c_ptr
            type(c_ptr), value :: list
        end subroutine PMIx_Info_list_release
    end interface

    ! C's strlen, for pmix_string_from_c.
    interface
        function c_strlen(s) bind(C, name="strlen") result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: s
            integer(c_size_t) :: n
        end function c_strlen
    end interface

contains

    ! A C string (NULL: "") as a Fortran string.
    function pmix_string_from_c(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        if (.not. c_associated(p)) then
            s = ""
            return
        end if
        n = int(c_strlen(p))
        call c_f_pointer(p, chars, [n])
        allocate (character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function pmix_string_from_c

    ! A fixed C character array (a key, a namespace) up to its first
    ! c_null_char, as a Fortran string.
    function pmix_string_from_chars(chars) result(s)
        character(kind=c_char), intent(in) :: chars(:)
        character(len=:), allocatable :: s
        integer :: i, n
        n = size(chars)
        do i = 1, size(chars)
            if (chars(i) == c_null_char) then
                n = i - 1
                exit
            end if
        end do
        allocate (character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function pmix_string_from_chars

    ! PMIX_LOAD_PROCID: a proc from a namespace (Fortran string, or a
    ! C-terminated one; at most PMIX_MAX_NSLEN characters are kept) and a rank.
    subroutine pmix_proc_load(proc, nspace, rank)
        type(pmix_proc_t), intent(out) :: proc
        character(len=*), intent(in) :: nspace
        integer(c_int32_t), intent(in) :: rank
        integer :: i
        proc%nspace = c_null_char
        do i = 1, min(len(nspace), PMIX_MAX_NSLEN)
            if (nspace(i:i) == c_null_char) exit
            proc%nspace(i) = nspace(i:i)
        end do
        proc%rank = rank
    end subroutine pmix_proc_load

    ! PMIX_INFO_LOAD of a PMIX_STRING from a Fortran string (copied).
    function pmix_info_load_string(info, key, value) result(rc)
        type(pmix_info_t), intent(inout) :: info
        character(kind=c_char), intent(in) :: key(*)
        character(len=*), intent(in) :: value
        integer(c_int) :: rc
        character(kind=c_char, len=len(value) + 1), target :: buf
        buf = value//c_null_char
        rc = PMIx_Info_load(info, key, c_loc(buf), PMIX_STRING)
    end function pmix_info_load_string

    ! PMIX_RANK_IS_VALID: r is a real rank (below PMIX_RANK_VALID as an
    ! unsigned number).
    elemental function pmix_rank_is_valid(r) result(yes)
        integer(c_int32_t), intent(in) :: r
        logical :: yes
        yes = r >= 0_c_int32_t .or. r < PMIX_RANK_VALID
    end function pmix_rank_is_valid

    ! PMIX_CHECK_KEY: does the info's key equal key (a Fortran string)?
    function pmix_check_key(info, key) result(yes)
        type(pmix_info_t), intent(in) :: info
        character(len=*), intent(in) :: key
        logical :: yes
        character(len=:), allocatable :: k
        k = pmix_string_from_chars(info%key)
        yes = k == pmix_string_from_chars(transfer(key, c_null_char, len(key)))
    end function pmix_check_key

    ! ---- reading a pmix_value_t ----

    ! The value's string (PMIX_STRING), or "" for any other type.
    function pmix_value_string(v) result(s)
        type(pmix_value_t), intent(in) :: v
        character(len=:), allocatable :: s
        if (v%type == PMIX_STRING) then
            s = pmix_string_from_c(pmix_value_ptr(v))
        else
            s = ""
        end if
    end function pmix_value_string

    ! The value's pointer member (PMIX_STRING, PMIX_PROC, PMIX_DATA_ARRAY,
    ! PMIX_POINTER, ...); c_null_ptr for any other type is the caller's care.
    function pmix_value_ptr(v) result(p)
        type(pmix_value_t), intent(in) :: v
        type(c_ptr) :: p
        p = transfer(v%data(1), p)
    end function pmix_value_ptr

    ! The value as a 64-bit integer, for every integer type (unsigned types
    ! are zero-extended), PMIX_BOOL (0/1), PMIX_STATUS, PMIX_PROC_RANK and the
    ! 8-bit enumerations; ok is .false. (and the result 0) for other types.
    function pmix_value_integer(v, ok) result(i)
        type(pmix_value_t), intent(in) :: v
        logical, intent(out) :: ok
        integer(c_int64_t) :: i
        integer(c_int8_t) :: i8
        integer(c_int16_t) :: i16
        integer(c_int32_t) :: i32
        integer(c_int64_t), parameter :: two8 = 256_c_int64_t, two16 = 65536_c_int64_t, &
                                         two32 = 4294967296_c_int64_t
        ok = .true.
        i8 = transfer(v%data(1), i8)
        i16 = transfer(v%data(1), i16)
        i32 = transfer(v%data(1), i32)
        select case (v%type)
        case (PMIX_INT8)
            i = i8
        case (PMIX_BOOL, PMIX_BYTE, PMIX_UINT8, PMIX_PERSIST, PMIX_SCOPE, PMIX_DATA_RANGE, &
              PMIX_PROC_STATE, PMIX_ALLOC_DIRECTIVE, PMIX_JOB_STATE)
            i = modulo(int(i8, c_int64_t), two8)
        case (PMIX_INT16)
            i = i16
        case (PMIX_UINT16, PMIX_DATA_TYPE, PMIX_IOF_CHANNEL)
            i = modulo(int(i16, c_int64_t), two16)
        case (PMIX_INT, PMIX_INT32, PMIX_PID, PMIX_STATUS)
            i = i32
        case (PMIX_UINT, PMIX_UINT32, PMIX_PROC_RANK, PMIX_INFO_DIRECTIVES)
            i = modulo(int(i32, c_int64_t), two32)
        case (PMIX_INT64, PMIX_UINT64, PMIX_SIZE, PMIX_TIME)
            i = v%data(1)
        case default
            ok = .false.
            i = 0_c_int64_t
        end select
    end function pmix_value_integer

    ! The value as a double (PMIX_FLOAT, PMIX_DOUBLE); ok is .false. (and
    ! the result 0) for other types.
    function pmix_value_real(v, ok) result(x)
        type(pmix_value_t), intent(in) :: v
        logical, intent(out) :: ok
        real(c_double) :: x
        real(c_float) :: f
        ok = .true.
        select case (v%type)
        case (PMIX_FLOAT)
            f = transfer(v%data(1), f)
            x = real(f, c_double)
        case (PMIX_DOUBLE)
            x = transfer(v%data(1), x)
        case default
            ok = .false.
            x = 0.0_c_double
        end select
    end function pmix_value_real

end module pmix_f08
