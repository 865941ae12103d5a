//! The rest of xFFL's DistributedState through the safe API: a caller's FSDP mesh, HSDP from its
//! fields, the senders of each federated group, string options, and the mesh call with its shape
//! capacity. Worked values of DESIGN.md 3.3 and spec/xffl-examples.md, every invalid input, and the
//! state unchanged (its JSON description) after each error.
use xffl::{Attr, Backend, Device, ErrorKind, Format, GroupKind, MeshKind, OptionKey, State};

fn state_of(rank: i32, world: i32) -> State {
    let mut st = State::new().unwrap();
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, rank, world).unwrap();
    st
}

fn expect_refused<T: std::fmt::Debug>(
    st: &mut State,
    call: impl FnOnce(&mut State) -> xffl::Result<T>,
    code: ErrorKind,
    words: &str,
) {
    let before = st.describe(Format::Json).unwrap();
    let err = call(st).expect_err("the call must fail");
    assert_eq!(err.code, code, "{err}");
    assert!(err.message.contains(words), "message {:?} lacks {words:?}", err.message);
    assert_eq!(st.describe(Format::Json).unwrap(), before, "the refused call changed the state");
}

#[test]
fn fsdp_mesh_of_the_caller_sorted() {
    let mut st = state_of(5, 12);
    st.set_fsdp_mesh(&[9, 5, 7, 11]).unwrap();
    assert!(st.is_fsdp_setup() && !st.is_hsdp_setup());
    let mesh = st.mesh(MeshKind::Fsdp).unwrap();
    assert_eq!(mesh.shape(), &[4]);
    assert_eq!(mesh.ranks(), &[5, 7, 9, 11]);
    let group = st.group(GroupKind::Fsdp, 0).unwrap();
    assert_eq!(group.ranks().unwrap(), vec![5, 7, 9, 11]);
    assert_eq!(group.rank().unwrap(), 0);
    assert_eq!(st.mesh(MeshKind::Hsdp).unwrap_err().code, ErrorKind::NotSet);
    assert_eq!(st.unset_hsdp().unwrap_err().code, ErrorKind::State);
    st.unset_fsdp().unwrap();
    assert!(!st.is_fsdp_setup());
}

#[test]
fn fsdp_mesh_invalid_inputs_change_nothing() {
    let mut st = state_of(3, 8);
    expect_refused(&mut st, |st| st.set_fsdp_mesh(&[3, 1, 3]), ErrorKind::InvalidArgument, "rank 3 appears twice");
    expect_refused(
        &mut st,
        |st| st.set_fsdp_mesh(&[3, 8]),
        ErrorKind::InvalidArgument,
        "rank 8 of the fsdp mesh outside [0, 8)",
    );
    expect_refused(
        &mut st,
        |st| st.set_fsdp_mesh(&[0, 1, 2]),
        ErrorKind::InvalidArgument,
        "rank 3 is not in the fsdp mesh",
    );
    expect_refused(&mut st, |st| st.set_fsdp_mesh(&[]), ErrorKind::InvalidArgument, "n is 0");
    st.set_hsdp(2).unwrap();
    expect_refused(&mut st, |st| st.set_fsdp_mesh(&[3]), ErrorKind::State, "after xffl_set_hsdp");
}

#[test]
fn hsdp_manual_equals_set_hsdp() {
    for (world, s) in [(8, 2), (12, 4)] {
        for r in 0..world {
            let mut manual = state_of(r, world);
            let mut plain = state_of(r, world);
            manual.set_hsdp_manual(r % s, s, r / s, &[world / s]).unwrap();
            plain.set_hsdp(s).unwrap();
            assert_eq!(
                manual.describe(Format::Json).unwrap(),
                plain.describe(Format::Json).unwrap(),
                "W={world} S={s} r={r}"
            );
        }
    }
    // spec 5.1, rank 5: rl 1, rr 2; replica-dim peers 1,3,5,7, shard-dim peers 4,5.
    let mut st = state_of(5, 8);
    st.set_hsdp_manual(1, 2, 2, &[4]).unwrap();
    assert_eq!(st.get_int(Attr::ReplicaLocalRank).unwrap(), 1);
    assert_eq!(st.get_int(Attr::ReplicaRank).unwrap(), 2);
    assert_eq!(st.get_ints(Attr::ReplicaWorldSize).unwrap(), vec![4]);
    assert_eq!(st.group(GroupKind::HsdpReplica, 0).unwrap().ranks().unwrap(), vec![1, 3, 5, 7]);
    assert_eq!(st.group(GroupKind::HsdpShard, 0).unwrap().ranks().unwrap(), vec![4, 5]);
    assert_eq!(st.mesh(MeshKind::Hsdp).unwrap().shape(), &[4, 2]);
    st.unset_hsdp().unwrap();
}

#[test]
fn hsdp_manual_invalid_inputs_change_nothing() {
    let mut st = state_of(5, 8);
    let cases: [(i32, i32, i32, &[i32], &str); 9] = [
        (1, 0, 2, &[4], "replica_local_size 0 must be at least 1"),
        (2, 2, 2, &[4], "replica_local_rank 2 outside [0, 2)"),
        (1, 2, 2, &[4, 4], "replica_world_size has 2 entries"),
        (1, 3, 2, &[2], "replica_local_size 3 does not divide world size 8"),
        (1, 2, 2, &[3], "replica_world_size (3,) is not world size 8 / replica_local_size 2 = 4"),
        (1, 2, 4, &[4], "replica_rank 4 outside [0, 4)"),
        (0, 2, 2, &[4], "replica_local_rank 0 is not rank 5 mod replica_local_size 2 = 1"),
        (1, 2, 1, &[4], "replica_rank 1 is not rank 5 / replica_local_size 2 = 2"),
        (1, 2, 2, &[], "n is 0"),
    ];
    for (rl, rls, rr, rws, words) in cases {
        expect_refused(&mut st, |st| st.set_hsdp_manual(rl, rls, rr, rws), ErrorKind::InvalidArgument, words);
    }
    st.federated_scaling(&[4], Some(2)).unwrap();
    expect_refused(
        &mut st,
        |st| st.set_hsdp_manual(1, 2, 0, &[2, 2]),
        ErrorKind::State,
        "after xffl_federated_scaling",
    );
}

#[test]
fn communicating_processes_worked_values() {
    // DESIGN.md 3.3: W = 12, F = (4, 8), S = 2: C_0 = (0, 3), C_1 = (4, 7), on every rank.
    for r in 0..12 {
        let mut st = state_of(r, 12);
        st.federated_scaling(&[4, 8], Some(2)).unwrap();
        assert_eq!(st.communicating_processes(0).unwrap(), vec![0, 3], "rank {r}");
        assert_eq!(st.communicating_processes(1).unwrap(), vec![4, 7], "rank {r}");
        let err = st.communicating_processes(2).unwrap_err();
        assert_eq!(err.code, ErrorKind::InvalidArgument);
        assert!(err.message.contains("federated rank 2 outside [0, 2)"), "{}", err.message);
    }
    // spec 5.5 (W = 6, F = (2, 4), S = 2) and 5.3 (no HSDP: every rank sends).
    let mut st = state_of(0, 6);
    st.federated_scaling(&[2, 4], Some(2)).unwrap();
    assert_eq!(st.communicating_processes(0).unwrap(), vec![0, 1]);
    assert_eq!(st.communicating_processes(1).unwrap(), vec![2, 5]);
    let mut st = state_of(6, 8);
    st.federated_scaling(&[4], None).unwrap();
    assert_eq!(st.communicating_processes(1).unwrap(), vec![4, 5, 6, 7]);
    st.unset_federated_scaling().unwrap();
    assert_eq!(st.communicating_processes(0).unwrap_err().code, ErrorKind::State);
}

#[test]
fn string_options() {
    let st = State::new().unwrap();
    st.set_option_string(OptionKey::JobId, "job-7").unwrap();
    assert_eq!(st.get_option_string(OptionKey::JobId).unwrap(), "job-7");
    let long = "j".repeat(300);
    let err = st.set_option_string(OptionKey::JobId, &long).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert_eq!(st.get_option_string(OptionKey::JobId).unwrap(), "job-7");
    st.set_option_string(OptionKey::AuthToken, "hunter2-secret").unwrap();
    let err = st.get_option_string(OptionKey::AuthToken).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(!err.message.contains("hunter2"), "{}", err.message);
    let err = st.set_option_string(OptionKey::AuthToken, "hunter2\0x").unwrap_err();
    assert!(!err.message.contains("hunter2"), "{}", err.message);
    // Int keys to the string calls, string keys to the int calls.
    assert_eq!(st.set_option_string(OptionKey::TimeoutMs, "5").unwrap_err().code, ErrorKind::InvalidArgument);
    assert_eq!(st.get_option_string(OptionKey::LogLevel).unwrap_err().code, ErrorKind::InvalidArgument);
    assert_eq!(st.set_option(OptionKey::JobId, 1).unwrap_err().code, ErrorKind::InvalidArgument);
    assert_eq!(st.get_option(OptionKey::AuthToken).unwrap_err().code, ErrorKind::InvalidArgument);
    // Only before set_global.
    let mut st = st;
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 0, 1).unwrap();
    let err = st.set_option_string(OptionKey::JobId, "late").unwrap_err();
    assert_eq!(err.code, ErrorKind::State);
    assert!(err.message.contains("xffl_set_global"), "{}", err.message);
    assert_eq!(st.get_option_string(OptionKey::JobId).unwrap(), "job-7");
}
