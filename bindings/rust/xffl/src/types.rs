//! The enumerations of the C API as Rust enums. Values only travel from Rust to C here, so plain
//! enums are safe; values that come back from C (statuses, `get_int`) are integers or [`ErrorKind`].
//!
//! [`ErrorKind`]: crate::ErrorKind
use xffl_sys as sys;

/// Communication backend, chosen once in [`State::set_global`](crate::State::set_global).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// Topology only: no communication; collectives work on one-member groups only.
    None,
    /// Host memory over any network UCX reaches.
    Ucx,
    /// CUDA memory through NCCL.
    Nccl,
}

impl Backend {
    pub(crate) fn raw(self) -> sys::xffl_backend_t {
        match self {
            Backend::None => sys::xffl_backend::XFFL_BACKEND_NONE,
            Backend::Ucx => sys::xffl_backend::XFFL_BACKEND_UCX,
            Backend::Nccl => sys::xffl_backend::XFFL_BACKEND_NCCL,
        }
    }

    /// The backend whose C value (as read with `get_int(Attr::Backend)`) is `value`, if known.
    ///
    /// ```
    /// assert_eq!(xffl::Backend::from_raw(1), Some(xffl::Backend::Ucx));
    /// assert_eq!(xffl::Backend::from_raw(7), None);
    /// ```
    pub fn from_raw(value: i32) -> Option<Backend> {
        [Backend::None, Backend::Ucx, Backend::Nccl].into_iter().find(|b| b.raw().0 as i64 == value as i64)
    }

    /// The name used by launchers and by xFFL (`"none"`, `"ucx"`, `"nccl"`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::None => "none",
            Backend::Ucx => "ucx",
            Backend::Nccl => "nccl",
        }
    }
}

impl From<Backend> for i32 {
    /// The C value, as [`OptionKey::CrossFacilityBackend`] takes it.
    fn from(backend: Backend) -> i32 {
        backend.raw().0 as i32
    }
}

impl std::str::FromStr for Backend {
    type Err = crate::Error;

    /// Parses `none`, `ucx` or `nccl` (case-insensitive), as in `XFFL_BACKEND`.
    ///
    /// ```
    /// let backend: xffl::Backend = "UCX".parse()?;
    /// assert_eq!(backend, xffl::Backend::Ucx);
    /// assert!("gloo".parse::<xffl::Backend>().is_err());
    /// # Ok::<(), xffl::Error>(())
    /// ```
    fn from_str(text: &str) -> crate::Result<Backend> {
        match text.to_ascii_lowercase().as_str() {
            "none" => Ok(Backend::None),
            "ucx" => Ok(Backend::Ucx),
            "nccl" => Ok(Backend::Nccl),
            _ => Err(crate::Error::invalid(format!("backend {text:?} is not none, ucx or nccl"))),
        }
    }
}

/// Device kinds: for execution (`Cpu`, `Cuda`) and for initialization (`Cpu`, `Cuda`, `Meta`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// A CUDA device.
    Cuda,
    /// Initialization only: parameters without storage, filled by a broadcast.
    Meta,
}

impl Device {
    pub(crate) fn raw(self) -> sys::xffl_device_t {
        match self {
            Device::Cpu => sys::xffl_device::XFFL_DEVICE_CPU,
            Device::Cuda => sys::xffl_device::XFFL_DEVICE_CUDA,
            Device::Meta => sys::xffl_device::XFFL_DEVICE_META,
        }
    }

    /// The device whose C value (as read with `get_int(Attr::DeviceType)`) is `value`, if known.
    pub fn from_raw(value: i32) -> Option<Device> {
        [Device::Cpu, Device::Cuda, Device::Meta].into_iter().find(|d| d.raw().0 as i64 == value as i64)
    }
}

/// Integer fields of the state, named after the fields of xFFL's Python `DistributedState`.
/// Read scalars with [`State::get_int`](crate::State::get_int) and tuples with
/// [`State::get_ints`](crate::State::get_ints).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Attr {
    /// The backend, as a raw value for [`Backend::from_raw`].
    Backend,
    /// The execution device kind, as a raw value for [`Device::from_raw`].
    DeviceType,
    /// The rendezvous port.
    MasterPort,
    /// This process's global rank.
    Rank,
    /// Number of processes.
    WorldSize,
    /// Rank inside the node.
    NodeLocalRank,
    /// Ranks per node.
    NodeLocalSize,
    /// Index of the node.
    NodeRank,
    /// Number of nodes.
    NodeWorldSize,
    /// Index inside the HSDP replica (the shard index).
    ReplicaLocalRank,
    /// HSDP replica size S.
    ReplicaLocalSize,
    /// Index of the replica (inside the federated group with federated scaling).
    ReplicaRank,
    /// Tuple: replicas per federated group (one entry without federation).
    ReplicaWorldSize,
    /// Index inside the federated group.
    FederatedLocalRank,
    /// Tuple: the federated group sizes, in processes.
    FederatedLocalSize,
    /// Index of the federated group.
    FederatedRank,
    /// Number of federated groups G.
    FederatedWorldSize,
    /// 1 if this rank talks across federated groups, 0 otherwise (federated scaling only).
    IsSender,
    /// Global rank of this rank's sender (non-senders only).
    ReceiveFrom,
    /// Number K of stream instances of the FEDERATED and REPLICA groups.
    Streams,
    /// Device index chosen by `set_exec_device`.
    CurrentDevice,
    /// Devices of the execution kind visible to this process.
    DeviceCount,
    /// The initialization device, as a raw value for [`Device::from_raw`].
    InitDevice,
    /// 1 if ranks that receive weights start on the meta device, else 0.
    MetaInitialization,
    /// Replica size S of the HSDP layout.
    Hsdp,
    /// The epoch of the last completed federated average (0 while every facility takes part). Not a
    /// field of xFFL's `DistributedState`; set with federated scaling.
    FederationEpoch,
    /// The last committed round: federated averages completed on this layout, from 1. Not a field of
    /// xFFL's `DistributedState`; set with federated scaling.
    FederationRound,
    /// Tuple: the facilities (federated group indices) of `FederationEpoch`, sorted. Not a field of
    /// xFFL's `DistributedState`; set with federated scaling.
    LiveFacilities,
}

impl Attr {
    /// Every attribute, in the order of the C enumeration.
    pub const ALL: [Attr; 28] = [
        Attr::Backend,
        Attr::DeviceType,
        Attr::MasterPort,
        Attr::Rank,
        Attr::WorldSize,
        Attr::NodeLocalRank,
        Attr::NodeLocalSize,
        Attr::NodeRank,
        Attr::NodeWorldSize,
        Attr::ReplicaLocalRank,
        Attr::ReplicaLocalSize,
        Attr::ReplicaRank,
        Attr::ReplicaWorldSize,
        Attr::FederatedLocalRank,
        Attr::FederatedLocalSize,
        Attr::FederatedRank,
        Attr::FederatedWorldSize,
        Attr::IsSender,
        Attr::ReceiveFrom,
        Attr::Streams,
        Attr::CurrentDevice,
        Attr::DeviceCount,
        Attr::InitDevice,
        Attr::MetaInitialization,
        Attr::Hsdp,
        Attr::FederationEpoch,
        Attr::FederationRound,
        Attr::LiveFacilities,
    ];

    pub(crate) fn raw(self) -> sys::xffl_attr_t {
        use sys::xffl_attr as a;
        match self {
            Attr::Backend => a::XFFL_ATTR_BACKEND,
            Attr::DeviceType => a::XFFL_ATTR_DEVICE_TYPE,
            Attr::MasterPort => a::XFFL_ATTR_MASTER_PORT,
            Attr::Rank => a::XFFL_ATTR_RANK,
            Attr::WorldSize => a::XFFL_ATTR_WORLD_SIZE,
            Attr::NodeLocalRank => a::XFFL_ATTR_NODE_LOCAL_RANK,
            Attr::NodeLocalSize => a::XFFL_ATTR_NODE_LOCAL_SIZE,
            Attr::NodeRank => a::XFFL_ATTR_NODE_RANK,
            Attr::NodeWorldSize => a::XFFL_ATTR_NODE_WORLD_SIZE,
            Attr::ReplicaLocalRank => a::XFFL_ATTR_REPLICA_LOCAL_RANK,
            Attr::ReplicaLocalSize => a::XFFL_ATTR_REPLICA_LOCAL_SIZE,
            Attr::ReplicaRank => a::XFFL_ATTR_REPLICA_RANK,
            Attr::ReplicaWorldSize => a::XFFL_ATTR_REPLICA_WORLD_SIZE,
            Attr::FederatedLocalRank => a::XFFL_ATTR_FEDERATED_LOCAL_RANK,
            Attr::FederatedLocalSize => a::XFFL_ATTR_FEDERATED_LOCAL_SIZE,
            Attr::FederatedRank => a::XFFL_ATTR_FEDERATED_RANK,
            Attr::FederatedWorldSize => a::XFFL_ATTR_FEDERATED_WORLD_SIZE,
            Attr::IsSender => a::XFFL_ATTR_IS_SENDER,
            Attr::ReceiveFrom => a::XFFL_ATTR_RECEIVE_FROM,
            Attr::Streams => a::XFFL_ATTR_STREAMS,
            Attr::CurrentDevice => a::XFFL_ATTR_CURRENT_DEVICE,
            Attr::DeviceCount => a::XFFL_ATTR_DEVICE_COUNT,
            Attr::InitDevice => a::XFFL_ATTR_INIT_DEVICE,
            Attr::MetaInitialization => a::XFFL_ATTR_META_INITIALIZATION,
            Attr::Hsdp => a::XFFL_ATTR_HSDP,
            Attr::FederationEpoch => a::XFFL_ATTR_FEDERATION_EPOCH,
            Attr::FederationRound => a::XFFL_ATTR_FEDERATION_ROUND,
            Attr::LiveFacilities => a::XFFL_ATTR_LIVE_FACILITIES,
        }
    }

    /// True for the tuple fields (`ReplicaWorldSize`, `FederatedLocalSize`, `LiveFacilities`), which
    /// only [`State::get_ints`](crate::State::get_ints) reads.
    pub fn is_tuple(self) -> bool {
        matches!(self, Attr::ReplicaWorldSize | Attr::FederatedLocalSize | Attr::LiveFacilities)
    }
}

/// Process-group families computed by the layout calls.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// Every rank; set by `set_global`.
    World,
    /// The ranks of the FSDP mesh.
    Fsdp,
    /// The column of the HSDP mesh: same shard, every replica.
    HsdpReplica,
    /// The row of the HSDP mesh: the shards of one replica.
    HsdpShard,
    /// Ranks that average across federated groups (K instances).
    Federated,
    /// Same shard inside the federated group (K instances).
    Replica,
    /// Every rank of this rank's federated group.
    Federation,
}

impl GroupKind {
    /// Every group kind, in the order of the C enumeration.
    pub const ALL: [GroupKind; 7] = [
        GroupKind::World,
        GroupKind::Fsdp,
        GroupKind::HsdpReplica,
        GroupKind::HsdpShard,
        GroupKind::Federated,
        GroupKind::Replica,
        GroupKind::Federation,
    ];

    pub(crate) fn raw(self) -> sys::xffl_group_kind_t {
        use sys::xffl_group_kind as g;
        match self {
            GroupKind::World => g::XFFL_GROUP_WORLD,
            GroupKind::Fsdp => g::XFFL_GROUP_FSDP,
            GroupKind::HsdpReplica => g::XFFL_GROUP_HSDP_REPLICA,
            GroupKind::HsdpShard => g::XFFL_GROUP_HSDP_SHARD,
            GroupKind::Federated => g::XFFL_GROUP_FEDERATED,
            GroupKind::Replica => g::XFFL_GROUP_REPLICA,
            GroupKind::Federation => g::XFFL_GROUP_FEDERATION,
        }
    }
}

/// Device meshes.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MeshKind {
    /// One dimension (`"shard"`).
    Fsdp,
    /// Two dimensions (`"replica"`, `"shard"`).
    Hsdp,
}

impl MeshKind {
    pub(crate) fn raw(self) -> sys::xffl_mesh_kind_t {
        match self {
            MeshKind::Fsdp => sys::xffl_mesh_kind::XFFL_MESH_FSDP,
            MeshKind::Hsdp => sys::xffl_mesh_kind::XFFL_MESH_HSDP,
        }
    }
}

/// Output formats of [`State::describe`](crate::State::describe).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The layout of xFFL's `DistributedState.__str__`.
    Text,
    /// One JSON object; keys are the `DistributedState` field names, `null` for `None`.
    Json,
}

impl Format {
    pub(crate) fn raw(self) -> sys::xffl_format_t {
        match self {
            Format::Text => sys::xffl_format::XFFL_FORMAT_TEXT,
            Format::Json => sys::xffl_format::XFFL_FORMAT_JSON,
        }
    }
}

/// Reduction operations. `Avg` is a true mean (sum divided by the member count) on every backend.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedOp {
    /// Sum.
    Sum,
    /// Arithmetic mean over the members.
    Avg,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Product.
    Prod,
}

impl RedOp {
    pub(crate) fn raw(self) -> sys::xffl_redop_t {
        match self {
            RedOp::Sum => sys::xffl_redop::XFFL_SUM,
            RedOp::Avg => sys::xffl_redop::XFFL_AVG,
            RedOp::Min => sys::xffl_redop::XFFL_MIN,
            RedOp::Max => sys::xffl_redop::XFFL_MAX,
            RedOp::Prod => sys::xffl_redop::XFFL_PROD,
        }
    }
}

/// Tunable options of a state, for [`State::set_option`](crate::State::set_option) and
/// [`State::get_option`](crate::State::get_option).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptionKey {
    /// Bound of every wait, in milliseconds (default 300000, or `XFFL_TIMEOUT` seconds).
    TimeoutMs,
    /// A [`FederatedStrategy`] as `i32` (default `Hierarchical`).
    FederatedStrategy,
    /// A [`LogLevel`] as `i32` (default `Warn`, or `XFFL_LOG_LEVEL`).
    LogLevel,
    /// A [`Backend`] as `i32` for the groups that cross facilities: `Backend::None` (default) keeps them
    /// on the backend of `set_global`; `Backend::Ucx` carries them over UCX with host staging when that
    /// backend is NCCL; 3 (`XFFL_BACKEND_WAN`) carries them over striped, optionally encrypted TCP
    /// (`WanStreams`, `WanEncryption`) when that backend is UCX or NCCL. Read by `set_global`: a `State`
    /// error once it was called.
    CrossFacilityBackend,
    /// String option ([`State::set_option_string`](crate::State::set_option_string)): the shared
    /// secret of the rendezvous store (default `XFFL_AUTH_TOKEN`; `""` for none). Write-only: reading
    /// it is an `InvalidArgument` error. Before `set_global`.
    AuthToken,
    /// String option: the job's identity checked by the rendezvous store (default `XFFL_JOB_ID`, else
    /// `TORCHELASTIC_RUN_ID`, else `SLURM_JOB_ID`, else `"xffl"`); 1 to 256 bytes. Before `set_global`.
    JobId,
    /// 0 (default, or `XFFL_UCX_PROCESS_SETTINGS=0`) or 1: whether the UCX backend may change the whole
    /// process for UCX 1.13's sake (`UCX_TCP_PUT_ENABLE=n` in the environment unless set, and a UCX log
    /// handler); see `XFFL_OPT_UCX_PROCESS_SETTINGS` in `xffl/types.h`. Read by `set_global`.
    UcxProcessSettings,
    /// 0 (default, or `XFFL_ENQUEUE_ONLY=0`) or 1, backend NCCL: 0 waits on the host for each call's
    /// work (bounded by the timeout); 1 returns once enqueued, as NCCL does; see
    /// `XFFL_OPT_ENQUEUE_ONLY` in `xffl/types.h`. At any time.
    EnqueueOnly,
    /// A [`WireFormat`] as `i32` (default `F32`, or `XFFL_WIRE_FORMAT`): how federated averages write
    /// f32 data between facilities; every format but `F32` quantises each crossing copy once and the
    /// mean stays bit-identical on every rank; see `XFFL_OPT_WIRE_FORMAT` in `xffl/types.h`. At any time
    /// between averages, the same on every rank.
    WireFormat,
    /// 0 (default, or `XFFL_ERROR_FEEDBACK=0`) or 1: keep each buffer's quantisation residual and add
    /// it to its next federated average (one f32 copy per buffer on crossing ranks); see
    /// `XFFL_OPT_ERROR_FEEDBACK` in `xffl/types.h`. At any time between averages.
    ErrorFeedback,
    /// With the wan crossing backend (`CrossFacilityBackend` = 3, `XFFL_BACKEND_WAN`): TCP streams per
    /// pair of members of a group that crosses facilities, 1 to 64 (default 4, or `XFFL_WAN_STREAMS`).
    /// Read by `set_global`.
    WanStreams,
    /// With the wan crossing backend: 0 none (default, or `XFFL_WAN_ENCRYPTION`), 1 AES-256-GCM, 2
    /// ChaCha20-Poly1305; anything but 0 needs the job's secret (`AuthToken`). A frame altered on the
    /// link fails the call with an `Auth` error. Read by `set_global`.
    WanEncryption,
    /// 0 fail (default, or `XFFL_FACILITY_FAULTS=fail`) or 1 continue: what a federated average does
    /// when a facility is lost; continue is the same as fail in single-world mode; in facility mode the
    /// blocking averages go on among the live facilities and heal a returning one (the nonblocking ones
    /// are then an `Unsupported` error). Read by `set_global`.
    FacilityFaults,
    /// Facilities needed to go on with facility faults = continue, 0 to G (default 0, a majority, or
    /// `XFFL_FEDERATION_QUORUM`); above G is an `InvalidArgument` error from `federated_scaling` /
    /// `set_global`. Read by `set_global`.
    FederationQuorum,
}

impl OptionKey {
    pub(crate) fn raw(self) -> sys::xffl_option_t {
        match self {
            OptionKey::TimeoutMs => sys::xffl_option::XFFL_OPT_TIMEOUT_MS,
            OptionKey::FederatedStrategy => sys::xffl_option::XFFL_OPT_FEDERATED_STRATEGY,
            OptionKey::LogLevel => sys::xffl_option::XFFL_OPT_LOG_LEVEL,
            OptionKey::CrossFacilityBackend => sys::xffl_option::XFFL_OPT_CROSS_FACILITY_BACKEND,
            OptionKey::AuthToken => sys::xffl_option::XFFL_OPT_AUTH_TOKEN,
            OptionKey::JobId => sys::xffl_option::XFFL_OPT_JOB_ID,
            OptionKey::UcxProcessSettings => sys::xffl_option::XFFL_OPT_UCX_PROCESS_SETTINGS,
            OptionKey::EnqueueOnly => sys::xffl_option::XFFL_OPT_ENQUEUE_ONLY,
            OptionKey::WireFormat => sys::xffl_option::XFFL_OPT_WIRE_FORMAT,
            OptionKey::ErrorFeedback => sys::xffl_option::XFFL_OPT_ERROR_FEEDBACK,
            OptionKey::WanStreams => sys::xffl_option::XFFL_OPT_WAN_STREAMS,
            OptionKey::WanEncryption => sys::xffl_option::XFFL_OPT_WAN_ENCRYPTION,
            OptionKey::FacilityFaults => sys::xffl_option::XFFL_OPT_FACILITY_FAULTS,
            OptionKey::FederationQuorum => sys::xffl_option::XFFL_OPT_FEDERATION_QUORUM,
        }
    }
}

/// How federated averages write f32 data between facilities ([`OptionKey::WireFormat`]).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireFormat {
    /// Exact: the f32 all-reduce (the default).
    F32,
    /// bfloat16, 2 bytes per value, |error| <= 2^-8 |x|.
    Bf16,
    /// IEEE binary16, 2 bytes per value, |error| <= 2^-11 |x| in its normal range.
    F16,
    /// One f32 scale per 256 values and int8 codes: |error| <= max|block| / 254.
    Int8Block,
    /// One f32 scale per 64 values and 4-bit codes: |error| <= max|block| / 14.
    Int4Block,
}

impl From<WireFormat> for i32 {
    fn from(format: WireFormat) -> i32 {
        let raw = match format {
            WireFormat::F32 => sys::xffl_wire_format::XFFL_WIRE_F32,
            WireFormat::Bf16 => sys::xffl_wire_format::XFFL_WIRE_BF16,
            WireFormat::F16 => sys::xffl_wire_format::XFFL_WIRE_F16,
            WireFormat::Int8Block => sys::xffl_wire_format::XFFL_WIRE_INT8_BLOCK,
            WireFormat::Int4Block => sys::xffl_wire_format::XFFL_WIRE_INT4_BLOCK,
        };
        raw.0 as i32
    }
}

/// How [`State::federated_average`](crate::State::federated_average) moves data.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FederatedStrategy {
    /// Senders all-reduce across groups, then broadcast to their replica group.
    Hierarchical,
    /// Every rank all-reduces over its FEDERATED group (xFFL's symmetric way).
    Flat,
}

impl From<FederatedStrategy> for i32 {
    fn from(strategy: FederatedStrategy) -> i32 {
        let raw = match strategy {
            FederatedStrategy::Hierarchical => sys::xffl_federated_strategy::XFFL_FEDAVG_HIERARCHICAL,
            FederatedStrategy::Flat => sys::xffl_federated_strategy::XFFL_FEDAVG_FLAT,
        };
        raw.0 as i32
    }
}

/// Verbosity of the library's own log lines on stderr.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LogLevel {
    /// Errors only.
    Error,
    /// Errors and warnings.
    Warn,
    /// Also progress information.
    Info,
    /// Everything.
    Debug,
}

impl From<LogLevel> for i32 {
    fn from(level: LogLevel) -> i32 {
        let raw = match level {
            LogLevel::Error => sys::xffl_log_level::XFFL_LOG_ERROR,
            LogLevel::Warn => sys::xffl_log_level::XFFL_LOG_WARN,
            LogLevel::Info => sys::xffl_log_level::XFFL_LOG_INFO,
            LogLevel::Debug => sys::xffl_log_level::XFFL_LOG_DEBUG,
        };
        raw.0 as i32
    }
}
