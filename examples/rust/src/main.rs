//! The plan of an xffl job and one federated average, in Rust.
//!
//! Alone it runs as a one-rank job with backend none (a federation of one group of one rank).
//! Under the launcher it reads the job from the environment that `xffl-run` (or torchrun) sets:
//!
//! ```text
//! xffl-run -n 4 --federated 2,2 --hsdp 2 -- target/debug/xffl-example
//! ```
//!
//! Variables: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, LOCAL_RANK + LOCAL_WORLD_SIZE (+ GROUP_RANK,
//! GROUP_WORLD_SIZE) for the node, XFFL_BACKEND (none, ucx, nccl; default none for one rank, ucx for
//! more), XFFL_FEDERATED (one size, or sizes separated by commas; default one group of the whole job),
//! XFFL_HSDP (the replica size, absent or 0 for none) and XFFL_STREAMS (stream instances K).
//! The library itself reads XFFL_TIMEOUT and XFFL_LOG_LEVEL. (`xffl::State::from_env` does all of
//! this in one call; the example spells the steps out.)
//!
//! Every rank fills its model with values that depend only on its federated group f, then averages:
//! afterwards every element i must be the mean over the G groups of 10 (f + 1) + i on every rank.
//! Exit status: 0 when it is, 1 when a value is wrong, 2 when xffl reports an error.
use std::env;
use std::process::ExitCode;

use xffl::{Attr, Backend, Device, Format, GroupKind, State};

const MODEL_SIZE: usize = 1000;

/// The job as the launcher describes it.
struct Job {
    backend: Backend,
    master_addr: String,
    master_port: u16,
    rank: i32,
    world_size: i32,
    node: Option<(i32, i32, i32, i32)>,
    streams: Option<i32>,
    federated: Vec<i32>,
    hsdp: Option<i32>,
}

fn var(name: &str) -> Option<String> {
    env::var(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn int_var<T: std::str::FromStr>(name: &str) -> Result<Option<T>, String> {
    match var(name) {
        None => Ok(None),
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|_| format!("{name}={text:?} is not a valid number")),
    }
}

fn read_job() -> Result<Job, String> {
    let rank = int_var("RANK")?.unwrap_or(0);
    let world_size = int_var("WORLD_SIZE")?.unwrap_or(1);
    let backend = match var("XFFL_BACKEND") {
        Some(name) => name
            .parse::<Backend>()
            .map_err(|e| format!("XFFL_BACKEND: {}", e.message))?,
        None if world_size > 1 => Backend::Ucx, // several ranks must talk to each other
        None => Backend::None,
    };
    let node = match (
        int_var::<i32>("LOCAL_RANK")?,
        int_var::<i32>("LOCAL_WORLD_SIZE")?,
    ) {
        (Some(local_rank), Some(local_size)) if local_size > 0 => {
            let node_rank = int_var("GROUP_RANK")?.unwrap_or(rank / local_size);
            let node_world = int_var("GROUP_WORLD_SIZE")?.unwrap_or(world_size / local_size);
            Some((local_rank, local_size, node_rank, node_world))
        }
        _ => None,
    };
    let federated = match var("XFFL_FEDERATED") {
        Some(text) => text
            .split(',')
            .map(|size| {
                size.trim()
                    .parse::<i32>()
                    .map_err(|_| format!("XFFL_FEDERATED={text:?}: {size:?} is not a size"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => vec![world_size], // one federated group holding the whole job
    };
    let hsdp = int_var::<i32>("XFFL_HSDP")?.filter(|&h| h != 0);
    Ok(Job {
        backend,
        master_addr: var("MASTER_ADDR").unwrap_or_else(|| "127.0.0.1".to_string()),
        master_port: int_var("MASTER_PORT")?.unwrap_or(29500),
        rank,
        world_size,
        node,
        streams: int_var("XFFL_STREAMS")?,
        federated,
        hsdp,
    })
}

fn set_up(job: &Job) -> xffl::Result<State> {
    let mut st = State::new()?;
    st.set_global(
        job.backend,
        Device::Cpu,
        &job.master_addr,
        job.master_port,
        job.rank,
        job.world_size,
    )?;
    if let Some((local_rank, local_size, node_rank, node_world)) = job.node {
        st.set_node(local_rank, local_size, node_rank, node_world)?;
    }
    if let Some(streams) = job.streams {
        st.set_exec_device(-1, streams)?;
    }
    st.federated_scaling(&job.federated, job.hsdp)?;
    Ok(st)
}

/// Runs the job; `Ok(false)` when the average came out wrong.
fn run(job: &Job) -> xffl::Result<bool> {
    let st = set_up(job)?;
    let rank = st.get_int(Attr::Rank)?;
    if rank == 0 {
        println!("{}", st.describe(Format::Text)?);
    }
    let group = st.get_int(Attr::FederatedRank)?;
    let groups = st.get_int(Attr::FederatedWorldSize)?;
    let sender = st.get_opt(Attr::IsSender)?.unwrap_or(1) == 1;
    let crosses_with = st.group(GroupKind::Federated, 0)?.ranks()?;
    println!(
        "rank {rank}: federated group {group} of {groups}, {}, averages across groups with ranks {crosses_with:?}",
        if sender { "sender" } else { "receives from its sender" }
    );

    let mut model: Vec<f64> = (0..MODEL_SIZE)
        .map(|i| 10.0 * f64::from(group + 1) + i as f64)
        .collect();
    st.federated_average(&mut model)?;

    let mean_of_groups = 10.0 * f64::from(groups + 1) / 2.0; // mean of 10 (f + 1) over f < G
    for (i, &value) in model.iter().enumerate() {
        let expected = mean_of_groups + i as f64;
        if (value - expected).abs() > 1e-9 * expected.abs().max(1.0) {
            eprintln!("rank {rank}: element {i} is {value} after the federated average, expected {expected}");
            return Ok(false);
        }
    }
    println!(
        "rank {rank}: federated average of {MODEL_SIZE} values over {groups} groups is correct"
    );
    Ok(true)
}

fn main() -> ExitCode {
    let job = match read_job() {
        Ok(job) => job,
        Err(message) => {
            eprintln!("xffl-example: error: {message}");
            return ExitCode::from(2);
        }
    };
    match run(&job) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("xffl-example: rank {}: error: {error}", job.rank);
            ExitCode::from(2)
        }
    }
}
