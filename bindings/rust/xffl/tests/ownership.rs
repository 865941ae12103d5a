//! Ownership: owned groups are destroyed before their state, borrowed groups live with the layout,
//! a state moves between threads, and drops never panic. (The compile-time half, that an OwnedGroup
//! cannot outlive its state, is the compile_fail doc test on OwnedGroup.)
use xffl::{Backend, Device, GroupKind, OwnedGroup, RedOp, State};

fn state_of(rank: i32, world: i32) -> State {
    let mut st = State::new().unwrap();
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, rank, world).unwrap();
    st
}

const fn assert_send<T: Send>() {}
const _: () = assert_send::<State>();
const _: () = assert_send::<xffl::Error>();

#[test]
fn many_owned_groups_created_and_dropped_in_any_order() {
    let st = state_of(3, 16);
    let mut groups: Vec<OwnedGroup<'_>> = Vec::new();
    for n in 1..=12 {
        let members: Vec<i32> = (0..n).map(|i| (3 + i) % 16).collect();
        let group = st.create_process_group(&members, &format!("group of {n}")).unwrap();
        assert_eq!(group.size().unwrap(), n as usize);
        assert_eq!(group.rank().unwrap(), 0);
        assert_eq!(group.ranks().unwrap(), members);
        assert_eq!(group.description(), format!("group of {n}"));
        groups.push(group);
    }
    // Drop from the middle, then the rest in reverse; the state still works afterwards.
    groups.remove(5);
    groups.remove(0);
    while let Some(group) = groups.pop() {
        drop(group);
    }
    // The same member list again: a new group with the same view.
    let again = st.create_process_group(&[3, 4], "again").unwrap();
    assert_eq!(again.ranks().unwrap(), vec![3, 4]);
    drop(again);
    assert_eq!(st.group(GroupKind::World, 0).unwrap().size().unwrap(), 16);
}

#[test]
fn owned_groups_outlive_layout_changes() {
    let mut st = state_of(0, 4);
    st.set_fsdp().unwrap();
    {
        let fsdp = st.group(GroupKind::Fsdp, 0).unwrap();
        assert_eq!(fsdp.ranks().unwrap(), vec![0, 1, 2, 3]);
    } // the borrowed group ends here, so the layout may change
    st.unset_fsdp().unwrap();
    st.set_hsdp(2).unwrap();
    let alone = st.create_process_group(&[0], "alone").unwrap();
    let mut x = [4.0f64];
    alone.allreduce_in_place(&mut x, RedOp::Sum).unwrap();
    assert_eq!(x, [4.0]);
    assert_eq!(st.group(GroupKind::HsdpShard, 0).unwrap().ranks().unwrap(), vec![0, 1]);
}

#[test]
fn a_state_moves_to_another_thread_with_its_groups_made_there() {
    let st = state_of(1, 2);
    let handle = std::thread::spawn(move || {
        let mut st = st;
        st.set_fsdp().unwrap();
        let me = st.create_process_group(&[1], "me").unwrap();
        let mut buf = [7i32; 3];
        me.allreduce_in_place(&mut buf, RedOp::Max).unwrap();
        drop(me);
        // An error on this thread carries this thread's message.
        let err = st.set_fsdp().unwrap_err();
        (buf, err.message)
    });
    let (buf, message) = handle.join().unwrap();
    assert_eq!(buf, [7; 3]);
    assert!(message.contains("xffl_unset_fsdp"), "{message}");
}

#[test]
fn dropping_states_at_every_stage_is_quiet() {
    drop(State::new().unwrap());
    drop(state_of(0, 1));
    let mut st = state_of(5, 16);
    st.set_node(1, 4, 1, 4).unwrap();
    st.set_exec_device(-1, 2).unwrap();
    st.federated_scaling(&[8], Some(4)).unwrap();
    drop(st);
    // A failed State::from_env leaves nothing to drop; a successful one drops like any other.
    let _ = State::from_env();
}
