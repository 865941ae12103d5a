//! Error paths through the safe API: calls out of order, invalid inputs (with what the message
//! says), answers larger than the first buffer, and the error type itself.
use xffl::{Attr, Backend, Device, Error, ErrorKind, Format, GroupKind, MeshKind, OptionKey, State};

fn state_of(rank: i32, world: i32) -> State {
    let mut st = State::new().unwrap();
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, rank, world).unwrap();
    st
}

fn expect_err<T: std::fmt::Debug>(result: xffl::Result<T>, code: ErrorKind, words: &[&str]) -> Error {
    let err = result.expect_err("the call must fail");
    assert_eq!(err.code, code, "{err}");
    for word in words {
        assert!(err.message.contains(word), "message {:?} lacks {word:?}", err.message);
    }
    err
}

#[test]
fn calls_before_set_global_are_out_of_order() {
    let mut st = State::new().unwrap();
    expect_err(st.set_node(0, 1, 0, 1), ErrorKind::State, &["set_global"]);
    expect_err(st.set_exec_device(-1, 1), ErrorKind::State, &["set_global"]);
    expect_err(st.set_init_device(Device::Cpu, false), ErrorKind::State, &["set_global"]);
    expect_err(st.set_fsdp(), ErrorKind::State, &["set_global"]);
    expect_err(st.set_hsdp(1), ErrorKind::State, &["set_global"]);
    expect_err(st.federated_scaling(&[1], None), ErrorKind::State, &["set_global"]);
    expect_err(st.create_process_group(&[0], "g"), ErrorKind::State, &["set_global"]);
    expect_err(st.group(GroupKind::World, 0), ErrorKind::NotSet, &["set_global"]);
    expect_err(st.master_addr(), ErrorKind::NotSet, &["set_global"]);
    expect_err(st.get_int(Attr::Rank), ErrorKind::NotSet, &["rank"]);
    // Describing works at every stage, and options at any time.
    assert!(st.describe(Format::Text).unwrap().contains("None"));
    st.set_option(OptionKey::TimeoutMs, 1234).unwrap();
    assert_eq!(st.get_option(OptionKey::TimeoutMs).unwrap(), 1234);
    st.set_option(OptionKey::CrossFacilityBackend, Backend::Ucx.into()).unwrap();
    assert_eq!(st.get_option(OptionKey::CrossFacilityBackend).unwrap(), i32::from(Backend::Ucx));
    expect_err(st.set_option(OptionKey::CrossFacilityBackend, Backend::Nccl.into()), ErrorKind::InvalidArgument,
               &["cross-facility"]);
}

#[test]
fn layouts_follow_their_order_and_changes_nothing_on_failure() {
    let mut st = state_of(0, 8);
    expect_err(st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 1, 0, 8), ErrorKind::State, &["already"]);
    expect_err(st.unset_fsdp(), ErrorKind::State, &["not set"]);
    st.set_fsdp().unwrap();
    expect_err(st.set_hsdp(2), ErrorKind::State, &["xffl_unset_fsdp"]);
    expect_err(st.federated_scaling(&[4], None), ErrorKind::State, &["xffl_unset_fsdp"]);
    expect_err(st.set_node(0, 1, 0, 8), ErrorKind::State, &["before the layout"]);
    expect_err(st.set_exec_device(-1, 2), ErrorKind::State, &["streams 2 differs from the 1"]);
    st.set_exec_device(0, 1).unwrap(); // the device may still be chosen, with the layout's stream count
    expect_err(st.unset_hsdp(), ErrorKind::State, &["xffl_set_fsdp"]);
    assert!(st.is_fsdp_setup(), "failed calls changed nothing");
    st.unset_fsdp().unwrap();
    assert!(!st.is_fsdp_setup());
    st.set_hsdp(4).unwrap();
    st.unset_hsdp().unwrap();
    st.federated_scaling(&[4], Some(2)).unwrap();
    expect_err(st.unset_hsdp(), ErrorKind::State, &["xffl_federated_scaling"]);
    st.unset_federated_scaling().unwrap();
    expect_err(st.get_int(Attr::FederatedRank), ErrorKind::NotSet, &["federated_rank"]);
}

#[test]
fn federated_calls_need_federated_scaling() {
    let mut st = state_of(0, 1);
    let mut buf = [1.0f32; 4];
    expect_err(st.federated_average(&mut buf), ErrorKind::State, &["federated_scaling"]);
    expect_err(st.federated_average_many(&mut [&mut buf[..]]), ErrorKind::State, &["federated_scaling"]);
    expect_err(st.set_federated_weights(&[1.0]), ErrorKind::State, &["federated_scaling"]);
    st.set_hsdp(1).unwrap();
    expect_err(st.federated_average(&mut buf), ErrorKind::State, &["federated_scaling"]);
}

#[test]
fn invalid_inputs_name_the_values() {
    let mut st = State::new().unwrap();
    expect_err(st.set_global(Backend::None, Device::Cpu, "", 1, 0, 1), ErrorKind::InvalidArgument, &["empty"]);
    expect_err(st.set_global(Backend::None, Device::Cpu, "a\0b", 1, 0, 1), ErrorKind::InvalidArgument, &["NUL"]);
    expect_err(st.set_global(Backend::None, Device::Cpu, "h", 1, 0, 0), ErrorKind::InvalidArgument, &["0"]);
    expect_err(st.set_global(Backend::None, Device::Meta, "h", 1, 0, 1), ErrorKind::InvalidArgument, &["device type"]);
    expect_err(st.set_global(Backend::None, Device::Cpu, "h", 1, -1, 1), ErrorKind::InvalidArgument, &["rank -1"]);
    // Failures left the state untouched: it can still be set up.
    st.set_global(Backend::None, Device::Cpu, "node0", 29500, 2, 8).unwrap();
    assert_eq!(st.master_addr().unwrap(), "node0");

    expect_err(st.set_node(0, 3, 0, 2), ErrorKind::InvalidArgument, &["node local size 3", "world size 8"]);
    expect_err(st.set_node(4, 4, 0, 2), ErrorKind::InvalidArgument, &["node local rank 4", "[0, 4)"]);
    expect_err(st.set_exec_device(-1, 0), ErrorKind::InvalidArgument, &["streams 0"]);
    expect_err(st.set_hsdp(3), ErrorKind::InvalidArgument, &["3", "8"]);
    expect_err(st.federated_scaling(&[4], Some(0)), ErrorKind::InvalidArgument, &["Some(0)", "None"]);
    expect_err(st.federated_scaling(&[], None), ErrorKind::InvalidArgument, &["empty"]);
    expect_err(st.federated_scaling(&[4, -4, 8], Some(2)), ErrorKind::InvalidArgument, &["-4"]);
    expect_err(st.get_int(Attr::ReplicaWorldSize), ErrorKind::InvalidArgument, &["xffl_get_ints"]);
    expect_err(st.group(GroupKind::World, 1), ErrorKind::InvalidArgument, &["instance 1"]);
    expect_err(st.group(GroupKind::World, usize::MAX), ErrorKind::InvalidArgument, &["C int"]);
    expect_err(st.group(GroupKind::Federated, 0), ErrorKind::NotSet, &["federated"]);
    expect_err(st.mesh(MeshKind::Hsdp), ErrorKind::NotSet, &["hsdp_mesh"]);
    expect_err(st.set_option(OptionKey::LogLevel, 99), ErrorKind::InvalidArgument, &["99"]);
    expect_err(st.set_option(OptionKey::FederatedStrategy, -1), ErrorKind::InvalidArgument, &["-1"]);

    expect_err(st.create_process_group(&[0, 1], "no me"), ErrorKind::InvalidArgument, &["rank 2 is not a member"]);
    expect_err(st.create_process_group(&[2, 2], "twice"), ErrorKind::InvalidArgument, &["twice"]);
    expect_err(st.create_process_group(&[2, 8], "outside"), ErrorKind::InvalidArgument, &["rank 8", "[0, 8)"]);
    expect_err(st.create_process_group(&[], "empty"), ErrorKind::InvalidArgument, &["empty"]);
    expect_err(st.create_process_group(&[2], "nul\0inside"), ErrorKind::InvalidArgument, &["NUL"]);

    expect_err(xffl::Mesh::grid(&[]), ErrorKind::InvalidArgument, &["ndim is 0"]);
    expect_err(xffl::Mesh::grid(&[2, 0]), ErrorKind::InvalidArgument, &["extent 0"]);
    expect_err(xffl::Mesh::grid(&[1 << 16, 1 << 16]), ErrorKind::InvalidArgument, &["ranks"]);
}

#[test]
fn backends_this_build_lacks_are_unsupported_not_a_crash() {
    let mut st = State::new().unwrap();
    let err = st.set_global(Backend::Nccl, Device::Cuda, "127.0.0.1", 29500, 0, 1).unwrap_err();
    assert!(matches!(err.code, ErrorKind::Unsupported | ErrorKind::Backend), "{err}");
    // State::from_env either works (a launcher environment) or says exactly why not.
    if let Err(err) = State::from_env() {
        assert!(matches!(err.code, ErrorKind::InvalidArgument | ErrorKind::Unsupported), "{err}");
        assert!(!err.message.is_empty());
    }
}

#[test]
fn each_error_keeps_its_own_message() {
    let mut st = State::new().unwrap();
    let first = st.set_hsdp(2).unwrap_err();
    let second = st.set_global(Backend::None, Device::Cpu, "h", 1, 9, 3).unwrap_err();
    assert_ne!(first.message, second.message);
    assert!(first.message.contains("set_global first"), "{first}");
    assert!(second.message.contains("rank 9"), "{second}");
    // Successful calls leave earlier errors alone.
    st.set_global(Backend::None, Device::Cpu, "h", 1, 0, 3).unwrap();
    assert!(second.message.contains("rank 9"));
}

#[test]
fn errors_display_and_convert() {
    let st = State::new().unwrap();
    let err = st.get_int(Attr::WorldSize).unwrap_err();
    let shown = err.to_string();
    assert!(shown.starts_with("XFFL_ENOTSET: "), "{shown}");
    assert!(shown.contains("world_size"), "{shown}");
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(err.clone());
    assert_eq!(boxed.to_string(), shown);
    assert_eq!(err.kind(), ErrorKind::NotSet);
    assert_eq!(err.message(), err.message.as_str());

    for raw in -13..=-1 {
        let kind = ErrorKind::from_raw(raw);
        assert!(!matches!(kind, ErrorKind::Unknown(_)), "status {raw} has a variant");
        assert_eq!(kind.raw(), raw);
        assert!(kind.description().starts_with(kind.name()), "{}", kind.description());
    }
    let unknown = ErrorKind::from_raw(-77);
    assert_eq!(unknown, ErrorKind::Unknown(-77));
    assert_eq!(unknown.raw(), -77);
    assert_eq!(unknown.to_string(), "XFFL_UNKNOWN(-77)");
    assert!(unknown.description().starts_with("XFFL_UNKNOWN"));
}

#[test]
fn large_answers_are_read_whole() {
    // 1000 ranks: more than the first guess of every buffer, so each read retries with the
    // length the library reported.
    let mut st = state_of(999, 1000);
    {
        let world = st.group(GroupKind::World, 0).unwrap();
        assert_eq!(world.ranks().unwrap(), (0..1000).collect::<Vec<_>>());
        assert_eq!(world.rank().unwrap(), 999);
    }
    st.set_fsdp().unwrap();
    assert_eq!(st.mesh(MeshKind::Fsdp).unwrap().ranks().len(), 1000);
    assert_eq!(xffl::Mesh::grid(&[10, 100]).unwrap().ranks().len(), 1000);
    st.unset_fsdp().unwrap();
    st.federated_scaling(&[1], None).unwrap();
    assert_eq!(st.get_ints(Attr::FederatedLocalSize).unwrap(), vec![1; 1000]);

    // The text is longer than the first buffer; it must equal what one big C call gives.
    for format in [Format::Text, Format::Json] {
        let text = st.describe(format).unwrap();
        assert!(text.len() > 256, "{format:?} is {} bytes", text.len());
        let mut buf = vec![0u8; text.len() + 1];
        let mut len = 0usize;
        let raw_format = match format {
            Format::Text => xffl::xffl_sys::xffl_format::XFFL_FORMAT_TEXT,
            _ => xffl::xffl_sys::xffl_format::XFFL_FORMAT_JSON,
        };
        let status = unsafe {
            xffl::xffl_sys::xffl_state_describe(st.as_raw(), raw_format, buf.as_mut_ptr().cast(), buf.len(), &mut len)
        };
        assert_eq!(status, xffl::xffl_sys::xffl_status::XFFL_OK);
        assert_eq!(&buf[..len], text.as_bytes());
    }
    let json = st.describe(Format::Json).unwrap();
    assert!(json.starts_with('{') && json.ends_with('}'), "{json}");
    assert!(json.contains("\"rank\": 999"), "{json}");

    // A long master address, longer than the first text buffer.
    let mut long = State::new().unwrap();
    let addr = "h".repeat(1000);
    long.set_global(Backend::None, Device::Cpu, &addr, 1, 0, 1).unwrap();
    assert_eq!(long.master_addr().unwrap(), addr);
}
