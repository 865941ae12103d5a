//! Collectives and federated averaging with backend none: one-member groups compute locally, lengths
//! are checked before any C call, and groups of several members report that they need a backend.
use xffl::{Backend, DType, Device, ErrorKind, FederatedStrategy, GroupKind, OptionKey, RedOp, State, BF16, F16};

fn state_of(rank: i32, world: i32) -> State {
    let mut st = State::new().unwrap();
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, rank, world).unwrap();
    st
}

/// Every collective on a one-member group leaves the data as one member's data.
fn one_member_collectives<T: DType + PartialEq + std::fmt::Debug>(values: [T; 4]) {
    let st = state_of(0, 1);
    let world = st.group(GroupKind::World, 0).unwrap();
    assert_eq!((world.size().unwrap(), world.rank().unwrap()), (1, 0));
    for op in [RedOp::Sum, RedOp::Avg, RedOp::Min, RedOp::Max, RedOp::Prod] {
        let mut recv = [values[0]; 4];
        recv[0] = values[3];
        world.allreduce(&values, &mut recv, op).unwrap();
        assert_eq!(recv, values, "{:?} allreduce {op:?}", T::DATA_TYPE);
        let mut buf = values;
        world.allreduce_in_place(&mut buf, op).unwrap();
        assert_eq!(buf, values, "{:?} in-place allreduce {op:?}", T::DATA_TYPE);
        let mut block = [values[0]; 4];
        world.reduce_scatter(&values, &mut block, op).unwrap();
        assert_eq!(block, values);
    }
    let mut buf = values;
    world.broadcast(&mut buf, 0).unwrap();
    assert_eq!(buf, values);
    let mut gathered = [values[3]; 4];
    world.allgather(&values, &mut gathered).unwrap();
    assert_eq!(gathered, values);
    world.barrier().unwrap();
    // Empty buffers are fine too.
    world.allreduce::<T>(&[], &mut [], RedOp::Sum).unwrap();
}

#[test]
fn every_dtype_through_a_one_member_world() {
    one_member_collectives([1.5f32, -2.0, 0.0, 1e30]);
    one_member_collectives([1.5f64, -2.0, 0.0, 1e300]);
    one_member_collectives([1i8, -128, 127, 0]);
    one_member_collectives([1u8, 255, 0, 7]);
    one_member_collectives([1i32, i32::MIN, i32::MAX, 0]);
    one_member_collectives([1i64, i64::MIN, i64::MAX, 0]);
    one_member_collectives([F16::from_f32(1.5), F16::from_f32(-2.0), F16::from_f32(0.0), F16::from_f32(65504.0)]);
    one_member_collectives([BF16::from_f32(1.5), BF16::from_f32(-2.0), BF16::from_f32(0.0), BF16::from_f32(1e30)]);
}

#[test]
fn lengths_are_checked_before_calling_c() {
    // An 8-member world with backend none: C would answer XFFL_EUNSUPPORTED, so an InvalidArgument
    // that names the Rust method proves the check happened first.
    let st = state_of(0, 8);
    let world = st.group(GroupKind::World, 0).unwrap();
    let err = world.allreduce(&[1.0f32; 3], &mut [0.0; 4], RedOp::Sum).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(
        err.message.contains("Group::allreduce") && err.message.contains('3') && err.message.contains('4'),
        "{err}"
    );
    let err = world.allgather(&[1i32; 2], &mut [0; 15]).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(err.message.contains("Group::allgather") && err.message.contains("8 members"), "{err}");
    let err = world.reduce_scatter(&[1i64; 15], &mut [0; 2], RedOp::Sum).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(err.message.contains("Group::reduce_scatter") && err.message.contains("15"), "{err}");

    // Right lengths reach C, which explains that eight members need a backend.
    let err = world.allreduce(&[1.0f32; 3], &mut [0.0; 3], RedOp::Sum).unwrap_err();
    assert_eq!(err.code, ErrorKind::Unsupported);
    assert!(err.message.contains("backend none") && err.message.contains("8 members"), "{err}");
    assert_eq!(world.allgather(&[1i32; 2], &mut [0; 16]).unwrap_err().code, ErrorKind::Unsupported);
    assert_eq!(world.barrier().unwrap_err().code, ErrorKind::Unsupported);
}

#[test]
fn broadcast_root_must_be_a_member() {
    let st = state_of(2, 4);
    let me = st.create_process_group(&[2], "me").unwrap();
    let mut buf = [1u8, 2, 3];
    me.broadcast(&mut buf, 2).unwrap(); // root is a global rank: 2, not group rank 0
    assert_eq!(buf, [1, 2, 3]);
    let err = me.broadcast(&mut buf, 0).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(err.message.contains("root rank 0 is not a member"), "{err}");
}

#[test]
fn federated_average_of_one_group_keeps_every_dtype() {
    let mut st = state_of(0, 1);
    st.federated_scaling(&[1], None).unwrap();
    for strategy in [FederatedStrategy::Hierarchical, FederatedStrategy::Flat] {
        st.set_option(OptionKey::FederatedStrategy, strategy.into()).unwrap();
        let mut f = vec![0.1f32, -3.5, 7.25];
        st.federated_average(&mut f).unwrap();
        assert_eq!(f, [0.1, -3.5, 7.25]);
        let mut d = vec![1e-300f64, 2.0];
        st.federated_average(&mut d).unwrap();
        assert_eq!(d, [1e-300, 2.0]);
        let mut h = vec![F16::from_f32(0.333), F16::from_f32(-1.0)];
        let before = h.clone();
        st.federated_average(&mut h).unwrap();
        assert_eq!(h, before);
        let mut b = vec![BF16::from_f32(3.0); 5];
        st.federated_average(&mut b).unwrap();
        assert_eq!(b, vec![BF16::from_f32(3.0); 5]);
        let mut i = vec![i64::MAX, -1, 0];
        st.federated_average(&mut i).unwrap();
        assert_eq!(i, [i64::MAX, -1, 0]);
        let (mut a, mut c) = (vec![1i8, -1], vec![200u8; 300]);
        let mut empty: Vec<i32> = Vec::new();
        st.federated_average_many(&mut [&mut a[..], &mut []]).unwrap();
        st.federated_average_many(&mut [&mut c[..]]).unwrap();
        st.federated_average(&mut empty).unwrap();
        assert_eq!((a, c), (vec![1, -1], vec![200u8; 300]));
    }
    // Weights on one group: still the same values for floats.
    st.set_federated_weights(&[3.0]).unwrap();
    let mut f = vec![2.5f64; 3];
    st.federated_average(&mut f).unwrap();
    assert_eq!(f, [2.5; 3]);
    let err = st.set_federated_weights(&[f64::NAN]).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument, "{err}");
    let err = st.set_federated_weights(&[]).unwrap_err();
    assert!(err.message.contains("clear_federated_weights"), "{err}");
    st.clear_federated_weights().unwrap();
}

#[test]
fn federated_average_across_groups_needs_a_backend() {
    let mut st = state_of(3, 8);
    st.federated_scaling(&[4], Some(2)).unwrap();
    let err = st.federated_average(&mut [1.0f32; 8]).unwrap_err();
    assert_eq!(err.code, ErrorKind::Unsupported);
    assert!(err.message.contains("backend none"), "{err}");
}
