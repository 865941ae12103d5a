//! The example as a user runs it: alone (one rank, backend none) it prints the plan and a correct
//! average; with a job that needs communication but no backend, it fails with xffl's explanation.
use std::process::{Command, Output};

const JOB_VARIABLES: [&str; 13] = [
    "RANK",
    "WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "XFFL_BACKEND",
    "XFFL_FEDERATED",
    "XFFL_HSDP",
    "XFFL_STREAMS",
    "XFFL_FEDERATED_LOCAL_WORLD_SIZE",
];

fn run(vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_xffl-example"));
    for name in JOB_VARIABLES {
        command.env_remove(name);
    }
    command.envs(vars.iter().copied());
    command.output().expect("the example starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn alone_it_prints_the_plan_and_averages_correctly() {
    let out = run(&[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(
        stdout.contains("*** xFFL Distributed Setup ***"),
        "{stdout}"
    );
    assert!(stdout.contains("Federated group\t\t[0]"), "{stdout}");
    assert!(
        stdout.contains("rank 0: federated average of 1000 values over 1 groups is correct"),
        "{stdout}"
    );
}

#[test]
fn a_one_rank_federation_with_streams_and_a_node() {
    let out = run(&[
        ("LOCAL_RANK", "0"),
        ("LOCAL_WORLD_SIZE", "1"),
        ("XFFL_STREAMS", "2"),
        ("XFFL_FEDERATED", "1"),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("Streams\t\t\t2"), "{stdout}");
    assert!(stdout.contains("Node local size\t\t1"), "{stdout}");
}

#[test]
fn a_rank_of_a_bigger_job_without_a_backend_explains_itself() {
    let out = run(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "8"),
        ("XFFL_BACKEND", "none"),
        ("XFFL_FEDERATED", "4"),
        ("XFFL_HSDP", "2"),
    ]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    // The plan is still computed (rank 3 of section 5.2) before the average needs communication.
    assert!(
        stdout.contains(
            "rank 3: federated group 0 of 2, sender, averages across groups with ranks [3, 7]"
        ),
        "{stdout}"
    );
    assert!(
        stderr.contains("XFFL_EUNSUPPORTED") && stderr.contains("backend none"),
        "{stderr}"
    );
}

#[test]
fn bad_variables_are_named() {
    let out = run(&[("XFFL_FEDERATED", "2,x")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("XFFL_FEDERATED=\"2,x\""),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[("XFFL_BACKEND", "gloo")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("gloo"), "{}", text(&out.stderr));
    // Backend none: a lone rank of a UCX job would wait for its peers until the timeout.
    let out = run(&[
        ("WORLD_SIZE", "4"),
        ("RANK", "0"),
        ("XFFL_BACKEND", "none"),
        ("XFFL_FEDERATED", "3"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("XFFL_E"),
        "{}",
        text(&out.stderr)
    );
}
