//! The worked tables of shared/spec/xffl-examples.md (what xFFL's Python DistributedState computes),
//! checked rank by rank through the safe API with backend none: every field, every group, the meshes.
use xffl::{Attr, Backend, Device, ErrorKind, GroupKind, MeshKind, State};

/// One row of a federated table (sections 5.2, 5.4, 5.5, 5.6).
struct Row {
    r: i32,
    fl: i32,
    f: i32,
    rl: i32,
    rr: i32,
    is_sender: bool,
    receive_from: Option<i32>,
    federated_group: Vec<i32>,
    replica_group: Vec<i32>,
    shard_group: Vec<i32>,
    federation: Vec<i32>,
}

fn span(first: i32, last: i32) -> Vec<i32> {
    (first..=last).collect()
}

#[allow(clippy::too_many_arguments)]
fn row(
    r: i32,
    fl: i32,
    f: i32,
    rl: i32,
    rr: i32,
    receive_from: Option<i32>,
    fg: &[i32],
    rg: &[i32],
    shard: &[i32],
    fed: Vec<i32>,
) -> Row {
    Row {
        r,
        fl,
        f,
        rl,
        rr,
        is_sender: receive_from.is_none(),
        receive_from,
        federated_group: fg.to_vec(),
        replica_group: rg.to_vec(),
        shard_group: shard.to_vec(),
        federation: fed,
    }
}

/// Constants of a federated HSDP table.
struct Federated<'a> {
    world: i32,
    sizes: &'a [i32],
    hsdp: i32,
    expanded_sizes: &'a [i32],
    replica_world_size: &'a [i32],
    /// The hsdp mesh of each federation, rows of ranks.
    hsdp_meshes: &'a [&'a [&'a [i32]]],
}

fn state_of(rank: i32, world: i32) -> State {
    let mut st = State::new().expect("state");
    st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, rank, world).expect("set_global");
    st
}

fn ranks(st: &State, kind: GroupKind) -> Vec<i32> {
    st.group(kind, 0).unwrap_or_else(|e| panic!("{kind:?} group: {e}")).ranks().expect("ranks")
}

fn assert_not_set(st: &State, attr: Attr, rank: i32) {
    let err = st.get_int(attr).expect_err("field must be None");
    assert_eq!(err.code, ErrorKind::NotSet, "rank {rank}: {attr:?}: {err}");
}

fn check_federated_hsdp(table: &Federated<'_>, rows: &[Row], node_size: Option<i32>) {
    assert_eq!(rows.len() as i32, table.world, "the table has a row per rank");
    for row in rows {
        let mut st = state_of(row.r, table.world);
        if let Some(l) = node_size {
            st.set_node(row.r % l, l, row.r / l, table.world / l).expect("set_node");
        }
        st.federated_scaling(table.sizes, Some(table.hsdp)).expect("federated_scaling");
        let r = row.r;
        let int = |attr| st.get_int(attr).unwrap_or_else(|e| panic!("rank {r}: {attr:?}: {e}"));

        assert_eq!(int(Attr::Rank), r);
        assert_eq!(int(Attr::WorldSize), table.world);
        assert_eq!(int(Attr::FederatedLocalRank), row.fl, "rank {r}: fl");
        assert_eq!(int(Attr::FederatedRank), row.f, "rank {r}: f");
        assert_eq!(int(Attr::FederatedWorldSize), table.expanded_sizes.len() as i32, "rank {r}: G");
        assert_eq!(st.get_ints(Attr::FederatedLocalSize).unwrap(), table.expanded_sizes, "rank {r}");
        assert_eq!(int(Attr::ReplicaLocalRank), row.rl, "rank {r}: rl");
        assert_eq!(int(Attr::ReplicaRank), row.rr, "rank {r}: rr");
        assert_eq!(int(Attr::ReplicaLocalSize), table.hsdp, "rank {r}: S");
        assert_eq!(int(Attr::Hsdp), table.hsdp, "rank {r}: hsdp");
        assert_eq!(st.get_ints(Attr::ReplicaWorldSize).unwrap(), table.replica_world_size, "rank {r}");
        assert_eq!(int(Attr::IsSender), i32::from(row.is_sender), "rank {r}: is_sender");
        assert_eq!(st.get_opt(Attr::ReceiveFrom).unwrap(), row.receive_from, "rank {r}: receive_from");

        assert_eq!(ranks(&st, GroupKind::Federated), row.federated_group, "rank {r}: FG");
        assert_eq!(ranks(&st, GroupKind::Replica), row.replica_group, "rank {r}: RG");
        assert_eq!(ranks(&st, GroupKind::HsdpReplica), row.replica_group, "rank {r}: replica-dim group");
        assert_eq!(ranks(&st, GroupKind::HsdpShard), row.shard_group, "rank {r}: shard-dim group");
        assert_eq!(ranks(&st, GroupKind::Federation), row.federation, "rank {r}: FED");
        assert_eq!(ranks(&st, GroupKind::World), span(0, table.world - 1), "rank {r}: world");
        for kind in GroupKind::ALL {
            let group = st.group(kind, 0);
            if kind == GroupKind::Fsdp {
                assert_eq!(group.unwrap_err().code, ErrorKind::NotSet, "rank {r}: no FSDP group with HSDP");
                continue;
            }
            let group = group.unwrap();
            let members = group.ranks().unwrap();
            assert_eq!(group.size().unwrap(), members.len());
            assert_eq!(members[group.rank().unwrap()], r, "rank {r}: {kind:?} group rank points at itself");
            assert!(!group.description().is_empty());
        }

        let mesh = st.mesh(MeshKind::Hsdp).expect("hsdp mesh");
        let expected: &[&[i32]] = table.hsdp_meshes[row.f as usize];
        assert_eq!(mesh.shape(), &[expected.len(), table.hsdp as usize], "rank {r}: mesh shape");
        assert_eq!(mesh.rows().collect::<Vec<_>>(), expected.to_vec(), "rank {r}: hsdp mesh");
        assert_eq!(mesh.column(row.rl as usize), row.replica_group, "rank {r}: mesh column = RG");
        assert_eq!(mesh.rows().nth(row.rr as usize).unwrap(), &row.shard_group[..], "rank {r}: mesh row");
        assert_eq!(st.mesh(MeshKind::Fsdp).unwrap_err().code, ErrorKind::NotSet, "rank {r}: fsdp_mesh None");

        assert!(st.is_federated_scaling_setup() && st.is_hsdp_setup() && !st.is_fsdp_setup());
        assert_eq!(st.is_node_setup(), node_size.is_some());
    }
}

#[test]
fn section_5_2_symmetric_federation_with_hsdp() {
    let fed_0 = span(0, 3);
    let fed_1 = span(4, 7);
    let rows = [
        row(0, 0, 0, 0, 0, None, &[0, 4], &[0, 2], &[0, 1], fed_0.clone()),
        row(1, 1, 0, 1, 0, Some(3), &[1, 5], &[1, 3], &[0, 1], fed_0.clone()),
        row(2, 2, 0, 0, 1, Some(0), &[2, 6], &[0, 2], &[2, 3], fed_0.clone()),
        row(3, 3, 0, 1, 1, None, &[3, 7], &[1, 3], &[2, 3], fed_0),
        row(4, 0, 1, 0, 0, None, &[0, 4], &[4, 6], &[4, 5], fed_1.clone()),
        row(5, 1, 1, 1, 0, Some(7), &[1, 5], &[5, 7], &[4, 5], fed_1.clone()),
        row(6, 2, 1, 0, 1, Some(4), &[2, 6], &[4, 6], &[6, 7], fed_1.clone()),
        row(7, 3, 1, 1, 1, None, &[3, 7], &[5, 7], &[6, 7], fed_1),
    ];
    let table = Federated {
        world: 8,
        sizes: &[4],
        hsdp: 2,
        expanded_sizes: &[4, 4],
        replica_world_size: &[2, 2],
        hsdp_meshes: &[&[&[0, 1], &[2, 3]], &[&[4, 5], &[6, 7]]],
    };
    check_federated_hsdp(&table, &rows, None);
}

#[test]
fn section_5_2_with_three_streams_gives_three_instances_of_the_same_members() {
    for r in 0..8 {
        let mut st = state_of(r, 8);
        st.set_exec_device(-1, 3).unwrap();
        st.federated_scaling(&[4], Some(2)).unwrap();
        assert_eq!(st.get_int(Attr::Streams).unwrap(), 3);
        for kind in [GroupKind::Federated, GroupKind::Replica] {
            let first = st.group(kind, 0).unwrap().ranks().unwrap();
            for instance in 1..3 {
                assert_eq!(st.group(kind, instance).unwrap().ranks().unwrap(), first, "rank {r}: {kind:?} #{instance}");
            }
            let err = st.group(kind, 3).unwrap_err();
            assert_eq!(err.code, ErrorKind::InvalidArgument, "rank {r}: instance 3 of 3");
            assert!(err.message.contains("instance 3"), "{err}");
        }
        // Only FEDERATED and REPLICA have several instances.
        assert_eq!(st.group(GroupKind::Federation, 1).unwrap_err().code, ErrorKind::InvalidArgument);
    }
}

#[test]
fn section_5_4_asymmetric_federation_with_hsdp() {
    let fed_0 = span(0, 3);
    let fed_1 = span(4, 11);
    let even = [4, 6, 8, 10];
    let odd = [5, 7, 9, 11];
    let rows = [
        row(0, 0, 0, 0, 0, None, &[0, 4], &[0, 2], &[0, 1], fed_0.clone()),
        row(1, 1, 0, 1, 0, Some(3), &[1], &[1, 3], &[0, 1], fed_0.clone()),
        row(2, 2, 0, 0, 1, Some(0), &[2], &[0, 2], &[2, 3], fed_0.clone()),
        row(3, 3, 0, 1, 1, None, &[3, 7], &[1, 3], &[2, 3], fed_0),
        row(4, 0, 1, 0, 0, None, &[0, 4], &even, &[4, 5], fed_1.clone()),
        row(5, 1, 1, 1, 0, Some(7), &[5], &odd, &[4, 5], fed_1.clone()),
        row(6, 2, 1, 0, 1, Some(4), &[6], &even, &[6, 7], fed_1.clone()),
        row(7, 3, 1, 1, 1, None, &[3, 7], &odd, &[6, 7], fed_1.clone()),
        row(8, 4, 1, 0, 2, Some(4), &[8], &even, &[8, 9], fed_1.clone()),
        row(9, 5, 1, 1, 2, Some(7), &[9], &odd, &[8, 9], fed_1.clone()),
        row(10, 6, 1, 0, 3, Some(4), &[10], &even, &[10, 11], fed_1.clone()),
        row(11, 7, 1, 1, 3, Some(7), &[11], &odd, &[10, 11], fed_1),
    ];
    let table = Federated {
        world: 12,
        sizes: &[4, 8],
        hsdp: 2,
        expanded_sizes: &[4, 8],
        replica_world_size: &[2, 4],
        hsdp_meshes: &[&[&[0, 1], &[2, 3]], &[&[4, 5], &[6, 7], &[8, 9], &[10, 11]]],
    };
    check_federated_hsdp(&table, &rows, None);
}

#[test]
fn section_5_5_unequal_sizes_rejected_without_hsdp_accepted_with_it() {
    for r in 0..6 {
        let mut st = state_of(r, 6);
        let err = st.federated_scaling(&[2, 4], None).unwrap_err();
        assert_eq!(err.code, ErrorKind::InvalidArgument, "rank {r}");
        assert!(err.message.contains("unequal") && err.message.contains("hsdp 2"), "rank {r}: {err}");
        // Unlike xFFL, the failed call stored nothing.
        assert!(!st.is_federated_scaling_setup());
        assert_eq!(st.get_int(Attr::FederatedRank).unwrap_err().code, ErrorKind::NotSet);
        assert_eq!(st.group(GroupKind::Federated, 0).unwrap_err().code, ErrorKind::NotSet);
    }
    let rows = [
        row(0, 0, 0, 0, 0, None, &[0, 2], &[0], &[0, 1], vec![0, 1]),
        row(1, 1, 0, 1, 0, None, &[1, 5], &[1], &[0, 1], vec![0, 1]),
        row(2, 0, 1, 0, 0, None, &[0, 2], &[2, 4], &[2, 3], span(2, 5)),
        row(3, 1, 1, 1, 0, Some(5), &[3], &[3, 5], &[2, 3], span(2, 5)),
        row(4, 2, 1, 0, 1, Some(2), &[4], &[2, 4], &[4, 5], span(2, 5)),
        row(5, 3, 1, 1, 1, None, &[1, 5], &[3, 5], &[4, 5], span(2, 5)),
    ];
    let table = Federated {
        world: 6,
        sizes: &[2, 4],
        hsdp: 2,
        expanded_sizes: &[2, 4],
        replica_world_size: &[1, 2],
        hsdp_meshes: &[&[&[0, 1]], &[&[2, 3], &[4, 5]]],
    };
    check_federated_hsdp(&table, &rows, None);
}

#[test]
fn section_5_6_two_nodes_per_federation_hsdp_4() {
    let fed_0 = span(0, 7);
    let fed_1 = span(8, 15);
    let rows = [
        row(0, 0, 0, 0, 0, None, &[0, 8], &[0, 4], &span(0, 3), fed_0.clone()),
        row(1, 1, 0, 1, 0, Some(5), &[1, 9], &[1, 5], &span(0, 3), fed_0.clone()),
        row(2, 2, 0, 2, 0, None, &[2, 10], &[2, 6], &span(0, 3), fed_0.clone()),
        row(3, 3, 0, 3, 0, Some(7), &[3, 11], &[3, 7], &span(0, 3), fed_0.clone()),
        row(4, 4, 0, 0, 1, Some(0), &[4, 12], &[0, 4], &span(4, 7), fed_0.clone()),
        row(5, 5, 0, 1, 1, None, &[5, 13], &[1, 5], &span(4, 7), fed_0.clone()),
        row(6, 6, 0, 2, 1, Some(2), &[6, 14], &[2, 6], &span(4, 7), fed_0.clone()),
        row(7, 7, 0, 3, 1, None, &[7, 15], &[3, 7], &span(4, 7), fed_0),
        row(8, 0, 1, 0, 0, None, &[0, 8], &[8, 12], &span(8, 11), fed_1.clone()),
        row(9, 1, 1, 1, 0, Some(13), &[1, 9], &[9, 13], &span(8, 11), fed_1.clone()),
        row(10, 2, 1, 2, 0, None, &[2, 10], &[10, 14], &span(8, 11), fed_1.clone()),
        row(11, 3, 1, 3, 0, Some(15), &[3, 11], &[11, 15], &span(8, 11), fed_1.clone()),
        row(12, 4, 1, 0, 1, Some(8), &[4, 12], &[8, 12], &span(12, 15), fed_1.clone()),
        row(13, 5, 1, 1, 1, None, &[5, 13], &[9, 13], &span(12, 15), fed_1.clone()),
        row(14, 6, 1, 2, 1, Some(10), &[6, 14], &[10, 14], &span(12, 15), fed_1.clone()),
        row(15, 7, 1, 3, 1, None, &[7, 15], &[11, 15], &span(12, 15), fed_1),
    ];
    let table = Federated {
        world: 16,
        sizes: &[8],
        hsdp: 4,
        expanded_sizes: &[8, 8],
        replica_world_size: &[2, 2],
        hsdp_meshes: &[&[&[0, 1, 2, 3], &[4, 5, 6, 7]], &[&[8, 9, 10, 11], &[12, 13, 14, 15]]],
    };
    check_federated_hsdp(&table, &rows, Some(4));

    // The node columns of the table, and the initialization choice of its last paragraph.
    for r in 0..16 {
        let mut st = state_of(r, 16);
        st.set_node(r % 4, 4, r / 4, 4).unwrap();
        let rl = r % 4;
        let init = if rl != 0 { Device::Meta } else { Device::Cpu };
        st.set_init_device(init, true).unwrap();
        st.federated_scaling(&[8], Some(4)).unwrap();
        assert_eq!(st.get_int(Attr::NodeLocalRank).unwrap(), r % 4);
        assert_eq!(st.get_int(Attr::NodeRank).unwrap(), r / 4);
        assert_eq!(st.get_int(Attr::NodeLocalSize).unwrap(), 4);
        assert_eq!(st.get_int(Attr::NodeWorldSize).unwrap(), 4);
        assert_eq!(Device::from_raw(st.get_int(Attr::InitDevice).unwrap()), Some(init));
        assert_eq!(st.get_int(Attr::MetaInitialization).unwrap(), 1);
    }
}

#[test]
fn section_5_1_hsdp_without_federation() {
    for r in 0..8 {
        let mut st = state_of(r, 8);
        st.set_hsdp(2).unwrap();
        assert_eq!(st.get_int(Attr::ReplicaLocalRank).unwrap(), r % 2);
        assert_eq!(st.get_int(Attr::ReplicaRank).unwrap(), r / 2);
        assert_eq!(st.get_int(Attr::ReplicaLocalSize).unwrap(), 2);
        assert_eq!(st.get_ints(Attr::ReplicaWorldSize).unwrap(), vec![4]);
        let column: Vec<i32> = (0..4).map(|j| 2 * j + r % 2).collect();
        assert_eq!(ranks(&st, GroupKind::HsdpReplica), column, "rank {r}");
        assert_eq!(ranks(&st, GroupKind::HsdpShard), vec![r - r % 2, r - r % 2 + 1], "rank {r}");
        let mesh = st.mesh(MeshKind::Hsdp).unwrap();
        assert_eq!((mesh.shape(), mesh.ranks()), (&[4usize, 2][..], &span(0, 7)[..]));
        for attr in
            [Attr::FederatedRank, Attr::FederatedLocalRank, Attr::FederatedWorldSize, Attr::IsSender, Attr::ReceiveFrom]
        {
            assert_not_set(&st, attr, r);
        }
        for kind in [GroupKind::Federated, GroupKind::Replica, GroupKind::Federation, GroupKind::Fsdp] {
            assert_eq!(st.group(kind, 0).unwrap_err().code, ErrorKind::NotSet, "rank {r}: {kind:?}");
        }
        assert_eq!(st.mesh(MeshKind::Fsdp).unwrap_err().code, ErrorKind::NotSet);
    }
    // Plain FSDP: every rank gets the 1-D mesh of the whole world.
    let mut st = state_of(5, 8);
    st.set_fsdp().unwrap();
    assert_eq!(st.mesh(MeshKind::Fsdp).unwrap().ranks(), &span(0, 7)[..]);
    assert_eq!(ranks(&st, GroupKind::Fsdp), span(0, 7));
}

#[test]
fn section_5_3_symmetric_federation_without_hsdp() {
    for r in 0..8 {
        let mut st = state_of(r, 8);
        st.federated_scaling(&[4], None).unwrap();
        let (fl, f) = (r % 4, r / 4);
        assert_eq!(st.get_int(Attr::FederatedLocalRank).unwrap(), fl);
        assert_eq!(st.get_int(Attr::FederatedRank).unwrap(), f);
        assert_eq!(st.get_ints(Attr::FederatedLocalSize).unwrap(), vec![4, 4]);
        assert_eq!(st.get_int(Attr::IsSender).unwrap(), 1);
        assert_not_set(&st, Attr::ReceiveFrom, r);
        for attr in [Attr::ReplicaLocalRank, Attr::ReplicaRank, Attr::ReplicaLocalSize] {
            assert_not_set(&st, attr, r);
        }
        assert_eq!(ranks(&st, GroupKind::Federated), vec![fl, fl + 4]);
        let federation = span(4 * f, 4 * f + 3);
        assert_eq!(ranks(&st, GroupKind::Federation), federation);
        assert_eq!(st.mesh(MeshKind::Fsdp).unwrap().ranks(), &federation[..]);
        assert_eq!(st.group(GroupKind::Replica, 0).unwrap_err().code, ErrorKind::NotSet);
        assert_eq!(st.mesh(MeshKind::Hsdp).unwrap_err().code, ErrorKind::NotSet);
        assert!(st.is_fsdp_setup() && !st.is_hsdp_setup());
    }
}

#[test]
fn section_5_7_three_federations() {
    let receive_from = [(1, 3), (2, 0), (5, 7), (6, 4), (9, 11), (10, 8), (12, 8), (13, 11), (14, 8), (15, 11)];
    for r in 0..16 {
        let mut st = state_of(r, 16);
        st.federated_scaling(&[4, 4, 8], Some(2)).unwrap();
        assert_eq!(st.get_ints(Attr::ReplicaWorldSize).unwrap(), vec![2, 2, 4]);
        let expected_from = receive_from.iter().find(|(rank, _)| *rank == r).map(|&(_, from)| from);
        assert_eq!(st.get_opt(Attr::ReceiveFrom).unwrap(), expected_from, "rank {r}");
        let fg = match r {
            0 | 4 | 8 => vec![0, 4, 8],
            3 | 7 | 11 => vec![3, 7, 11],
            _ => vec![r],
        };
        assert_eq!(ranks(&st, GroupKind::Federated), fg, "rank {r}");
        if r >= 8 {
            let rg = if r % 2 == 0 { vec![8, 10, 12, 14] } else { vec![9, 11, 13, 15] };
            assert_eq!(ranks(&st, GroupKind::Replica), rg, "rank {r}");
        }
    }
}

#[test]
fn inputs_xffl_mishandles_are_errors_that_explain() {
    type Case<'a> = (i32, &'a [i32], Option<i32>, &'a [&'a str]);
    let cases: [Case<'_>; 6] = [
        (8, &[3, 3], None, &["sum to 6", "world is 8"]),
        (8, &[4, 4, 4], None, &["sum to 12", "world is 8"]),
        (8, &[2, 4], Some(2), &["sum to 6", "world is 8"]),
        (6, &[2, 4], None, &["hsdp", "hsdp 2"]),
        (12, &[4, 8], Some(3), &["hsdp 3 does not divide", "4 and 8"]),
        (12, &[6], Some(4), &["hsdp 4 does not divide", "6"]),
    ];
    for (world, sizes, hsdp, words) in cases {
        for r in [0, world - 1] {
            let mut st = state_of(r, world);
            let err = st.federated_scaling(sizes, hsdp).unwrap_err();
            assert_eq!(err.code, ErrorKind::InvalidArgument, "W={world} {sizes:?} {hsdp:?}: {err}");
            for word in words {
                assert!(err.message.contains(word), "W={world} {sizes:?} {hsdp:?}: {err:?} lacks {word:?}");
            }
            assert!(!st.is_federated_scaling_setup());
        }
    }
    let mut st = State::new().unwrap();
    let err = st.set_global(Backend::None, Device::Cpu, "127.0.0.1", 29500, 5, 4).unwrap_err();
    assert_eq!(err.code, ErrorKind::InvalidArgument);
    assert!(err.message.contains("rank 5 outside [0, 4)"), "{err}");
    // A single size expands: 8 ranks, size 4 -> (4, 4), on every rank including 4..7.
    for r in 0..8 {
        let mut st = state_of(r, 8);
        st.federated_scaling(&[4], None).unwrap();
        assert_eq!(st.get_ints(Attr::FederatedLocalSize).unwrap(), vec![4, 4]);
    }
}
